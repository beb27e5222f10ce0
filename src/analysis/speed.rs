//! How much faster one candidate is than another, and whether that can be believed.
//! The rule is stated here once; `run`'s table and JSON, the reports and the timeline's
//! ▼ mark all take their verdicts from [`speedup`] (ncu's single launches from
//! [`single_verdict`], the same interval with the fixed band).
//!
//! The speed-up of `a` over `b` is b's time over a's. Rounds are paired by position (each
//! round ran every candidate once, in the same order, so drift falls on both alike): the
//! ratio is the geometric mean of the per-round ratios, and its 95 % interval the
//! t-interval of their logarithms ([`paired`]). With fewer than two paired rounds (one
//! round, or ncu's single launches) the interval is the ratio ∓ [`SINGLE_ROUND_BAND`].
//! The same is done in cycles (each round's time × its mean SM clock), which removes
//! a clock difference between the two.
//!
//! The verdict, in this order:
//! - `unclear` when the two ran in different runs or under different regimes, or when
//!   their mean SM clocks differ by more than [`CLOCK_BAND`] outside settled sustained
//!   timing (warm-ups settled in most rounds; under the power cap, after a warm-up that
//!   settled, each kernel runs at the
//!   clock its own power draw allows: that clock is part of its speed, not noise);
//! - `level` when the interval lies inside the equivalence band, 1 ± [`EQUIVALENCE_BAND`];
//! - `faster` or `slower` when it lies wholly above or below 1;
//! - otherwise `unclear: not converged` (it includes 1 but is wider than the band, or
//!   reaches past one edge of it: a ratio of 0.992 ± 0.9 % may be level or 1.5 % apart);
//! - and a verdict in time that cycles contradict (faster in time but level in cycles:
//!   won by the clock alone; level in time but slower in cycles: made up by the clock)
//!   reads `unclear: time and cycles disagree`.
//!
//! A warm-up that did not settle is no reason for `unclear` by itself; it is carried as
//! a caveat beside the verdict, and the run table marks it.

use crate::model::RunResult;
use serde::Serialize;

/// Clocks further apart than this make a comparison unclear (outside settled sustained
/// timing).
pub const CLOCK_BAND: f64 = 0.02;
/// With fewer than two paired rounds, the interval is the ratio ∓ this.
pub const SINGLE_ROUND_BAND: f64 = 0.02;
/// Two candidates whose interval lies within 1 ± this are level.
pub const EQUIVALENCE_BAND: f64 = 0.01;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpeedVerdict {
    Faster,
    Slower,
    Level,
    Unclear,
}

impl SpeedVerdict {
    pub fn word(self) -> &'static str {
        match self {
            SpeedVerdict::Faster => "faster",
            SpeedVerdict::Slower => "slower",
            SpeedVerdict::Level => "level",
            SpeedVerdict::Unclear => "unclear",
        }
    }
}

/// Why a verdict is unclear.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unclear {
    /// The interval includes 1 but is wider than the equivalence band, or reaches past
    /// one edge of it.
    NotConverged,
    /// The SM clocks differ by more than [`CLOCK_BAND`] outside settled sustained timing.
    ClocksApart,
    /// The verdict in cycles is another than in time.
    TimeAndCyclesDisagree,
    DifferentRuns,
    DifferentRegimes,
}

impl Unclear {
    pub fn words(self) -> &'static str {
        match self {
            Unclear::NotConverged => "not converged",
            Unclear::ClocksApart => "clocks apart",
            Unclear::TimeAndCyclesDisagree => "time and cycles disagree",
            Unclear::DifferentRuns => "different runs",
            Unclear::DifferentRegimes => "different regimes",
        }
    }
}

/// A ratio with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
    /// The paired rounds behind it (0: a single measurement each, the fixed band).
    pub rounds: usize,
}

impl Interval {
    /// A single measurement each: the ratio ∓ [`SINGLE_ROUND_BAND`].
    fn single(ratio: f64) -> Interval {
        Interval {
            ratio,
            low: ratio * (1.0 - SINGLE_ROUND_BAND),
            high: ratio * (1.0 + SINGLE_ROUND_BAND),
            rounds: 0,
        }
    }

    /// Half the interval's width, in % of the ratio.
    pub fn half_width_pct(&self) -> f64 {
        (self.high - self.low) / 2.0 / self.ratio * 100.0
    }

