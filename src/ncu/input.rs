//! Turning a file's bytes into CSV text: gzip, binary detection, and removing what a live
//! `ncu --csv` run prints around the CSV (`==PROF==` lines, the program's own output).

use super::error::ParseError;
use super::non_export::{self, is_prof_line};
use super::options::ReadOptions;
use flate2::read::MultiGzDecoder;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use crate::files::limits::{MAX_DECOMPRESSED_VAR, size_text};

/// What a file of binary data is told.
const BINARY: &str = "this is a binary file, not an ncu CSV export (an .ncu-rep report? export it with `ncu --import REPORT --csv --page raw`)";

/// How much of a gzip export is inflated before its whole size is known: one that
/// inflates to less (every export but the largest) is inflated once.
const IN_ONE_PASS: u64 = 64 << 20;

/// How much of a file's start is looked at to tell text from binary data.
const PROBE: usize = 64 * 1024;

/// The CSV part of an export, with a way back to the file's own line numbers.
pub struct CsvText<'a> {
    pub text: Cow<'a, str>,
    /// Original (1-based) line number of each line of `text`, when lines were removed
    /// from its middle; otherwise `text` starts at line `offset + 1`.
    line_map: Option<Vec<u64>>,
    offset: u64,
}

impl CsvText<'_> {
    /// The file's line number for a 1-based line of `text`.
    pub fn file_line(&self, line: u64) -> u64 {
        match &self.line_map {
            Some(map) => map
                .get(line.saturating_sub(1) as usize)
                .copied()
                .unwrap_or(line),
            None => line + self.offset,
        }
    }
}

/// Decompresses gzip input (detected by its magic bytes, not by the file name), every
/// member of it (`cat a.gz b.gz` is one gzip file), up to the decompressed-size limit
/// ([`ReadOptions::max_decompressed`]).
pub fn decompress<'a>(
    path: &Path,
    bytes: &'a [u8],
    options: &ReadOptions,
) -> Result<Cow<'a, [u8]>, ParseError> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(Cow::Borrowed(bytes));
    }
    let limit = options.max_decompressed;
    let damaged = |e: std::io::Error| ParseError::file(path, format!("gzip data is damaged: {e}"));
    // The start first: a gzip bomb of zeros is refused at its first bytes (they are not
    // text). Then up to IN_ONE_PASS: an export that ends before is inflated once; a
    // longer one is measured before it takes more memory, and inflated again.
    let mut counting = MultiGzDecoder::new(bytes).take(limit.saturating_add(1));
    // The size the gzip trailer gives (its last member's, modulo 4 GiB) makes room at
    // once; only a hint, within what is read in one pass.
    let hint = bytes
        .last_chunk::<4>()
        .map_or(0, |t| u64::from(u32::from_le_bytes(*t)));
    let mut head =
        Vec::with_capacity(usize::try_from(hint.min(limit.min(IN_ONE_PASS)) + 1).unwrap_or(0));
    (&mut counting)
        .take(PROBE as u64)
        .read_to_end(&mut head)
        .map_err(damaged)?;
    if head.contains(&0) {
        return Ok(Cow::Owned(head));
    }
    let one_pass = limit.min(IN_ONE_PASS);
    (&mut counting)
        .take((one_pass + 1).saturating_sub(head.len() as u64))
        .read_to_end(&mut head)
        .map_err(damaged)?;
    if head.len() as u64 <= one_pass {
        return Ok(Cow::Owned(head));
    }
    let size =
        head.len() as u64 + std::io::copy(&mut counting, &mut std::io::sink()).map_err(damaged)?;
    drop(head);
    if size > limit {
        return Err(ParseError::file(
            path,
            format!(
                "the gzip data inflates to more than {} (the decompressed-size limit); if this is an export, raise the limit with --max-decompressed SIZE or {MAX_DECOMPRESSED_VAR}=SIZE, e.g. {MAX_DECOMPRESSED_VAR}=8GiB",
                size_text(limit)
            ),
        ));
    }
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .map_err(damaged)?;
    Ok(Cow::Owned(out))
}

/// Checks that the bytes are text and finds where the CSV starts.
pub fn csv_text<'a>(path: &Path, bytes: &'a [u8]) -> Result<CsvText<'a>, ParseError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ParseError::file(path, "the file is empty"));
    }
    let probe = &bytes[..bytes.len().min(PROBE)];
    if probe.contains(&0) || utf16(probe).is_some() {
        return Err(not_text(path, probe));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64
                + 1;
            return Err(ParseError::at(path, line, "the file is not UTF-8 text"));
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);

    // Find the first line that starts an ncu CSV page.
    let mut start = None;
    let mut pos = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if is_csv_start(line) {
            start = Some((i as u64, pos));
            break;
        }
        pos += line.len();
    }
    let Some((skipped, start_byte)) = start else {
        return Err(non_export::explain(path, text));
    };
    let body = &text[start_byte..];
    // ncu's own messages may also follow or interleave with the CSV.
    // (A line of ncu's starts with `==`: looked for first, fast, in the whole text.)
    let may_have_messages = body.starts_with("==") || body.contains("\n==");
    if !may_have_messages || !body.lines().any(is_prof_line) {
        return Ok(CsvText {
            text: Cow::Borrowed(body),
            line_map: None,
            offset: skipped,
        });
    }
    let mut kept = String::with_capacity(body.len());
    let mut map = Vec::new();
    for (i, line) in body.split_inclusive('\n').enumerate() {
        if !is_prof_line(line) {
            kept.push_str(line);
            map.push(skipped + i as u64 + 1);
        }
    }
    Ok(CsvText {
        text: Cow::Owned(kept),
        line_map: Some(map),
        offset: 0,
    })
}

