//! Writing the profiles store: an import killed at any step leaves the version all old
//! or all new, its leftovers listed by `check` and removed by the next import; new files
//! take the umask's permissions and existing ones keep theirs; the manifest keeps its
//! comments. The binary these tests spawn is built with fault injection (checked first).

mod common;

use assert_cmd::Command;
use common::fixture;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::ncu::PageKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

/// `import FILES --version v1 --ladder toy --kernel KERNEL` into `profiles`.
fn import(profiles: &Path, files: &[&str], kernel: &str, extra: &[&str]) -> std::process::Output {
    let mut c = stallscope();
    c.arg("import")
        .args(files.iter().map(|f| fixture(f)))
        .args(["--version", "v1", "--ladder", "toy", "--kernel", kernel])
        .args(extra)
        .arg("--profiles")
        .arg(profiles);
    c.output().unwrap()
}

const OLD: [&str; 2] = ["sgemm/det.csv", "sgemm/raw.csv"];
const NEW: [&str; 2] = ["sgemm/det.csv", "sgemm/src_sass.csv"];

/// What a reader sees of version v1: its kernel, its pages, and the files of its folder.
#[derive(Debug, PartialEq)]
struct Seen {
    kernel: String,
    pages: Vec<PageKind>,
    files: Vec<String>,
}

fn seen(profiles: &Path) -> Seen {
    let dir = profiles.join("toy");
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &dir,
        &mut LoadReport::default(),
    )
    .unwrap_or_else(|e| panic!("the ladder does not load: {e:#}"));
    let p = ladder.versions[0].profile.as_ref().expect("a profile");
    let mut files: Vec<String> = std::fs::read_dir(dir.join("v1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != model::staging::PENDING)
        .collect();
    files.sort();
    Seen {
        kernel: p.short_name(),
        pages: p.pages.iter().map(|(k, _)| *k).collect(),
        files,
    }
}

fn whole(kernel: &str, second: PageKind, file: &str) -> Seen {
    Seen {
        kernel: kernel.into(),
        pages: vec![PageKind::Details, second],
        files: vec!["det.csv.gz".into(), file.into()],
    }
}

/// A profiles folder holding version v1 as the old import made it.
fn with_old_version() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    let out = import(&profiles, &OLD, "mm_naive", &[]);
    assert!(out.status.success(), "{out:?}");
    (dir, profiles)
}

/// Runs the `--force` import of the new pages, aborted at fault point `step`; true when
/// it ran to its end.
fn replace_aborted_at(profiles: &Path, step: u32) -> bool {
    let mut c = stallscope();
    c.arg("import")
        .args(NEW.iter().map(|f| fixture(f)))
        .args(["--version", "v1", "--ladder", "toy", "--kernel", "mm_tiled"])
        .arg("--force")
        .arg("--profiles")
        .arg(profiles)
        .env("STALLSCOPE_ABORT_AT_STEP", step.to_string());
    c.output().unwrap().status.success()
}

/// The fault points act in the binary these tests spawn: `cargo test` builds it with
/// the `fault-injection` feature (Cargo.toml's dev-dependency on the package itself).
/// Without it the tests that kill an import at each step would see no step at all.
#[test]
fn the_binary_the_tests_run_aborts_at_the_fault_point_asked_for() {
    use std::os::unix::process::ExitStatusExt;
    let (_dir, profiles) = with_old_version();
    let mut c = stallscope();
    c.arg("import")
        .args(NEW.iter().map(|f| fixture(f)))
        .args(["--version", "v2", "--ladder", "toy", "--kernel", "mm_tiled"])
        .arg("--profiles")
        .arg(&profiles)
        .env("STALLSCOPE_ABORT_AT_STEP", "1");
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.signal() == Some(libc::SIGABRT)
            && stderr.contains("STALLSCOPE_ABORT_AT_STEP=1: aborting at step 1"),
        "the import was not aborted at its first fault point: {out:?}"
    );
}

