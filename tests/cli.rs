//! The binary from the outside: exit codes, output formats, error lines, import.

mod common;

use assert_cmd::Command;
use common::{fixture, profiles, repo};
use predicates::prelude::*;

fn stallscope() -> Command {
    let mut c = Command::cargo_bin("stallscope").unwrap();
    c.env_remove("STALLSCOPE_PROFILES");
    c
}

#[test]
fn report_prints_the_sgemm_trail() {
    stallscope()
        .args(["report", "--ladder", "sgemm-toy", "--profiles"])
        .arg(profiles())
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(concat!(
                r"\nv1 +lg_throttle @ LDG +37\.5 +not_selected @ LDG +20\.2\n",
                r"v2 +mio_throttle @ LDS +48\.3 +not_selected @ LDS +13\.4 +moved \(z 467\)\n",
            ))
            .unwrap(),
        );
}

#[test]
fn report_of_the_built_in_profiles_works_from_any_folder() {
    let dir = tempfile::tempdir().unwrap();
    stallscope()
        .current_dir(dir.path())
        .arg("report")
        .assert()
        .success()
        .stdout(predicate::str::contains("sgemm-toy"))
        .stdout(predicate::str::contains("[cudnn]"));
}

#[test]
fn report_formats() {
    let out = stallscope()
        .args(["report", "--format", "json"])
        .arg(profiles().join("sgemm-toy"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "stallscope/report/4");
    let v = &doc["ladders"];
    // A ladder of profiles alone names no problem kind; the flash-attention ladder's
    // comes from its runs.
    assert_eq!(v[0]["kind"], serde_json::Value::Null);
    assert_eq!(v[0]["dims"], serde_json::json!([]));
    assert_eq!(v[0]["trail"][1]["label"], "mio_throttle @ LDS");
    assert_eq!(v[0]["trail"][1]["verdict"], "moved");
    assert_eq!(v[0]["versions"][0]["bottleneck"]["reason"], "lg_throttle");
    assert_eq!(v[0]["versions"][0]["bottleneck"]["opcode"], "LDG");
    let dur = v[0]["versions"][0]["metrics"]["duration"].as_f64().unwrap();
    assert!((dur - 2743.968).abs() < 1e-6, "{dur}");

    let out = stallscope()
        .args(["report", "--format", "csv"])
        .arg(profiles().join("sgemm-toy"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("ladder,version,title,baseline,metric,value,unit,run_shape\n"));
    assert!(text.contains("sgemm-toy,v2,tiled,false,bottleneck,mio_throttle @ LDS,"));

    stallscope()
        .args(["report", "--format", "markdown"])
        .arg(profiles().join("sgemm-toy"))
        .assert()
        .success()
        .stdout(predicate::str::contains("| metric | v1 | v2 |"));
}

#[test]
fn loose_files_become_a_ladder_in_the_order_given() {
    stallscope()
        .arg("report")
        .arg(fixture("sgemm/raw.csv"))
        .arg(fixture("sgemm/src_sass.csv"))
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(
                // Two kernels of one file: neither is the other's parent, so no move.
                r"\n1 +lg_throttle @ LDG +37\.5 .*\n2 +mio_throttle @ LDS +48\.3 +not_selected @ LDS +13\.4 *\n",
            )
            .unwrap(),
        );
}

#[test]
fn a_broken_file_fails_with_one_line_naming_file_and_line() {
    let bad = fixture("broken/truncated_raw.csv");
    let out = stallscope().arg("report").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("Error: {}:3: ", bad.display())),
        "{err}"
    );
}

#[test]
fn keep_going_reads_the_rest_and_lists_failures() {
    let out = stallscope()
        .args(["report", "--keep-going"])
        .arg(fixture("broken/empty.csv"))
        .arg(fixture("sgemm/raw.csv"))
        .arg(fixture("broken/binary.ncu-rep"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("mm_tiled"), "{stdout}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("failed: ") && err.contains("empty.csv: the file is empty"));
    assert!(err.contains("binary.ncu-rep"));
    assert!(err.contains("2 file(s) could not be read"));
}

#[test]
fn missing_file_and_usage_errors() {
    stallscope()
        .args(["report", "/no/such/file.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no such file or folder"));
    stallscope()
        .args(["report", "--format", "yaml"])
        .assert()
        .code(2);
    stallscope()
        .arg("compare")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Usage"));
}

#[test]
fn compare_two_versions() {
    stallscope()
        .args(["compare", "v1", "v2", "--profiles"])
        .arg(profiles())
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(
                r"Duration \(ncu\)\s+2744 µs\s+1843 µs\s+-901\.0 µs \(0\.67×\)\s+better",
            )
            .unwrap(),
        )
        .stdout(
            predicate::str::is_match(r"lg_throttle\s+37\.5\s+0\.1\s+-37\.4 pt\s+better").unwrap(),
        )
        .stdout(
            predicate::str::is_match(
                r"\nLDG\s+58 · 252,997 · 74\.1\s+2 · 5,935 · 2\.6\s+-56 · -247,062 · -71\.5 pt\nLDS\s+0 · 0 · 0\.0\s+40 · 162,538 · 70\.4",
            )
            .unwrap(),
        );
}

#[test]
fn compare_one_version_with_its_parent() {
    // v17 was built on v15, not on v16 before it.
    stallscope()
        .args(["compare", "v17", "--profiles"])
        .arg(profiles())
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "v15 128-key tiles → v17 conditional rescale\n",
        ));
}

