//! Real exports from tests/fixtures, mutated (bytes flipped, rows cut or repeated,
//! cells replaced, the file cut short, gzipped or not), end in an export or a clean
//! error from `ncu::parse_bytes`: one line naming the file, never a panic. The cases
//! are bounded so that the suite stays fast; fuzz/ runs the same parser for hours.

mod common;

use proptest::prelude::*;
use stallscope::ncu;
use std::io::Write;
use std::path::Path;
use std::sync::OnceLock;

/// One export of each page kind, cut to its first rows so that a case parses quickly.
const FIXTURES: &[(&str, usize)] = &[
    ("sgemm/det.csv", 80),
    ("sgemm/summ.csv", 40),
    ("sgemm/raw.csv", 4),
    ("sgemm/src_sass.csv", 60),
    ("h200/metrics_page.csv", 40),
    ("h200/probe_details.csv", 60),
    ("h200/others_basic_raw.csv", 5),
    ("h200/sdpa_flash_source_sass.csv.gz", 60),
];

fn fixtures() -> &'static [Vec<u8>] {
    static TEXTS: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        FIXTURES
            .iter()
            .map(|&(rel, rows)| {
                let bytes = std::fs::read(common::fixture(rel)).unwrap();
                let text = if rel.ends_with(".gz") {
                    let mut out = String::new();
                    std::io::Read::read_to_string(
                        &mut flate2::read::GzDecoder::new(&*bytes),
                        &mut out,
                    )
                    .unwrap();
                    out
                } else {
                    String::from_utf8(bytes).unwrap()
                };
                let head: Vec<&str> = text.split_inclusive('\n').take(rows).collect();
                head.concat().into_bytes()
            })
            .collect()
    })
}

#[derive(Debug, Clone)]
enum Mutation {
    /// The byte at a fraction of the length becomes another.
    Flip { at: f64, byte: u8 },
    /// Lines `first..first + count` are removed.
    CutRows { first: usize, count: usize },
    /// Line `row` appears twice.
    RepeatRow { row: usize },
    /// Cell `col` of line `row` (cells split at `","`) becomes `with`.
    ReplaceCell {
        row: usize,
        col: usize,
        with: String,
    },
    /// The file ends at a fraction of its length.
    Truncate { at: f64 },
}

fn cell_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("-".to_string()),
        Just("NaN".to_string()),
        Just("inf".to_string()),
        Just("-1".to_string()),
        Just("1e400".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("4,096 (0; 0; 1)".to_string()),
        Just("\"".to_string()),
        Just("\n".to_string()),
        Just("\u{1b}[2J".to_string()),
        "[ -~]{0,12}",
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0.0..1.0f64, any::<u8>()).prop_map(|(at, byte)| Mutation::Flip { at, byte }),
        (0..80usize, 1..5usize).prop_map(|(first, count)| Mutation::CutRows { first, count }),
        (0..80usize).prop_map(|row| Mutation::RepeatRow { row }),
        (0..80usize, 0..40usize, cell_value()).prop_map(|(row, col, with)| Mutation::ReplaceCell {
            row,
            col,
            with
        }),
        (0.0..1.0f64).prop_map(|at| Mutation::Truncate { at }),
    ]
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let at = |f: f64, len: usize| ((f * len as f64) as usize).min(len.saturating_sub(1));
    match m {
        Mutation::Flip { at: f, byte } => {
            if !bytes.is_empty() {
                let i = at(*f, bytes.len());
                bytes[i] = *byte;
            }
        }
        Mutation::Truncate { at: f } => bytes.truncate(at(*f, bytes.len())),
        Mutation::CutRows { .. } | Mutation::RepeatRow { .. } | Mutation::ReplaceCell { .. } => {
            let mut lines: Vec<Vec<u8>> = bytes
                .split_inclusive(|&b| b == b'\n')
                .map(<[u8]>::to_vec)
                .collect();
            if lines.is_empty() {
                return;
            }
            let n = lines.len();
            match m {
                Mutation::CutRows { first, count } => {
                    let first = first % n;
                    lines.drain(first..(first + count).min(n));
                }
                Mutation::RepeatRow { row } => {
                    let line = lines[row % n].clone();
                    lines.insert(row % n, line);
                }
                Mutation::ReplaceCell { row, col, with } => {
                    let line = String::from_utf8_lossy(&lines[row % n]).into_owned();
                    let mut cells: Vec<String> = line.split("\",\"").map(String::from).collect();
                    let k = col % cells.len();
                    cells[k] = with.clone();
                    lines[row % n] = cells.join("\",\"").into_bytes();
                }
                _ => unreachable!("only the line mutations reach here"),
            }
            *bytes = lines.concat();
        }
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 192,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn a_mutated_export_parses_or_fails_with_one_line_naming_the_file(
        which in 0..FIXTURES.len(),
        mutations in prop::collection::vec(mutation(), 1..4),
        zipped in any::<bool>(),
        flip_after_zip in proptest::option::of((0.0..1.0f64, any::<u8>())),
    ) {
        let mut bytes = fixtures()[which].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        if zipped {
            bytes = gzip(&bytes);
            if let Some((at, byte)) = flip_after_zip {
                apply(&mut bytes, &Mutation::Flip { at, byte });
            }
        }
        let path = Path::new("mutated.csv");
        if let Err(e) = ncu::parse_bytes(path, &bytes) {
            let message = e.to_string();
            prop_assert!(
                message.starts_with("mutated.csv") && !message.contains('\n'),
                "{message:?}"
            );
        }
    }
}
