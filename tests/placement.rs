//! Children on several GPUs and through a cluster launcher: a stand-in launcher records
//! how each child was started (its GPU through CUDA_VISIBLE_DEVICES, its command) and
//! runs it. No GPU is needed: without one the workers fail at once, which is enough to
//! see where and how each was started; a launcher that hangs shows that every child
//! still stops at its timeout.

mod common;

use assert_cmd::Command;
use common::repo;
use std::path::{Path, PathBuf};

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// A launcher that notes `GPU=<CUDA_VISIBLE_DEVICES> <its arguments>` and, as srun
/// does, takes its own options (the leading `-…` words) and runs the rest.
fn recording_launcher(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("launched.log");
    let l = script(
        dir,
        "launch",
        &format!(
            "echo \"GPU=${{CUDA_VISIBLE_DEVICES:-none}} $*\" >> '{}'\nwhile [ \"${{1#-}}\" != \"$1\" ]; do shift; done\nexec \"$@\"",
            log.display()
        ),
    );
    (l, log)
}

fn stallscope(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("stallscope").unwrap();
    c.current_dir(repo())
        .env("STALLSCOPE_CACHE", dir.join("cache"))
        .env_remove("STALLSCOPE_PROFILES");
    c
}

#[test]
fn every_worker_starts_through_the_launcher() {
    let dir = tempfile::tempdir().unwrap();
    let (launcher, log) = recording_launcher(dir.path());
    let out = stallscope(dir.path())
        .args([
            "run",
            "v01",
            "v02",
            "--no-save",
            "--rounds",
            "1",
            "--launcher",
        ])
        .arg(format!("{} --ntasks=1", launcher.display()))
        .output()
        .unwrap();
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let workers: Vec<&str> = log.lines().filter(|l| l.contains("__worker")).collect();
    assert_eq!(workers.len(), 2, "one launch per candidate:\n{log}");
    for id in ["v01", "v02"] {
        assert!(
            workers
                .iter()
                .any(|l| l.contains("--ntasks=1") && l.contains(&format!("--version {id}"))),
            "{log}"
        );
    }
    if stallscope::gpu::driver::unavailable().is_some() {
        // Here the workers find no GPU: each says so, and the run fails.
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("FAILED") && err.contains("CUDA"), "{err}");
    }
}

#[test]
fn each_comparison_runs_whole_on_one_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let (launcher, log) = recording_launcher(dir.path());
    stallscope(dir.path())
        .args(["run", "v01", "v02", "--no-save", "--rounds", "1"])
        .args(["--shape", "1,8,256,128", "--shape", "1,8,512,128:causal"])
        .args(["--gpus", "0,1", "--launcher"])
        .arg(&launcher)
        .output()
        .unwrap();
    let log = std::fs::read_to_string(&log).unwrap();
    for shape in ["1,8,256,128", "1,8,512,128:causal"] {
        let gpus: std::collections::BTreeSet<&str> = log
            .lines()
            .filter(|l| l.contains(&format!("--shape {shape} ")))
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(
            gpus.len(),
            1,
            "one GPU for every candidate at {shape}:\n{log}"
        );
        let g = gpus.into_iter().next().unwrap();
        assert!(g == "GPU=0" || g == "GPU=1", "{g}");
    }
    // The flag travels with the shape: no line runs 1,8,512,128 without its mask.
    assert!(
        !log.lines().any(|l| l.contains("--shape 1,8,512,128 ")),
        "{log}"
    );
}

#[test]
fn a_hanging_launcher_stops_at_the_timeout_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("{}", 80_000 + std::process::id() % 10_000);
    let launcher = script(
        dir.path(),
        "hang",
        &format!("sleep 1000 {marker} &\nexec sleep 1001 {marker}"),
    );
    let started = std::time::Instant::now();
    stallscope(dir.path())
        .args(["run", "v01", "--no-save", "--timeout", "1", "--launcher"])
        .arg(&launcher)
        .assert()
        .failure()
        .stdout(predicates::str::contains("timed out after 1 s"));
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&format!(" {marker} ")))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// An ncu stand-in that profiles whatever kernel `-k regex:^NAME$` asks for: its report
/// holds the name, and its pages are the real FlashAttention-2 pages renamed to it.
fn renaming_ncu(dir: &Path) -> PathBuf {
    let f = |p: &str| common::fixture(p).display().to_string();
    script(
        dir,
        "ncu",
        &format!(
            r#"case " $* " in
  *" --import "*)
    while [ "$1" != "--import" ]; do shift; done
    name=$(/bin/cat "$2")
    case " $* " in
      *" --page raw "*) /bin/sed "s/flash_fwd_kernel/$name/g" '{raw}' ;;
      *" --page details "*) /bin/sed "s/flash_fwd_kernel/$name/g" '{det}' ;;
      *" --page source "*) /bin/gzip -dc '{src}' | /bin/sed "s/flash_fwd_kernel/$name/g" ;;
    esac
    exit 0 ;;
esac
while [ $# -gt 0 ]; do
  case "$1" in
    -k) name=$(echo "$2" | /bin/sed 's/^regex:^//; s/\$$//') ;;
    -o) out="$2" ;;
  esac
  shift
done
echo "==PROF== Profiling \"$name\" - 0: 0%....100% - 40 passes"
echo "$name" > "$out.ncu-rep""#,
            raw = f("h200/sdpa_flash_raw.csv"),
            det = f("h200/sdpa_flash_details_base.csv"),
            src = f("h200/sdpa_flash_source_sass.csv.gz"),
        ),
    )
}

#[test]
fn versions_profiled_on_several_slots_all_land_in_one_ladder() {
    let dir = tempfile::tempdir().unwrap();
    let (launcher, log) = recording_launcher(dir.path());
    let profiles = dir.path().join("profiles");
    stallscope(dir.path())
        .env("NCU", renaming_ncu(dir.path()))
        .args([
            "profile",
            "v01",
            "v02",
            "v03",
            "v04",
            "--jobs",
            "2",
            "--launcher",
        ])
        .arg(&launcher)
        .arg("--profiles")
        .arg(&profiles)
        .assert()
        .success();
    let log = std::fs::read_to_string(&log).unwrap();
    for v in ["v01", "v02", "v03", "v04"] {
        assert!(
            log.lines()
                .any(|l| l.contains("/ncu ") && l.contains(&format!("--version {v}"))),
            "ncu of {v} through the launcher:\n{log}"
        );
    }
    let text = std::fs::read_to_string(profiles.join("flash-attention/ladder.toml")).unwrap();
    let m = stallscope::model::manifest::Manifest::parse(&text).unwrap();
    let with_files: Vec<&str> = m
        .versions
        .iter()
        .filter(|v| !v.files.is_empty())
        .map(|v| v.id.as_str())
        .collect();
    assert_eq!(
        with_files,
        ["v01", "v02", "v03", "v04"],
        "every import kept"
    );
}
