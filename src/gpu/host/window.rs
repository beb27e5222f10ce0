//! One timed window of one candidate under the protocol ([`super::protocol`]): the
//! graph calibrated once, the warm-up the regime asks for, then repetitions until their
//! own times fill the window, the GPU watched meanwhile.

use super::client::{Worker, WorkerError};
use super::nvml::Monitor;
use super::protocol::Settings;
use super::stats::Measurement;
use crate::model::runs::Regime;
use std::time::{Duration, Instant};

/// How much longer than `rep_ms` a calibrated graph aims to last.
const CALIBRATION_MARGIN: f64 = 1.05;

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

#[cfg(test)]
mod tests {
    use super::super::client::Starting;
    use super::*;

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
}
