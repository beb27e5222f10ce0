//! The child process that runs one version (hidden subcommand `__child`). It prints one
//! JSON line, the version's [`RunResult`], on stdout; a fault or a hang kills only it.

use super::attention::{Problem, measure};
use super::device::Device;
use super::recipe::KernelLadder;
use super::unfused::Unfused;
use crate::model::{RunResult, RunStatus, Shape};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Id of the built-in unfused cuBLAS baseline.
pub const UNFUSED: &str = "unfused";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Check and time one version.
    Run,
    /// Check and time the unfused cuBLAS baseline.
    Unfused,
    /// Launch one version after two warm-up launches, for ncu.
    Profile,
}

#[derive(Debug, Clone, clap::Args)]
pub struct ChildArgs {
    #[arg(long, value_enum)]
    pub mode: Mode,
    #[arg(long)]
    pub kernels: PathBuf,
    #[arg(long)]
    pub version: String,
    #[arg(long)]
    pub shape: Shape,
    #[arg(long)]
    pub causal: bool,
    #[arg(long)]
    pub seed: u64,
    #[arg(long, default_value_t = 15)]
    pub reps: usize,
}

/// Runs the child's work; for run modes, prints the result line.
pub fn main(args: &ChildArgs) -> Result<()> {
    let ladder = super::load_kernels(&args.kernels)?;
    match args.mode {
        Mode::Profile => profile(&ladder, args),
        Mode::Run | Mode::Unfused => {
            let mut result = blank(args);
            let outcome = if args.mode == Mode::Run {
                run_version(&ladder, args, &mut result)
            } else {
                run_unfused(&ladder, args, &mut result)
            };
            if let Err(e) = outcome {
                result.status = RunStatus::Failed;
                result.message = Some(format!("{e:#}"));
            }
            println!("{}", serde_json::to_string(&result)?);
            Ok(())
        }
    }
}

fn blank(args: &ChildArgs) -> RunResult {
    RunResult {
        seed: Some(args.seed),
        ..RunResult::new(&args.version, args.shape, args.causal, RunStatus::Failed)
    }
}

fn run_version(ladder: &KernelLadder, args: &ChildArgs, r: &mut RunResult) -> Result<()> {
    let v = ladder
        .version(&args.version)
        .with_context(|| format!("no version {}", args.version))?;
    let dev = Device::open()?;
    r.gpu = Some(dev.name.clone());
    let mut problem = Problem::new(&dev, args.shape, args.causal, args.seed)?;
    problem.compute_reference(ladder)?;
    let mut prepared = problem.prepare(ladder, v)?;
    r.resources = prepared.kernel.resources.clone();
    let err = problem.check(&mut prepared)?;
    record_error(r, &err, v.tolerance.unwrap_or(ladder.tolerance));
    let t = measure(&dev, args.reps, || problem.run(&mut prepared))?;
    record_timing(r, t, ladder.flops_for(&args.shape, args.causal)?);
    Ok(())
}

fn run_unfused(ladder: &KernelLadder, args: &ChildArgs, r: &mut RunResult) -> Result<()> {
    let dev = Device::open()?;
    r.gpu = Some(dev.name.clone());
    let mut problem = Problem::new(&dev, args.shape, args.causal, args.seed)?;
    problem.compute_reference(ladder)?;
    let unfused = Unfused::new(&problem, ladder)?;
    let err = unfused.check()?;
    record_error(r, &err, ladder.tolerance);
    let t = measure(&dev, args.reps, || unfused.run())?;
    record_timing(r, t, ladder.flops_for(&args.shape, args.causal)?);
    Ok(())
}

fn record_error(r: &mut RunResult, e: &super::check::ErrorStats, tolerance: f64) {
    r.max_abs_err = Some(e.max_abs);
    r.rel_l2_err = Some(e.rel_l2);
    r.status = if e.non_finite == 0 && e.rel_l2 <= tolerance {
        RunStatus::Ok
    } else {
        RunStatus::Failed
    };
    if e.non_finite > 0 {
        r.message = Some(format!(
            "{} output elements are NaN or were never written",
            e.non_finite
        ));
    } else if e.rel_l2 > tolerance {
        r.message = Some(format!(
            "wrong result: relative error {:.2e} exceeds the tolerance {tolerance:.0e}",
            e.rel_l2
        ));
    }
}

fn record_timing(r: &mut RunResult, t: super::attention::Timing, flops: f64) {
    r.median_us = Some(t.median_us);
    r.min_us = Some(t.min_us);
    r.max_us = Some(t.max_us);
    r.tflops = Some(flops / t.median_us / 1e6);
}

fn profile(ladder: &KernelLadder, args: &ChildArgs) -> Result<()> {
    let v = ladder
        .version(&args.version)
        .with_context(|| format!("no version {}", args.version))?;
    let dev = Device::open()?;
    let problem = Problem::new(&dev, args.shape, args.causal, args.seed)?;
    let mut prepared = problem.prepare(ladder, v)?;
    // Two warm-up launches (skipped by ncu), then the profiled one.
    for _ in 0..3 {
        problem.run(&mut prepared)?;
    }
    dev.sync()
}
