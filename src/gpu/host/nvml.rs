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

/// How often a watch reads the SM clock and the throttle reasons.
const SAMPLE_EVERY: Duration = Duration::from_millis(5);

/// Windows shorter than this give no energy figure: NVML's energy counter advances in
/// steps too coarse for them.
pub const MIN_ENERGY_WINDOW: Duration = Duration::from_millis(100);

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
    /// Mean board power, W: from the energy counter where it advanced, else the mean of
    /// the power readings.
    pub power_w: Option<f64>,
    /// Energy over the whole window, mJ (None when the window is too short).
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
        let energy = |nvml: &Nvml, uuid: &str| {
            nvml.device_by_uuid(uuid)
                .ok()?
                .total_energy_consumption()
                .ok()
        };
        let start_energy = energy(&nvml, &uuid);
        let start = Instant::now();
        let handle = std::thread::spawn(move || {
            let mut s = Samples::default();
            let Ok(d) = nvml.device_by_uuid(uuid.as_str()) else {
                return s;
            };
            loop {
                if let Ok(c) = d.clock_info(Clock::SM) {
                    s.clock_sum += c as f64;
                    s.clocks += 1;
                }
                if let Ok(p) = d.power_usage() {
                    s.power_sum += p as f64 / 1e3;
                    s.powers += 1;
                }
                if let Ok(t) = d.current_throttle_reasons() {
                    s.throttle |= t.bits();
                }
                if flag.load(Ordering::Relaxed) {
                    s.end_energy = d.total_energy_consumption().ok();
                    return s;
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
        });
        Watch {
            stop,
            handle,
            start,
            start_energy,
        }
    }
}

#[derive(Default)]
struct Samples {
    clock_sum: f64,
    clocks: usize,
    power_sum: f64,
    powers: usize,
    /// Throttle reason bits seen in any sample.
    throttle: u64,
    end_energy: Option<u64>,
}

/// A window being watched.
pub struct Watch {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Samples>,
    start: Instant,
    start_energy: Option<u64>,
}

impl Watch {
    pub fn finish(self) -> Window {
        self.stop.store(true, Ordering::Relaxed);
        let duration = self.start.elapsed();
        let s = self.handle.join().unwrap_or_default();
        let energy_mj = match (self.start_energy, s.end_energy) {
            (Some(a), Some(b)) if b > a && duration >= MIN_ENERGY_WINDOW => Some((b - a) as f64),
            _ => None,
        };
        let power_w = energy_mj
            .map(|e| e / 1e3 / duration.as_secs_f64())
            .or_else(|| (s.powers > 0).then(|| s.power_sum / s.powers as f64));
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

    #[test]
    fn throttle_reasons_read_as_names() {
        let t = ThrottleReasons::SW_POWER_CAP | ThrottleReasons::GPU_IDLE;
        assert_eq!(throttle_names(t), vec!["gpu_idle", "sw_power_cap"]);
        assert!(throttle_names(ThrottleReasons::empty()).is_empty());
    }
}
