//! Where ladders are read from: a folder on disk, or the copy of `profiles/` and
//! `kernels/` built into the binary (so that `stallscope` shows the bundled ladder on any
//! machine, from any working directory).

use crate::files::normalize;
use anyhow::{Context, Result, anyhow};
use include_dir::{Dir, include_dir};
use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

static EMBEDDED_PROFILES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/profiles");
static EMBEDDED_KERNELS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/kernels");

#[derive(Debug, Clone, PartialEq)]
pub enum Store {
    /// Real files; paths are file-system paths.
    Disk,
    /// The bundled copy; paths start with `profiles/` or `kernels/`.
    Embedded,
}

impl Store {
    /// The folder that holds the ladders of this store.
    pub fn default_profiles(&self) -> PathBuf {
        PathBuf::from("profiles")
    }

    pub fn describe(&self, path: &Path) -> String {
        match self {
            Store::Disk => path.display().to_string(),
            Store::Embedded => format!("{} (built in)", path.display()),
        }
    }

    pub fn read(&self, path: &Path) -> Result<Cow<'static, [u8]>> {
        match self {
            Store::Disk => std::fs::read(path)
                .map(Cow::Owned)
                .with_context(|| format!("cannot read {}", path.display())),
            Store::Embedded => {
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
            .with_context(|| format!("{} is not UTF-8 text", path.display()))
    }

    pub fn exists(&self, path: &Path) -> bool {
        match self {
            Store::Disk => path.exists(),
            Store::Embedded => embedded_root(path)
                .map(|(d, rest)| rest.as_os_str().is_empty() || d.get_entry(&rest).is_some())
                .unwrap_or(false),
        }
    }

    /// The sub-folders of a folder, sorted by name.
    pub fn subdirs(&self, path: &Path) -> Result<Vec<PathBuf>> {
        let mut out = match self {
            Store::Disk => std::fs::read_dir(path)
                .with_context(|| format!("cannot list {}", path.display()))?
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
                .map(|e| e.path())
                .collect::<Vec<_>>(),
            Store::Embedded => {
                let (dir, rest) = embedded_root(path)?;
                let dir = if rest.as_os_str().is_empty() {
                    dir
                } else {
                    dir.get_dir(&rest)
                        .ok_or_else(|| anyhow!("{} is not built in", path.display()))?
                };
                let base = path.to_path_buf();
                dir.dirs()
                    .map(|d| base.join(d.path().file_name().unwrap_or_default()))
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
