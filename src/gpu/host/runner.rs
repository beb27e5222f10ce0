//! `stallscope run`: every candidate (the selected versions, and with `--baselines` the
//! problem kind's baselines, built-in and scripted) starts in a worker process of
//! its own and is checked there; then the runner times them all under one protocol, in
//! interleaved rounds (A B C A B C …) so that drift in clock or temperature falls on
//! every candidate alike; finally each worker's last launch is checked too. It returns
//! results; storing them is the caller's (model side).

use super::client::{Starting, Worker, WorkerError};
use super::nvml::Monitor;
use super::placement::{Placement, Slots};
use super::protocol::{self, Settings};
use super::script;
use super::stats::{self, Measurement};
use super::stopping;
use super::window;
use crate::gpu::wire::{self, ErrorStats, Mode, WorkerArgs};
use crate::model::runs::{Convergence, Environment, Protocol, Stop, now_utc};
use crate::model::{RunResult, RunStatus, Shape};
use crate::process;
use crate::recipe::baselines;
use crate::recipe::{KernelRecipe, KernelVersion};
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
    /// Which recipe, versions and shape.
    pub selection: super::selection::Selection,
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
    /// Beside each marked version, its trace build ([`traced_id`]), timed alike: what
    /// tracing costs.
    pub traced_twins: bool,
}

impl Request {
    /// A request with every default: all versions, the recipe's reference shape, the
    /// sustained regime.
    pub fn new(selection: super::selection::Selection) -> Request {
        Request {
            selection,
            baselines: false,
            seed: None,
            settings: Settings::for_regime(crate::model::runs::Regime::Sustained),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
            cases: true,
            placement: Placement::default(),
            against: None,
            traced_twins: false,
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
    pub recipe: KernelRecipe,
    pub environment: Environment,
}

/// One candidate: how to start its worker.
struct Candidate {
    id: String,
    cmd: Command,
}

/// What every phase of one run knows: the request, its recipe and versions, and the
/// shape, seed and id the run took.
struct Plan<'r> {
    req: &'r Request,
    recipe: KernelRecipe,
    versions: Vec<KernelVersion>,
    shape: Shape,
    seed: u64,
    flops: f64,
    run_id: String,
}

impl Plan<'_> {
    /// A result of this run with no measurement yet.
    fn blank(&self, id: &str, status: RunStatus) -> RunResult {
        RunResult {
            seed: Some(self.seed),
            run_id: Some(self.run_id.clone()),
            gpu_index: self.req.placement.gpu,
            ..RunResult::new(id, self.shape, status)
        }
    }
}

/// The results so far, each told to `progress` as it is finished, and the steps
/// counted.
struct Report<'p> {
    results: Vec<RunResult>,
    progress: &'p mut dyn FnMut(Progress),
    step: usize,
}

impl Report<'_> {
    fn finish(&mut self, r: RunResult) {
        (self.progress)(Progress::Finished(Box::new(r.clone())));
        self.results.push(r);
    }

    /// A step begins, of `total` steps known now.
    fn step(&mut self, id: &str, what: String, total: usize) {
        (self.progress)(Progress::Step {
            id: id.to_string(),
            what,
            index: self.step,
            total,
        });
        self.step += 1;
    }
}

/// Runs the request; `cancel` stops it between and during steps. The phases: the plan,
/// the candidates, their set-up and checks, the environment, the timed rounds, and the
/// last launch with the figures.
pub fn run(
    req: &Request,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome> {
    let plan = plan(req)?;
    let exe = stallscope_exe()?;
    let scripts = scripts_dir()?;
    let mut report = Report {
        results: Vec::new(),
        progress,
        step: 0,
    };
    let candidates = candidates(&plan, &exe, scripts.path(), &mut report);
    // Progress counts the least rounds; rounds past them add to the total as they start.
    let total = candidates.len() * (req.settings.least_rounds() as usize + 1);
    let mut live = set_up(&plan, candidates, total, cancel, &mut report)?;
    let uuid = live.iter().find_map(|w| w.ready.gpu_uuid.clone());
    let monitor = open_monitor(uuid.as_deref());
    let environment = environment(&plan.run_id, uuid, &monitor, &live);
    let timed = time_rounds(
        &plan,
        &mut live,
        monitor.as_ref().ok(),
        total,
        cancel,
        &mut report,
    )?;
    conclude(&plan, live, &timed, cancel, &mut report);
    Ok(Outcome {
        results: report.results,
        seed: plan.seed,
        shape: plan.shape,
        recipe: plan.recipe,
        environment,
    })
}

/// The request checked and its recipe read; the shape, seed and run id chosen.
fn plan(req: &Request) -> Result<Plan<'_>> {
    protocol::validate(&req.settings)?;
    let recipe = req.selection.recipe()?;
    let versions = recipe
        .select(&req.selection.versions)?
        .into_iter()
        .cloned()
        .collect();
    let shape = recipe.shape(req.selection.shape.as_ref(), &req.selection.flags)?;
    // Through a cluster launcher the GPUs are on other machines: the workers say.
    if req.placement.launcher.is_empty()
        && let Some(why) = crate::gpu::driver::unavailable()
    {
        bail!(why);
    }
    let seed = req.seed.unwrap_or_else(fresh_seed);
    let flops = shape.flops();
    Ok(Plan {
        req,
        versions,
        shape,
        seed,
        flops,
        run_id: format!("{}-{seed}", now_utc()),
        recipe,
    })
}

