//! A test that cannot run here says SKIPPED and leaves a record that the run's last line
//! counts (`tests/z_skipped.rs`); where its need is named in `STALLSCOPE_MUST_RUN` (CI
//! names what it installs) it fails instead. Proved on a probe test of this file, run in
//! a child process of this one.

mod common;

use common::{MUST_RUN_VAR, records_of, skip, tally};

/// Set for the child that runs [`probe`]; elsewhere the probe does nothing.
const PROBE_VAR: &str = "STALLSCOPE_SKIP_PROBE";

#[test]
fn probe() {
    if std::env::var_os(PROBE_VAR).is_some() {
        skip(
            "skips probe",
            "chromium",
            "the probe stands for a missing Chromium",
        );
    }
}

/// This test executable, running only [`probe`], with `must_run` in
/// `STALLSCOPE_MUST_RUN`.
fn run_probe(must_run: &str) -> std::process::Output {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "probe", "--test-threads=1"])
        .env(PROBE_VAR, "1")
        .env(MUST_RUN_VAR, must_run)
        .output()
        .unwrap()
}

#[test]
fn a_skipped_test_is_counted_and_one_that_must_run_here_fails() {
    // The probe's records are this process's: it is the probe's parent.
    let dir = records_of(std::process::id()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);

    let must = run_probe("gpu, chromium");
    let stderr =
        String::from_utf8_lossy(&must.stdout).into_owned() + &String::from_utf8_lossy(&must.stderr);
    assert!(
        !must.status.success()
            && stderr.contains("skips probe must run here (STALLSCOPE_MUST_RUN names chromium)"),
        "{must:?}"
    );
    assert!(
        tally(&dir).starts_with("skipped tests: none"),
        "{}",
        tally(&dir)
    );

    let skipped = run_probe("gpu");
    let stderr = String::from_utf8_lossy(&skipped.stderr);
    assert!(
        skipped.status.success() && stderr.contains("SKIPPED skips probe: the probe stands for"),
        "{skipped:?}"
    );
    let line = tally(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        line,
        "SKIPPED 1 test(s), counted as passed above: 1 need chromium (the probe stands for a missing Chromium: skips probe)"
    );
}
