//! Nsight Compute reports (`.ncu-rep`) read like CSV exports: their raw, details and
//! source pages are exported through the ncu CLI once, kept in the cache by the
//! report's content hash, and read from there on. Without ncu a report cannot be read,
//! and the message says how to get its pages.

use crate::files::limits::SizeLimits;
use crate::process::Limits;
use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long one report's export may take.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(600);

/// Whether a path names an Nsight Compute report (by its extension: the format is
/// ncu's own).
pub fn is_report(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ncu-rep"))
}

/// The paths with every report replaced by its exported pages, in order; a report is
/// read within `limits`.
pub fn expand(paths: &[PathBuf], limits: SizeLimits) -> Result<Vec<PathBuf>> {
    let mut out = Vec::with_capacity(paths.len());
    for p in paths {
        if is_report(p) {
            out.extend(pages_of(p, limits)?);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// A report's pages: from the cache when this content was exported before (the report
/// read within `limits` to hash it), else exported now through ncu.
pub fn pages_of(report: &Path, limits: SizeLimits) -> Result<Vec<PathBuf>> {
    let bytes = crate::files::read::given(report, limits.max_file_size)?;
    let hash: String = Sha256::digest(&*bytes)
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect();
    let cache = crate::files::cache::dir()
        .context(
            "no cache folder (set STALLSCOPE_CACHE or HOME) to export the report's pages into",
        )?
        .join("ncu-rep")
        .join(&hash);
    let stem = report
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let named = |page: &str| cache.join(format!("{stem}.{page}"));
    let cached: Vec<PathBuf> = ["raw.csv", "details.csv", "source.csv"]
        .iter()
        .map(|p| named(p))
        .filter(|p| p.is_file())
        .collect();
    if cached.len() >= 2 {
        return Ok(cached);
    }
    let ncu = super::find_ncu().map_err(|_| {
        anyhow::anyhow!(
            "{} is an Nsight Compute report: reading it needs ncu to export its pages (install Nsight Compute, or set NCU), or export them yourself with `ncu --import {} --csv --page raw --print-units base > raw.csv` (and --page details, --page source --print-source sass)",
            report.display(),
            report.display()
        )
    })?;
    let work = cache.with_extension(format!("tmp-{}", std::process::id()));
    let cancel = AtomicBool::new(false);
    let files = super::export_pages(&ncu, report, &work, &Limits::new(EXPORT_TIMEOUT, &cancel))
        .with_context(|| format!("exporting the pages of {}", report.display()))?;
    std::fs::create_dir_all(&cache)
        .with_context(|| format!("cannot create {}", cache.display()))?;
    let mut out = Vec::new();
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dest = named(&name);
        std::fs::rename(&f, &dest).with_context(|| format!("cannot write {}", dest.display()))?;
        out.push(dest);
    }
    let _ = std::fs::remove_dir_all(&work);
    if out.is_empty() {
        bail!("ncu exported no pages from {}", report.display());
    }
    Ok(out)
}
