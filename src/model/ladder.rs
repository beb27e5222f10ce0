//! Ladders and versions, loaded from a ladder folder (manifest plus exports) or from
//! loose export files given in order.

use super::manifest::{self, Manifest};
use super::merge::{merge_pages, pages_of, source_page};
use super::runs::{self, RunFile, RunResult, Shape};
use super::store::{Place, Store};
use super::trace::{self, TraceFile};
use super::{Profile, merge_exports, short_kernel_name, source, staging};
use crate::files::{self, confine::FileError, limits::SizeLimits};
use crate::kinds::Kind;
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
    /// The problem kind its runs solve: the manifest's `kind`, else its runs' kind, else
    /// (a manifest of before kinds naming a reference shape) attention's; none for a
    /// ladder of profiles alone.
    pub kind: Option<Kind>,
    pub reference_shape: Option<Shape>,
    /// The shape its ncu profiles were taken at (the manifest's `profile_shape`, else
    /// its reference shape), where known.
    pub profile_shape: Option<Shape>,
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
    /// The version this one was built on, where the manifest names one (else the
    /// previous version is its parent; see [`Ladder::parent_of`]).
    pub parent: Option<String>,
    /// Built on no version although versions come before it: the first launch of its
    /// kernel among loose exports (launches of different kernels are never parent and
    /// child).
    pub first_of_kernel: bool,
    /// The command ncu profiled into this version (`profile -- CMD`), to profile again.
    pub profiled_with: Option<super::manifest::ProfileCommand>,
    /// Its pipeline traces (`stallscope trace`), one per shape, by file name: the
    /// `trace-*.json.gz` files of its folder in the ladder folder, listed when the ladder
    /// loads and read when first asked for ([`Ladder::read_traces`]).
    pub traces: Vec<TraceFile>,
}

impl Version {
    /// The SASS listing of the version's profile, where it has a source page: its rows
    /// are read from the file the first time they are asked for; an error says why they
    /// cannot be.
    pub fn listing(&self) -> Option<Result<&crate::ncu::SourceListing, &str>> {
        Some(self.profile.as_ref()?.source.as_ref()?.listing())
    }

    /// Why the version's SASS listing could not be read, naming the version; `None`
    /// where it was read or there is none.
    pub fn listing_error(&self) -> Option<String> {
        Some(format!("{}: {}", self.id, self.listing()?.err()?))
    }

    /// The SASS listing where there is one and its rows can be read.
    pub fn readable_listing(&self) -> Option<&crate::ncu::SourceListing> {
        self.listing()?.ok()
    }

    /// Its trace file at `shape` (without one, its last), read or not.
    pub fn trace_at(&self, shape: Option<Shape>) -> Option<&TraceFile> {
        self.trace_index(shape).map(|i| &self.traces[i])
    }

    /// Where [`Version::trace_at`]'s file is in `traces`.
    fn trace_index(&self, shape: Option<Shape>) -> Option<usize> {
        match shape {
            Some(w) => self.traces.iter().position(|t| t.shape == w),
            None => self.traces.len().checked_sub(1),
        }
    }
}

/// Runs `work` on every item, on as many threads as the machine has cores (at most 8),
/// each thread taking the next item not yet taken (so a long item does not hold back
/// the others' share); on the caller's thread alone where there is one item or core.
fn on_threads<T: Send>(items: &mut [T], work: impl Fn(&mut T) + Sync) {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 8)
        .min(items.len());
    if threads <= 1 {
        items.iter_mut().for_each(work);
        return;
    }
    let queue = std::sync::Mutex::new(items.iter_mut());
    // The lock is held only while an item is taken (the guard is dropped inside `map`);
    // a poisoned queue means another thread panicked, which the scope passes on.
    let take = || queue.lock().map(|mut q| q.next()).unwrap_or(None);
    let run = || {
        while let Some(item) = take() {
            work(item);
        }
    };
    std::thread::scope(|s| {
        for _ in 1..threads {
            s.spawn(run);
        }
        run();
    });
}

