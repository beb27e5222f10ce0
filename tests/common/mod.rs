//! Shared helpers of the integration tests: paths of the real ncu exports in
//! tests/fixtures and of the bundled profiles.
#![allow(dead_code)]

use std::path::PathBuf;

pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

pub fn profiles() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("profiles")
}
