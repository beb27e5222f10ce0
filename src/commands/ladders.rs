//! The resolution every reading command shares: command-line paths and the profiles
//! folders turned into ladders (which folders, in which order, from disk or built in),
//! what was read in part reported at the end, and the run shape shown.

use crate::analysis::Shown;
use crate::cli::Common;
use crate::files::limits::SizeLimits;
use crate::model::{self, Ladder, LoadReport, LooseOptions, Store, manifest};
use crate::report::format;
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};

pub(super) fn load_report(common: &Common) -> LoadReport {
    LoadReport {
        keep_going: common.keep_going,
        strict: common.strict,
        ..LoadReport::default()
    }
}

/// Lists what was read in part, and what `--keep-going` let pass; false when anything
/// failed.
pub(super) fn finish(report: &LoadReport) -> bool {
    // Paths and names from a manifest or a folder name can hold control characters:
    // shown escaped, as every other message.
    for b in &report.broken {
        eprintln!("error: {}", format::printable_lines(&b.to_string()));
    }
    for w in &report.warnings {
        eprintln!("warning: {}", format::printable_lines(&w.to_string()));
    }
    for f in &report.failures {
        eprintln!("failed: {}", format::printable_lines(&f.to_string()));
    }
    if !report.failures.is_empty() {
        eprintln!("{} file(s) could not be read", report.failures.len());
    }
    report.failures.is_empty() && report.broken.is_empty()
}

/// The folder of ladders read first when no path is given (the built-in ones may follow
/// it: [`default_sources`]).
pub fn default_profiles(common: &Common) -> (Store, PathBuf) {
    let limits = common.size_limits();
    if let Some(dir) = &common.profiles {
        return (Store::disk(limits), dir.clone());
    }
    let local = PathBuf::from("profiles");
    if local.join(".").is_dir() && has_ladders(&local) {
        (Store::disk(limits), local)
    } else {
        let built_in = Store::embedded(limits);
        let dir = built_in.default_profiles();
        (built_in, dir)
    }
}

/// Where import, run and profile write.
pub fn writable_profiles(common: &Common) -> PathBuf {
    common
        .profiles
        .clone()
        .unwrap_or_else(|| PathBuf::from("profiles"))
}

/// The ladder folders read when no path is given, in order, each with its store: those
/// of `--profiles DIR` alone; else those of `./profiles`, then the built-in ones whose
/// names it does not hold (a local ladder stands in for the built-in one of its name);
/// else the built-in ones.
pub fn default_sources(common: &Common) -> Result<Vec<(Store, PathBuf)>> {
    let (store, dir) = default_profiles(common);
    let mut out: Vec<(Store, PathBuf)> = model::ladder_folders(&store, &dir)?
        .into_iter()
        .map(|d| (store.clone(), d))
        .collect();
    if store.is_disk() && common.profiles.is_none() {
        for d in built_in_folders(store.limits)? {
            if !out.iter().any(|(_, l)| l.file_name() == d.file_name()) {
                out.push((Store::embedded(store.limits), d));
            }
        }
    }
    Ok(out)
}

/// The built-in ladder folders (listed: `limits` read nothing here).
pub(super) fn built_in_folders(limits: SizeLimits) -> Result<Vec<PathBuf>> {
    let built_in = Store::embedded(limits);
    model::ladder_folders(&built_in, &built_in.default_profiles())
}

/// Marks a built-in ladder shown beside a local store's ("(built in)" after its title),
/// so that the two are told apart in every view and format.
pub(super) fn mark_built_in(ladder: &mut Ladder, sources: &[(Store, PathBuf)]) {
    let local = sources.iter().any(|(s, _)| s.is_disk());
    if local && ladder.store.is_embedded() {
        ladder.title = format!("{} (built in)", ladder.title);
    }
}

fn has_ladders(dir: &Path) -> bool {
    !model::ladder_dirs(dir).is_empty()
}