/// What [`Ladder::read_traces`] did: how many trace files it read, and those that could
/// not be read, each a warning naming the file.
#[derive(Debug, Default)]
pub struct TracesRead {
    pub read: usize,
    pub failed: Vec<ParseError>,
}

impl Ladder {
    pub fn version(&self, id: &str) -> Option<&Version> {
        self.versions.iter().find(|v| v.id == id)
    }

    pub fn version_index(&self, id: &str) -> Option<usize> {
        self.versions.iter().position(|v| v.id == id)
    }

    /// Reads every version's trace at `shape` (without one, each version's last) that
    /// was not read yet, on as many threads as the machine has cores (at most 8); each is
    /// kept with the version, or why it could not be read. Loading a ladder lists its
    /// traces only: the views and reports that show them read them here first.
    pub fn read_traces(&mut self, shape: Option<Shape>) -> TracesRead {
        let store = &self.store;
        let mut unread: Vec<(&str, &mut TraceFile)> = self
            .versions
            .iter_mut()
            .filter_map(|v| {
                let i = v.trace_index(shape)?;
                let t = &mut v.traces[i];
                (!t.is_read()).then_some((v.id.as_str(), t))
            })
            .collect();
        on_threads(&mut unread, |(id, t)| {
            t.read(store, id);
        });
        let failed = unread
            .iter()
            .filter_map(|(id, t)| {
                Some(ParseError::file(
                    &t.path,
                    format!("{}; version {id} is shown without this trace", t.error()?),
                ))
            })
            .collect();
        TracesRead {
            read: unread.len(),
            failed,
        }
    }

    /// The version a version was built on (an index into `versions`): the one its
    /// manifest entry names, else the ladder's previous version. Baselines have none.
    pub fn parent_of(&self, i: usize) -> Option<usize> {
        let v = self.versions.get(i)?;
        if v.baseline || v.first_of_kernel {
            return None;
        }
        match &v.parent {
            // Parents come before their children, most often just before: looked for
            // from `i` back first, so a ladder of a thousand launches is walked in
            // linear time.
            Some(p) => (0..i)
                .rev()
                .chain(i..self.versions.len())
                .find(|&j| self.versions[j].id == *p),
            None => (0..i).rev().find(|&j| !self.versions[j].baseline),
        }
    }

    /// Why version `i` has no parent to be compared with, in a sentence: it is the
    /// ladder's first version, or a baseline.
    pub fn no_parent(&self, i: usize) -> String {
        let v = &self.versions[i];
        if v.first_of_kernel {
            let kernel = v.profile.as_ref().map_or("?".into(), |p| p.short_name());
            format!(
                "{} is the first launch of {kernel} in {}: launches of other kernels are not its parents",
                v.id, self.name
            )
        } else if v.baseline {
            format!(
                "{} is a baseline: it was built on no version of {}",
                v.id, self.name
            )
        } else {
            format!(
                "{} is the first version of {}: there is no earlier version to compare it with",
                v.id, self.name
            )
        }
    }

    /// Whether a version's parent is not the version before it (the ladder branches).
    pub fn branches_at(&self, i: usize) -> bool {
        let previous = (0..i).rev().find(|&j| !self.versions[j].baseline);
        self.parent_of(i) != previous
    }

    /// FLOP of one launch of a version.
    pub fn flops_of(&self, v: &Version) -> Option<f64> {
        v.flops.or(self.flops)
    }

    /// Every shape some version was run at: the reference first, then shapes without
    /// flags, then by size.
    pub fn measured_shapes(&self) -> Vec<Shape> {
        let mut out: Vec<Shape> = Vec::new();
        for r in self.versions.iter().flat_map(|v| &v.runs) {
            if !out.contains(&r.shape) {
                out.push(r.shape);
            }
        }
        let reference = self.reference_run_shape();
        out.sort_by(|a, b| {
            (Some(*a) != reference)
                .cmp(&(Some(*b) != reference))
                .then(a.size_order(b))
        });
        out
    }

