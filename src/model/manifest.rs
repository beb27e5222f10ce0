//! The ladder manifest, `profiles/<ladder>/ladder.toml`: order, titles, notes and the
//! FLOP count of one launch; the exports of each version sit beside it.

use crate::files::write_atomically;
use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const FILE_NAME: &str = "ladder.toml";

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub title: String,
    /// What the ladder computes, in one line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// FLOP of one kernel launch at the profiled shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
    /// The practical ceiling the "% of ceiling" row is measured against, in TFLOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_tflops: Option<f64>,
    /// The run shape whose results the timeline shows ("B,H,S,D").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_shape: Option<String>,
    #[serde(default, rename = "version")]
    pub versions: Vec<VersionEntry>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VersionEntry {
    pub id: String,
    pub title: String,
    /// The technique this version adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub technique: Option<String>,
    /// Exports, relative to the ladder folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Which kernel of those files (a part of its name), where they hold several.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Which launch of those files (ncu's launch ID), where several match `kernel`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<u64>,
    /// Notes file (Markdown), relative to the ladder folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Kernel source file, relative to the ladder folder (for diffs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// A reference implementation standing beside the ladder, not a step of it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub baseline: bool,
    /// FLOP of one launch where it differs from the ladder's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
    /// How the version was profiled, where `profile -- CMD` did it: so that it can be
    /// profiled again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileCommand>,
    /// The version this one was built on, where it is not the previous one (a branch:
    /// v17 built on v15 after v16 lost). Diffs, compare and the trail's moves use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// A command ncu profiled into a version.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProfileCommand {
    pub command: Vec<String>,
    /// ncu's `-k` filter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    #[serde(default)]
    pub launch_skip: u32,
    pub set: String,
}

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest, toml::de::Error> {
        toml::from_str(text)
    }

    /// Reads a manifest on disk; `None` when there is none.
    pub fn read(path: &Path) -> Result<Option<Manifest>> {
        match std::fs::read_to_string(path) {
            Ok(t) => Manifest::parse(&t)
                .map(Some)
                .map_err(|e| anyhow!("{}: {}", path.display(), e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomically(path, self.to_toml().as_bytes())
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a manifest always serializes")
    }

    pub fn version_mut(&mut self, id: &str) -> Option<&mut VersionEntry> {
        self.versions.iter_mut().find(|v| v.id == id)
    }
}

/// Makes the manifest of `ladder_dir` list these versions: each entry's title,
/// technique, parent, notes and source replace what it had (its exports are kept); a
/// new manifest starts from `defaults`. Versions are ordered as `order` names them (the
/// recipe's order), those it does not name after them in their order.
pub fn record_versions(
    ladder_dir: &Path,
    defaults: &Manifest,
    entries: &[VersionEntry],
    order: &[&str],
) -> Result<()> {
    let path = ladder_dir.join(FILE_NAME);
    let mut m = Manifest::read(&path)?.unwrap_or_else(|| defaults.clone());
    for e in entries {
        match m.version_mut(&e.id) {
            Some(old) => {
                old.title = e.title.clone();
                old.technique = e.technique.clone();
                old.notes = e.notes.clone().or(old.notes.take());
                old.source = e.source.clone().or(old.source.take());
                old.baseline = e.baseline;
                old.parent = e.parent.clone();
            }
            None => m.versions.push(e.clone()),
        }
    }
    let pos = |id: &str| order.iter().position(|o| *o == id);
    m.versions.sort_by_key(|v| pos(&v.id).unwrap_or(usize::MAX));
    m.write(&path)
}

/// Stores the command a version was profiled with in the manifest of `ladder_dir`.
pub fn record_profile_command(ladder_dir: &Path, id: &str, cmd: &ProfileCommand) -> Result<()> {
    let path = ladder_dir.join(FILE_NAME);
    let mut m = Manifest::read(&path)?.with_context(|| format!("{} is missing", path.display()))?;
    let v = m
        .version_mut(id)
        .with_context(|| format!("{} has no version {id}", path.display()))?;
    v.profile = Some(cmd.clone());
    m.write(&path)
}
