//! Reading Nsight Compute CSV exports: the details, raw, source, summary and `--metrics`
//! pages, plain or gzip-compressed, with or without a live run's output in front. The
//! kind of page is found from the content, never from the file name.

mod input;
mod long;
mod non_export;
mod raw;
mod source;
pub mod stall;
pub mod value;

pub use input::sniff;
pub use raw::{RawColumn, RawMetrics, RawSchema};
pub use source::{CudaLine, OpcodeSamples, SassLine, SourceListing, SourceSummary, opcode_class};
pub use stall::StallReason;
pub use value::{Unit, Value};

use crate::files::limits::SizeLimits;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Which page of an ncu report a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PageKind {
    /// `--page details`: one row per metric per kernel, rule rows too.
    Details,
    /// `--metrics a,b,c`: the details layout with raw metric names.
    Metrics,
    /// `--page raw`: metric names, units, then one row per launch.
    Raw,
    /// `--page source --print-source sass` (or `cuda,sass`).
    Source,
    /// `--print-summary per-kernel`: Minimum / Maximum / Average.
    Summary,
}

impl PageKind {
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Details => "details",
            PageKind::Metrics => "metrics",
            PageKind::Raw => "raw",
            PageKind::Source => "source",
            PageKind::Summary => "summary",
        }
    }
}

/// One parsed file.
#[derive(Debug, Clone)]
pub struct Export {
    pub path: PathBuf,
    pub kind: PageKind,
    pub records: Vec<KernelRecord>,
    /// What was read in part: a file that ends in the middle of a launch (read with
    /// [`ReadOptions::partial`]), at the line where it stops.
    pub warnings: Vec<ParseError>,
}

/// What one page says about one kernel launch.
#[derive(Debug, Clone)]
pub struct KernelRecord {
    pub kernel: String,
    /// ncu's launch ID ("ID" column); the source and summary pages have none.
    pub launch_id: Option<u64>,
    pub process_id: Option<u64>,
    pub launch: LaunchInfo,
    pub page: Page,
    /// The file line where this kernel's rows start.
    pub line: u64,
}

/// The launch configuration columns some pages carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LaunchInfo {
    pub block: Option<String>,
    pub grid: Option<String>,
    pub device: Option<String>,
    pub cc: Option<String>,
    pub invocations: Option<u64>,
}

/// Where a page's launch configuration columns are (older ncu versions lack some).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LaunchColumns {
    pub block: Option<usize>,
    pub grid: Option<usize>,
    pub device: Option<usize>,
    pub cc: Option<usize>,
}

impl LaunchColumns {
    /// The columns, by the position of each name in the header (`find`).
    pub fn find(find: impl Fn(&str) -> Option<usize>) -> LaunchColumns {
        LaunchColumns {
            block: find("Block Size"),
            grid: find("Grid Size"),
            device: find("Device"),
            cc: find("CC"),
        }
    }

    /// A row's launch configuration; `cell(i)` is its cell at position `i`.
    pub fn read<'r>(
        &self,
        cell: impl Fn(usize) -> Option<&'r str>,
        invocations: Option<u64>,
    ) -> LaunchInfo {
        let get = |i: Option<usize>| non_empty(i.and_then(&cell));
        LaunchInfo {
            block: get(self.block),
            grid: get(self.grid),
            device: get(self.device),
            cc: get(self.cc),
            invocations,
        }
    }
}

impl LaunchInfo {
    /// Fills what `self` lacks from `other`.
    pub fn merge(&mut self, other: &LaunchInfo) {
        fn fill<T: Clone>(a: &mut Option<T>, b: &Option<T>) {
            if a.is_none() {
                a.clone_from(b);
            }
        }
        fill(&mut self.block, &other.block);
        fill(&mut self.grid, &other.grid);
        fill(&mut self.device, &other.device);
        fill(&mut self.cc, &other.cc);
        fill(&mut self.invocations, &other.invocations);
    }
}

#[derive(Debug, Clone)]
pub enum Page {
    /// The long layout: details, `--metrics` and summary pages.
    Metrics {
        metrics: Vec<DetailMetric>,
        rules: Vec<RuleFinding>,
    },
    Raw(RawMetrics),
    Source(SourceListing),
}

/// One metric of the long layout, its value in the internal unit.
#[derive(Debug, Clone, Serialize)]
pub struct DetailMetric {
    pub section: Box<str>,
    pub name: Box<str>,
    pub unit: Box<str>,
    pub value: Value,
    /// Summary pages: minimum and maximum over the invocations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<(f64, f64)>,
}

/// A rule's finding from the details page.
#[derive(Debug, Clone, Serialize)]
pub struct RuleFinding {
    /// The section identifier (`SpeedOfLight`, `LaunchStats` …).
    pub section: String,
    pub rule: String,
    /// OPT, WRN, INF …
    pub kind: String,
    pub description: String,
    pub speedup_type: Option<String>,
    /// Estimated speedup in percent.
    pub speedup_pct: Option<f64>,
}

/// A file that could not be read, with the line where it went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ParseError {
    pub path: PathBuf,
    pub line: Option<u64>,
    pub message: String,
}

