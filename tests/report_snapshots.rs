//! The timeline and comparison of the bundled SGEMM ladder, as a user reads them.

mod common;

use stallscope::analysis;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::report::{self, Analysed, CompareInput, Format};
use stallscope::text_width;

fn sgemm() -> model::Ladder {
    model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &common::profiles().join("sgemm-toy"),
        &mut LoadReport::default(),
    )
    .unwrap()
}

#[test]
fn sgemm_timeline_table() {
    let ladder = sgemm();
    let text = report::exporter(Format::Table)
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    insta::assert_snapshot!(text);
}

#[test]
fn sgemm_timeline_markdown() {
    let ladder = sgemm();
    let text = report::exporter(Format::Markdown)
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    insta::assert_snapshot!(text);
}

#[test]
fn sgemm_comparison_table() {
    let ladder = sgemm();
    let a = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT);
    let b = analysis::analyse(&ladder, &ladder.versions[1], analysis::Shown::DEFAULT);
    let (va, vb) = (&ladder.versions[0], &ladder.versions[1]);
    let c = analysis::compare(
        &a,
        &b,
        va.readable_listing().zip(vb.readable_listing()),
        None,
    );
    let text = report::exporter(Format::Table).compare(&CompareInput {
        a_name: "v1 naive".into(),
        b_name: "v2 tiled".into(),
        a: report::CompareSide::of(va, None),
        b: report::CompareSide::of(vb, None),
        comparison: &c,
        run_shape: None,
        other_shape: false,
        profiled_at: None,
        listing_error: None,
    });
    insta::assert_snapshot!(text);
}

