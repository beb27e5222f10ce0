//! Golden tests on real B200 (sm_100) exports: the catalogue reads each metric by the name
//! that architecture gives it, and a metric with no name there is unknown.
//!
//! The files are raw pages (`ncu --page raw --csv`, 475 columns) published in the GitHub
//! repository meinie0826/Roofline-Analysis, decodebench/results/ncu/, cut to one launch
//! each (header, units row and that launch's row kept as they were):
//! - b200/cudnn_sdpa_sm100.csv: torch_sdpa_auto__gqa_bf16_b64_ctx4k_p64.ncu.csv, ID 1,
//!   cuDNN's `cudnn_generated_fort_native_sdpa_sm100_flash_fprop_…` (tcgen05);
//! - b200/flash_fwd_mma_sync.csv: torch_sdpa_flash__gqa_bf16_b64_ctx4k_p64.ncu.csv, ID 1,
//!   FlashAttention-2's `flash_fwd_kernel` (mma.sync);
//! - b200/flashinfer_decode.csv: flashinfer_paged_decode__gqa_bf16_b1_ctx4k_p64.ncu.csv,
//!   ID 1, FlashInfer's `BatchDecodeWithPagedKVCacheKernel` (no tensor cores).
//!
//! The expected figures are the CSV cells read by hand.

mod common;

use common::fixture;
use stallscope::analysis::{self, Arch, METRICS, MetricId};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport};
use stallscope::ncu::StallReason;
use std::path::Path;

fn analysed(path: &Path) -> (model::Ladder, analysis::VersionAnalysis) {
    let ladder = model::load_files(
        &[path.to_path_buf()],
        SizeLimits::DEFAULT,
        &mut LoadReport::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(ladder.versions.len(), 1, "one launch");
    let a = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT);
    (ladder, a)
}

fn b200(name: &str) -> (model::Ladder, analysis::VersionAnalysis) {
    analysed(&fixture(&format!("b200/{name}")))
}

fn arch_of(ladder: &model::Ladder) -> Arch {
    Arch::of(ladder.versions[0].profile.as_ref().expect("a profile"))
}

#[test]
fn the_architecture_comes_from_the_export() {
    for f in [
        "cudnn_sdpa_sm100.csv",
        "flash_fwd_mma_sync.csv",
        "flashinfer_decode.csv",
    ] {
        let (ladder, _) = b200(f);
        assert_eq!(arch_of(&ladder), Arch::Blackwell, "{f}: CC 10.0");
    }
}

#[test]
fn cudnn_sm100_tensor_pipe_is_the_tcgen05_pipe() {
    let (_, a) = b200("cudnn_sdpa_sm100.csv");
    // sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_elapsed = 34.66, where
    // sm__pipe_tensor_cycles_active (its mma.sync sub-pipe alone there) reads 3.33.
    assert_eq!(a.get(MetricId::TensorPipe), Some(34.66));
    // sm__inst_executed_pipe_tensor_subpipe_hmma.avg.pct_of_peak_sustained_active.
    assert_eq!(a.get(MetricId::TensorMma), Some(1.74));
    // No wgmma on sm_100: unknown, whatever the file holds.
    assert_eq!(a.get(MetricId::TensorWgmma), None);
    assert_eq!(a.get(MetricId::Duration), Some(193_824.0));
    assert_eq!(a.get(MetricId::Registers), Some(168.0));
    assert_eq!(a.get(MetricId::TheoreticalOccupancy), Some(18.75));
}

#[test]
fn an_mma_sync_kernel_on_sm100_keeps_its_tensor_pipe() {
    // FlashAttention-2 on the B200: sm__pipe_tc_cycles_active 0 (no tcgen05),
    // sm__pipe_tensor_cycles_active 61.45: the tensor cores are busy through mma.sync.
    let (_, a) = b200("flash_fwd_mma_sync.csv");
    assert_eq!(a.get(MetricId::TensorPipe), Some(61.45));
    assert_eq!(a.get(MetricId::TensorMma), Some(69.62));
}

#[test]
fn a_kernel_without_tensor_cores_reads_zero_not_unknown() {
    let (_, a) = b200("flashinfer_decode.csv");
    assert_eq!(a.get(MetricId::TensorPipe), Some(0.0));
    assert_eq!(a.get(MetricId::Duration), Some(23_872.0));
}

