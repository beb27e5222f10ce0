//! What users have: exports of every ncu version (older section and metric names, the
//! names kernels are written with), and the pages of one launch read as one profile.
//! Fixtures under tests/fixtures/ncu-versions reproduce each layout; the real exports
//! of tests/fixtures/h200 and tests/fixtures/sgemm check the same on ncu's own output.

mod common;

use stallscope::files::limits::SizeLimits;
use stallscope::model::short_kernel_name;

// Kernel names as ncu writes them.

#[test]
fn an_unbalanced_anonymous_namespace_keeps_the_kernel_name() {
    assert_eq!(
        short_kernel_name(
            "void unnamed>::gemm_tiled_kernel<32>(const float *, const float *, float *, int)"
        ),
        "gemm_tiled_kernel"
    );
}

#[test]
fn a_balanced_anonymous_namespace_keeps_the_kernel_name() {
    assert_eq!(
        short_kernel_name("void (anonymous namespace)::reduce<float>(float *, int)"),
        "reduce"
    );
}

#[test]
fn a_return_type_other_than_void_is_not_the_name() {
    assert_eq!(
        short_kernel_name(
            "enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, float, false, true, false, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>, float>>(T13)"
        ),
        "kernel"
    );
}

#[test]
fn numba_names_drop_their_abi_tag_and_array_types() {
    assert_eq!(
        short_kernel_name(
            "cudapy::__main__::copy_blocked[abi:v1,cw51cXTLSUwv1sCUt9Ww0FEw09RRQPKiLTj0gIGIFp_2b2oLQFEYYkHSQB1OQAk0Bynm21OiQ1Q_3d_3d](Array<float, 2, C, mutable, aligned>, Array<float, 2, C, mutable, aligned>)"
        ),
        "copy_blocked"
    );
}

#[test]
fn a_lambda_in_the_template_arguments_is_skipped() {
    assert_eq!(
        short_kernel_name(
            "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::AddFunctor<float>>(at::TensorIteratorBase &, const T1 &)::{lambda(int)#1}>(int, T3)"
        ),
        "elementwise_kernel"
    );
}

#[test]
fn a_lambda_with_a_return_type_arrow_is_skipped() {
    assert_eq!(
        short_kernel_name(
            "void cub::detail::for_each::static_kernel<Policy, int, lambda [](int)->void>(T2, T3)"
        ),
        "static_kernel"
    );
}

#[test]
fn a_kernel_that_is_a_lambda_is_named_by_it() {
    assert_eq!(
        short_kernel_name("main::{lambda(int)#1}"),
        "{lambda(int)#1}"
    );
}

#[test]
fn an_operator_keeps_its_symbol() {
    assert_eq!(
        short_kernel_name("void Apply<float>::operator()(float *, int) const"),
        "operator()"
    );
    assert_eq!(short_kernel_name("Stream::operator<<(int)"), "operator<<");
}

#[test]
fn plain_names_stay_as_they_are() {
    assert_eq!(
        short_kernel_name("triton_poi_fused_add_0"),
        "triton_poi_fused_add_0"
    );
    assert_eq!(
        short_kernel_name("mm_naive(const float *, int)"),
        "mm_naive"
    );
}

// Section and metric names of older ncu versions, and every alias of the catalogue.

use common::fixture;
use stallscope::analysis::catalogue::Src;
use stallscope::analysis::{self, Arch, METRICS, MetricId};
use stallscope::model::{self, LoadReport};

fn ladder_of(files: &[&str]) -> model::Ladder {
    let paths: Vec<_> = files.iter().map(|f| fixture(f)).collect();
    model::load_files(&paths, SizeLimits::DEFAULT, &mut LoadReport::default())
        .unwrap_or_else(|e| panic!("{e:#}"))
}

/// The catalogue's values of a ladder's first version.
fn values(ladder: &model::Ladder) -> analysis::VersionAnalysis {
    analysis::analyse(ladder, &ladder.versions[0], analysis::Shown::DEFAULT)
}

/// The metrics whose value differs from the one expected (`None`: absent).
fn mismatches(
    a: &analysis::VersionAnalysis,
    expected: &[(MetricId, f64)],
) -> Vec<(MetricId, Option<f64>, f64)> {
    expected
        .iter()
        .filter(|(id, want)| {
            a.get(*id)
                .is_none_or(|got| (got - want).abs() > 1e-9 * want.abs().max(1.0))
        })
        .map(|&(id, want)| (id, a.get(id), want))
        .collect()
}