pub fn default_ladders(common: &Common, report: &mut LoadReport) -> Result<Vec<Ladder>> {
    let sources = default_sources(common)?;
    let before = report.broken.len();
    let loaded = model::load_folders(&sources, report);
    let mut ladders = model::at_least_one(loaded, report, before, || {
        let (store, dir) = default_profiles(common);
        store.describe(&dir)
    })?;
    for l in &mut ladders {
        mark_built_in(l, &sources);
    }
    Ok(ladders)
}

/// Turns command-line paths into ladders: export files (one loose ladder, in the order
/// given), ladder folders, profiles folders, or folders of exports; every file read
/// within `limits`.
/// `options` (`--kernel`, `--flops`) apply to the exports given or found in a folder: an
/// error where there are none.
pub fn resolve_paths(
    paths: &[PathBuf],
    limits: SizeLimits,
    options: &LooseOptions,
    report: &mut LoadReport,
) -> Result<Vec<Ladder>> {
    let mut ladders = Vec::new();
    let mut loose: Vec<PathBuf> = Vec::new();
    let flush = |loose: &mut Vec<PathBuf>, ladders: &mut Vec<Ladder>, report: &mut LoadReport| {
        if !loose.is_empty() {
            let files = expand_reports(loose, limits, report)?;
            if !files.is_empty() {
                ladders.push(model::load_files_with(&files, limits, options, report)?);
            }
            loose.clear();
        }
        Ok::<_, anyhow::Error>(())
    };
    for p in paths {
        if p.is_dir() {
            flush(&mut loose, &mut ladders, report)?;
            if p.join(manifest::FILE_NAME).is_file() {
                ladders.push(model::load_ladder(&Store::disk(limits), p, report)?);
            } else if has_ladders(p) {
                ladders.extend(model::load_ladders(&Store::disk(limits), p, report)?);
            } else {
                let files = expand_reports(&export_files(p, report)?, limits, report)?;
                ladders.push(model::load_files_with(&files, limits, options, report)?);
            }
        } else if p.exists() {
            loose.push(p.clone());
        } else {
            let e = crate::ncu::ParseError::file(p, "no such file or folder");
            if report.keep_going {
                report.failures.push(e);
            } else {
                return Err(e.into());
            }
        }
    }
    flush(&mut loose, &mut ladders, report)?;
    if ladders.is_empty() {
        bail!("nothing to show: none of the paths given could be read");
    }
    if !ladders.iter().any(|l| l.dir.is_none()) {
        loose_options_unused(options)?;
    }
    Ok(ladders)
}