    /// The reference shape, without flags.
    pub fn reference_run_shape(&self) -> Option<Shape> {
        self.reference_shape.map(Shape::unflagged)
    }
}

/// How loading treats unreadable exports: fail at the first (the default), or with
/// `--keep-going` collect them here and load the rest. Loose exports cut short in the
/// middle of a launch keep their complete launches, each with a warning here, unless
/// `strict` refuses them. A ladder of a profiles folder that cannot be read is listed
/// in `broken`, and the others load.
#[derive(Debug, Default)]
pub struct LoadReport {
    pub keep_going: bool,
    pub failures: Vec<ParseError>,
    pub strict: bool,
    pub warnings: Vec<ParseError>,
    pub broken: Vec<BrokenLadder>,
}

/// A ladder that could not be read, and why.
#[derive(Debug, Clone)]
pub struct BrokenLadder {
    /// Its folder name.
    pub name: String,
    pub error: String,
}

impl BrokenLadder {
    /// The ladder in folder `dir`, which could not be read for `error`.
    pub fn new(dir: &Path, error: &anyhow::Error) -> BrokenLadder {
        BrokenLadder {
            name: folder_name(dir),
            error: format!("{error:#}"),
        }
    }
}

impl std::fmt::Display for BrokenLadder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ladder {} cannot be read: {}", self.name, self.error)
    }
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

    /// Every broken ladder, failure and warning, one line each, for a status line.
    pub fn lines(&self) -> Vec<String> {
        let broken = self.broken.iter().map(|b| b.to_string());
        let failed = self.failures.iter().map(|f| format!("failed: {f}"));
        let warned = self.warnings.iter().map(|w| format!("warning: {w}"));
        broken.chain(failed).chain(warned).collect()
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

/// Loads every ladder folder under `profiles` (folders holding a `ladder.toml`); one
/// that cannot be read goes to `report.broken` and the others load.
pub fn load_ladders(
    store: &Store,
    profiles: &Path,
    report: &mut LoadReport,
) -> Result<Vec<Ladder>> {
    let before = report.broken.len();
    let folders: Vec<(Store, PathBuf)> = ladder_folders(store, profiles)?
        .into_iter()
        .map(|d| (store.clone(), d))
        .collect();
    let out = load_folders(&folders, report);
    at_least_one(out, report, before, || store.describe(profiles))
}

/// The ladders loaded, or an error naming the place (`where_`) and why each of its
/// folders broke (`report.broken` from `before` on) when none loaded.
pub fn at_least_one(
    ladders: Vec<Ladder>,
    report: &LoadReport,
    before: usize,
    where_: impl FnOnce() -> String,
) -> Result<Vec<Ladder>> {
    if ladders.is_empty() {
        let broken: Vec<String> = report.broken[before..]
            .iter()
            .map(|b| b.to_string())
            .collect();
        bail!(
            "no ladder of {} could be read: {}",
            where_(),
            broken.join("; ")
        );
    }
    Ok(ladders)
}

/// Loads ladder folders, each from its store, in the order given; one that cannot be
/// read goes to `report.broken` and the others load.
pub fn load_folders(folders: &[(Store, PathBuf)], report: &mut LoadReport) -> Vec<Ladder> {
    let mut out = Vec::new();
    for (store, dir) in folders {
        match load_ladder(store, dir, report) {
            Ok(l) => out.push(l),
            Err(e) => report.broken.push(BrokenLadder::new(dir, &e)),
        }
    }
    out
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
    let (_, m) = read_manifest(store, dir)?;
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

/// The manifest readers take: `ladder.toml`, or the one an import interrupted after
/// its swap left in the version folder ([`staging`]); its path as written, and its
/// content checked (syntax with line and column, version ids used once).
pub(crate) fn read_manifest(store: &Store, dir: &Path) -> Result<(PathBuf, Manifest)> {
    let pending = match store.place {
        Place::Disk => staging::pending_manifest(dir),
        Place::Embedded => None,
    };
    let rel = pending.as_deref().unwrap_or(manifest::FILE_NAME);
    let (path, text) = store.read_confined_text(dir, rel, &[dir.to_path_buf()])?;
    let m = Manifest::from_text(&store.describe(&path), &text)?;
    Ok((path, m))
}

/// The folders a ladder's manifest may name files in: the ladder folder, and the
/// kernels folder it declares, which must be the `kernels` folder beside the profiles
/// folder or one inside it ([`manifest::KERNELS_BESIDE`]), as written and on disk.
pub(crate) fn roots(store: &Store, dir: &Path, declared: Option<&str>) -> Result<Vec<PathBuf>> {
    let mut roots = vec![dir.to_path_buf()];
    let Some(k) = declared else {
        return Ok(roots);
    };
    let beside = dir.join(manifest::KERNELS_BESIDE);
    let bad = |why: String| {
        anyhow!(
            "{}: kernels = {k:?} {why}; a ladder declares the kernels folder beside its profiles folder, `kernels = {:?}`, or one inside it",
            store.describe(&dir.join(manifest::FILE_NAME)),
            manifest::KERNELS_BESIDE
        )
    };
    let lexical = files::confine::lexically(dir, k, std::slice::from_ref(&beside))
        .map_err(|e| bad(format!("is refused ({e})")))?;
    if store.is_disk()
        && let Ok(real) = std::fs::canonicalize(&lexical)
    {
        let inside = std::fs::canonicalize(&beside).is_ok_and(|b| real.starts_with(b));
        if !inside {
            return Err(bad(format!(
                "leads through a symbolic link to {}",
                real.display()
            )));
        }
    }
    roots.push(lexical);
    Ok(roots)
}

/// Loads one ladder folder. With a report that collects failures (`--keep-going`), a
/// version whose exports cannot be read loads without its profile; a version whose
/// notes or source cannot be read loads without them, with a warning.
pub fn load_ladder(store: &Store, dir: &Path, report: &mut LoadReport) -> Result<Ladder> {
    let (manifest_path, m) = read_manifest(store, dir)?;
    let shown = store.describe(&manifest_path);
    // An import under way (its lock held) is between its swap and its last rename: the
    // ladder reads as it will be, and there is nothing to warn of.
    if manifest_path.file_name() != Some(std::ffi::OsStr::new(manifest::FILE_NAME))
        && !staging::pending_is_live(dir, &manifest_path)
    {
        report.warnings.push(ParseError::file(
            &manifest_path,
            "an import was interrupted after it swapped its version in: the ladder is read with the manifest it left, which the next import or run puts in place",
        ));
    }
    let named_kind = m
        .kind
        .as_deref()
        .map(Kind::named)
        .transpose()
        .map_err(|e| anyhow!("{shown}: {e}"))?;
    let reference_shape = m
        .parsed_reference_shape()
        .map_err(|e| anyhow!("{shown}: {e}"))?;
    let profile_shape = m
        .parsed_profile_shape()
        .map_err(|e| anyhow!("{shown}: {e}"))?;
    let roots = roots(store, dir, m.kernels.as_deref())?;

    let runs_path = dir.join(runs::FILE_NAME);
    let run_file = RunFile::read(store, &runs_path)?;

    let kind = named_kind
        .or(run_file.runs.first().map(|r| r.shape.kind()))
        .or(reference_shape.map(|s| s.kind()));
    let at = Folder {
        store,
        dir,
        roots: &roots,
        manifest_path: &manifest_path,
    };
    // Versions often share one report: parse each set of files once, the sets side by
    // side, their failures recorded in manifest order as if read one after the other.
    let mut read = at.pages_of_every_set(&m.versions);
    let mut parsed: HashMap<&[String], Vec<Profile>> = HashMap::new();
    let mut versions = Vec::with_capacity(m.versions.len());
    for entry in &m.versions {
        let profile = if entry.files.is_empty() {
            None
        } else {
            if let Some(PagesRead { pages, failures }) = read.remove(entry.files.as_slice()) {
                for f in failures {
                    report.record(f)?;
                }
                parsed.insert(&entry.files, merge_pages(pages));
            }
            pick_profile(
                &parsed[entry.files.as_slice()],
                entry.kernel.as_deref(),
                entry.launch,
            )
            .with_context(|| format!("version {} of {}", entry.id, store.describe(dir)))?
        };
        for w in profile.iter().flat_map(|p| &p.warnings) {
            report.warnings.push(ParseError::file(
                &manifest_path,
                format!("version {}: {w}", entry.id),
            ));
        }
        let notes = at
            .text(entry, "notes", entry.notes.as_deref(), report)
            .map(|(_, t)| t);
        let source = at.text(entry, "source", entry.source.as_deref(), report);
        let traces = at.traces(entry, kind, report);
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
            parent: entry.parent.clone(),
            first_of_kernel: false,
            profiled_with: entry.profile.clone(),
            traces,
        });
    }
    if let Some(problem) = m.parent_problems().first() {
        bail!("{}: {problem}", store.describe(&manifest_path));
    }
    Ok(Ladder {
        name: folder_name(dir),
        title: m.title,
        problem: m.problem,
        flops: m.flops,
        peak_tflops: m.peak_tflops,
        kind,
        reference_shape,
        profile_shape,
        versions,
        dir: Some(dir.to_path_buf()),
        store: store.clone(),
    })
}

