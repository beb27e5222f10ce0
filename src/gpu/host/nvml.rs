//! The GPU's clocks, power and energy through NVML, the driver's management library
//! (`libnvidia-ml.so.1`, loaded at run time: where it is missing, runs go on without
//! these figures). The runner watches the GPU while a candidate is timed, from its own
//! process, so that every candidate (a ladder version, cuBLAS, PyTorch) is watched alike.

use anyhow::{Context, Result};
use nvml_wrapper::Nvml;
use nvml_wrapper::bitmasks::device::ThrottleReasons;
use nvml_wrapper::enum_wrappers::device::Clock;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a watch reads the energy counter.
const POLL_EVERY: Duration = Duration::from_millis(1);

/// Every how many polls a watch also reads the SM clock, the power reading and the
/// throttle reasons (every ~5 ms).
const SAMPLE_EVERY_POLLS: u32 = 5;

/// The shortest stretch between the energy counter's first and last step inside a
/// window that gives a power figure: the step times are known to about a poll, so a
/// shorter stretch would carry more than a few % of error.
const MIN_STEP_SPAN_S: f64 = 0.05;

/// One GPU seen through NVML.
#[derive(Clone)]
pub struct Monitor {
    nvml: Arc<Nvml>,
    uuid: String,
}

/// What was seen over one window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    pub duration: Duration,
    /// Mean SM clock over the samples, MHz.
    pub sm_clock_mhz: Option<f64>,
    /// Mean board power, W: from the energy counter's steps inside the window (see
    /// [`counter_power_w`]), else the mean of the power readings.
    pub power_w: Option<f64>,
    /// Energy over the whole window, mJ: that power over the window's duration (None
    /// unless the counter stepped twice inside it).
    pub energy_mj: Option<f64>,
    /// Throttle reasons seen in any sample, by name.
    pub throttle: Vec<String>,
    pub samples: usize,
}

/// The versions and names a run records once.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    pub gpu: Option<String>,
    pub driver: Option<String>,
    /// The CUDA version the driver supports ("13.0").
    pub cuda_driver: Option<String>,
    pub max_sm_clock_mhz: Option<u32>,
    pub power_limit_w: Option<f64>,
}

impl Monitor {
    /// NVML for the GPU with this UUID (`GPU-…`, as CUDA reports it).
    pub fn open(uuid: &str) -> Result<Monitor> {
        let nvml = Nvml::init().map_err(|e| {
            anyhow::anyhow!(
                "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) is not usable: {e}"
            )
        })?;
        // The GPU the worker reported; where NVML does not know that UUID (spelled
        // otherwise), the only GPU NVML sees is the one.
        let uuid = match nvml.device_by_uuid(uuid) {
            Ok(_) => uuid.to_string(),
            Err(e) => match nvml.device_count() {
                Ok(1) => nvml
                    .device_by_index(0)
                    .and_then(|d| d.uuid())
                    .with_context(|| format!("NVML does not know the GPU {uuid} ({e})"))?,
                _ => anyhow::bail!("NVML does not know the GPU {uuid} ({e})"),
            },
        };
        Ok(Monitor {
            nvml: Arc::new(nvml),
            uuid,
        })
    }

    pub fn environment(&self) -> Environment {
        let d = self.nvml.device_by_uuid(self.uuid.as_str()).ok();
        let cuda = self.nvml.sys_cuda_driver_version().ok().map(|v| {
            format!(
                "{}.{}",
                nvml_wrapper::cuda_driver_version_major(v),
                nvml_wrapper::cuda_driver_version_minor(v)
            )
        });
        Environment {
            gpu: d.as_ref().and_then(|d| d.name().ok()),
            driver: self.nvml.sys_driver_version().ok(),
            cuda_driver: cuda,
            max_sm_clock_mhz: d.as_ref().and_then(|d| d.max_clock_info(Clock::SM).ok()),
            power_limit_w: d
                .as_ref()
                .and_then(|d| d.enforced_power_limit().ok())
                .map(|mw| mw as f64 / 1e3),
        }
    }

