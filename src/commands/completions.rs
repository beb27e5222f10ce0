//! `stallscope completions SHELL`: the shell's completion script.

use anyhow::Result;

pub(super) fn completions_command(shell: clap_complete::Shell) -> Result<bool> {
    let mut script = Vec::new();
    write_completions(shell, &mut script);
    out!("{}", String::from_utf8_lossy(&script));
    Ok(true)
}

/// Writes the completion script of `shell`, generated from the command line's definitions.
fn write_completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    let mut cmd = crate::cli::command();
    clap_complete::generate(shell, &mut cmd, "stallscope", out);
}
