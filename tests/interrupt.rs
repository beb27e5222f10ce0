//! Ctrl-C reaches the children: with stallscope's handler installed, an interrupt ends
//! the wait on a child and is forwarded to the child's process group (which the
//! terminal does not reach: every child leads a group of its own). A test binary of its
//! own, since the interrupt stays raised for the rest of the process.

use stallscope::process::{self, Limits, Stopped};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[test]
fn an_interrupt_is_forwarded_to_the_child_group() {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("got-sigint");
    let script = dir.path().join("trap.sh");
    // The child notes SIGINT in a file and exits; without the forwarding it would sleep.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntrap 'touch {}; exit 1' INT\nwhile true; do sleep 0.05; done\n",
            seen.display()
        ),
    )
    .unwrap();
    process::handle_interrupts().unwrap();
    let cancel = AtomicBool::new(false);
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(400));
        unsafe {
            libc::raise(libc::SIGINT);
        }
    });
    let mut cmd = Command::new("sh");
    cmd.arg(&script);
    let out = process::run(
        cmd,
        &Limits::new(Duration::from_secs(30), &cancel),
        &mut |_| {},
    )
    .unwrap();
    assert!(matches!(out, Err(Stopped::Interrupted)));
    assert!(process::interrupted());
    assert!(seen.exists(), "the child got the forwarded SIGINT");
}
