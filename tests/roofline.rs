//! The roofline model and ncu's estimates on the real bundled exports: two versions'
//! points computed by hand from their CSV cells, a version without its DRAM bytes left
//! off with its reason, and the estimates table of the flash-attention ladder.

mod common;

use common::profiles;
use stallscope::analysis::estimates::{self, Fate, Outcome, TimeSource};
use stallscope::analysis::roofline::{self, Level, Roof};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, Ladder, LoadReport, Store};
use std::io::Read;

fn ladder(name: &str) -> Ladder {
    model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join(name),
        &mut LoadReport::default(),
    )
    .unwrap()
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want.abs() * 1e-9,
        "{what}: got {got}, want {want}"
    );
}

/// Flash-attention v01 (naive), from profiles/flash-attention/v01/raw.csv.gz's launch
/// row and ladder.toml.
#[test]
fn flash_attention_v01_point_is_its_csv_cells() {
    let l = ladder("flash-attention");
    let r = roofline::ladder_roofline(&l);
    let v = &r.versions[l.version_index("v01").unwrap()];
    let p = v.point.as_ref().expect("v01 has a point");
    let flops = 34_359_738_368.0; // ladder.toml: flops
    let ns = 9_258_144.0; // gpu__time_duration.sum
    close(p.flop_per_s, flops / (ns * 1e-9), "FLOP/s");
    // dram__bytes_read.sum + dram__bytes_write.sum
    let dram = 50_739_456.0 + 17_267_200.0;
    let d = p.level(Level::Dram).unwrap();
    close(d.bytes.unwrap(), dram, "DRAM bytes");
    close(d.intensity.unwrap(), flops / dram, "DRAM intensity");
    // dram__bytes.sum.peak_sustained × dram__cycles_elapsed.avg.per_second
    let dram_bw = 1504.0 * 3_199_489_372.10;
    close(d.ceiling.as_ref().unwrap().value, dram_bw, "DRAM bandwidth");
    // lts__t_sectors.sum × 32
    let l2 = 94_635_051.0 * 32.0;
    let p2 = p.level(Level::L2).unwrap();
    close(p2.bytes.unwrap(), l2, "L2 bytes");
    // lts__t_sectors.avg.peak_sustained × 32 × (sum / avg → 94 slices) × lts clock
    assert_eq!((94_635_051.0f64 / 1_006_755.86).round(), 94.0);
    let l2_bw = 3.0 * 32.0 * 94.0 * 1_707_647_342.71;
    close(p2.ceiling.as_ref().unwrap().value, l2_bw, "L2 bandwidth");
    // derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second × duration
    let l1 = 8_273_319_701_227.37 * ns * 1e-9;
    let p1 = p.level(Level::L1).unwrap();
    close(p1.bytes.unwrap(), l1, "L1 bytes");
    // its .peak_sustained × l1tex__cycles_elapsed.avg.per_second
    let l1_bw = 16_896.0 * 1_970_271_045.75;
    close(p1.ceiling.as_ref().unwrap().value, l1_bw, "L1 bandwidth");
    // The lowest roof at its intensities: L1 (≈ 14.9 TFLOP/s), under L2 (≈ 175),
    // DRAM (≈ 2,430) and the ladder's 750.
    let n = p.nearer.unwrap();
    assert_eq!(n.roof, Roof::Memory(Level::L1));
    close(n.attainable, l1_bw * flops / l1, "attainable");
    close(
        n.share,
        (flops / (ns * 1e-9)) / (l1_bw * flops / l1),
        "share",
    );
}

/// GEMM v11, from profiles/gemm/v11/raw.csv.gz and its own `flops` in ladder.toml.
#[test]
fn gemm_v11_point_is_its_csv_cells() {
    let l = ladder("gemm");
    let r = roofline::ladder_roofline(&l);
    let p = r.versions[l.version_index("v11").unwrap()]
        .point
        .clone()
        .expect("v11 has a point");
    let flops = 137_438_953_472.0; // ladder.toml [[version]] v11: flops (4096³)
    let ns = 189_088.0; // gpu__time_duration.sum
    let achieved = flops / (ns * 1e-9);
    close(p.flop_per_s, achieved, "FLOP/s");
    let dram = 147_613_440.0 + 27_772_416.0; // dram__bytes_read.sum + _write.sum
    close(p.dram_intensity().unwrap(), flops / dram, "DRAM intensity");
    let l2 = 42_906_129.0 * 32.0; // lts__t_sectors.sum × 32
    close(
        p.level(Level::L2).unwrap().intensity.unwrap(),
        flops / l2,
        "L2",
    );
    // The ladder's 750 TFLOP/s is the lowest roof: DRAM allows 1504 × 3.199 GHz ×
    // 785 FLOP/B ≈ 3,780 TFLOP/s, L2 3 × 32 × 94 × 1.702 GHz × 100 ≈ 1,540.
    let n = p.nearer.unwrap();
    assert_eq!(n.roof, Roof::Compute);
    close(n.share, achieved / 750e12, "share of the ladder's ceiling");
    // The ceilings to draw are labelled with their sources.
    let sources: Vec<&str> = r.ceilings.iter().map(|c| c.source.as_str()).collect();
    assert!(sources[0].contains("peak_tflops"), "{sources:?}");
    assert!(
        sources.iter().any(|s| s.contains("H200 datasheet")),
        "{sources:?}"
    );
    assert!(
        sources
            .iter()
            .any(|s| s.starts_with("dram__bytes.sum.peak_sustained")),
        "{sources:?}"
    );
}

