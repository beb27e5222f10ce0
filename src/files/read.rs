//! Reads that take regular files only (or, for a file named on the command line, a
//! pipe) and stop at the per-file limit, and whole reads of a large export into memory
//! backed by huge pages.

use super::limits::{MAX_FILE_SIZE_VAR, size_text};
use super::mapped::{FileBytes, MAP_FROM, Mapping};
use anyhow::{Result, bail};
use std::io::Read;
use std::path::Path;

/// `PATH: cannot read it: REASON`.
fn io_error(path: &Path, e: std::io::Error) -> anyhow::Error {
    anyhow::anyhow!("{}: cannot read it: {e}", path.display())
}

fn too_large(path: &Path, limit: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{}: the file is larger than {} (the per-file limit); if it is what stallscope should read, raise the limit with --max-file-size SIZE (or {MAX_FILE_SIZE_VAR}), e.g. --max-file-size 4GiB",
        path.display(),
        size_text(limit)
    )
}

fn is_device(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_char_device() || meta.file_type().is_block_device()
}

/// What a file is, when it is not a regular file.
pub(super) fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if is_device(meta) {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads a regular file whole, up to `limit` bytes (the per-file limit); anything else
/// (a FIFO, a device, a folder) is refused without waiting on it.
pub fn regular(path: &Path, limit: u64) -> Result<Vec<u8>> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking: opening a FIFO must not wait for a writer before it is refused.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        bail!(
            "{}: this is {}, and stallscope reads regular files only",
            path.display(),
            kind_of(&meta)
        );
    }
    read_up_to(file, path, limit, meta.len())
}

/// Reads a file named on the command line, up to `limit` bytes (the per-file limit): a
/// regular file or a pipe (`<(zcat x.csv.gz)`), never a device. A regular file of
/// [`MAP_FROM`] bytes or more is mapped, not copied (see [`super::mapped`]).
pub fn given(path: &Path, limit: u64) -> Result<FileBytes> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(path, e))?;
    if meta.is_dir() || is_device(&meta) {
        bail!(
            "{}: this is {}, not an export file",
            path.display(),
            kind_of(&meta)
        );
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(path, e))?;
    if meta.is_file()
        && (MAP_FROM..=limit).contains(&meta.len())
        && let Some(m) = Mapping::of(&file, meta.len())
    {
        return Ok(FileBytes::Mapped(m));
    }
    read_up_to(file, path, limit, meta.len()).map(FileBytes::Read)
}

fn read_up_to(file: std::fs::File, path: &Path, limit: u64, len: u64) -> Result<Vec<u8>> {
    if len > limit {
        return Err(too_large(path, limit));
    }
    let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| io_error(path, e))?;
    if out.len() as u64 > limit {
        return Err(too_large(path, limit));
    }
    Ok(out)
}

/// Reads a whole file, with no limit (the library's `ncu::read_file`). A large one (a
/// raw page of a thousand launches is tens of MB) is read into memory the kernel is
/// asked to back with huge pages (see [`super::huge_pages::advise`]).
pub fn whole(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    super::huge_pages::advise(&mut buf);
    file.read_to_end(&mut buf)?;
    Ok(buf)
}
