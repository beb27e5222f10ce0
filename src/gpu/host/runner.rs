//! `stallscope run`: every candidate (the selected versions, and with `--baselines` the
//! unfused cuBLAS baseline and PyTorch's SDPA backends) starts in a worker process of
//! its own and is checked there; then the runner times them all under one protocol, in
//! interleaved rounds (A B C A B C …) so that drift in clock or temperature falls on
//! every candidate alike; finally each worker's last launch is checked too. It returns
//! results; storing them is the caller's (model side).

use super::client::{Starting, Worker, WorkerError};
use super::nvml::Monitor;
use super::placement::{Placement, Slots};
use super::protocol::{self, Settings};
use super::sdpa;
use super::stats::{self, Measurement};
use super::stopping;
use crate::gpu::recipe::KernelRecipe;
use crate::gpu::recipe::baselines::{SDPA_BACKENDS, UNFUSED};
use crate::gpu::wire::{self, ErrorStats, Mode, WorkerArgs};
use crate::model::runs::{Convergence, Environment, Protocol, now_utc};
use crate::model::{RunResult, RunStatus, Shape};
use crate::process;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Seconds a worker may take for its setup, or for one command.
pub const DEFAULT_TIMEOUT_S: u64 = 180;
/// Workers set up at the same time.
const PARALLEL_SETUP: usize = 8;

#[derive(Debug, Clone)]
pub struct Request {
    /// The recipe folder.
    pub kernels: PathBuf,
    pub versions: Vec<String>,
    pub shape: Option<Shape>,
    pub causal: bool,
    pub baselines: bool,
    pub seed: Option<u64>,
    pub settings: Settings,
    pub timeout: Duration,
    /// Check every version on the input cases besides the timed shape.
    pub cases: bool,
    /// Where the workers run (a GPU of this host, a cluster launcher).
    pub placement: Placement,
    /// The candidate the stopping rule takes ratios against [default: the fastest
    /// version].
    pub against: Option<String>,
}

impl Request {
    /// A request with every default: all versions, the recipe's reference shape, the
    /// sustained regime.
    pub fn new(kernels: PathBuf) -> Request {
        Request {
            kernels,
            versions: Vec::new(),
            shape: None,
            causal: false,
            baselines: false,
            seed: None,
            settings: Settings::for_regime(crate::model::runs::Regime::Sustained),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
            cases: true,
            placement: Placement::default(),
            against: None,
        }
    }
}

/// What a run reports while it goes.
pub enum Progress {
    /// A step begins: `what` of candidate `id` (`index` of `total` steps).
    Step {
        id: String,
        what: String,
        index: usize,
        total: usize,
    },
    Finished(Box<RunResult>),
}

pub struct Outcome {
    pub results: Vec<RunResult>,
    pub seed: u64,
    pub shape: Shape,
    pub causal: bool,
    pub recipe: KernelRecipe,
    pub environment: Environment,
}

/// One candidate: how to start its worker.
struct Candidate {
    id: String,
    cmd: Command,
    baseline: bool,
}

