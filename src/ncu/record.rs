//! What one page says about one kernel launch: its launch, and the page's content (the
//! long layout's metrics and rules, the raw page's row, the source page's listing).

use super::launch::{Identity, LaunchInfo};
use super::listing::SourceListing;
use super::raw::RawMetrics;
use super::value::Value;
use serde::Serialize;

/// What one page says about one kernel launch.
#[derive(Debug, Clone)]
pub struct KernelRecord {
    pub kernel: String,
    /// ncu's launch ID ("ID" column); the source and summary pages have none.
    pub launch_id: Option<u64>,
    pub process_id: Option<u64>,
    pub launch: LaunchInfo,
    pub page: Page,
    /// The file line where this kernel's rows start.
    pub line: u64,
}

impl KernelRecord {
    /// The record of the launch `identity` describes, with its page's content.
    pub(crate) fn new(identity: Identity, page: Page) -> KernelRecord {
        KernelRecord {
            kernel: identity.kernel,
            launch_id: identity.launch_id,
            process_id: identity.process_id,
            launch: identity.launch,
            page,
            line: identity.line,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Page {
    /// The long layout: details, `--metrics` and summary pages.
    Metrics {
        metrics: Vec<DetailMetric>,
        rules: Vec<RuleFinding>,
    },
    Raw(RawMetrics),
    Source(SourceListing),
}

/// One metric of the long layout, its value in the internal unit.
#[derive(Debug, Clone, Serialize)]
pub struct DetailMetric {
    pub section: Box<str>,
    pub name: Box<str>,
    pub unit: Box<str>,
    pub value: Value,
    /// Summary pages: minimum and maximum over the invocations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<(f64, f64)>,
}

/// A rule's finding from the details page.
#[derive(Debug, Clone, Serialize)]
pub struct RuleFinding {
    /// The section identifier (`SpeedOfLight`, `LaunchStats` …).
    pub section: String,
    pub rule: String,
    /// OPT, WRN, INF …
    pub kind: String,
    pub description: String,
    pub speedup_type: Option<String>,
    /// Estimated speedup in percent.
    pub speedup_pct: Option<f64>,
}