/// The stdout of `compare ARGS` on the bundled profiles.
fn compared(args: &[&str]) -> String {
    let out = stallscope()
        .arg("compare")
        .args(args)
        .arg("--profiles")
        .arg(profiles())
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn compare_gives_the_instruction_mix_its_stall_samples() {
    // v11 → v12: the WARPGROUP instructions' instructions · stall samples · share.
    let text = compared(&["v11", "v12"]);
    let row = text
        .lines()
        .find(|l| l.starts_with("WARPGROUP "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    assert_eq!(
        row.as_deref(),
        Some("WARPGROUP 4 · 1,388 · 14.5 4 · 1,561 · 17.4 +0 · +173 · +2.9 pt")
    );
}

#[test]
fn compare_with_a_version_without_source_page_says_why_there_is_no_sass() {
    let text = compared(&["cudnn", "v29"]);
    let said: Vec<&str> = text.lines().filter(|l| l.starts_with("SASS")).collect();
    assert_eq!(
        said,
        [
            "SASS: cudnn cuDNN (PyTorch SDPA cuDNN backend) has no source page, so there is no SASS to compare: export one with `ncu --import REPORT --csv --page source --print-source sass`"
        ]
    );
}

/// The first version has nothing before it: compare says so instead of comparing it
/// with itself.
#[test]
fn compare_of_the_first_version_says_there_is_no_earlier_one() {
    stallscope()
        .args(["compare", "v01", "--profiles"])
        .arg(profiles())
        .assert()
        .failure()
        .stdout("")
        .stderr(predicate::str::contains(
            "v01 is the first version of flash-attention: there is no earlier version to compare it with",
        ));
}

#[test]
fn compare_of_a_version_with_itself_is_refused() {
    stallscope()
        .args(["compare", "v01", "v01", "--profiles"])
        .arg(profiles())
        .assert()
        .failure()
        .stdout("")
        .stderr(predicate::str::contains(
            "v01 and v01 are one version of flash-attention: name two different versions",
        ));
}

#[test]
fn compare_two_files() {
    stallscope()
        .arg("compare")
        .arg(fixture("h200/sdpa_flash_raw.csv"))
        .arg(fixture("h200/sdpa_cudnn_raw.csv"))
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(
                r"Tensor pipe active\s+49\.7 %\s+61\.9 %\s+\+12\.2 pt\s+better",
            )
            .unwrap(),
        );
    stallscope()
        .args(["compare", "v1", "v9", "--profiles"])
        .arg(profiles())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no ladder holds both"));
}

/// Without --title a version is titled by its kernel's short name, cut to 48
/// characters: cuDNN's generated kernel name (110 characters, nothing to drop) no longer
/// fills every headline.
#[test]
fn import_titles_a_version_by_a_short_kernel_name() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    stallscope()
        .arg("import")
        .arg(fixture("h200/sdpa_cudnn_details.csv"))
        .args(["--version", "cudnn", "--ladder", "l", "--profiles"])
        .arg(&profiles)
        .assert()
        .success();
    let manifest = std::fs::read_to_string(profiles.join("l/ladder.toml")).unwrap();
    assert!(
        manifest.contains("title = \"cudnn_generated_fort_native_sdpa_sm90_flash_fpr…\"\n"),
        "{manifest}"
    );
}

#[test]
fn import_writes_a_ladder_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    let import = |extra: &[&str]| {
        let mut c = stallscope();
        c.arg("import")
            .arg(fixture("sgemm/raw.csv"))
            .arg(fixture("sgemm/src_sass.csv"))
            .args([
                "--version",
                "v2",
                "--ladder",
                "toy",
                "--kernel",
                "mm_tiled",
                "--title",
                "tiled",
            ])
            .args(extra)
            .arg("--profiles")
            .arg(&profiles);
        c
    };
    import(&[])
        .assert()
        .success()
        .stderr(predicate::str::contains("imported 2 file(s)"));
    assert!(profiles.join("toy/v2/raw.csv.gz").is_file());
    assert!(profiles.join("toy/v2/src_sass.csv.gz").is_file());
    let manifest = std::fs::read_to_string(profiles.join("toy/ladder.toml")).unwrap();
    assert!(manifest.contains("id = \"v2\"") && manifest.contains("kernel = \"mm_tiled\""));

    // A second import of the same version is refused, and nothing changes.
    let before = std::fs::read(profiles.join("toy/v2/raw.csv.gz")).unwrap();
    import(&[])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("use --force"));
    assert_eq!(
        std::fs::read(profiles.join("toy/v2/raw.csv.gz")).unwrap(),
        before
    );
    import(&["--force"]).assert().success();

    // The imported ladder reads back.
    stallscope()
        .arg("report")
        .arg(profiles.join("toy"))
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"\nv2 +mio_throttle @ LDS ").unwrap());
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(profiles.join("toy/v2"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn import_refuses_a_file_that_is_not_an_export_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    stallscope()
        .arg("import")
        .arg(fixture("sgemm/raw.csv"))
        .arg(fixture("broken/not_ncu.csv"))
        .args(["--version", "v1", "--profiles"])
        .arg(&profiles)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not_ncu.csv: no ncu CSV found"));
    assert!(!profiles.exists());
    stallscope()
        .arg("import")
        .arg(fixture("sgemm/raw.csv"))
        .args(["--version", "../evil", "--profiles"])
        .arg(&profiles)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "holds '/': a version id is letters, digits, '-', '_' or '.'",
        ));
}

