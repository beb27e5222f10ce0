//! The ladder manifest, `profiles/<ladder>/ladder.toml`: order, titles, notes and the
//! FLOP count of one launch; the exports of each version sit beside it.

use serde::{Deserialize, Serialize};

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
}

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest, toml::de::Error> {
        toml::from_str(text)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a manifest always serializes")
    }

    pub fn version_mut(&mut self, id: &str) -> Option<&mut VersionEntry> {
        self.versions.iter_mut().find(|v| v.id == id)
    }
}