/// Runs the request; `cancel` stops it between and during steps.
pub fn run(
    req: &Request,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome> {
    protocol::validate(&req.settings)?;
    let recipe = crate::gpu::load_recipe(&req.kernels)?;
    let versions = recipe.select(&req.versions)?;
    // Through a cluster launcher the GPUs are on other machines: the workers say.
    if req.placement.launcher.is_empty()
        && let Some(why) = crate::gpu::driver::unavailable()
    {
        bail!(why);
    }
    let shape = req.shape.unwrap_or_else(|| recipe.reference_shape());
    let seed = req.seed.unwrap_or_else(fresh_seed);
    let flops = recipe.flops_for(&shape, req.causal)?;
    let run_id = format!("{}-{seed}", now_utc());
    let blank = |id: &str, status| RunResult {
        seed: Some(seed),
        run_id: Some(run_id.clone()),
        gpu_index: req.placement.gpu,
        ..RunResult::new(id, shape, req.causal, status)
    };

    let exe = stallscope_exe()?;
    // The SDPA script goes where a launcher's node sees it too (the cache, under a home
    // shared across a cluster), else to a temporary folder.
    let scripts = match crate::files::cache_dir() {
        Some(c) => tempfile::Builder::new()
            .prefix("sdpa-")
            .tempdir_in({
                let d = c.join("scripts");
                std::fs::create_dir_all(&d).ok();
                d
            })
            .or_else(|_| tempfile::tempdir()),
        None => tempfile::tempdir(),
    }
    .context("temporary folder")?;
    let mut results: Vec<RunResult> = Vec::new();
    let finish =
        |r: RunResult, results: &mut Vec<RunResult>, progress: &mut dyn FnMut(Progress)| {
            progress(Progress::Finished(Box::new(r.clone())));
            results.push(r);
        };
    let mut candidates = Vec::new();
    for v in &versions {
        match v.unsupported(&shape, req.causal) {
            Some(why) => finish(
                RunResult {
                    message: Some(why),
                    ..blank(&v.id, RunStatus::Skipped)
                },
                &mut results,
                progress,
            ),
            None => candidates.push(Candidate {
                id: v.id.clone(),
                cmd: worker_command(&exe, req, Mode::Run, &v.id, shape, seed),
                baseline: false,
            }),
        }
    }
    if req.baselines {
        candidates.push(Candidate {
            id: UNFUSED.into(),
            cmd: worker_command(&exe, req, Mode::Unfused, UNFUSED, shape, seed),
            baseline: true,
        });
        match sdpa::write_script(&recipe, scripts.path()) {
            Ok(script) => {
                for (id, _) in SDPA_BACKENDS {
                    candidates.push(Candidate {
                        id: id.to_string(),
                        cmd: req
                            .placement
                            .wrap(sdpa::worker(&script, id, shape, req.causal, seed)),
                        baseline: true,
                    });
                }
            }
            Err(e) => {
                for (id, _) in SDPA_BACKENDS {
                    finish(
                        RunResult {
                            message: Some(format!("{e:#}")),
                            ..blank(id, RunStatus::Skipped)
                        },
                        &mut results,
                        progress,
                    );
                }
            }
        }
    }

    // Progress counts the least rounds; rounds past them add to the total as they start.
    let least = req.settings.least_rounds() as usize;
    let total = candidates.len() * (least + 1);
    let mut step = 0;
    let mut step_to = |id: &str, what: String, progress: &mut dyn FnMut(Progress)| {
        progress(Progress::Step {
            id: id.to_string(),
            what,
            index: step,
            total,
        });
        step += 1;
    };

    // Set-up and checks, several workers at a time (compiling is the slow part).
    let mut live: Vec<(Worker, bool)> = Vec::new();
    let mut queue = candidates.into_iter();
    loop {
        let batch: Vec<Candidate> = queue.by_ref().take(PARALLEL_SETUP).collect();
        if batch.is_empty() {
            break;
        }
        let mut starting = Vec::new();
        for c in batch {
            match Starting::spawn(&c.id, c.cmd) {
                Ok(s) => starting.push((c.id, c.baseline, s)),
                Err(e) => finish(
                    failed(&blank(&c.id, RunStatus::Failed), &e),
                    &mut results,
                    progress,
                ),
            }
        }
        for (id, baseline, s) in starting {
            stop_if(cancel)?;
            step_to(&id, "setting up and checking".into(), progress);
            match s.ready(req.timeout, cancel) {
                Ok(w) => {
                    let mut r = blank(&id, RunStatus::Ok);
                    if let Some(why) = judge_setup(&recipe, &id, &w, &mut r) {
                        r.status = RunStatus::Failed;
                        r.message = Some(why);
                        finish(r, &mut results, progress);
                        w.quit();
                    } else {
                        live.push((w, baseline));
                    }
                }
                Err(e) => finish(
                    failed(&blank(&id, RunStatus::Failed), &e),
                    &mut results,
                    progress,
                ),
            }
        }
    }

    let uuid = live.iter().find_map(|(w, _)| w.ready.gpu_uuid.clone());
    let (monitor, nvml_note) = match uuid.as_deref().map(Monitor::open) {
        Some(Ok(m)) => (Some(m), None),
        Some(Err(e)) => (None, Some(format!("{e:#}"))),
        None => (None, Some("no candidate reached the timing".to_string())),
    };
    let mut environment = Environment {
        run_id: run_id.clone(),
        when: Some(now_utc()),
        gpu_uuid: uuid,
        nvml: nvml_note,
        cuda_driver: crate::gpu::driver::driver_cuda_version(),
        ..Environment::default()
    };
    if let Some(m) = &monitor {
        let e = m.environment();
        environment.gpu = e.gpu;
        environment.driver = e.driver;
        environment.cuda_driver = e.cuda_driver.or(environment.cuda_driver);
        environment.max_sm_clock_mhz = e.max_sm_clock_mhz;
        environment.power_limit_w = e.power_limit_w;
    }
    for (w, _) in &live {
        environment.gpu = environment.gpu.clone().or(w.ready.gpu.clone());
        for (name, version) in &w.ready.versions {
            let slot = match name.as_str() {
                "torch" => &mut environment.torch,
                "cudnn" => &mut environment.cudnn,
                "nvrtc" => &mut environment.nvrtc,
                _ => continue,
            };
            slot.get_or_insert_with(|| version.clone());
        }
    }

    // The rounds: every live candidate once per round, in the same order, until the
    // stopping rule says the ratios have converged (or time is up); a candidate the rule
    // calls decided sits out the rounds after (for good, so that its rounds stay paired
    // by position with the others' first ones).
    let mut measured: Vec<Vec<Measurement>> = vec![Vec::new(); live.len()];
    let mut broken: Vec<Option<String>> = vec![None; live.len()];
    let mut sitting_out = vec![false; live.len()];
    let is_version = |id: &str| recipe.version(id).is_some();
    let against = req.against.as_deref();
    let started = std::time::Instant::now();
    let mut round = 0;
    let mut past_least = 0;
    let (stopping, stop) = loop {
        let timed_now = (0..live.len())
            .filter(|&i| broken[i].is_none() && !sitting_out[i])
            .count();
        if round >= least {
            past_least += timed_now;
        }
        let shown_total = total + past_least;
        for (i, (w, _)) in live.iter_mut().enumerate() {
            if broken[i].is_some() || sitting_out[i] {
                continue;
            }
            stop_if(cancel)?;
            let what = match req.settings.fixed_rounds {
                Some(n) => format!("round {}/{n}", round + 1),
                None if round < least => format!("round {}/{least}+", round + 1),
                None => format!(
                    "round {} (until ±{:.1} %)",
                    round + 1,
                    req.settings.target_noise * 100.0
                ),
            };
            progress(Progress::Step {
                id: w.id.clone(),
                what,
                index: step,
                total: shown_total,
            });
            step += 1;
            match protocol::measure(w, &req.settings, monitor.as_ref(), cancel) {
                Ok(m) => measured[i].push(m),
                Err(WorkerError::Stopped(process::Stopped::Cancelled)) => bail!("stopped"),
                Err(WorkerError::Stopped(process::Stopped::Interrupted)) => bail!("interrupted"),
                Err(e) => broken[i] = Some(format!("while timing: {e}")),
            }
        }
        round += 1;
        let ids: Vec<&str> = live.iter().map(|(w, _)| w.id.as_str()).collect();
        let state = stopping::State {
            ids: &ids,
            rounds_us: &measured
                .iter()
                .zip(&broken)
                .map(|(m, b)| {
                    b.is_none()
                        .then(|| m.iter().map(Measurement::median_us).collect())
                })
                .collect::<Vec<_>>(),
            is_version: &is_version,
            against,
        };
        let standing = stopping::check(&req.settings, &state, round as u32, started.elapsed());
        if let Some(stop) = standing.stopped {
            break (standing, stop);
        }
        for (out, decided) in sitting_out.iter_mut().zip(&standing.decided) {
            *out |= decided;
        }
    };
    // The last launch, then the figures.
    let ids: Vec<String> = live.iter().map(|(w, _)| w.id.clone()).collect();
    for (i, (mut w, _)) in live.into_iter().enumerate() {
        let mut r = blank(&w.id, RunStatus::Ok);
        judge_setup(&recipe, &w.id, &w, &mut r);
        if let Some(why) = &broken[i] {
            r.status = RunStatus::Failed;
            r.message = Some(why.clone());
        } else {
            match w.check_last(cancel) {
                Ok(last) => {
                    worst_error(&mut r, &last);
                    if let Some(why) = tolerances_of(&recipe, &w.id)
                        .and_then(|(rel, abs)| wire::judge(&last, rel, abs))
                    {
                        r.status = RunStatus::Failed;
                        r.message =
                            Some(format!("the last launch (after the timed window): {why}"));
                    }
                }
                Err(e) => {
                    r.status = RunStatus::Failed;
                    r.message = Some(format!("checking the last launch: {e}"));
                }
            }
            if let Ok(s) = stats::summarize(&req.settings, &measured[i]) {
                r.median_us = Some(s.median_us);
                r.min_us = Some(s.min_us);
                r.max_us = Some(s.max_us);
                r.rounds = s.rounds;
                r.tflops = Some(flops / s.median_us / 1e6);
                r.sm_clock_mhz = s.sm_clock_mhz;
                r.power_w = s.power_w;
                r.energy_mj = s.energy_mj;
                r.throttle = s.throttle;
                r.protocol = s.protocol.map(|p| Protocol {
                    convergence: stopping.reference.map(|reference| Convergence {
                        against: ids[reference].clone(),
                        target_pct: stopping.target_pct,
                        interval_pct: stopping.half_width_pct[i],
                        converged: stopping.converged(i),
                        decided: stopping.decided[i],
                        stopped: stop,
                    }),
                    ..p
                });
            }
        }
        w.quit();
        finish(r, &mut results, progress);
    }
    Ok(Outcome {
        results,
        seed,
        shape,
        causal: req.causal,
        recipe,
        environment,
    })
}

fn stop_if(cancel: &AtomicBool) -> Result<()> {
    if process::interrupted() {
        bail!("interrupted");
    }
    if cancel.load(Ordering::Relaxed) {
        bail!("stopped");
    }
    Ok(())
}

/// The relative and absolute tolerance of a candidate: its version's, or the recipe's
/// for a baseline.
fn tolerances_of(recipe: &KernelRecipe, id: &str) -> Option<(f64, f64)> {
    Some(match recipe.version(id) {
        Some(v) => v.tolerances(recipe),
        None => (recipe.tolerance, recipe.max_abs_tolerance),
    })
}

fn worst_error(r: &mut RunResult, e: &ErrorStats) {
    r.max_abs_err = Some(r.max_abs_err.unwrap_or(0.0).max(e.max_abs));
    r.rel_l2_err = Some(r.rel_l2_err.unwrap_or(0.0).max(e.rel_l2));
}

/// Fills a result from a worker's set-up (GPU, resources, checks, first launch); the
/// reason it failed, if it did.
fn judge_setup(recipe: &KernelRecipe, id: &str, w: &Worker, r: &mut RunResult) -> Option<String> {
    let ready = &w.ready;
    r.gpu = ready.gpu.clone();
    r.gpu_uuid = ready.gpu_uuid.clone();
    r.resources = ready.resources.clone();
    r.checks = ready.checks.clone();
    let mut why = ready
        .checks
        .iter()
        .find(|c| c.status == RunStatus::Failed)
        .and_then(|c| c.message.clone());
    if let Some(first) = &ready.first {
        worst_error(r, first);
        if why.is_none() {
            why = tolerances_of(recipe, id)
                .and_then(|(rel, abs)| wire::judge(first, rel, abs))
                .map(|w| format!("the first launch at the timed shape: {w}"));
        }
    }
    why
}

fn failed(blank: &RunResult, e: &WorkerError) -> RunResult {
    let (status, message) = match e {
        WorkerError::Skipped(m) => (RunStatus::Skipped, m.clone()),
        WorkerError::Stopped(process::Stopped::TimedOut(d)) => (
            RunStatus::Failed,
            format!("timed out after {} s (a hung kernel?)", d.as_secs()),
        ),
        other => (RunStatus::Failed, other.to_string()),
    };
    RunResult {
        status,
        message: Some(message),
        ..blank.clone()
    }
}

fn worker_command(
    exe: &Path,
    req: &Request,
    mode: Mode,
    id: &str,
    shape: Shape,
    seed: u64,
) -> Command {
    let args = WorkerArgs {
        mode,
        recipe: req.kernels.clone(),
        version: id.to_string(),
        shape,
        causal: req.causal,
        seed,
        no_cases: !req.cases,
    };
    let mut cmd = Command::new(exe);
    cmd.args(args.command_line());
    req.placement.wrap(cmd)
}

fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64 ^ ((std::process::id() as u64) << 32))
        .unwrap_or(1)
        % 1_000_000_007
}

