//! When the rounds of a comparison stop. After each round (every live candidate timed
//! once), every candidate's ratio to the reference candidate gets its 95 % interval over
//! the rounds so far (paired by round, as the verdicts take it:
//! [`crate::analysis::speed::paired`]); the rounds stop when every interval is within
//! ±`target_noise` of its ratio and says a verdict, once `min_rounds` have run, or when
//! `max_time` of rounds has passed. The reference is `--against` where given, else the fastest ladder
//! version so far, else the fastest candidate.
//!
//! A candidate whose interval, after `min_rounds`, lies wholly beyond the equivalence
//! band (faster or slower than the reference by more than [`EQUIVALENCE_BAND`], its
//! verdict settled) is *decided*: it sits out the rounds that follow, which go to the
//! candidates whose verdicts more rounds can still change (in a ladder most versions
//! are decided after the first rounds; at the reference shapes the slower baselines).
//! Its rounds stay paired by position with the reference's first ones.
//!
//! A candidate whose interval reached the target but still includes 1 and reaches past
//! an edge of the band (0.992 ± 0.9 %: level, or 1.7 % apart) is *open*: its verdict
//! would read `unclear: not converged`, and more rounds can still settle it, so the
//! rounds go on for it until `max_time` (a true ratio near an edge of the band stays
//! open to the end, and says so).

use super::protocol::Settings;
use super::stats::median;
use crate::analysis::speed::{EQUIVALENCE_BAND, Interval, paired};
use crate::model::runs::Stop;
use std::time::Duration;

/// The comparison's candidates as the rounds left them.
pub struct State<'a> {
    pub ids: &'a [&'a str],
    /// Each candidate's round medians so far; `None` for one that broke while timed.
    pub rounds_us: &'a [Option<Vec<f64>>],
    pub is_version: &'a dyn Fn(&str) -> bool,
    pub against: Option<&'a str>,
}

/// Where the stopping rule stands after a round.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// Why the rounds stop here; `None` while they go on.
    pub stopped: Option<Stop>,
    /// The reference candidate's index, where one was timed.
    pub reference: Option<usize>,
    /// Each candidate's interval half-width against the reference, % (none for the
    /// reference itself, a broken candidate, or fewer than two rounds).
    pub half_width_pct: Vec<Option<f64>>,
    /// Each candidate: whether it was decided (see the module's text).
    pub decided: Vec<bool>,
    /// Each candidate: whether its verdict is still open (see the module's text).
    pub open: Vec<bool>,
    pub target_pct: f64,
}

impl Standing {
    /// Whether candidate `i` reached the target with its verdict settled, or was
    /// decided (the reference: whether all did).
    pub fn converged(&self, i: usize) -> bool {
        if Some(i) == self.reference {
            return self.all_converged();
        }
        self.decided[i]
            || (!self.open[i] && self.half_width_pct[i].is_some_and(|h| h <= self.target_pct))
    }

    fn all_converged(&self) -> bool {
        (0..self.half_width_pct.len())
            .filter(|i| Some(*i) != self.reference)
            .all(|i| self.converged(i))
    }
}

/// Whether an interval lies wholly beyond the equivalence band.
fn beyond_the_band(iv: &Interval) -> bool {
    iv.low > 1.0 + EQUIVALENCE_BAND || iv.high < 1.0 - EQUIVALENCE_BAND
}

/// The reference candidate: `--against`, else the fastest version, else the fastest.
pub fn reference(state: &State) -> Option<usize> {
    let timed = |i: &usize| state.rounds_us[*i].as_ref().is_some_and(|r| !r.is_empty());
    if let Some(a) = state.against
        && let Some(i) = state.ids.iter().position(|id| *id == a).filter(timed)
    {
        return Some(i);
    }
    let fastest = |versions_only: bool| {
        (0..state.ids.len())
            .filter(timed)
            .filter(|&i| !versions_only || (state.is_version)(state.ids[i]))
            .min_by(|&a, &b| {
                let m = |i: usize| median(state.rounds_us[i].as_deref().unwrap_or(&[]));
                m(a).total_cmp(&m(b))
            })
    };
    fastest(true).or_else(|| fastest(false))
}

