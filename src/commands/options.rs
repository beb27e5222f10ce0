//! The command line's arguments resolved into what the work takes: the recipe found on
//! disk, the GPUs of `--gpus all` counted, the timing settings checked, the runner's and
//! the profiler's requests built, the size limits gathered. `cli` only declares the
//! arguments; here they meet the machine.

use crate::cli::{Common, ProfileArgs, RunArgs, SlotArgs, TraceArgs};
use crate::files::limits::SizeLimits;
use crate::gpu::driver;
use crate::gpu::host::selection::Selection;
use crate::gpu::host::{placement, profile, protocol, runner, trace};
use anyhow::{Result, anyhow, bail};
use std::path::PathBuf;
use std::time::Duration;

impl Common {
    /// The size limits of this command line (`--max-file-size`, `--max-decompressed`,
    /// else their environment variables, else the defaults: clap reads them once), which
    /// the commands hand to every store and request that reads files. No reader looks
    /// them up for itself.
    pub fn size_limits(&self) -> SizeLimits {
        SizeLimits {
            max_file_size: self.max_file_size,
            max_decompressed: self.max_decompressed,
        }
    }
}

/// Where the kernel recipes are: `--kernels DIR`, else [`crate::recipe::folders::DEFAULT_KERNELS`] (which
/// is read from the built-in copy where it is not on disk).
pub fn kernels(common: &Common) -> PathBuf {
    common
        .kernels
        .clone()
        .unwrap_or_else(|| PathBuf::from(crate::recipe::folders::DEFAULT_KERNELS))
}

/// Where children run: the GPUs of `--gpus` (`all` counts this host's), the launcher's
/// command prefix and its jobs.
pub fn slots(a: &SlotArgs) -> Result<placement::Slots> {
    let gpus = match &a.gpus {
        None => Vec::new(),
        Some(spec) => placement::parse_gpus(spec, || {
            if let Some(why) = driver::unavailable() {
                bail!("--gpus all: {why}");
            }
            Ok(driver::device_names()?.len() as u32)
        })?,
    };
    Ok(placement::Slots {
        gpus,
        jobs: a.jobs.unwrap_or(1),
        launcher: match &a.launcher {
            Some(p) => placement::parse_launcher(p)?,
            None => Vec::new(),
        },
    })
}

/// The runner's requests, one per comparison (shape), the recipe found under
/// `--kernels`.
pub fn run_requests(a: &RunArgs, common: &Common) -> Result<Vec<runner::Request>> {
    let base = run_request(a, common)?;
    if a.shape.is_empty() {
        return Ok(vec![base]);
    }
    Ok(a.shape
        .iter()
        .map(|s| {
            let mut r = base.clone();
            r.selection.shape = Some(s.clone());
            r
        })
        .collect())
}

/// The request of the first comparison.
fn run_request(a: &RunArgs, common: &Common) -> Result<runner::Request> {
    let kernels = crate::recipe::folders::find_recipe(
        &kernels(common),
        a.ladder.as_deref(),
        common.size_limits(),
    )?;
    let mut settings = protocol::Settings::for_regime(a.regime);
    settings.fixed_rounds = a.rounds;
    settings.min_rounds = a.min_rounds;
    settings.target_noise = a.target_noise / 100.0;
    if !(a.max_time > 0.0 && a.max_time.is_finite()) {
        bail!("--max-time must be a positive number of seconds");
    }
    settings.max_time = Duration::from_secs_f64(a.max_time);
    if let Some(r) = a.reps {
        settings.min_reps = r;
    }
    if let Some(w) = a.min_window {
        if !(w > 0.0 && w.is_finite()) {
            bail!("--min-window must be a positive number of milliseconds");
        }
        settings.window_ms = w;
    }
    let selection = Selection {
        versions: a.versions.clone(),
        flags: a.flags.clone(),
        ..Selection::new(kernels, common.size_limits())
    };
    Ok(runner::Request {
        placement: Default::default(),
        baselines: a.baselines,
        seed: a.seed,
        settings,
        timeout: Duration::from_secs(a.timeout),
        cases: !a.no_cases,
        against: a.against.clone(),
        ..runner::Request::new(selection)
    })
}

/// A command to profile (after `--`), and the version its profile becomes.
#[derive(Debug, Clone)]
pub struct CommandProfile {
    pub request: profile::CommandRequest,
    pub ladder: Option<String>,
    pub version: String,
    pub title: Option<String>,
    pub force: bool,
}

