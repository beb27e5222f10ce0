//! `profile -- CMD`: any program profiled by ncu into a version, its pages exported and
//! imported, the command stored; ncu's failures read as one line with the fix. ncu is a
//! stand-in here (`$NCU`) that behaves as ncu does on the command line: it writes a
//! report, then exports real H200 pages from it.

mod common;

use assert_cmd::Command;
use common::fixture;
use predicates::prelude::*;
use stallscope::files::limits::SizeLimits;
use std::path::Path;

fn stand_in(dir: &Path, profiled: &str) -> std::path::PathBuf {
    let raw = fixture("h200/sdpa_flash_raw.csv");
    let details = fixture("h200/sdpa_flash_details_base.csv");
    let source = fixture("h200/sdpa_flash_source_sass.csv.gz");
    let p = dir.join("ncu");
    std::fs::write(
        &p,
        format!(
            r#"#!/bin/sh
# An ncu stand-in: `--import REP --csv --page P` prints a page; otherwise it profiles.
case " $* " in
  *" --import "*)
    case " $* " in
      *" --page raw "*) /bin/cat '{raw}' ;;
      *" --page details "*) /bin/cat '{details}' ;;
      *" --page source "*) /bin/gzip -dc '{source}' ;;
    esac
    exit 0 ;;
esac
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; fi
  shift
done
echo "==PROF== Connected to process 4242 (/usr/bin/python3)"
{profiled}
echo "==PROF== Disconnected from process 4242"
"#,
            raw = raw.display(),
            details = details.display(),
            source = source.display(),
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// `stallscope profile --ladder mine --version v1 FILTER… --profiles DIR -- CMD…` with
/// the ncu stand-in.
fn profile_into(ncu: &Path, profiles: &Path, filter: &[&str], cmd: &[&str]) -> Command {
    let mut c = Command::cargo_bin("stallscope").unwrap();
    c.env("NCU", ncu)
        .args(["profile", "--ladder", "mine", "--version", "v1"])
        .args(filter)
        .arg("--profiles")
        .arg(profiles)
        .arg("--")
        .args(cmd);
    c
}

const PROFILED: &str = r#"echo '==PROF== Profiling "flash_fwd_kernel" - 0: 0%....50%....100% - 40 passes'
/usr/bin/touch "$out.ncu-rep""#;

#[test]
fn a_command_becomes_a_version_with_its_command_stored() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = stand_in(dir.path(), PROFILED);
    let profiles = dir.path().join("profiles");
    profile_into(
        &ncu,
        &profiles,
        &["-k", "regex:flash"],
        &["python3", "attn.py", "--seq", "1024"],
    )
    .assert()
    .success()
    .stderr(predicate::str::contains("imported 3 file(s)"));
    let text = std::fs::read_to_string(profiles.join("mine/ladder.toml")).unwrap();
    let m = stallscope::model::manifest::Manifest::parse(&text).unwrap();
    let p = m.versions[0]
        .profile
        .as_ref()
        .expect("the command is stored");
    assert_eq!(p.command, ["python3", "attn.py", "--seq", "1024"]);
    assert_eq!(p.kernel.as_deref(), Some("regex:flash"));
    Command::cargo_bin("stallscope")
        .unwrap()
        .args(["report", "--profiles"])
        .arg(&profiles)
        .assert()
        .success()
        .stdout(predicate::str::contains("flash_fwd_kernel"));
}

#[test]
fn no_kernel_matched_reads_as_one_line_with_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = stand_in(dir.path(), "echo '==WARNING== No kernels were profiled.'");
    profile_into(
        &ncu,
        &dir.path().join("profiles"),
        &["-k", "regex:nothing"],
        &["./app"],
    )
    .assert()
    .failure()
    .stderr(predicate::str::contains(
        "no kernel matched the filter -k regex:nothing",
    ));
    assert!(!dir.path().join("profiles").exists(), "nothing imported");
}

#[test]
fn without_ncu_the_command_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("stallscope")
        .unwrap()
        .env_remove("NCU")
        .env("PATH", dir.path())
        .args([
            "profile",
            "--ladder",
            "mine",
            "--version",
            "v1",
            "--",
            "./app",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "ncu was not found on the PATH: install Nsight Compute",
        ));
}

#[test]
fn a_command_needs_the_version_it_becomes() {
    Command::cargo_bin("stallscope")
        .unwrap()
        .args(["profile", "--ladder", "mine", "--", "./app"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("needs --version ID"));
}

/// A `.ncu-rep` report opens like a CSV export: its pages exported through ncu once,
/// then read from the cache by the report's content hash, even without ncu.
#[test]
fn a_report_is_read_through_ncu_and_then_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = stand_in(dir.path(), PROFILED);
    let report = dir.path().join("flash.ncu-rep");
    std::fs::write(&report, b"\x01NVIDIA Nsight Compute report stand-in\x00").unwrap();
    let cache = dir.path().join("cache");
    for ncu_env in [Some(ncu.as_path()), None] {
        let mut cmd = Command::cargo_bin("stallscope").unwrap();
        cmd.env("STALLSCOPE_CACHE", &cache)
            .env("PATH", dir.path().join("empty"));
        match ncu_env {
            Some(n) => cmd.env("NCU", n),
            None => cmd.env_remove("NCU"),
        };
        cmd.args(["report", "--format", "json"])
            .arg(&report)
            .assert()
            .success()
            .stdout(predicate::str::contains("flash_fwd_kernel"));
    }
    // Another report without ncu: one line naming ncu and the export commands.
    let other = dir.path().join("other.ncu-rep");
    std::fs::write(&other, b"another report").unwrap();
    Command::cargo_bin("stallscope")
        .unwrap()
        .env("STALLSCOPE_CACHE", &cache)
        .env("PATH", dir.path().join("empty"))
        .env_remove("NCU")
        .arg("report")
        .arg(&other)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "is an Nsight Compute report: reading it needs ncu",
        ))
        .stderr(predicate::str::contains("ncu --import"));
}

/// The explorer profiles a version of the user's program again with the command stored
/// with it (`p` on that version).
#[test]
fn the_explorer_profiles_a_stored_command_again() {
    use stallscope::model::{self, LoadReport, Store};
    use stallscope::tui::{
        action::Action, jobs, ladder_state::LadderState, state::*, theme::Theme,
    };
    let dir = tempfile::tempdir().unwrap();
    let ncu = stand_in(dir.path(), PROFILED);
    let profiles = dir.path().join("profiles");
    profile_into(&ncu, &profiles, &[], &["./attn", "--seq", "4096"])
        .assert()
        .success();
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles.join("mine"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let mut app = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    let Some(Effect::StartJob(req)) = app.update(Action::Profile { all: false }) else {
        panic!("p starts a job");
    };
    let cmd = req.command.clone().expect("the stored command");
    assert_eq!(cmd.command, ["./attn", "--seq", "4096"]);
    // SAFETY: no other test of this binary reads NCU from this process's environment.
    unsafe { std::env::set_var("NCU", &ncu) };
    let (tx, rx) = std::sync::mpsc::channel();
    let job = jobs::start(&app, req, tx);
    loop {
        let ev = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the job reports");
        app.update(ev);
        if app.job.is_none() {
            break;
        }
    }
    job.handle.join().unwrap();
    match &app.status {
        Some(Status::Info(m)) => assert!(m.contains("imported 3 file(s)"), "{m}"),
        other => panic!("{other:?}"),
    }
}
