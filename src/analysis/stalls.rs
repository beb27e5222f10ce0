//! Stall shares (with where they come from and how many samples stand behind them) and
//! the hot instruction classes of a source page.

use crate::model::Profile;
use crate::ncu::{SourceSummary, StallReason};
use serde::Serialize;

/// Where a stall breakdown came from, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StallSource {
    /// PC samples: `smsp__pcsamp_warps_issue_stalled_*` of the raw page.
    #[serde(rename = "pc_sampling")]
    Sampling,
    /// PC samples: the per-instruction samples of the source page, summed.
    SourcePage,
    /// No PC samples: `smsp__average_warps_issue_stalled_*_per_issue_active.ratio`
    /// (warps stalled per issued instruction), normalised to add up to 1. Shares of
    /// stalled warps per issue, not of samples.
    PerIssueRatios,
    /// No PC samples: the Visual Profiler's launch-level "Issue Stall Reasons" percentages
    /// (GPUs before Ampere), legacy reasons kept under their own names.
    LaunchPercentages,
}

impl StallSource {
    /// The machine name (JSON, CSV), as serialized.
    pub fn key(self) -> &'static str {
        match self {
            StallSource::Sampling => "pc_sampling",
            StallSource::SourcePage => "source_page",
            StallSource::PerIssueRatios => "per_issue_ratios",
            StallSource::LaunchPercentages => "launch_percentages",
        }
    }

    /// What the shares are of, for headings: "PC samples", "per-issue stall ratios".
    pub fn unit(self) -> &'static str {
        match self {
            StallSource::Sampling | StallSource::SourcePage => "PC samples",
            StallSource::PerIssueRatios => "per-issue stall ratios",
            StallSource::LaunchPercentages => "launch-level stall %",
        }
    }

    /// Where the figures were read, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            StallSource::Sampling => "PC samples (raw page)",
            StallSource::SourcePage => "PC samples (source page)",
            StallSource::PerIssueRatios => "per-issue stall ratios (no PC samples)",
            StallSource::LaunchPercentages => {
                "launch-level legacy stall percentages (Visual Profiler; no PC samples)"
            }
        }
    }
}

/// The share of warp samples per reason; shares add up to 1 (`selected` included).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StallBreakdown {
    pub source: StallSource,
    /// Indexed by [`StallReason::index`].
    pub shares: Vec<f64>,
    /// PC samples behind the shares (`smsp__pcsamp_sample_count`, or the source page's
    /// sum); with per-issue ratios, the profile's sample count where it has one (often 0:
    /// the reason the ratios were used).
    pub samples: Option<u64>,
}

impl StallBreakdown {
    pub fn from_profile(p: &Profile) -> Option<StallBreakdown> {
        from_sampling(p)
            .or_else(|| p.source.as_ref().and_then(|s| from_source(&s.summary)))
            .or_else(|| from_ratios(p))
            .or_else(|| from_legacy(p))
    }

    pub fn share(&self, r: StallReason) -> f64 {
        self.shares[r.index()]
    }

    /// The share of `r` where this breakdown can hold it: launch-level percentages of a
    /// GPU before Volta name only the legacy reasons and `not_selected`, so a Hopper
    /// reason there (barrier, short scoreboard) is unknown, never zero.
    pub fn known_share(&self, r: StallReason) -> Option<f64> {
        let holds = self.source != StallSource::LaunchPercentages
            || r.is_legacy()
            || r == StallReason::NotSelected;
        holds.then(|| self.share(r))
    }

    /// Reasons by share, largest first, leaving out those with no samples.
    pub fn ranked(&self) -> Vec<(StallReason, f64)> {
        let mut v: Vec<_> = StallReason::ALL
            .iter()
            .map(|&r| (r, self.share(r)))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v
    }

    /// The largest stall reason; `selected` (the warp issued) never counts.
    pub fn dominant(&self) -> Option<StallReason> {
        self.ranked()
            .into_iter()
            .find(|(r, _)| r.is_stall())
            .map(|(r, _)| r)
    }

    fn from_counts(source: StallSource, counts: &[f64], samples: Option<u64>) -> Option<Self> {
        let total: f64 = counts.iter().sum();
        if total <= 0.0 {
            return None;
        }
        Some(StallBreakdown {
            source,
            shares: counts.iter().map(|c| c / total).collect(),
            samples,
        })
    }
}