/// The request to profile a command, when one was given after `--`.
pub fn command_profile(a: &ProfileArgs) -> Option<Result<CommandProfile>> {
    if a.command.is_empty() {
        return None;
    }
    let Some(version) = a.version_id.clone() else {
        return Some(Err(anyhow!(
            "profiling a command needs --version ID (the version it becomes)"
        )));
    };
    if !a.versions.is_empty() {
        return Some(Err(anyhow!(
            "give recipe versions ({}) or a command after `--`, not both",
            a.versions.join(" ")
        )));
    }
    // One command, one child: the first slot's placement.
    let placement = match slots(&a.slots) {
        Ok(s) => s.placements().remove(0),
        Err(e) => return Some(Err(e)),
    };
    Some(Ok(CommandProfile {
        request: profile::CommandRequest {
            target: crate::nsight::Target::new(
                a.command.clone(),
                a.kernel.clone(),
                a.launch_skip,
                &a.set,
            ),
            timeout: Duration::from_secs(a.timeout),
            placement,
        },
        ladder: a.ladder.clone(),
        version,
        title: a.title.clone(),
        force: a.force,
    }))
}

/// The request to profile a recipe's versions, the recipe found under `--kernels`.
pub fn profile_request(a: &ProfileArgs, common: &Common) -> Result<profile::Request> {
    let kernels = crate::recipe::folders::find_recipe(
        &kernels(common),
        a.ladder.as_deref(),
        common.size_limits(),
    )?;
    let selection = Selection {
        versions: a.versions.clone(),
        shape: a.shape.clone(),
        flags: a.flags.clone(),
        ..Selection::new(kernels, common.size_limits())
    };
    Ok(profile::Request {
        slots: slots(&a.slots)?,
        set: a.set.clone(),
        timeout: Duration::from_secs(a.timeout),
        ..profile::Request::new(selection)
    })
}

/// What `stallscope trace` asks of the GPU: the marked versions it names, the run that
/// times each one's trace build against its plain build (none with `--no-overhead`),
/// and the capture of their traces (none with `--no-capture`).
pub struct TraceRequests {
    pub recipe: crate::recipe::KernelRecipe,
    pub ids: Vec<String>,
    pub cost: Option<runner::Request>,
    pub capture: Option<trace::Request>,
}

pub fn trace_requests(a: &TraceArgs, common: &Common) -> Result<TraceRequests> {
    let limits = common.size_limits();
    let kernels =
        crate::recipe::folders::find_recipe(&kernels(common), a.ladder.as_deref(), limits)?;
    let recipe = crate::recipe::folders::load_recipe(&kernels, limits)?;
    let ids: Vec<String> = trace::marked_versions(&recipe, &a.versions)?
        .into_iter()
        .map(|v| v.id)
        .collect();
    let selection = Selection {
        versions: ids.clone(),
        shape: a.shape.clone(),
        flags: a.flags.clone(),
        ..Selection::new(kernels.clone(), limits)
    };
    let cost = (!a.no_overhead).then(|| runner::Request {
        seed: a.seed,
        cases: false,
        traced_twins: true,
        settings: protocol::Settings {
            fixed_rounds: a.rounds,
            ..protocol::Settings::for_regime(a.regime)
        },
        ..runner::Request::new(selection.clone())
    });
    let capture = (!a.no_capture).then(|| trace::Request {
        selection,
        cap: a.cap,
        seed: a.seed.unwrap_or(1),
        timeout: Duration::from_secs(a.timeout),
        placement: Default::default(),
    });
    Ok(TraceRequests {
        recipe,
        ids,
        cost,
        capture,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).expect("the arguments parse")
    }

    #[test]
    fn a_profiled_command_takes_the_launch_count_the_explorer_takes() {
        let Some(Command::Profile(p)) = parse(&[
            "stallscope",
            "profile",
            "--ladder",
            "mine",
            "--version",
            "v1",
            "--",
            "./app",
        ])
        .command
        else {
            panic!("a profile command");
        };
        let req = command_profile(&p).expect("a command").expect("a request");
        assert_eq!(
            req.request.target,
            crate::nsight::Target::new(vec!["./app".into()], None, 0, profile::DEFAULT_SET)
        );
    }
}
