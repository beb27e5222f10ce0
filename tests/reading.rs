//! Reading what users give: gzip files of several members and gzip bombs, files that
//! are not exports (ncu's messages alone, other profilers' CSV), exports cut short,
//! folders of exports whatever their extension, and numbers no export holds.

mod common;

use assert_cmd::Command;
use common::fixture;
use stallscope::ncu::{self, ReadOptions};
use std::io::Write;
use std::path::Path;

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// A gzip file of `members` members, each `size` bytes of one digit (text: a bomb of
/// zeros is refused at its first bytes as binary data).
fn bomb(size: usize, members: usize) -> Vec<u8> {
    gzip(&vec![b'7'; size]).repeat(members)
}

// Gzip.

#[test]
fn every_member_of_a_concatenated_gzip_file_is_read() {
    // `cat a.gz b.gz`: the details page's first launch in one member, the second in
    // the next.
    let text = std::fs::read_to_string(fixture("sgemm/det.csv")).unwrap();
    let second = text.find("\n\"1\",").unwrap() + 1;
    let mut joined = gzip(text[..second].as_bytes());
    joined.extend(gzip(text[second..].as_bytes()));
    let e = ncu::parse_bytes(Path::new("det.csv.gz"), &joined).unwrap();
    assert_eq!(e.records.len(), 2);
}

#[test]
fn a_gzip_bomb_is_refused_naming_the_limit_and_how_to_raise_it() {
    let options = ReadOptions {
        max_decompressed: Some(1 << 20),
        ..ReadOptions::default()
    };
    let err =
        ncu::parse_bytes_with(Path::new("bomb.csv.gz"), &bomb(8 << 20, 1), &options).unwrap_err();
    assert!(
        err.message.contains("more than 1 MiB")
            && err.message.contains("STALLSCOPE_MAX_DECOMPRESSED="),
        "{err}"
    );
}

#[test]
fn the_environment_variable_sets_the_decompressed_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.csv.gz");
    std::fs::write(&path, bomb(4 << 20, 1)).unwrap();
    let out = stallscope()
        .args(["report"])
        .arg(&path)
        .env("STALLSCOPE_MAX_DECOMPRESSED", "2MiB")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("more than 2 MiB"), "{err}");
}

#[test]
fn a_bomb_past_the_default_limit_is_refused() {
    // 2.5 GiB of text in 40 members of 64 MiB: refused at 2 GiB, without holding it.
    let err = ncu::parse_bytes(Path::new("bomb.csv.gz"), &bomb(64 << 20, 40)).unwrap_err();
    assert!(err.message.contains("more than 2 GiB"), "{err}");
}
