//! `profile -- CMD`: any program profiled by ncu into a version, its pages exported and
//! imported, the command stored; ncu's failures read as one line with the fix. ncu is a
//! stand-in here (`$NCU`) that behaves as ncu does on the command line: it writes a
//! report, then exports real H200 pages from it.

mod common;

use assert_cmd::Command;
use common::fixture;
use predicates::prelude::*;
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
      *" --page raw "*) cat '{raw}' ;;
      *" --page details "*) cat '{details}' ;;
      *" --page source "*) gzip -dc '{source}' ;;
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

const PROFILED: &str = r#"echo '==PROF== Profiling "flash_fwd_kernel" - 0: 0%....50%....100% - 40 passes'
touch "$out.ncu-rep""#;

#[test]
fn a_command_becomes_a_version_with_its_command_stored() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = stand_in(dir.path(), PROFILED);
    let profiles = dir.path().join("profiles");
    Command::cargo_bin("stallscope")
        .unwrap()
        .env("NCU", &ncu)
        .args([
            "profile",
            "--ladder",
            "mine",
            "--version",
            "v1",
            "-k",
            "regex:flash",
            "--profiles",
        ])
        .arg(&profiles)
        .args(["--", "python3", "attn.py", "--seq", "1024"])
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
    Command::cargo_bin("stallscope")
        .unwrap()
        .env("NCU", &ncu)
        .args([
            "profile",
            "--ladder",
            "mine",
            "--version",
            "v1",
            "-k",
            "regex:nothing",
            "--profiles",
        ])
        .arg(dir.path().join("profiles"))
        .args(["--", "./app"])
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