    fn scaled(&self, k: f64) -> Interval {
        Interval {
            ratio: self.ratio * k,
            low: self.low * k,
            high: self.high * k,
            rounds: self.rounds,
        }
    }

    /// Where the interval lies: inside the band, above or below 1, or across 1 and
    /// wider than the band or past one edge of it (more rounds may still settle it).
    pub fn side(&self) -> Result<SpeedVerdict, Unclear> {
        if self.low >= 1.0 - EQUIVALENCE_BAND && self.high <= 1.0 + EQUIVALENCE_BAND {
            Ok(SpeedVerdict::Level)
        } else if self.low > 1.0 {
            Ok(SpeedVerdict::Faster)
        } else if self.high < 1.0 {
            Ok(SpeedVerdict::Slower)
        } else {
            Err(Unclear::NotConverged)
        }
    }
}

/// The two-sided 95 % quantile of Student's t with `df` degrees of freedom (past the
/// table, the value of the next smaller tabulated df: a little wide, never narrow).
fn t95(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        31..=39 => TABLE[29],
        40..=59 => 2.021,
        60..=119 => 2.000,
        _ => 1.980,
    }
}

/// `b[i] / a[i]` over rounds paired by position: their geometric mean and its 95 %
/// t-interval. `None` with fewer than two usable pairs.
pub fn paired(a: &[f64], b: &[f64]) -> Option<Interval> {
    let logs: Vec<f64> = a
        .iter()
        .zip(b)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0 && x.is_finite() && y.is_finite())
        .map(|(x, y)| (y / x).ln())
        .collect();
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let half = t95(n - 1) * (var / n as f64).sqrt();
    Some(Interval {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
        rounds: n,
    })
}

/// The speed-up of one candidate over another.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Speedup {
    /// b's time over a's: above 1, `a` is faster.
    pub ratio: f64,
    /// The 95 % interval of the ratio.
    pub low: f64,
    pub high: f64,
    /// The paired rounds behind the interval (0: one measurement each).
    pub rounds: usize,
    /// The same ratio in cycles (time × mean SM clock), where both clocks are known,
    /// with its interval.
    pub cycles: Option<f64>,
    pub cycles_low: Option<f64>,
    pub cycles_high: Option<f64>,
    /// a's mean SM clock over b's, where both are known.
    pub clock_ratio: Option<f64>,
    pub verdict: SpeedVerdict,
    /// Why the verdict is unclear, when it is.
    pub why: Option<Unclear>,
    /// The same in words, with its figures.
    pub detail: Option<String>,
    /// What the verdict stands on that is less than it should be (a warm-up that did
    /// not settle).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
}

/// The speed-up of `a` over `b`, when both have a time.
pub fn speedup(a: &RunResult, b: &RunResult) -> Option<Speedup> {
    let (ta, tb) = (a.median_us?, b.median_us?);
    if ta <= 0.0 || tb <= 0.0 {
        return None;
    }
    // Rounds pair by position within one run (a candidate decided early has fewer:
    // its rounds are the first ones of the others), or where the counts agree.
    let same_rounds =
        (a.run_id.is_some() && a.run_id == b.run_id) || a.rounds.len() == b.rounds.len();
    let time = same_rounds
        .then(|| paired(&a.rounds_us(), &b.rounds_us()))
        .flatten()
        .unwrap_or_else(|| Interval::single(tb / ta));
    let clock_ratio = match (a.sm_clock_mhz, b.sm_clock_mhz) {
        (Some(x), Some(y)) if y > 0.0 => Some(x / y),
        _ => None,
    };
    let cycles = cycles_interval(a, b, same_rounds, &time, clock_ratio);
    let (verdict, why, detail) = judge(a, b, &time, cycles.as_ref(), clock_ratio);
    Some(Speedup {
        ratio: time.ratio,
        low: time.low,
        high: time.high,
        rounds: time.rounds,
        cycles: cycles.map(|c| c.ratio),
        cycles_low: cycles.map(|c| c.low),
        cycles_high: cycles.map(|c| c.high),
        clock_ratio,
        verdict,
        why,
        detail,
        caveats: caveats(a, b),
    })
}

