//! Two versions side by side: every metric's delta, judged by the metric's direction.

use super::catalogue::{Better, METRICS, MetricId};
use super::{OpcodeStat, VersionAnalysis};
use crate::ncu::StallReason;
use serde::Serialize;

/// What a change means for a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// Within 1% of each other (or within the metric's absolute tolerance).
    Same,
    /// Changed, and the metric has no better direction.
    Changed,
    /// One side is unknown.
    Unknown,
}

impl Verdict {
    /// Judges a change from `a` to `b`; changes under `tolerance` (absolute, in the
    /// metric's unit) or under 1% count as the same.
    pub fn judge(a: Option<f64>, b: Option<f64>, better: Better, tolerance: f64) -> Verdict {
        let (Some(a), Some(b)) = (a, b) else {
            return Verdict::Unknown;
        };
        let scale = a.abs().max(b.abs());
        if scale == 0.0 || (b - a).abs() <= tolerance || (b - a).abs() / scale < 0.01 {
            return Verdict::Same;
        }
        match (better, b > a) {
            (Better::Neutral, _) => Verdict::Changed,
            (Better::Higher, true) | (Better::Lower, false) => Verdict::Better,
            _ => Verdict::Worse,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Changed => "changed",
            Verdict::Unknown => "—",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricDelta {
    pub id: MetricId,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Serialize)]
pub struct StallDelta {
    pub reason: StallReason,
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub metrics: Vec<MetricDelta>,
    /// Stall shares (0..1) of reasons present on either side.
    pub stalls: Vec<StallDelta>,
    pub hot_ops_a: Vec<OpcodeStat>,
    pub hot_ops_b: Vec<OpcodeStat>,
}

pub fn compare(a: &VersionAnalysis, b: &VersionAnalysis) -> Comparison {
    let metrics = METRICS
        .iter()
        .map(|d| {
            let (x, y) = (a.get(d.id), b.get(d.id));
            MetricDelta {
                id: d.id,
                a: x,
                b: y,
                verdict: Verdict::judge(x, y, d.better, d.kind.tolerance()),
            }
        })
        .collect();
    let share = |v: &VersionAnalysis, r| v.stalls.as_ref().map(|s| s.share(r));
    let stalls = StallReason::ALL
        .iter()
        .filter(|&&r| share(a, r).unwrap_or(0.0) > 0.0 || share(b, r).unwrap_or(0.0) > 0.0)
        .map(|&r| {
            let better = if r.is_stall() {
                Better::Lower
            } else {
                Better::Higher
            };
            StallDelta {
                reason: r,
                a: share(a, r),
                b: share(b, r),
                // Shares are 0..1: half a percentage point is noise.
                verdict: Verdict::judge(share(a, r), share(b, r), better, 0.005),
            }
        })
        .collect();
    Comparison {
        metrics,
        stalls,
        hot_ops_a: a.hot_ops.clone(),
        hot_ops_b: b.hot_ops.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_direction() {
        assert_eq!(
            Verdict::judge(Some(2.0), Some(1.0), Better::Lower, 0.0),
            Verdict::Better
        );
        assert_eq!(
            Verdict::judge(Some(2.0), Some(1.0), Better::Higher, 0.0),
            Verdict::Worse
        );
        assert_eq!(
            Verdict::judge(Some(100.0), Some(100.5), Better::Higher, 0.0),
            Verdict::Same
        );
        assert_eq!(
            Verdict::judge(Some(1.0), Some(3.0), Better::Neutral, 0.0),
            Verdict::Changed
        );
        assert_eq!(
            Verdict::judge(Some(0.009), Some(0.014), Better::Higher, 0.5),
            Verdict::Same
        );
        assert_eq!(
            Verdict::judge(None, Some(3.0), Better::Higher, 0.0),
            Verdict::Unknown
        );
    }
}