/// A ladder folder being loaded: where its manifest names files from, and the manifest
/// that names them (errors are said of its entries).
struct Folder<'a> {
    store: &'a Store,
    dir: &'a Path,
    roots: &'a [PathBuf],
    manifest_path: &'a Path,
}

/// The pages read of one set of export files, and the files that could not be read or
/// parsed.
struct PagesRead {
    pages: Vec<Profile>,
    failures: Vec<ParseError>,
}

impl Folder<'_> {
    /// [`Folder::pages`] of every distinct set of files the entries name, read on as many
    /// threads as the machine has cores (at most 8): the exports of a ladder are parsed
    /// side by side.
    fn pages_of_every_set<'e>(
        &self,
        entries: &'e [manifest::VersionEntry],
    ) -> HashMap<&'e [String], PagesRead> {
        let mut seen = std::collections::HashSet::new();
        let mut sets: Vec<(&manifest::VersionEntry, Option<PagesRead>)> = entries
            .iter()
            .filter(|e| !e.files.is_empty() && seen.insert(e.files.as_slice()))
            .map(|e| (e, None))
            .collect();
        on_threads(&mut sets, |(entry, read)| *read = Some(self.pages(entry)));
        sets.into_iter()
            .filter_map(|(e, read)| Some((e.files.as_slice(), read?)))
            .collect()
    }

    /// The pages of a version's export files, unmerged: a source page with its summary
    /// beside it is left unread; a file that cannot be read or parsed is among the
    /// failures, the others read all the same.
    fn pages(&self, entry: &manifest::VersionEntry) -> PagesRead {
        let (store, dir, roots) = (self.store, self.dir, self.roots);
        let mut pages = Vec::new();
        let mut failures = Vec::new();
        for f in &entry.files {
            let (path, bytes) = match store
                .read_confined(dir, f, roots)
                .map_err(|e| named_file_error(self.manifest_path, &entry.id, "files", e))
            {
                Ok(read) => read,
                Err(e) => {
                    failures.push(e);
                    continue;
                }
            };
            let summary = store.read_confined(dir, &source::summary_name(f), roots);
            if let Some(unread) = summary
                .ok()
                .and_then(|(_, s)| source::unread_pages(store, &path, &bytes, &s))
            {
                pages.extend(unread.into_iter().map(|(k, p)| source_page(k, &path, p)));
                continue;
            }
            match ncu::parse_bytes_with(&path, &bytes, &store.export_options()) {
                Ok(e) => pages.extend(pages_of(e)),
                Err(e) => failures.push(e),
            }
        }
        PagesRead { pages, failures }
    }

    /// The trace files in the version's folder, listed by name and not read (a view or
    /// report that shows one reads it: [`Ladder::read_traces`]); one whose name says no
    /// shape of the ladder's `kind` is a warning, and the version loads without it.
    fn traces(
        &self,
        entry: &manifest::VersionEntry,
        kind: Option<Kind>,
        report: &mut LoadReport,
    ) -> Vec<TraceFile> {
        let (found, failed) = trace::listed_traces(self.store, self.dir, &entry.id, kind);
        for (path, why) in failed {
            report.warnings.push(ParseError::file(
                &path,
                format!("{why}; version {} loads without this trace", entry.id),
            ));
        }
        found
    }

    /// A text file a version's entry names under `key` (its notes, its source), with its
    /// path; `None`, with a warning, where it cannot be read: the version loads without.
    fn text(
        &self,
        entry: &manifest::VersionEntry,
        key: &str,
        rel: Option<&str>,
        report: &mut LoadReport,
    ) -> Option<(PathBuf, String)> {
        let rel = rel?;
        match self.store.read_confined_text(self.dir, rel, self.roots) {
            Ok(read) => Some(read),
            Err(e) => {
                let mut w = named_file_error(self.manifest_path, &entry.id, key, e);
                w.message
                    .push_str(&format!("; version {} loads without it", entry.id));
                report.warnings.push(w);
                None
            }
        }
    }
}

