//! Children always stop: stand-ins for a hung kernel's worker, for the PyTorch baseline
//! script and for ncu (which starts the program it profiles) hang on purpose; the
//! timeout and cancel end each one with every process it started. No GPU needed. The
//! stand-ins are driven through the library (`process::run`, `Starting::spawn`) and
//! through the built binary: `profile` under an `$NCU` that hangs, `run --baselines`
//! with a `$STALLSCOPE_PYTHON` that hangs in place of the SDPA script, and Ctrl-C sent
//! to `profile`.

mod common;

use stallscope::gpu::host::client::{Starting, WorkerError};
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

/// No process of the test's `marker` is left, a moment after its parent ended.
fn assert_none_left(marker: &str) {
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(survivors(marker), Vec::<String>::new());
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
    assert_none_left(&m);
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
    assert_none_left(&m);
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
    assert_none_left(&m);
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
    assert_none_left(&m);
}

/// The built binary, with no profiles folder from the environment.
fn stallscope() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("stallscope").unwrap();
    c.env_remove("STALLSCOPE_PROFILES");
    c
}

#[test]
fn profile_under_a_hanging_ncu_ends_at_the_timeout_with_all_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker("profile");
    let ncu = hanging_script(dir.path(), &m);
    let start = Instant::now();
    let out = stallscope()
        .env("NCU", &ncu)
        .args([
            "profile",
            "--ladder",
            "my",
            "--version",
            "v1",
            "--timeout",
            "2",
        ])
        .arg("--profiles")
        .arg(dir.path().join("profiles"))
        .args(["--", "/bin/true", &m])
        .output()
        .unwrap();
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Error: ncu timed out after 2 s"),
        "{stderr}"
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(8),
        "{took:?}"
    );
    assert_none_left(&m);
}

/// Without a GPU the runner starts nothing on this host; through a launcher (here
/// `env`, which runs the command as it is) the workers say so themselves, so the
/// baselines' children start: the SDPA script's interpreter is the hanging stand-in.
#[test]
fn a_hanging_sdpa_baseline_ends_at_the_timeout_with_all_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker("sdpa-baseline");
    let python = hanging_script(dir.path(), &m);
    let start = Instant::now();
    let out = stallscope()
        .env("STALLSCOPE_PYTHON", &python)
        .env("STALLSCOPE_CACHE", dir.path().join("cache"))
        .arg("--kernels")
        .arg(common::repo().join("kernels/flash-attention"))
        .args(["run", "v01", "--baselines", "--no-save", "--no-cases"])
        .args(["--launcher", "env", "--timeout", "2"])
        .output()
        .unwrap();
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for backend in ["cudnn", "fa2", "mem-efficient"] {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(backend))
            .unwrap_or_else(|| panic!("no line for {backend}: {stderr}"));
        assert!(line.contains("timed out after 2 s"), "{line}");
    }
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert_none_left(&m);
}

#[test]
fn ctrl_c_under_profile_reaches_the_ncu_group() {
    let dir = tempfile::tempdir().unwrap();
    let (started, seen) = (dir.path().join("started"), dir.path().join("got-sigint"));
    // An ncu stand-in that notes SIGINT in a file and exits; without the forwarding it
    // would loop until the timeout (the test's SIGINT goes to stallscope alone).
    let ncu = dir.path().join("ncu");
    std::fs::write(
        &ncu,
        format!(
            "#!/bin/sh\ntrap 'touch {}; exit 1' INT\ntouch {}\nwhile true; do sleep 0.05; done\n",
            seen.display(),
            started.display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&ncu).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&ncu, perm).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("stallscope"))
        .env("NCU", &ncu)
        .args([
            "profile",
            "--ladder",
            "my",
            "--version",
            "v1",
            "--timeout",
            "60",
        ])
        .arg("--profiles")
        .arg(dir.path().join("profiles"))
        .args(["--", "/bin/true"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(20);
    while !started.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(started.exists(), "the ncu stand-in started");
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let until = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen.exists(), "the ncu stand-in got the forwarded SIGINT");
}

/// A script written a moment before it starts, while a process forked meanwhile still
/// holds it open for writing (as any child forked by another thread does until it
/// execs), still starts: the start tries again while the kernel calls the file busy.
#[test]
fn a_script_still_held_open_by_a_forked_child_starts_once_it_is_let_go() {
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("busy.sh");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, b"#!/bin/sh\necho started\n").unwrap();
    let mut perm = file.metadata().unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    file.set_permissions(perm).unwrap();
    // A child that inherits the written file's descriptor and keeps it for 0.2 s.
    // SAFETY: fcntl on a descriptor this test owns.
    unsafe {
        let fd = file.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFD);
        assert!(libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) == 0);
    }
    let mut holder = Command::new("sleep").arg("0.2").spawn().unwrap();
    drop(file);
    let cancel = AtomicBool::new(false);
    let out = process::run(
        Command::new(&path),
        &Limits::new(Duration::from_secs(10), &cancel),
        &mut |_| {},
    );
    holder.wait().unwrap();
    let out = out.unwrap().unwrap();
    assert_eq!(out.stdout.trim(), "started");
}
