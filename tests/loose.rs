//! Loose exports and folders of them, on real ncu exports: launches of different
//! kernels are never parent and child, pages of two ncu runs merge only with a
//! warning, and a folder is read as its files would be, what is not an export skipped
//! with a warning naming it.

mod common;

use assert_cmd::Command;
use common::fixture;
use predicates::prelude::*;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{LoadReport, load_files};

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

#[test]
fn launches_of_different_kernels_are_never_parent_and_child() {
    // A PyTorch script's details page: eight launches of five kernels.
    let mut report = LoadReport::default();
    let l = load_files(
        &[fixture("h200/others_basic_details.csv")],
        SizeLimits::DEFAULT,
        &mut report,
    )
    .unwrap();
    let kernels: Vec<String> = l
        .versions
        .iter()
        .map(|v| v.profile.as_ref().unwrap().kernel.clone())
        .collect();
    for i in 0..l.versions.len() {
        match l.parent_of(i) {
            Some(p) => {
                assert_eq!(kernels[p], kernels[i], "launch {} of {}", i + 1, kernels[i]);
                // The launch of its kernel just before it.
                assert!((p + 1..i).all(|j| kernels[j] != kernels[i]));
            }
            None => {
                assert!((0..i).all(|j| kernels[j] != kernels[i]), "{}", kernels[i]);
                if i > 0 {
                    assert!(
                        l.no_parent(i).contains("first launch of"),
                        "{}",
                        l.no_parent(i)
                    );
                }
            }
        }
    }
    // Two launches of one distribution kernel, then the GEMM (its parent no longer the
    // distribution launch before it), the softmax and elementwise kernels.
    assert_eq!(l.parent_of(1), Some(0));
    assert_eq!(l.parent_of(2), None);
    assert_eq!(l.parent_of(3), None);
}

#[test]
fn pages_of_two_ncu_runs_merge_only_with_a_warning() {
    // The raw page of process 633 and the details page of process 699.
    stallscope()
        .arg("report")
        .arg(fixture("h200/sdpa_cudnn_raw.csv"))
        .arg(fixture("h200/sdpa_cudnn_details.csv"))
        .assert()
        .success()
        .stderr(
            predicate::str::contains("pages of two ncu runs merged")
                .and(predicate::str::contains("process 633"))
                .and(predicate::str::contains("61.02 µs"))
                .and(predicate::str::contains("process 699"))
                .and(predicate::str::contains("60.38 µs")),
        );
    // Pages of one run say nothing of the kind.
    stallscope()
        .arg("report")
        .arg(fixture("sgemm/raw.csv"))
        .arg(fixture("sgemm/src_sass.csv"))
        .assert()
        .success()
        .stderr(predicate::str::contains("two ncu runs").not());
}

#[test]
fn the_bundled_profiles_hold_no_pages_of_two_runs() {
    stallscope()
        .arg("check")
        .env_remove("STALLSCOPE_PROFILES")
        .current_dir(std::env::temp_dir())
        .assert()
        .success()
        .stdout(predicate::str::contains("two ncu runs").not());
}

#[test]
fn a_folder_is_read_as_its_files_and_a_log_beside_them_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["sgemm/raw.csv", "sgemm/src_sass.csv"] {
        let from = fixture(f);
        std::fs::copy(&from, dir.path().join(from.file_name().unwrap())).unwrap();
    }
    std::fs::copy(
        fixture("ncu-versions/ncu_app_error.log"),
        dir.path().join("ncu.log"),
    )
    .unwrap();
    let folder = stallscope()
        .arg("open")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(
            predicate::str::contains("ncu.log")
                .and(predicate::str::contains("skipped, not an export")),
        );
    let files = stallscope()
        .arg(dir.path().join("raw.csv"))
        .arg(dir.path().join("src_sass.csv"))
        .assert()
        .success();
    // The same launches, merged alike (the heading names the files given).
    let body = |out: &[u8]| -> String {
        let s = String::from_utf8_lossy(out).into_owned();
        s.lines().skip(1).collect::<Vec<_>>().join("\n")
    };
    let (folder, files) = (folder.get_output(), files.get_output());
    assert_eq!(body(&folder.stdout), body(&files.stdout));
    assert!(String::from_utf8_lossy(&folder.stdout).contains("lg_throttle @ LDG"));
}