#[test]
fn help_answers() {
    for sub in ["report", "compare", "import", "open"] {
        stallscope()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage: stallscope"));
    }
    stallscope().arg("--version").assert().success();
}

/// A ladder `toy` in a temporary profiles folder whose runs.json `make` writes.
fn ladder_with_run_file(make: impl FnOnce(&std::path::Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("toy");
    std::fs::create_dir_all(&ladder).unwrap();
    std::fs::write(ladder.join("ladder.toml"), "title = 'toy'\n").unwrap();
    make(&ladder.join("runs.json"));
    dir
}

/// `report` on the ladder's profiles folder fails saying `message` (given the run file's path).
fn report_fails_saying(dir: &tempfile::TempDir, message: impl Fn(&str) -> String) {
    let path = dir.path().join("toy/runs.json");
    stallscope()
        .args(["report", "--profiles"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains(message(
            &path.display().to_string(),
        )));
}

#[test]
fn a_run_file_of_a_newer_schema_is_refused_with_what_to_do() {
    let dir = ladder_with_run_file(|p| {
        std::fs::write(p, r#"{"schema": "stallscope/runs/99", "runs": []}"#).unwrap()
    });
    report_fails_saying(&dir, |path| {
        format!(
            "{path} was written by a newer stallscope (schema stallscope/runs/99; this one reads stallscope/runs/3): update stallscope"
        )
    });
}

#[test]
fn a_run_file_that_is_a_folder_is_named_by_its_path() {
    let dir = ladder_with_run_file(|p| std::fs::create_dir(p).unwrap());
    report_fails_saying(&dir, |path| {
        format!("{path} cannot be read: runs.json is a folder")
    });
}

#[test]
fn a_run_file_that_cannot_be_read_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("toy");
    std::fs::create_dir_all(&ladder).unwrap();
    std::fs::write(ladder.join("ladder.toml"), "title = 'toy'\n").unwrap();
    std::fs::write(ladder.join("runs.json"), "{ not json").unwrap();
    stallscope()
        .args(["report", "--profiles"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains("runs.json is not a run file"));
}

#[test]
fn global_options_work_before_the_subcommand() {
    stallscope()
        .arg("--profiles")
        .arg(profiles())
        .args(["compare", "v1", "v2", "--ladder", "sgemm-toy"])
        .assert()
        .success()
        .stdout(predicate::str::contains("v1 naive → v2 tiled"));
}

#[test]
fn errors_name_the_real_cause() {
    stallscope()
        .args(["compare", "v1", "v2", "--ladder", "nope", "--profiles"])
        .arg(profiles())
        .assert()
        .failure()
        .stderr(predicate::str::contains("no ladder named \"nope\""));
    stallscope()
        .arg("compare")
        .arg(fixture("sgemm/raw.csv"))
        .arg("v2")
        .assert()
        .failure()
        .stderr(predicate::str::contains("v2 is not a file"));
    stallscope()
        .args(["run", "v01", "--kernels", "/nonexistent"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("/nonexistent: no such folder"));
}

/// The bash script that `completions bash` prints, sourced into a real bash and asked to
/// complete `stallscope rep`, answers `report`.
#[test]
fn bash_completion_completes_a_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("stallscope.bash");
    let out = stallscope().args(["completions", "bash"]).output().unwrap();
    assert!(out.status.success());
    std::fs::write(&script, &out.stdout).unwrap();
    let reply = std::process::Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1"; COMP_WORDS=(stallscope rep); COMP_CWORD=1;
               _stallscope stallscope rep stallscope; printf '%s\n' "${COMPREPLY[@]}""#,
        )
        .arg("bash")
        .arg(&script)
        .output()
        .expect("bash runs");
    assert_eq!(String::from_utf8_lossy(&reply.stdout), "report\n");
}

/// `man --dir` writes the main page and every page that its SUBCOMMANDS section names.
#[test]
fn man_pages_cover_every_subcommand_the_main_page_names() {
    let dir = tempfile::tempdir().unwrap();
    stallscope()
        .args(["man", "--dir"])
        .arg(dir.path().join("man1"))
        .assert()
        .success();
    let main = std::fs::read_to_string(dir.path().join("man1/stallscope.1")).unwrap();
    let named: Vec<&str> = main
        .lines()
        .filter_map(|l| l.strip_suffix("(1)"))
        .map(|l| l.trim_start_matches("stallscope\\-"))
        .collect();
    let missing: Vec<&&str> = named
        .iter()
        .filter(|n| !dir.path().join(format!("man1/stallscope-{n}.1")).is_file())
        .collect();
    assert!(
        named.contains(&"report") && missing.is_empty(),
        "named {named:?}, missing {missing:?}"
    );
}

/// `--format svg --chart NAME` prints one chart as a file of its own (its styles inside),
/// with a mark for each of the ladder's versions.
#[test]
fn svg_chart_alone_has_a_mark_per_version() {
    let out = stallscope()
        .args([
            "report",
            "--format",
            "svg",
            "--chart",
            "stalls",
            "--ladder",
            "sgemm-toy",
            "--profiles",
        ])
        .arg(profiles())
        .output()
        .unwrap();
    let svg = String::from_utf8(out.stdout).unwrap();
    let marks: Vec<&str> = svg
        .split("class=\"mark\" data-version=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .collect();
    assert!(
        svg.starts_with("<?xml") && svg.contains("<style>") && marks == ["v1", "v2"],
        "marks {marks:?} in {svg:.300}"
    );
}

#[test]
fn a_chart_without_svg_is_refused_in_one_line() {
    stallscope()
        .args(["report", "--chart", "speed", "--profiles"])
        .arg(profiles())
        .assert()
        .code(1)
        .stderr("Error: --chart draws one chart as SVG: give it with --format svg\n");
}

/// `compare --format html -o FILE` writes a page naming both versions, and nothing to
/// standard output.
#[test]
fn compare_writes_an_html_page_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("compare.html");
    stallscope()
        .args(["compare", "v1", "v2", "--format", "html", "-o"])
        .arg(&page)
        .arg("--profiles")
        .arg(profiles())
        .assert()
        .success()
        .stdout("");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains("<h1>v1 naive → v2 tiled</h1>"),
        "{html:.400}"
    );
}

/// A command that needs one launch never takes the first of several: it lists them and
/// stops, and `--launch ID` picks one, which the manifest then names.
#[test]
fn several_launches_are_listed_and_one_is_picked_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let eight = fixture("h200/others_basic_details.csv");
    stallscope()
        .arg("import")
        .arg(&eight)
        .args(["--version", "v1", "--profiles"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "the exports hold 8 launches; pick one with --launch ID",
        ))
        .stderr(predicate::str::contains("     3  softmax_kernel "));
    assert!(!dir.path().join("imported").exists(), "nothing written");
    stallscope()
        .arg("import")
        .arg(&eight)
        .args([
            "--version",
            "v1",
            "--launch",
            "3",
            "--flops",
            "1e9",
            "--peak-tflops",
            "750",
        ])
        .arg("--profiles")
        .arg(dir.path())
        .assert()
        .success();
    let m = std::fs::read_to_string(dir.path().join("imported/ladder.toml")).unwrap();
    assert!(m.contains("launch = 3"), "{m}");
    assert!(m.contains("flops = 1000000000.0"), "{m}");
    assert!(m.contains("peak_tflops = 750.0"), "{m}");
    stallscope()
        .args(["report", "--format", "json", "--profiles"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("softmax_kernel"));
    stallscope()
        .arg("compare")
        .arg(&eight)
        .arg(fixture("sgemm/det.csv"))
        .assert()
        .failure()
        .stderr(predicate::str::contains("pick one with --launch-a ID"));
    stallscope()
        .arg("compare")
        .arg(&eight)
        .arg(fixture("sgemm/det.csv"))
        .args(["--launch-a", "2", "--launch-b", "0"])
        .assert()
        .success()
        .stdout(predicate::str::contains("nvjet_sm90"));
}

/// A profiles folder holding the SGEMM ladder and, before it by name, a ladder whose
/// export cannot be read: a command that reads it fails.
fn profiles_with_a_broken_ladder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sgemm = dir.path().join("sgemm-toy");
    std::fs::create_dir_all(&sgemm).unwrap();
    for e in std::fs::read_dir(profiles().join("sgemm-toy")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), sgemm.join(e.file_name())).unwrap();
    }
    let broken = dir.path().join("aaa-broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::copy(
        fixture("broken/damaged.csv.gz"),
        broken.join("damaged.csv.gz"),
    )
    .unwrap();
    std::fs::write(
        broken.join("ladder.toml"),
        "title = 'broken'\n[[version]]\nid = 'x1'\ntitle = 'x'\nfiles = ['damaged.csv.gz']\n",
    )
    .unwrap();
    dir
}

