//! Adding exports to a ladder on disk: every file is checked first, then the whole
//! version (its compressed exports and the ladder's new manifest) is staged beside the
//! old one and swapped in ([`super::staging`]), under the ladder's lock, so that the
//! version is all old or all new whenever the import stops. Existing exports are never
//! replaced without `force`.

use crate::files::{self, limits::SizeLimits};
use crate::model::{
    self,
    manifest::{self, Manifest, VersionEntry},
    short_kernel_name,
    staging::{self, NewFile},
};
use crate::ncu;
use anyhow::{Context, Result, bail};
use flate2::{Compression, write::GzEncoder};
use std::io::Write as _;
use std::path::{Path, PathBuf};

pub struct Request<'a> {
    pub profiles: &'a Path,
    pub ladder: Option<&'a str>,
    pub version: &'a str,
    pub title: Option<&'a str>,
    pub kernel: Option<&'a str>,
    /// Which launch (ncu's launch ID), where several match `kernel`.
    pub launch: Option<u64>,
    pub baseline: bool,
    pub files: &'a [PathBuf],
    pub force: bool,
    /// FLOP of one launch, written to the version's manifest entry.
    pub flops: Option<f64>,
    /// The ceiling "% of ceiling" is measured against, written to the ladder's manifest.
    pub peak_tflops: Option<f64>,
    /// What a forced re-import keeps of the version's old entry besides what is given
    /// again (`--keep`).
    pub keep: &'a [Keep],
    /// How much of each file is read and inflated: the exports given, and the ladder's
    /// manifest.
    pub limits: SizeLimits,
}

/// A key of a version's entry that an import writes (from a flag or by default) and a
/// forced re-import keeps only when told: the new exports may be another kernel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Keep {
    /// The version's title.
    Title,
    /// The version's FLOP count (`--flops`).
    Flops,
    /// The version's baseline mark (`--baseline`).
    Baseline,
}

impl Keep {
    pub const ALL: &[Keep] = &[Keep::Title, Keep::Flops, Keep::Baseline];
}

impl<'a> Request<'a> {
    /// The pages `stallscope profile` exported of `version`: no title, kernel or launch
    /// chosen (the exports name one kernel), replacing the version's exports when `force`
    /// and keeping its title, FLOP count and baseline mark (the same program profiled
    /// again); the files read within `limits`.
    pub fn profiled(
        profiles: &'a Path,
        ladder: Option<&'a str>,
        version: &'a str,
        files: &'a [PathBuf],
        force: bool,
        limits: SizeLimits,
    ) -> Request<'a> {
        Request {
            profiles,
            ladder,
            version,
            title: None,
            kernel: None,
            launch: None,
            baseline: false,
            files,
            force,
            flops: None,
            peak_tflops: None,
            keep: Keep::ALL,
            limits,
        }
    }
}

/// Imports a recipe version's profile, then writes the recipe's entry of it (title,
/// notes, source: `entries` for the ladder folder) into the ladder's manifest.
pub fn import_recipe_profile(
    req: &Request,
    defaults: &Manifest,
    entries: impl FnOnce(&Path) -> Vec<VersionEntry>,
    order: &[&str],
) -> Result<Imported> {
    let done = import(req)?;
    let dir = imported_ladder(&done);
    manifest::record_versions(dir, defaults, &entries(dir), order, req.limits)?;
    Ok(done)
}

/// Imports a command's profile, then stores the command with the version so that it can
/// be profiled again.
pub fn import_command_profile(
    req: &Request,
    command: &manifest::ProfileCommand,
) -> Result<Imported> {
    let done = import(req)?;
    manifest::record_profile_command(imported_ladder(&done), req.version, command, req.limits)?;
    Ok(done)
}

/// The ladder folder an import wrote into (its version folder's parent).
fn imported_ladder(done: &Imported) -> &Path {
    done.dir.parent().unwrap_or(Path::new("."))
}

/// What an import did, for the user.
pub struct Imported {
    pub dir: PathBuf,
    pub files: Vec<(String, ncu::PageKind)>,
    pub kernel: String,
    /// What a forced re-import changed of the version's entry beside its exports, and
    /// what it changed beyond the version (the ladder's ceiling): one line each.
    pub changes: Vec<String>,
}

impl std::fmt::Display for Imported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.files.iter().map(|(_, k)| k.name()).collect();
        write!(
            f,
            "imported {} file(s) into {} ({}; kernel {})",
            self.files.len(),
            self.dir.display(),
            kinds.join(", "),
            self.kernel
        )?;
        for c in &self.changes {
            write!(f, "\n  {c}")?;
        }
        Ok(())
    }
}

