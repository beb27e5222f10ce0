//! A version put in place whole: an import writes the new version folder beside the old
//! one (`v07.staging-<pid>/`), with the ladder's new manifest inside it, then swaps the
//! two folders in one rename and moves the manifest into place with a second. At every
//! moment a reader sees the version all old or all new:
//!
//! - before the swap, the old folder and the old manifest;
//! - after the swap, the new folder holding the new manifest as
//!   [`PENDING`]: readers take the manifest from there ([`pending_manifest`]);
//! - after the second rename, the new folder and the new manifest.
//!
//! What a killed import leaves is finished or removed by the next writer, under the
//! ladder's lock ([`recover`]), and listed by `stallscope check` ([`leftovers`]).

use crate::files::{self, fault};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The ladder's manifest in its folder, which a swap puts in place (`manifest.rs`
/// reads and edits it by this name).
pub const MANIFEST: &str = "ladder.toml";

/// The new manifest inside a swapped-in version folder, until it is put in place.
pub const PENDING: &str = ".ladder.toml.pending";

/// What stands between a version folder's name and the staging process's id.
const STAGING: &str = ".staging-";

/// Something an interrupted write left in a ladder folder.
#[derive(Debug, Clone, PartialEq)]
pub enum Leftover {
    /// A version folder staged (or the old one swapped out) by an import that stopped.
    Staging(PathBuf),
    /// The manifest of an import that stopped after its swap.
    Pending(PathBuf),
    /// The temporary file of a write that stopped before its rename.
    Temp(PathBuf),
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leftover::Staging(p) => write!(
                f,
                "{}: a version folder left by an interrupted import (the next import or run removes it)",
                p.display()
            ),
            Leftover::Pending(p) => write!(
                f,
                "{}: the manifest of an import interrupted after its swap; the ladder reads as that import left it, and the next import or run puts the manifest in place",
                p.display()
            ),
            Leftover::Temp(p) => write!(
                f,
                "{}: a temporary file left by an interrupted write (the next import or run removes it)",
                p.display()
            ),
        }
    }
}

/// What interrupted writes left in a ladder folder, by name.
pub fn leftovers(ladder_dir: &Path) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir(ladder_dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if name.starts_with(files::write::TEMP_PREFIX) {
            out.push(Leftover::Temp(path));
        } else if is_dir && name.contains(STAGING) {
            out.push(Leftover::Staging(path));
        } else if is_dir && std::fs::symlink_metadata(path.join(PENDING)).is_ok_and(|m| m.is_file())
        {
            out.push(Leftover::Pending(path.join(PENDING)));
        }
    }
    out.sort_by_key(|l| match l {
        Leftover::Staging(p) | Leftover::Pending(p) | Leftover::Temp(p) => p.clone(),
    });
    out
}

/// The manifest a reader takes instead of `ladder.toml` after an interrupted import's
/// swap, relative to the ladder folder (`v07/.ladder.toml.pending`).
pub fn pending_manifest(ladder_dir: &Path) -> Option<String> {
    leftovers(ladder_dir).into_iter().find_map(|l| match l {
        Leftover::Pending(p) => p
            .strip_prefix(ladder_dir)
            .ok()
            .map(|r| r.to_string_lossy().into_owned()),
        _ => None,
    })
}

/// Whether the pending manifest `pending` (of [`pending_manifest`]) belongs to an import
/// still under way rather than to one that was interrupted: the ladder's lock is held,
/// or the manifest has been put in place since it was found.
pub fn pending_is_live(ladder_dir: &Path, pending: &Path) -> bool {
    files::lock::Lock::is_held(ladder_dir) || std::fs::symlink_metadata(pending).is_err()
}

/// Finishes or removes what interrupted writes left (call it holding the ladder's
/// lock): a pending manifest is put in place, staged folders and temporary files go.
pub fn recover(ladder_dir: &Path) -> Result<()> {
    let found = leftovers(ladder_dir);
    for l in found.iter().filter(|l| matches!(l, Leftover::Pending(_))) {
        if let Leftover::Pending(p) = l {
            let manifest = ladder_dir.join(MANIFEST);
            std::fs::rename(p, &manifest).with_context(|| {
                format!(
                    "cannot put {} in place as {}",
                    p.display(),
                    manifest.display()
                )
            })?;
            files::write::sync_dir(ladder_dir);
        }
    }
    for l in found {
        match l {
            Leftover::Staging(p) => std::fs::remove_dir_all(&p)
                .with_context(|| format!("cannot remove {}", p.display()))?,
            Leftover::Temp(p) => std::fs::remove_file(&p)
                .with_context(|| format!("cannot remove {}", p.display()))?,
            Leftover::Pending(_) => {}
        }
    }
    Ok(())
}

/// A file to write into the new version folder.
pub struct NewFile {
    pub name: String,
    pub data: Vec<u8>,
}

