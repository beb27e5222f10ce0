//! Where ladders are read from: a folder on disk, or the copy of `profiles/` and
//! `kernels/` built into the binary (so that `stallscope` shows the bundled ladder on any
//! machine, from any working directory).

use crate::files::{self, confine::FileError, limits::SizeLimits, paths::normalize};
use crate::ncu;
use anyhow::{Result, anyhow};
use include_dir::{Dir, include_dir};
use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

static EMBEDDED_PROFILES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/profiles");
static EMBEDDED_KERNELS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/kernels");

/// Where a store's files are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Real files; paths are file-system paths.
    Disk,
    /// The bundled copy; paths start with `profiles/` or `kernels/`.
    Embedded,
}

/// Where ladders (and recipes) are read from, and how much is read there: a file on
/// disk up to `limits.max_file_size`, a gzip export (on disk or built in) inflated up to
/// `limits.max_decompressed`. The commands make every store with the limits of the
/// command line; what is read of a ladder later (a source page's rows, on demand) is
/// read within the limits of the store it came from.
#[derive(Debug, Clone)]
pub struct Store {
    pub place: Place,
    pub limits: SizeLimits,
}

impl Store {
    /// Real files, read within `limits`.
    pub fn disk(limits: SizeLimits) -> Store {
        Store {
            place: Place::Disk,
            limits,
        }
    }

    /// The bundled copy, its exports inflated within `limits`.
    pub fn embedded(limits: SizeLimits) -> Store {
        Store {
            place: Place::Embedded,
            limits,
        }
    }

    pub fn is_disk(&self) -> bool {
        self.place == Place::Disk
    }

    pub fn is_embedded(&self) -> bool {
        self.place == Place::Embedded
    }

    /// How the exports of this store are parsed: whole, inflated within its limits.
    pub fn export_options(&self) -> ncu::ReadOptions {
        ncu::ReadOptions::within(self.limits)
    }

    /// The folder that holds the ladders of this store.
    pub fn default_profiles(&self) -> PathBuf {
        PathBuf::from("profiles")
    }

    pub fn describe(&self, path: &Path) -> String {
        match self.place {
            Place::Disk => path.display().to_string(),
            Place::Embedded => format!("{} (built in)", path.display()),
        }
    }

    /// Reads a file whole: on disk a regular file only, up to the store's per-file limit.
    pub fn read(&self, path: &Path) -> Result<Cow<'static, [u8]>> {
        match self.place {
            Place::Disk => files::read::regular(path, self.limits.max_file_size).map(Cow::Owned),
            Place::Embedded => {
                let (dir, rest) = embedded_root(path)?;
                dir.get_file(&rest)
                    .map(|f| Cow::Borrowed(f.contents()))
                    .ok_or_else(|| anyhow!("{} is not in the built-in profiles", path.display()))
            }
        }
    }

    pub fn read_text(&self, path: &Path) -> Result<String> {
        let bytes = self.read(path)?;
        String::from_utf8(bytes.into_owned())
            .map_err(|_| anyhow!("{} is not UTF-8 text", self.describe(path)))
    }

    /// Reads the file a manifest or recipe names by `rel` (relative to `base`), confined
    /// to `roots` (see [`files::confine::file`]): returns its path as written and its
    /// bytes.
    pub fn read_confined(
        &self,
        base: &Path,
        rel: &str,
        roots: &[PathBuf],
    ) -> Result<(PathBuf, Cow<'static, [u8]>), FileError> {
        let refused = |path: &Path, e: anyhow::Error| FileError {
            path: path.to_path_buf(),
            missing: false,
            message: format!("{e:#}"),
        };
        match self.place {
            Place::Disk => {
                let (shown, real) = files::confine::file(base, rel, roots)?;
                let bytes = files::read::regular(&real, self.limits.max_file_size)
                    .map_err(|e| refused(&shown, e))?;
                Ok((shown, Cow::Owned(bytes)))
            }
            Place::Embedded => {
                let shown = files::confine::lexically(base, rel, roots)?;
                if !self.exists(&shown) {
                    return Err(FileError {
                        message: format!("{} does not exist", self.describe(&shown)),
                        path: shown,
                        missing: true,
                    });
                }
                let bytes = self.read(&shown).map_err(|e| refused(&shown, e))?;
                Ok((shown, bytes))
            }
        }
    }

    /// [`Store::read_confined`] of a UTF-8 text file.
    pub fn read_confined_text(
        &self,
        base: &Path,
        rel: &str,
        roots: &[PathBuf],
    ) -> Result<(PathBuf, String), FileError> {
        let (path, bytes) = self.read_confined(base, rel, roots)?;
        match String::from_utf8(bytes.into_owned()) {
            Ok(text) => Ok((path, text)),
            Err(_) => Err(FileError {
                message: format!("{} is not UTF-8 text", self.describe(&path)),
                path,
                missing: false,
            }),
        }
    }

    pub fn exists(&self, path: &Path) -> bool {
        match self.place {
            Place::Disk => path.exists(),
            Place::Embedded => embedded_root(path)
                .map(|(d, rest)| rest.as_os_str().is_empty() || d.get_entry(&rest).is_some())
                .unwrap_or(false),
        }
    }

    /// The files directly in a folder (not its sub-folders), sorted by name; an error
    /// where the folder cannot be listed (or is not there).
    pub fn files(&self, path: &Path) -> Result<Vec<PathBuf>> {
        self.entries(path, Entry::File)
    }

    /// The folders directly in `path`, sorted.
    pub fn subdirs(&self, path: &Path) -> Result<Vec<PathBuf>> {
        self.entries(path, Entry::Folder)
    }

    /// The entries of one kind directly in `path`, sorted.
    fn entries(&self, path: &Path, kind: Entry) -> Result<Vec<PathBuf>> {
        let mut out = match self.place {
            Place::Disk => std::fs::read_dir(path)
                .map_err(|e| anyhow!("cannot list {}: {e}", path.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_type().is_ok_and(|t| match kind {
                        Entry::File => t.is_file(),
                        Entry::Folder => t.is_dir(),
                    })
                })
                .map(|e| e.path())
                .collect::<Vec<_>>(),
            Place::Embedded => {
                let (dir, rest) = embedded_root(path)?;
                let dir = if rest.as_os_str().is_empty() {
                    dir
                } else {
                    dir.get_dir(&rest)
                        .ok_or_else(|| anyhow!("{} is not built in", path.display()))?
                };
                let names: Vec<&Path> = match kind {
                    Entry::File => dir.files().map(|f| f.path()).collect(),
                    Entry::Folder => dir.dirs().map(|d| d.path()).collect(),
                };
                names
                    .into_iter()
                    .map(|p| path.join(p.file_name().unwrap_or_default()))
                    .collect()
            }
        };
        out.sort();
        Ok(out)
    }
}

/// Splits a virtual path into the embedded folder and the path inside it.
fn embedded_root(path: &Path) -> Result<(&'static Dir<'static>, PathBuf)> {
    let clean = normalize(path);
    let mut parts = clean.components();
    let root = match parts.next() {
        Some(Component::Normal(p)) if p == "profiles" => &EMBEDDED_PROFILES,
        Some(Component::Normal(p)) if p == "kernels" => &EMBEDDED_KERNELS,
        _ => {
            return Err(anyhow!(
                "{} is outside the built-in profiles",
                path.display()
            ));
        }
    };
    Ok((root, parts.as_path().to_path_buf()))
}

/// What a listing of a folder keeps: its files or its folders.
#[derive(Clone, Copy)]
enum Entry {
    File,
    Folder,
}