/// `stallscope ARGS… --profiles DIR`, DIR holding a broken ladder beside sgemm-toy:
/// it succeeds, and prints `shown`.
fn reads_past_the_broken_ladder(args: &[&str], shown: &str) {
    let dir = profiles_with_a_broken_ladder();
    stallscope()
        .args(args)
        .arg("--profiles")
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicate::str::contains(shown));
}

#[test]
fn report_of_one_ladder_reads_only_that_ladder() {
    reads_past_the_broken_ladder(
        &["report", "--ladder", "sgemm-toy"],
        "v2    mio_throttle @ LDS",
    );
}

#[test]
fn compare_with_a_ladder_prefix_reads_only_that_ladder() {
    reads_past_the_broken_ladder(
        &["compare", "sgemm-toy:v1", "sgemm-toy:v2"],
        "v1 naive → v2 tiled",
    );
}

#[test]
fn compare_reads_only_the_ladder_that_holds_both_versions() {
    reads_past_the_broken_ladder(&["compare", "v1", "v2"], "v1 naive → v2 tiled");
}

#[test]
fn profile_help_says_what_shape_and_kernels_are_for() {
    let out = stallscope().args(["profile", "-h"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let line = |opt: &str| {
        help.lines()
            .find(|l| l.trim_start().starts_with(opt))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("--shape").contains("Recipe versions: the problem shape they are launched at under ncu, in the dimensions of the recipe's problem kind")
            && line("--kernels").contains("Where the kernel recipes are, for run, profile"),
        "{help}"
    );
}

/// What limits occupancy, read from the launch and occupancy sections: the smallest of
/// the blocks per SM each resource allows (FlashAttention-2 on the H200: registers and
/// shared memory allow 2 each).
#[test]
fn the_occupancy_limiter_is_named() {
    stallscope()
        .arg("report")
        .arg(fixture("h200/sdpa_flash_details.csv"))
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(
                r"occupancy limited by +registers \+ shared memory, 2 blocks/SM",
            )
            .unwrap(),
        );
    stallscope()
        .arg("report")
        .arg(fixture("h200/sdpa_flash_raw.csv"))
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "registers + shared memory, 2 blocks/SM",
        ));
}