fn flash_attention() -> model::Ladder {
    model::load_ladder(
        &Store::embedded(SizeLimits::DEFAULT),
        std::path::Path::new("profiles/flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap()
}

#[test]
fn on_an_80_column_terminal_every_line_of_the_timeline_fits() {
    let ladder = flash_attention();
    let text = report::table_exporter(Some(80))
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    let long: Vec<&str> = text.lines().filter(|l| text_width::width(l) > 80).collect();
    assert!(long.is_empty(), "{long:#?}");
}

/// Where a column per version does not fit (the bundled ladder's versions and baselines
/// at 80 or 120 columns), the versions are rows: one table per section of metrics, every
/// version heading a row of each, in the ladder's order. At 120 columns the report of 33
/// took ~1,050 lines (16 blocks of two version columns, each as wide as its longest cell);
/// as rows it takes under 15 lines a version.
#[test]
fn on_a_narrow_terminal_the_versions_are_rows() {
    let ladder = flash_attention();
    let ids: Vec<String> = report::display_order(&ladder)
        .into_iter()
        .map(|i| {
            let v = &ladder.versions[i];
            if v.baseline {
                format!("[{}]", v.id)
            } else {
                v.id.clone()
            }
        })
        .collect();
    for w in [80, 120] {
        let text = report::table_exporter(Some(w))
            .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
        assert!(text.contains("versions as rows"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let tables: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with("version "))
            .collect();
        assert!(tables.len() >= 6, "a table per section:\n{text}");
        for &t in &tables {
            let rows: Vec<&str> = lines[t + 2..t + 2 + ids.len()]
                .iter()
                .map(|l| l.split_whitespace().next().unwrap_or(""))
                .collect();
            assert_eq!(rows, ids, "under {:?}", lines[t]);
        }
        if w == 120 {
            assert!(
                lines.len() < 15 * ids.len(),
                "{} lines for {} versions:\n{text}",
                lines.len(),
                ids.len()
            );
        }
    }
}

/// A ladder whose versions fit as columns keeps that layout (sgemm-toy at 120).
#[test]
fn versions_that_fit_as_columns_stay_columns() {
    let ladder = sgemm();
    let text = report::table_exporter(Some(120))
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    assert!(!text.contains("versions as rows"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("metric ") && l.ends_with("v2")),
        "{text}"
    );
}

#[test]
fn sgemm_timeline_table_at_40_columns() {
    let ladder = sgemm();
    let text = report::table_exporter(Some(40))
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    insta::assert_snapshot!(text);
}

/// The flash-attention timeline on a 40-column terminal: its metric names are wider than
/// that beside one column of values, so they are cut on the right; no line of the table
/// is wider than the terminal (they reached 67 columns).
#[test]
fn flash_attention_tables_fit_40_columns() {
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &common::profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let text = report::table_exporter(Some(40))
        .timeline(&[Analysed::new(&ladder, analysis::Shown::DEFAULT)]);
    let widest = text
        .lines()
        .map(unicode_width::UnicodeWidthStr::width)
        .max()
        .unwrap();
    assert!(widest <= 40, "a line of {widest} columns:\n{text}");
}

/// Each share of the ceiling is of its own throughput: "% of ladder ceiling (ncu)" of TFLOPS
/// (ncu), "% of ladder ceiling (run)" of TFLOPS (run), on every version of the bundled ladder,
/// which has both; a row never takes one version's figure from the run and another's
/// from ncu.
#[test]
fn each_share_of_the_ceiling_is_of_its_own_throughput() {
    use analysis::MetricId::{PctOfCeiling, RunPctOfCeiling, RunTflops, Tflops};
    let ladder = flash_attention();
    let peak = ladder.peak_tflops.unwrap();
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let share = |t: Option<f64>| t.map(|t| 100.0 * t / peak);
    let mut checked = (0, 0);
    for (v, an) in ladder.versions.iter().zip(&a.versions) {
        assert_eq!(an.get(PctOfCeiling), share(an.get(Tflops)), "{}", v.id);
        assert_eq!(
            an.get(RunPctOfCeiling),
            share(an.get(RunTflops)),
            "{}",
            v.id
        );
        checked.0 += an.get(PctOfCeiling).is_some() as usize;
        checked.1 += an.get(RunPctOfCeiling).is_some() as usize;
    }
    assert!(checked.0 > 20 && checked.1 > 20, "{checked:?}");
}

/// Every run figure names the shape it was measured at, in every format that labels
/// rows: the table, Markdown, HTML and CSV (a `run_shape` column); `--shape` renames
/// them; ncu's rows name ncu, and at another shape than the profiles' the shape they
/// were profiled at.
#[test]
fn run_figures_name_their_shape_in_every_format() {
    let ladder = flash_attention();
    let shapes = ladder.measured_shapes();
    assert!(shapes.len() > 1);
    for shape in [shapes[0], shapes[1]] {
        let analysed = [Analysed::new(&ladder, analysis::Shown::at(shape))];
        let at = format!("TFLOPS (run at {shape})");
        for format in [Format::Table, Format::Markdown, Format::Html] {
            let text = report::exporter(format).timeline(&analysed);
            assert!(text.contains(&at), "{format:?}: no {at:?}");
            assert!(text.contains("% of ladder ceiling (run at "), "{format:?}");
            let ncu = if shape == shapes[0] {
                "% of ladder ceiling (ncu)".to_string()
            } else {
                format!("% of ladder ceiling (ncu at {})", shapes[0])
            };
            assert!(text.contains(&ncu), "{format:?}: no {ncu:?}");
            let said = format!("ncu rows: profiled at {}", shapes[0]);
            assert_eq!(
                text.contains(&said),
                shape != shapes[0] && format != Format::Html,
                "{format:?}: {said:?}"
            );
        }
        let csv = report::exporter(Format::Csv).timeline(&analysed);
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let header = reader.headers().unwrap().clone();
        let col = header.iter().position(|c| c == "run_shape").unwrap();
        let metric = header.iter().position(|c| c == "metric").unwrap();
        let mut runs = 0;
        for row in reader.records() {
            let row = row.unwrap();
            let expected = if row[metric].starts_with("run_") {
                runs += 1;
                shape.to_string()
            } else {
                String::new()
            };
            assert_eq!(&row[col], expected, "{row:?}");
        }
        assert!(runs > 0);
    }
}

/// A shown value or delta in the unit of its kind (µs, mJ, …): `-1,234.5` of
/// `-1,234.5 µs (0.50×)`, `1200000` of `1.20 s`; with the factor its unit is of that.
fn in_kinds_unit(text: &str) -> Option<(f64, f64)> {
    let factor = match text.split_whitespace().nth(1) {
        Some("s") => 1e6,
        Some("ms") => 1e3,
        Some("J") => 1e3,
        _ => 1.0,
    };
    shown_number(text).map(|x| (x * factor, factor))
}

/// A number of a shown value or delta: `-1,234.5` of `-1,234.5 µs (0.50×)`.
fn shown_number(text: &str) -> Option<f64> {
    let t: String = text
        .split_whitespace()
        .next()?
        .chars()
        .filter(|&c| c != ',')
        .collect();
    t.replace('−', "-").parse().ok()
}

/// Every delta of compare is the difference of the two values it shows, within the
/// delta's own last digit (`1664 → 1664 MHz` read "-1 MHz", `0.1 → 0.7 %` "+0.5 pt"):
/// every step of the bundled ladder, every metric but the sizes in KiB.
#[test]
fn every_delta_is_the_difference_of_the_values_shown() {
    use analysis::Kind;
    let ladder = flash_attention();
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let mut wrong = Vec::new();
    let mut checked = 0;
    for (i, w) in a.versions.windows(2).enumerate() {
        let c = analysis::compare(&w[0], &w[1], None, None);
        for m in &c.metrics {
            let d = m.id.def();
            if d.kind == Kind::Bytes {
                continue;
            }
            let (Some(x), Some(y)) = (m.a, m.b) else {
                continue;
            };
            let shown_a = in_kinds_unit(&report::format::value(d.kind, Some(x)))
                .unwrap()
                .0;
            let shown_b = in_kinds_unit(&report::format::value(d.kind, Some(y)))
                .unwrap()
                .0;
            let delta = report::format::delta(d.kind, m.a, m.b);
            let (said, factor) = in_kinds_unit(&delta).unwrap();
            let number = delta.split_whitespace().next().unwrap();
            let decimals = number.split_once('.').map_or(0, |(_, f)| f.len());
            let tolerance = (0.5 * 10f64.powi(-(decimals as i32)) + 1e-9) * factor;
            checked += 1;
            if (said - (shown_b - shown_a)).abs() > tolerance {
                wrong.push(format!(
                    "{} → {}: {}: {shown_a} → {shown_b} reads {delta}",
                    ladder.versions[i].id,
                    ladder.versions[i + 1].id,
                    d.name
                ));
            }
        }
    }
    assert!(checked > 500, "{checked}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// Every format of a comparison shows the sections the table shows: the page and the
/// Markdown each section's heading, the JSON each section's data.
#[test]
fn every_comparison_format_shows_the_tables_sections() {
    let ladder = sgemm();
    let a = analysis::analyse(&ladder, &ladder.versions[0], analysis::Shown::DEFAULT);
    let b = analysis::analyse(&ladder, &ladder.versions[1], analysis::Shown::DEFAULT);
    let (va, vb) = (&ladder.versions[0], &ladder.versions[1]);
    let c = analysis::compare(
        &a,
        &b,
        va.readable_listing().zip(vb.readable_listing()),
        None,
    );
    let input = CompareInput {
        a_name: "v1 naive".into(),
        b_name: "v2 tiled".into(),
        a: report::CompareSide::of(va, None),
        b: report::CompareSide::of(vb, None),
        comparison: &c,
        run_shape: None,
        other_shape: false,
        profiled_at: None,
        listing_error: None,
    };
    let doc = input.document();
    let headings: Vec<String> = doc
        .sections
        .iter()
        .filter_map(|s| s.heading.clone())
        .collect();
    assert_eq!(headings.len(), 4, "{headings:?}");
    let table = report::exporter(Format::Table).compare(&input);
    let markdown = report::exporter(Format::Markdown).compare(&input);
    let html = report::exporter(Format::Html).compare(&input);
    for h in &headings {
        assert!(table.contains(h.as_str()), "table lacks {h}");
        assert!(markdown.contains(h.as_str()), "Markdown lacks {h}");
        assert!(html.contains(&report::escape(h)), "page lacks {h}");
    }
    for text in [&table, &markdown, &html] {
        assert!(text.contains("Occupancy limited by"));
        assert!(text.contains("SASS: 208 → 136 instructions"));
    }
    let json: serde_json::Value =
        serde_json::from_str(&report::exporter(Format::Json).compare(&input)).unwrap();
    for key in [
        "metrics",
        "occupancy",
        "bottleneck",
        "stall_source",
        "stalls",
        "cells",
        "mix",
        "sass_diff",
    ] {
        assert!(!json[key].is_null(), "JSON lacks {key}");
    }
}
