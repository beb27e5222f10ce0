//! Golden tests on real Nsight Compute exports (ncu 2025.3.1, H200): every layout the
//! samples hold parses, and the analysis finds what the profiles say.

mod common;

use common::{fixture, profiles};
use stallscope::analysis::{self, MetricId};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::ncu::{self, Page, PageKind, StallReason, Value};

fn export(rel: &str) -> ncu::Export {
    ncu::read_file(&fixture(rel)).unwrap_or_else(|e| panic!("{e}"))
}

fn ladder_of(files: &[&str]) -> model::Ladder {
    let paths: Vec<_> = files.iter().map(|f| fixture(f)).collect();
    model::load_files(&paths, SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap()
}

#[test]
fn sgemm_trail_moves_from_global_loads_to_shared_loads() {
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("sgemm-toy"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let labels: Vec<_> = a.trail.iter().map(|s| s.label.clone().unwrap()).collect();
    assert_eq!(labels, ["lg_throttle @ LDG", "mio_throttle @ LDS"]);
    assert!(!a.trail[0].changed);
    assert!(a.trail[1].changed);
}

#[test]
fn the_same_trail_from_loose_files_in_any_page_order() {
    for files in [
        ["sgemm/det.csv", "sgemm/raw.csv", "sgemm/src_sass.csv"],
        ["sgemm/src_sass.csv", "sgemm/raw.csv", "sgemm/det.csv"],
    ] {
        let ladder = ladder_of(&files);
        assert_eq!(ladder.versions.len(), 2, "{files:?}");
        let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
        let labels: Vec<_> = a.trail.iter().map(|s| s.label.clone().unwrap()).collect();
        assert_eq!(
            labels,
            ["lg_throttle @ LDG", "mio_throttle @ LDS"],
            "{files:?}"
        );
    }
}

#[test]
fn cudnn_tensor_pipe_is_62_percent() {
    let ladder = ladder_of(&["h200/sdpa_cudnn_raw.csv", "h200/sdpa_cudnn_details.csv"]);
    assert_eq!(ladder.versions.len(), 1);
    let a = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT);
    let tc = a.get(MetricId::TensorPipe).unwrap();
    assert!((tc - 62.0).abs() <= 1.0, "tensor pipe {tc}");
    // Duration from the raw page (us) in ns.
    let d = a.get(MetricId::Duration).unwrap();
    assert!((d - 61_024.0).abs() < 1.0, "duration {d}");
    assert_eq!(a.get(MetricId::Registers), Some(168.0));
    // The wgmma kernel issues warpgroup MMAs.
    assert!(a.get(MetricId::TensorWgmma).unwrap() > 1.0);
}

#[test]
fn source_page_opcode_samples_add_up_to_the_total() {
    for rel in [
        "sgemm/src_sass.csv",
        "h200/sdpa_flash_source_sass.csv.gz",
        "sgemm/src_cs.csv",
    ] {
        let e = export(rel);
        assert_eq!(e.kind, PageKind::Source);
        for r in &e.records {
            let Page::Source(listing) = &r.page else {
                panic!("not a listing")
            };
            let ops = analysis::hot_ops(&listing.summary());
            let by_ops: u64 = ops.iter().map(|o| o.samples).sum();
            assert_eq!(u128::from(by_ops), listing.total_samples(), "{rel}");
            assert!(listing.total_samples() > 0);
            // Each line's reasons add up to its samples.
            for l in &listing.lines {
                let reasons: u64 = l.stalls.iter().map(|&n| n as u64).sum();
                assert_eq!(reasons, l.samples, "{rel} {:#x}", l.address);
            }
        }
    }
}

#[test]
fn repeated_source_blocks_are_kept_once() {
    // ncu printed each kernel's block twice.
    let e = export("sgemm/src_sass.csv");
    let names: Vec<_> = e
        .records
        .iter()
        .map(|r| model::short_kernel_name(&r.kernel))
        .collect();
    assert_eq!(names, ["mm_naive", "mm_tiled"]);
    let Page::Source(l) = &e.records[0].page else {
        panic!()
    };
    assert_eq!(l.lines.len(), 208);
    assert_eq!(l.total_samples(), 341_495);
}

#[test]
fn cuda_and_sass_listing_reads_both_source_columns() {
    let e = export("sgemm/src_cs.csv");
    assert_eq!(e.records.len(), 2);
    let Page::Source(l) = &e.records[0].page else {
        panic!()
    };
    assert_eq!(l.file.as_deref(), Some("/tmp/k.cu"));
    assert!(!l.cuda_lines.is_empty());
    assert!(l.cuda_lines[0].text.contains("mm_naive"));
    assert_eq!(&*l.lines[0].text, "LDC R1, c[0x0][0x28]");
    assert!(l.lines.iter().all(|x| x.cuda_line.is_some()));
    // Same instructions and samples as the SASS-only page.
    let sass = export("sgemm/src_sass.csv");
    let Page::Source(s) = &sass.records[0].page else {
        panic!()
    };
    assert_eq!(l.total_samples(), s.total_samples());
}

#[test]
fn predicated_instructions_get_their_opcode_class() {
    let e = export("sgemm/src_sass.csv");
    let Page::Source(l) = &e.records[0].page else {
        panic!()
    };
    let predicated: Vec<_> = l.lines.iter().filter(|x| x.text.starts_with('@')).collect();
    assert!(!predicated.is_empty());
    for x in predicated {
        assert!(
            !x.opcode.starts_with('@') && !x.opcode.is_empty(),
            "{}",
            x.text
        );
    }
}

#[test]
fn raw_page_with_prefixes_and_instance_values() {
    let plain = export("sgemm/raw.csv");
    let inst = export("sgemm/raw_inst.csv.gz");
    assert_eq!(plain.kind, PageKind::Raw);
    assert_eq!(inst.kind, PageKind::Raw);
    assert_eq!(plain.records.len(), 2);
    for (a, b) in plain.records.iter().zip(&inst.records) {
        let (Page::Raw(a), Page::Raw(b)) = (&a.page, &b.page) else {
            panic!()
        };
        for m in [
            "smsp__pcsamp_warps_issue_stalled_lg_throttle",
            "gpu__time_duration.sum",
            // Only present with a TPC.TriageCompute. prefix.
            "sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed",
        ] {
            let x = a.num(m);
            assert!(x.is_some(), "{m}");
            let y = b.num(m);
            let (x, y) = (x.unwrap(), y.unwrap());
            assert!((x - y).abs() <= 0.01 * x.abs().max(1.0), "{m}: {x} vs {y}");
        }
    }
    let Page::Raw(r) = &plain.records[0].page else {
        panic!()
    };
    assert_eq!(
        r.num("smsp__pcsamp_warps_issue_stalled_lg_throttle"),
        Some(128_075.0)
    );
    // ms in the file, ns inside.
    assert_eq!(r.num("gpu__time_duration.sum"), Some(2_743_968.0));
    // Non-numeric values are kept as text, never zero.
    assert!(
        matches!(r.get("launch__cluster_scheduling_policy"), Some(Value::Text(t)) if &*t == "PolicySpread")
    );
}

#[test]
fn details_in_auto_and_base_units_agree() {
    let auto = export("h200/sdpa_flash_details.csv");
    let base = export("h200/sdpa_flash_details_base.csv");
    let value = |e: &ncu::Export, section: &str, name: &str| {
        let Page::Metrics { metrics, .. } = &e.records[0].page else {
            panic!()
        };
        metrics
            .iter()
            .find(|m| &*m.section == section && &*m.name == name)
            .and_then(|m| m.value.num())
            .unwrap()
    };
    let sol = "GPU Speed Of Light Throughput";
    assert_eq!(value(&auto, sol, "Duration"), 110_720.0);
    assert_eq!(value(&base, sol, "Duration"), 110_848.0);
    let dyn_auto = value(
        &auto,
        "Launch Statistics",
        "Dynamic Shared Memory Per Block",
    );
    let dyn_base = value(
        &base,
        "Launch Statistics",
        "Dynamic Shared Memory Per Block",
    );
    assert!(
        (dyn_auto - dyn_base).abs() < 10.0,
        "{dyn_auto} vs {dyn_base}"
    );
    assert_eq!(dyn_base, 65_536.0);
    let f = value(&auto, sol, "SM Frequency");
    assert!((f - 1.74e9).abs() < 1e6);
}

#[test]
fn details_rules_carry_estimated_speedups() {
    let e = export("h200/sdpa_cudnn_details.csv");
    let Page::Metrics { rules, metrics } = &e.records[0].page else {
        panic!()
    };
    assert!(!metrics.is_empty());
    let rule = rules
        .iter()
        .find(|r| r.rule == "MemoryL2Compression")
        .unwrap();
    assert_eq!(rule.section, "MemoryWorkloadAnalysis_Chart");
    assert_eq!(rule.kind, "OPT");
    assert_eq!(rule.speedup_pct, Some(15.91));
    assert!(rules.iter().all(|r| !r.description.is_empty()));
}

#[test]
fn several_kernels_per_file_and_basic_set_without_stalls() {
    let ladder = ladder_of(&["h200/others_basic_details.csv", "h200/others_basic_raw.csv"]);
    assert_eq!(ladder.versions.len(), 8);
    for v in &ladder.versions {
        let p = v.profile.as_ref().unwrap();
        assert!(
            p.has_page(PageKind::Details) && p.has_page(PageKind::Raw),
            "{}",
            v.title
        );
        let a = analysis::analyse(&ladder, v, analysis::Shown::DEFAULT);
        // The basic set has no stall sampling: unknown, not zero.
        assert!(a.stalls.is_none());
        assert!(a.bottleneck.is_none());
        assert!(a.get(MetricId::Duration).is_some());
        assert!(a.get(MetricId::BankConflicts).is_none());
    }
    assert_eq!(
        ladder.versions[2].title,
        "nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA_NNT"
    );
}

#[test]
fn live_ncu_output_with_prof_lines_in_front() {
    let e = export("h200/probe_details.csv");
    assert_eq!(e.kind, PageKind::Details);
    assert_eq!(e.records.len(), 1);
    assert_eq!(e.records[0].kernel, "axpy");
    // The CSV header is line 7 of the file; the first kernel's rows start on line 8.
    assert_eq!(e.records[0].line, 8);
}

#[test]
fn summary_page_reads_averages_and_ranges() {
    let e = export("sgemm/summ.csv");
    assert_eq!(e.kind, PageKind::Summary);
    assert_eq!(e.records.len(), 2);
    let Page::Metrics { metrics, .. } = &e.records[0].page else {
        panic!()
    };
    let ipc = metrics
        .iter()
        .find(|m| &*m.name == "Executed Ipc Active")
        .unwrap();
    assert_eq!(ipc.value.num(), Some(1.76));
    assert_eq!(ipc.range, Some((1.76, 1.76)));
    assert_eq!(e.records[0].launch.invocations, Some(1));
}

#[test]
fn gzip_and_plain_read_the_same() {
    let plain = std::fs::read(fixture("sgemm/src_sass.csv")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &plain).unwrap();
    let gz = gz.finish().unwrap();
    let a = ncu::parse_bytes(std::path::Path::new("a.csv"), &plain).unwrap();
    let b = ncu::parse_bytes(std::path::Path::new("a.csv.gz"), &gz).unwrap();
    let (Page::Source(x), Page::Source(y)) = (&a.records[1].page, &b.records[1].page) else {
        panic!()
    };
    assert_eq!(x, y);
}

#[test]
fn fa2_waits_on_its_mma_and_spills() {
    let ladder = ladder_of(&[
        "h200/sdpa_flash_raw.csv",
        "h200/sdpa_flash_details.csv",
        "h200/sdpa_flash_source_sass.csv.gz",
    ]);
    assert_eq!(ladder.versions.len(), 1, "three pages of one launch merge");
    let a = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT);
    // The hottest cell of its own table: the tensor pipe busy at its MMAs (the overall
    // top reason, ncu's figure, is `wait`).
    let b = a.bottleneck.clone().unwrap();
    assert_eq!(b.to_string(), "math_pipe_throttle @ HMMA");
    assert_eq!(a.get(MetricId::Registers), Some(255.0));
    assert!(a.get(MetricId::Spills).unwrap() > 0.0);
}

