//! Writers at once: two imports (processes) and two result saves (threads) into one
//! ladder at the same time, every read-modify-write held open by a delay at its fault
//! points, and nothing is lost. (One test in this file: the delay is set for the whole
//! process.)

mod common;

use assert_cmd::cargo::cargo_bin;
use common::fixture;
use stallscope::files::limits::SizeLimits;
use stallscope::model::runs::{RunFile, RunResult, RunStatus};
use stallscope::model::{Store, manifest::Manifest};
use std::path::Path;

fn import(profiles: &Path, version: &str) -> std::process::Child {
    std::process::Command::new(cargo_bin("stallscope"))
        .arg("import")
        .arg(fixture("sgemm/det.csv"))
        .args([
            "--version",
            version,
            "--ladder",
            "toy",
            "--kernel",
            "mm_naive",
        ])
        .arg("--profiles")
        .arg(profiles)
        .env("STALLSCOPE_FAULT_DELAY_MS", "200")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn result(version: &str) -> RunResult {
    let mut r = RunResult::new(
        version,
        stallscope::kinds::attention::shape(1, 64, 1024, 128, false),
        RunStatus::Ok,
    );
    r.median_us = Some(100.0);
    r
}

#[test]
fn two_imports_and_two_result_saves_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    let ladder = profiles.join("toy");
    let started = std::time::Instant::now();
    let first = import(&profiles, "v0").wait_with_output().unwrap();
    assert!(first.status.success(), "{first:?}");
    // The windows are held open only where the fault points wait: an import passes
    // several, each 200 ms long in a binary built with fault injection.
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(200),
        "the import did not wait at its fault points: no window was held open"
    );

    stallscope::files::fault::set_delay(200);
    let imports = [import(&profiles, "v1"), import(&profiles, "v2")];
    let saves: Vec<_> = ["r1", "r2"]
        .into_iter()
        .map(|v| {
            let ladder = ladder.clone();
            std::thread::spawn(move || {
                RunFile::store(&ladder, &[result(v)], None, SizeLimits::DEFAULT).map(|_| ())
            })
        })
        .collect();
    for child in imports {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    for s in saves {
        s.join().unwrap().unwrap();
    }

    let text = std::fs::read_to_string(ladder.join("ladder.toml")).unwrap();
    let mut versions: Vec<String> = Manifest::parse(&text)
        .unwrap()
        .versions
        .into_iter()
        .map(|v| v.id)
        .collect();
    versions.sort();
    let runs = RunFile::read(&Store::disk(SizeLimits::DEFAULT), &ladder.join("runs.json")).unwrap();
    let mut results: Vec<String> = runs.runs.into_iter().map(|r| r.version).collect();
    results.sort();
    assert_eq!(
        (versions, results),
        (
            vec!["v0".to_string(), "v1".into(), "v2".into()],
            vec!["r1".to_string(), "r2".into()]
        )
    );
}
