//! Source pages known by their summaries: a ladder loads without reading its listings,
//! the analysis is the same as from the listings, a summary of other bytes is ignored,
//! `import` writes them, and a listing left unread is read when a view asks.

mod common;

use common::{fixture, profiles};
use stallscope::analysis::{self, VersionAnalysis};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, Ladder, LoadReport, Store, manifest::Manifest, source};
use std::path::{Path, PathBuf};

fn embedded(name: &str) -> Ladder {
    model::load_ladder(
        &Store::embedded(SizeLimits::DEFAULT),
        &Path::new("profiles").join(name),
        &mut LoadReport::default(),
    )
    .unwrap()
}

fn disk(dir: &Path) -> Ladder {
    model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        dir,
        &mut LoadReport::default(),
    )
    .unwrap()
}

/// A copy of a bundled ladder folder, without the summaries (and without the notes
/// and kernel sources its manifest names outside it).
fn copy_without_summaries(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(name);
    copy_dir(&profiles().join(name), &dir);
    let path = dir.join("ladder.toml");
    let mut m = Manifest::read(&path, SizeLimits::DEFAULT).unwrap().unwrap();
    for v in &mut m.versions {
        v.notes = None;
        v.source = None;
    }
    std::fs::write(&path, m.to_toml()).unwrap();
    (tmp, dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else if !e.file_name().to_string_lossy().ends_with(".summary.json") {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// What the analysis makes of each version, as text.
fn analysed(l: &Ladder) -> Vec<String> {
    let show = |a: &VersionAnalysis| {
        format!(
            "{:?} {:?} {:?}",
            a.stalls,
            a.hot_ops,
            a.bottleneck.as_ref().map(|b| b.to_string())
        )
    };
    analysis::analyse_ladder(l, analysis::Shown::DEFAULT)
        .versions
        .iter()
        .map(show)
        .collect()
}

fn source_pages(l: &Ladder) -> Vec<&model::SourcePage> {
    l.versions
        .iter()
        .filter_map(|v| v.profile.as_ref()?.source.as_ref())
        .collect()
}

#[test]
fn every_bundled_source_page_has_a_summary_of_its_bytes() {
    // Made by `cargo run --example source_summaries -- profiles/*/` when they are not.
    let mut missing = Vec::new();
    for ladder in ["flash-attention", "sgemm-toy"] {
        let dir = profiles().join(ladder);
        let m = Manifest::read(&dir.join("ladder.toml"), SizeLimits::DEFAULT)
            .unwrap()
            .unwrap();
        for f in m.versions.iter().flat_map(|v| &v.files) {
            let path = dir.join(f);
            let bytes = std::fs::read(&path).unwrap();
            let is_source = stallscope::ncu::parse_bytes(&path, &bytes).unwrap().kind
                == stallscope::ncu::PageKind::Source;
            let summary = std::fs::read(source::summary_path(&path)).unwrap_or_default();
            if is_source
                && source::unread_pages(&Store::disk(SizeLimits::DEFAULT), &path, &bytes, &summary)
                    .is_none()
            {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(missing.is_empty(), "no summary of: {missing:?}");
}

#[test]
fn the_bundled_ladder_loads_without_reading_a_listing() {
    let l = embedded("flash-attention");
    let pages = source_pages(&l);
    assert!(pages.len() >= 30 && pages.iter().all(|p| !p.rows_read()));
}

#[test]
fn the_analysis_from_the_summaries_is_the_one_from_the_listings() {
    // The bundled ladder from its summaries against a copy that has none (every
    // listing read): the same stall shares, hot instruction classes and bottlenecks.
    let (_tmp, dir) = copy_without_summaries("flash-attention");
    let read = disk(&dir);
    assert!(source_pages(&read).iter().all(|p| p.rows_read()));
    assert_eq!(analysed(&embedded("flash-attention")), analysed(&read));
}

/// A summary of the right bytes whose figures no page gives (every count 2^64 - 1: the
/// table's total overflowed and the analysis panicked) is ignored: the page is read.
#[test]
fn a_summary_with_impossible_figures_is_ignored() {
    let (_tmp, dir) = copy_without_summaries("sgemm-toy");
    let page = dir.join("src_sass.csv.gz");
    let bytes = std::fs::read(&page).unwrap();
    let e = stallscope::ncu::parse_bytes(&page, &bytes).unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_str(&source::summary_json(&bytes, &source::summaries(&e))).unwrap();
    for listing in doc["listings"].as_array_mut().unwrap() {
        for op in listing["opcodes"].as_array_mut().unwrap() {
            op["samples"] = u64::MAX.into();
            for (_, n) in op["stalls"].as_object_mut().unwrap() {
                *n = u64::MAX.into();
            }
        }
    }
    std::fs::write(source::summary_path(&page), doc.to_string()).unwrap();
    let l = disk(&dir);
    assert!(source_pages(&l).iter().all(|p| p.rows_read()));
    assert_eq!(analysed(&l), analysed(&embedded("sgemm-toy")));
}

#[test]
fn a_summary_of_other_bytes_is_ignored() {
    // The source page compressed anew: the same listing in other bytes, so the summary
    // beside it (of the old bytes) no longer describes it and the page is read.
    let (_tmp, dir) = copy_without_summaries("sgemm-toy");
    let page = dir.join("src_sass.csv.gz");
    let old = std::fs::read(&page).unwrap();
    std::fs::write(source::summary_path(&page), {
        let e = stallscope::ncu::parse_bytes(&page, &old).unwrap();
        source::summary_json(&old, &source::summaries(&e))
    })
    .unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&old[..]), &mut text).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    std::fs::write(&page, gz.finish().unwrap()).unwrap();
    let l = disk(&dir);
    assert!(source_pages(&l).iter().all(|p| p.rows_read()));
}

#[test]
fn import_writes_the_summary_and_the_next_load_leaves_the_listing_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let files = [
        fixture("sgemm/det.csv"),
        fixture("sgemm/raw.csv"),
        fixture("sgemm/src_sass.csv"),
    ];
    model::import::import(&model::import::Request {
        profiles: tmp.path(),
        ladder: Some("toy"),
        version: "v1",
        title: None,
        kernel: Some("mm_naive"),
        launch: None,
        baseline: false,
        files: &files,
        force: false,
        flops: None,
        peak_tflops: None,
        keep: &[],
        limits: SizeLimits::DEFAULT,
    })
    .unwrap();
    let l = disk(&tmp.path().join("toy"));
    let pages = source_pages(&l);
    assert_eq!(
        pages.iter().map(|p| p.rows_read()).collect::<Vec<_>>(),
        [false]
    );
}

#[test]
fn a_listing_left_unread_is_read_when_asked_for() {
    let l = embedded("sgemm-toy");
    let page = source_pages(&l)[0];
    let listing = page.listing().unwrap();
    assert_eq!(listing.summary(), page.summary);
}
