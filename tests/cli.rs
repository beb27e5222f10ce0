//! The binary from the outside: exit codes, output formats, error lines, import.

mod common;

use assert_cmd::Command;
use common::{fixture, profiles};
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
                r"\nv1 +lg_throttle @ LDG +38\.6 +not_selected @ LDG +20\.8\n",
                r"v2 +mio_throttle @ LDS +49\.5 +not_selected @ LDS +13\.7 +moved \(z 467\)\n",
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
    assert_eq!(doc["schema"], "stallscope/report/1");
    let v = &doc["ladders"];
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
    assert!(text.starts_with("ladder,version,title,baseline,metric,value,unit\n"));
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
                r"\n1 +lg_throttle @ LDG +38\.6 .*\n2 +mio_throttle @ LDS +49\.5 .* moved",
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
                r"Duration \(ncu\)\s+2744 µs\s+1843 µs\s+-900\.8 µs \(0\.67×\)\s+better",
            )
            .unwrap(),
        )
        .stdout(
            predicate::str::is_match(r"lg_throttle\s+37\.5\s+0\.1\s+-37\.4 pt\s+better").unwrap(),
        )
        .stdout(
            predicate::str::is_match(
                r"\nLDG\s+58 · 76\.3\s+2 · 2\.6\s+-56 · -73\.6 pt\nLDS\s+0 · 0\.0\s+40 · 72\.2",
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
        .stderr(predicate::str::contains("must be letters"));
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
