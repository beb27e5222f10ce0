//! A profile's source page: its summary (the (stall reason × opcode class) table the
//! analysis reads) always, its rows only when a view asks for them.
//!
//! The summary of a source export is stored beside it, `<export>.summary.json`, keyed
//! by the SHA-256 of the export's bytes: a ladder whose source pages all have one loads
//! without reading a listing (a source page is most of a version's data). A summary
//! that is missing, unreadable or of other bytes is ignored, and the page is read as
//! before. `import` writes them.

use super::store::Store;
use crate::files::{self, limits::SizeLimits};
use crate::ncu::{OpcodeSamples, Page, SourceListing, SourceSummary, StallReason};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// The source page of a profile.
#[derive(Debug, Clone)]
pub struct SourcePage {
    pub summary: SourceSummary,
    /// The rows, once read (shared by the clones of a profile).
    rows: Arc<OnceLock<Result<SourceListing, String>>>,
    /// Where the rows are read from, when they were left unread.
    origin: Option<Origin>,
}

#[derive(Debug, Clone)]
struct Origin {
    store: Store,
    path: PathBuf,
    /// Which listing of the file (its records in order).
    index: usize,
}

impl SourcePage {
    /// A page whose rows were read.
    pub fn read(listing: SourceListing) -> SourcePage {
        SourcePage {
            summary: listing.summary(),
            rows: Arc::new(OnceLock::from(Ok(listing))),
            origin: None,
        }
    }

    /// A page known by its summary, its rows to be read from listing `index` of `path`
    /// when they are asked for.
    fn unread(summary: SourceSummary, store: &Store, path: &Path, index: usize) -> SourcePage {
        SourcePage {
            summary,
            rows: Arc::new(OnceLock::new()),
            origin: Some(Origin {
                store: store.clone(),
                path: path.to_path_buf(),
                index,
            }),
        }
    }

    /// Whether the rows were read (at loading, or since a view asked for them).
    pub fn rows_read(&self) -> bool {
        self.rows.get().is_some()
    }

