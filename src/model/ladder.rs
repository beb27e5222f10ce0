//! Ladders and versions, loaded from a ladder folder (manifest plus exports) or from
//! loose export files given in order.

use super::manifest::{self, Manifest};
use super::merge::{merge_pages, pages_of, source_page};
use super::runs::{self, RunFile, RunResult, Shape};
use super::store::Store;
use super::{Profile, merge_exports, short_kernel_name, source};
use crate::files::normalize;
use crate::ncu::{self, ParseError};
use anyhow::{Context, Result, anyhow, bail};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// An ordered list of versions of one kernel, plus baselines, solving one problem.
#[derive(Debug, Clone)]
pub struct Ladder {
    /// The folder name (`sgemm-toy`), or `files` for loose exports.
    pub name: String,
    pub title: String,
    pub problem: Option<String>,
    /// FLOP of one launch, where known.
    pub flops: Option<f64>,
    pub peak_tflops: Option<f64>,
    pub reference_shape: Option<Shape>,
    pub versions: Vec<Version>,
    /// Where the ladder was read from (None for loose files).
    pub dir: Option<PathBuf>,
    pub store: Store,
}

#[derive(Debug, Clone, Default)]
pub struct Version {
    pub id: String,
    pub title: String,
    pub technique: Option<String>,
    pub baseline: bool,
    pub notes: Option<String>,
    /// The kernel source: its path and text.
    pub source: Option<(PathBuf, String)>,
    pub profile: Option<Profile>,
    pub runs: Vec<RunResult>,
    pub flops: Option<f64>,
}

impl Ladder {
    pub fn version(&self, id: &str) -> Option<&Version> {
        self.versions.iter().find(|v| v.id == id)
    }

    pub fn version_index(&self, id: &str) -> Option<usize> {
        self.versions.iter().position(|v| v.id == id)
    }

    /// FLOP of one launch of a version.
    pub fn flops_of(&self, v: &Version) -> Option<f64> {
        v.flops.or(self.flops)
    }

    /// The run result the timeline shows for a version: at the reference shape,
    /// non-causal, where the ladder names one; otherwise the latest.
    pub fn reference_run<'a>(&self, v: &'a Version) -> Option<&'a RunResult> {
        match self.reference_shape {
            Some(shape) => v.runs.iter().rev().find(|r| r.shape == shape && !r.causal),
            None => v.runs.last(),
        }
    }
}

/// How loading treats unreadable exports: fail at the first (the default), or with
/// `--keep-going` collect them here and load the rest. Loose exports cut short in the
/// middle of a launch keep their complete launches, each with a warning here, unless
/// `strict` refuses them.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub keep_going: bool,
    pub failures: Vec<ParseError>,
    pub strict: bool,
    pub warnings: Vec<ParseError>,
}

impl LoadReport {
    pub fn keep_going() -> LoadReport {
        LoadReport {
            keep_going: true,
            ..LoadReport::default()
        }
    }

    fn record(&mut self, e: ParseError) -> Result<()> {
        if self.keep_going {
            self.failures.push(e);
            Ok(())
        } else {
            Err(e.into())
        }
    }
}

/// The ladder folders (holding a `ladder.toml`) directly under a folder on disk, by name.
pub fn ladder_dirs(profiles: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(profiles)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.join(manifest::FILE_NAME).is_file())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

/// Loads every ladder folder under `profiles` (folders holding a `ladder.toml`).
pub fn load_ladders(
    store: &Store,
    profiles: &Path,
    report: &mut LoadReport,
) -> Result<Vec<Ladder>> {
    ladder_folders(store, profiles)?
        .iter()
        .map(|dir| load_ladder(store, dir, report))
        .collect()
}

/// The ladder folders under `profiles`, by name, none of them read; an error when
/// there is none.
pub fn ladder_folders(store: &Store, profiles: &Path) -> Result<Vec<PathBuf>> {
    let dirs: Vec<PathBuf> = store
        .subdirs(profiles)?
        .into_iter()
        .filter(|dir| store.exists(&dir.join(manifest::FILE_NAME)))
        .collect();
    if dirs.is_empty() {
        bail!(
            "no ladders in {}: a ladder is a folder holding {}",
            store.describe(profiles),
            manifest::FILE_NAME
        );
    }
    Ok(dirs)
}

