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

// What is not an export, said in its own words.

fn error_of(name: &str) -> ncu::ParseError {
    ncu::read_file(&fixture(&format!("ncu-versions/{name}"))).unwrap_err()
}

#[test]
fn an_unknown_section_is_reported_with_what_to_do() {
    let err = error_of("ncu_unknown_section.log");
    assert!(
        err.message.contains("did not match any section")
            && err.message.contains("ncu --list-sections"),
        "{err}"
    );
}

#[test]
fn no_kernels_profiled_is_reported_at_its_line_with_what_to_do() {
    let err = error_of("ncu_no_kernels.log");
    assert_eq!(err.line, Some(5), "{err}");
    assert!(
        err.message.contains("No kernels were profiled") && err.message.contains("--kernel-name"),
        "{err}"
    );
}

#[test]
fn a_program_failing_under_ncu_is_reported_before_the_warning_that_follows() {
    let err = error_of("ncu_app_error.log");
    assert!(
        err.message.contains("returned an error code (1)")
            && err.message.contains("run it without ncu"),
        "{err}"
    );
}

#[test]
fn an_nsys_stats_csv_is_named_with_the_ncu_command_to_use() {
    let err = error_of("nsys_kern_sum.csv");
    assert!(
        err.message.contains("nsys stats")
            && err
                .message
                .contains("ncu --import report.ncu-rep --csv --page raw"),
        "{err}"
    );
}

#[test]
fn nvprof_output_is_named() {
    let err = error_of("nvprof_summary.csv");
    assert!(
        err.message.contains("nvprof's CSV") && err.message.contains("ncu --set full"),
        "{err}"
    );
}

#[test]
fn an_nvprof_metrics_table_is_named_by_its_header() {
    let err = error_of("nvprof_metrics.csv");
    assert!(err.message.contains("nvprof's CSV"), "{err}");
}

#[test]
fn a_visual_profiler_export_is_named() {
    let err = error_of("nvvp_details.csv");
    assert!(err.message.contains("Visual Profiler"), "{err}");
}

#[test]
fn a_command_line_profiler_log_is_named() {
    let err = error_of("cuda_profile_log.csv");
    assert!(err.message.contains("command-line profiler"), "{err}");
}

#[test]
fn each_message_is_one_line_naming_the_file() {
    for name in [
        "ncu_unknown_section.log",
        "ncu_no_kernels.log",
        "ncu_app_error.log",
        "nsys_kern_sum.csv",
        "nvprof_summary.csv",
        "nvvp_details.csv",
    ] {
        let shown = error_of(name).to_string();
        assert!(shown.contains(name) && !shown.contains('\n'), "{shown}");
    }
}
