//! The timing protocol, the same for every candidate of a run (ladder versions, the
//! unfused cuBLAS baseline, PyTorch's SDPA backends): each candidate lives in a worker
//! process that has built a CUDA graph of back-to-back launches, and the runner, from
//! its own process, decides when and how long that graph is replayed and watches the
//! GPU's clock, power and energy meanwhile. Workers only replay and time; so no
//! candidate is timed differently from another, whatever language its worker is in.
//!
//! The conversation is one JSON object a line. The worker speaks first with
//! [`Hello`]; then the runner sends a [`Command`] and reads one [`Reply`] per command.

use super::check::ErrorStats;
use super::nvml::{Monitor, Window};
use crate::model::runs::{CaseCheck, Protocol, Regime};
use crate::process::{Child, Limits, Stopped};
use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// What the runner asks a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Time one launch, then build a graph of enough launches to last `rep_ms`.
    Calibrate {
        rep_ms: f64,
    },
    /// Replay the graph `count` times back to back, timing each replay.
    Reps {
        count: u32,
    },
    /// Poison the output, replay the graph once, and check the last launch's output.
    CheckLast,
    Quit,
}

/// The worker's first line: set up and checked, or failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Hello {
    Ready(Ready),
    Failed {
        message: String,
        /// Not run here rather than wrong (a PyTorch backend this machine lacks).
        #[serde(default)]
        skipped: bool,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub gpu: Option<String>,
    pub gpu_uuid: Option<String>,
    /// ptxas's registers and spills.
    #[serde(default)]
    pub resources: Option<String>,
    /// The first launch at the timed shape against the reference.
    pub first: Option<ErrorStats>,
    /// The check cases (ladder versions only).
    #[serde(default)]
    pub checks: Vec<CaseCheck>,
    /// Versions of what the worker runs on (PyTorch, cuDNN, NVRTC), by name.
    #[serde(default)]
    pub versions: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Calibrated { launches: u32, launch_ms: f64 },
    Times { ms: Vec<f64> },
    Checked { error: ErrorStats },
    Error { message: String },
}

/// The protocol's knobs; [`Settings::for_regime`] gives the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub regime: Regime,
    /// Target length of one repetition (one graph replay).
    pub rep_ms: f64,
    /// At least this much timed per round, and at least `min_reps` repetitions.
    pub window_ms: f64,
    pub min_reps: u32,
    pub rounds: u32,
    /// Sustained: warm-up in chunks of this length until the mean SM clock of a chunk is
    /// within `settle_tolerance` of the chunk before, for at most `warmup_cap_ms`.
    pub chunk_ms: f64,
    pub settle_tolerance: f64,
    pub warmup_cap_ms: f64,
    /// Burst: idle time before each window, so that every candidate starts from an idle
    /// GPU at boost clock.
    pub idle_ms: f64,
}

pub const DEFAULT_ROUNDS: u32 = 3;

/// How much longer than `rep_ms` a calibrated graph aims to last.
const CALIBRATION_MARGIN: f64 = 1.05;

impl Settings {
    pub fn for_regime(regime: Regime) -> Settings {
        match regime {
            Regime::Sustained => Settings {
                regime,
                rep_ms: 10.0,
                window_ms: 200.0,
                min_reps: 20,
                rounds: DEFAULT_ROUNDS,
                chunk_ms: 100.0,
                settle_tolerance: 0.01,
                warmup_cap_ms: 3000.0,
                idle_ms: 0.0,
            },
            Regime::Burst => Settings {
                regime,
                rep_ms: 2.0,
                window_ms: 30.0,
                min_reps: 15,
                rounds: DEFAULT_ROUNDS,
                chunk_ms: 0.0,
                settle_tolerance: 0.0,
                warmup_cap_ms: 0.0,
                idle_ms: 1000.0,
            },
        }
    }

    /// Repetitions of a timed window for a graph whose replay takes `rep_ms`.
    pub fn reps_for(&self, rep_ms: f64) -> u32 {
        let by_window = (self.window_ms / rep_ms.max(1e-6)).ceil() as u32;
        by_window.max(self.min_reps)
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
    pub window_ms: f64,
}

impl Measurement {
    pub fn median_us(&self) -> f64 {
        median(&self.launch_us)
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
            while warm_start.elapsed().as_secs_f64() * 1e3 < s.warmup_cap_ms {
                let watch = monitor.map(|m| m.watch());
                w.reps(chunk, cancel)?;
                let clock = watch.and_then(|w| w.finish().sm_clock_mhz);
                match (clock, previous) {
                    (Some(c), Some(p)) if ((c - p) / p).abs() <= s.settle_tolerance => {
                        ok = true;
                        break;
                    }
                    // Without NVML: a fixed warm-up of a third of the cap.
                    (None, _)
                        if warm_start.elapsed().as_secs_f64() * 1e3 >= s.warmup_cap_ms / 3.0 =>
                    {
                        break;
                    }
                    _ => previous = clock,
                }
            }
            settled = monitor.map(|_| ok);
        }
    }
    let warmup_ms = warm_start.elapsed().as_secs_f64() * 1e3;
    // With graphs sized to about `rep_ms`, every candidate gets the same count
    // (`min_reps` under the defaults); only a launch longer than a repetition, alone in
    // its graph, can need fewer than the window asks, and it still gets `min_reps`.
    let count = s.reps_for(s.rep_ms.max(rep_ms));
    let watch = monitor.map(|m| m.watch());
    let t0 = Instant::now();
    let times = w.reps(count, cancel)?;
    let window_ms = t0.elapsed().as_secs_f64() * 1e3;
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
    pub rounds_us: Vec<f64>,
    pub sm_clock_mhz: Option<f64>,
    pub power_w: Option<f64>,
    /// Per launch.
    pub energy_mj: Option<f64>,
    /// Reasons seen in any window; `None` unless every window was watched.
    pub throttle: Option<Vec<String>>,
    pub protocol: Option<Protocol>,
}