    /// The SM clock now, MHz.
    pub fn sm_clock(&self) -> Option<u32> {
        let d = self.nvml.device_by_uuid(self.uuid.as_str()).ok()?;
        d.clock_info(Clock::SM).ok()
    }

    /// Starts watching; [`Watch::finish`] ends the window.
    pub fn watch(&self) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let (nvml, uuid, flag) = (self.nvml.clone(), self.uuid.clone(), stop.clone());
        let start = Instant::now();
        let handle = std::thread::spawn(move || {
            let mut s = Samples::default();
            let Ok(d) = nvml.device_by_uuid(uuid.as_str()) else {
                return s;
            };
            for poll in 0u32.. {
                if let Ok(e) = d.total_energy_consumption() {
                    s.energy.push((start.elapsed().as_secs_f64(), e));
                }
                if poll % SAMPLE_EVERY_POLLS == 0 {
                    s.sample(&d);
                }
                if flag.load(Ordering::Relaxed) {
                    break;
                }
                std::thread::sleep(POLL_EVERY);
            }
            s
        });
        Watch {
            stop,
            handle,
            start,
        }
    }
}

/// Mean power over the stretch between the first and the last step of NVML's energy
/// counter seen in `polls` (seconds since the window began, the counter in mJ), W.
///
/// The counter does not count continuously: on the H200 it steps about every 100 ms
/// (the rounds of a ~220 ms window saw two or three steps, so the difference between
/// its readings at the window's edges read ~590 or ~890 W for one kernel at the 700 W
/// cap). The energy between two steps is known exactly, and each step's time to
/// within a poll (taken midway between the poll before it and the poll that saw it),
/// so the power is that energy over that time. None with fewer than two steps, or
/// steps closer than [`MIN_STEP_SPAN_S`].
pub fn counter_power_w(polls: &[(f64, u64)]) -> Option<f64> {
    let steps: Vec<(f64, u64)> = polls
        .windows(2)
        .filter(|p| p[1].1 != p[0].1)
        .map(|p| ((p[0].0 + p[1].0) / 2.0, p[1].1))
        .collect();
    let (&(t0, e0), &(t1, e1)) = (steps.first()?, steps.last()?);
    (t1 - t0 >= MIN_STEP_SPAN_S && e1 > e0).then(|| (e1 - e0) as f64 / 1e3 / (t1 - t0))
}

#[derive(Default)]
struct Samples {
    clock_sum: f64,
    clocks: usize,
    power_sum: f64,
    powers: usize,
    /// Throttle reason bits seen in any sample.
    throttle: u64,
    /// Every poll of the energy counter: (seconds since the window began, mJ).
    energy: Vec<(f64, u64)>,
}

impl Samples {
    /// Reads the SM clock, the power reading and the throttle reasons once.
    fn sample(&mut self, d: &nvml_wrapper::Device) {
        if let Ok(c) = d.clock_info(Clock::SM) {
            self.clock_sum += c as f64;
            self.clocks += 1;
        }
        if let Ok(p) = d.power_usage() {
            self.power_sum += p as f64 / 1e3;
            self.powers += 1;
        }
        if let Ok(t) = d.current_throttle_reasons() {
            self.throttle |= t.bits();
        }
    }
}

/// A window being watched.
pub struct Watch {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Samples>,
    start: Instant,
}

impl Watch {
    pub fn finish(self) -> Window {
        self.stop.store(true, Ordering::Relaxed);
        let duration = self.start.elapsed();
        let s = self.handle.join().unwrap_or_default();
        let counted = counter_power_w(&s.energy);
        let energy_mj = counted.map(|w| w * duration.as_secs_f64() * 1e3);
        let power_w = counted.or_else(|| (s.powers > 0).then(|| s.power_sum / s.powers as f64));
        Window {
            duration,
            sm_clock_mhz: (s.clocks > 0).then(|| s.clock_sum / s.clocks as f64),
            power_w,
            energy_mj,
            throttle: throttle_names(ThrottleReasons::from_bits_truncate(s.throttle)),
            samples: s.clocks,
        }
    }
}