/// Where the baseline script goes: where a launcher's node sees it too (the cache, under a
/// home shared across a cluster), else a temporary folder.
fn scripts_dir() -> Result<tempfile::TempDir> {
    match crate::files::cache::dir() {
        Some(c) => tempfile::Builder::new()
            .prefix("baselines-")
            .tempdir_in({
                let d = c.join("scripts");
                std::fs::create_dir_all(&d).ok();
                d
            })
            .or_else(|_| tempfile::tempdir()),
        None => tempfile::tempdir(),
    }
    .context("temporary folder")
}

/// The candidates to start: the versions that support the shape (the others finish
/// as skipped), then with `--baselines` the kind's built-in baselines and its script's.
fn candidates(plan: &Plan, exe: &Path, scripts: &Path, report: &mut Report) -> Vec<Candidate> {
    let req = plan.req;
    let (shape, seed) = (plan.shape, plan.seed);
    let mut candidates = Vec::new();
    for v in &plan.versions {
        match v.unsupported(&shape) {
            Some(why) => report.finish(RunResult {
                message: Some(why),
                ..plan.blank(&v.id, RunStatus::Skipped)
            }),
            None => {
                candidates.push(Candidate {
                    id: v.id.clone(),
                    cmd: worker_command(exe, req, Mode::Run, &v.id, shape, seed),
                });
                if req.traced_twins && v.marked {
                    let mut cmd = worker_args(req, Mode::Run, &v.id, shape, seed);
                    cmd.traced = true;
                    cmd.no_cases = true;
                    candidates.push(Candidate {
                        id: traced_id(&v.id),
                        cmd: launch(exe, req, &cmd),
                    });
                }
            }
        }
    }
    if !req.baselines {
        return candidates;
    }
    for b in baselines::builtin(&plan.recipe) {
        candidates.push(Candidate {
            id: b.id.into(),
            cmd: worker_command(exe, req, Mode::Baseline, b.id, shape, seed),
        });
    }
    let scripted = baselines::scripted(&plan.recipe);
    if scripted.is_empty() {
        return candidates;
    }
    match script::write_script(&plan.recipe, scripts) {
        Ok(path) => {
            for b in scripted {
                candidates.push(Candidate {
                    id: b.id.to_string(),
                    cmd: req.placement.wrap(script::worker(&path, b.id, shape, seed)),
                });
            }
        }
        Err(e) => {
            for b in scripted {
                report.finish(RunResult {
                    message: Some(format!("{e:#}")),
                    ..plan.blank(b.id, RunStatus::Skipped)
                });
            }
        }
    }
    candidates
}

/// Set-up and checks, several workers at a time (compiling is the slow part): the
/// workers that passed, the others finished as failed or skipped.
fn set_up(
    plan: &Plan,
    candidates: Vec<Candidate>,
    total: usize,
    cancel: &AtomicBool,
    report: &mut Report,
) -> Result<Vec<Worker>> {
    let mut live = Vec::new();
    let mut queue = candidates.into_iter();
    loop {
        let batch: Vec<Candidate> = queue.by_ref().take(PARALLEL_SETUP).collect();
        if batch.is_empty() {
            break;
        }
        let mut starting = Vec::new();
        for c in batch {
            match Starting::spawn(&c.id, c.cmd) {
                Ok(s) => starting.push((c.id, s)),
                Err(e) => report.finish(failed(&plan.blank(&c.id, RunStatus::Failed), &e)),
            }
        }
        for (id, s) in starting {
            stop_if(cancel)?;
            report.step(&id, "setting up and checking".into(), total);
            match s.ready(plan.req.timeout, cancel) {
                Ok(w) => {
                    let mut r = plan.blank(&id, RunStatus::Ok);
                    if let Some(why) = judge_setup(&plan.recipe, &id, &w, &mut r) {
                        r.status = RunStatus::Failed;
                        r.message = Some(why);
                        report.finish(r);
                        w.quit();
                    } else {
                        live.push(w);
                    }
                }
                Err(e) => report.finish(failed(&plan.blank(&id, RunStatus::Failed), &e)),
            }
        }
    }
    Ok(live)
}

