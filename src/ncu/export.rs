//! Reading one export: its bytes made CSV text, the kind of page found from its header,
//! and the page parsed into one record per kernel launch.

use super::error::ParseError;
use super::options::ReadOptions;
use super::record::{KernelRecord, Page};
use super::rows::{Ending, cut_row};
use super::{input, long, nvvp, raw, source};
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
    /// The Visual Profiler's (nvvp) GPU Details export, of GPUs before Ampere: one row
    /// per launch, legacy stall reasons, no PC samples and no SASS.
    NvvpDetails,
}

impl PageKind {
    pub fn name(self) -> &'static str {
        match self {
            PageKind::Details => "details",
            PageKind::Metrics => "metrics",
            PageKind::Raw => "raw",
            PageKind::Source => "source",
            PageKind::Summary => "summary",
            PageKind::NvvpDetails => "Visual Profiler GPU details",
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
    if kind == PageKind::NvvpDetails {
        let (records, warning) = nvvp::parse(path, &csv)?;
        if records.is_empty() {
            return Err(ParseError::file(
                path,
                "this Visual Profiler GPU Details export holds no kernel launch, only memory copies",
            ));
        }
        return Ok(Export {
            path: path.to_path_buf(),
            kind,
            records,
            warnings: warning.into_iter().collect(),
        });
    }
    let mut ending = Ending::new(options.partial, cut_row(&csv.text));
    let records = match kind {
        PageKind::Details | PageKind::Metrics | PageKind::Summary => {
            long::parse(path, &csv, kind == PageKind::Summary, &mut ending)?
        }
        PageKind::Raw => raw::parse(path, &csv, &mut ending)?
            .into_iter()
            .map(|(identity, row)| KernelRecord::new(identity, Page::Raw(row)))
            .collect(),
        PageKind::Source => source::parse(path, &csv, &mut ending)?,
        PageKind::NvvpDetails => unreachable!("read above"),
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
    if input::is_nvvp_header(head) {
        return Some(PageKind::NvvpDetails);
    }
    match row.get(0) {
        Some("Kernel Name") | Some("File Path") => Some(PageKind::Source),
        Some("ID") if has("Metric Name") && has("Metric Value") => Some(PageKind::Details),
        Some("ID") if has("Kernel Name") => Some(PageKind::Raw),
        Some("Process ID") if has("Metric Name") && has("Average") => Some(PageKind::Summary),
        _ => None,
    }
}