/// A ladder folder's name and its versions' ids, from its manifest alone (its exports
/// unread): enough to find which ladder a command means.
pub fn ladder_ids(store: &Store, dir: &Path) -> Result<(String, Vec<String>)> {
    let manifest_path = dir.join(manifest::FILE_NAME);
    let m = Manifest::parse(&store.read_text(&manifest_path)?)
        .map_err(|e| anyhow!("{}: {}", store.describe(&manifest_path), e.message()))?;
    Ok((
        folder_name(dir),
        m.versions.into_iter().map(|v| v.id).collect(),
    ))
}

fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Loads one ladder folder. With a report that collects failures (`--keep-going`), a
/// version whose exports cannot be read loads without its profile.
pub fn load_ladder(store: &Store, dir: &Path, report: &mut LoadReport) -> Result<Ladder> {
    let manifest_path = dir.join(manifest::FILE_NAME);
    let text = store.read_text(&manifest_path)?;
    let m = Manifest::parse(&text)
        .map_err(|e| anyhow!("{}: {}", store.describe(&manifest_path), e.message()))?;
    let reference_shape = m
        .reference_shape
        .as_deref()
        .map(str::parse::<Shape>)
        .transpose()
        .map_err(|e| anyhow!("{}: {e}", store.describe(&manifest_path)))?;

    let runs_path = dir.join(runs::FILE_NAME);
    let run_file = RunFile::read(store, &runs_path)?;

    // Versions often share one report: parse each set of files once.
    let mut parsed: HashMap<Vec<String>, Vec<Profile>> = HashMap::new();
    let mut versions = Vec::with_capacity(m.versions.len());
    for entry in &m.versions {
        let at = |rel: &str| normalize(&dir.join(rel));
        let profile = if entry.files.is_empty() {
            None
        } else {
            if !parsed.contains_key(&entry.files) {
                let mut pages = Vec::new();
                for f in &entry.files {
                    let path = at(f);
                    let bytes = store.read(&path)?;
                    // A source page with its summary beside it is left unread.
                    if let Some(unread) = source::unread_pages(store, &path, &bytes) {
                        pages.extend(unread.into_iter().map(|(k, p)| source_page(k, &path, p)));
                        continue;
                    }
                    match ncu::parse_bytes(&path, &bytes) {
                        Ok(e) => pages.extend(pages_of(e)),
                        Err(e) => report.record(e)?,
                    }
                }
                parsed.insert(entry.files.clone(), merge_pages(pages));
            }
            pick_profile(&parsed[&entry.files], entry.kernel.as_deref(), entry.launch)
                .with_context(|| format!("version {} of {}", entry.id, store.describe(dir)))?
        };
        let notes = entry
            .notes
            .as_deref()
            .map(|n| store.read_text(&at(n)))
            .transpose()?;
        let source = entry
            .source
            .as_deref()
            .map(|s| Ok::<_, anyhow::Error>((at(s), store.read_text(&at(s))?)))
            .transpose()?;
        versions.push(Version {
            id: entry.id.clone(),
            title: entry.title.clone(),
            technique: entry.technique.clone(),
            baseline: entry.baseline,
            notes,
            source,
            profile,
            runs: run_file
                .runs
                .iter()
                .filter(|r| r.version == entry.id)
                .cloned()
                .collect(),
            flops: entry.flops,
        });
    }
    Ok(Ladder {
        name: folder_name(dir),
        title: m.title,
        problem: m.problem,
        flops: m.flops,
        peak_tflops: m.peak_tflops,
        reference_shape,
        versions,
        dir: Some(dir.to_path_buf()),
        store: store.clone(),
    })
}