#[test]
fn an_import_killed_at_any_step_leaves_the_version_all_old_or_all_new() {
    let old = whole("mm_naive", PageKind::Raw, "raw.csv.gz");
    let mut new = whole("mm_tiled", PageKind::Source, "src_sass.csv.gz");
    // The source page's summary is written beside it.
    new.files.push("src_sass.csv.gz.summary.json".into());
    let mut outcomes = Vec::new();
    for step in 1..40 {
        let (_dir, profiles) = with_old_version();
        let finished = replace_aborted_at(&profiles, step);
        let s = seen(&profiles);
        assert!(
            s == old || s == new,
            "killed at step {step}, v1 reads as {s:?}"
        );
        outcomes.push(s == new);
        if finished {
            break;
        }
    }
    // Killed before the swap it is all old, after it all new, and the import finishes.
    assert!(
        outcomes.first() == Some(&false) && outcomes.last() == Some(&true) && outcomes.len() > 4,
        "{outcomes:?}"
    );
}

#[test]
fn check_lists_what_a_killed_import_left_and_the_next_import_removes_it() {
    let (_dir, profiles) = with_old_version();
    // Step 6: after the swap, before the manifest is put in place (the manifest read,
    // three files staged: two exports and the source page's summary, the version staged,
    // the swap).
    assert!(!replace_aborted_at(&profiles, 6));
    let before = stallscope()
        .arg("check")
        .arg("--profiles")
        .arg(&profiles)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(replace_aborted_at(&profiles, 1000));
    let after = stallscope()
        .arg("check")
        .arg("--profiles")
        .arg(&profiles)
        .output()
        .unwrap();
    assert!(
        !before.status.success()
            && listed.contains("interrupted after its swap")
            && listed.contains("v1.staging-")
            && after.status.success()
            && after.stdout.is_empty(),
        "before: {listed}\nafter: {after:?}"
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// The import, under a shell's umask.
fn import_with_umask(umask: &str, profiles: &Path, version: &str) {
    let exe = assert_cmd::cargo::cargo_bin("stallscope");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask {umask} && exec \"$0\" import \"$1\" --version {version} --ladder toy --kernel mm_naive --profiles \"$2\""
        ))
        .arg(&exe)
        .arg(fixture("sgemm/det.csv"))
        .arg(profiles)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn new_files_take_the_permissions_the_umask_gives() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    import_with_umask("027", &profiles, "v1");
    let modes = [
        mode(&profiles.join("toy/ladder.toml")),
        mode(&profiles.join("toy/v1/det.csv.gz")),
    ];
    assert_eq!(modes, [0o640, 0o640]);
}

#[test]
fn an_existing_manifest_keeps_its_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    import_with_umask("022", &profiles, "v1");
    let manifest = profiles.join("toy/ladder.toml");
    std::fs::set_permissions(&manifest, std::fs::Permissions::from_mode(0o664)).unwrap();
    import_with_umask("077", &profiles, "v2");
    assert_eq!(mode(&manifest), 0o664);
}

#[test]
fn an_import_keeps_the_manifests_comments_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(profiles.join("toy")).unwrap();
    let written = "# The toy ladder, by hand.\ntitle = \"toy\"  # shown on top\n\n# The step before any import.\n[[version]]\nid = \"v0\"\ntitle = \"planned\"   # not profiled yet\n";
    std::fs::write(profiles.join("toy/ladder.toml"), written).unwrap();
    let out = import(&profiles, &OLD, "mm_naive", &[]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(profiles.join("toy/ladder.toml")).unwrap();
    assert!(
        text.starts_with(written) && text.contains("id = \"v1\""),
        "{text}"
    );
}

