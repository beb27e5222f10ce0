//! `stallscope import`: exports added to a ladder as one version.

use super::ladders::{built_in_folders, writable_profiles};
use crate::analysis;
use crate::cli::{Common, ImportArgs};
use crate::files::limits::SizeLimits;
use crate::model::{self, Store, import};
use crate::report::format;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Imports the exports as one version, says what changed (and what an import into
/// `./profiles` changes for the commands run from this folder), and warns of the
/// figures past the ladder's ceiling.
pub(super) fn import_command(common: &Common, a: &ImportArgs) -> Result<bool> {
    let profiles = writable_profiles(common);
    let limits = common.size_limits();
    let files = crate::nsight::reports::expand(&a.files, limits)?;
    let ladders_before = model::ladder_dirs(&profiles);
    let done = import::import(&import::Request {
        profiles: &profiles,
        ladder: a.ladder.as_deref(),
        version: &a.version_id,
        title: a.title.as_deref(),
        kernel: a.kernel.as_deref(),
        launch: a.launch,
        baseline: a.baseline,
        files: &files,
        force: a.force,
        flops: a.flops,
        peak_tflops: a.peak_tflops,
        keep: &a.keep,
        limits,
    })?;
    let mut said = done.to_string();
    if common.profiles.is_none() {
        said.push_str(&what_an_import_changes(
            &profiles,
            &ladders_before,
            &done,
            limits,
        ));
    }
    eprintln!("{}", format::printable_lines(&said));
    // The figures the import gives (its FLOP count, the ladder's ceiling), read
    // back as a report reads them.
    if let Some(dir) = done.dir.parent()
        && let Ok(ladder) =
            model::load_ladder(&Store::disk(limits), dir, &mut model::LoadReport::default())
    {
        let analysed = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
        for w in analysis::implausible(&ladder, &analysed) {
            eprintln!("warning: {}", format::printable(&w));
        }
    }
    Ok(true)
}

/// What an import into `./profiles` changes for the commands run from this folder, said
/// after its message: a new local store (its ladders first, then the built-in ones), and
/// a new ladder named like a built-in one, which stands in for it here.
fn what_an_import_changes(
    profiles: &Path,
    ladders_before: &[PathBuf],
    done: &import::Imported,
    limits: SizeLimits,
) -> String {
    let built_in: Vec<String> = built_in_folders(limits)
        .unwrap_or_default()
        .iter()
        .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let ladder = done.dir.parent().unwrap_or(Path::new("."));
    let name = ladder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = String::new();
    if ladders_before.is_empty() {
        let shown: Vec<&str> = built_in
            .iter()
            .map(String::as_str)
            .filter(|n| *n != name)
            .collect();
        let at = std::fs::canonicalize(profiles).unwrap_or_else(|_| profiles.to_path_buf());
        out.push_str(&format!(
            "\n{} is a new local store ({}): stallscope run from this folder shows its ladders first, then the built-in ones ({}) marked \"built in\"; --profiles DIR reads another folder alone",
            profiles.display(),
            at.display(),
            shown.join(", ")
        ));
    }
    let new_ladder = !ladders_before.iter().any(|d| d == ladder);
    if new_ladder && built_in.contains(&name) {
        out.push_str(&format!(
            "\n{} is named like a built-in ladder: stallscope run from this folder shows it in place of the built-in {name} (give another name with --ladder to keep both)",
            ladder.display()
        ));
    }
    out
}
