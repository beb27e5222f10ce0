//! stallscope's cache folder: compiled kernels, a report's exported pages, scripts.

use std::path::{Path, PathBuf};

/// stallscope's cache: `$STALLSCOPE_CACHE`, else `$XDG_CACHE_HOME/stallscope`, else
/// `~/.cache/stallscope`.
pub fn dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STALLSCOPE_CACHE") {
        return Some(PathBuf::from(dir));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("stallscope"))
}
