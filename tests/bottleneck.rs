//! The bottleneck label and the trail on real profiles: the label is the hottest cell of
//! the version's own (stall reason × opcode) table, near-ties and moves follow the noise
//! rule, steps are judged against the version each was built on, and no label stands
//! without a source page or on too few samples.

mod common;

use common::{fixture, profiles};
use stallscope::analysis::{
    self, NoLabel, StallMatrix, StallSource, StepVerdict, TrailStep, hot_ops, noise,
};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, Ladder, LoadReport, Store};
use stallscope::ncu::{Page, SourceListing, StallReason};
use std::collections::HashMap;

fn flash() -> Ladder {
    model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap()
}

fn step<'a>(trail: &'a [TrailStep], id: &str) -> &'a TrailStep {
    trail.iter().find(|s| s.id == id).unwrap()
}

fn version(ladder: &Ladder, id: &str) -> analysis::VersionAnalysis {
    analysis::analyse(
        ladder,
        ladder.version(id).unwrap(),
        analysis::Shown::DEFAULT,
    )
}

/// The hottest (reason, opcode) cell of a listing, counted straight from its lines.
fn hottest_cell(s: &SourceListing) -> (StallReason, String, u64) {
    let mut cells: HashMap<(StallReason, &str), u64> = HashMap::new();
    for l in &s.lines {
        for &r in StallReason::ALL.iter().filter(|r| r.is_stall()) {
            *cells.entry((r, &l.opcode)).or_default() += l.stall(r) as u64;
        }
    }
    let ((r, op), n) = cells
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .unwrap();
    (r, op.to_string(), n)
}

#[test]
fn every_label_is_the_hottest_cell_of_its_own_table() {
    let mut checked = 0;
    for dir in ["flash-attention", "sgemm-toy"] {
        let ladder = model::load_ladder(
            &Store::disk(SizeLimits::DEFAULT),
            &profiles().join(dir),
            &mut LoadReport::default(),
        )
        .unwrap();
        for v in &ladder.versions {
            let Some(listing) = v.readable_listing() else {
                continue;
            };
            let a = analysis::analyse(&ladder, v, analysis::Shown::DEFAULT);
            let b = a.bottleneck.unwrap();
            let (reason, opcode, samples) = hottest_cell(listing);
            assert_eq!(
                (b.reason(), b.opcode(), b.top.samples),
                (reason, opcode.as_str(), samples),
                "{dir} {}",
                v.id
            );
            checked += 1;
        }
    }
    assert_eq!(
        checked, 38,
        "35 flash-attention versions and FlashAttention-2 with source pages, 2 sgemm"
    );
}

#[test]
fn every_sample_of_the_bundled_listings_falls_in_a_cell() {
    // A line's stall reasons add up to its "All Samples": none is left out of the table
    // (ncu 2025.3 names no warpgroup_arrive column, yet counts those samples).
    let ladder = flash();
    let mut outside = Vec::new();
    for v in &ladder.versions {
        for l in v.readable_listing().map_or(&[][..], |s| &s.lines) {
            let named: u64 = l.stalls.iter().map(|&n| u64::from(n)).sum();
            if named != l.samples {
                outside.push(format!(
                    "{} {:#x}: {named} of {}",
                    v.id, l.address, l.samples
                ));
            }
        }
    }
    assert!(outside.is_empty(), "{outside:?}");
}

#[test]
fn v13_is_a_near_tie() {
    let b = version(&flash(), "v13").bottleneck.unwrap();
    let r = b.runner_up.as_ref().unwrap();
    let shown = (
        b.to_string(),
        format!("{:.1}", b.top.share * 100.0),
        r.to_string(),
        format!("{:.1}", r.share * 100.0),
        b.near_tie,
    );
    assert_eq!(
        shown,
        (
            "barrier @ WARPGROUP".to_string(),
            "11.4".to_string(),
            "long_scoreboard @ BRA".to_string(),
            "11.3".to_string(),
            true
        )
    );
}

#[test]
fn v11s_runner_up_is_the_warpgroup_arrive_samples_at_hgmma() {
    // 669 samples the source page names no column for (the raw page's
    // smsp__pcsamp_warps_issue_stalled_warpgroup_arrive), all on HGMMA lines.
    let b = version(&flash(), "v11").bottleneck.unwrap();
    let r = b.runner_up.unwrap();
    assert_eq!(
        (
            r.to_string(),
            r.samples,
            format!("{:.1}", b.top.share * 100.0)
        ),
        (
            "warpgroup_arrive @ HGMMA".to_string(),
            669,
            "14.0".to_string()
        )
    );
}

#[test]
fn v14_moved_clearly_from_v13() {
    let ladder = flash();
    let trail = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT).trail;
    let s = step(&trail, "v14");
    assert_eq!(
        (s.label.as_deref(), s.verdict, s.z.unwrap() > 10.0),
        (Some("long_scoreboard @ BRA"), StepVerdict::Moved, true)
    );
}