/// An error of [`files`] (`PATH: reason`) as a parse error of that file.
fn file_error(path: &Path, e: anyhow::Error) -> ParseError {
    let text = format!("{e:#}");
    let prefix = format!("{}: ", path.display());
    ParseError::file(path, text.strip_prefix(&prefix).unwrap_or(&text))
}

/// A file a manifest names that cannot be read, said of its version and key.
pub(crate) fn named_file_error(
    manifest_path: &Path,
    version: &str,
    key: &str,
    e: FileError,
) -> ParseError {
    ParseError::file(manifest_path, format!("version {version}, {key}: {e}"))
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

/// One launch's cells in a listing: id, short name, grid, block, duration.
fn launch_cells(profiles: &[Profile], i: usize) -> [String; 5] {
    let p = &profiles[i];
    let duration = p
        .duration_ns()
        .map(|ns| format!("{:.2} µs", ns / 1e3))
        .unwrap_or_else(|| "unknown".into());
    let dims = |d: &Option<String>| d.clone().unwrap_or_else(|| "?".into());
    [
        launch_key(profiles, i).to_string(),
        short_kernel_name(&p.kernel),
        dims(&p.launch.grid),
        dims(&p.launch.block),
        duration,
    ]
}

/// The widest a kernel's short name is shown in a listing of launches: a longer one is
/// cut (the launch ID is what picks it).
const LISTED_NAME_W: usize = 48;

/// Launches `idx` of `profiles` as a table under a header, two spaces in, each column
/// as wide as its widest cell (names cut at [`LISTED_NAME_W`]), ids and durations
/// aligned right.
pub fn launch_table(profiles: &[Profile], idx: &[usize]) -> String {
    use crate::text_width::{cut, width};
    let head = ["launch", "kernel", "grid", "block", "duration"].map(String::from);
    let rows: Vec<[String; 5]> = std::iter::once(head)
        .chain(idx.iter().map(|&i| {
            let mut c = launch_cells(profiles, i);
            c[1] = cut(&c[1], LISTED_NAME_W);
            c
        }))
        .collect();
    let widths: Vec<usize> = (0..5)
        .map(|c| rows.iter().map(|r| width(&r[c])).max().unwrap_or(0))
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, text)| {
                    let pad = " ".repeat(widths[c] - width(text));
                    match c {
                        0 | 4 => format!("{pad}{text}"),
                        _ => format!("{text}{pad}"),
                    }
                })
                .collect();
            format!("  {}", cells.join("  ").trim_end())
        })
        .collect::<Vec<_>>()
        .join("\n")
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
    let wanted = match (kernel, launch) {
        (Some(k), Some(l)) => Some(format!("kernel {k:?}, launch {l}")),
        (Some(k), None) => Some(format!("kernel {k:?}")),
        (None, Some(l)) => Some(format!("launch {l}")),
        (None, None) => None,
    };
    let all: Vec<usize> = (0..profiles.len()).collect();
    match (matching.as_slice(), wanted) {
        ([one], _) => Ok(&profiles[*one]),
        ([], Some(wanted)) => bail!(
            "no launch matching {wanted}; the exports hold:\n{}",
            launch_table(profiles, &all)
        ),
        ([], None) => bail!("the exports hold no launch"),
        (many, Some(wanted)) => bail!(
            "{} launches match {wanted}; pick one with {how}:\n{}",
            many.len(),
            launch_table(profiles, many)
        ),
        (many, None) => bail!(
            "the exports hold {} launches; pick one with {how}:\n{}",
            many.len(),
            launch_table(profiles, many)
        ),
    }
}

