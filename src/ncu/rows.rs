//! What every page parser reads its CSV rows with: the reader, the columns by name, the
//! identity cells, the errors of a row, and what to do with a file cut short.

use super::error::ParseError;
use super::{input, value};
use std::path::Path;

/// How a page parser treats an error in the last row of a file: an export cut short
/// (a copy that stopped, a run that was killed). With
/// [`ReadOptions::partial`](super::ReadOptions::partial) the launches before it are kept
/// and the cut one is left out, with a warning at the line where the file stops;
/// otherwise the error stands.
pub(crate) struct Ending {
    partial: bool,
    /// Where the row that ends inside a quoted cell starts, if one does.
    cut_row: Option<u64>,
    pub(super) cut: Option<ParseError>,
}

impl Ending {
    pub(super) fn new(partial: bool, cut_row: Option<u64>) -> Ending {
        Ending {
            partial,
            cut_row,
            cut: None,
        }
    }

    /// An error for the row the file ends in, when it ends in the middle of one of its
    /// cells (see [`cut_row`]).
    pub fn check_row(
        &self,
        path: &Path,
        row: &csv::StringRecord,
        line: u64,
    ) -> Result<(), ParseError> {
        match (self.cut_row, row.position()) {
            (Some(at), Some(p)) if p.byte() == at => Err(ParseError::at(
                path,
                line,
                "the file ends in the middle of a cell of this row",
            )),
            _ => Ok(()),
        }
    }

    /// `error` was met in a row that no other row follows (`more` is false), while
    /// `complete` launches before it were read: whether to read on without the cut
    /// launch (`Ok`), or to fail.
    pub fn cut(
        &mut self,
        error: ParseError,
        more: bool,
        complete: usize,
    ) -> Result<(), ParseError> {
        if !self.partial || more || complete == 0 {
            return Err(error);
        }
        self.cut = Some(ParseError {
            message: format!(
                "the file ends in the middle of a launch: the {complete} complete launch(es) before it are read, the cut one is left out (--strict refuses the file); here {}",
                error.message
            ),
            ..error
        });
        Ok(())
    }
}

/// Where the last row starts when the text ends in the middle of a cell. ncu quotes
/// every cell and ends every row with a line end: a text that ends inside quotes (an odd
/// number of them), or after a delimiter, was cut.
pub(super) fn cut_row(text: &str) -> Option<u64> {
    // A whole text has an even number of quotes and a line end or a quote last: counted
    // first (fast), the row start is looked for only in a text that was cut.
    let quotes = count_bytes(text.as_bytes(), b'"');
    let after_delimiter = !text.is_empty() && !text.ends_with(['\n', '"']);
    if quotes.is_multiple_of(2) && !after_delimiter {
        return None;
    }
    let mut quoted = false;
    let mut row_start = 0;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\n' if !quoted => row_start = i + 1,
            _ => {}
        }
    }
    Some(row_start as u64)
}

/// How many times `byte` occurs in `bytes` (counted in chunks of 255 in a byte each,
/// which the compiler turns into wide instructions: a 20 MB page takes a millisecond).
pub(crate) fn count_bytes(bytes: &[u8], byte: u8) -> usize {
    bytes
        .chunks(255)
        .map(|c| usize::from(c.iter().map(|&b| u8::from(b == byte)).sum::<u8>()))
        .sum()
}

/// Whether rows with content are left.
pub(crate) fn more_rows(mut rows: impl Iterator<Item = csv::Result<csv::StringRecord>>) -> bool {
    rows.any(|r| r.map_or(true, |r| !is_blank(&r)))
}

/// A row of only spaces, which ncu pages may end with.
pub(crate) fn is_blank(row: &csv::StringRecord) -> bool {
    row.len() == 1 && row[0].trim().is_empty()
}

/// Column positions by name, for pages whose columns vary between ncu versions.
pub(crate) struct Columns<'h> {
    names: Vec<&'h str>,
}

impl<'h> Columns<'h> {
    pub fn new(header: &'h csv::StringRecord) -> Self {
        Columns {
            names: header.iter().collect(),
        }
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| *n == name)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }
}

/// Refuses a header that names a column twice (`"Context","Context"`): ncu writes each
/// column once, and a page with two of one name would be read by either of them.
pub(crate) fn check_unique_names<'a>(
    path: &Path,
    line: u64,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), ParseError> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, name) in names.into_iter().enumerate() {
        if let Some(first) = seen.insert(name, i) {
            return Err(ParseError::at(
                path,
                line,
                format!(
                    "the header names the column {name:?} twice (columns {} and {}): ncu writes each column once, so the file may be edited or damaged",
                    first + 1,
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

/// Reads an integer identity column ("ID", "Process ID", "Invocations"), leniently: a
/// cell that is no count is `None`. Rows are checked with [`check_id`] first.
pub(crate) fn parse_id(cell: Option<&str>) -> Option<u64> {
    cell.and_then(|c| value::parse_count(c, u64::MAX).ok().flatten())
}

/// Checks an identity column's cell: a whole number from 0 on, when it holds a number.
pub(crate) fn check_id(
    path: &Path,
    line: u64,
    column: &str,
    cell: Option<&str>,
) -> Result<(), ParseError> {
    match cell.map(|c| value::parse_count(c, u64::MAX)) {
        Some(Err(e)) => Err(ParseError::at(path, line, format!("column {column}: {e}"))),
        _ => Ok(()),
    }
}

pub(crate) fn non_empty(cell: Option<&str>) -> Option<String> {
    cell.map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
}

/// A CSV reader over already-extracted text: flexible rows (lengths are checked by the
/// page parsers, which know what each page allows).
pub(crate) fn reader(text: &str) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
}

pub(crate) fn csv_error(path: &Path, csv: &input::CsvText, e: csv::Error) -> ParseError {
    let line = e.position().map(|p| csv.file_line(p.line()));
    ParseError {
        path: path.to_path_buf(),
        line,
        message: format!("malformed CSV: {}", e.kind_message()),
    }
}

trait CsvErrorKind {
    fn kind_message(&self) -> String;
}

impl CsvErrorKind for csv::Error {
    fn kind_message(&self) -> String {
        match self.kind() {
            csv::ErrorKind::Utf8 { .. } => "invalid UTF-8".to_string(),
            csv::ErrorKind::Io(e) => e.to_string(),
            _ => self.to_string(),
        }
    }
}

pub(crate) fn length_error(
    path: &Path,
    line: u64,
    got: usize,
    want: usize,
    what: &str,
) -> ParseError {
    let how = if got < want {
        "is shorter than"
    } else {
        "is longer than"
    };
    ParseError::at(
        path,
        line,
        format!(
            "row {how} its header ({got} fields, the {what} header has {want}); the file may be truncated or edited"
        ),
    )
}
