//! How much faster one candidate is than another, and whether that can be believed.
//!
//! The speed-up of `a` over `b` is b's time over a's. It is judged three ways:
//! - over rounds: rounds are paired by position (each round ran every candidate once,
//!   in the same order), so the per-round ratios give an interval; with one round the
//!   interval is ±[`SINGLE_ROUND_BAND`];
//! - in cycles: time × mean SM clock, which removes a clock difference between the two;
//! - by clock: when the two mean SM clocks differ by more than [`CLOCK_BAND`] the two
//!   were not measured alike, unless both were timed in the sustained regime after a
//!   warm-up that settled: under the power cap each kernel then runs at the clock its
//!   own power draw allows, and that clock is part of its speed, not noise. The ratio
//!   in cycles is still checked for them: a gain in time that is a loss in cycles (won
//!   by the clock alone) reads `unclear`, with both figures shown.
//!
//! The verdict: `level` when the interval includes 1, `faster` or `slower` when it lies
//! wholly above or below; `unclear` when the two ran in different runs or regimes, when
//! their clocks differ by more than [`CLOCK_BAND`] outside settled sustained timing, or
//! when the ratio in cycles falls on the other side of the interval's edge than the
//! ratio in time says.

use crate::model::RunResult;
use serde::Serialize;

/// Clocks further apart than this make a comparison unclear.
pub const CLOCK_BAND: f64 = 0.02;
/// With one round, a ratio within this of 1 reads level.
pub const SINGLE_ROUND_BAND: f64 = 0.02;

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

/// The speed-up of one candidate over another.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Speedup {
    /// b's time over a's: above 1, `a` is faster.
    pub ratio: f64,
    /// The lowest and highest per-round ratio (or ratio ∓ the single-round band).
    pub low: f64,
    pub high: f64,
    /// The same ratio in cycles (time × mean SM clock), where both clocks are known.
    pub cycles: Option<f64>,
    /// a's mean SM clock over b's, where both are known.
    pub clock_ratio: Option<f64>,
    pub verdict: SpeedVerdict,
    /// Why the verdict is unclear, when it is.
    pub why: Option<String>,
}

/// The speed-up of `a` over `b`, when both have a time.
pub fn speedup(a: &RunResult, b: &RunResult) -> Option<Speedup> {
    let (ta, tb) = (a.median_us?, b.median_us?);
    if ta <= 0.0 || tb <= 0.0 {
        return None;
    }
    let ratio = tb / ta;
    let paired: Vec<f64> = a
        .rounds_us
        .iter()
        .zip(&b.rounds_us)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0)
        .map(|(x, y)| y / x)
        .collect();
    let (low, high) = if paired.len() >= 2 && a.rounds_us.len() == b.rounds_us.len() {
        (
            paired.iter().copied().fold(f64::INFINITY, f64::min),
            paired.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    } else {
        (
            ratio * (1.0 - SINGLE_ROUND_BAND),
            ratio * (1.0 + SINGLE_ROUND_BAND),
        )
    };
    let clock_ratio = match (a.sm_clock_mhz, b.sm_clock_mhz) {
        (Some(x), Some(y)) if y > 0.0 => Some(x / y),
        _ => None,
    };
    let cycles = clock_ratio.map(|c| ratio / c);
    let by_time = side(low, high, 1.0);
    let mut why = None;
    if a.run_id.is_some() && a.run_id != b.run_id {
        why = Some("measured in different runs".to_string());
    } else if a.regime() != b.regime() {
        why = Some("measured under different regimes".to_string());
    } else if let Some(c) = clock_ratio
        .filter(|c| (c - 1.0).abs() > CLOCK_BAND)
        .filter(|_| !(settled_sustained(a) && settled_sustained(b)))
    {
        why = Some(format!("SM clocks {:.1} % apart", (c - 1.0).abs() * 100.0));
    } else if let Some(cy) = cycles {
        // Shift the interval by the clock difference: does the verdict hold in cycles?
        let k = cy / ratio;
        if side(low * k, high * k, 1.0) != by_time {
            why = Some(format!("in cycles the ratio is {cy:.3}×"));
        }
    }
    Some(Speedup {
        ratio,
        low,
        high,
        cycles,
        clock_ratio,
        verdict: if why.is_some() {
            SpeedVerdict::Unclear
        } else {
            by_time
        },
        why,
    })
}

/// Timed in the sustained regime after warm-ups that all settled.
fn settled_sustained(r: &RunResult) -> bool {
    r.protocol.as_ref().is_some_and(|p| {
        p.regime == crate::model::runs::Regime::Sustained && p.settled == Some(true)
    })
}

fn side(low: f64, high: f64, one: f64) -> SpeedVerdict {
    if low > one {
        SpeedVerdict::Faster
    } else if high < one {
        SpeedVerdict::Slower
    } else {
        SpeedVerdict::Level
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::runs::{Protocol, Regime};
    use crate::model::{RunStatus, Shape};

    fn r(rounds: &[f64], clock: f64) -> RunResult {
        let mut x = RunResult::new("x", Shape::REFERENCE, false, RunStatus::Ok);
        let mut v = rounds.to_vec();
        v.sort_by(f64::total_cmp);
        x.median_us = Some(v[v.len() / 2]);
        x.rounds_us = rounds.to_vec();
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
        });
        x
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
    }

    #[test]
    fn rounds_on_both_sides_of_one_are_level() {
        let s = speedup(
            &r(&[60.0, 61.0, 59.5], 1620.0),
            &r(&[60.5, 60.2, 60.1], 1620.0),
        )
        .unwrap();
        assert_eq!(s.verdict, SpeedVerdict::Level, "{s:?}");
    }

    fn unsettled(mut x: RunResult) -> RunResult {
        x.protocol.as_mut().unwrap().settled = Some(false);
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
        assert!(s.why.unwrap().contains("clocks"));
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
    fn different_runs_are_unclear() {
        let a = r(&[60.0, 60.0, 60.0], 1620.0);
        let mut b = r(&[66.0, 66.0, 66.0], 1620.0);
        b.run_id = Some("other".into());
        assert_eq!(speedup(&a, &b).unwrap().verdict, SpeedVerdict::Unclear);
    }

    #[test]
    fn one_round_reads_level_within_two_percent() {
        assert_eq!(
            speedup(&r(&[60.0], 1620.0), &r(&[60.9], 1620.0))
                .unwrap()
                .verdict,
            SpeedVerdict::Level
        );
        assert_eq!(
            speedup(&r(&[60.0], 1620.0), &r(&[63.0], 1620.0))
                .unwrap()
                .verdict,
            SpeedVerdict::Faster
        );
    }
}