/// How much of a file is read to tell whether it is an export.
const SNIFF: usize = 1 << 20;

/// Whether a file looks like an ncu export by its first MiB: gzip data, or text with a
/// line that starts an ncu CSV page or one of ncu's messages (the output of a run, read
/// as such). `Err` says what the file is instead.
pub fn sniff(path: &Path) -> Result<(), ParseError> {
    sniff_with(path, true)
}

/// Whether a file found in a folder is an export: as [`sniff`], but ncu's messages
/// alone (the log of a run kept beside its exports) are not one. `Err` says what the
/// file is instead.
pub fn sniff_export(path: &Path) -> Result<(), ParseError> {
    sniff_with(path, false)
}

fn sniff_with(path: &Path, messages: bool) -> Result<(), ParseError> {
    let io = |e: std::io::Error| ParseError::file(path, e.to_string());
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(SNIFF as u64).read_to_end(&mut head))
        .map_err(io)?;
    if head.starts_with(&[0x1f, 0x8b]) {
        let mut inflated = Vec::new();
        // The head of a gzip stream ends where it was cut: what came before counts.
        let read = MultiGzDecoder::new(&head[..])
            .take(SNIFF as u64)
            .read_to_end(&mut inflated);
        if read.is_err() && inflated.is_empty() {
            // Damaged: reading it says so.
            return Ok(());
        }
        head = inflated;
    }
    if head.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ParseError::file(path, "the file is empty"));
    }
    let probe = &head[..head.len().min(PROBE)];
    if probe.contains(&0) || utf16(probe).is_some() {
        return Err(not_text(path, probe));
    }
    let text = match std::str::from_utf8(&head) {
        Ok(t) => t,
        // A character cut at the end of the head, or not UTF-8 at all.
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default(),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text
        .lines()
        .any(|l| is_csv_start(l) || (messages && is_prof_line(l)))
    {
        Ok(())
    } else {
        Err(non_export::explain(path, text))
    }
}

/// Why bytes holding NUL bytes are not an export: UTF-16 text (what some Windows tools
/// write), said as such with the way to convert it, or binary data.
fn not_text(path: &Path, probe: &[u8]) -> ParseError {
    match utf16(probe) {
        Some(order) => ParseError::file(
            path,
            format!(
                "this is UTF-16 text ({order}), and stallscope reads UTF-8 as ncu writes it: export the report again with `ncu --import REPORT --csv --page raw > raw.csv`, or convert this file with `iconv -f UTF-16 -t UTF-8 {} > converted.csv`",
                path.display()
            ),
        ),
        None => ParseError::file(path, BINARY),
    }
}

/// The byte order of UTF-16 text: by its byte-order mark, else by the zero bytes that
/// ASCII characters leave at every other position.
fn utf16(probe: &[u8]) -> Option<&'static str> {
    if probe.starts_with(&[0xff, 0xfe]) {
        return Some("little-endian");
    }
    if probe.starts_with(&[0xfe, 0xff]) {
        return Some("big-endian");
    }
    let n = probe.len().min(4096) / 2 * 2;
    if n < 8 {
        return None;
    }
    let zeros = |parity: usize| {
        probe[..n]
            .iter()
            .skip(parity)
            .step_by(2)
            .filter(|&&b| b == 0)
            .count()
    };
    let (even, odd, half) = (zeros(0), zeros(1), n / 2);
    if odd * 10 >= half * 9 && even * 10 < half {
        Some("little-endian")
    } else if even * 10 >= half * 9 && odd * 10 < half {
        Some("big-endian")
    } else {
        None
    }
}

fn is_csv_start(line: &str) -> bool {
    [
        "\"ID\",",
        "\"Process ID\",",
        "\"Kernel Name\",",
        "\"File Path\",",
    ]
    .iter()
    .any(|p| line.starts_with(p))
        || is_nvvp_header(line)
}

/// The first columns of the Visual Profiler's GPU Details export.
pub const NVVP_HEADER_START: &str = "Name,Start Time(ns),Duration(ns)";

/// Whether a header line is the Visual Profiler's GPU Details export's.
pub fn is_nvvp_header(line: &str) -> bool {
    line.starts_with(NVVP_HEADER_START)
        || line.starts_with("\"Name\",\"Start Time(ns)\",\"Duration(ns)\"")
}
