//! Turning a file's bytes into CSV text: gzip, binary detection, and removing what a live
//! `ncu --csv` run prints around the CSV (`==PROF==` lines, the program's own output).

use super::ParseError;
use flate2::read::GzDecoder;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

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

/// Decompresses gzip input (detected by its magic bytes, not by the file name).
pub fn decompress<'a>(path: &Path, bytes: &'a [u8]) -> Result<Cow<'a, [u8]>, ParseError> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::with_capacity(bytes.len() * 8);
        GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .map_err(|e| ParseError::file(path, format!("gzip data is damaged: {e}")))?;
        Ok(Cow::Owned(out))
    } else {
        Ok(Cow::Borrowed(bytes))
    }
}

/// Checks that the bytes are text and finds where the CSV starts.
pub fn csv_text<'a>(path: &Path, bytes: &'a [u8]) -> Result<CsvText<'a>, ParseError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(ParseError::file(path, "the file is empty"));
    }
    let probe = &bytes[..bytes.len().min(64 * 1024)];
    if probe.contains(&0) {
        return Err(ParseError::file(
            path,
            "this is a binary file, not an ncu CSV export (an .ncu-rep report? export it with `ncu --import REPORT --csv --page raw`)",
        ));
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
        return Err(ParseError::file(
            path,
            "no ncu CSV found: expected a header line starting with \"ID\", \"Process ID\", \"Kernel Name\" or \"File Path\"",
        ));
    };
    let body = &text[start_byte..];
    // ncu's own messages may also follow or interleave with the CSV.
    if !body.lines().any(is_prof_line) {
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

fn is_csv_start(line: &str) -> bool {
    [
        "\"ID\",",
        "\"Process ID\",",
        "\"Kernel Name\",",
        "\"File Path\",",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

/// `==PROF==`, `==WARNING==`, `==ERROR==` … lines of a live ncu run.
fn is_prof_line(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("==") else {
        return false;
    };
    match rest.find("==") {
        Some(end) => rest[..end].bytes().all(|b| b.is_ascii_uppercase()),
        None => false,
    }
}
