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

/// Reads a whole file. A large one (a raw page of a thousand launches is tens of MB) is
/// read into memory the kernel is asked to back with huge pages (see
/// [`advise_huge_pages`]).
pub fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    advise_huge_pages(&mut buf);
    file.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Asks the kernel to back the capacity of a large buffer with 2 MiB pages (Linux's
/// transparent huge pages, where they are left to the program's choice): the tens of MB
/// a large export takes then cost some pages faults instead of thousands. Advice only:
/// the memory and its content are the same either way, and a refusal changes nothing.
pub fn advise_huge_pages<T>(buf: &mut Vec<T>) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = buf.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < 2 * HUGE {
            return;
        }
        let start = buf.as_mut_ptr() as usize;
        let (first, end) = (start.next_multiple_of(HUGE), (start + bytes) / HUGE * HUGE);
        if end > first {
            // SAFETY: the range lies inside the buffer's own allocation, and
            // MADV_HUGEPAGE changes how it is backed, never what it holds.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
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
