//! The worker process (hidden subcommand `__worker`): it holds one candidate, a ladder
//! version or a built-in baseline of its kind, checks it, and then replays and times it as
//! the runner asks ([`crate::gpu::wire`]); a fault or a hang ends only the worker.
//! In profile mode it launches the version three times for ncu and exits.

pub mod baselines;
pub mod candidate;
pub mod device;
pub mod problem;
pub mod trace;

use self::candidate::Candidate;
use self::device::{Device, Graph};
use self::problem::{Prepared, Problem};
use crate::files::limits::SizeLimits;
use crate::gpu::wire::{Command, ErrorStats, Hello, Mode, Ready, Reply, WorkerArgs, judge};
use crate::kinds::{Case, Shape};
use crate::model::RunStatus;
use crate::model::runs::CaseCheck;
use crate::recipe::{KernelRecipe, KernelVersion};
use anyhow::{Context, Result};
use std::io::BufRead;

struct Version<'d> {
    problem: Problem<'d>,
    prepared: Prepared,
    /// The trace build's buffer, where it is the trace build that runs.
    _trace: Option<trace::TraceBuffer>,
}

impl Candidate for Version<'_> {
    fn launch(&mut self) -> Result<()> {
        self.problem.run(&mut self.prepared)
    }
    fn poison(&self) -> Result<()> {
        self.problem.poison()
    }
    fn check_current(&self) -> Result<ErrorStats> {
        self.problem.check_current()
    }
}

/// Runs the worker; its conversation is on stdin and stdout. The recipe is read within
/// `limits` (the worker's own command line resolves them, as every command's).
pub fn main(args: &WorkerArgs, limits: SizeLimits) -> Result<()> {
    let recipe = crate::recipe::folders::load_recipe(&args.recipe, limits)?;
    let shape = args
        .shape
        .resolve(recipe.kind)
        .map_err(|e| anyhow::anyhow!("--shape: {e}"))?;
    if args.mode == Mode::Profile {
        return profile(&recipe, args, shape);
    }
    let failed = |e: anyhow::Error| {
        say(&Hello::Failed {
            message: format!("{e:#}"),
            skipped: false,
        })
    };
    let dev = match Device::open() {
        Ok(d) => d,
        Err(e) => return failed(e),
    };
    let mut ready = Ready {
        gpu: Some(dev.name.clone()),
        gpu_uuid: Some(dev.uuid.clone()),
        versions: vec![(
            "nvrtc".into(),
            format!("{}.{}", dev.compiler.version().0, dev.compiler.version().1),
        )],
        ..Ready::default()
    };
    let problem = match Problem::new(&dev, shape, args.seed)
        .and_then(|mut p| p.compute_reference(&recipe).map(|_| p))
    {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    match args.mode {
        Mode::Run => {
            let v = match recipe
                .version(&args.version)
                .with_context(|| format!("no version {}", args.version))
            {
                Ok(v) => v,
                Err(e) => return failed(e),
            };
            // The trace build is timed against the plain one, which was checked on the
            // cases; its own first and last launches are checked still.
            if !args.no_cases && !args.traced {
                match check_cases(&dev, &recipe, v, &shape, args.seed) {
                    Ok(c) => ready.checks = c,
                    Err(e) => return failed(e),
                }
                // A fault leaves the context unusable: the timed shape cannot run.
                if let Some(m) = ready
                    .checks
                    .iter()
                    .filter_map(|c| c.message.as_deref())
                    .find(|m| m.contains("CUDA_ERROR"))
                {
                    return failed(anyhow::anyhow!("{m}"));
                }
            }
            let built = if args.traced {
                let cap = args.trace_cap.unwrap_or(trace::DEFAULT_CAP);
                trace::prepare(&problem, &recipe, v, cap).map(|(p, b)| (p, Some(b)))
            } else {
                problem.prepare(&recipe, v).map(|p| (p, None))
            };
            let (prepared, trace) = match built {
                Ok(b) => b,
                Err(e) => return failed(e),
            };
            ready.resources = prepared.kernel.resources.clone();
            ready.kernel = prepared.path().map(str::to_string);
            let mut c = Version {
                problem,
                prepared,
                _trace: trace,
            };
            serve(&dev, &mut c, ready)
        }
        Mode::Baseline => {
            let mut baseline = match baselines::start(&args.version, &problem, &recipe) {
                Ok(b) => b,
                Err(e) => return failed(e),
            };
            serve(&dev, baseline.as_mut(), ready)
        }
        Mode::Trace => {
            let traced = recipe
                .version(&args.version)
                .with_context(|| format!("no version {}", args.version))
                .and_then(|v| {
                    let out = args
                        .trace_out
                        .as_deref()
                        .context("--mode trace needs --trace-out")?;
                    let cap = args.trace_cap.unwrap_or(trace::DEFAULT_CAP);
                    let t = trace::capture(&problem, &recipe, v, cap, out)?;
                    let (rel, abs) = v.tolerances(&recipe);
                    match t.error.as_ref().and_then(|e| judge(e, rel, abs)) {
                        Some(why) => anyhow::bail!(
                            "the trace build computes a wrong result, so its trace is refused: {why}"
                        ),
                        None => Ok(t),
                    }
                });
            match traced {
                Ok(t) => say(&Hello::Traced(t)),
                Err(e) => failed(e),
            }
        }
        Mode::Profile => unreachable!("handled above"),
    }
}

fn say<T: serde::Serialize>(msg: &T) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, msg)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