/// Shares from the sampling counters. A partial set (a `--metrics` export naming a few
/// counters) gives no breakdown: its shares would be of the chosen few, not of all.
fn from_sampling(p: &Profile) -> Option<StallBreakdown> {
    let mut counts = vec![0.0; StallReason::COUNT];
    let mut present = 0;
    for &r in StallReason::ALL {
        let name = format!("smsp__pcsamp_warps_issue_stalled_{}", r.metric_name());
        if let Some(v) = p.raw_value(&name) {
            counts[r.index()] = v;
            present += 1;
        }
    }
    let samples = p.raw_value("smsp__pcsamp_sample_count").and_then(count);
    if present * 2 < StallReason::COUNT {
        return None;
    }
    StallBreakdown::from_counts(StallSource::Sampling, &counts, samples)
}

fn from_source(s: &SourceSummary) -> Option<StallBreakdown> {
    let counts: Vec<f64> = s.stalls().into_iter().map(|n| n as f64).collect();
    let samples = u64::try_from(s.total_samples()).ok();
    StallBreakdown::from_counts(StallSource::SourcePage, &counts, samples)
}

/// A count read as a number: `None` unless it is a whole number that fits.
fn count(x: f64) -> Option<u64> {
    (x >= 0.0 && x.fract() == 0.0 && x < 18_446_744_073_709_551_616.0).then_some(x as u64)
}

fn from_ratios(p: &Profile) -> Option<StallBreakdown> {
    let mut counts = vec![0.0; StallReason::COUNT];
    let mut present = 0;
    for &r in StallReason::ALL {
        if r.ratio_name().is_empty() {
            continue;
        }
        let name = format!(
            "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio",
            r.ratio_name()
        );
        if let Some(v) = p.raw_value(&name) {
            counts[r.index()] = v;
            present += 1;
        }
    }
    if present * 2 < StallReason::COUNT {
        return None;
    }
    let samples = p.raw_value("smsp__pcsamp_sample_count").map(|v| v as u64);
    StallBreakdown::from_counts(StallSource::PerIssueRatios, &counts, samples)
}

/// Shares from the Visual Profiler's launch-level "Issue Stall Reasons (…)(%)" columns,
/// each legacy reason read through [`crate::ncu::legacy`].
fn from_legacy(p: &Profile) -> Option<StallBreakdown> {
    let mut counts = vec![0.0; StallReason::COUNT];
    let mut present = 0;
    for m in &p.details {
        if &*m.section != crate::ncu::nvvp::SECTION {
            continue;
        }
        let Some(legacy) =
            crate::ncu::legacy::nvvp_label_of(&m.name).and_then(crate::ncu::legacy::find)
        else {
            continue;
        };
        if let Some(v) = m.value.num() {
            counts[legacy.reason.index()] += v;
            present += 1;
        }
    }
    if present == 0 {
        return None;
    }
    StallBreakdown::from_counts(StallSource::LaunchPercentages, &counts, None)
}

/// One SASS instruction class of a source page with its samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpcodeStat {
    pub opcode: String,
    /// Stall samples: all samples minus `selected` (the warp issued).
    pub stall_samples: u64,
    /// All samples, `selected` included.
    pub samples: u64,
    /// Instructions of this class in the listing.
    pub instructions: usize,
    /// Reasons by samples, largest first (no zero entries).
    pub reasons: Vec<(StallReason, u64)>,
}

impl OpcodeStat {
    /// The reason this class stalls on most (`selected` is not a stall).
    pub fn top_stall_reason(&self) -> Option<StallReason> {
        self.reasons
            .iter()
            .find(|(r, _)| r.is_stall())
            .map(|(r, _)| *r)
    }
}

/// A source page's instruction classes, hottest (by stall samples) first, from its
/// (stall reason × opcode class) table.
pub fn hot_ops(s: &SourceSummary) -> Vec<OpcodeStat> {
    let mut out: Vec<OpcodeStat> = s
        .opcodes
        .iter()
        .map(|o| {
            let selected = o.stalls[StallReason::Selected.index()];
            let mut reasons: Vec<(StallReason, u64)> = StallReason::ALL
                .iter()
                .map(|&r| (r, o.stalls[r.index()]))
                .filter(|(_, n)| *n > 0)
                .collect();
            reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            OpcodeStat {
                opcode: o.opcode.to_string(),
                stall_samples: o.samples.saturating_sub(selected),
                samples: o.samples,
                instructions: o.instructions,
                reasons,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.stall_samples
            .cmp(&a.stall_samples)
            .then_with(|| a.opcode.cmp(&b.opcode))
    });
    out
}