/// The step v09 → v10 of the GEMM ladder (both profiled on the H100): ratios of the two
/// points.
#[test]
fn a_step_is_the_ratio_of_its_points() {
    let l = ladder("gemm");
    let r = roofline::ladder_roofline(&l);
    let (a, b) = (
        l.version_index("v09").unwrap(),
        l.version_index("v10").unwrap(),
    );
    let s = r.step_to(b).expect("v10 has a parent");
    assert_eq!(s.parent, a);
    let (pa, pb) = (
        r.versions[a].point.as_ref().unwrap(),
        r.versions[b].point.as_ref().unwrap(),
    );
    assert_eq!(s.gpus, None);
    close(
        s.flops_x.unwrap(),
        pb.flop_per_s / pa.flop_per_s,
        "FLOP/s ×",
    );
    close(
        s.intensity_x.unwrap(),
        pb.dram_intensity().unwrap() / pa.dram_intensity().unwrap(),
        "intensity ×",
    );
    assert_eq!(s.after, pb.nearer);
}

/// The step v10 → v11 of the GEMM ladder crosses GPUs (v10 profiled on an H100, v11 on
/// an H200): the counts' ratio (intensity) stands, the FLOP/s ratio of two GPUs' clocks
/// does not, and the step names both GPUs.
#[test]
fn a_step_between_profiles_of_two_gpus_gives_no_flops_ratio() {
    let l = ladder("gemm");
    let r = roofline::ladder_roofline(&l);
    let (a, b) = (
        l.version_index("v10").unwrap(),
        l.version_index("v11").unwrap(),
    );
    let s = r.step_to(b).expect("v11 has a parent");
    assert_eq!(s.parent, a);
    let (pa, pb) = (
        r.versions[a].point.as_ref().unwrap(),
        r.versions[b].point.as_ref().unwrap(),
    );
    let (ga, gb) = s.gpus.clone().expect("two GPUs");
    assert!(ga.contains("H100") && gb.contains("H200"), "{ga} → {gb}");
    assert_eq!(s.flops_x, None);
    close(
        s.intensity_x.unwrap(),
        pb.dram_intensity().unwrap() / pa.dram_intensity().unwrap(),
        "intensity ×",
    );
    assert_eq!(s.after, pb.nearer);
    assert!(stallscope::report::roofline::flops_times(s).contains("H100"));
}