#[test]
fn the_bundled_profiles_pass_check() {
    let out = stallscope()
        .arg("check")
        .arg("--profiles")
        .arg(common::profiles())
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_bundled_manifest_edited_reads_back_as_edited_with_its_comments() {
    use stallscope::model::manifest::{Edit, Manifest, ProfileCommand};
    let dir = tempfile::tempdir().unwrap();
    let original =
        std::fs::read_to_string(common::profiles().join("flash-attention/ladder.toml")).unwrap();
    std::fs::write(dir.path().join("ladder.toml"), &original).unwrap();
    let mut edit = Edit::open(dir.path(), None, SizeLimits::DEFAULT).unwrap();
    let m = &mut edit.manifest;
    m.versions.reverse();
    m.versions.remove(3);
    m.versions[0].title.push_str(" (edited)");
    m.versions[1].profile = Some(ProfileCommand {
        command: vec!["python3".into(), "bench.py".into()],
        set: "full".into(),
        ..ProfileCommand::default()
    });
    m.peak_tflops = Some(800.0);
    let text = edit.render();
    let comments: Vec<&str> = original.lines().filter(|l| l.starts_with('#')).collect();
    assert!(
        Manifest::parse(&text).unwrap() == edit.manifest
            && !comments.is_empty()
            && comments.iter().all(|c| text.contains(c)),
        "{text}"
    );
}

/// `import FILES --version VERSION --ladder toy --kernel KERNEL [--force]` into
/// `profiles`, in a process that may write no file past `max_bytes`: its writes past
/// that fail (EFBIG, "File too large") as they fail on a full disk (ENOSPC), where a
/// test cannot put a disk of its own.
fn import_on_a_full_disk(
    profiles: &Path,
    files: &[&str],
    version: &str,
    kernel: &str,
    max_bytes: u64,
) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("stallscope"));
    c.arg("import")
        .args(files.iter().map(|f| fixture(f)))
        .args(["--version", version, "--ladder", "toy", "--kernel", kernel])
        .arg("--force")
        .arg("--profiles")
        .arg(profiles);
    // SAFETY: between fork and exec only async-signal-safe calls (setrlimit, signal).
    unsafe {
        c.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: max_bytes,
                rlim_max: max_bytes,
            };
            // A write past the limit fails with EFBIG instead of ending the process.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    c.output().unwrap()
}

#[test]
fn a_failed_import_removes_what_it_staged() {
    let (_dir, profiles) = with_old_version();
    let old = seen(&profiles);
    // The compressed raw page and source page are larger than 4 KiB; the lock file and
    // the hard links to the old version's files take no bytes.
    for (version, kernel) in [("v1", "mm_tiled"), ("v2", "mm_naive")] {
        let out = import_on_a_full_disk(&profiles, &NEW, version, kernel, 4096);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success()
                && stderr.contains("cannot write")
                && stderr.contains(".staging-"),
            "{version}: {out:?}"
        );
        let left: Vec<String> = std::fs::read_dir(profiles.join("toy"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".staging-"))
            .collect();
        assert!(
            left.is_empty(),
            "{version}: the failed import left {left:?}"
        );
        let check = stallscope()
            .arg("check")
            .arg("--profiles")
            .arg(&profiles)
            .output()
            .unwrap();
        assert!(check.status.success(), "{version}: {check:?}");
    }
    // The version it would have replaced reads as before, and no v2 was added.
    assert_eq!(seen(&profiles), old);
    assert!(!profiles.join("toy/v2").exists());
}

#[test]
fn a_report_during_a_live_import_does_not_call_it_interrupted() {
    let (_dir, profiles) = with_old_version();
    let pending = profiles.join("toy/v1").join(model::staging::PENDING);
    let report = || {
        stallscope()
            .args(["report", "--ladder", "toy", "--format", "csv", "--profiles"])
            .arg(&profiles)
            .output()
            .unwrap()
    };
    let check = || {
        stallscope()
            .arg("check")
            .arg("--profiles")
            .arg(&profiles)
            .output()
            .unwrap()
    };
    // Every fault point of the import waits: after its swap, its new manifest stays
    // pending in the version folder while the import holds the ladder's lock.
    let live = std::process::Command::new(assert_cmd::cargo::cargo_bin("stallscope"))
        .arg("import")
        .args(NEW.iter().map(|f| fixture(f)))
        .args(["--version", "v1", "--ladder", "toy", "--kernel", "mm_tiled"])
        .arg("--force")
        .arg("--profiles")
        .arg(&profiles)
        .env("STALLSCOPE_FAULT_DELAY_MS", "1500")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !pending.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the import never swapped its version in"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (during, checked) = (report(), check());
    let still_pending = pending.exists();
    let out = live.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        still_pending,
        "the import finished before the report ran: no window seen"
    );
    let stderr = String::from_utf8_lossy(&during.stderr);
    assert!(
        during.status.success() && !stderr.contains("interrupted"),
        "during a live import: {during:?}"
    );
    assert!(
        checked.status.success() && checked.stdout.is_empty(),
        "check during a live import: {checked:?}"
    );
    // An import killed at the same point (after its swap) is still called interrupted.
    assert!(!replace_aborted_at(&profiles, 6));
    let after = report();
    assert!(
        String::from_utf8_lossy(&after.stderr)
            .contains("an import was interrupted after it swapped"),
        "after a killed import: {after:?}"
    );
}