/// The error for `--kernel` or `--flops` given where no export file is read (a ladder
/// keeps its kernel and FLOP count in its manifest).
pub(super) fn loose_options_unused(options: &LooseOptions) -> Result<()> {
    let given: Vec<&str> = [
        options.kernel.as_ref().map(|_| "--kernel"),
        options.flops.map(|_| "--flops"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.is_empty() {
        return Ok(());
    }
    let verb = if given.len() == 1 { "applies" } else { "apply" };
    bail!(
        "{} {verb} to export files given as paths, not to ladders (a ladder's manifest names its kernel and FLOP count)",
        given.join(" and ")
    )
}

/// The paths with each `.ncu-rep` report replaced by its pages; a report that cannot
/// be converted is a failure like an unreadable export (kept going past with
/// `--keep-going`).
fn expand_reports(
    paths: &[PathBuf],
    limits: SizeLimits,
    report: &mut LoadReport,
) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if !crate::nsight::reports::is_report(p) {
            out.push(p.clone());
            continue;
        }
        match crate::nsight::reports::pages_of(p, limits) {
            Ok(pages) => out.extend(pages),
            Err(e) if report.keep_going => report
                .failures
                .push(crate::ncu::ParseError::file(p, format!("{e:#}"))),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The ncu exports of a folder, found by their content whatever their names (`.csv`,
/// `.csv.gz`, `.log`, none), in name order, to be read as the same files given as
/// arguments are; the other files (a run's log of ncu's messages, notes, scripts) are
/// skipped, each with a warning saying what it is.
fn export_files(dir: &Path, report: &mut LoadReport) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let mut files = Vec::new();
    let mut others = Vec::new();
    for p in paths {
        if crate::nsight::reports::is_report(&p) {
            files.push(p);
            continue;
        }
        match crate::ncu::sniff_export(&p) {
            Ok(()) => files.push(p),
            Err(e) => others.push(e),
        }
    }
    if !files.is_empty() {
        for e in &others {
            report.warnings.push(crate::ncu::ParseError {
                message: format!("skipped, not an export: {}", e.message),
                ..e.clone()
            });
        }
    }
    if files.is_empty() {
        let found = match others.first() {
            None => String::new(),
            Some(first) => format!(" ({} other file(s); the first: {first})", others.len()),
        };
        bail!(
            "{} holds no ladder ({}) and no ncu exports{found}",
            dir.display(),
            manifest::FILE_NAME
        );
    }
    Ok(files)
}

/// The folder (and its store) of the ladder named `name` among `dirs`; an error naming
/// the others.
pub(super) fn named<'d>(
    dirs: &'d [(Store, PathBuf)],
    name: &str,
) -> Result<(&'d Store, &'d PathBuf)> {
    dirs.iter()
        .find(|(_, d)| d.file_name().is_some_and(|n| n == name))
        .map(|(s, d)| (s, d))
        .ok_or_else(|| {
            let names: Vec<String> = dirs
                .iter()
                .filter_map(|(_, d)| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            no_ladder(name, &names)
        })
}

/// The error for a ladder name that none of `names` is.
pub(super) fn no_ladder(name: &str, names: &[impl AsRef<str>]) -> anyhow::Error {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    anyhow!("no ladder named {name:?} (there are: {})", names.join(", "))
}

/// Loads the ladder folder `dir` alone; its error says which ladder cannot be read.
pub(super) fn load_one(store: &Store, dir: &Path, report: &mut LoadReport) -> Result<Ladder> {
    model::load_ladder(store, dir, report)
        .map_err(|e| anyhow!("{}", model::BrokenLadder::new(dir, &e)))
}

/// The run results to show of the ladders: those of `shape`, the user's `--shape`, else
/// the default; an error when none of them was run there (naming the shapes that were).
pub(super) fn shown_shape(
    ladders: &[Ladder],
    shape: Option<&crate::kinds::ShapeText>,
) -> Result<Shown> {
    let Some(text) = shape else {
        return Ok(Shown::DEFAULT);
    };
    let measured: Vec<model::Shape> = ladders.iter().flat_map(|l| l.measured_shapes()).collect();
    // The text names a shape in the kind of each ladder it is read against.
    let mut why = None;
    let mut named = None;
    for l in ladders {
        let Some(kind) = l.kind else { continue };
        match text.resolve(kind) {
            Ok(s) if measured.contains(&s) => return Ok(Shown::at(s)),
            Ok(s) => named = named.or(Some(s)),
            Err(e) => why = why.or(Some(e)),
        }
    }
    let s = match (named, why) {
        (Some(s), _) => s.to_string(),
        (None, Some(e)) if !measured.is_empty() => bail!("--shape {text}: {e}"),
        _ => text.to_string(),
    };
    if measured.is_empty() {
        let names: Vec<&str> = ladders.iter().map(|l| l.name.as_str()).collect();
        let none = match names.as_slice() {
            [one] => format!("{one} has no run results"),
            _ => format!("none of {} has run results", names.join(", ")),
        };
        bail!(
            "--shape {s}: {none}, at any shape (--shape picks among the shapes a ladder was run at)"
        );
    }
    let list: Vec<String> = measured.iter().map(|m| m.to_string()).collect();
    bail!(
        "no version was run at {s}; the run results are at: {}",
        list.join(", ")
    )
}