/// `--shape` shows the run results of another measured shape; one never measured is
/// an error that lists those that were.
#[test]
fn report_shows_the_run_results_of_a_chosen_shape() {
    let run_time = |args: &[&str]| -> f64 {
        let out = stallscope()
            .args([
                "report",
                "--ladder",
                "flash-attention",
                "--format",
                "json",
                "--profiles",
            ])
            .arg(profiles())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["ladders"][0]["versions"][0]["metrics"]["run_time"]
            .as_f64()
            .unwrap()
    };
    let reference = run_time(&[]);
    let big = run_time(&["--shape", "1,16,8192,128"]);
    let causal = run_time(&["--shape", "1,16,8192,128:causal"]);
    assert!(big > reference * 5.0, "{reference} {big}");
    assert!(causal < big, "{causal} {big}");
    stallscope()
        .args(["report", "--shape", "2,2,64,128", "--profiles"])
        .arg(profiles())
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "no version was run at 2,2,64,128; the run results are at: 1,64,1024,128",
        ));
}

/// `report | head`: the reader goes after a few bytes of a report larger than a pipe holds; the report ends quietly, with
/// success and no panic message.
#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::{Command as Process, Stdio};
    let mut child = Process::new(assert_cmd::cargo::cargo_bin("stallscope"))
        .current_dir(repo())
        .args(["report", "--profiles", "profiles", "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// `compare --ladder NAME` on a ladder whose manifest cannot be read says why (it said
/// there was no such ladder).
#[test]
fn compare_on_a_broken_ladder_says_why_it_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("broken")).unwrap();
    std::fs::write(dir.path().join("broken/ladder.toml"), "not toml [[[\n").unwrap();
    for args in [
        &["compare", "--ladder", "broken", "v1", "v2"][..],
        &["compare", "broken:v1", "v2"][..],
    ] {
        stallscope()
            .args(args)
            .arg("--profiles")
            .arg(dir.path())
            .assert()
            .failure()
            .stderr(predicate::str::contains("ladder broken cannot be read"));
    }
}

/// `import --flops` takes an expression of numbers as well as a number, and says what
/// it takes when given a name.
#[test]
fn import_takes_the_flops_as_an_expression() {
    let dir = tempfile::tempdir().unwrap();
    let page = fixture("sgemm/det.csv");
    stallscope()
        .arg("import")
        .arg(&page)
        .args([
            "--version",
            "v1",
            "--launch",
            "0",
            "--flops",
            "2*4096*4096*4096",
        ])
        .arg("--profiles")
        .arg(dir.path())
        .assert()
        .success();
    let m = std::fs::read_to_string(dir.path().join("imported/ladder.toml")).unwrap();
    assert!(m.contains("flops = 137438953472.0"), "{m}");
    stallscope()
        .arg("import")
        .arg(&page)
        .args(["--version", "v2", "--flops", "2*S*S"])
        .arg("--profiles")
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "a FLOP count is a number or an expression of numbers",
        ));
}

/// `--shape` says which shape's run results are shown: in report's lines, compare's
/// heading and both JSON documents.
#[test]
fn the_shape_of_the_run_results_shown_is_said() {
    let report = |args: &[&str]| {
        let out = stallscope()
            .args(["--profiles"])
            .arg(profiles())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let shape = ["--shape", "1,16,8192,128"];
    let text = report(&[&["report", "--ladder", "flash-attention"][..], &shape].concat());
    assert!(
        text.contains("run results at 1,16,8192,128 (not the reference shape)"),
        "{text}"
    );
    let text = report(&[&["compare", "v04", "v05"][..], &shape].concat());
    assert!(
        text.lines().nth(1) == Some("run results at 1,16,8192,128 (not the reference shape)"),
        "{text}"
    );
    // At the reference shape the JSON names it, and the text says nothing.
    let text = report(&["compare", "v04", "v05", "--shape", "1,64,1024,128"]);
    assert!(!text.contains("run results at"), "{text}");
    let json = report(&["compare", "v04", "v05", "-f", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["run_shape"], "1,64,1024,128");
    let json = report(
        &[
            &["report", "--ladder", "flash-attention", "-f", "json"][..],
            &shape,
        ]
        .concat(),
    );
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["ladders"][0]["run_shape"], "1,16,8192,128");
    let json = report(&[&["compare", "v04", "v05", "-f", "json"][..], &shape].concat());
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc["run_shape"], "1,16,8192,128");
}

