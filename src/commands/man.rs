//! `stallscope man [--dir DIR]`: the man page on standard output, or every page written.

use anyhow::{Context, Result};
use std::path::Path;

pub(super) fn man_command(dir: Option<&Path>) -> Result<bool> {
    match dir {
        Some(dir) => write_man_pages(dir)
            .with_context(|| format!("cannot write the man pages into {}", dir.display()))?,
        None => {
            let mut page = Vec::new();
            write_man_page(&mut page).context("cannot write the man page")?;
            out!("{}", String::from_utf8_lossy(&page));
        }
    }
    Ok(true)
}

/// The command as the man pages describe it: named by the package description, without
/// the `help` subcommand (the pages are the help).
fn described() -> clap::Command {
    crate::cli::command()
        .about(env!("CARGO_PKG_DESCRIPTION"))
        .disable_help_subcommand(true)
}

/// Writes the man page, generated from the command line's definitions: the command,
/// its options and the subcommands, each named as `stallscope-NAME(1)`.
fn write_man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(described()).render(out)
}

/// Writes `stallscope.1` and a page per visible subcommand into `dir`.
fn write_man_pages(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(described(), dir)
}
