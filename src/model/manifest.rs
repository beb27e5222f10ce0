//! The ladder manifest, `profiles/<ladder>/ladder.toml`: order, titles, notes and the
//! FLOP count of one launch; the exports of each version sit beside it.
//!
//! Every change is a read-modify-write under the ladder's lock, and rewrites only what
//! changed: the file's comments, order and layout stay as its author left them.

use super::staging;
use super::store::Store;
use crate::files::{self, limits::SizeLimits};
use anyhow::{Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table};

/// The manifest's name in a ladder folder.
pub const FILE_NAME: &str = staging::MANIFEST;

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
    /// The problem kind its runs solve (`attention`, `gemm`: [`crate::kinds`]); without
    /// it, the kind files of before problem kinds describe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The run shape whose results the timeline shows, in the kind's dimensions
    /// (`"1,64,1024,128"` for attention's B,H,S,D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_shape: Option<String>,
    /// The shape the versions' ncu profiles were taken at, where it is not the
    /// reference shape (the GEMM ladder runs at 8192³ and is profiled at 4096³): the
    /// reports say it of their ncu rows when they show run results at another shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_shape: Option<String>,
    /// The kernels folder the versions' notes and sources may also be in, relative to
    /// the ladder folder: the `kernels` folder beside the profiles folder, or one inside
    /// it (`../../kernels`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<String>,
    #[serde(default, rename = "version")]
    pub versions: Vec<VersionEntry>,
}

impl Manifest {
    /// The problem kind it names, else [`crate::kinds::legacy`].
    pub fn problem_kind(&self) -> Result<crate::kinds::Kind, String> {
        self.kind
            .as_deref()
            .map_or(Ok(crate::kinds::legacy()), crate::kinds::Kind::named)
    }

    /// Its reference shape parsed in its kind, if it names one.
    pub fn parsed_reference_shape(&self) -> Result<Option<super::Shape>, String> {
        let kind = self.problem_kind()?;
        self.reference_shape
            .as_deref()
            .map(|s| super::Shape::parse(kind, s))
            .transpose()
    }

    /// The shape its profiles were taken at, parsed in its kind: the one it names, else
    /// its reference shape.
    pub fn parsed_profile_shape(&self) -> Result<Option<super::Shape>, String> {
        let kind = self.problem_kind()?;
        match self.profile_shape.as_deref() {
            Some(s) => super::Shape::parse(kind, s)
                .map(Some)
                .map_err(|e| format!("profile_shape: {e}")),
            None => self.parsed_reference_shape(),
        }
    }
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

    /// Parses a manifest's text and checks what TOML cannot: every version id used
    /// once. `shown` names the file in errors, which carry its line and column.
    pub fn from_text(shown: &str, text: &str) -> Result<Manifest> {
        let m = Manifest::parse(text).map_err(|e| toml_error(shown, text, &e))?;
        unique_ids(shown, text)?;
        Ok(m)
    }

    /// Reads a manifest on disk (a regular file inside its folder, within `limits`);
    /// `None` when there is none.
    pub fn read(path: &Path, limits: SizeLimits) -> Result<Option<Manifest>> {
        let dir = path.parent().unwrap_or(Path::new(""));
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        match Store::disk(limits).read_confined_text(dir, &name, &[dir.to_path_buf()]) {
            Ok((_, text)) => Manifest::from_text(&path.display().to_string(), &text).map(Some),
            Err(e) if e.missing => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a manifest always serializes")
    }

    /// Each version whose `parent` is not an earlier version of the ladder, in one line:
    /// a parent is one of the (non-baseline) versions listed before it, which also rules
    /// out a version built on itself and a cycle. `report`, the explorer (both refuse
    /// the ladder) and `check` (which lists them) say the same.
    pub fn parent_problems(&self) -> Vec<String> {
        self.versions
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let p = v.parent.as_ref()?;
                let earlier = self.versions[..i].iter().any(|e| &e.id == p && !e.baseline);
                (!earlier).then(|| {
                    format!(
                        "version {}: parent {p:?} is not an earlier version of this ladder \
                         (a version is built on one listed before it)",
                        v.id
                    )
                })
            })
            .collect()
    }

    pub fn version_mut(&mut self, id: &str) -> Option<&mut VersionEntry> {
        self.versions.iter_mut().find(|v| v.id == id)
    }
}

/// A TOML error as one line: the file, line and column, the message, and the start of
/// the text there (cut: a line may be long).
pub fn toml_error(shown: &str, text: &str, e: &toml::de::Error) -> anyhow::Error {
    let message = e.message().trim().replace('\n', "; ");
    match e.span() {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            let near: String = text
                .get(span.start..)
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(40)
                .collect();
            let near = if near.trim().is_empty() {
                String::new()
            } else {
                format!(" (at {near:?})")
            };
            anyhow!("{shown}:{line}:{column}: {message}{near}")
        }
        None => anyhow!("{shown}: {message}"),
    }
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

