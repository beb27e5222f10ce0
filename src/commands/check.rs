//! `stallscope check`: a profiles folder verified without changing it.

use super::ladders::writable_profiles;
use crate::cli::Common;
use crate::model::{self, Store};
use crate::report::format;
use anyhow::Result;
use std::path::PathBuf;

/// `stallscope check`: one line per problem on standard output, a summary on standard
/// error; false when there is a problem.
pub(super) fn check_command(common: &Common) -> Result<bool> {
    let (store, profiles) = check_target(common);
    let checked = model::check::check(&store, &profiles)?;
    for p in &checked.problems {
        outln!("{}", format::printable_lines(&p.to_string()));
    }
    for w in &checked.warnings {
        outln!("warning: {}", format::printable_lines(w));
    }
    eprintln!(
        "{}: {} ladder(s), {} version(s), {} file(s) checked; {}",
        format::printable(&store.describe(&profiles)),
        checked.ladders,
        checked.versions,
        checked.files,
        summary(checked.problems.len(), checked.warnings.len())
    );
    Ok(checked.problems.is_empty())
}

/// The end of check's summary: problems, and the warnings beside them (what loads but
/// cannot be trusted is never "no problems" alone).
fn summary(problems: usize, warnings: usize) -> String {
    let problems = match problems {
        0 => "no problems".to_string(),
        n => format!("{n} problem(s)"),
    };
    match warnings {
        0 => problems,
        n => format!("{problems}, {n} warning(s) (above: what loads but cannot be trusted)"),
    }
}

/// What `check` verifies: `--profiles DIR`; else `./profiles` when it is a folder (the
/// ladders an import writes); else the built-in copy, which the other commands then
/// read.
fn check_target(common: &Common) -> (Store, PathBuf) {
    let local = writable_profiles(common);
    if common.profiles.is_some() || local.join(".").is_dir() {
        (Store::disk(common.size_limits()), local)
    } else {
        let built_in = Store::embedded(common.size_limits());
        let dir = built_in.default_profiles();
        (built_in, dir)
    }
}
