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
    let c = analysis::compare(&a, &b, va.listing().zip(vb.listing()));
    let text = report::exporter(Format::Table).compare(&CompareInput {
        a_name: "v1 naive".into(),
        b_name: "v2 tiled".into(),
        comparison: &c,
    });
    insta::assert_snapshot!(text);
}