/// The longest version id: its folder's name, with the staging suffix an import adds
/// beside it, stays within a file system's 255 bytes.
pub const MAX_VERSION_ID: usize = 200;

/// A version id names a folder: letters, digits, '-', '_' or '.', not starting with '.',
/// not holding the staging mark, at most [`MAX_VERSION_ID`] bytes. The error says which
/// rule the id breaks.
fn check_version_id(id: &str) -> Result<()> {
    let broken = if id.is_empty() {
        "is empty".to_string()
    } else if let Some(c) = id
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
    {
        format!("holds {c:?}: a version id is letters, digits, '-', '_' or '.'")
    } else if id.starts_with('.') {
        "starts with '.'".to_string()
    } else if id.contains(".staging-") {
        "holds \".staging-\", which marks an import in progress".to_string()
    } else if id.len() > MAX_VERSION_ID {
        format!(
            "is {} bytes long; at most {MAX_VERSION_ID} are allowed",
            id.len()
        )
    } else {
        return Ok(());
    };
    // A long id is quoted by its start.
    let quoted: String = id.chars().take(60).collect();
    let more = if quoted.len() < id.len() { "…" } else { "" };
    bail!("version id {quoted:?}{more} {broken} (it names a folder)")
}

/// Imports the exports `req` names as one version of a ladder: every file read and
/// checked first, then the version staged and swapped in under the ladder's lock.
pub fn import(req: &Request) -> Result<Imported> {
    check_version_id(req.version)?;
    // Read everything first: nothing is written unless every file is an ncu export.
    let exports = read_exports(req.files, req.limits)?;
    let profile = model::pick_launch(&exports.profiles, req.kernel, req.launch, "--launch ID")?;
    let kernel = short_kernel_name(&profile.kernel);
    let launch = launch_named(&exports.profiles, profile);
    check_figures(req)?;

    let ladder_dir = ladder_dir(req.profiles, req.ladder)?;
    files::confine::create_dir(req.profiles, &ladder_dir)?;
    let _lock = files::lock::Lock::acquire(&ladder_dir)?;
    staging::recover(&ladder_dir)?;
    let mut edit = open_manifest(&ladder_dir, req.limits)?;
    files::fault::point("the manifest read");
    let m = &mut edit.manifest;

    let version_dir = ladder_dir.join(req.version);
    let names = export_names(req.files)?;
    let existing = m.versions.iter().find(|v| v.id == req.version);
    if !req.force {
        refuse_to_replace(req, existing, &names, &ladder_dir)?;
    }
    let new_files = new_files(exports.contents, &names, &exports.summaries)?;
    let replaced = replaced_files(req.version, existing);
    let (entry, mut changes) = version_entry(req, existing, &names, &kernel, launch, profile);
    if let Some(peak) = req.peak_tflops {
        changes.extend(ceiling_change(m, req.version, peak, &ladder_dir));
        m.peak_tflops = req.peak_tflops;
    }
    match m.version_mut(req.version) {
        Some(v) => *v = entry,
        None => m.versions.push(entry),
    }
    staging::swap_in(
        &ladder_dir,
        req.version,
        &new_files,
        &replaced,
        &edit.render(),
    )?;

    Ok(Imported {
        dir: version_dir,
        files: names
            .into_iter()
            .zip(profile.pages.iter().map(|(k, _)| *k))
            .collect(),
        kernel,
        changes,
    })
}

/// The files of an import as read: their bytes, the summaries of their source pages,
/// and the launches they hold.
struct Exports {
    contents: Vec<Vec<u8>>,
    summaries: Vec<Vec<(String, ncu::SourceSummary)>>,
    profiles: Vec<model::Profile>,
}

/// Reads and parses every file given within `limits`; an error at the first that is no
/// ncu export, or where the files hold no kernel launch.
fn read_exports(given: &[PathBuf], limits: SizeLimits) -> Result<Exports> {
    let mut exports = Vec::new();
    let mut contents = Vec::new();
    for f in given {
        let bytes = files::read::given(f, limits.max_file_size)?;
        exports.push(ncu::parse_bytes_with(
            f,
            &bytes,
            &ncu::ReadOptions::within(limits),
        )?);
        contents.push(bytes.into_vec());
    }
    let summaries: Vec<_> = exports.iter().map(model::source::summaries).collect();
    let profiles = model::merge_exports(exports);
    if profiles.is_empty() {
        bail!("the files hold no kernel launch");
    }
    Ok(Exports {
        contents,
        summaries,
        profiles,
    })
}

/// Where the files hold several launches, the manifest names the one picked by its id,
/// so that loading never has to guess.
fn launch_named(profiles: &[model::Profile], picked: &model::Profile) -> Option<u64> {
    (profiles.len() > 1).then(|| {
        let i = profiles
            .iter()
            .position(|p| std::ptr::eq(p, picked))
            .expect("picked from these");
        model::launch_key(profiles, i)
    })
}

