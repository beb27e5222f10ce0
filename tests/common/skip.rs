//! Tests that cannot run on this machine (no GPU, no NVRTC, no Chromium, no python3) say
//! so past the test harness's output capture, and leave a record of it: the last test
//! target of `cargo test` (`tests/z_skipped.rs`) counts them into the run's last line,
//! since the harness counts a skipped test as passed. A need named in
//! `STALLSCOPE_MUST_RUN` (comma-separated: `gpu`, `nvrtc`, `chromium`, `python3`) is
//! not skipped: the test fails instead, as CI wants for what it installs.
//!
//! Shared by the integration tests (`tests/common`) and the library's unit tests.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The environment variable naming the needs whose tests must run here.
pub const MUST_RUN_VAR: &str = "STALLSCOPE_MUST_RUN";

/// Says that `test` skipped because `why` (it needs `need`), and records it for the
/// tally; where `need` must run here, fails the test instead.
pub fn skip(test: &str, need: &str, why: &str) {
    if must_run(need) {
        panic!("{test} must run here ({MUST_RUN_VAR} names {need}), but it cannot: {why}");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
    if let Some(dir) = records() {
        let name: String = test
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let _ = std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(dir.join(name), format!("{need}\t{why}\t{test}\n")));
    }
}

/// Whether `STALLSCOPE_MUST_RUN` names `need`.
pub fn must_run(need: &str) -> bool {
    std::env::var(MUST_RUN_VAR)
        .unwrap_or_default()
        .split(',')
        .any(|n| n.trim() == need)
}

/// This run's records: beside the test executables (`target/debug/skipped-tests/`), one
/// folder per run of `cargo test`, named by the process that runs every test executable
/// (cargo, the parent of this one).
pub fn records() -> Option<PathBuf> {
    records_of(std::os::unix::process::parent_id())
}

/// The records of the tests that the process `runner` ran: a folder named by its id and
/// its start time, so that a later run with the same id starts afresh.
pub fn records_of(runner: u32) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let profile = exe.parent()?.parent()?;
    // /proc/PID/stat: the start time is the 22nd field, the 20th after the name's ')'.
    let stat = std::fs::read_to_string(format!("/proc/{runner}/stat")).unwrap_or_default();
    let started = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(19))
        .unwrap_or("0")
        .to_string();
    Some(
        profile
            .join("skipped-tests")
            .join(format!("{runner}-{started}")),
    )
}

/// The line that counts the records in `dir`: how many tests skipped, by need, with the
/// reason and the tests' names.
pub fn tally(dir: &Path) -> String {
    // need → (why, tests)
    let mut by_need: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        let mut fields = text.trim_end().splitn(3, '\t');
        let (Some(need), Some(why), Some(test)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let entry = by_need
            .entry(need.to_string())
            .or_insert_with(|| (why.to_string(), Vec::new()));
        entry.1.push(test.to_string());
    }
    let total: usize = by_need.values().map(|(_, tests)| tests.len()).sum();
    if total == 0 {
        return "skipped tests: none, every test ran".to_string();
    }
    let parts: Vec<String> = by_need
        .iter_mut()
        .map(|(need, (why, tests))| {
            tests.sort();
            format!("{} need {need} ({why}: {})", tests.len(), tests.join(", "))
        })
        .collect();
    format!(
        "SKIPPED {total} test(s), counted as passed above: {}",
        parts.join("; ")
    )
}
