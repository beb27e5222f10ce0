//! `stallscope doctor`: what this machine can run, and what to install.

use anyhow::Result;

/// The checks' report on standard output; false when `run` or `profile` could not work.
pub(super) fn doctor_command() -> Result<bool> {
    let (text, ok) = crate::doctor::report(&crate::doctor::checks());
    out!("{text}");
    Ok(ok)
}