/// The speed-up in cycles: round by round where every round has its clock, else the
/// whole ratio `time` shifted by the mean clocks.
fn cycles_interval(
    a: &RunResult,
    b: &RunResult,
    same_rounds: bool,
    time: &Interval,
    clock_ratio: Option<f64>,
) -> Option<Interval> {
    let cycles_of = |r: &RunResult| -> Option<Vec<f64>> {
        r.rounds
            .iter()
            .map(|x| Some(x.us * x.sm_clock_mhz?))
            .collect()
    };
    match (same_rounds, cycles_of(a), cycles_of(b)) {
        (true, Some(ca), Some(cb)) => paired(&ca, &cb),
        _ => None,
    }
    .or_else(|| clock_ratio.map(|c| time.scaled(1.0 / c)))
}

/// What a verdict between `a` and `b` stands on that is less than it should be: a
/// warm-up that did not settle, one line per candidate.
fn caveats(a: &RunResult, b: &RunResult) -> Vec<String> {
    let mut caveats = Vec::new();
    for r in [a, b] {
        let n = r.unsettled_rounds();
        if n > 0 {
            caveats.push(format!(
                "{}: the warm-up of {n} of {} rounds did not settle",
                r.version,
                r.rounds.len()
            ));
        }
    }
    caveats
}

/// The verdict of the rule (see the module's text), with why it is unclear and the same
/// in words, where it is.
fn judge(
    a: &RunResult,
    b: &RunResult,
    time: &Interval,
    cycles: Option<&Interval>,
    clock_ratio: Option<f64>,
) -> (SpeedVerdict, Option<Unclear>, Option<String>) {
    let unclear = |why: Unclear, detail: String| (SpeedVerdict::Unclear, Some(why), Some(detail));
    if a.run_id.is_some() && a.run_id != b.run_id {
        unclear(Unclear::DifferentRuns, "measured in different runs".into())
    } else if a.regime() != b.regime() {
        unclear(
            Unclear::DifferentRegimes,
            "measured under different regimes".into(),
        )
    } else if let Some(c) = clock_ratio
        .filter(|c| (c - 1.0).abs() > CLOCK_BAND)
        .filter(|_| !(settled_sustained(a) && settled_sustained(b)))
    {
        unclear(
            Unclear::ClocksApart,
            format!("SM clocks {:.1} % apart", (c - 1.0).abs() * 100.0),
        )
    } else {
        match time.side() {
            Err(why) => unclear(
                why,
                format!(
                    "the interval {:.3}–{:.3}× includes 1 and {} the ±{:.0} % band",
                    time.low,
                    time.high,
                    if time.half_width_pct() > EQUIVALENCE_BAND * 100.0 {
                        "is wider than"
                    } else {
                        "reaches past the edge of"
                    },
                    EQUIVALENCE_BAND * 100.0
                ),
            ),
            Ok(v) => match cycles.map(|c| (c, c.side())) {
                // Cycles contradict time: a gain won by the clock alone, or a level
                // time that the clock made up.
                Some((c, Ok(vc))) if vc != v => unclear(
                    Unclear::TimeAndCyclesDisagree,
                    format!(
                        "{} in time but {} in cycles ({:.3}×, {:.3}–{:.3})",
                        v.word(),
                        vc.word(),
                        c.ratio,
                        c.low,
                        c.high
                    ),
                ),
                _ => (v, None, None),
            },
        }
    }
}

/// Timed in the sustained regime after warm-ups that settled: in most rounds, where
/// rounds say (one warm-up of twenty that hit its cap under an oscillating clock is a
/// caveat, not a different protocol), else in all, as the protocol records.
fn settled_sustained(r: &RunResult) -> bool {
    let Some(p) = r.protocol.as_ref() else {
        return false;
    };
    if p.regime != crate::model::runs::Regime::Sustained {
        return false;
    }
    let known = r.rounds.iter().filter(|x| x.settled.is_some()).count();
    if known == r.rounds.len() && known > 0 {
        2 * r.unsettled_rounds() < known
    } else {
        p.settled == Some(true)
    }
}

/// The verdict between two single measurements (ncu's one launch each) of a metric
/// whose direction is `better`: `x` against `parent`'s with the fixed band, as
/// [`speedup`] judges a result of one round. `None` where either is unknown or not
/// positive, or the metric has no better direction.
pub fn single_verdict(
    better: crate::analysis::catalogue::Better,
    parent: Option<f64>,
    x: Option<f64>,
) -> Option<SpeedVerdict> {
    use crate::analysis::catalogue::Better;
    let (p, x) = (parent?, x?);
    if p <= 0.0 || x <= 0.0 {
        return None;
    }
    // The speed-up of `x` over its parent.
    let ratio = match better {
        Better::Lower => p / x,
        Better::Higher => x / p,
        Better::Neutral => return None,
    };
    Some(
        Interval::single(ratio)
            .side()
            .unwrap_or(SpeedVerdict::Unclear),
    )
}