#[test]
fn shares_fall_back_to_per_issue_ratios() {
    // Keep only the per-issue ratios of the raw page: a profile without PC sampling.
    let e = export("h200/sdpa_flash_raw.csv");
    let mut profile = model::merge_exports(vec![e]).remove(0);
    let raw = profile.raw.as_mut().unwrap();
    let pcsamp: Vec<usize> = (0..raw.schema.columns.len())
        .filter(|&i| raw.schema.columns[i].metric.contains("pcsamp"))
        .collect();
    assert!(!pcsamp.is_empty());
    for i in pcsamp {
        raw.clear(i);
    }
    let s = analysis::StallBreakdown::from_profile(&profile).unwrap();
    assert_eq!(s.source, analysis::StallSource::PerIssueRatios);
    assert_eq!(s.dominant(), Some(StallReason::Wait));
    let total: f64 = s.shares.iter().sum();
    assert!((total - 1.0).abs() < 1e-9);
}

#[test]
fn metrics_page_reads_raw_names_in_the_details_layout() {
    // `ncu --csv --metrics a,b,c` of a stallscope child, captured live on the H200.
    let e = export("h200/metrics_page.csv");
    assert_eq!(e.kind, PageKind::Metrics);
    let ladder = ladder_of(&["h200/metrics_page.csv"]);
    let a = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT);
    assert_eq!(a.get(MetricId::Duration), Some(281_568.0));
    assert_eq!(a.get(MetricId::TensorPipe), Some(18.95));
    assert_eq!(a.get(MetricId::Registers), Some(177.0));
    // One stall counter alone gives no breakdown (its share would be 100%).
    assert!(a.stalls.is_none());
    assert!(a.get(MetricId::BankConflicts).is_none());
}

/// "SM clock (ncu)" is ncu's own SM Frequency: the details page in base units and the
/// raw page of one report give it alike (`gpc__cycles_elapsed.avg.per_second`, 1.7282
/// GHz for FlashAttention-2's launch), not the SMs' own cycle rate (1.7287 GHz).
#[test]
fn the_sm_clock_is_ncus_sm_frequency() {
    let both = ladder_of(&[
        "h200/sdpa_flash_raw.csv",
        "h200/sdpa_flash_details_base.csv",
    ]);
    let p = both.versions[0].profile.as_ref().unwrap();
    let ncu_figure = p
        .detail_value("GPU Speed Of Light Throughput", "SM Frequency")
        .expect("the details page's SM Frequency");
    for ladder in [both.clone(), ladder_of(&["h200/sdpa_flash_raw.csv"])] {
        let clock = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT)
            .get(MetricId::SmClock)
            .unwrap();
        assert!(
            (clock - ncu_figure).abs() < 1e3,
            "SM clock {clock} Hz, ncu's SM Frequency {ncu_figure} Hz"
        );
    }
}
