//! A corpus of damaged exports (tests/fixtures/broken, built from real ones by
//! make.py): each gets a one-line error naming the file and, where there is one, the
//! line; none panics.

mod common;

use common::fixture;
use stallscope::ncu;

/// File, expected line, and a part of the expected message.
const CORPUS: &[(&str, Option<u64>, &str)] = &[
    ("empty.csv", None, "the file is empty"),
    ("blank.csv", None, "the file is empty"),
    ("not_ncu.csv", None, "no ncu CSV found"),
    ("binary.ncu-rep", None, "binary file, not an ncu CSV export"),
    (
        "truncated_raw.csv",
        Some(3),
        "row is shorter than its header",
    ),
    ("header_only_raw.csv", None, "holds no kernel launches"),
    ("names_only_raw.csv", None, "the row of units is missing"),
    (
        "long_row_details.csv",
        Some(5),
        "row is longer than its header",
    ),
    ("short_row_details.csv", Some(7), "row is too short"),
    ("swapped_locale_details.csv", Some(2), "swaps '.' and ','"),
    ("source_no_header.csv", Some(51), "ends before its header"),
    (
        "source_short_row.csv",
        Some(10),
        "row is shorter than its header",
    ),
    ("damaged.csv.gz", None, "gzip data is damaged"),
];

#[test]
fn every_broken_file_gets_its_error() {
    for &(name, line, message) in CORPUS {
        let path = fixture(&format!("broken/{name}"));
        let err = ncu::read_file(&path).expect_err(name);
        assert_eq!(err.line, line, "{name}: {err}");
        assert!(err.message.contains(message), "{name}: {err}");
        let shown = err.to_string();
        assert!(shown.starts_with(&path.display().to_string()), "{shown}");
        assert!(!shown.contains('\n'), "one line: {shown}");
        if let Some(l) = line {
            assert!(shown.contains(&format!(":{l}: ")), "{shown}");
        }
    }
}

#[test]
fn the_corpus_covers_every_file_on_disk() {
    let mut on_disk: Vec<String> = std::fs::read_dir(fixture("broken"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "make.py")
        .collect();
    on_disk.sort();
    let mut listed: Vec<String> = CORPUS.iter().map(|c| c.0.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
}

#[test]
fn truncating_a_real_export_anywhere_never_panics() {
    for rel in [
        "sgemm/det.csv",
        "sgemm/src_sass.csv",
        "h200/probe_details.csv",
    ] {
        let bytes = std::fs::read(fixture(rel)).unwrap();
        let step = (bytes.len() / 97).max(1);
        for cut in (0..bytes.len()).step_by(step) {
            // Errors are fine; a panic fails the test.
            let _ = ncu::parse_bytes(std::path::Path::new(rel), &bytes[..cut]);
        }
    }
}