/// Each broken rule of a version id is said as such; a long id is refused before it
/// reaches the file system (300 characters gave "File name too long").
#[test]
fn a_version_id_refused_says_which_rule_it_breaks() {
    let dir = tempfile::tempdir().unwrap();
    let long = "v".repeat(300);
    for (id, said) in [
        ("..", "starts with '.'"),
        ("a.staging-b", "marks an import in progress"),
        (long.as_str(), "is 300 bytes long; at most 200 are allowed"),
    ] {
        stallscope()
            .arg("import")
            .arg(fixture("sgemm/raw.csv"))
            .args(["--version", id, "--launch", "0", "--profiles"])
            .arg(dir.path())
            .assert()
            .code(1)
            .stderr(predicate::str::contains(said));
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing written"
    );
}

/// The entry of version `id` in a ladder's manifest.
fn manifest_entry(ladder: &std::path::Path, id: &str) -> toml::Value {
    let text = std::fs::read_to_string(ladder.join("ladder.toml")).unwrap();
    let m: toml::Value = toml::from_str(&text).unwrap();
    m["version"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"].as_str() == Some(id))
        .unwrap_or_else(|| panic!("no {id} in {text}"))
        .clone()
}

/// A forced re-import of a version from another launch replaces what the old import
/// wrote: the SGEMM kernel's title and FLOP count go with its exports when cuDNN's
/// kernel takes their place (it showed at 998 TFLOPS from the old count), the import
/// says so; `--keep` keeps them.
#[test]
fn a_forced_reimport_replaces_what_the_old_import_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    let ladder = profiles.join("l");
    let import = |file: &str, extra: &[&str]| {
        let mut c = stallscope();
        c.arg("import")
            .arg(fixture(file))
            .args(["--version", "v2", "--ladder", "l", "--profiles"])
            .arg(&profiles)
            .args(extra);
        c
    };
    import(
        "sgemm/raw.csv",
        &[
            "--kernel",
            "mm_tiled",
            "--title",
            "tiled",
            "--flops",
            "17179869184",
        ],
    )
    .assert()
    .success();
    let out = import("h200/sdpa_cudnn_raw.csv", &["--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    let v2 = manifest_entry(&ladder, "v2");
    let title = v2["title"].as_str().unwrap();
    assert!(title.starts_with("cudnn_generated"), "{v2}");
    assert!(v2.get("flops").is_none(), "{v2}");
    assert!(v2["kernel"].as_str().unwrap().starts_with("cudnn"), "{v2}");
    assert!(said.contains("title \"tiled\" replaced by"), "{said}");
    assert!(said.contains("flops 1.7179869184e10 removed"), "{said}");

    // Kept when said: the title and FLOP count given before, now the cuDNN kernel's.
    import(
        "h200/sdpa_cudnn_raw.csv",
        &["--force", "--title", "cudnn", "--flops", "3.4e10"],
    )
    .assert()
    .success();
    import(
        "h200/sdpa_cudnn_raw.csv",
        &["--force", "--keep", "title,flops"],
    )
    .assert()
    .success();
    let v2 = manifest_entry(&ladder, "v2");
    assert_eq!(v2["title"].as_str(), Some("cudnn"), "{v2}");
    assert_eq!(v2["flops"].as_float(), Some(3.4e10), "{v2}");
    // --keep says what to keep of a replaced version: without --force it is refused.
    import("h200/sdpa_cudnn_raw.csv", &["--keep", "title"])
        .assert()
        .code(2);
}

/// `--peak-tflops` on one version's import sets the whole ladder's ceiling: the import
/// says so, naming the other versions it changes; a figure past the ceiling (a wrong
/// `--flops`: the tiled SGEMM at thousands of TFLOPS) is warned of by the import and by
/// every report of the ladder.
#[test]
fn the_ladders_ceiling_and_figures_past_it_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    let import = |kernel: &str, version: &str, extra: &[&str]| {
        let mut c = stallscope();
        c.arg("import")
            .arg(fixture("sgemm/raw.csv"))
            .args(["--kernel", kernel, "--version", version, "--ladder", "l"])
            .arg("--profiles")
            .arg(&profiles)
            .args(extra);
        c.output().unwrap()
    };
    let out = import("mm_naive", "v1", &["--flops", "17179869184"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).lines().count() == 1);
    let out = import(
        "mm_tiled",
        "v2",
        &["--flops", "4e12", "--peak-tflops", "67"],
    );
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(
            "--peak-tflops sets the ladder's ceiling, not only v2's: peak_tflops = 67 (was unset)"
        ) && said.contains("(1 other version)"),
        "{said}"
    );
    let warning = "warning: v2 of l: TFLOPS (ncu) ";
    assert!(
        said.contains(warning) && said.contains("% of the ladder's ceiling (67 TFLOPS)"),
        "{said}"
    );
    assert!(!said.contains("warning: v1"), "{said}");
    let report = stallscope()
        .args(["report", "--ladder", "l", "--profiles"])
        .arg(&profiles)
        .output()
        .unwrap();
    assert!(report.status.success());
    assert!(String::from_utf8_lossy(&report.stderr).contains(warning));
}