#[test]
fn kernel_keeps_the_launches_of_the_kernels_it_names() {
    let f = fixture("h200/others_basic_details.csv");
    // A part of the name: both elementwise kernels' five launches, the others left out.
    let out = stallscope()
        .arg("report")
        .arg(&f)
        .args(["--kernel", "vectorized_elementwise", "--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("softmax_kernel"), "{text}");
    let opts = |kernel: &str| stallscope::model::LooseOptions {
        kernel: Some(kernel.into()),
        flops: None,
    };
    let load = |o: &stallscope::model::LooseOptions| {
        stallscope::model::load_files_with(
            std::slice::from_ref(&f),
            SizeLimits::DEFAULT,
            o,
            &mut LoadReport::default(),
        )
    };
    let l = load(&opts("vectorized_elementwise")).unwrap();
    // Three launches of three instantiations (the full names differ), the short name
    // theirs alike.
    assert_eq!(l.versions.len(), 3);
    assert!(
        l.versions
            .iter()
            .all(|v| v.title == "vectorized_elementwise_kernel")
    );
    // ncu's regex: form, on the short name.
    let l = load(&opts("regex:^(softmax|unrolled)_")).unwrap();
    let names: Vec<&str> = l.versions.iter().map(|v| v.title.as_str()).collect();
    assert_eq!(names, ["softmax_kernel", "unrolled_elementwise_kernel"]);
    assert!(
        l.title.ends_with(", kernel regex:^(softmax|unrolled)_"),
        "{}",
        l.title
    );
}

#[test]
fn a_kernel_filter_that_matches_nothing_names_the_kernels_held() {
    stallscope()
        .arg("report")
        .arg(fixture("h200/others_basic_details.csv"))
        .args(["--kernel", "flash"])
        .assert()
        .failure()
        .stderr(
            predicate::str::contains("--kernel flash matches no kernel; the files hold:")
                .and(predicate::str::contains(
                    "distribution_elementwise_grid_stride_kernel (2 launches)",
                ))
                .and(predicate::str::contains("  softmax_kernel\n")),
        );
    stallscope()
        .arg("report")
        .arg(fixture("h200/others_basic_details.csv"))
        .args(["--kernel", "regex:("])
        .assert()
        .failure()
        .stderr(predicate::str::contains("not a regular expression"));
}

#[test]
fn kernel_picks_one_launch_of_each_file_for_compare() {
    let f = fixture("h200/others_basic_details.csv");
    // Eight launches each: without --kernel or --launch-a the pair is refused.
    stallscope()
        .arg("compare")
        .arg(&f)
        .arg(&f)
        .assert()
        .failure();
    stallscope()
        .arg("compare")
        .arg(&f)
        .arg(&f)
        .args(["--kernel", "softmax"])
        .assert()
        .success()
        .stdout(predicate::str::contains("softmax_kernel"));
}

#[test]
fn flops_fill_every_loose_versions_tflops() {
    let f = fixture("h200/others_basic_details.csv");
    let out = stallscope()
        .arg("report")
        .arg(&f)
        .args([
            "--kernel",
            "softmax",
            "--flops",
            "2*8*1024*1024",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // 16777216 FLOP in 16.83 µs: about 1.0 TFLOPS.
    let l = stallscope::model::load_files_with(
        std::slice::from_ref(&f),
        SizeLimits::DEFAULT,
        &stallscope::model::LooseOptions {
            kernel: Some("softmax".into()),
            flops: Some(16777216.0),
        },
        &mut LoadReport::default(),
    )
    .unwrap();
    assert_eq!(l.flops_of(&l.versions[0]), Some(16777216.0));
    assert!(text.contains("tflops"), "{text}");
    stallscope()
        .arg("report")
        .arg(&f)
        .args(["--flops", "2*n"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("a FLOP count is a number"));
}

#[test]
fn loose_options_are_refused_without_export_files() {
    stallscope()
        .args(["report", "--kernel", "softmax"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--kernel applies to export files given as paths",
        ));
    stallscope()
        .args(["compare", "v1", "--flops", "10"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--flops applies to export files"));
}
