//! What the timed windows of a candidate add up to: per-launch times and what the GPU
//! did in each window ([`Measurement`]), and over the rounds the median, the spread,
//! the clock, power and energy ([`summarize`]).

use super::nvml::Window;
use super::protocol::Settings;
use crate::model::runs::{Protocol, Regime, Round};
use anyhow::{Context, Result};

/// One candidate's timed window: per-launch times of each repetition and what the
/// GPU did meanwhile.
#[derive(Debug, Clone)]
pub struct Measurement {
    /// Time of one launch in each repetition, µs.
    pub launch_us: Vec<f64>,
    pub launches_per_rep: u32,
    pub warmup_ms: f64,
    pub settled: Option<bool>,
    pub window: Option<Window>,
    /// The sum of the repetitions' own times, ms: what was timed.
    pub window_ms: f64,
}

impl Measurement {
    pub fn median_us(&self) -> f64 {
        median(&self.launch_us)
    }

    /// The round as a run result keeps it.
    pub fn round(&self) -> Round {
        let launches = (self.launch_us.len() as u32 * self.launches_per_rep) as f64;
        let w = self.window.as_ref();
        // Power only where the energy counter saw the window: a power reading lags the
        // load, and in a short window reads the idle GPU before it.
        let energy = w.and_then(|w| w.energy_mj);
        Round {
            us: self.median_us(),
            reps: self.launch_us.len() as u32,
            window_ms: self.window_ms,
            warmup_ms: self.warmup_ms,
            settled: self.settled,
            sm_clock_mhz: w.and_then(|w| w.sm_clock_mhz),
            power_w: energy.and(w.and_then(|w| w.power_w)),
            energy_mj: energy.filter(|_| launches > 0.0).map(|e| e / launches),
        }
    }
}

pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// What the rounds of one candidate add up to.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub rounds: Vec<Round>,
    pub sm_clock_mhz: Option<f64>,
    /// Known only where every window's energy is: a power reading alone lags the load.
    pub power_w: Option<f64>,
    /// Per launch.
    pub energy_mj: Option<f64>,
    /// Reasons seen in any window; `None` unless every window was watched.
    pub throttle: Option<Vec<String>>,
    pub protocol: Option<Protocol>,
}

