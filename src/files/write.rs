//! Writes that readers see whole or not at all: a file through a temporary one renamed
//! over it (with the permissions it had, or the umask's), a folder's entries flushed,
//! and two folders swapped in one step.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// The prefix of the temporary files writes go through, so that what a killed process
/// left is recognised.
pub const TEMP_PREFIX: &str = ".stallscope-tmp-";

/// Writes a file so that readers see the old or the new content, never a part. An
/// existing file keeps its permissions; a new one gets the umask's.
pub fn atomically(path: &Path, data: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let existing = std::fs::metadata(path).ok().map(|m| m.permissions());
    // Created with 0666: the kernel applies the umask, as for any new file.
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .with_context(|| format!("cannot create a temporary file in {}", dir.display()))?;
    if let Some(p) = existing {
        tmp.as_file()
            .set_permissions(p)
            .with_context(|| format!("cannot keep the permissions of {}", path.display()))?;
    }
    tmp.write_all(data)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    super::fault::point("a file written, before its rename");
    tmp.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    sync_dir(dir);
    Ok(())
}

/// Flushes a folder's entries (the renames in it) to disk, where the system allows.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Swaps two folders in one step where the system can (Linux's `renameat2` with
/// `RENAME_EXCHANGE`): readers see one or the other at each name, never none. Elsewhere
/// two renames, through a third name.
pub fn exchange_dirs(a: &Path, b: &Path) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let ca = std::ffi::CString::new(a.as_os_str().as_bytes())?;
        let cb = std::ffi::CString::new(b.as_os_str().as_bytes())?;
        // SAFETY: two valid NUL-terminated paths, relative to the working directory.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
            return Err(e)
                .with_context(|| format!("cannot swap {} and {}", a.display(), b.display()));
        }
    }
    let aside = a.with_extension("swap");
    let rename = |from: &Path, to: &Path| {
        std::fs::rename(from, to)
            .with_context(|| format!("cannot rename {} to {}", from.display(), to.display()))
    };
    rename(b, &aside)?;
    rename(a, b)?;
    rename(&aside, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_again_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("runs.json");
        std::fs::write(&path, "{}").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o604)).unwrap();
        atomically(&path, b"{ }").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o604);
    }
}
