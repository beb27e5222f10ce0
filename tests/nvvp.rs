//! Visual Profiler (nvvp) GPU Details exports of GPUs before Ampere, read as a ladder.
//! The files in tests/fixtures/nvvp are real exports from github.com/sankarmanoj/thrust2D
//! (`1d/Reduce/Profiling Results/` and `1d/Transpose/Profiling Results/`; see SOURCE.md).

mod common;

use assert_cmd::Command;
use common::fixture;
use predicates::prelude::*;
use stallscope::ncu::{self, PageKind};

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

fn nvvp(name: &str) -> String {
    fixture(&format!("nvvp/{name}"))
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_gpu_details_export_reads_one_record_per_kernel_launch() {
    let e = ncu::read_file(&fixture("nvvp/cuda_reduce_profiling.csv")).unwrap();
    assert_eq!(e.kind, PageKind::NvvpDetails);
    assert_eq!(e.records.len(), 2);
    assert!(
        e.records
            .iter()
            .all(|r| r.kernel.starts_with("reduce_kernel"))
    );
    assert_eq!(e.warnings.len(), 1);
    assert!(
        e.warnings[0]
            .to_string()
            .contains("left out 2 memory-copy rows")
    );
}

#[test]
fn report_shows_legacy_reasons_and_a_launch_level_label() {
    stallscope()
        .args([
            "report",
            &nvvp("cuda_reduce_profiling.csv"),
            &nvvp("thrust_reduce_profiling.csv"),
        ])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("legacy_data_request (launch-level %)")
                .and(predicate::str::contains("launch %"))
                .and(predicate::str::contains("Achieved occupancy"))
                .and(predicate::str::contains("DRAM utilisation level"))
                .and(predicate::str::contains("no source page").not()),
        )
        .stderr(predicate::str::contains("memory-copy rows"));
}

#[test]
fn every_format_reads_a_ladder_of_exports() {
    for format in ["table", "markdown", "json", "csv", "html"] {
        stallscope()
            .args([
                "report",
                &nvvp("cuda_reduce_profiling.csv"),
                &nvvp("cuda_transpose_profiling.csv"),
            ])
            .args(["--format", format])
            .assert()
            .success()
            .stdout(predicate::str::contains("legacy_"));
    }
}

#[test]
fn compare_says_there_is_no_sass() {
    stallscope()
        .args([
            "compare",
            &nvvp("cuda_reduce_profiling.csv"),
            &nvvp("thrust_reduce_profiling.csv"),
        ])
        .args(["--launch-a", "0", "--launch-b", "0"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("holds no SASS listing")
                .and(predicate::str::contains("legacy_memory_throttle")),
        );
}

#[test]
fn the_trace_table_is_refused_with_what_to_export() {
    let err = ncu::read_file(&fixture("ncu-versions/nvvp_details.csv")).unwrap_err();
    assert!(err.message.contains("GPU Details"), "{err}");
    assert!(!err.message.contains("nsys"), "{err}");
}
