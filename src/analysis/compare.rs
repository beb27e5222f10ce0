//! Two versions side by side: every metric's delta, judged by the metric's direction;
//! the stall shares, the (reason × opcode) cells, the instruction mix and the SASS.

use super::catalogue::{Better, METRICS, MetricId};
use super::estimates::{self, StepEstimates};
use super::roofline::{self, RoofStep};
use super::sass::{self, MixRow, SassDiff};
use super::speed::{self, SpeedVerdict, Speedup};
use super::{Bottleneck, NoLabel, OpcodeStat, StallSource, VersionAnalysis, noise};
use crate::model::Ladder;
use crate::ncu::{SourceListing, StallReason};
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
    /// A timed change whose interval does not settle it (see [`speed`]).
    Unclear,
    /// One side is unknown, or what the sides hold cannot carry a verdict (too few stall
    /// samples, shares without sample counts).
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

    /// The verdict on `b` against `a` from `s`, b's speed-up over a
    /// (`speed::speedup(b, a)`): the one rule every timed comparison follows.
    pub fn of_speed(s: &Speedup) -> Verdict {
        Verdict::of_speed_verdict(s.verdict)
    }

    fn of_speed_verdict(v: SpeedVerdict) -> Verdict {
        match v {
            SpeedVerdict::Faster => Verdict::Better,
            SpeedVerdict::Slower => Verdict::Worse,
            SpeedVerdict::Level => Verdict::Same,
            SpeedVerdict::Unclear => Verdict::Unclear,
        }
    }

    /// A share's change from `a` of `na` samples to `b` of `nb` samples, judged by the
    /// two-proportion z test ([`noise::two_sample_z`]): `better` or `worse` by the
    /// share's direction only at `|z| ≥` [`noise::Z_MIN`], `same` below it, and unknown
    /// where either side lacks its sample count or has fewer than
    /// [`noise::MIN_SAMPLES`]. A change under [`SHARE_TOLERANCE`] is the same.
    pub fn of_shares(
        a: Option<f64>,
        na: Option<u64>,
        b: Option<f64>,
        nb: Option<u64>,
        better: Better,
    ) -> Verdict {
        let (Some(a), Some(na), Some(b), Some(nb)) = (a, na, b, nb) else {
            return Verdict::Unknown;
        };
        if na < noise::MIN_SAMPLES || nb < noise::MIN_SAMPLES {
            return Verdict::Unknown;
        }
        let count = |share: f64, n: u64| (share * n as f64).round() as u64;
        let z = noise::two_sample_z(count(a, na), na, count(b, nb), nb);
        // Beside noise, a move under half a point is no change worth a word, however
        // many samples carry it.
        if z.abs() < noise::Z_MIN || (b - a).abs() < SHARE_TOLERANCE {
            return Verdict::Same;
        }
        match (better, z > 0.0) {
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
            Verdict::Unclear => "unclear",
            Verdict::Unknown => "—",
        }
    }
}

/// The smallest change of a share (0..1) that gets a verdict: half a percentage point.
pub const SHARE_TOLERANCE: f64 = 0.005;

/// The run rows whose value is the median time or follows from it alone: their verdict
/// is the runs' paired speed-up, never the 1 % rule.
pub fn follows_run_time(id: MetricId) -> bool {
    matches!(
        id,
        MetricId::RunTime | MetricId::RunTflops | MetricId::RunPctOfCeiling
    )
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

/// One (reason @ opcode) cell in the two versions.
#[derive(Debug, Clone, Serialize)]
pub struct CellDelta {
    pub reason: StallReason,
    pub opcode: String,
    /// Shares of each version's stall samples (0..1), zero where the cell is empty;
    /// unknown where the version has no source page.
    pub a: Option<f64>,
    pub b: Option<f64>,
    pub a_samples: Option<u64>,
    pub b_samples: Option<u64>,
    /// `changed` when the shares differ by more than sampling noise (two independent
    /// samples, z ≥ 2), else `same`; `unknown` where a side has no source page.
    pub verdict: Verdict,
}

/// What one side of a comparison says about its stalls.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub bottleneck: Option<Bottleneck>,
    pub no_label: Option<NoLabel>,
    pub stall_source: Option<StallSource>,
    pub stall_samples: Option<u64>,
    /// The overall top stall reason and its share where it is not the label's reason.
    pub top_reason: Option<(StallReason, f64)>,
    pub occupancy: Option<super::occupancy::OccupancyLimit>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// b's speed-up over a from their run results at the shape compared, rounds paired:
    /// the verdict of every row that follows the run time ([`follows_run_time`]).
    pub speed: Option<Speedup>,
    pub metrics: Vec<MetricDelta>,
    /// Stall shares (0..1) of reasons present on either side.
    pub stalls: Vec<StallDelta>,
    pub a: Side,
    pub b: Side,
    /// The hottest (reason @ opcode) cells of either version, largest first.
    pub cells: Vec<CellDelta>,
    /// Opcode classes side by side (count, stall samples, share).
    pub mix: Vec<MixRow>,
    /// The two SASS listings aligned, where both versions have a source page.
    pub sass: Option<SassDiff>,
    pub hot_ops_a: Vec<OpcodeStat>,
    pub hot_ops_b: Vec<OpcodeStat>,
    /// How b's point moved from a's on the roofline ([`Comparison::with_roofline`]).
    pub roofline: Option<RoofStep>,
    /// a's ncu findings that b resolved, and the change in time beside them.
    pub estimates: Option<StepEstimates>,
}

