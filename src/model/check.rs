//! `stallscope check`: verifies a profiles folder (or the built-in copy) without changing
//! anything in it. Every
//! manifest parses and names each version once, every file it names exists, lies in
//! the ladder's folders and parses, every version's launch can be picked, the run file
//! reads, every parent is an earlier version, every trace in a version's folder reads
//! (its schema, its spans, its version and shape those of its folder and name), and
//! nothing is left of an interrupted import (what a live one, holding its ladder's
//! lock, has staged is not listed); one line per problem.

use super::ladder::{named_file_error, read_manifest, roots};
use super::runs::{self, RunFile};
use super::store::{Place, Store};
use super::{manifest, merge_exports, staging};
use crate::ncu;
use anyhow::{Result, bail};
use std::collections::HashMap;
use std::path::Path;

/// What a check found.
#[derive(Debug, Default)]
pub struct Checked {
    pub ladders: usize,
    pub versions: usize,
    /// Files read (exports, notes, sources).
    pub files: usize,
    /// One line each.
    pub problems: Vec<String>,
    /// What loads but cannot be trusted (pages of two ncu runs merged), one line each:
    /// not problems.
    pub warnings: Vec<String>,
}

/// Checks every ladder folder of `profiles`: on disk, or the built-in copy.
pub fn check(store: &Store, profiles: &Path) -> Result<Checked> {
    if store.is_disk() && !profiles.is_dir() {
        bail!(
            "{} is not a folder: give a profiles folder with --profiles DIR",
            profiles.display()
        );
    }
    let mut out = Checked::default();
    for dir in store.subdirs(profiles)? {
        let manifest = dir.join(manifest::FILE_NAME);
        let has_manifest = match store.place {
            Place::Disk => std::fs::symlink_metadata(&manifest).is_ok(),
            Place::Embedded => store.exists(&manifest),
        };
        // What an import under way (its lock held) has staged is no leftover; nothing
        // writes into the built-in copy.
        let leftovers = if store.is_embedded() || crate::files::lock::Lock::is_held(&dir) {
            Vec::new()
        } else {
            staging::leftovers(&dir)
        };
        if !has_manifest && leftovers.is_empty() {
            continue;
        }
        out.problems.extend(leftovers.iter().map(|l| l.to_string()));
        if has_manifest {
            out.ladders += 1;
            check_ladder(store, &dir, &mut out);
        }
    }
    if out.ladders == 0 && out.problems.is_empty() {
        out.problems.push(format!(
            "{}: no ladders (a ladder is a folder holding {})",
            store.describe(profiles),
            manifest::FILE_NAME
        ));
    }
    Ok(out)
}

fn check_ladder(store: &Store, dir: &Path, out: &mut Checked) {
    let (manifest_path, m) = match read_manifest(store, dir) {
        Ok(read) => read,
        Err(e) => return out.problems.push(format!("{e:#}")),
    };
    let shown = store.describe(&manifest_path);
    if let Err(e) = m
        .parsed_reference_shape()
        .and_then(|_| m.parsed_profile_shape())
    {
        out.problems.push(format!("{shown}: {e}"));
    }
    let roots = roots(store, dir, m.kernels.as_deref()).unwrap_or_else(|e| {
        out.problems.push(format!("{e:#}"));
        vec![dir.to_path_buf()]
    });
    if let Err(e) = RunFile::read(store, &dir.join(runs::FILE_NAME)) {
        out.problems.push(format!("{e:#}"));
    }
    out.problems.extend(
        m.parent_problems()
            .into_iter()
            .map(|p| format!("{}: {p}", store.describe(&manifest_path))),
    );
    let mut exports: HashMap<String, Option<ncu::Export>> = HashMap::new();
    for entry in &m.versions {
        out.versions += 1;
        let mut complete = true;
        for f in &entry.files {
            let parsed = exports.entry(f.clone()).or_insert_with(|| {
                out.files += 1;
                let read = store
                    .read_confined(dir, f, &roots)
                    .map_err(|e| named_file_error(&manifest_path, &entry.id, "files", e))
                    .and_then(|(path, bytes)| {
                        ncu::parse_bytes_with(&path, &bytes, &store.export_options())
                    });
                match read {
                    Ok(e) => Some(e),
                    Err(e) => {
                        out.problems.push(e.to_string());
                        None
                    }
                }
            });
            complete &= parsed.is_some();
        }
        if complete && !entry.files.is_empty() {
            let pages: Vec<ncu::Export> = entry
                .files
                .iter()
                .filter_map(|f| exports[f].clone())
                .collect();
            let profiles = merge_exports(pages);
            match super::pick_launch(
                &profiles,
                entry.kernel.as_deref(),
                entry.launch,
                "`launch = ID` in its manifest entry",
            ) {
                Ok(p) => out.warnings.extend(
                    p.warnings
                        .iter()
                        .map(|w| format!("{shown}: version {}: {w}", entry.id)),
                ),
                Err(e) => {
                    let first = format!("{e:#}");
                    let first = first.lines().next().unwrap_or("");
                    out.problems
                        .push(format!("{shown}: version {}: {first}", entry.id));
                }
            }
        }
        let (traces, broken) = super::trace::version_traces(store, dir, &entry.id);
        out.files += traces.len() + broken.len();
        out.problems.extend(
            broken
                .into_iter()
                .map(|(path, why)| format!("{}: {why}", store.describe(&path))),
        );
        for (key, rel) in [("notes", &entry.notes), ("source", &entry.source)] {
            if let Some(rel) = rel {
                out.files += 1;
                if let Err(e) = store.read_confined_text(dir, rel, &roots) {
                    out.problems
                        .push(named_file_error(&manifest_path, &entry.id, key, e).to_string());
                }
            }
        }
    }
}