/// NVML for the GPU the workers reported, or why there is none.
fn open_monitor(uuid: Option<&str>) -> Result<Monitor, String> {
    match uuid.map(Monitor::open) {
        Some(Ok(m)) => Ok(m),
        Some(Err(e)) => Err(format!("{e:#}")),
        None => Err("no candidate reached the timing".to_string()),
    }
}

/// What the run records once: the GPU and driver as NVML (else the workers) name them,
/// and the first version of NVRTC and of each library that a worker reported.
fn environment(
    run_id: &str,
    uuid: Option<String>,
    monitor: &Result<Monitor, String>,
    live: &[Worker],
) -> Environment {
    let nvml = monitor
        .as_ref()
        .map(Monitor::environment)
        .unwrap_or_default();
    let reported = || live.iter().flat_map(|w| &w.ready.versions);
    let first = |name: &str| reported().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    // Every other library a worker reported, the first version of each name.
    let mut libraries = std::collections::BTreeMap::new();
    for (name, version) in reported().filter(|(n, _)| n != "nvrtc") {
        libraries
            .entry(name.clone())
            .or_insert_with(|| version.clone());
    }
    Environment {
        run_id: run_id.to_string(),
        when: Some(now_utc()),
        gpu: nvml
            .gpu
            .or_else(|| live.iter().find_map(|w| w.ready.gpu.clone())),
        gpu_uuid: uuid,
        driver: nvml.driver,
        cuda_driver: nvml
            .cuda_driver
            .or_else(crate::gpu::driver::driver_cuda_version),
        nvrtc: first("nvrtc"),
        libraries,
        max_sm_clock_mhz: nvml.max_sm_clock_mhz,
        power_limit_w: nvml.power_limit_w,
        nvml: monitor.as_ref().err().cloned(),
    }
}

/// What the rounds leave: each live candidate's windows, or why it broke off, and
/// where the stopping rule stood when they stopped.
struct Timed {
    measured: Vec<Vec<Measurement>>,
    broken: Vec<Option<String>>,
    standing: stopping::Standing,
    stop: Stop,
}

/// The rounds: every live candidate once per round, in the same order, until the
/// stopping rule says the ratios have converged (or time is up); a candidate the rule
/// calls decided sits out the rounds after (for good, so that its rounds stay paired
/// by position with the others' first ones).
fn time_rounds(
    plan: &Plan,
    live: &mut [Worker],
    monitor: Option<&Monitor>,
    total: usize,
    cancel: &AtomicBool,
    report: &mut Report,
) -> Result<Timed> {
    let settings = &plan.req.settings;
    let least = settings.least_rounds() as usize;
    let mut measured: Vec<Vec<Measurement>> = vec![Vec::new(); live.len()];
    let mut broken: Vec<Option<String>> = vec![None; live.len()];
    let mut sitting_out = vec![false; live.len()];
    let is_version = |id: &str| plan.recipe.version(id).is_some();
    let ids: Vec<String> = live.iter().map(|w| w.id.clone()).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let started = std::time::Instant::now();
    let mut round = 0;
    let mut past_least = 0;
    loop {
        let timed_now = (0..live.len())
            .filter(|&i| broken[i].is_none() && !sitting_out[i])
            .count();
        if round >= least {
            past_least += timed_now;
        }
        for (i, w) in live.iter_mut().enumerate() {
            if broken[i].is_some() || sitting_out[i] {
                continue;
            }
            stop_if(cancel)?;
            report.step(&w.id, round_label(settings, round), total + past_least);
            match window::measure(w, settings, monitor, cancel) {
                Ok(m) => measured[i].push(m),
                Err(WorkerError::Stopped(process::Stopped::Cancelled)) => bail!("stopped"),
                Err(WorkerError::Stopped(process::Stopped::Interrupted)) => bail!("interrupted"),
                Err(e) => broken[i] = Some(format!("while timing: {e}")),
            }
        }
        round += 1;
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
            against: plan.req.against.as_deref(),
        };
        let standing = stopping::check(settings, &state, round as u32, started.elapsed());
        if let Some(stop) = standing.stopped {
            return Ok(Timed {
                measured,
                broken,
                standing,
                stop,
            });
        }
        for (out, decided) in sitting_out.iter_mut().zip(&standing.decided) {
            *out |= decided;
        }
    }
}

