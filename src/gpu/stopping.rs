//! When the rounds of a comparison stop. After each round (every live candidate timed
//! once), every candidate's ratio to the reference candidate gets its 95 % interval over
//! the rounds so far (paired by round, as the verdicts take it:
//! [`crate::analysis::speed::paired`]); the rounds stop when every interval is within
//! ±`target_noise` of its ratio, once `min_rounds` have run, or when `max_time` of
//! rounds has passed. The reference is `--against` where given, else the fastest ladder
//! version so far, else the fastest candidate.

use super::protocol::{Settings, median};
use crate::analysis::speed::paired;
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

/// Where the stopping rule stood when the rounds ended.
#[derive(Debug, Clone, PartialEq)]
pub struct End {
    pub stopped: Stop,
    /// The reference candidate's index, where one was timed.
    pub reference: Option<usize>,
    /// Each candidate's interval half-width against the reference, % (none for the
    /// reference itself, a broken candidate, or fewer than two rounds).
    pub half_width_pct: Vec<Option<f64>>,
    pub target_pct: f64,
}

impl End {
    /// Whether candidate `i` reached the target (the reference: whether all did).
    pub fn converged(&self, i: usize) -> bool {
        if Some(i) == self.reference {
            return self.all_converged();
        }
        self.half_width_pct[i].is_some_and(|h| h <= self.target_pct)
    }

    fn all_converged(&self) -> bool {
        self.half_width_pct
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.reference)
            .all(|(_, h)| h.is_some_and(|h| h <= self.target_pct))
    }
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

/// After `rounds` rounds and `elapsed` of them: `Some` when the rounds stop.
pub fn check(s: &Settings, state: &State, rounds: u32, elapsed: Duration) -> Option<End> {
    let reference = reference(state);
    let half_width_pct = (0..state.ids.len())
        .map(|i| {
            let r = reference.filter(|&r| r != i)?;
            let (a, b) = (state.rounds_us[r].as_ref()?, state.rounds_us[i].as_ref()?);
            paired(a, b).map(|iv| iv.half_width_pct())
        })
        .collect();
    let end = |stopped| End {
        stopped,
        reference,
        half_width_pct,
        target_pct: s.target_noise * 100.0,
    };
    if let Some(n) = s.fixed_rounds {
        return (rounds >= n).then(|| end(Stop::Rounds));
    }
    if rounds < s.min_rounds {
        return None;
    }
    let e = end(Stop::Converged);
    if e.all_converged() {
        Some(e)
    } else if elapsed >= s.max_time {
        Some(End {
            stopped: Stop::MaxTime,
            ..e
        })
    } else {
        None
    }
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
        assert_eq!(check(&s, &state(&ids, &four, None), 4, short), None);
        let e = check(&s, &state(&ids, &steady, None), 5, short).unwrap();
        assert_eq!(e.stopped, Stop::Converged);
        assert_eq!(e.reference, Some(0));
        assert!(e.converged(0) && e.converged(1));
        assert!(e.half_width_pct[1].unwrap() < 0.5, "{e:?}");
        // ±4 % from round to round: not converged after five rounds …
        let noisy = [
            Some(vec![60.0, 62.4, 57.6, 61.0, 59.0]),
            Some(vec![66.0, 66.0, 66.0, 66.0, 66.0]),
        ];
        assert_eq!(check(&s, &state(&ids, &noisy, None), 5, short), None);
        // … and stopped when the comparison's time is up, saying so.
        let e = check(&s, &state(&ids, &noisy, None), 5, s.max_time).unwrap();
        assert_eq!(e.stopped, Stop::MaxTime);
        assert!(!e.converged(1) && !e.converged(0));
        assert!(e.half_width_pct[1].unwrap() > 1.0, "{e:?}");
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
        assert_eq!(check(&s, &state(&ids, &one, None), 1, short), None);
        let e = check(&s, &state(&ids, &noisy, None), 2, short).unwrap();
        assert_eq!(e.stopped, Stop::Rounds);
        assert!(!e.converged(1));
    }
}