/// The verdicts of every version's run result `shown` (its `speedup` against the
/// fastest version's and each baseline's, at that shape), by version.
pub fn shown_verdicts(ladder: &crate::model::Ladder, shown: super::Shown) -> Vec<Vec<Against>> {
    let shown: Vec<Option<&RunResult>> = ladder
        .versions
        .iter()
        .map(|v| shown.run(ladder, v))
        .collect();
    let all: Vec<&RunResult> = shown.iter().flatten().copied().collect();
    let baseline: std::collections::HashSet<&str> = ladder
        .versions
        .iter()
        .filter(|v| v.baseline)
        .map(|v| v.id.as_str())
        .collect();
    let is_version = |id: &str| !baseline.contains(id);
    shown
        .iter()
        .map(|r| {
            r.map(|r| verdicts(r, &all, &is_version))
                .unwrap_or_default()
        })
        .collect()
}

/// A candidate's verdict against one other.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Against {
    /// The other candidate's id.
    pub against: String,
    /// `best` (the fastest ladder version of the comparison) or `baseline`.
    pub role: &'static str,
    #[serde(flatten)]
    pub speedup: Speedup,
}

/// Every verdict of `r` in a comparison: against the fastest ladder version (unless it
/// is that version) and against each baseline (other than itself).
pub fn verdicts(
    r: &RunResult,
    results: &[&RunResult],
    is_version: &dyn Fn(&str) -> bool,
) -> Vec<Against> {
    let timed = |x: &&&RunResult| {
        x.status == crate::model::RunStatus::Ok && x.median_us.is_some_and(|t| t > 0.0)
    };
    let best = results
        .iter()
        .filter(timed)
        .filter(|x| is_version(&x.version))
        .min_by(|a, b| a.median_us.partial_cmp(&b.median_us).expect("finite"));
    let mut out = Vec::new();
    if !timed(&&r) {
        return out;
    }
    if let Some(b) = best.filter(|b| b.version != r.version)
        && let Some(s) = speedup(r, b)
    {
        out.push(Against {
            against: b.version.clone(),
            role: "best",
            speedup: s,
        });
    }
    for b in results
        .iter()
        .filter(timed)
        .filter(|x| !is_version(&x.version) && x.version != r.version)
    {
        if let Some(s) = speedup(r, b) {
            out.push(Against {
                against: b.version.clone(),
                role: "baseline",
                speedup: s,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunStatus;
    use crate::model::runs::{Protocol, Regime, Round};

    fn r(rounds: &[f64], clock: f64) -> RunResult {
        let mut x = RunResult::new(
            "x",
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            RunStatus::Ok,
        );
        let mut v = rounds.to_vec();
        v.sort_by(f64::total_cmp);
        x.median_us = Some(v[v.len() / 2]);
        x.rounds = rounds
            .iter()
            .map(|&us| Round {
                us,
                sm_clock_mhz: Some(clock),
                settled: Some(true),
                ..Round::default()
            })
            .collect();
        x.sm_clock_mhz = Some(clock);
        x.run_id = Some("run".into());
        x.protocol = Some(Protocol {
            regime: Regime::Sustained,
            mechanism: "cuda_graph".into(),
            launches_per_rep: 100,
            reps: 20,
            rounds: rounds.len() as u32,
            window_ms: 200.0,
            warmup_ms: 300.0,
            settled: Some(true),
            idle_ms: None,
            min_window_ms: Some(200.0),
            convergence: None,
        });
        x
    }

    #[test]
    fn a_candidate_decided_early_pairs_with_the_first_rounds_of_its_run() {
        // The reference went on for nine rounds; the candidate, 20 % slower, sat out
        // after five: its ratio is paired over those five, not the single-round band.
        let reference = r(
            &[60.0, 60.5, 59.5, 60.2, 59.8, 61.0, 59.0, 60.1, 59.9],
            1700.0,
        );
        let decided = r(&[72.0, 72.6, 71.4, 72.2, 71.8], 1700.0);
        let s = speedup(&reference, &decided).unwrap();
        assert_eq!(s.rounds, 5);
        assert!((s.ratio - 1.2).abs() < 0.001, "{s:?}");
        assert!(s.high - s.low < 0.01, "{s:?}");
        assert_eq!(s.verdict, SpeedVerdict::Faster);
        // From another run, the counts apart: not paired.
        let mut other = decided.clone();
        other.run_id = Some("another".into());
        let s = speedup(&reference, &other).unwrap();
        assert_eq!(s.why, Some(Unclear::DifferentRuns));
        assert_eq!(s.rounds, 0);
    }

    #[test]
    fn a_clear_gain_over_every_round_is_faster() {
        let s = speedup(
            &r(&[60.0, 60.5, 60.2], 1620.0),
            &r(&[66.0, 66.4, 65.9], 1625.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Faster, "{s:?}");
        assert!(s.low > 1.08 && s.high < 1.11, "{s:?}");
        assert_eq!(s.rounds, 3);
    }

    #[test]
    fn the_interval_is_the_t_interval_of_the_log_ratios() {
        // Ratios 1.10, 1.00, 1.05: mean log 0.04716, sd 0.04770; t(2) = 4.303.
        let iv = paired(&[1.0, 1.0, 1.0], &[1.10, 1.00, 1.05]).unwrap();
        let logs = [1.10f64.ln(), 0.0, 1.05f64.ln()];
        let mean = logs.iter().sum::<f64>() / 3.0;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.303 * sd / 3f64.sqrt();
        assert!((iv.ratio - mean.exp()).abs() < 1e-12);
        assert!((iv.low - (mean - half).exp()).abs() < 1e-12);
        assert!((iv.high - (mean + half).exp()).abs() < 1e-12);
        assert!(
            paired(&[1.0], &[1.1]).is_none(),
            "one pair gives no interval"
        );
    }

    #[test]
    fn level_means_inside_the_band_not_merely_including_one() {
        // Rounds on both sides of 1 by 3 %: the interval includes 1, wider than ±1 %.
        let s = speedup(
            &r(&[60.0, 61.8, 58.2, 60.0, 61.8], 1620.0),
            &r(&[60.0, 60.0, 60.0, 60.0, 60.0], 1620.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Unclear, "{s:?}");
        assert_eq!(s.why, Some(Unclear::NotConverged));
        // Within 0.2 % every round: level.
        let s = speedup(
            &r(&[60.0, 60.1, 59.95, 60.05, 60.0], 1620.0),
            &r(&[60.0, 60.0, 60.0, 60.0, 60.0], 1620.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Level, "{s:?}");
        assert!(s.low >= 0.99 && s.high <= 1.01, "{s:?}");
    }

    #[test]
    fn a_small_steady_gain_inside_the_band_is_level() {
        // 0.5 % faster every round: a real difference, but inside ±1 %.
        let s = speedup(
            &r(&[60.0, 60.0, 60.0, 60.0, 60.0], 1620.0),
            &r(&[60.3, 60.31, 60.29, 60.3, 60.3], 1620.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Level, "{s:?}");
    }

    fn unsettled(mut x: RunResult) -> RunResult {
        x.protocol.as_mut().unwrap().settled = Some(false);
        for r in &mut x.rounds {
            r.settled = Some(false);
        }
        x
    }

    #[test]
    fn clocks_apart_make_it_unclear() {
        // 1.12× in time, but b ran at a lower clock the whole time, and a's warm-up
        // never settled: a was timed before the power cap caught up with it.
        let s = speedup(
            &unsettled(r(&[831.0, 832.0, 830.0], 1980.0)),
            &r(&[932.0, 930.0, 935.0], 1620.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Unclear, "{s:?}");
        assert_eq!(s.why, Some(Unclear::ClocksApart));
        assert!(s.caveats[0].contains("3 of 3 rounds"), "{s:?}");
    }

    #[test]
    fn one_unsettled_warm_up_of_many_is_a_caveat_not_unclear() {
        // a ran 5 % faster at its own clock, settled in 4 of 5 rounds.
        let mut a = r(&[60.0, 60.1, 59.9, 60.0, 60.05], 1700.0);
        a.rounds[2].settled = Some(false);
        a.protocol.as_mut().unwrap().settled = Some(false);
        let b = r(&[66.0, 66.1, 65.9, 66.0, 66.05], 1620.0);
        let s = speedup(&a, &b).unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Faster, "{s:?}");
        assert!(s.caveats[0].contains("1 of 5 rounds"), "{s:?}");
        // Unsettled in most rounds: the clocks rule applies.
        for i in 0..3 {
            a.rounds[i].settled = Some(false);
        }
        assert_eq!(speedup(&a, &b).unwrap().why, Some(Unclear::ClocksApart));
    }

    #[test]
    fn settled_sustained_clocks_are_the_kernels_own() {
        // Both settled under load: b's lower clock is what its power draw allows, and
        // a is faster in cycles too.
        let s = speedup(
            &r(&[517.0, 517.0, 527.0], 1581.0),
            &r(&[568.0, 569.0, 567.0], 1699.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Faster, "{s:?}");
    }

    #[test]
    fn a_gain_in_time_won_by_the_clock_alone_is_unclear() {
        // 3 % faster in time at a 5 % higher clock: slower in cycles.
        let s = speedup(
            &r(&[60.0, 60.1, 59.9, 60.0, 60.05], 1700.0),
            &r(&[61.8, 61.9, 61.7, 61.8, 61.85], 1620.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Unclear, "{s:?}");
        assert_eq!(s.why, Some(Unclear::TimeAndCyclesDisagree));
        assert!(s.cycles.unwrap() < 1.0, "{s:?}");
    }

    #[test]
    fn different_runs_are_unclear() {
        let a = r(&[60.0, 60.0, 60.0], 1620.0);
        let mut b = r(&[66.0, 66.0, 66.0], 1620.0);
        b.run_id = Some("other".into());
        let s = speedup(&a, &b).unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Unclear);
        assert_eq!(s.why, Some(Unclear::DifferentRuns));
    }

    #[test]
    fn single_launches_are_judged_in_the_metrics_direction_with_the_fixed_band() {
        use crate::analysis::catalogue::Better;
        // A time (lower is better) 3 % above its parent's: slower; 1 % above: unclear.
        let t = |x| single_verdict(Better::Lower, Some(100.0), Some(x));
        assert_eq!(t(103.0), Some(SpeedVerdict::Slower));
        assert_eq!(t(101.0), Some(SpeedVerdict::Unclear));
        assert_eq!(t(97.0), Some(SpeedVerdict::Faster));
        // Throughput (higher is better) 3 % below: slower.
        let f = single_verdict(Better::Higher, Some(100.0), Some(97.0));
        assert_eq!(f, Some(SpeedVerdict::Slower));
        // Unknown, zero or directionless: no verdict.
        assert_eq!(single_verdict(Better::Lower, None, Some(1.0)), None);
        assert_eq!(single_verdict(Better::Lower, Some(0.0), Some(1.0)), None);
        assert_eq!(single_verdict(Better::Neutral, Some(1.0), Some(2.0)), None);
    }

    #[test]
    fn one_round_has_the_fixed_band() {
        let s = speedup(&r(&[60.0], 1620.0), &r(&[60.9], 1620.0)).unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Unclear, "±2 % is wider than ±1 %");
        assert_eq!(s.rounds, 0);
        assert_eq!(
            speedup(&r(&[60.0], 1620.0), &r(&[63.0], 1620.0))
                .unwrap()
                .verdict,
            SpeedVerdict::Faster
        );
    }

    #[test]
    fn verdicts_name_the_best_version_and_each_baseline() {
        let mut v1 = r(&[70.0, 70.1, 69.9], 1620.0);
        v1.version = "v1".into();
        let mut v2 = r(&[60.0, 60.1, 59.9], 1620.0);
        v2.version = "v2".into();
        let mut cudnn = r(&[66.0, 66.1, 65.9], 1620.0);
        cudnn.version = "cudnn".into();
        let all = [&v1, &v2, &cudnn];
        let is_version = |id: &str| id.starts_with('v');
        let of = |x: &RunResult| -> Vec<(String, &'static str)> {
            verdicts(x, &all, &is_version)
                .into_iter()
                .map(|a| (a.against, a.role))
                .collect()
        };
        assert_eq!(
            of(&v1),
            vec![("v2".into(), "best"), ("cudnn".into(), "baseline")]
        );
        assert_eq!(of(&v2), vec![("cudnn".into(), "baseline")]);
        assert_eq!(of(&cudnn), vec![("v2".into(), "best")]);
        let v2_over_cudnn = &verdicts(&v2, &all, &is_version)[0].speedup;
        assert_eq!(v2_over_cudnn.verdict, SpeedVerdict::Faster);
    }
}