#[test]
fn a_changed_cell_within_noise_is_no_move() {
    // v14, then v13 as loose exports: v13's top cell (barrier @ WARPGROUP) differs from
    // v14's (long_scoreboard @ BRA) but leads it in v13's samples by 11.4 % to 11.3 % (of all its warp samples).
    let dir = profiles().join("flash-attention");
    let files: Vec<_> = ["v14", "v13"]
        .iter()
        .flat_map(|v| ["raw.csv.gz", "source.csv.gz"].map(|f| dir.join(v).join(f)))
        .collect();
    let ladder =
        model::load_files(&files, SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    let trail = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT).trail;
    assert_eq!(
        (trail[1].verdict, trail[1].changed),
        (StepVerdict::WithinNoise, false)
    );
}

#[test]
fn v17_is_judged_against_v15_the_version_it_was_built_on() {
    let ladder = flash();
    let trail = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT).trail;
    let s = step(&trail, "v17");
    assert_eq!((s.parent.as_deref(), s.branch), (Some("v15"), true));
}

#[test]
fn a_profile_without_source_page_gets_a_reason_only_label() {
    // cuDNN's kernel: raw and details pages, no source page: the raw page's top stall
    // reason alone, its lead weighed in the launch's PC samples.
    let a = version(&flash(), "cudnn");
    let b = a.bottleneck.as_ref().expect("a reason-only label");
    assert!(b.is_reason_only(), "{b}");
    assert_eq!(b.label(), "barrier (reason only)");
    assert!(b.top.samples > 0 && b.z.is_some_and(|z| z > 2.0), "{b:?}");
    assert_eq!(a.no_label, None);
}

#[test]
fn a_label_without_source_page_says_how_to_export_one() {
    assert!(
        NoLabel::NoSourcePage
            .explain()
            .contains("--page source --print-source sass")
    );
}

#[test]
fn too_few_samples_give_no_label() {
    // The epilogue of the SGEMM toy's naive kernel, its last 14 instructions (the store,
    // the exit and the padding): a real listing holding few samples.
    let e = stallscope::ncu::read_file(&fixture("sgemm/src_sass.csv")).unwrap();
    let Page::Source(listing) = &e.records[0].page else {
        panic!("a source page")
    };
    let mut tail = listing.clone();
    tail.lines.drain(..tail.lines.len() - 14);
    let m = StallMatrix::from_ops(&hot_ops(&tail.summary()));
    assert!(
        m.stall_samples < noise::MIN_SAMPLES,
        "{} samples",
        m.stall_samples
    );
    assert_eq!(
        m.bottleneck().err(),
        Some(NoLabel::TooFewSamples(m.stall_samples))
    );
}

#[test]
fn a_launch_without_pc_samples_says_its_shares_are_per_issue_ratios() {
    // FlashAttention-2's raw page with every PC-sampling counter read as 0, as ncu
    // writes them for launches too short to be sampled.
    let path = fixture("h200/sdpa_flash_raw.csv");
    let mut rows: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(&path)
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect();
    let names = rows[0].clone();
    for row in rows.iter_mut().skip(2) {
        *row = row
            .iter()
            .zip(names.iter())
            .map(|(v, n)| if n.contains("pcsamp") { "0" } else { v })
            .collect();
    }
    let dir = tempfile::tempdir().unwrap();
    let zeroed = dir.path().join("raw.csv");
    let mut w = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Always)
        .from_path(&zeroed)
        .unwrap();
    for r in &rows {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
    let ladder =
        model::load_files(&[zeroed], SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    let s = version(&ladder, "1").stalls.unwrap();
    assert_eq!(
        (s.source, s.samples),
        (StallSource::PerIssueRatios, Some(0))
    );
}

#[test]
fn the_fa2_baseline_reads_the_hottest_cell_not_the_top_reason() {
    let a = version(&flash(), "fa2");
    let (top_reason, _) = a.top_reason().unwrap();
    assert_eq!(
        (top_reason, a.bottleneck.unwrap().to_string()),
        (StallReason::Wait, "math_pipe_throttle @ HMMA".to_string())
    );
}

#[test]
fn every_reason_and_opcode_class_of_the_real_profiles_has_a_meaning() {
    use stallscope::analysis::catalogue::{opcode_help, stall_help};
    let mut listings: Vec<SourceListing> = Vec::new();
    let ladders = model::load_ladders(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles(),
        &mut LoadReport::default(),
    )
    .unwrap();
    for l in &ladders {
        listings.extend(
            l.versions
                .iter()
                .filter_map(|v| v.readable_listing().cloned()),
        );
    }
    // The source pages of the shared ncu samples (copied into tests/fixtures).
    for rel in [
        "sgemm/src_sass.csv",
        "sgemm/src_cs.csv",
        "h200/sdpa_flash_source_sass.csv.gz",
    ] {
        for r in stallscope::ncu::read_file(&fixture(rel)).unwrap().records {
            if let Page::Source(s) = r.page {
                listings.push(s);
            }
        }
    }
    let mut missing: Vec<String> = Vec::new();
    for s in &listings {
        for l in &s.lines {
            if opcode_help(&l.opcode).is_none() {
                missing.push(l.opcode.to_string());
            }
            for &r in StallReason::ALL.iter().filter(|&&r| l.stall(r) > 0) {
                if stall_help(r).is_empty() {
                    missing.push(r.to_string());
                }
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "no glossary entry for {missing:?}");
}

#[test]
fn a_parent_that_is_not_a_version_of_the_ladder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("ladder.toml"),
        "title = 't'\n[[version]]\nid = 'v1'\ntitle = 'a'\n[[version]]\nid = 'v2'\ntitle = 'b'\nparent = 'v9'\n",
    )
    .unwrap();
    let e = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        dir.path(),
        &mut LoadReport::default(),
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("version v2: parent \"v9\" is not an earlier version"),
        "{e:#}"
    );
}

