//! A local store beside the built-in one: `check` without `./profiles` verifies the
//! built-in copy, as the other commands read it.

mod common;

use assert_cmd::Command;
use common::{fixture, profiles};
use stallscope::model;
use std::path::Path;

fn stallscope(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("stallscope").unwrap();
    c.current_dir(dir).env_remove("STALLSCOPE_PROFILES");
    c
}

/// The built-in ladders: the ladder folders of the repository's `profiles/`, from which
/// the binary's copy is built.
fn built_in() -> Vec<String> {
    model::ladder_dirs(&profiles())
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// `import sgemm/det.csv --version v1 --kernel mm_naive ARGS` in `dir`: its standard error.
fn import(dir: &Path, args: &[&str]) -> String {
    let out = stallscope(dir)
        .arg("import")
        .arg(fixture("sgemm/det.csv"))
        .args(["--version", "v1", "--kernel", "mm_naive"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn check_without_a_profiles_folder_checks_the_built_in_copy() {
    let dir = tempfile::tempdir().unwrap();
    let out = stallscope(dir.path()).arg("check").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && out.stdout.is_empty()
            && stderr.starts_with(&format!(
                "profiles (built in): {} ladder(s)",
                built_in().len()
            )),
        "{out:?}"
    );
    // With ./profiles, that folder is checked.
    import(dir.path(), &[]);
    let out = stallscope(dir.path()).arg("check").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.starts_with("profiles: 1 ladder(s), 1 version(s)"),
        "{out:?}"
    );
}