/// What a round's step says: `round 2/5`, `round 2/5+`, `round 7 (until ±1.0 %)`.
fn round_label(s: &Settings, round: usize) -> String {
    let least = s.least_rounds() as usize;
    match s.fixed_rounds {
        Some(n) => format!("round {}/{n}", round + 1),
        None if round < least => format!("round {}/{least}+", round + 1),
        None => format!(
            "round {} (until ±{:.1} %)",
            round + 1,
            s.target_noise * 100.0
        ),
    }
}

/// The last launch of every live candidate checked, then its figures; each result
/// finished, each worker told to quit.
fn conclude(
    plan: &Plan,
    live: Vec<Worker>,
    timed: &Timed,
    cancel: &AtomicBool,
    report: &mut Report,
) {
    let ids: Vec<String> = live.iter().map(|w| w.id.clone()).collect();
    for (i, mut w) in live.into_iter().enumerate() {
        let mut r = plan.blank(&w.id, RunStatus::Ok);
        judge_setup(&plan.recipe, &w.id, &w, &mut r);
        if let Some(why) = &timed.broken[i] {
            r.status = RunStatus::Failed;
            r.message = Some(why.clone());
        } else {
            check_last(&plan.recipe, &mut w, &mut r, cancel);
            if let Ok(s) = stats::summarize(&plan.req.settings, &timed.measured[i]) {
                let st = &timed.standing;
                let convergence = st.reference.map(|reference| Convergence {
                    against: ids[reference].clone(),
                    target_pct: st.target_pct,
                    interval_pct: st.half_width_pct[i],
                    converged: st.converged(i),
                    decided: st.decided[i],
                    stopped: timed.stop,
                });
                figures(&mut r, s, plan.flops, convergence);
            }
        }
        w.quit();
        report.finish(r);
    }
}

/// Checks a worker's last launch (after the timed window) into its result.
fn check_last(recipe: &KernelRecipe, w: &mut Worker, r: &mut RunResult, cancel: &AtomicBool) {
    match w.check_last(cancel) {
        Ok(last) => {
            worst_error(r, &last);
            if let Some(why) =
                tolerances_of(recipe, &w.id).and_then(|(rel, abs)| wire::judge(&last, rel, abs))
            {
                r.status = RunStatus::Failed;
                r.message = Some(format!("the last launch (after the timed window): {why}"));
            }
        }
        Err(e) => {
            r.status = RunStatus::Failed;
            r.message = Some(format!("checking the last launch: {e}"));
        }
    }
}

/// A candidate's figures from what its rounds add up to.
fn figures(r: &mut RunResult, s: stats::Summary, flops: f64, convergence: Option<Convergence>) {
    r.median_us = Some(s.median_us);
    r.min_us = Some(s.min_us);
    r.max_us = Some(s.max_us);
    r.rounds = s.rounds;
    r.tflops = Some(flops / s.median_us / 1e6);
    r.sm_clock_mhz = s.sm_clock_mhz;
    r.power_w = s.power_w;
    r.energy_mj = s.energy_mj;
    r.throttle = s.throttle;
    r.protocol = s.protocol.map(|p| Protocol { convergence, ..p });
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
    r.kernel = ready.kernel.clone();
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

/// The id the trace build of version `id` runs under beside it (`trace` times the two).
pub fn traced_id(id: &str) -> String {
    format!("{id}~traced")
}

fn worker_command(
    exe: &Path,
    req: &Request,
    mode: Mode,
    id: &str,
    shape: Shape,
    seed: u64,
) -> Command {
    launch(exe, req, &worker_args(req, mode, id, shape, seed))
}

/// The worker's command line for a candidate, through the request's placement.
fn launch(exe: &Path, req: &Request, args: &WorkerArgs) -> Command {
    let mut cmd = Command::new(exe);
    cmd.args(args.command_line());
    req.placement.wrap(cmd)
}

fn worker_args(req: &Request, mode: Mode, id: &str, shape: Shape, seed: u64) -> WorkerArgs {
    WorkerArgs {
        mode,
        recipe: req.selection.kernels.clone(),
        version: id.to_string(),
        shape: shape.into(),
        seed,
        no_cases: !req.cases,
        traced: false,
        trace_out: None,
        trace_cap: None,
    }
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