/// After `rounds` rounds and `elapsed` of them: whether the rounds stop, and where they
/// go on, which candidates are decided.
pub fn check(s: &Settings, state: &State, rounds: u32, elapsed: Duration) -> Standing {
    let reference = reference(state);
    let intervals: Vec<Option<Interval>> = (0..state.ids.len())
        .map(|i| {
            let r = reference.filter(|&r| r != i)?;
            let (a, b) = (state.rounds_us[r].as_ref()?, state.rounds_us[i].as_ref()?);
            paired(a, b)
        })
        .collect();
    // Decided: with a fixed count of rounds every candidate runs them all.
    let decided = intervals
        .iter()
        .zip(state.rounds_us)
        .map(|(iv, r)| {
            s.fixed_rounds.is_none()
                && r.as_ref().is_some_and(|r| r.len() >= s.min_rounds as usize)
                && iv.as_ref().is_some_and(beyond_the_band)
        })
        .collect();
    // Open: with a fixed count the rounds stop there whatever the verdicts say.
    let open = intervals
        .iter()
        .map(|iv| s.fixed_rounds.is_none() && iv.as_ref().is_some_and(|iv| iv.side().is_err()))
        .collect();
    let standing = |stopped| Standing {
        stopped,
        reference,
        half_width_pct: intervals
            .iter()
            .map(|iv| iv.as_ref().map(Interval::half_width_pct))
            .collect(),
        decided,
        open,
        target_pct: s.target_noise * 100.0,
    };
    if let Some(n) = s.fixed_rounds {
        return standing((rounds >= n).then_some(Stop::Rounds));
    }
    let mut st = standing(None);
    if rounds >= s.min_rounds {
        st.stopped = if st.all_converged() {
            Some(Stop::Converged)
        } else {
            (elapsed >= s.max_time).then_some(Stop::MaxTime)
        };
    }
    st
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::runs::Regime;

    fn state<'a>(
        ids: &'a [&'a str],
        rounds: &'a [Option<Vec<f64>>],
        against: Option<&'a str>,
    ) -> State<'a> {
        State {
            ids,
            rounds_us: rounds,
            is_version: &|id: &str| id.starts_with('v'),
            against,
        }
    }

    #[test]
    fn the_reference_is_against_else_the_fastest_version() {
        let ids = ["v1", "v2", "cudnn"];
        let rounds = [
            Some(vec![70.0, 71.0]),
            Some(vec![60.0, 61.0]),
            Some(vec![50.0, 51.0]),
        ];
        assert_eq!(reference(&state(&ids, &rounds, None)), Some(1));
        assert_eq!(reference(&state(&ids, &rounds, Some("cudnn"))), Some(2));
        // An --against that did not time falls back to the fastest version.
        let broken = [Some(vec![70.0]), Some(vec![60.0]), None];
        assert_eq!(reference(&state(&ids, &broken, Some("cudnn"))), Some(1));
        // Baselines alone: the fastest of them.
        let ids = ["cudnn", "fa2"];
        let rounds = [Some(vec![60.0]), Some(vec![100.0])];
        assert_eq!(reference(&state(&ids, &rounds, None)), Some(0));
    }

    #[test]
    fn rounds_go_on_until_every_ratio_converges_or_time_is_up() {
        let s = Settings::for_regime(Regime::Sustained);
        let ids = ["v1", "cudnn"];
        let steady = [
            Some(vec![60.0, 60.1, 59.9, 60.0, 60.05]),
            Some(vec![66.0, 66.0, 66.1, 65.9, 66.0]),
        ];
        let short = Duration::from_secs(1);
        // Four rounds are fewer than the floor, however steady.
        let four: Vec<Option<Vec<f64>>> = steady
            .iter()
            .map(|r| r.as_ref().map(|v| v[..4].to_vec()))
            .collect();
        assert_eq!(check(&s, &state(&ids, &four, None), 4, short).stopped, None);
        let e = check(&s, &state(&ids, &steady, None), 5, short);
        assert_eq!(e.stopped, Some(Stop::Converged));
        assert_eq!(e.reference, Some(0));
        assert!(e.converged(0) && e.converged(1));
        assert!(e.half_width_pct[1].unwrap() < 0.5, "{e:?}");
        // ±4 % from round to round, 1 % apart: not converged after five rounds, nor
        // decided …
        let noisy = [
            Some(vec![60.0, 62.4, 57.6, 61.0, 59.0]),
            Some(vec![60.6, 60.6, 60.6, 60.6, 60.6]),
        ];
        let e = check(&s, &state(&ids, &noisy, None), 5, short);
        assert_eq!(e.stopped, None);
        assert_eq!(e.decided, [false, false]);
        // … and stopped when the comparison's time is up, saying so.
        let e = check(&s, &state(&ids, &noisy, None), 5, s.max_time);
        assert_eq!(e.stopped, Some(Stop::MaxTime));
        assert!(!e.converged(1) && !e.converged(0));
        assert!(e.half_width_pct[1].unwrap() > 1.0, "{e:?}");
    }

    #[test]
    fn a_candidate_whose_verdict_is_settled_is_decided_and_counts_as_converged() {
        let s = Settings::for_regime(Regime::Sustained);
        let ids = ["v2", "v1", "cudnn"];
        let short = Duration::from_secs(1);
        // v1 is 10 % slower than v2 give or take 4 %: its interval is wide but wholly
        // beyond the band; cuDNN is level-ish and noisy: the rounds go on for it alone.
        let rounds = [
            Some(vec![60.0, 60.0, 60.0, 60.0, 60.0]),
            Some(vec![66.0, 68.6, 63.4, 67.1, 64.9]),
            Some(vec![60.0, 62.4, 57.6, 61.0, 59.0]),
        ];
        let e = check(&s, &state(&ids, &rounds, None), 5, short);
        assert_eq!(e.reference, Some(0));
        assert_eq!(e.decided, [false, true, false]);
        assert!(e.half_width_pct[1].unwrap() > 1.0, "{e:?}");
        assert!(e.converged(1) && !e.converged(2));
        assert_eq!(e.stopped, None);
        // Before the floor of rounds nothing is decided, however far apart.
        let four: Vec<Option<Vec<f64>>> = rounds
            .iter()
            .map(|r| r.as_ref().map(|v| v[..4].to_vec()))
            .collect();
        assert_eq!(
            check(&s, &state(&ids, &four, None), 4, short).decided,
            [false; 3]
        );
        // cuDNN's rounds settle later; v1, sitting out, has its five: all converged.
        let later = [
            Some(vec![60.0; 9]),
            rounds[1].clone(),
            Some(vec![60.2, 59.8, 60.1, 59.9, 60.0, 60.1, 59.9, 60.0, 60.0]),
        ];
        let e = check(&s, &state(&ids, &later, None), 9, short);
        assert_eq!(e.stopped, Some(Stop::Converged));
        assert!(e.converged(0));
    }

    #[test]
    fn an_open_verdict_goes_on_until_time_is_up() {
        let s = Settings::for_regime(Regime::Sustained);
        let ids = ["v1", "cudnn"];
        let short = Duration::from_secs(1);
        // cuDNN 0.7 % faster than v1 give or take 0.1 %: the interval lies inside the
        // band: level, converged.
        let faster = [
            Some(vec![60.0; 6]),
            Some(vec![59.6, 59.55, 59.58, 59.62, 59.5, 59.65]),
        ];
        let e = check(&s, &state(&ids, &faster, None), 6, short);
        assert_eq!(e.stopped, Some(Stop::Converged), "{e:?}");
        // 0.6 % apart give or take 0.8 %: within the ±1 % target, but the interval
        // includes 1 and reaches past the band's edge: open, the rounds go on …
        let edge = [
            Some(vec![60.0; 6]),
            Some(vec![59.3, 60.0, 59.2, 60.1, 59.4, 59.8]),
        ];
        let e = check(&s, &state(&ids, &edge, None), 6, short);
        assert!(e.half_width_pct[1].unwrap() <= 1.0, "{e:?}");
        assert_eq!(e.open, [false, true]);
        assert_eq!(e.stopped, None);
        assert!(!e.converged(1));
        // … until the comparison's time is up, not converged.
        let e = check(&s, &state(&ids, &edge, None), 6, s.max_time);
        assert_eq!(e.stopped, Some(Stop::MaxTime));
        assert!(!e.converged(1));
        // With a fixed count nothing is open.
        let mut fixed = s.clone();
        fixed.fixed_rounds = Some(6);
        let e = check(&fixed, &state(&ids, &edge, None), 6, short);
        assert_eq!(
            (e.open, e.stopped),
            (vec![false, false], Some(Stop::Rounds))
        );
    }

    #[test]
    fn a_fixed_count_stops_there_whatever_the_noise() {
        let mut s = Settings::for_regime(Regime::Sustained);
        s.fixed_rounds = Some(2);
        let ids = ["v1", "cudnn"];
        let noisy = [Some(vec![60.0, 66.0]), Some(vec![66.0, 60.0])];
        let short = Duration::from_secs(1);
        let one: Vec<Option<Vec<f64>>> = noisy
            .iter()
            .map(|r| r.as_ref().map(|v| v[..1].to_vec()))
            .collect();
        assert_eq!(check(&s, &state(&ids, &one, None), 1, short).stopped, None);
        let e = check(&s, &state(&ids, &noisy, None), 2, short);
        assert_eq!(e.stopped, Some(Stop::Rounds));
        // With a fixed count nothing sits out.
        assert_eq!(e.decided, [false, false]);
        assert!(!e.converged(1));
    }
}