/// The versions of loose exports, one per launch in order: each launch's parent is the
/// launch of the same kernel before it. The first launch of a kernel is built on the
/// version before it only where that one was read from other files (files given in
/// order are a ladder's versions); launches of different kernels in one file never are.
fn loose_versions(profiles: Vec<Profile>) -> Vec<Version> {
    let mut last_of: HashMap<String, String> = HashMap::new();
    let mut versions: Vec<Version> = Vec::with_capacity(profiles.len());
    for (i, p) in profiles.into_iter().enumerate() {
        let id = format!("{}", i + 1);
        let parent = last_of.insert(p.kernel.clone(), id.clone());
        let shares_file = versions
            .last()
            .and_then(|v| v.profile.as_ref())
            .is_some_and(|q| {
                q.pages
                    .iter()
                    .any(|(_, a)| p.pages.iter().any(|(_, b)| a == b))
            });
        versions.push(Version {
            first_of_kernel: parent.is_none() && shares_file,
            parent,
            id,
            title: super::default_title(&p.kernel),
            profile: Some(p),
            ..Version::default()
        });
    }
    versions
}

/// What the command line asks of loose export files: which kernels' launches to keep
/// (`--kernel`) and the FLOP count of one launch (`--flops`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LooseOptions {
    /// A part of the kernel's full or short demangled name, or `regex:RE` (ncu's `-k`).
    pub kernel: Option<String>,
    /// FLOP of one launch: every version's TFLOPS (ncu) is read from it.
    pub flops: Option<f64>,
}