/// Refuses a version id used twice, naming the lines of both.
fn unique_ids(shown: &str, text: &str) -> Result<()> {
    let Ok(doc) = toml_edit::Document::parse(text) else {
        return Ok(());
    };
    let Some(versions) = doc.get("version").and_then(Item::as_array_of_tables) else {
        return Ok(());
    };
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for t in versions.iter() {
        let Some(item) = t.get("id") else { continue };
        let (Some(id), Some(span)) = (item.as_str(), item.span()) else {
            continue;
        };
        let line = line_column(text, span.start).0;
        if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
            bail!(
                "{shown}:{line}: version id {id:?} is used twice (first at line {first}): give each version its own id"
            );
        }
        seen.push((id, line));
    }
    Ok(())
}

/// A manifest read for a change: its content, and the document it came from, so that
/// writing it back changes only what changed.
pub struct Edit {
    pub manifest: Manifest,
    /// Whether the file existed.
    pub existed: bool,
    doc: DocumentMut,
    path: PathBuf,
}

impl Edit {
    /// Reads the manifest of `ladder_dir` (within `limits`), or starts from `defaults`
    /// where there is none (`None`: a missing manifest is an error).
    pub fn open(
        ladder_dir: &Path,
        defaults: Option<&Manifest>,
        limits: SizeLimits,
    ) -> Result<Edit> {
        let path = ladder_dir.join(FILE_NAME);
        let roots = [ladder_dir.to_path_buf()];
        match Store::disk(limits).read_confined_text(ladder_dir, FILE_NAME, &roots) {
            Ok((_, text)) => {
                let manifest = Manifest::from_text(&path.display().to_string(), &text)?;
                let doc = text
                    .parse::<DocumentMut>()
                    .map_err(|e| anyhow!("{}: {e}", path.display()))?;
                Ok(Edit {
                    manifest,
                    existed: true,
                    doc,
                    path,
                })
            }
            Err(e) if e.missing => match defaults {
                Some(d) => Ok(Edit {
                    manifest: d.clone(),
                    existed: false,
                    doc: DocumentMut::new(),
                    path,
                }),
                None => bail!("{} is missing", path.display()),
            },
            Err(e) => Err(e.into()),
        }
    }

    /// The file's text with the manifest's content: values that did not change keep
    /// their text and comments, changed ones their comments, versions their tables.
    pub fn render(&self) -> String {
        let fresh: DocumentMut = self
            .manifest
            .to_toml()
            .parse()
            .expect("a serialized manifest parses");
        let mut doc = self.doc.clone();
        merge_table(doc.as_table_mut(), fresh.as_table(), "version");
        let old: Vec<Table> = doc
            .remove("version")
            .and_then(|i| i.into_array_of_tables().ok())
            .map(|a| a.into_iter().collect())
            .unwrap_or_default();
        let id = |t: &Table| t.get("id").and_then(Item::as_str).map(str::to_string);
        let mut versions = ArrayOfTables::new();
        for t in fresh
            .get("version")
            .and_then(Item::as_array_of_tables)
            .into_iter()
            .flat_map(|a| a.iter())
        {
            match old.iter().find(|o| id(o) == id(t)) {
                Some(o) => {
                    let mut o = o.clone();
                    merge_table(&mut o, t, "");
                    versions.push(o);
                }
                None => versions.push(t.clone()),
            }
        }
        if !versions.is_empty() {
            // Tables are written in the order of their positions: the versions' order.
            let mut next = 1;
            for t in versions.iter_mut() {
                t.set_position(Some(next));
                next += 1;
                for (_, item) in t.iter_mut() {
                    if let Item::Table(sub) = item {
                        sub.set_position(Some(next));
                        next += 1;
                    }
                }
            }
            doc.insert("version", Item::ArrayOfTables(versions));
        }
        doc.to_string()
    }

    /// Writes the manifest back (a new file gets the umask's permissions, an existing
    /// one keeps its own).
    pub fn save(&self) -> Result<()> {
        files::write::atomically(&self.path, self.render().as_bytes())
    }
}

/// Makes `old` hold `new`'s keys (but `skip`): equal values keep their text, changed
/// ones their comments, keys `new` lacks go.
fn merge_table(old: &mut Table, new: &Table, skip: &str) {
    for (key, item) in new.iter() {
        if key == skip {
            continue;
        }
        match old.get_mut(key) {
            Some(o) if same_value(o, item) => {}
            Some(o) => match (o.as_value(), item.as_value()) {
                (Some(ov), Some(nv)) => {
                    let mut v = nv.clone();
                    *v.decor_mut() = ov.decor().clone();
                    *o = Item::Value(v);
                }
                _ => *o = item.clone(),
            },
            None => {
                old.insert(key, item.clone());
            }
        }
    }
    let gone: Vec<String> = old
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| k != skip && !new.contains_key(k))
        .collect();
    for k in gone {
        old.remove(&k);
    }
}

/// Whether two items hold the same data, however written.
fn same_value(a: &Item, b: &Item) -> bool {
    let data = |i: &Item| {
        let mut d = DocumentMut::new();
        d.insert("k", i.clone());
        toml::from_str::<toml::Table>(&d.to_string()).ok()
    };
    data(a) == data(b)
}