/// The executable that runs workers: `$STALLSCOPE_EXE` when set (a program that uses
/// stallscope as a library, or a test), else this process's own executable.
pub fn stallscope_exe() -> Result<PathBuf> {
    match std::env::var_os("STALLSCOPE_EXE") {
        Some(p) => Ok(PathBuf::from(p)),
        None => std::env::current_exe().context("cannot find the stallscope executable"),
    }
}

/// Several comparisons (each a shape with its versions and baselines) spread over the
/// slots, one comparison a slot at a time: each runs whole on one GPU, so that every
/// ratio is between runs on one device. Outcomes come back in the order asked.
pub fn run_many(
    reqs: Vec<Request>,
    slots: &Slots,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Placement, Progress) + Sync),
) -> Vec<Result<Outcome>> {
    let n = reqs.len();
    let queue = std::sync::Mutex::new(reqs.into_iter().enumerate().collect::<Vec<_>>());
    let done: std::sync::Mutex<Vec<Option<Result<Outcome>>>> =
        std::sync::Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for placement in slots.placements() {
            let (queue, done) = (&queue, &done);
            scope.spawn(move || {
                loop {
                    let next = {
                        let mut q = queue.lock().unwrap_or_else(|p| p.into_inner());
                        if q.is_empty() {
                            None
                        } else {
                            Some(q.remove(0))
                        }
                    };
                    let Some((i, mut req)) = next else { break };
                    req.placement = placement.clone();
                    let out = run(&req, cancel, &mut |p| progress(&placement, p));
                    done.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(out);
                }
            });
        }
    });
    done.into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Err(anyhow::anyhow!("not run"))))
        .collect()
}