impl LooseOptions {
    /// Neither option given.
    pub fn is_empty(&self) -> bool {
        self.kernel.is_none() && self.flops.is_none()
    }
}

/// A `--kernel` filter: a part of the name, or a regular expression after `regex:`.
enum KernelFilter {
    Part(String),
    Regex(regex::Regex),
}

impl KernelFilter {
    fn parse(text: &str) -> Result<KernelFilter> {
        match text.strip_prefix("regex:") {
            Some(re) => regex::Regex::new(re)
                .map(KernelFilter::Regex)
                .map_err(|e| anyhow!("--kernel {text}: not a regular expression: {e}")),
            None if text.is_empty() => bail!("--kernel needs a part of a kernel's name"),
            None => Ok(KernelFilter::Part(text.to_string())),
        }
    }

    /// The kernel's full demangled name, or its short one, matches.
    fn matches(&self, kernel: &str) -> bool {
        let short = short_kernel_name(kernel);
        match self {
            KernelFilter::Part(p) => kernel.contains(p.as_str()) || short.contains(p.as_str()),
            KernelFilter::Regex(r) => r.is_match(kernel) || r.is_match(&short),
        }
    }
}

/// The launches of `profiles` whose kernel `filter` matches; none is an error naming
/// the kernels the files hold, with their launches.
fn filter_kernels(profiles: Vec<Profile>, text: &str) -> Result<Vec<Profile>> {
    let filter = KernelFilter::parse(text)?;
    let mut held: Vec<(String, usize)> = Vec::new();
    for p in &profiles {
        let short = short_kernel_name(&p.kernel);
        match held.iter_mut().find(|(k, _)| *k == short) {
            Some((_, n)) => *n += 1,
            None => held.push((short, 1)),
        }
    }
    let kept: Vec<Profile> = profiles
        .into_iter()
        .filter(|p| filter.matches(&p.kernel))
        .collect();
    if kept.is_empty() {
        let list: Vec<String> = held
            .iter()
            .map(|(k, n)| match n {
                1 => format!("  {k}"),
                n => format!("  {k} ({n} launches)"),
            })
            .collect();
        bail!(
            "--kernel {text} matches no kernel; the files hold:\n{}",
            list.join("\n")
        );
    }
    Ok(kept)
}

