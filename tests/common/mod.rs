//! Shared helpers of the integration tests: paths of the real ncu exports in
//! tests/fixtures and of the bundled profiles.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository: where the tests were built, or, for a test binary carried to
/// another machine (the GPU machine has no Rust toolchain), the working directory.
pub fn repo() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if built.join("Cargo.toml").is_file() {
        built
    } else {
        std::env::current_dir().expect("a working directory")
    }
}

pub fn fixture(rel: &str) -> PathBuf {
    repo().join("tests/fixtures").join(rel)
}

pub fn profiles() -> PathBuf {
    repo().join("profiles")
}

mod figures;
mod skip;
// Each test file uses some of them.
#[allow(unused_imports)]
pub use figures::{run_at, written};
#[allow(unused_imports)]
pub use skip::{MUST_RUN_VAR, must_run, records, records_of, skip, tally};

/// What `stallscope ARGS --profiles <bundled>` writes to stdout; fails the test, with
/// its stderr, when it does not succeed.
pub fn stdout_on_bundled(args: &[&str]) -> String {
    let o = assert_cmd::Command::cargo_bin("stallscope")
        .expect("the binary")
        .env_remove("STALLSCOPE_PROFILES")
        .args(args)
        .arg("--profiles")
        .arg(profiles())
        .output()
        .expect("it starts");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("UTF-8")
}

/// The same, read as JSON.
pub fn json_on_bundled(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout_on_bundled(args)).expect("JSON")
}
