//! The timing protocol, the same for every candidate of a run (ladder versions, the
//! unfused cuBLAS baseline, PyTorch's SDPA backends): each candidate lives in a worker
//! process that has built a CUDA graph of back-to-back launches, and the runner, from
//! its own process, decides when and how long that graph is replayed and watches the
//! GPU's clock, power and energy meanwhile. Workers only replay and time; so no
//! candidate is timed differently from another, whatever language its worker is in.
//!
//! Here the protocol's knobs; one timed window is [`super::window`], the conversation
//! [`crate::gpu::wire`], the worker client [`super::client`], what the rounds add up to
//! [`super::stats`].

use crate::model::runs::Regime;
use anyhow::{Result, anyhow, bail};
use std::time::Duration;

/// The protocol's knobs; [`Settings::for_regime`] gives the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub regime: Regime,
    /// Target length of one repetition (one graph replay).
    pub rep_ms: f64,
    /// Every timed window lasts at least this (the sum of its repetitions' own
    /// times), and holds at least `min_reps` repetitions.
    pub window_ms: f64,
    pub min_reps: u32,
    /// The rounds: with `fixed_rounds` exactly that many; otherwise at least
    /// `min_rounds`, then on until every candidate's ratio to the reference has a 95 %
    /// interval within ±`target_noise`, or `max_time` of rounds has passed.
    pub fixed_rounds: Option<u32>,
    pub min_rounds: u32,
    pub target_noise: f64,
    pub max_time: Duration,
    /// Sustained: warm-up in chunks of this length, at least `min_warmup_ms` (all of it
    /// where NVML is missing), then until the mean SM clock of a chunk is within
    /// `settle_tolerance` of the chunk before, for at most `warmup_cap_ms`.
    pub chunk_ms: f64,
    pub min_warmup_ms: f64,
    pub settle_tolerance: f64,
    pub warmup_cap_ms: f64,
    /// Burst: idle time before each window, so that every candidate starts from an idle
    /// GPU at boost clock.
    pub idle_ms: f64,
}

/// The stopping rule's defaults: at least this many rounds, …
pub const DEFAULT_MIN_ROUNDS: u32 = 5;
/// … until every ratio's interval is within ± this many percent …
pub const DEFAULT_TARGET_NOISE_PCT: f64 = 1.0;
/// … or this many seconds of rounds have passed (per comparison). On the H200 the ratio
/// of two candidates within ~2 % of each other moves by ~1.7 % from round to round
/// (v28 and cuDNN at 1,16,8192,128, 2026-12-03), so ±1 % takes ~14 rounds of the two,
/// and an open verdict near the band's edge more: 60 s stopped one of three such runs
/// at 13 rounds, ±1.07 %, its verdict open.
pub const DEFAULT_MAX_TIME_S: f64 = 90.0;

impl Settings {
    pub fn for_regime(regime: Regime) -> Settings {
        let (rep_ms, window_ms, min_reps) = match regime {
            Regime::Sustained => (10.0, 200.0, 20),
            Regime::Burst => (2.0, 30.0, 15),
        };
        let sustained = regime == Regime::Sustained;
        Settings {
            regime,
            rep_ms,
            window_ms,
            min_reps,
            fixed_rounds: None,
            min_rounds: DEFAULT_MIN_ROUNDS,
            target_noise: DEFAULT_TARGET_NOISE_PCT / 100.0,
            max_time: Duration::from_secs_f64(DEFAULT_MAX_TIME_S),
            chunk_ms: if sustained { 100.0 } else { 0.0 },
            min_warmup_ms: if sustained { 1000.0 } else { 0.0 },
            settle_tolerance: if sustained { 0.02 } else { 0.0 },
            warmup_cap_ms: if sustained { 3000.0 } else { 0.0 },
            idle_ms: if sustained { 0.0 } else { 1000.0 },
        }
    }

    /// Repetitions to ask for first in a window, for a graph whose replay takes
    /// `rep_ms`; more follow while the window is short of `window_ms`.
    pub fn reps_for(&self, rep_ms: f64) -> u32 {
        let by_window = (self.window_ms / rep_ms.max(1e-6)).ceil() as u32;
        by_window.max(self.min_reps)
    }

    /// The least rounds before the stopping rule is asked.
    pub fn least_rounds(&self) -> u32 {
        self.fixed_rounds.unwrap_or(self.min_rounds)
    }
}

/// Fails unless a settings value makes sense.
pub fn validate(s: &Settings) -> Result<()> {
    if !(s.rep_ms > 0.0 && s.window_ms > 0.0) {
        bail!("repetition and window lengths must be positive");
    }
    if s.fixed_rounds == Some(0) {
        bail!("--rounds must be at least 1");
    }
    if s.min_rounds < 2 && s.fixed_rounds.is_none() {
        bail!("--min-rounds must be at least 2: an interval needs two rounds");
    }
    if !(s.target_noise > 0.0 && s.target_noise.is_finite()) {
        bail!("--target-noise must be a positive percentage");
    }
    if s.max_time.is_zero() {
        bail!("--max-time must be positive");
    }
    if s.min_reps == 0 {
        return Err(anyhow!("--reps must be at least 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_hold_enough_repetitions() {
        let s = Settings::for_regime(Regime::Sustained);
        assert_eq!(s.reps_for(10.0), 20);
        assert_eq!(s.reps_for(1.0), 200);
        // A launch longer than the window still gives the minimum.
        assert_eq!(s.reps_for(500.0), 20);
    }
}
