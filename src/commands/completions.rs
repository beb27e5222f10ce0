//! `stallscope completions SHELL`: the shell's completion script.

use anyhow::Result;

pub(super) fn completions_command(shell: clap_complete::Shell) -> Result<bool> {
    let mut script = Vec::new();
    crate::cli::write_completions(shell, &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(true)
}
