//! `stallscope man [--dir DIR]`: the man page on standard output, or every page written.

use anyhow::{Context, Result};
use std::path::Path;

pub(super) fn man_command(dir: Option<&Path>) -> Result<bool> {
    match dir {
        Some(dir) => crate::cli::write_man_pages(dir)
            .with_context(|| format!("cannot write the man pages into {}", dir.display()))?,
        None => {
            let mut page = Vec::new();
            crate::cli::write_man_page(&mut page).context("cannot write the man page")?;
            out!("{}", String::from_utf8_lossy(&page));
        }
    }
    Ok(true)
}