/// Each command's help describes its own output: compare's formats are the
/// comparison's (it described report's: "one row per version and metric", an SVG
/// chart "named with --chart", which compare refuses).
#[test]
fn compare_help_describes_the_comparisons_formats() {
    let help = |sub: &str| {
        let out = stallscope().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let compare = help("compare");
    for reports in ["one row per version and metric", "--chart", "trail"] {
        assert!(
            !compare.to_lowercase().contains(reports),
            "{reports:?} in\n{compare}"
        );
    }
    for own in [
        "One row per metric and stall reason",
        "stall shares as one chart, side by side",
        "metric deltas",
    ] {
        assert!(compare.contains(own), "{own:?} not in\n{compare}");
    }
    let report = help("report");
    assert!(
        report.contains("One row per version and metric") && report.contains("--chart"),
        "{report}"
    );
}

/// One version given alone is named once when no ladder holds it (it said 'no ladder
/// holds both "v99" and "v99"').
#[test]
fn compare_of_one_unknown_version_names_it_once() {
    let out = stallscope().args(["compare", "v99"]).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(
        err.contains("no ladder holds \"v99\" (nor is it a file)"),
        "{err}"
    );
    assert!(!err.contains("both"), "{err}");
}

/// A listing of launches says what it lists (it said "8 launches match any kernel"
/// where no kernel was asked for) and keeps its columns aligned past long kernel names:
/// each column starts at one place on every line.
#[test]
fn a_listing_of_launches_is_a_table() {
    let out = stallscope()
        .arg("compare")
        .arg(fixture("h200/others_basic_details.csv"))
        .arg(fixture("sgemm/det.csv"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("the exports hold 8 launches; pick one with --launch-a ID:"),
        "{err}"
    );
    assert!(!err.contains("any kernel"), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("  ")).collect();
    assert_eq!(lines.len(), 9, "a header and 8 launches:\n{err}");
    let column =
        |l: &str, word: &str| l.chars().count() - l[l.find(word).unwrap()..].chars().count();
    let grid = column(lines[0], "grid");
    let block = column(lines[0], "block");
    for l in &lines[1..] {
        assert_eq!(column(l, "("), grid, "{err}");
        let second = l[l.find(") ").unwrap()..].find('(').unwrap() + l.find(") ").unwrap();
        assert_eq!(l[..second].chars().count(), block, "{err}");
    }
}

/// `--shape` on a ladder without run results says so (it said "the run results are
/// at: none").
#[test]
fn a_shape_asked_of_a_ladder_without_runs_says_it_has_none() {
    let out = stallscope()
        .args([
            "report",
            "--ladder",
            "sgemm-toy",
            "--shape",
            "1,16,8192,128",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success());
    assert!(
        err.contains("--shape 1,16,8192,128: sgemm-toy has no run results, at any shape"),
        "{err}"
    );
    assert!(!err.contains("none"), "{err}");
}

/// Two export files are named in the table's columns by the shortest ends of their
/// paths that tell them apart (the whole paths made a header of ~230 columns); one file
/// given twice by its name and launch. The line above the table keeps the paths.
#[test]
fn compare_names_files_by_short_unique_names() {
    let header = |args: &[std::path::PathBuf], extra: &[&str]| {
        let out = stallscope()
            .arg("compare")
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("metric "))
            .unwrap()
            .to_string();
        (line, text)
    };
    let (line, text) = header(
        &[
            fixture("h200/sdpa_flash_raw.csv"),
            fixture("h200/sdpa_cudnn_raw.csv"),
        ],
        &[],
    );
    assert!(
        line.contains("  sdpa_flash_raw.csv  ") && line.contains("sdpa_cudnn_raw.csv"),
        "{line}"
    );
    assert!(!line.contains("fixtures"), "{line}");
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("fixtures/h200/sdpa_flash_raw.csv")
    );
    let eight = fixture("h200/others_basic_details.csv");
    let (line, _) = header(
        &[eight.clone(), eight],
        &["--launch-a", "2", "--launch-b", "3"],
    );
    assert!(
        line.contains("others_basic_details.csv#2")
            && line.contains("others_basic_details.csv#3")
            && !line.contains("fixtures"),
        "{line}"
    );
    let dir = tempfile::tempdir().unwrap();
    for side in ["a", "b"] {
        std::fs::create_dir(dir.path().join(side)).unwrap();
        std::fs::copy(
            fixture("sgemm/det.csv"),
            dir.path().join(side).join("det.csv"),
        )
        .unwrap();
    }
    let (line, _) = header(
        &[dir.path().join("a/det.csv"), dir.path().join("b/det.csv")],
        &["--launch-a", "0", "--launch-b", "1"],
    );
    assert!(
        line.contains(" a/det.csv ") && line.contains(" b/det.csv "),
        "{line}"
    );
}

#[test]
fn trace_refuses_a_version_without_markers_and_says_what_marks_one() {
    stallscope()
        .args(["trace", "v01"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "version v01 has no pipeline markers (marked = true in the recipe",
        ));
    stallscope()
        .args(["trace", "--kernels", "kernels/selftest"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "no version of selftest has pipeline markers",
        ));
}

/// `report --versions A,B` writes a step's before/after tables (the notes' step
/// sections), and refuses what it cannot write with what to do instead.
#[test]
fn report_versions_writes_a_steps_tables_and_refuses_what_it_cannot() {
    let out = stallscope()
        .args(["report", "--versions", "v27,v28", "--format", "markdown"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.starts_with("| shape | v27 | v28 | v28 against v27 (rounds paired, 95 % interval) |"),
        "{text}"
    );
    assert!(text.contains("| 1,16,8192,128 causal | "), "{text}");
    assert!(
        text.contains("| stall cell 1 (% of all warp samples) | barrier @ WARPGROUP"),
        "{text}"
    );
    for (args, said) in [
        (
            vec!["--versions", "v27"],
            "--versions takes two version ids",
        ),
        (
            vec!["--versions", "v27,v28", "--format", "json"],
            "use --format markdown",
        ),
        (
            vec!["--versions", "v27,v99", "--format", "markdown"],
            "no ladder holds both v27 and v99",
        ),
    ] {
        stallscope()
            .arg("report")
            .args(&args)
            .assert()
            .failure()
            .stderr(predicate::str::contains(said));
    }
}

/// `trace --no-capture` times the trace builds alone; with `--no-overhead` there would
/// be nothing to do, and clap says the two do not go together.
#[test]
fn trace_no_capture_and_no_overhead_are_refused_together() {
    stallscope()
        .args(["trace", "--no-capture", "--no-overhead", "v13"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot be used with"));
}

/// `compare` shows the step on the roofline and ncu's findings the child resolved, with
/// ncu's estimate beside the measured change in time and where that came from; the
/// JSON carries the same figures. v09 → v10 of flash-attention: ncu estimated −37 % for
/// CPIStall, which v10 no longer fires; the runs measured −4.2 %.
#[test]
fn compare_shows_the_roofline_step_and_ncus_estimates() {
    let text = compared(&["v10"]);
    for want in [
        r"roofline and ncu's estimates",
        r"\nDRAM intensity ×\s+\d+\.\d\d×",
        r"\nFLOP/s ×\s+\d+\.\d\d×",
        r"\nnearer roof, share\s+compute \d+ %\s+compute \d+ %",
        r"\nncu estimate: CPIStall\s+−37\.0 %\s+gone\n",
        r"\nchange in time \(runs at 1,64,1024,128\)\s+−4\.2 %\s+faster · partly\n",
    ] {
        assert!(
            regex::Regex::new(want).unwrap().is_match(&text),
            "{want} not in\n{text}"
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&compared(&["v10", "--format", "json"])).unwrap();
    let e = &json["estimates"];
    assert_eq!(e["resolved"][0]["rule"], "CPIStall");
    assert_eq!(e["resolved"][0]["fate"], "gone");
    assert_eq!(e["measured"]["source"]["from"], "runs");
    assert_eq!(e["outcome"], "partly");
    let r = &json["roofline"];
    assert!(r["flops_x"].as_f64().unwrap() > 1.0, "{r}");
    assert_eq!(r["after"]["roof"]["kind"], "compute");
}

/// Two export files: their ncu durations give the change in time, and the text says so.
#[test]
fn compare_of_two_files_times_the_step_with_ncu_durations() {
    let dir = profiles().join("flash-attention");
    let out = stallscope()
        .arg("compare")
        .arg(dir.join("v09/raw.csv.gz"))
        .arg(dir.join("v29/raw.csv.gz"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        regex::Regex::new(r"\nchange in time \(ncu durations, no runs\)\s+−\d+\.\d %")
            .unwrap()
            .is_match(&text),
        "{text}"
    );
    assert!(
        regex::Regex::new(r"\nFLOP/s ×\s+\d+\.\d\d×")
            .unwrap()
            .is_match(&text),
        "{text}"
    );
}

/// What depends on data is said once and generated into the help: the ladder run by
/// default (`recipe::folders::DEFAULT_LADDER`), each problem kind's `--shape` syntax
/// and its baselines (`kinds::KINDS`); cli.rs names no ladder and no kind's shape.
#[test]
fn the_help_takes_the_default_ladder_and_the_kinds_from_their_one_place() {
    let help = |args: &[&str]| {
        let out = stallscope().args(args).arg("--help").assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let default = format!("[default: {}]", stallscope::recipe::folders::DEFAULT_LADDER);
    for sub in ["run", "profile", "trace", "build"] {
        assert!(help(&[sub]).contains(&default), "{sub} --help: {default}");
    }
    let run = help(&["run"]);
    for k in stallscope::kinds::KINDS {
        let kind = stallscope::kinds::Kind::of(*k);
        assert!(
            run.contains(&format!("{}: {}", k.name(), kind.shape_usage())),
            "{run}"
        );
        for b in k.baselines() {
            assert!(run.contains(b.id), "run --help names baseline {}", b.id);
        }
    }
    let cli = std::fs::read_to_string(common::repo().join("src/cli.rs")).unwrap();
    assert!(!cli.contains("[default: flash-attention]"));
    assert!(!cli.contains("B,H,S,D") && !cli.contains("M,N,K"));
}
