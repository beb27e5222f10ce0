//! Small file-system helpers shared by every side of the crate: writes that readers see
//! whole or not at all, and paths resolved or made relative without touching the disk.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Writes a file so that readers see the old or the new content, never a part.
pub fn write_atomically(path: &Path, data: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    tmp.write_all(data)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// stallscope's cache: `$STALLSCOPE_CACHE`, else `$XDG_CACHE_HOME/stallscope`, else
/// `~/.cache/stallscope`.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STALLSCOPE_CACHE") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("stallscope"))
}

/// Resolves `.` and `..` without touching the file system; a `..` that climbs above the
/// start is kept (`../../p` stays `../../p`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

/// `target` as seen from `base` (both relative to the working directory, or both
/// absolute): `kernels/fa/v01.cu` from `profiles/fa` is `../../kernels/fa/v01.cu`.
pub fn relative_path(target: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        normalize(&p)
    };
    let (t, b) = (abs(target), abs(base));
    let common = t
        .components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = PathBuf::new();
    for _ in b.components().skip(common) {
        out.push("..");
    }
    for c in t.components().skip(common) {
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("kernels/fa/v01.cu"), Path::new("profiles/fa")),
            Path::new("../../kernels/fa/v01.cu")
        );
        assert_eq!(
            relative_path(Path::new("/a/b/c.cu"), Path::new("/a/p/q")),
            Path::new("../../b/c.cu")
        );
    }

    #[test]
    fn a_second_parent_step_does_not_cancel_the_first() {
        assert_eq!(normalize(Path::new("../../p")), Path::new("../../p"));
        assert_eq!(normalize(Path::new("a/../../p")), Path::new("../p"));
        assert_eq!(normalize(Path::new("a/./b/../c")), Path::new("a/c"));
        assert_eq!(normalize(Path::new("/../x")), Path::new("/x"));
    }
}