/// A profiles folder holding one ladder `l` with this manifest.
fn ladder_folder(manifest: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("l")).unwrap();
    std::fs::write(dir.path().join("l/ladder.toml"), manifest).unwrap();
    dir
}

#[test]
fn a_version_built_on_itself_is_refused_by_report_and_check_alike() {
    let dir = ladder_folder(
        "title = 't'\n[[version]]\nid = 'v1'\ntitle = 'a'\n[[version]]\nid = 'v2'\ntitle = 'b'\nparent = 'v2'\n",
    );
    let said = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("stallscope")
            .unwrap()
            .args(args)
            .arg("--profiles")
            .arg(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        let line = text
            .lines()
            .find_map(|l| l.find("version v2: parent").map(|at| l[at..].to_string()));
        (out.status.success(), line)
    };
    let expected = Some(
        "version v2: parent \"v2\" is not an earlier version of this ladder (a version is built on one listed before it)"
            .to_string(),
    );
    assert_eq!(
        (said(&["check"]), said(&["report", "--ladder", "l"])),
        ((false, expected.clone()), (false, expected))
    );
}

#[test]
fn a_cycle_of_parents_is_refused() {
    // v1 built on v2, v2 (by default) on v1.
    let dir = ladder_folder(
        "title = 't'\n[[version]]\nid = 'v1'\ntitle = 'a'\nparent = 'v2'\n[[version]]\nid = 'v2'\ntitle = 'b'\n",
    );
    let e = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &dir.path().join("l"),
        &mut LoadReport::default(),
    )
    .unwrap_err();
    assert!(
        format!("{e:#}").contains("version v1: parent \"v2\" is not an earlier version"),
        "{e:#}"
    );
}

/// The JSON trail of `report` on loose files in a folder: the SGEMM toy's source page
/// (two kernels), `again.csv` the same with its kernels renamed (two more launches), and
/// `few.csv`, the last 14 instructions of its first kernel (95 samples: too few for a
/// label), in the order `names` gives.
fn loose_trail(names: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("sgemm/src_sass.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let end = (2..lines.len())
        .find(|&i| lines[i].starts_with("\"Kernel Name\""))
        .unwrap();
    let few = [&lines[..2], &lines[end - 14..end]].concat().join("\n");
    std::fs::write(dir.path().join("few.csv"), few + "\n").unwrap();
    std::fs::write(dir.path().join("src_sass.csv"), &text).unwrap();
    let again = text.replace("\"Kernel Name\",\"mm_", "\"Kernel Name\",\"again_mm_");
    std::fs::write(dir.path().join("again.csv"), again).unwrap();
    let out = assert_cmd::Command::cargo_bin("stallscope")
        .unwrap()
        .current_dir(dir.path())
        .args(["report", "--format", "json"])
        .args(names)
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["ladders"][0]["trail"].as_array().unwrap().clone()
}

fn parent_fields(step: &serde_json::Value) -> (String, String, String) {
    let f = |k: &str| step[k].to_string();
    (f("parent"), f("compared_with"), f("verdict"))
}

#[test]
fn a_step_after_an_unlabelled_start_names_its_real_parent() {
    // Version 1 has too few samples; version 2 was built on it, and is the trail's start.
    let trail = loose_trail(&["few.csv", "src_sass.csv"]);
    assert_eq!(
        parent_fields(&trail[1]),
        ("\"1\"".into(), "null".into(), "\"start\"".into())
    );
}

#[test]
fn a_step_judged_past_an_unlabelled_parent_names_the_version_it_was_compared_with() {
    // Versions 1 and 2 (naive, tiled: one file, two kernels, so 2 has no parent), 3 the
    // naive kernel with too few samples (built on 1), 4 and 5 the two kernels renamed, in
    // another file: 4 was built on 3, its label compared with 3's parent, 1 (the same
    // cells: no move).
    let trail = loose_trail(&["src_sass.csv", "few.csv", "again.csv"]);
    assert_eq!(
        parent_fields(&trail[3]),
        ("\"3\"".into(), "\"1\"".into(), "\"same\"".into())
    );
}