/// Reads, changes and writes the manifest of `ladder_dir` under the ladder's lock, after
/// finishing what an interrupted import left; starts from `defaults` where there is none.
/// The manifest there is read within `limits`.
pub fn update<T>(
    ladder_dir: &Path,
    defaults: Option<&Manifest>,
    limits: SizeLimits,
    change: impl FnOnce(&mut Manifest) -> Result<T>,
) -> Result<T> {
    let profiles = ladder_dir.parent().unwrap_or(Path::new("."));
    files::confine::create_dir(profiles, ladder_dir)?;
    let _lock = files::lock::Lock::acquire(ladder_dir)?;
    staging::recover(ladder_dir)?;
    let mut edit = Edit::open(ladder_dir, defaults, limits)?;
    files::fault::point("the manifest read");
    let out = change(&mut edit.manifest)?;
    edit.save()?;
    Ok(out)
}

/// Makes the manifest of `ladder_dir` list these versions: each entry's title,
/// technique, parent, notes and source replace what it had (its exports are kept); a
/// new manifest starts from `defaults`. Versions are ordered as `order` names them (the
/// recipe's order), those it does not name after them in their order. Notes or sources
/// in the kernels folder beside the profiles folder make the manifest declare it.
pub fn record_versions(
    ladder_dir: &Path,
    defaults: &Manifest,
    entries: &[VersionEntry],
    order: &[&str],
    limits: SizeLimits,
) -> Result<()> {
    update(ladder_dir, Some(defaults), limits, |m| {
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
        let kernels = Path::new(KERNELS_BESIDE);
        let in_kernels = |p: &Option<String>| {
            p.as_deref()
                .is_some_and(|p| files::paths::lexically_inside(Path::new(p), kernels))
        };
        if m.kernels.is_none()
            && m.versions
                .iter()
                .any(|v| in_kernels(&v.notes) || in_kernels(&v.source))
        {
            m.kernels = Some(KERNELS_BESIDE.to_string());
        }
        Ok(())
    })
}

/// The kernels folder beside the profiles folder, as a ladder folder sees it.
pub const KERNELS_BESIDE: &str = "../../kernels";

/// Stores the command a version was profiled with in the manifest of `ladder_dir`.
pub fn record_profile_command(
    ladder_dir: &Path,
    id: &str,
    cmd: &ProfileCommand,
    limits: SizeLimits,
) -> Result<()> {
    update(ladder_dir, None, limits, |m| {
        let v = m.version_mut(id).ok_or_else(|| {
            anyhow!(
                "{} has no version {id}",
                ladder_dir.join(FILE_NAME).display()
            )
        })?;
        v.profile = Some(cmd.clone());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(text: &str) -> Edit {
        Edit {
            manifest: Manifest::parse(text).unwrap(),
            existed: true,
            doc: text.parse().unwrap(),
            path: PathBuf::from(FILE_NAME),
        }
    }

    const COMMENTED: &str = "# The toy ladder.\ntitle = \"toy\"   # its name\npeak_tflops = 67.0\n\n# The first step.\n[[version]]\nid = \"v1\"\ntitle = \"naive\" # short\nfiles = [\"a.csv\"]\n";

    #[test]
    fn an_unchanged_manifest_is_written_back_as_it_was() {
        assert_eq!(edit(COMMENTED).render(), COMMENTED);
    }

    #[test]
    fn a_change_keeps_the_comments() {
        let mut e = edit(COMMENTED);
        e.manifest.versions[0].title = "plain".into();
        e.manifest.versions.push(VersionEntry {
            id: "v2".into(),
            title: "tiled".into(),
            ..VersionEntry::default()
        });
        let text = e.render();
        assert!(
            text.contains("# The toy ladder.")
                && text.contains("# its name")
                && text.contains("# The first step.")
                && text.contains("title = \"plain\" # short")
                && text.find("v1").unwrap() < text.find("v2").unwrap(),
            "{text}"
        );
    }

    #[test]
    fn a_profile_command_lands_on_its_own_version() {
        let mut e = edit(&format!(
            "{COMMENTED}\n[[version]]\nid = \"v2\"\ntitle = \"tiled\"\n"
        ));
        e.manifest.versions[0].profile = Some(ProfileCommand {
            command: vec!["python3".into(), "bench.py".into()],
            set: "full".into(),
            ..ProfileCommand::default()
        });
        e.manifest.versions.swap(0, 1);
        let text = e.render();
        assert_eq!(Manifest::parse(&text).unwrap(), e.manifest, "{text}");
    }

    #[test]
    fn a_duplicate_id_names_both_lines() {
        let text = "title = \"t\"\n[[version]]\nid = \"v1\"\ntitle = \"a\"\n[[version]]\nid = \"v1\"\ntitle = \"b\"\n";
        let err = Manifest::from_text("ladder.toml", text)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("ladder.toml:6:") && err.contains("first at line 3"),
            "{err}"
        );
    }

    #[test]
    fn a_syntax_error_keeps_its_line_and_column() {
        let err = Manifest::from_text("ladder.toml", "title = \"t\"\nproblem = oops\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("ladder.toml:2:11:"), "{err}");
    }
}
