//! `stallscope doctor` says what this machine can do: each check ok or missing with its
//! fix, and a non-zero exit when `run` or `profile` could not work. Stand-ins for ncu
//! and Python show the found paths; the GPU line is whatever this machine has.

use assert_cmd::Command;
use std::path::Path;

fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

fn doctor(ncu: &Path, python: &Path) -> (String, bool) {
    let out = Command::cargo_bin("stallscope")
        .unwrap()
        .arg("doctor")
        .env("NCU", ncu)
        .env("STALLSCOPE_PYTHON", python)
        .output()
        .unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.success())
}

fn line<'a>(text: &'a str, what: &str) -> &'a str {
    text.lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no {what} line in\n{text}"))
}

#[test]
fn each_check_reads_ok_or_missing_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = script(
        dir.path(),
        "ncu",
        "echo 'NVIDIA (R) Nsight Compute Command Line Profiler'\necho 'Version 2025.3.1.0 (build 36398880) (public-release)'",
    );
    let python = script(
        dir.path(),
        "python",
        r#"echo '{"torch": "2.11.0+cu130", "cuda": true, "cudnn": 91400}'"#,
    );
    let (text, ok) = doctor(&ncu, &python);
    let n = line(&text, "Nsight Compute");
    assert!(n.starts_with("ok"), "{n}");
    assert!(
        n.contains("Version 2025.3.1.0") && n.contains(&ncu.display().to_string()),
        "{n}"
    );
    let p = line(&text, "PyTorch baselines");
    assert!(
        p.starts_with("ok") && p.contains("torch 2.11.0+cu130, cuDNN 91400"),
        "{p}"
    );
    let gpu = line(&text, "GPU and driver");
    if gpu.starts_with("missing") {
        assert!(!ok, "no GPU: run cannot work, so doctor fails");
        assert!(text.contains("fix: install the NVIDIA driver"), "{text}");
        assert!(
            text.contains("cannot work here:") && text.contains("run"),
            "{text}"
        );
    }
}

#[test]
fn missing_tools_are_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let python = script(
        dir.path(),
        "python",
        "echo '{\"error\": \"No module named torch\"}'",
    );
    let (text, ok) = doctor(&dir.path().join("no-ncu-here"), &python);
    assert!(!ok);
    let n = line(&text, "Nsight Compute");
    assert!(n.starts_with("missing"), "{n}");
    let p = line(&text, "PyTorch baselines");
    assert!(p.starts_with("missing") && p.contains("no torch"), "{p}");
    assert!(text.contains("fix: install python3 with PyTorch"), "{text}");
    assert!(text.contains("profile"), "{text}");
}