/// Checks the first launch, says hello, then answers commands until told to quit.
fn serve(dev: &Device, c: &mut dyn Candidate, mut ready: Ready) -> Result<()> {
    let first = c
        .poison()
        .and_then(|_| c.launch())
        .and_then(|_| c.check_current());
    match first {
        Ok(e) => ready.first = Some(e),
        Err(e) => {
            return say(&Hello::Failed {
                message: format!("the first launch: {e:#}"),
                skipped: false,
            });
        }
    }
    say(&Hello::Ready(ready))?;
    let mut graph: Option<Graph> = None;
    for line in std::io::stdin().lock().lines() {
        let line = line.context("reading the runner's command")?;
        let cmd: Command = match serde_json::from_str(&line) {
            Ok(c) => c,
            Err(e) => {
                say(&Reply::Error {
                    message: format!("not a command ({e}): {line}"),
                })?;
                continue;
            }
        };
        let reply = match cmd {
            Command::Quit => return Ok(()),
            Command::Calibrate { rep_ms } => calibrate(dev, c, rep_ms).map(|(g, launches, ms)| {
                graph = Some(g);
                Reply::Calibrated {
                    launches,
                    launch_ms: ms,
                }
            }),
            Command::Reps { count } => match &graph {
                None => Ok(Reply::Error {
                    message: "reps before calibrate".into(),
                }),
                Some(g) => dev
                    .time_each(count as usize, || g.launch())
                    .map(|ms| Reply::Times { ms }),
            },
            Command::CheckLast => match &graph {
                None => Ok(Reply::Error {
                    message: "check_last before calibrate".into(),
                }),
                Some(g) => c
                    .poison()
                    .and_then(|_| g.launch())
                    .and_then(|_| c.check_current())
                    .map(|error| Reply::Checked { error }),
            },
        };
        match reply {
            Ok(r) => say(&r)?,
            Err(e) => {
                // A fault leaves the context unusable: say why and end.
                say(&Reply::Error {
                    message: format!("{e:#}"),
                })?;
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Most launches one graph holds.
const MAX_LAUNCHES: u32 = 10_000;

/// Launches of one graph that last about `rep_ms` at `launch_ms` each.
fn launches_for(rep_ms: f64, launch_ms: f64) -> u32 {
    ((rep_ms / launch_ms.max(1e-6)).ceil() as u32).clamp(1, MAX_LAUNCHES)
}

/// Captures enough launches to last `rep_ms` into a graph. A first guess comes from
/// one launch timed after three warm-up launches; since a lone launch carries its
/// launch overhead (a short kernel's graph then lasts half the target or less), the
/// graph is timed in turn and captured again from its own per-launch time when the
/// guess was off by more than a fifth. The graph's time is the fastest of three
/// replays: from an idle GPU the first ones run before the clock has risen, and a graph
/// sized from them comes out short at full clock. Returns the graph, its launches and
/// that per-launch time.
fn calibrate(dev: &Device, c: &mut dyn Candidate, rep_ms: f64) -> Result<(Graph, u32, f64)> {
    for _ in 0..3 {
        c.launch()?;
    }
    dev.sync()?;
    // Per-launch time of a graph of `n` launches: the fastest of three replays.
    let per_launch = |graph: &Graph, n: u32| -> Result<f64> {
        graph.launch()?;
        dev.sync()?;
        let mut fastest = f64::INFINITY;
        for _ in 0..3 {
            fastest = fastest.min(dev.time_ms(|| graph.launch())?);
        }
        Ok(fastest / n as f64)
    };
    let guess = launches_for(rep_ms, dev.time_ms(|| c.launch())?);
    let graph = dev.capture(guess, || c.launch())?;
    let per = per_launch(&graph, guess)?;
    let n = launches_for(rep_ms, per);
    if (n as f64 / guess as f64 - 1.0).abs() <= 0.2 {
        return Ok((graph, guess, per));
    }
    drop(graph);
    let graph = dev.capture(n, || c.launch())?;
    let per = per_launch(&graph, n)?;
    Ok((graph, n, per))
}

/// Checks a version on every case it supports: the first launch and the fourth, each
/// with the output poisoned before it.
fn check_cases(
    dev: &Device,
    recipe: &KernelRecipe,
    v: &KernelVersion,
    timed: &Shape,
    seed: u64,
) -> Result<Vec<CaseCheck>> {
    let mut out = Vec::new();
    for case in timed.kind().cases(timed) {
        let mut check = CaseCheck {
            case: case.name.to_string(),
            shape: case.shape,
            status: RunStatus::Ok,
            rel_l2_err: None,
            max_abs_err: None,
            message: None,
        };
        if let Some(why) = v.unsupported(&case.shape) {
            check.status = RunStatus::Skipped;
            check.message = Some(why);
            out.push(check);
            continue;
        }
        match check_case(dev, recipe, v, &case, seed) {
            Ok((first, later)) => {
                let worst = first.worst(later);
                check.rel_l2_err = Some(worst.rel_l2);
                check.max_abs_err = Some(worst.max_abs);
                let (rel, abs) = v.tolerances(recipe);
                let why = judge(&first, rel, abs)
                    .map(|w| format!("the first launch: {w}"))
                    .or_else(|| judge(&later, rel, abs).map(|w| format!("the fourth launch: {w}")));
                if let Some(w) = why {
                    check.status = RunStatus::Failed;
                    check.message = Some(format!(
                        "case {} ({}): {w} (this case tests {})",
                        case.name, case.shape, case.catches
                    ));
                }
            }
            Err(e) => {
                check.status = RunStatus::Failed;
                check.message = Some(format!("case {} ({}): {e:#}", case.name, case.shape));
                out.push(check);
                // A fault leaves the context unusable: no further case can run.
                if format!("{e:#}").contains("CUDA_ERROR") {
                    break;
                }
                continue;
            }
        }
        out.push(check);
    }
    Ok(out)
}

fn check_case(
    dev: &Device,
    recipe: &KernelRecipe,
    v: &KernelVersion,
    case: &Case,
    seed: u64,
) -> Result<(ErrorStats, ErrorStats)> {
    let case_seed = crate::seeded::case_seed(seed, case.name);
    let mut p = Problem::with_inputs(dev, case.shape, case_seed, case.inputs)?;
    p.compute_reference(recipe)?;
    let mut prepared = p.prepare(recipe, v)?;
    let first = p.check(&mut prepared)?;
    p.run(&mut prepared)?;
    p.run(&mut prepared)?;
    let later = p.check(&mut prepared)?;
    Ok((first, later))
}

fn profile(recipe: &KernelRecipe, args: &WorkerArgs, shape: Shape) -> Result<()> {
    let v = recipe
        .version(&args.version)
        .with_context(|| format!("no version {}", args.version))?;
    let dev = Device::open()?;
    let problem = Problem::new(&dev, shape, args.seed)?;
    let mut prepared = problem.prepare(recipe, v)?;
    // Two warm-up launches (skipped by ncu), then the profiled one.
    for _ in 0..3 {
        problem.run(&mut prepared)?;
    }
    dev.sync()
}