impl Comparison {
    /// The comparison of version `ia` of `la` with `ib` of `lb`, with the step on the
    /// roofline and what ncu estimated for it.
    pub fn with_roofline(self, la: &Ladder, ia: usize, lb: &Ladder, ib: usize) -> Comparison {
        Comparison {
            roofline: Some(roofline::step_between(la, ia, lb, ib)),
            estimates: estimates::step_estimates_between(la, ia, lb, ib),
            ..self
        }
    }
}

/// Cells of the (reason × opcode) tables a comparison lists.
pub const COMPARED_CELLS: usize = 12;

/// Compares two versions; with both SASS listings, the SASS as well. `speed` is b's
/// speed-up over a from the run results the analyses show (`speed::speedup(b, a)`),
/// where both ran.
pub fn compare(
    a: &VersionAnalysis,
    b: &VersionAnalysis,
    listings: Option<(&SourceListing, &SourceListing)>,
    speed: Option<Speedup>,
) -> Comparison {
    let metrics = METRICS
        .iter()
        .map(|d| {
            let (x, y) = (a.get(d.id), b.get(d.id));
            let verdict = if follows_run_time(d.id) {
                match (&speed, x.zip(y)) {
                    (Some(s), Some(_)) => Verdict::of_speed(s),
                    _ => Verdict::Unknown,
                }
            } else if d.id == MetricId::Duration {
                // ncu's single launches, judged as the timeline judges them.
                speed::single_verdict(d.better, x, y)
                    .map_or(Verdict::Unknown, Verdict::of_speed_verdict)
            } else {
                Verdict::judge(x, y, d.better, d.kind.tolerance())
            };
            MetricDelta {
                id: d.id,
                a: x,
                b: y,
                verdict,
            }
        })
        .collect();
    let share = |v: &VersionAnalysis, r| v.stalls.as_ref().map(|s| s.share(r));
    let samples = |v: &VersionAnalysis| v.stalls.as_ref().and_then(|s| s.samples);
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
                verdict: Verdict::of_shares(
                    share(a, r),
                    samples(a),
                    share(b, r),
                    samples(b),
                    better,
                ),
            }
        })
        .collect();
    let side = |v: &VersionAnalysis| Side {
        bottleneck: v.bottleneck.clone(),
        no_label: v.no_label,
        stall_source: v.stalls.as_ref().map(|s| s.source),
        top_reason: v.other_top_reason(),
        stall_samples: v.stalls.as_ref().and_then(|s| s.samples),
        occupancy: v.occupancy.clone(),
    };
    Comparison {
        speed,
        metrics,
        stalls,
        a: side(a),
        b: side(b),
        cells: cell_deltas(a, b),
        mix: sass::mix(&a.hot_ops, &b.hot_ops),
        sass: listings.map(|(x, y)| sass::diff(x, y)),
        hot_ops_a: a.hot_ops.clone(),
        hot_ops_b: b.hot_ops.clone(),
        roofline: None,
        estimates: None,
    }
}

/// The hottest cells of either table, by the larger of their two shares.
fn cell_deltas(a: &VersionAnalysis, b: &VersionAnalysis) -> Vec<CellDelta> {
    let (ma, mb) = (a.matrix.as_ref(), b.matrix.as_ref());
    let mut places: Vec<(StallReason, &str)> = Vec::new();
    for m in [ma, mb].into_iter().flatten() {
        for c in m.cells.iter().take(COMPARED_CELLS) {
            if !places.contains(&(c.reason, c.opcode.as_str())) {
                places.push((c.reason, &c.opcode));
            }
        }
    }
    let mut out: Vec<CellDelta> = places
        .into_iter()
        .map(|(reason, opcode)| {
            let count = |m: Option<&super::StallMatrix>| m.map(|m| m.count(reason, opcode));
            let share = |m: Option<&super::StallMatrix>| m.map(|m| m.share(reason, opcode));
            let verdict = match (ma, mb) {
                (Some(x), Some(y)) => {
                    let (a, b) = (x.count(reason, opcode), y.count(reason, opcode));
                    let z = noise::two_sample_z(a, x.samples, b, y.samples);
                    if z.abs() >= noise::Z_MIN {
                        Verdict::Changed
                    } else {
                        Verdict::Same
                    }
                }
                _ => Verdict::Unknown,
            };
            CellDelta {
                reason,
                opcode: opcode.to_string(),
                a: share(ma),
                b: share(mb),
                a_samples: count(ma),
                b_samples: count(mb),
                verdict,
            }
        })
        .collect();
    let larger = |d: &CellDelta| d.a.unwrap_or(0.0).max(d.b.unwrap_or(0.0));
    out.sort_by(|x, y| larger(y).total_cmp(&larger(x)));
    out.truncate(COMPARED_CELLS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A share's move of 1.1 points on 903 samples a side is within noise (z ≈ 0.8):
    /// no verdict; the same move on 90,300 samples is one; fewer than 100 samples, or
    /// none counted, judge nothing.
    #[test]
    fn share_verdicts_need_their_samples() {
        let judge = |n| Verdict::of_shares(Some(0.120), n, Some(0.131), n, Better::Lower);
        assert_eq!(judge(Some(903)), Verdict::Same);
        assert_eq!(judge(Some(90_300)), Verdict::Worse);
        assert_eq!(judge(Some(99)), Verdict::Unknown);
        assert_eq!(judge(None), Verdict::Unknown);
        // Significant but under half a point: the same.
        let tiny = Verdict::of_shares(
            Some(0.0),
            Some(10_000_000),
            Some(0.004),
            Some(10_000_000),
            Better::Lower,
        );
        assert_eq!(tiny, Verdict::Same);
    }

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
