//! The timing protocol, the same for every candidate of a run (ladder versions, the
//! unfused cuBLAS baseline, PyTorch's SDPA backends): each candidate lives in a worker
//! process that has built a CUDA graph of back-to-back launches, and the runner, from
//! its own process, decides when and how long that graph is replayed and watches the
//! GPU's clock, power and energy meanwhile. Workers only replay and time; so no
//! candidate is timed differently from another, whatever language its worker is in.
//!
//! The conversation itself is in [`super::wire`].

use super::nvml::{Monitor, Window};
use super::wire::{Command, ErrorStats, Hello, Ready, Reply};
use crate::model::runs::{Protocol, Regime, Round};
use crate::process::{Child, Limits, Stopped};
use anyhow::{Context, Result, anyhow, bail};
use std::time::{Duration, Instant};

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
/// … or this many seconds of rounds have passed (per comparison).
pub const DEFAULT_MAX_TIME_S: f64 = 60.0;

/// How much longer than `rep_ms` a calibrated graph aims to last.
const CALIBRATION_MARGIN: f64 = 1.05;

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

/// A worker process holding one candidate.
pub struct Worker {
    pub id: String,
    child: Child,
    pub ready: Ready,
    /// Launches per repetition and the replay's length, once calibrated.
    calibrated: Option<(u32, f64)>,
    /// Seconds one command may take.
    pub timeout: Duration,
}

/// Why a worker could not be used.
#[derive(Debug)]
pub enum WorkerError {
    /// The worker said so (a wrong result, a compile error …).
    Failed(String),
    /// The worker cannot run here (no PyTorch, a backend missing).
    Skipped(String),
    Stopped(Stopped),
    /// It died or said something that is not the protocol.
    Broken(String),
}

impl std::fmt::Display for WorkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkerError::Failed(m) | WorkerError::Skipped(m) | WorkerError::Broken(m) => {
                f.write_str(m)
            }
            WorkerError::Stopped(s) => write!(f, "{s}"),
        }
    }
}

/// A worker started and not yet heard from.
pub struct Starting {
    id: String,
    child: Child,
}

impl Starting {
    pub fn spawn(id: &str, cmd: std::process::Command) -> Result<Starting, WorkerError> {
        let child = Child::spawn(cmd, true).map_err(|e| WorkerError::Broken(format!("{e:#}")))?;
        Ok(Starting {
            id: id.to_string(),
            child,
        })
    }