pub fn summarize(s: &Settings, measured: &[Measurement]) -> Result<Summary> {
    let first = measured.first().context("no round was measured")?;
    let rounds: Vec<Round> = measured.iter().map(Measurement::round).collect();
    let all: Vec<f64> = measured
        .iter()
        .flat_map(|m| m.launch_us.iter().copied())
        .collect();
    // Means over the windows, each weighted by its length; unknown unless every
    // window has the figure.
    let weighted = |f: &dyn Fn(&Round) -> Option<f64>| -> Option<f64> {
        let (mut sum, mut weight) = (0.0, 0.0);
        for r in &rounds {
            sum += f(r)? * r.window_ms;
            weight += r.window_ms;
        }
        (weight > 0.0).then(|| sum / weight)
    };
    let launches: f64 = measured
        .iter()
        .map(|m| (m.launch_us.len() as u32 * m.launches_per_rep) as f64)
        .sum();
    let windows: Vec<&Window> = measured.iter().filter_map(|m| m.window.as_ref()).collect();
    let watched = windows.len() == measured.len();
    let energy: Option<f64> = if watched {
        windows.iter().map(|w| w.energy_mj).sum::<Option<f64>>()
    } else {
        None
    };
    let throttle = watched.then(|| {
        let mut t: Vec<String> = windows.iter().flat_map(|w| w.throttle.clone()).collect();
        t.sort();
        t.dedup();
        t
    });
    let n = measured.len() as f64;
    let settled = measured
        .iter()
        .map(|m| m.settled)
        .collect::<Option<Vec<bool>>>()
        .map(|v| v.iter().all(|&b| b));
    let rounds_us: Vec<f64> = rounds.iter().map(|r| r.us).collect();
    Ok(Summary {
        median_us: median(&rounds_us),
        min_us: all.iter().copied().fold(f64::INFINITY, f64::min),
        max_us: all.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        sm_clock_mhz: weighted(&|r| r.sm_clock_mhz),
        power_w: energy.and(weighted(&|r| r.power_w)),
        energy_mj: energy.map(|e| e / launches),
        throttle,
        protocol: Some(Protocol {
            regime: s.regime,
            mechanism: "cuda_graph".into(),
            launches_per_rep: first.launches_per_rep,
            reps: rounds.iter().map(|r| r.reps).min().unwrap_or(0),
            rounds: measured.len() as u32,
            window_ms: rounds.iter().map(|r| r.window_ms).sum::<f64>() / n,
            warmup_ms: measured.iter().map(|m| m.warmup_ms).sum::<f64>() / n,
            settled,
            idle_ms: (s.regime == Regime::Burst).then_some(s.idle_ms),
            min_window_ms: Some(s.window_ms),
            convergence: None,
        }),
        rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn m(us: &[f64], clock: f64, energy: f64) -> Measurement {
        Measurement {
            launch_us: us.to_vec(),
            launches_per_rep: 10,
            warmup_ms: 300.0,
            settled: Some(true),
            window: Some(Window {
                duration: Duration::from_millis(200),
                sm_clock_mhz: Some(clock),
                power_w: Some(600.0),
                energy_mj: Some(energy),
                throttle: vec!["sw_power_cap".into()],
                samples: 40,
            }),
            window_ms: 200.0,
        }
    }

    #[test]
    fn rounds_summarize_to_the_median_of_their_medians() {
        let s = Settings::for_regime(Regime::Sustained);
        let rounds = [
            m(&[60.0, 61.0, 62.0], 1620.0, 120.0),
            m(&[59.0, 60.0, 64.0], 1640.0, 120.0),
            m(&[70.0, 71.0, 72.0], 1600.0, 120.0),
        ];
        let sum = summarize(&s, &rounds).unwrap();
        let us: Vec<f64> = sum.rounds.iter().map(|r| r.us).collect();
        assert_eq!(us, vec![61.0, 60.0, 71.0]);
        let clocks: Vec<Option<f64>> = sum.rounds.iter().map(|r| r.sm_clock_mhz).collect();
        assert_eq!(clocks, vec![Some(1620.0), Some(1640.0), Some(1600.0)]);
        // Each round's energy per launch: 120 mJ over 30 launches.
        assert!((sum.rounds[0].energy_mj.unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(sum.median_us, 61.0);
        assert_eq!((sum.min_us, sum.max_us), (59.0, 72.0));
        assert!((sum.sm_clock_mhz.unwrap() - 1620.0).abs() < 1e-9);
        // 360 mJ over 90 launches.
        assert!((sum.energy_mj.unwrap() - 4.0).abs() < 1e-9);
        let p = sum.protocol.unwrap();
        assert_eq!((p.reps, p.rounds, p.launches_per_rep), (3, 3, 10));
        assert_eq!(sum.throttle, Some(vec!["sw_power_cap".to_string()]));
    }

    #[test]
    fn energy_is_unknown_when_one_window_lacks_it() {
        let s = Settings::for_regime(Regime::Burst);
        let mut short = m(&[60.0], 1980.0, 0.0);
        short.window.as_mut().unwrap().energy_mj = None;
        let sum = summarize(&s, &[m(&[60.0], 1980.0, 10.0), short]).unwrap();
        assert_eq!(sum.energy_mj, None);
    }

    #[test]
    fn power_is_unknown_where_energy_is() {
        // A burst window too short for the energy counter: NVML's power reading there
        // is the idle GPU's, not the kernel's.
        let s = Settings::for_regime(Regime::Burst);
        let mut short = m(&[60.0], 1980.0, 0.0);
        short.window.as_mut().unwrap().energy_mj = None;
        short.window.as_mut().unwrap().power_w = Some(130.0);
        let sum = summarize(&s, &[short.clone(), short]).unwrap();
        assert_eq!(sum.power_w, None);
        assert!(sum.rounds.iter().all(|r| r.power_w.is_none()));
        let sum = summarize(&s, &[m(&[60.0], 1980.0, 10.0)]).unwrap();
        assert_eq!(sum.power_w, Some(600.0));
    }
}