/// The sgemm toy's raw page without `dram__bytes_write.sum`: no point, and why.
#[test]
fn a_missing_dram_metric_gives_no_point_and_says_why() {
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(profiles().join("sgemm-toy/raw.csv.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let rows: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .records()
        .map(Result::unwrap)
        .collect();
    let gone = rows[0]
        .iter()
        .position(|n| n == "dram__bytes_write.sum")
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("raw.csv");
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_path(&path)
        .unwrap();
    for r in &rows {
        let kept: Vec<&str> = r
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != gone)
            .map(|(_, c)| c)
            .collect();
        w.write_record(kept).unwrap();
    }
    w.flush().unwrap();
    let loose =
        model::load_files(&[path], SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    let r = roofline::ladder_roofline(&loose);
    assert!(!r.versions.is_empty());
    for v in &r.versions {
        assert_eq!(v.point, None);
        let why = v.no_point.as_deref().unwrap();
        assert!(
            why.contains("FLOP count") || why.contains("dram__bytes_write.sum"),
            "{why}"
        );
    }
}

/// A loose export of a tensor-core kernel, no ladder FLOP count: ncu's tensor-op
/// counter gives its FLOP (flash-attention v29's `sm__ops_path_tensor_src_fp16.sum`,
/// 34,359,738,368: the ladder's own count).
#[test]
fn a_loose_export_counts_its_flops_with_ncu_counters() {
    let dir = profiles().join("flash-attention/v29");
    let files = vec![dir.join("raw.csv.gz")];
    let loose = model::load_files(&files, SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    let r = roofline::ladder_roofline(&loose);
    let p = r.versions[0].point.as_ref().expect("counted");
    close(p.flops, 34_359_738_368.0, "tensor ops");
    assert!(matches!(
        &p.flop_source,
        roofline::FlopSource::Counters(n) if n == &["sm__ops_path_tensor_src_fp16.sum".to_string()]
    ));
    // No ladder ceiling: the H200's datasheet fp16 rate is the compute roof.
    assert!(
        r.ceilings[0].label.contains("fp16 tensor"),
        "{:?}",
        r.ceilings
    );
}

#[test]
fn flash_attention_estimates_table() {
    let l = ladder("flash-attention");
    let t = estimates::estimates_table(&l);
    // Every version after v01 has a parent and a profile.
    assert!(t.steps.len() >= 28, "{} steps", t.steps.len());
    let gpu = |i: usize| {
        let p = l.versions[i].profile.as_ref().expect("profiled");
        roofline::device_name(p).expect("the profile names its GPU")
    };
    let (mut by_runs, mut by_durations, mut across_gpus) = (0, 0, 0);
    for s in &t.steps {
        // A step whose two versions were both run is timed by the runs; one whose
        // versions were profiled on one GPU but not both run, by the ncu durations; one
        // across two GPUs (v29's H200 profile, v30's H100 one) is not timed.
        let run = |i: usize| !l.versions[i].runs.is_empty();
        match &s.measured {
            Some(m) if run(s.parent) && run(s.child) => {
                assert!(matches!(m.source, TimeSource::Runs { .. }), "{s:?}");
                by_runs += 1;
            }
            Some(m) => {
                assert_eq!(m.source, TimeSource::NcuDurations, "{s:?}");
                assert_eq!(gpu(s.parent), gpu(s.child), "{s:?}");
                assert_eq!(s.gpus, None, "{s:?}");
                by_durations += 1;
            }
            None => {
                assert_ne!(gpu(s.parent), gpu(s.child), "{s:?}");
                assert_eq!(s.gpus, Some((gpu(s.parent), gpu(s.child))), "{s:?}");
                across_gpus += 1;
            }
        }
        for r in &s.resolved {
            assert!(r.estimate_pct > 0.0);
            match r.fate {
                Fate::Gone => assert_eq!(r.child_pct, None),
                Fate::Halved => assert!(r.child_pct.unwrap() < r.estimate_pct / 2.0),
            }
        }
        assert_eq!(s.outcome.is_some(), !s.resolved.is_empty());
    }
    let tally = &t.tally;
    assert_eq!(
        tally.judged,
        tally.delivered + tally.partly + tally.nothing,
        "{tally:?}"
    );
    assert!(tally.judged > 0);
    assert!(t.steps.iter().any(|s| s.outcome == Some(Outcome::Nothing)));
    // v02-v29 run on the H200, v30-v35 profiled on an H100 only.
    assert_eq!(by_runs, 28, "steps timed by runs");
    assert_eq!(by_durations, 5, "steps timed by ncu durations");
    assert_eq!(across_gpus, 1, "one step crosses GPUs");
}

/// The ladder's HTML page holds its roofline table (every version with a point, the
/// ceilings with their sources, the versions left off) and the estimates table with
/// its tally, in the words of `report --roofline` and `report --estimates`.
#[test]
fn the_html_page_shows_the_roofline_and_estimates_tables() {
    use stallscope::report::{self, Analysed, Format, escape, roofline as text};
    for name in ["flash-attention", "gemm"] {
        let l = ladder(name);
        let page = report::exporter(Format::Html)
            .timeline(&[Analysed::new(&l, stallscope::analysis::Shown::DEFAULT)]);
        let at = page
            .find("<h2>On the roofline, and what ncu promised</h2>")
            .unwrap_or_else(|| panic!("{name}: no roofline section"));
        let section = &page[at..];
        let section = &section[..section.find("</section>").unwrap()];
        let r = roofline::ladder_roofline(&l);
        let t = estimates::estimates_table(&l);
        let points = text::points_table(&r);
        assert!(
            points.rows.len() >= 10,
            "{name}: {} points",
            points.rows.len()
        );
        let tables = [text::ceilings_table(&r), points, text::estimates_rows(&t)];
        let plain = section.replace(" class=\"text\"", "");
        for table in &tables {
            for row in &table.rows {
                let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
                let tr = format!("<tr><td>{}</td></tr>", cells.join("</td><td>"));
                assert!(plain.contains(&tr), "{name}: {tr} not on the page");
            }
        }
        for (id, why) in text::left_off(&r) {
            let li = format!("<li>{}: {}</li>", escape(&id), escape(&why));
            assert!(section.contains(&li), "{name}: {li}");
        }
        let tally = escape(&text::tally_sentence(&t.tally));
        assert!(section.contains(&tally), "{name}: no tally");
        assert!(t.tally.judged > 0, "{name}: {:?}", t.tally);
    }
}

/// The ladder's Markdown report ends with its roofline and ncu's estimates tables.
#[test]
fn the_markdown_report_ends_with_the_roofline_and_estimates() {
    use stallscope::report::{self, Analysed, Format, roofline as text};
    for name in ["flash-attention", "gemm"] {
        let l = ladder(name);
        let md = report::exporter(Format::Markdown)
            .timeline(&[Analysed::new(&l, stallscope::analysis::Shown::DEFAULT)]);
        let r = roofline::ladder_roofline(&l);
        let t = estimates::estimates_table(&l);
        let want = text::report_sections(&r, &t);
        assert!(
            md.ends_with(&want),
            "{name}: report does not end with the sections"
        );
        assert!(want.contains(&text::points_table(&r).markdown()), "{name}");
        assert!(
            want.contains(&text::estimates_rows(&t).markdown()),
            "{name}"
        );
        assert!(want.contains(&text::tally_sentence(&t.tally)), "{name}");
    }
}