pub fn summarize(s: &Settings, rounds: &[Measurement]) -> Result<Summary> {
    let first = rounds.first().context("no round was measured")?;
    let rounds_us: Vec<f64> = rounds.iter().map(Measurement::median_us).collect();
    let all: Vec<f64> = rounds
        .iter()
        .flat_map(|m| m.launch_us.iter().copied())
        .collect();
    let windows: Vec<&Window> = rounds.iter().filter_map(|m| m.window.as_ref()).collect();
    let weighted = |f: &dyn Fn(&Window) -> Option<f64>| -> Option<f64> {
        let (mut sum, mut weight) = (0.0, 0.0);
        for w in &windows {
            let x = f(w)?;
            let t = w.duration.as_secs_f64();
            sum += x * t;
            weight += t;
        }
        (weight > 0.0 && windows.len() == rounds.len()).then(|| sum / weight)
    };
    let launches: f64 = rounds
        .iter()
        .map(|m| (m.launch_us.len() as u32 * m.launches_per_rep) as f64)
        .sum();
    let energy: Option<f64> = if windows.len() == rounds.len() {
        windows.iter().map(|w| w.energy_mj).sum::<Option<f64>>()
    } else {
        None
    };
    let throttle = (windows.len() == rounds.len()).then(|| {
        let mut t: Vec<String> = windows.iter().flat_map(|w| w.throttle.clone()).collect();
        t.sort();
        t.dedup();
        t
    });
    let n = rounds.len() as f64;
    let settled = rounds
        .iter()
        .map(|m| m.settled)
        .collect::<Option<Vec<bool>>>()
        .map(|v| v.iter().all(|&b| b));
    Ok(Summary {
        median_us: median(&rounds_us),
        min_us: all.iter().copied().fold(f64::INFINITY, f64::min),
        max_us: all.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        rounds_us,
        sm_clock_mhz: weighted(&|w| w.sm_clock_mhz),
        power_w: weighted(&|w| w.power_w),
        energy_mj: energy.map(|e| e / launches),
        throttle,
        protocol: Some(Protocol {
            regime: s.regime,
            mechanism: "cuda_graph".into(),
            launches_per_rep: first.launches_per_rep,
            reps: first.launch_us.len() as u32,
            rounds: rounds.len() as u32,
            window_ms: rounds.iter().map(|m| m.window_ms).sum::<f64>() / n,
            warmup_ms: rounds.iter().map(|m| m.warmup_ms).sum::<f64>() / n,
            settled,
            idle_ms: (s.regime == Regime::Burst).then_some(s.idle_ms),
        }),
    })
}

/// Fails unless a settings value makes sense.
pub fn validate(s: &Settings) -> Result<()> {
    if !(s.rep_ms > 0.0 && s.window_ms > 0.0) {
        bail!("repetition and window lengths must be positive");
    }
    if s.rounds == 0 {
        bail!("--rounds must be at least 1");
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
        assert_eq!(sum.rounds_us, vec![61.0, 60.0, 71.0]);
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
    fn windows_hold_enough_repetitions() {
        let s = Settings::for_regime(Regime::Sustained);
        assert_eq!(s.reps_for(10.0), 20);
        assert_eq!(s.reps_for(1.0), 200);
        // A launch longer than the window still gives the minimum.
        assert_eq!(s.reps_for(500.0), 20);
    }

    #[test]
    fn commands_and_replies_read_back() {
        let c = Command::Reps { count: 7 };
        let line = serde_json::to_string(&c).unwrap();
        assert_eq!(line, r#"{"cmd":"reps","count":7}"#);
        let r: Reply = serde_json::from_str(r#"{"reply":"times","ms":[1.5,2.0]}"#).unwrap();
        assert_eq!(r, Reply::Times { ms: vec![1.5, 2.0] });
        let h: Hello = serde_json::from_str(r#"{"event":"failed","message":"no torch"}"#).unwrap();
        assert_eq!(
            h,
            Hello::Failed {
                message: "no torch".into(),
                skipped: false
            }
        );
    }
}