    /// Waits for the worker's first line (setup and checks); `timeout` counts from
    /// now, not from the spawn: workers set up side by side, and one whose kernel hangs
    /// holds the GPU (and so the others) until it is killed, which must not use up
    /// the others' time.
    pub fn ready(
        self,
        timeout: Duration,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Worker, WorkerError> {
        let Starting { id, mut child } = self;
        let limits = Limits::new(timeout, cancel);
        let line = next_json_line(&mut child, &limits)?;
        match serde_json::from_str::<Hello>(&line) {
            Ok(Hello::Ready(ready)) => Ok(Worker {
                id,
                child,
                ready,
                calibrated: None,
                timeout,
            }),
            Ok(Hello::Failed { message, skipped }) => Err(if skipped {
                WorkerError::Skipped(message)
            } else {
                WorkerError::Failed(message)
            }),
            Err(e) => Err(WorkerError::Broken(format!(
                "the worker said something unexpected ({e}): {line}"
            ))),
        }
    }
}

impl Worker {
    /// Sends a command and reads its reply.
    pub fn ask(
        &mut self,
        cmd: &Command,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Reply, WorkerError> {
        let line = serde_json::to_string(cmd).expect("commands serialize");
        self.child
            .send(&line)
            .map_err(|e| WorkerError::Broken(format!("{e:#}: {}", self.last_words())))?;
        let limits = Limits::new(self.timeout, cancel);
        let line = next_json_line(&mut self.child, &limits)?;
        match serde_json::from_str::<Reply>(&line) {
            Ok(Reply::Error { message }) => Err(WorkerError::Failed(message)),
            Ok(r) => Ok(r),
            Err(e) => Err(WorkerError::Broken(format!(
                "the worker said something unexpected ({e}): {line}"
            ))),
        }
    }

    fn last_words(&self) -> String {
        self.child
            .stderr_tail()
            .into_iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_else(|| "no message".into())
    }

    pub fn calibrate(
        &mut self,
        rep_ms: f64,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<(u32, f64), WorkerError> {
        if let Some(c) = self.calibrated {
            return Ok(c);
        }
        match self.ask(&Command::Calibrate { rep_ms }, cancel)? {
            Reply::Calibrated {
                launches,
                launch_ms,
            } if launches > 0 => {
                let c = (launches, launch_ms * launches as f64);
                self.calibrated = Some(c);
                Ok(c)
            }
            other => Err(WorkerError::Broken(format!(
                "unexpected reply to calibrate: {other:?}"
            ))),
        }
    }

    fn reps(
        &mut self,
        count: u32,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Vec<f64>, WorkerError> {
        match self.ask(&Command::Reps { count }, cancel)? {
            Reply::Times { ms } if ms.len() == count as usize => Ok(ms),
            other => Err(WorkerError::Broken(format!(
                "unexpected reply to reps: {other:?}"
            ))),
        }
    }

    pub fn check_last(
        &mut self,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<ErrorStats, WorkerError> {
        match self.ask(&Command::CheckLast, cancel)? {
            Reply::Checked { error } => Ok(error),
            other => Err(WorkerError::Broken(format!(
                "unexpected reply to check_last: {other:?}"
            ))),
        }
    }

    /// Asks the worker to end; dropping it kills what is left of its process group.
    pub fn quit(mut self) {
        let _ = self
            .child
            .send(&serde_json::to_string(&Command::Quit).expect("commands serialize"));
    }
}

fn next_json_line(child: &mut Child, limits: &Limits) -> Result<String, WorkerError> {
    let mut err_tail: Vec<String> = Vec::new();
    loop {
        match child.next_stdout(limits, &mut |l| err_tail.push(l.to_string())) {
            Err(s) => return Err(WorkerError::Stopped(s)),
            Ok(None) => {
                let tail = err_tail
                    .iter()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .cloned()
                    .unwrap_or_else(|| "no message".into());
                return Err(WorkerError::Broken(format!(
                    "the worker process ended: {tail}"
                )));
            }
            Ok(Some(l)) if l.trim_start().starts_with('{') => return Ok(l),
            Ok(Some(_)) => {}
        }
    }
}

/// Most repetitions asked for in one command while a window is topped up, and most
/// top-ups: a worker whose replays take no time cannot keep the runner going.
const MAX_REPS_ASKED: u32 = 10_000;
const MAX_TOP_UPS: u32 = 20;

/// Measures one candidate once under the protocol: warm-up as the regime says, then a
/// timed window of repetitions, the GPU watched meanwhile.
pub fn measure(
    w: &mut Worker,
    s: &Settings,
    monitor: Option<&Monitor>,
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Measurement, WorkerError> {
    // Graphs a little longer than the target, so that the repetitions, the same for
    // every candidate, fill at least the window.
    let (launches, rep_ms) = w.calibrate(s.rep_ms * CALIBRATION_MARGIN, cancel)?;
    let warm_start = Instant::now();
    let mut settled = None;
    match s.regime {
        Regime::Burst => {
            std::thread::sleep(Duration::from_secs_f64(s.idle_ms / 1e3));
        }
        Regime::Sustained => {
            let chunk = ((s.chunk_ms / rep_ms).ceil() as u32).max(1);
            let mut previous: Option<f64> = None;
            let mut ok = false;
            let elapsed_ms = || warm_start.elapsed().as_secs_f64() * 1e3;
            while elapsed_ms() < s.warmup_cap_ms {
                let watch = monitor.map(|m| m.watch());
                w.reps(chunk, cancel)?;
                let clock = watch.and_then(|w| w.finish().sm_clock_mhz);
                if elapsed_ms() < s.min_warmup_ms {
                    previous = clock;
                    continue;
                }
                match (clock, previous) {
                    (Some(c), Some(p)) if ((c - p) / p).abs() <= s.settle_tolerance => {
                        ok = true;
                        break;
                    }
                    // Without NVML: the fixed floor only.
                    (None, _) => break,
                    _ => previous = clock,
                }
            }
            settled = monitor.map(|_| ok);
        }
    }
    let warmup_ms = warm_start.elapsed().as_secs_f64() * 1e3;
    // A first count from the calibrated length, then more until the replays' own
    // times add up to the window: a graph can replay faster than it was timed to.
    let count = s.reps_for(s.rep_ms.max(rep_ms));
    let watch = monitor.map(|m| m.watch());
    let mut times = w.reps(count, cancel)?;
    let mut window_ms: f64 = times.iter().sum();
    for _ in 0..MAX_TOP_UPS {
        if window_ms >= s.window_ms {
            break;
        }
        let each = (window_ms / times.len() as f64).max(1e-3);
        let more = (((s.window_ms - window_ms) / each).ceil() as u32).clamp(1, MAX_REPS_ASKED);
        times.extend(w.reps(more, cancel)?);
        window_ms = times.iter().sum();
    }
    if window_ms < s.window_ms {
        return Err(WorkerError::Broken(format!(
            "its replays added up to {window_ms:.1} ms, short of the {:.0} ms window, after {MAX_TOP_UPS} top-ups",
            s.window_ms
        )));
    }
    let window = watch.map(|w| w.finish());
    Ok(Measurement {
        launch_us: times.iter().map(|ms| ms * 1e3 / launches as f64).collect(),
        launches_per_rep: launches,
        warmup_ms,
        settled,
        window,
        window_ms,
    })
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

    /// A worker in Python whose graph replays take `real_ms` each though it calibrated
    /// them at `claimed_ms`, as a graph timed at a low clock replays faster later.
    fn fake_worker(claimed_ms: f64, real_ms: f64) -> Worker {
        let script = format!(
            r#"
import json, sys
print(json.dumps({{"event": "ready", "gpu": None, "gpu_uuid": None, "first": None}}), flush=True)
for line in sys.stdin:
    c = json.loads(line)
    if c["cmd"] == "calibrate":
        print(json.dumps({{"reply": "calibrated", "launches": 10, "launch_ms": {claimed_ms} / 10}}), flush=True)
    elif c["cmd"] == "reps":
        print(json.dumps({{"reply": "times", "ms": [{real_ms}] * c["count"]}}), flush=True)
    else:
        break
"#
        );
        let mut cmd = std::process::Command::new("python3");
        cmd.args(["-c", &script]);
        let cancel = std::sync::atomic::AtomicBool::new(false);
        Starting::spawn("fake", cmd)
            .unwrap()
            .ready(Duration::from_secs(20), &cancel)
            .unwrap()
    }

    #[test]
    fn a_window_is_as_long_as_measured_not_as_planned() {
        if std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_err()
        {
            crate::test_skip::skip(
                "a_window_is_as_long_as_measured_not_as_planned",
                "python3",
                "python3 is not installed here",
            );
            return;
        }
        let cancel = std::sync::atomic::AtomicBool::new(false);
        let s = Settings::for_regime(Regime::Sustained);
        // Calibrated at 10.5 ms a replay, replaying in 6 ms: the 20 planned replays
        // last 120 ms, and the window is topped up to 200.
        let mut w = fake_worker(10.5, 6.0);
        let m = measure(&mut w, &s, None, &cancel).unwrap();
        assert!(m.window_ms >= 200.0, "{}", m.window_ms);
        assert_eq!(m.launch_us.len(), 34, "20 planned, then 14 more");
        assert!((m.median_us() - 600.0).abs() < 1e-9);
        // Replays that take no time cannot be made into a window.
        let mut w = fake_worker(10.5, 0.0);
        let e = measure(&mut w, &s, None, &cancel).expect_err("refused");
        assert!(e.to_string().contains("short of the 200 ms window"), "{e}");
    }

    #[test]
    fn windows_hold_enough_repetitions() {
        let s = Settings::for_regime(Regime::Sustained);
        assert_eq!(s.reps_for(10.0), 20);
        assert_eq!(s.reps_for(1.0), 200);
        // A launch longer than the window still gives the minimum.
        assert_eq!(s.reps_for(500.0), 20);
    }
}