impl ParseError {
    pub fn file(path: &Path, message: impl Into<String>) -> ParseError {
        ParseError {
            path: path.to_path_buf(),
            line: None,
            message: message.into(),
        }
    }

    pub fn at(path: &Path, line: u64, message: impl Into<String>) -> ParseError {
        ParseError {
            path: path.to_path_buf(),
            line: Some(line),
            message: message.into(),
        }
    }
}

/// How exports are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Keep the complete launches of a file that ends in the middle of one (cut short),
    /// with a warning, instead of refusing the file.
    pub partial: bool,
    /// The most a gzip export may inflate to (`--max-decompressed`); by default
    /// [`crate::files::limits::DEFAULT_MAX_DECOMPRESSED`].
    pub max_decompressed: u64,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions::within(SizeLimits::DEFAULT)
    }
}

impl ReadOptions {
    /// Whole exports only, inflated within `limits`.
    pub fn within(limits: SizeLimits) -> ReadOptions {
        ReadOptions {
            partial: false,
            max_decompressed: limits.max_decompressed,
        }
    }
}

/// Reads and parses one export from disk.
pub fn read_file(path: &Path) -> Result<Export, ParseError> {
    read_file_with(path, &ReadOptions::default())
}

pub fn read_file_with(path: &Path, options: &ReadOptions) -> Result<Export, ParseError> {
    let bytes =
        crate::files::read::whole(path).map_err(|e| ParseError::file(path, e.to_string()))?;
    parse_bytes_with(path, &bytes, options)
}

/// Parses one export from its bytes; `path` names it in errors.
pub fn parse_bytes(path: &Path, bytes: &[u8]) -> Result<Export, ParseError> {
    parse_bytes_with(path, bytes, &ReadOptions::default())
}

pub fn parse_bytes_with(
    path: &Path,
    bytes: &[u8],
    options: &ReadOptions,
) -> Result<Export, ParseError> {
    let bytes = input::decompress(path, bytes, options)?;
    let csv = input::csv_text(path, &bytes)?;
    let first_line = csv.text.lines().next().unwrap_or_default();
    let kind = detect(first_line).ok_or_else(|| {
        ParseError::at(
            path,
            csv.file_line(1),
            "not an ncu CSV export: the header matches no page ncu writes (details, raw, source, summary, --metrics)",
        )
    })?;
    let mut ending = Ending::new(options.partial, cut_row(&csv.text));
    let records = match kind {
        PageKind::Details | PageKind::Metrics | PageKind::Summary => {
            long::parse(path, &csv, kind == PageKind::Summary, &mut ending)?
        }
        PageKind::Raw => raw::parse(path, &csv, &mut ending)?,
        PageKind::Source => source::parse(path, &csv, &mut ending)?,
    };
    if records.is_empty() {
        return Err(ParseError::file(
            path,
            format!("the {} page holds no kernel launches", kind.name()),
        ));
    }
    let kind = match kind {
        PageKind::Details if records.iter().all(is_metrics_output) => PageKind::Metrics,
        k => k,
    };
    Ok(Export {
        path: path.to_path_buf(),
        kind,
        records,
        warnings: ending.cut.into_iter().collect(),
    })
}

/// How a page parser treats an error in the last row of a file: an export cut short
/// (a copy that stopped, a run that was killed). With [`ReadOptions::partial`] the
/// launches before it are kept and the cut one is left out, with a warning at the line
/// where the file stops; otherwise the error stands.
pub(crate) struct Ending {
    partial: bool,
    /// Where the row that ends inside a quoted cell starts, if one does.
    cut_row: Option<u64>,
    cut: Option<ParseError>,
}

impl Ending {
    fn new(partial: bool, cut_row: Option<u64>) -> Ending {
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
fn cut_row(text: &str) -> Option<u64> {
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

fn is_metrics_output(r: &KernelRecord) -> bool {
    match &r.page {
        Page::Metrics { metrics, .. } => metrics
            .iter()
            .all(|m| &*m.section == "Command line profiler metrics"),
        _ => false,
    }
}

/// Finds the page kind from the first CSV line.
fn detect(header: &str) -> Option<PageKind> {
    // The columns that tell a page stand at its start: a raw page's 2,000 metric names
    // after them are not read.
    const ENOUGH: usize = 4096;
    let head = match header.get(..ENOUGH).and_then(|h| h.rfind("\",\"")) {
        Some(cut) if header.len() > ENOUGH => &header[..=cut],
        _ => header,
    };
    let mut row = csv::StringRecord::new();
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(head.as_bytes())
        .read_record(&mut row)
        .ok()?;
    let has = |name: &str| row.iter().any(|c| c == name);
    match row.get(0) {
        Some("Kernel Name") | Some("File Path") => Some(PageKind::Source),
        Some("ID") if has("Metric Name") && has("Metric Value") => Some(PageKind::Details),
        Some("ID") if has("Kernel Name") => Some(PageKind::Raw),
        Some("Process ID") if has("Metric Name") && has("Average") => Some(PageKind::Summary),
        _ => None,
    }
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