#[test]
fn ncu_2020_1_speed_of_light_names_are_read_with_their_values() {
    let ladder = ladder_of(&["ncu-versions/ncu2020.1_details.csv"]);
    let wrong = mismatches(
        &values(&ladder),
        &[
            (MetricId::Duration, 41_824.0),
            (MetricId::SmThroughput, 18.60),
            (MetricId::DramThroughput, 71.43),
            (MetricId::L2Throughput, 35.20),
            (MetricId::L1Throughput, 22.75),
            (MetricId::Occupancy, 86.12),
            (MetricId::TheoreticalOccupancy, 100.0),
            (MetricId::Registers, 16.0),
            (MetricId::SharedPerBlock, 0.0),
        ],
    );
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn ncu_2020_1_exports_without_launch_columns_give_one_version_per_launch() {
    let ladder = ladder_of(&["ncu-versions/ncu2020.1_details.csv"]);
    let titles: Vec<&str> = ladder.versions.iter().map(|v| v.title.as_str()).collect();
    assert_eq!(titles, ["saxpy", "transpose"]);
}

#[test]
fn ncu_2020_3_speed_of_light_names_are_read_with_their_values() {
    let ladder = ladder_of(&["ncu-versions/ncu2020.3_details.csv"]);
    let wrong = mismatches(
        &values(&ladder),
        &[
            (MetricId::Duration, 641_930.0),
            (MetricId::SmThroughput, 2.96),
            (MetricId::DramThroughput, 33.58),
            (MetricId::L2Throughput, 11.02),
            (MetricId::L1Throughput, 27.15),
        ],
    );
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn ncu_2022_speed_of_light_names_are_read_with_their_values() {
    let ladder = ladder_of(&["ncu-versions/ncu2022_details.csv"]);
    let wrong = mismatches(
        &values(&ladder),
        &[
            (MetricId::Duration, 183_720.0),
            (MetricId::SmThroughput, 1.97),
            (MetricId::DramThroughput, 0.11),
            (MetricId::L2Throughput, 14.25),
            (MetricId::L1Throughput, 79.64),
        ],
    );
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// ncu up to 2020.3 writes the SM clock under "GPU Speed Of Light", in cycle/second
/// (2020.1) or cycle/nsecond (2020.3).
#[test]
fn the_sm_clock_of_old_details_pages_is_read() {
    for (file, hz) in [
        ("ncu-versions/ncu2020.1_details.csv", 1.37e9),
        ("ncu-versions/ncu2020.3_details.csv", 1.41e9),
    ] {
        let ladder = ladder_of(&[file]);
        let read = values(&ladder).get(MetricId::SmClock);
        assert!(
            read.is_some_and(|v| (v - hz).abs() < 1.0),
            "{file}: {read:?}"
        );
    }
}

#[test]
fn dram_throughput_of_current_metrics_output_is_read() {
    let ladder = ladder_of(&["ncu-versions/metrics_dram.csv"]);
    assert_eq!(values(&ladder).get(MetricId::DramThroughput), Some(41.06));
}

#[test]
fn the_kernel_time_column_of_an_old_raw_page_is_not_a_metric() {
    let e = stallscope::ncu::read_file(&fixture("ncu-versions/ncu2020_raw.csv")).unwrap();
    let stallscope::ncu::Page::Raw(raw) = &e.records[0].page else {
        panic!("a raw page")
    };
    let names: Vec<&str> = raw.schema.columns.iter().map(|c| &*c.name).collect();
    assert_eq!(
        names,
        [
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__time_duration.sum",
            "sm__throughput.avg.pct_of_peak_sustained_elapsed"
        ]
    );
}

#[test]
fn ncu_2021_source_page_sample_columns_are_read() {
    let e = stallscope::ncu::read_file(&fixture("ncu-versions/ncu2021_source.csv")).unwrap();
    let stallscope::ncu::Page::Source(listing) = &e.records[0].page else {
        panic!("a source page")
    };
    let samples: Vec<u64> = listing.lines.iter().map(|l| l.samples).collect();
    assert_eq!(samples, [3, 5, 41, 1]);
}

/// A page holding one metric under one name: a raw page, `--metrics` output or a details
/// page, as ncu writes them.
fn page_with(src: &Src, unit: &str, value: &str) -> String {
    let q = |cells: &[&str]| {
        cells
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let id = [
        "0",
        "7",
        "app",
        "127.0.0.1",
        "k(int)",
        "1",
        "7",
        "(128, 1, 1)",
        "(64, 1, 1)",
        "0",
        cc_of(src),
    ];
    let id_names = [
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "Device",
        "CC",
    ];
    let long = |section: &str, name: &str| {
        let mut header = id_names.to_vec();
        header.extend(["Section Name", "Metric Name", "Metric Unit", "Metric Value"]);
        let mut row = id.to_vec();
        row.extend([section, name, unit, value]);
        format!("{}\n{}\n", q(&header), q(&row))
    };
    match *src {
        Src::Raw(name) | Src::RawOn(_, name) | Src::RawMax(_, &[name, ..]) => {
            let mut header = id_names.to_vec();
            header.push(name);
            let mut units = vec![""; id_names.len()];
            units.push(unit);
            let mut row = id.to_vec();
            row.push(value);
            format!("{}\n{}\n{}\n", q(&header), q(&units), q(&row))
        }
        Src::Detail(section, name) => long(section, name),
        Src::RawMax(_, []) => unreachable!("a largest of no metrics"),
    }
}

/// A compute capability of an architecture the source is read on.
fn cc_of(src: &Src) -> &'static str {
    match src {
        Src::RawOn(archs, _) | Src::RawMax(archs, _) => match archs[0] {
            Arch::Earlier => "8.0",
            Arch::Hopper | Arch::Unknown => "9.0",
            Arch::Blackwell => "10.0",
            Arch::Sm120 => "12.0",
        },
        Src::Raw(_) | Src::Detail(..) => "9.0",
    }
}

/// Reads a page written to a temporary file, as a user's loose export.
fn value_through(page: &str, id: MetricId) -> Option<f64> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("page.csv");
    std::fs::write(&path, page).unwrap();
    let ladder =
        model::load_files(&[path], SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    values(&ladder).get(id)
}

#[test]
fn every_catalogue_alias_reads_its_metric() {
    let mut unread = Vec::new();
    for def in METRICS {
        let (unit, value, want) = match def.kind {
            analysis::Kind::Time => ("nsecond", "12,345", 12_345.0),
            analysis::Kind::Bytes => ("byte", "4,096", 4_096.0),
            analysis::Kind::Count => ("", "37", 37.0),
            // Stored in Hz.
            analysis::Kind::Frequency => ("cycle/second", "1,370,000,000", 1.37e9),
            _ => ("%", "42.50", 42.5),
        };
        for src in def.sources {
            let mut pages = vec![page_with(src, unit, value)];
            if let Src::Raw(name) = src {
                // The same name as `--metrics` output writes it.
                pages.push(page_with(
                    &Src::Detail("Command line profiler metrics", name),
                    unit,
                    value,
                ));
            }
            for page in pages {
                if value_through(&page, def.id) != Some(want) {
                    unread.push(format!("{} via {src:?}", def.key));
                }
            }
        }
    }
    assert!(unread.is_empty(), "aliases not read: {unread:#?}");
}

// Every page of one launch becomes one profile.

use stallscope::ncu::PageKind;

fn page_kinds(ladder: &model::Ladder) -> Vec<Vec<PageKind>> {
    ladder
        .versions
        .iter()
        .map(|v| {
            v.profile
                .as_ref()
                .unwrap()
                .pages
                .iter()
                .map(|(k, _)| *k)
                .collect()
        })
        .collect()
}

#[test]
fn details_metrics_and_single_section_pages_of_one_report_merge() {
    let ladder = ladder_of(&[
        "sgemm/det.csv",
        "ncu-versions/sgemm_metrics.csv",
        "ncu-versions/sgemm_speed_of_light.csv",
    ]);
    assert_eq!(
        page_kinds(&ladder),
        [
            [PageKind::Details, PageKind::Metrics, PageKind::Details],
            [PageKind::Details, PageKind::Metrics, PageKind::Details],
        ]
    );
}

#[test]
fn a_merged_metric_is_listed_once() {
    let ladder = ladder_of(&["sgemm/det.csv", "ncu-versions/sgemm_speed_of_light.csv"]);
    let p = ladder.versions[0].profile.as_ref().unwrap();
    let durations = p.details.iter().filter(|m| &*m.name == "Duration").count();
    assert_eq!(durations, 1);
}

#[test]
fn the_raw_page_exported_twice_merges() {
    // raw_inst is the same report's raw page with --print-metric-instances values.
    let ladder = ladder_of(&["sgemm/raw.csv", "sgemm/raw_inst.csv.gz"]);
    assert_eq!(
        page_kinds(&ladder),
        [
            [PageKind::Raw, PageKind::Raw],
            [PageKind::Raw, PageKind::Raw]
        ]
    );
}

#[test]
fn the_summary_of_kernels_launched_once_merges_with_their_launches() {
    let ladder = ladder_of(&["sgemm/det.csv", "sgemm/summ.csv"]);
    assert_eq!(
        page_kinds(&ladder),
        [
            [PageKind::Details, PageKind::Summary],
            [PageKind::Details, PageKind::Summary]
        ]
    );
}

#[test]
fn sass_and_cuda_sass_source_pages_of_one_report_merge() {
    let ladder = ladder_of(&["sgemm/src_sass.csv", "sgemm/src_cs.csv"]);
    let cuda_lines: Vec<bool> = ladder
        .versions
        .iter()
        .map(|v| {
            !v.profile
                .as_ref()
                .unwrap()
                .source
                .as_ref()
                .unwrap()
                .listing()
                .unwrap()
                .cuda_lines
                .is_empty()
        })
        .collect();
    assert_eq!(cuda_lines, [true, true]);
}

#[test]
fn details_of_two_runs_of_one_kernel_stay_two_profiles() {
    // Two ncu runs (processes 475 and 565) of the same FlashAttention-2 launch.
    let ladder = ladder_of(&[
        "h200/sdpa_flash_details_base.csv",
        "h200/sdpa_flash_details.csv",
    ]);
    assert_eq!(ladder.versions.len(), 2);
}

#[test]
fn every_page_of_the_real_sgemm_report_merges_into_its_launch() {
    let ladder = ladder_of(&[
        "sgemm/det.csv",
        "sgemm/raw.csv",
        "sgemm/raw_inst.csv.gz",
        "sgemm/summ.csv",
        "sgemm/src_sass.csv",
        "sgemm/src_cs.csv",
    ]);
    let one_launch = [
        PageKind::Details,
        PageKind::Raw,
        PageKind::Raw,
        PageKind::Summary,
        PageKind::Source,
        PageKind::Source,
    ];
    assert_eq!(page_kinds(&ladder), [one_launch, one_launch]);
}

#[test]
fn pages_of_the_real_flash_report_merge_and_another_run_stands_apart() {
    let ladder = ladder_of(&[
        "h200/sdpa_flash_raw.csv",
        "h200/sdpa_flash_details.csv",
        "h200/sdpa_flash_details_base.csv",
        "h200/sdpa_flash_source_sass.csv.gz",
    ]);
    // Raw and base-unit details are one report (process 475); the source page joins
    // them; the auto-unit details are another run (process 565).
    let files: Vec<Vec<String>> = ladder
        .versions
        .iter()
        .map(|v| {
            let pages = &v.profile.as_ref().unwrap().pages;
            pages
                .iter()
                .map(|(_, f)| f.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    assert_eq!(
        files,
        [
            vec![
                "sdpa_flash_raw.csv",
                "sdpa_flash_details_base.csv",
                "sdpa_flash_source_sass.csv.gz"
            ],
            vec!["sdpa_flash_details.csv"]
        ]
    );
}

#[test]
fn the_json_report_lists_each_version_s_pages() {
    use stallscope::report::{self, Analysed, Format};
    let ladder = ladder_of(&["sgemm/det.csv", "sgemm/raw.csv"]);
    let json = report::exporter(Format::Json)
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let pages: Vec<(String, String)> = v["ladders"][0]["versions"][0]["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let file = p["file"].as_str().unwrap();
            let name = std::path::Path::new(file).file_name().unwrap();
            (
                p["kind"].as_str().unwrap().to_string(),
                name.to_string_lossy().into_owned(),
            )
        })
        .collect();
    assert_eq!(
        pages,
        [
            ("details".into(), "det.csv".into()),
            ("raw".into(), "raw.csv".into())
        ]
    );
}

// The catalogue's aliases on real exports: every name of a metric gives its value.

/// A source's value in a profile.
fn read(p: &model::Profile, src: &Src) -> Option<f64> {
    match *src {
        Src::Raw(name) | Src::RawOn(_, name) => p.raw_value(name),
        Src::RawMax(_, names) => names
            .iter()
            .filter_map(|n| p.raw_value(n))
            .max_by(f64::total_cmp),
        Src::Detail(section, name) => p.detail_value(section, name),
    }
}

#[test]
fn every_alias_found_in_a_real_report_agrees_with_the_first_choice() {
    // Pages of one report each (one process): the details page rounds what the raw
    // page holds (2 decimals, 3 digits of a time).
    let reports: &[&[&str]] = &[
        &["sgemm/raw.csv", "sgemm/det.csv"],
        &[
            "h200/sdpa_flash_raw.csv",
            "h200/sdpa_flash_details_base.csv",
        ],
        &["h200/others_basic_raw.csv", "h200/others_basic_details.csv"],
    ];
    let mut disagree = Vec::new();
    let mut compared = 0;
    for files in reports {
        let ladder = ladder_of(files);
        for v in &ladder.versions {
            let p = v.profile.as_ref().unwrap();
            for def in METRICS {
                let found: Vec<(&Src, f64)> = def
                    .sources_on(Arch::of(p))
                    .filter_map(|s| read(p, s).map(|x| (s, x)))
                    .collect();
                let Some(&(_, first)) = found.first() else {
                    continue;
                };
                for &(src, x) in &found[1..] {
                    compared += 1;
                    if (x - first).abs() > 0.01 + 0.005 * first.abs() {
                        disagree.push(format!(
                            "{} {}: {src:?} {x} against {first}",
                            v.title, def.key
                        ));
                    }
                }
            }
        }
    }
    assert!(compared > 0);
    assert!(disagree.is_empty(), "{disagree:#?}");
}
