//! Children always stop: stand-ins for a hung kernel's worker, for the PyTorch baseline
//! script and for ncu (which starts the program it profiles) hang on purpose; the
//! timeout and cancel end each one with every process it started. No GPU needed.

use stallscope::gpu::protocol::{Starting, WorkerError};
use stallscope::process::{self, Limits, Stopped};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A shell script that starts a child that sleeps and then sleeps itself; both carry
/// `marker` (a number: GNU sleep adds its arguments up) last on their command line, so
/// that the test can look for them.
fn hanging_script(dir: &Path, marker: &str) -> std::path::PathBuf {
    let path = dir.join("hang.sh");
    std::fs::write(
        &path,
        format!("#!/bin/sh\nsleep 1000 {marker} &\nexec sleep 1001 {marker}\n"),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&path, perm).unwrap();
    path
}

/// Processes whose command line holds `marker`, other than this test.
fn survivors(marker: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|e| e.file_name().to_string_lossy() != me)
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(&format!(" {marker} ")).then_some(cmd)
        })
        .collect()
}

/// A number no other test of this run uses.
fn marker(name: &str) -> String {
    format!(
        "{}",
        70_000 + (std::process::id() % 1000) * 100 + name.len() as u32
    )
}

#[test]
fn a_hanging_ncu_and_its_child_end_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker("ncu");
    let ncu = hanging_script(dir.path(), &m);
    let cancel = AtomicBool::new(false);
    let start = Instant::now();
    let out = process::run(
        Command::new(&ncu),
        &Limits::new(Duration::from_millis(800), &cancel),
        &mut |_| {},
    )
    .unwrap();
    assert!(matches!(out, Err(Stopped::TimedOut(_))), "{:?}", out.err());
    assert!(start.elapsed() < Duration::from_secs(5));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors(&m), Vec::<String>::new());
}

#[test]
fn a_worker_that_never_says_hello_ends_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker("worker");
    let script = hanging_script(dir.path(), &m);
    let cancel = AtomicBool::new(false);
    let w = Starting::spawn("hang", Command::new(&script)).unwrap();
    // Give the script time to start its child.
    std::thread::sleep(Duration::from_millis(200));
    assert!(!survivors(&m).is_empty(), "the stand-in runs");
    match w.ready(Duration::from_millis(800), &cancel) {
        Err(WorkerError::Stopped(Stopped::TimedOut(_))) => {}
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a hanging worker cannot be ready"),
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors(&m), Vec::<String>::new());
}

#[test]
fn cancel_stops_a_child_and_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker("cancel-test");
    let script = hanging_script(dir.path(), &m);
    let cancel = std::sync::Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        flag.store(true, Ordering::Relaxed);
    });
    let out = process::run(
        Command::new(&script),
        &Limits::new(Duration::from_secs(60), &cancel),
        &mut |_| {},
    )
    .unwrap();
    assert!(matches!(out, Err(Stopped::Cancelled)));
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors(&m), Vec::<String>::new());
}

#[test]
fn a_child_that_exits_leaves_no_straggler_behind() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker("straggler");
    let path = dir.path().join("quick.sh");
    std::fs::write(&path, format!("#!/bin/sh\nsleep 1000 {m} &\necho done\n")).unwrap();
    let cancel = AtomicBool::new(false);
    let mut cmd = Command::new("sh");
    cmd.arg(&path);
    let out = process::run(
        cmd,
        &Limits::new(Duration::from_secs(10), &cancel),
        &mut |_| {},
    )
    .unwrap()
    .expect("it exits by itself");
    assert!(out.status.success());
    assert_eq!(out.stdout.trim(), "done");
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors(&m), Vec::<String>::new());
}