/// Puts a new version folder in place of `ladder_dir/version` with the ladder's new
/// manifest (call it holding the ladder's lock, after [`recover`]): the new folder
/// holds `new` and the files of the old one that `replaced` does not name.
pub fn swap_in(
    ladder_dir: &Path,
    version: &str,
    new: &[NewFile],
    replaced: &[String],
    manifest_text: &str,
) -> Result<()> {
    let target = ladder_dir.join(version);
    let stage = ladder_dir.join(format!("{version}{STAGING}{}", std::process::id()));
    let target_meta = std::fs::symlink_metadata(&target).ok();
    if let Some(m) = &target_meta
        && !m.is_dir()
    {
        bail!(
            "{} is {}, not a version folder: stallscope writes only into folders of its own",
            target.display(),
            if m.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "a file"
            }
        );
    }
    std::fs::create_dir(&stage).with_context(|| format!("cannot create {}", stage.display()))?;
    let manifest = ladder_dir.join(MANIFEST);
    let mode = std::fs::metadata(&manifest).ok().map(|m| m.permissions());
    let pending = NewFile {
        name: PENDING.to_string(),
        data: manifest_text.as_bytes().to_vec(),
    };
    let staged = stage_and_swap(
        &stage,
        &target,
        target_meta.is_some(),
        new,
        replaced,
        (&pending, mode),
    );
    if let Err(e) = staged {
        // A failed import (a full disk, say) takes away what it staged: it would hold
        // the space, and `check` would list it until the next import.
        return Err(match std::fs::remove_dir_all(&stage) {
            Ok(()) => e,
            Err(r) => e.context(format!(
                "and the staged {} could not be removed ({r}): the next import removes it",
                stage.display()
            )),
        });
    }
    files::write::sync_dir(ladder_dir);
    fault::point("the version swapped in");
    std::fs::rename(target.join(PENDING), &manifest)
        .with_context(|| format!("cannot put the new {} in place", manifest.display()))?;
    files::write::sync_dir(ladder_dir);
    fault::point("the manifest put in place");
    if target_meta.is_some() {
        // The old version, swapped out.
        std::fs::remove_dir_all(&stage)
            .with_context(|| format!("cannot remove {}", stage.display()))?;
    }
    Ok(())
}

/// Fills the staging folder `stage` (the old version's files that stay, the `new` ones,
/// and the pending manifest with the permissions of the one it replaces) and puts it in
/// place of `target`: swapped with it where it `exists`, else renamed to it. Until it
/// returns `Ok`, `stage` holds only what this import staged.
fn stage_and_swap(
    stage: &Path,
    target: &Path,
    exists: bool,
    new: &[NewFile],
    replaced: &[String],
    (manifest, mode): (&NewFile, Option<std::fs::Permissions>),
) -> Result<()> {
    if exists {
        let skip: Vec<&str> = replaced
            .iter()
            .map(String::as_str)
            .chain(new.iter().map(|f| f.name.as_str()))
            .collect();
        carry(target, stage, &skip)?;
    }
    for f in new {
        write_new(&stage.join(&f.name), &f.data, None)?;
        fault::point("an export staged");
    }
    write_new(&stage.join(&manifest.name), &manifest.data, mode)?;
    files::write::sync_dir(stage);
    fault::point("the version staged");
    if exists {
        files::write::exchange_dirs(stage, target)
    } else {
        std::fs::rename(stage, target)
            .with_context(|| format!("cannot rename {} to {}", stage.display(), target.display()))
    }
}

/// Creates a file (never through an existing name or link), with `mode` or the umask's
/// permissions, and flushes it to disk.
fn write_new(path: &Path, data: &[u8], mode: Option<std::fs::Permissions>) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    if let Some(m) = mode {
        f.set_permissions(m)
            .with_context(|| format!("cannot set the permissions of {}", path.display()))?;
    }
    f.write_all(data)
        .and_then(|_| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Gives `to` the files of `from` (hard links, or copies where links cannot be made),
/// folders and symbolic links as they are, but the top-level names in `skip`.
fn carry(from: &Path, to: &Path, skip: &[&str]) -> Result<()> {
    for e in std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))? {
        let e = e.with_context(|| format!("cannot list {}", from.display()))?;
        let name = e.file_name();
        if skip.iter().any(|s| name == **s) || name == PENDING {
            continue;
        }
        let (src, dst) = (e.path(), to.join(&name));
        let t = e
            .file_type()
            .with_context(|| format!("cannot read {}", src.display()))?;
        if t.is_dir() {
            std::fs::create_dir(&dst)
                .with_context(|| format!("cannot create {}", dst.display()))?;
            carry(&src, &dst, &[])?;
        } else if t.is_symlink() {
            let link = std::fs::read_link(&src)
                .with_context(|| format!("cannot read {}", src.display()))?;
            std::os::unix::fs::symlink(link, &dst)
                .with_context(|| format!("cannot create {}", dst.display()))?;
        } else if t.is_file() && std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("cannot copy {} to {}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}