/// `--flops` and `--peak-tflops`, where given, are positive numbers.
fn check_figures(req: &Request) -> Result<()> {
    for (what, v) in [("--flops", req.flops), ("--peak-tflops", req.peak_tflops)] {
        if let Some(x) = v
            && !(x.is_finite() && x > 0.0)
        {
            bail!("{what} must be a positive number, not {x}");
        }
    }
    Ok(())
}

/// The ladder's manifest to edit, read within `limits`; a new one (titled by the folder)
/// where there is none.
fn open_manifest(ladder_dir: &Path, limits: SizeLimits) -> Result<manifest::Edit> {
    let defaults = Manifest {
        title: ladder_dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        ..Manifest::default()
    };
    manifest::Edit::open(ladder_dir, Some(&defaults), limits)
}

/// The names the exports are stored under in the version folder (each compressed,
/// `.gz`); an error where two are alike or one starts with '.'.
fn export_names(given: &[PathBuf]) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for f in given {
        let name = f
            .file_name()
            .with_context(|| format!("{} has no file name", f.display()))?
            .to_string_lossy()
            .into_owned();
        let name = if name.ends_with(".gz") {
            name
        } else {
            format!("{name}.gz")
        };
        if names.contains(&name) {
            bail!("two files given are both named {name}: rename one");
        }
        if name.starts_with('.') {
            bail!("{name}: an export's name must not start with '.'");
        }
        names.push(name);
    }
    Ok(names)
}

/// Without `--force`: an error where the version already has exports, or a file of
/// that name is already in its folder.
fn refuse_to_replace(
    req: &Request,
    existing: Option<&VersionEntry>,
    names: &[String],
    ladder_dir: &Path,
) -> Result<()> {
    let version_dir = ladder_dir.join(req.version);
    if let Some(v) = existing.filter(|v| !v.files.is_empty()) {
        bail!(
            "version {} of {} already has exports ({}); use --force to replace them",
            req.version,
            ladder_dir.display(),
            v.files.join(", ")
        );
    }
    if let Some(n) = names.iter().find(|n| version_dir.join(n).exists()) {
        bail!(
            "{} already exists; use --force to replace it",
            version_dir.join(n).display()
        );
    }
    Ok(())
}

/// The version folder's new files: each export compressed (unless it was), with its
/// source page's summary beside it.
fn new_files(
    contents: Vec<Vec<u8>>,
    names: &[String],
    summaries: &[Vec<(String, ncu::SourceSummary)>],
) -> Result<Vec<NewFile>> {
    let mut new_files = Vec::new();
    for ((bytes, name), summaries) in contents.into_iter().zip(names).zip(summaries) {
        let data = if bytes.starts_with(&[0x1f, 0x8b]) {
            bytes
        } else {
            let mut gz = GzEncoder::new(Vec::new(), Compression::best());
            gz.write_all(&bytes)?;
            gz.finish()?
        };
        // The source page's summary beside it: the ladder then loads without reading it.
        if !summaries.is_empty() {
            new_files.push(NewFile {
                name: model::source::summary_name(name),
                data: model::source::summary_json(&data, summaries).into_bytes(),
            });
        }
        new_files.push(NewFile {
            name: name.clone(),
            data,
        });
    }
    Ok(new_files)
}

/// The old entry's exports in the version folder, and their summaries: they are
/// replaced; its other files stay.
fn replaced_files(version: &str, existing: Option<&VersionEntry>) -> Vec<String> {
    let prefix = format!("{version}/");
    existing
        .map(|v| {
            v.files
                .iter()
                .filter_map(|f| f.strip_prefix(&prefix))
                .filter(|f| !f.contains('/'))
                .flat_map(|f| [f.to_string(), model::source::summary_name(f)])
                .collect()
        })
        .unwrap_or_default()
}