    /// The listing's rows, read from the file on first use; an error says why they
    /// cannot be (the file went, or changed since the summary was made).
    pub fn listing(&self) -> Result<&SourceListing, &str> {
        self.rows
            .get_or_init(|| match &self.origin {
                Some(o) => o.read(&self.summary),
                None => Err("the source page was not kept".into()),
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl Origin {
    fn read(&self, summary: &SourceSummary) -> Result<SourceListing, String> {
        let describe = self.store.describe(&self.path);
        let bytes = self.store.read(&self.path).map_err(|e| format!("{e:#}"))?;
        let export = crate::ncu::parse_bytes_with(&self.path, &bytes, &self.store.export_options())
            .map_err(|e| e.to_string())?;
        match export.records.into_iter().nth(self.index).map(|r| r.page) {
            Some(Page::Source(listing)) if listing.summary() == *summary => Ok(listing),
            _ => Err(format!(
                "{describe} changed since it was loaded: restart stallscope to read it again"
            )),
        }
    }
}

/// The summary file of an export: `<file name>.summary.json` beside it.
pub fn summary_path(export: &Path) -> PathBuf {
    let mut name = export.file_name().unwrap_or_default().to_os_string();
    name.push(SUMMARY_SUFFIX);
    export.with_file_name(name)
}

/// The name of the summary file of the export named `export`.
pub fn summary_name(export: &str) -> String {
    format!("{export}{SUMMARY_SUFFIX}")
}

const SUMMARY_SUFFIX: &str = ".summary.json";

/// The summary's version: a summary is of the export's bytes *as this build reads them*,
/// so a change to what a listing's samples count as (2: the `warpgroup_arrive` samples
/// ncu 2025.3's source page leaves unnamed) takes a new one, and older summaries are
/// ignored until `import` or the `source_summaries` example writes them again.
const SCHEMA: &str = "stallscope/source-summary/2";

/// The summary file as stored.
#[derive(Serialize, Deserialize)]
struct SummaryFile {
    schema: String,
    /// The SHA-256 of the export's bytes, as stored (compressed or not).
    export_sha256: String,
    /// Each listing of the export, in order.
    listings: Vec<ListingJson>,
}

#[derive(Serialize, Deserialize)]
struct ListingJson {
    kernel: String,
    instructions: usize,
    cuda_lines: usize,
    fingerprint: String,
    opcodes: Vec<OpcodeJson>,
}

#[derive(Serialize, Deserialize)]
struct OpcodeJson {
    opcode: String,
    instructions: usize,
    samples: u64,
    /// Samples by reason (`long_scoreboard`, …), those with any.
    stalls: BTreeMap<String, u64>,
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The summaries of an export's listings, `(kernel, summary)` in file order: what its
/// summary file holds (none for other pages).
pub fn summaries(export: &crate::ncu::Export) -> Vec<(String, SourceSummary)> {
    export
        .records
        .iter()
        .filter_map(|r| match &r.page {
            Page::Source(l) => Some((r.kernel.clone(), l.summary())),
            _ => None,
        })
        .collect()
}

/// The summary file of an export stored as `bytes` whose listings have `summaries`.
pub fn summary_json(bytes: &[u8], summaries: &[(String, SourceSummary)]) -> String {
    let file = SummaryFile {
        schema: SCHEMA.into(),
        export_sha256: sha256(bytes),
        listings: summaries
            .iter()
            .map(|(kernel, s)| listing_json(kernel, s))
            .collect(),
    };
    serde_json::to_string_pretty(&file).expect("a summary always serializes") + "\n"
}

/// Writes the summary file beside an export stored as `bytes`, when it holds listings.
pub fn write_summary(
    export: &Path,
    bytes: &[u8],
    summaries: &[(String, SourceSummary)],
) -> Result<()> {
    if summaries.is_empty() {
        return Ok(());
    }
    files::write::atomically(
        &summary_path(export),
        summary_json(bytes, summaries).as_bytes(),
    )
}

fn listing_json(kernel: &str, s: &SourceSummary) -> ListingJson {
    ListingJson {
        kernel: kernel.to_string(),
        instructions: s.instructions,
        cuda_lines: s.cuda_lines,
        fingerprint: format!("{:016x}", s.fingerprint),
        opcodes: s
            .opcodes
            .iter()
            .map(|o| OpcodeJson {
                opcode: o.opcode.to_string(),
                instructions: o.instructions,
                samples: o.samples,
                stalls: StallReason::ALL
                    .iter()
                    .filter(|r| o.stalls[r.index()] > 0)
                    .map(|r| (r.metric_name().to_string(), o.stalls[r.index()]))
                    .collect(),
            })
            .collect(),
    }
}

fn summary_of(l: &ListingJson) -> Option<SourceSummary> {
    let opcodes = l
        .opcodes
        .iter()
        .map(|o| {
            let mut stalls = vec![0u64; StallReason::COUNT].into_boxed_slice();
            for (name, &n) in &o.stalls {
                stalls[StallReason::from_name(name)?.index()] = n;
            }
            Some(OpcodeSamples {
                opcode: o.opcode.as_str().into(),
                instructions: o.instructions,
                samples: o.samples,
                stalls,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    // A summary is trusted for its export's hash, which anyone can compute: one whose
    // figures no parsed page gives (a class's reasons past its samples, a listing's
    // samples past a u64) is ignored, and the page is read and checked instead.
    let mut total: u64 = 0;
    for o in &opcodes {
        let stalls = o.stalls.iter().try_fold(0u64, |t, &n| t.checked_add(n))?;
        total = total.checked_add(o.samples)?;
        if stalls > o.samples {
            return None;
        }
    }
    Some(SourceSummary {
        opcodes,
        instructions: l.instructions,
        cuda_lines: l.cuda_lines,
        fingerprint: u64::from_str_radix(&l.fingerprint, 16).ok()?,
    })
}

/// The source pages of an export from its summary file (`summary`, the bytes of the
/// file beside it), one per listing, their rows
/// unread: `(kernel, page)` in file order. `None` when there is no summary of these
/// bytes (none, another version's, another export's, or not readable).
pub fn unread_pages(
    store: &Store,
    export: &Path,
    bytes: &[u8],
    summary: &[u8],
) -> Option<Vec<(String, SourcePage)>> {
    let file: SummaryFile = serde_json::from_slice(summary).ok()?;
    if file.schema != SCHEMA || file.export_sha256 != sha256(bytes) || file.listings.is_empty() {
        return None;
    }
    file.listings
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Some((
                l.kernel.clone(),
                SourcePage::unread(summary_of(l)?, store, export, i),
            ))
        })
        .collect()
}

/// Writes the summary file of every source export a ladder folder's manifest lists
/// where it is missing or of other bytes (a folder made before summaries were stored,
/// or an export replaced by hand), the manifest read and the exports inflated within
/// `limits`; the files written.
pub fn refresh_summaries(ladder_dir: &Path, limits: SizeLimits) -> Result<Vec<PathBuf>> {
    use anyhow::Context;
    let manifest_path = ladder_dir.join(super::manifest::FILE_NAME);
    let manifest = super::manifest::Manifest::read(&manifest_path, limits)?
        .with_context(|| format!("{} is missing", manifest_path.display()))?;
    let mut files: Vec<&String> = manifest.versions.iter().flat_map(|v| &v.files).collect();
    files.sort();
    files.dedup();
    let mut written = Vec::new();
    for f in files {
        let path = crate::files::paths::normalize(&ladder_dir.join(f));
        let bytes =
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let summary = std::fs::read(summary_path(&path)).unwrap_or_default();
        if unread_pages(&Store::disk(limits), &path, &bytes, &summary).is_some() {
            continue;
        }
        let options = crate::ncu::ReadOptions::within(limits);
        let summaries = summaries(&crate::ncu::parse_bytes_with(&path, &bytes, &options)?);
        if !summaries.is_empty() {
            write_summary(&path, &bytes, &summaries)?;
            written.push(summary_path(&path));
        }
    }
    Ok(written)
}
