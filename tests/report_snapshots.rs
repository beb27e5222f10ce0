//! The timeline and comparison of the bundled SGEMM ladder, as a user reads them.

mod common;

use stallscope::analysis;
use stallscope::model::{self, LoadReport, Store};
use stallscope::report::{self, Analysed, CompareInput, Format};

fn sgemm() -> model::Ladder {
    model::load_ladder(
        &Store::Disk,
        &common::profiles().join("sgemm-toy"),
        &mut LoadReport::default(),
    )
    .unwrap()
}

#[test]
fn sgemm_timeline_table() {
    let ladder = sgemm();
    let text = report::exporter(Format::Table).timeline(&[Analysed::new(&ladder)]);
    insta::assert_snapshot!(text);
}

#[test]
fn sgemm_timeline_markdown() {
    let ladder = sgemm();
    let text = report::exporter(Format::Markdown).timeline(&[Analysed::new(&ladder)]);
    insta::assert_snapshot!(text);
}

#[test]
fn sgemm_comparison_table() {
    let ladder = sgemm();
    let a = analysis::analyse(&ladder, &ladder.versions[0]);
    let b = analysis::analyse(&ladder, &ladder.versions[1]);
    let (va, vb) = (&ladder.versions[0], &ladder.versions[1]);
    let c = analysis::compare(&a, &b, va.readable_listing().zip(vb.readable_listing()));
    let text = report::exporter(Format::Table).compare(&CompareInput {
        a_name: "v1 naive".into(),
        b_name: "v2 tiled".into(),
        a: report::CompareSide::of(va, None),
        b: report::CompareSide::of(vb, None),
        comparison: &c,
        run_shape: None,
        other_shape: false,
        listing_error: None,
        speed: None,
    });
    insta::assert_snapshot!(text);
}

fn flash_attention() -> model::Ladder {
    model::load_ladder(
        &Store::Embedded,
        std::path::Path::new("profiles/flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap()
}

#[test]
fn on_an_80_column_terminal_every_line_of_the_timeline_fits() {
    let ladder = flash_attention();
    let text = report::table_exporter(Some(80)).timeline(&[Analysed::new(&ladder)]);
    let long: Vec<&str> = text
        .lines()
        .filter(|l| report::format::width(l) > 80)
        .collect();
    assert!(long.is_empty(), "{long:#?}");
}

/// Where a column per version does not fit (33 versions at 80 or 120 columns), the
/// versions are rows: one table per section of metrics, every version heading a row of
/// each, in the ladder's order. At 120 columns the report took ~1,050 lines (16 blocks
/// of two version columns, each as wide as its longest cell); it now takes under 500.
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
        let text = report::table_exporter(Some(w)).timeline(&[Analysed::new(&ladder)]);
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
            assert!(lines.len() < 500, "{} lines:\n{text}", lines.len());
        }
    }
}

/// A ladder whose versions fit as columns keeps that layout (sgemm-toy at 120).
#[test]
fn versions_that_fit_as_columns_stay_columns() {
    let ladder = sgemm();
    let text = report::table_exporter(Some(120)).timeline(&[Analysed::new(&ladder)]);
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
    let text = report::table_exporter(Some(40)).timeline(&[Analysed::new(&ladder)]);
    insta::assert_snapshot!(text);
}

/// The flash-attention timeline on a 40-column terminal: its metric names are wider than
/// that beside one column of values, so they are cut on the right; no line of the table
/// is wider than the terminal (they reached 67 columns).
#[test]
fn flash_attention_tables_fit_40_columns() {
    let ladder = model::load_ladder(
        &Store::Disk,
        &common::profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let text = report::table_exporter(Some(40)).timeline(&[Analysed::new(&ladder)]);
    let widest = text
        .lines()
        .map(unicode_width::UnicodeWidthStr::width)
        .max()
        .unwrap();
    assert!(widest <= 40, "a line of {widest} columns:\n{text}");
}