/// The profile a version means: its exports' only launch, or the one its `kernel` and
/// `launch` keys pick; several left is an error that lists them.
fn pick_profile(
    profiles: &[Profile],
    kernel: Option<&str>,
    launch: Option<u64>,
) -> Result<Option<Profile>> {
    if profiles.is_empty() {
        return Ok(None);
    }
    pick_launch(
        profiles,
        kernel,
        launch,
        "`launch = ID` in its manifest entry",
    )
    .map(|p| Some(p.clone()))
}

/// The id a launch goes by: ncu's launch ID (from 0), or, on pages without one, its
/// position (from 0 too).
pub fn launch_key(profiles: &[Profile], i: usize) -> u64 {
    profiles[i].launch_id.unwrap_or(i as u64)
}

/// One launch line of a listing: id, short name, grid and block, duration.
pub fn describe_launch(profiles: &[Profile], i: usize) -> String {
    let p = &profiles[i];
    let duration = p
        .raw_value("gpu__time_duration.sum")
        .or_else(|| p.detail_value("GPU Speed Of Light Throughput", "Duration"))
        .map(|ns| format!("{:.2} µs", ns / 1e3))
        .unwrap_or_else(|| "duration unknown".into());
    let dims = |d: &Option<String>| d.clone().unwrap_or_else(|| "?".into());
    format!(
        "launch {:<5} {:<32} grid {} block {} · {duration}",
        launch_key(profiles, i),
        short_kernel_name(&p.kernel),
        dims(&p.launch.grid),
        dims(&p.launch.block),
    )
}

/// The one launch a command means among `profiles`: those whose kernel name contains
/// `kernel` and, with `launch`, the one of that id. Never the first of several: when
/// more than one is left, the error lists them and says how to pick (`how`).
pub fn pick_launch<'p>(
    profiles: &'p [Profile],
    kernel: Option<&str>,
    launch: Option<u64>,
    how: &str,
) -> Result<&'p Profile> {
    let matching: Vec<usize> = (0..profiles.len())
        .filter(|&i| kernel.is_none_or(|k| profiles[i].kernel.contains(k)))
        .filter(|&i| launch.is_none_or(|l| launch_key(profiles, i) == l))
        .collect();
    let list = |idx: &mut dyn Iterator<Item = usize>| {
        idx.map(|i| format!("  {}", describe_launch(profiles, i)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let wanted = match (kernel, launch) {
        (Some(k), Some(l)) => format!("kernel {k:?}, launch {l}"),
        (Some(k), None) => format!("kernel {k:?}"),
        (None, Some(l)) => format!("launch {l}"),
        (None, None) => "any kernel".into(),
    };
    match matching.as_slice() {
        [one] => Ok(&profiles[*one]),
        [] => bail!(
            "no launch matching {wanted}; the exports hold:\n{}",
            list(&mut (0..profiles.len()))
        ),
        many => bail!(
            "{} launches match {wanted}; pick one with {how}:\n{}",
            many.len(),
            list(&mut many.iter().copied())
        ),
    }
}

/// A ladder from loose export files: one version per kernel launch, in the order given
/// (pages of one report merged).
pub fn load_files(paths: &[PathBuf], report: &mut LoadReport) -> Result<Ladder> {
    let options = ncu::ReadOptions {
        partial: !report.strict,
        ..ncu::ReadOptions::default()
    };
    let mut exports = Vec::new();
    for path in paths {
        match ncu::read_file_with(path, &options) {
            Ok(mut e) => {
                report.warnings.append(&mut e.warnings);
                exports.push(e);
            }
            Err(e) => report.record(e)?,
        }
    }
    if exports.is_empty() {
        bail!("none of the files given could be read");
    }
    let profiles = merge_exports(exports);
    let versions = profiles
        .into_iter()
        .enumerate()
        .map(|(i, p)| Version {
            id: format!("{}", i + 1),
            title: short_kernel_name(&p.kernel),
            profile: Some(p),
            ..Version::default()
        })
        .collect();
    Ok(Ladder {
        name: "files".into(),
        title: if paths.len() == 1 {
            paths[0].display().to_string()
        } else {
            format!("{} files", paths.len())
        },
        problem: None,
        flops: None,
        peak_tflops: None,
        reference_shape: None,
        versions,
        dir: None,
        store: Store::Disk,
    })
}