#[test]
fn stalls_these_exports_do_not_hold_are_unknown() {
    // The decodebench exports collect no warp-state or PC-sampling metrics
    // (no smsp__pcsamp_warps_issue_stalled_* nor smsp__average_warps_issue_stalled_*):
    // the barrier and short-scoreboard figures are unknown, not zero.
    for f in [
        "cudnn_sdpa_sm100.csv",
        "flash_fwd_mma_sync.csv",
        "flashinfer_decode.csv",
    ] {
        let (_, a) = b200(f);
        assert!(a.stalls.is_none(), "{f}");
        for r in [StallReason::Barrier, StallReason::ShortScoreboard] {
            assert!(
                a.stalls.as_ref().map(|s| s.share(r)).is_none(),
                "{f}: {r:?}"
            );
        }
    }
}

#[test]
fn every_metric_read_on_sm100_names_a_column_or_is_known_to_be_uncollected() {
    // The metrics whose sm_100 names these files lack because the decodebench run did not
    // collect them (they are ncu's own section metrics on every architecture since
    // Volta), not because sm_100 names them otherwise.
    const NOT_COLLECTED: &[MetricId] = &[
        MetricId::SmClock,
        MetricId::SmThroughput,
        MetricId::IssueActive,
        MetricId::DramThroughput,
        MetricId::L2Throughput,
        MetricId::L1Throughput,
        MetricId::SharedPipe,
        MetricId::BankConflicts,
        MetricId::Occupancy,
        MetricId::Spills,
    ];
    let (ladder, _) = b200("cudnn_sdpa_sm100.csv");
    let p = ladder.versions[0].profile.as_ref().unwrap();
    let raw = p.raw.as_ref().unwrap();
    for def in METRICS {
        let names = def.raw_names(Arch::Blackwell);
        if names.is_empty() || NOT_COLLECTED.contains(&def.id) {
            continue;
        }
        for n in &names {
            assert!(
                !raw.schema.find(n).is_empty(),
                "{}: {n} is no column of a B200 export",
                def.key
            );
        }
    }
    // Hopper's names stay as they were.
    let tensor = MetricId::TensorPipe.def();
    assert_eq!(
        tensor.raw_names(Arch::Hopper),
        ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"]
    );
    assert!(
        MetricId::TensorWgmma
            .def()
            .raw_names(Arch::Blackwell)
            .is_empty()
    );
}

#[test]
fn the_architecture_from_the_metric_families_when_the_cc_column_is_blank() {
    // The same export with its CC cell and compute-capability attributes blanked: the
    // tcgen05 pipe's column alone says sm_100.
    let text = std::fs::read_to_string(fixture("b200/cudnn_sdpa_sm100.csv")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let header: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("\"ID\""))
        .unwrap()
        .split("\",\"")
        .collect();
    let blank: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| {
            let h = h.trim_matches('"');
            h == "CC" || h.starts_with("device__attribute_compute_capability")
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(blank.len(), 3);
    let last = lines.len() - 1;
    let cells: Vec<String> = lines[last]
        .split("\",\"")
        .enumerate()
        .map(|(i, c)| {
            if blank.contains(&i) {
                String::new()
            } else {
                c.to_string()
            }
        })
        .collect();
    lines[last] = cells.join("\",\"");
    let dir = std::env::temp_dir().join(format!("stallscope-b200-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("no_cc.csv");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let (ladder, a) = analysed(&path);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(ladder.versions[0].profile.as_ref().unwrap().launch.cc, None);
    assert_eq!(arch_of(&ladder), Arch::Blackwell);
    assert_eq!(a.get(MetricId::TensorPipe), Some(34.66));
}

#[test]
fn compute_capabilities_name_their_architecture() {
    assert_eq!(Arch::from_cc("9.0"), Some(Arch::Hopper));
    assert_eq!(Arch::from_cc("10.0"), Some(Arch::Blackwell));
    assert_eq!(Arch::from_cc("10.3"), Some(Arch::Blackwell));
    assert_eq!(Arch::from_cc("12.0"), Some(Arch::Sm120));
    assert_eq!(Arch::from_cc("8.9"), Some(Arch::Earlier));
    assert_eq!(Arch::from_cc(""), None);
}
