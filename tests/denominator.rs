//! One denominator for every stall share: a cell of the (reason × instruction) table and
//! its reason's total are both of all the source page's warp samples (`selected`
//! included), so no cell reads larger than its own reason; and the trail says the top
//! reason beside a label whose cell is of another reason.

mod common;

use common::profiles;
use stallscope::analysis;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, Ladder, LoadReport, Store};
use stallscope::ncu::StallReason;
use std::io::Read;

fn load(dir: &str) -> Ladder {
    model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join(dir),
        &mut LoadReport::default(),
    )
    .unwrap()
}

/// For every bundled flash-attention and GEMM version with a source page, each cell is
/// at most its reason's share as shown beside it, and that share is the breakdown's
/// where the breakdown is of the same samples.
#[test]
fn no_cell_exceeds_its_reasons_share() {
    let mut checked = 0;
    for dir in ["flash-attention", "gemm"] {
        let ladder = load(dir);
        for v in &ladder.versions {
            let a = analysis::analyse(&ladder, v, analysis::Shown::DEFAULT);
            let Some(m) = &a.matrix else { continue };
            assert!(m.samples >= m.stall_samples, "{dir} {}", v.id);
            for c in &m.cells {
                let total = a.reason_share(c.reason).unwrap();
                assert!(
                    c.share <= total + 1e-12,
                    "{dir} {}: {} {:.4} > {} {:.4}",
                    v.id,
                    c,
                    c.share,
                    c.reason,
                    total
                );
                assert!((c.share - c.samples as f64 / m.samples as f64).abs() < 1e-12);
            }
            if let Some(b) = &a.bottleneck {
                assert!(b.top.share <= a.top_reason().unwrap().1 + 1e-12);
            }
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} versions with a source page");
}

/// v12 of flash-attention, counted by hand from its source page's CSV: 8,952 warp
/// samples, 1,571 of them `barrier`, 1,485 `barrier` at `WARPGROUP` instructions; the
/// cell reads 16.6 % (it read 20.9 % of the 7,112 stall samples before), its reason
/// 17.5 %, and ncu's raw page gives the same 17.5 %.
#[test]
fn v12s_barrier_cell_is_counted_by_hand() {
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(profiles().join("flash-attention/v12/source.csv.gz")).unwrap(),
    )
    .read_to_string(&mut text)
    .unwrap();
    let mut rows = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
        .into_records()
        .map(Result::unwrap)
        .skip(1);
    let header = rows.next().unwrap();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (all, barrier, source) = (
        col("Warp Stall Sampling (All Samples)"),
        col("stall_barrier"),
        col("Source"),
    );
    let (mut samples, mut reason, mut cell) = (0u64, 0u64, 0u64);
    for r in rows.filter(|r| r.len() == header.len()) {
        let n = |i: usize| r[i].parse::<u64>().unwrap_or(0);
        samples += n(all);
        reason += n(barrier);
        let opcode = r[source]
            .split_whitespace()
            .find(|w| !w.starts_with('@'))
            .and_then(|w| w.split('.').next())
            .unwrap_or("");
        if opcode == "WARPGROUP" {
            cell += n(barrier);
        }
    }
    assert_eq!((samples, reason, cell), (8952, 1571, 1485));

    let ladder = load("flash-attention");
    let a = analysis::analyse(
        &ladder,
        ladder.version("v12").unwrap(),
        analysis::Shown::DEFAULT,
    );
    let m = a.matrix.as_ref().unwrap();
    assert_eq!(m.samples, samples);
    assert_eq!(m.count(StallReason::Barrier, "WARPGROUP"), cell);
    let b = a.bottleneck.as_ref().unwrap();
    assert_eq!(b.to_string(), "barrier @ WARPGROUP");
    assert!((b.top.share - cell as f64 / samples as f64).abs() < 1e-12);
    let total = a.reason_share(StallReason::Barrier).unwrap();
    assert!((total - reason as f64 / samples as f64).abs() < 1e-12);
    let raw = a.stalls.as_ref().unwrap().share(StallReason::Barrier);
    assert!((total - raw).abs() < 1e-9, "source {total} raw {raw}");
    // The label is a place; the top reason (wait) is another, and the trail says both.
    let (top, share) = a.top_reason().unwrap();
    assert_eq!(top, StallReason::Wait);
    assert!(share > b.top.share);
}

/// From v05 to v29 of flash-attention (all but v08 and v09, whose label is a `wait`
/// cell) the top reason is `wait` while the label names another reason's cell: the trail
/// step carries it and its share, and the explorer's trail text says both, in a step
/// short enough for an 80-column line.
#[test]
fn the_trail_says_the_top_reason_beside_a_label_of_another() {
    let ladder = load("flash-attention");
    let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
    let mut said = 0;
    for s in &a.trail {
        let v = &a.versions[s.index];
        let (top, share) = v.top_reason().unwrap();
        let label_reason = v.bottleneck.as_ref().unwrap().reason();
        match s.top_reason {
            Some(t) => {
                assert_ne!(t.reason, label_reason, "{}", s.id);
                assert_eq!((t.reason, t.share), (top, share), "{}", s.id);
                let text = stallscope::report::trail_label(s).unwrap();
                assert!(text.contains(" · top reason wait "), "{text}");
                assert!(
                    stallscope::text_width::width(&text) + 12 <= 80,
                    "{}: {text}",
                    s.id
                );
                said += 1;
            }
            None => assert_eq!(top, label_reason, "{}", s.id),
        }
    }
    assert!(said >= 20, "{said}");
    let v12 = a.trail.iter().find(|s| s.id == "v12").unwrap();
    assert_eq!(
        stallscope::report::trail_label(v12).unwrap(),
        "barrier @ WARPGROUP 16.6 % · top reason wait 23.0 %"
    );
}
