//! One kernel launch as the model holds it: what ncu measured, merged from the pages
//! exported from one report.

use super::kernel_name::short_kernel_name;
use super::source::SourcePage;
use crate::ncu::{DetailMetric, LaunchInfo, PageKind, RawMetrics, RuleFinding};
use std::path::PathBuf;

/// Everything known about one kernel launch, merged from the pages exported from one
/// report (raw, details, source …).
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub kernel: String,
    pub launch_id: Option<u64>,
    pub process_id: Option<u64>,
    pub launch: LaunchInfo,
    pub raw: Option<RawMetrics>,
    /// Details, `--metrics` and summary rows.
    pub details: Vec<DetailMetric>,
    pub rules: Vec<RuleFinding>,
    /// The source page: its summary, and its rows when a view asks for them.
    pub source: Option<SourcePage>,
    /// The pages merged into this profile and the files they came from.
    pub pages: Vec<(PageKind, PathBuf)>,
    /// What its figures cannot be trusted for, one sentence each: pages of different
    /// ncu runs merged into it (see [`super::merge`]).
    pub warnings: Vec<String>,
}

impl Profile {
    pub fn has_page(&self, kind: PageKind) -> bool {
        self.pages.iter().any(|(k, _)| *k == kind)
    }

    /// A raw metric by name (collection prefix ignored): from the raw page, else from a
    /// `--metrics` page, which uses the same names.
    pub fn raw_value(&self, metric: &str) -> Option<f64> {
        if let Some(v) = self.raw.as_ref().and_then(|r| r.num(metric)) {
            return Some(v);
        }
        self.details
            .iter()
            .find(|m| &*m.name == metric)
            .and_then(|m| m.value.num())
    }

    /// A details-page metric by section and name.
    pub fn detail_value(&self, section: &str, name: &str) -> Option<f64> {
        self.details
            .iter()
            .find(|m| &*m.section == section && &*m.name == name)
            .and_then(|m| m.value.num())
    }

    /// The launch's duration in ns as its pages give it: the raw page's, else a details
    /// page's (ncu's, or a Visual Profiler export's). The listings and the merge warning
    /// read it here; the catalogue's `Duration` row reads the same names.
    pub fn duration_ns(&self) -> Option<f64> {
        self.raw_value("gpu__time_duration.sum")
            .or_else(|| self.detail_value("GPU Speed Of Light Throughput", "Duration"))
            .or_else(|| self.detail_value(crate::ncu::nvvp::SECTION, "Duration"))
    }

    pub fn short_name(&self) -> String {
        short_kernel_name(&self.kernel)
    }
}