/// The version's manifest entry after the import, and what a forced re-import changed
/// of the old one (one line each).
fn version_entry(
    req: &Request,
    existing: Option<&VersionEntry>,
    names: &[String],
    kernel: &str,
    launch: Option<u64>,
    profile: &model::Profile,
) -> (VersionEntry, Vec<String>) {
    let files: Vec<String> = names
        .iter()
        .map(|n| format!("{}/{n}", req.version))
        .collect();
    let default_title = model::default_title(&profile.kernel);
    match existing.filter(|v| req.force && !v.files.is_empty()) {
        // A forced re-import: the new exports may be another launch, of another kernel.
        // What the old import wrote goes; what the user set by hand stays only when
        // given again or kept with --keep; the notes, source, technique and parent
        // (never written by an import) stay.
        Some(old) => {
            let entry = replaced_entry(req, old, files, kernel, launch, default_title);
            let changes = replacement_changes(old, &entry, req.keep);
            (entry, changes)
        }
        None => {
            let entry = VersionEntry {
                id: req.version.to_string(),
                title: req
                    .title
                    .map(str::to_string)
                    .or_else(|| existing.map(|v| v.title.clone()))
                    .unwrap_or(default_title),
                files,
                kernel: req
                    .kernel
                    .map(str::to_string)
                    .or_else(|| Some(kernel.to_string())),
                launch,
                baseline: req.baseline || existing.is_some_and(|v| v.baseline),
                flops: req.flops.or(existing.and_then(|v| v.flops)),
                ..existing.cloned().unwrap_or_default()
            };
            (entry, Vec::new())
        }
    }
}

/// What `--peak-tflops` changes beyond the version, where it changes the ladder's
/// ceiling: every version's "% of ceiling" changes with it.
fn ceiling_change(m: &Manifest, version: &str, peak: f64, ladder_dir: &Path) -> Option<String> {
    let was = match m.peak_tflops {
        Some(p) if p == peak => return None,
        Some(p) => format!("was {p}"),
        None => "was unset".to_string(),
    };
    let others = m.versions.iter().filter(|v| v.id != version).count();
    let also = match others {
        0 => String::new(),
        1 => " (1 other version)".to_string(),
        n => format!(" ({n} other versions)"),
    };
    Some(format!(
        "--peak-tflops sets the ladder's ceiling, not only {version}'s: peak_tflops = {peak} ({was}) in {}; every version's \"% of ladder ceiling\" is measured against it{also}",
        ladder_dir.join(manifest::FILE_NAME).display(),
    ))
}

/// The entry of a version imported again with `--force` over `old`.
fn replaced_entry(
    req: &Request,
    old: &VersionEntry,
    files: Vec<String>,
    kernel: &str,
    launch: Option<u64>,
    default_title: String,
) -> VersionEntry {
    let keep = |k: Keep| req.keep.contains(&k);
    VersionEntry {
        id: req.version.to_string(),
        title: req
            .title
            .map(str::to_string)
            .or_else(|| keep(Keep::Title).then(|| old.title.clone()))
            .unwrap_or(default_title),
        files,
        kernel: Some(req.kernel.unwrap_or(kernel).to_string()),
        launch,
        baseline: req.baseline || (keep(Keep::Baseline) && old.baseline),
        flops: req.flops.or(old.flops.filter(|_| keep(Keep::Flops))),
        // The command that profiled the old exports; `profile -- CMD` stores its own.
        profile: None,
        technique: old.technique.clone(),
        notes: old.notes.clone(),
        source: old.source.clone(),
        parent: old.parent.clone(),
    }
}

/// What a forced re-import changed of a version's entry, in words: the title, the FLOP
/// count and the baseline mark, each with how to keep it.
fn replacement_changes(old: &VersionEntry, new: &VersionEntry, keep: &[Keep]) -> Vec<String> {
    let mut out = Vec::new();
    if old.title != new.title {
        let how = if keep.contains(&Keep::Title) {
            ""
        } else {
            " (--title T sets one, --keep title keeps the old)"
        };
        out.push(format!(
            "title {:?} replaced by {:?}{how}",
            old.title, new.title
        ));
    }
    match (old.flops, new.flops) {
        (Some(a), None) => out.push(format!(
            "flops {a:e} removed: they were the old export's (--flops gives them again, --keep flops keeps them)"
        )),
        (Some(a), Some(b)) if a != b => out.push(format!("flops {a:e} replaced by {b:e}")),
        _ => {}
    }
    if old.baseline && !new.baseline {
        out.push(
            "no longer a baseline (--baseline marks it again, --keep baseline keeps it)".into(),
        );
    }
    if old.profile.is_some() {
        out.push("the profile command stored with the old exports removed".into());
    }
    out
}

/// The ladder folder an import goes to: the one named, else the only one, else `imported`.
fn ladder_dir(profiles: &Path, name: Option<&str>) -> Result<PathBuf> {
    if let Some(n) = name {
        files::names::check_folder_name("ladder name", n)?;
        return Ok(profiles.join(n));
    }
    let ladders = model::ladder_dirs(profiles);
    match ladders.len() {
        0 => Ok(profiles.join("imported")),
        1 => Ok(ladders.into_iter().next().expect("one")),
        _ => {
            let mut names: Vec<String> = ladders
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            names.sort();
            bail!(
                "{} holds several ladders ({}): name one with --ladder",
                profiles.display(),
                names.join(", ")
            )
        }
    }
}
