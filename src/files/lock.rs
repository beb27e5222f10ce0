//! The ladder lock: read-modify-write of a ladder's files happens under it, and a
//! reader asks whether a writer holds it.

use anyhow::{Context, Result};
use std::path::Path;

/// An exclusive lock on a folder's lock file, held until dropped: read-modify-write of
/// a ladder's manifest, run file and version folders happens under it, so that two
/// processes at once never lose each other's changes.
pub struct Lock {
    _file: std::fs::File,
}

/// The lock file in a ladder folder.
pub const LOCK_FILE: &str = ".stallscope.lock";

impl Lock {
    /// Waits for the lock of `dir` (which must exist).
    pub fn acquire(dir: &Path) -> Result<Lock> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o666)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .with_context(|| format!("cannot open the lock file {}", path.display()))?;
        fs4::FileExt::lock(&file).with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(Lock { _file: file })
    }

    /// Whether a writer holds the lock of `dir` now (an import or a run under way),
    /// asked without waiting and without creating the lock file: a reader tells a live
    /// write from one that was killed this way.
    pub fn is_held(dir: &Path) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(dir.join(LOCK_FILE))
        else {
            return false;
        };
        // A shared lock taken is let go when the file closes, at once.
        matches!(
            fs4::FileExt::try_lock_shared(&file),
            Err(fs4::TryLockError::WouldBlock)
        )
    }
}