/// A ladder from loose export files: one version per kernel launch, in the order given
/// (pages of one report merged), each file read and inflated within `limits`.
pub fn load_files(
    paths: &[PathBuf],
    limits: SizeLimits,
    report: &mut LoadReport,
) -> Result<Ladder> {
    load_files_with(paths, limits, &LooseOptions::default(), report)
}

/// [`load_files`], keeping only the launches of the kernels `loose.kernel` names, each
/// version given `loose.flops`.
pub fn load_files_with(
    paths: &[PathBuf],
    limits: SizeLimits,
    loose: &LooseOptions,
    report: &mut LoadReport,
) -> Result<Ladder> {
    let filter = loose.kernel.as_deref();
    let options = ncu::ReadOptions {
        partial: !report.strict,
        ..ncu::ReadOptions::within(limits)
    };
    let mut exports = Vec::new();
    let before = report.failures.len();
    for path in paths {
        let read = files::read::given(path, limits.max_file_size)
            .map_err(|e| file_error(path, e))
            .and_then(|bytes| ncu::parse_bytes_with(path, &bytes, &options));
        match read {
            Ok(mut e) => {
                report.warnings.append(&mut e.warnings);
                exports.push(e);
            }
            Err(e) => report.record(e)?,
        }
    }
    if exports.is_empty() {
        let reasons: Vec<String> = report.failures[before..]
            .iter()
            .map(|f| f.to_string())
            .collect();
        bail!(
            "none of the {} file(s) given could be read: {}",
            paths.len(),
            reasons.join("; ")
        );
    }
    let mut profiles = merge_exports(exports);
    if let Some(k) = filter {
        profiles = filter_kernels(profiles, k)?;
    }
    for p in &profiles {
        if let Some((_, path)) = p.pages.first() {
            for w in &p.warnings {
                report.warnings.push(ParseError::file(path, w.clone()));
            }
        }
    }
    let versions = loose_versions(profiles);
    Ok(Ladder {
        name: "files".into(),
        title: {
            let files = if paths.len() == 1 {
                paths[0].display().to_string()
            } else {
                format!("{} files", paths.len())
            };
            match filter {
                Some(k) => format!("{files}, kernel {k}"),
                None => files,
            }
        },
        problem: None,
        flops: loose.flops,
        peak_tflops: None,
        kind: None,
        reference_shape: None,
        profile_shape: None,
        versions,
        dir: None,
        store: Store::disk(limits),
    })
}