/// Throttle reasons by name, in a fixed order.
pub fn throttle_names(t: ThrottleReasons) -> Vec<String> {
    #[allow(deprecated)]
    let names = [
        (ThrottleReasons::GPU_IDLE, "gpu_idle"),
        (
            ThrottleReasons::APPLICATIONS_CLOCKS_SETTING,
            "applications_clocks",
        ),
        (ThrottleReasons::SW_POWER_CAP, "sw_power_cap"),
        (ThrottleReasons::HW_SLOWDOWN, "hw_slowdown"),
        (ThrottleReasons::SYNC_BOOST, "sync_boost"),
        (ThrottleReasons::SW_THERMAL_SLOWDOWN, "sw_thermal"),
        (ThrottleReasons::HW_THERMAL_SLOWDOWN, "hw_thermal"),
        (ThrottleReasons::HW_POWER_BRAKE_SLOWDOWN, "hw_power_brake"),
        (ThrottleReasons::DISPLAY_CLOCK_SETTING, "display_clocks"),
    ];
    names
        .iter()
        .filter(|(bit, _)| t.contains(*bit))
        .map(|(_, n)| n.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Polls every `poll` s over `window` s of a counter that steps every `period` s
    /// (first at `phase`) by the energy `watts` delivered since its last step.
    fn polls(watts: f64, period: f64, phase: f64, poll: f64, window: f64) -> Vec<(f64, u64)> {
        let counter = |t: f64| {
            let steps = ((t - phase) / period).floor() + 1.0;
            (1e9 + steps.max(0.0) * watts * period * 1e3) as u64
        };
        (0..)
            .map(|i| i as f64 * poll)
            .take_while(|&t| t <= window)
            .map(|t| (t, counter(t)))
            .collect()
    }

    #[test]
    fn power_from_the_counters_steps_is_right_whatever_the_phase() {
        // A 220 ms window of a 650 W kernel, the counter stepping every 100 ms: the
        // difference of the edges reads 2 or 3 steps (590 or 886 W); the steps' own
        // stretch reads 650 W within a poll's uncertainty.
        for k in 0..100 {
            let phase = k as f64 * 0.001;
            let p = polls(650.0, 0.1, phase, 0.001, 0.22);
            let w = counter_power_w(&p).expect("two steps or more in 220 ms");
            assert!((w / 650.0 - 1.0).abs() < 0.025, "phase {phase}: {w} W");
            let edges = (p.last().unwrap().1 - p[0].1) as f64 / 1e3 / 0.22;
            assert!(
                (edges / 650.0 - 1.0).abs() > 0.09,
                "phase {phase}: {edges} W"
            );
        }
    }

    #[test]
    fn no_power_without_two_steps_far_enough_apart() {
        // A 30 ms burst window sees one step at most; a 120 ms one may see two steps
        // only 20 ms apart.
        assert_eq!(counter_power_w(&polls(650.0, 0.1, 0.01, 0.001, 0.03)), None);
        assert_eq!(counter_power_w(&polls(650.0, 0.1, 0.09, 0.001, 0.12)), None);
        assert_eq!(counter_power_w(&[]), None);
        // A counter that never moved.
        assert_eq!(counter_power_w(&[(0.0, 5), (0.1, 5), (0.2, 5)]), None);
        // A counter that steps every 20 ms (another GPU) over a 30 ms window: two steps
        // 20 ms apart are too close; over 100 ms the figure is right.
        assert_eq!(
            counter_power_w(&polls(300.0, 0.02, 0.005, 0.001, 0.03)),
            None
        );
        let w = counter_power_w(&polls(300.0, 0.02, 0.005, 0.001, 0.1)).unwrap();
        assert!((w / 300.0 - 1.0).abs() < 0.05, "{w}");
    }

    #[test]
    fn throttle_reasons_read_as_names() {
        let t = ThrottleReasons::SW_POWER_CAP | ThrottleReasons::GPU_IDLE;
        assert_eq!(throttle_names(t), vec!["gpu_idle", "sw_power_cap"]);
        assert!(throttle_names(ThrottleReasons::empty()).is_empty());
    }
}
