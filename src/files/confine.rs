//! Paths confined to the folders they may name: a file a manifest or recipe names,
//! checked as written and on disk (symbolic links followed) to lie inside its roots,
//! and a folder made for writing that does not lead out of its root.

use super::paths::{lexically_inside, non_empty, normalize};
use super::read::kind_of;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// A file that could not be read: missing, or refused (outside its folder, not a
/// regular file, too large), with the reason in one line.
#[derive(Debug)]
pub struct FileError {
    pub path: PathBuf,
    pub missing: bool,
    pub message: String,
}

impl std::fmt::Display for FileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FileError {}

impl FileError {
    fn refused(path: &Path, message: impl Into<String>) -> FileError {
        FileError {
            path: path.to_path_buf(),
            missing: false,
            message: message.into(),
        }
    }
}

/// The file a manifest or recipe names by `rel`, relative to `base`: `rel` must be
/// relative and lead, as written and on disk (symbolic links followed), into one of
/// `roots`, to a regular file. Returns the path as written (`base/rel` normalized) and
/// the path on disk, every link resolved.
pub fn file(base: &Path, rel: &str, roots: &[PathBuf]) -> Result<(PathBuf, PathBuf), FileError> {
    let lexical = lexically(base, rel, roots)?;
    let canonical = match std::fs::canonicalize(&lexical) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dangling = std::fs::symlink_metadata(&lexical).is_ok();
            return Err(FileError {
                path: lexical.clone(),
                missing: !dangling,
                message: if dangling {
                    format!("{rel} is a symbolic link to nothing")
                } else {
                    format!("{} does not exist", lexical.display())
                },
            });
        }
        Err(e) => {
            return Err(FileError::refused(
                &lexical,
                format!("cannot read {}: {e}", lexical.display()),
            ));
        }
    };
    let inside = roots.iter().any(|r| {
        std::fs::canonicalize(non_empty(r))
            .map(|r| canonical.starts_with(r))
            .unwrap_or(false)
    });
    if !inside {
        return Err(FileError::refused(
            &lexical,
            format!(
                "{rel} is a symbolic link that leads out of {} (to {}): stallscope reads only inside its folders",
                describe_roots(roots),
                canonical.display()
            ),
        ));
    }
    let meta = std::fs::metadata(&canonical)
        .map_err(|e| FileError::refused(&lexical, format!("cannot read {rel}: {e}")))?;
    if !meta.is_file() {
        return Err(FileError::refused(
            &lexical,
            format!(
                "{rel} is {}: stallscope reads regular files only",
                kind_of(&meta)
            ),
        ));
    }
    Ok((lexical, canonical))
}

/// The checks of [`file`] that need no disk: `rel` relative, and inside a root as
/// written. Returns `base/rel` normalized.
pub fn lexically(base: &Path, rel: &str, roots: &[PathBuf]) -> Result<PathBuf, FileError> {
    let given = Path::new(rel);
    if rel.trim().is_empty() {
        return Err(FileError::refused(base, "an empty path names no file"));
    }
    if given.has_root() || given.is_absolute() {
        return Err(FileError::refused(
            given,
            format!(
                "{rel} is an absolute path: name files relative to the ladder folder ({})",
                base.display()
            ),
        ));
    }
    let lexical = normalize(&base.join(given));
    if !roots.iter().any(|r| lexically_inside(&lexical, r)) {
        return Err(FileError::refused(
            &lexical,
            format!(
                "{rel} leads out of {}: stallscope reads only inside its folders",
                describe_roots(roots)
            ),
        ));
    }
    Ok(lexical)
}

fn describe_roots(roots: &[PathBuf]) -> String {
    let names: Vec<String> = roots
        .iter()
        .map(|r| non_empty(r).display().to_string())
        .collect();
    names.join(" and ")
}

/// Makes `dir` (and what it lacks above it) and checks that it does not lead out of
/// `root` through a symbolic link: what is written there stays in `root`.
pub fn create_dir(root: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let canonical_root = std::fs::canonicalize(non_empty(root))
        .with_context(|| format!("cannot resolve {}", root.display()))?;
    let canonical =
        std::fs::canonicalize(dir).with_context(|| format!("cannot resolve {}", dir.display()))?;
    if !canonical.starts_with(&canonical_root) {
        bail!(
            "{} leads out of {} (to {}) through a symbolic link: stallscope writes only inside it",
            dir.display(),
            root.display(),
            canonical.display()
        );
    }
    Ok(())
}
