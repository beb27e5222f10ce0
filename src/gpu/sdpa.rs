//! PyTorch SDPA's cuDNN, flash and memory-efficient backends as baselines in the same
//! run, through the script shipped beside the kernels (`baselines/sdpa.py`). Where
//! python3 or torch is missing they are skipped with a note.

use super::recipe::KernelLadder;
use crate::model::{RunResult, RunStatus, Shape};
use anyhow::{Context, Result};
use serde::Deserialize;
use std::process::Command;

/// The ids the backends get, as the profiles ladder names them.
pub const BACKENDS: &[&str] = &["cudnn", "fa2", "mem-efficient"];

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    gpu: Option<String>,
    #[serde(default)]
    results: Vec<Backend>,
}

#[derive(Deserialize)]
struct Backend {
    backend: String,
    #[serde(default)]
    skipped: Option<String>,
    median_us: Option<f64>,
    min_us: Option<f64>,
    max_us: Option<f64>,
    rel_l2_err: Option<f64>,
    max_abs_err: Option<f64>,
}

pub fn run(
    ladder: &KernelLadder,
    shape: Shape,
    causal: bool,
    reps: usize,
    seed: u64,
) -> Vec<RunResult> {
    let skipped = |why: String| -> Vec<RunResult> {
        BACKENDS
            .iter()
            .map(|b| result(b, shape, causal, RunStatus::Skipped, Some(why.clone())))
            .collect()
    };
    match try_run(ladder, shape, causal, reps, seed) {
        Ok(out) => {
            if let Some(e) = out.error {
                return skipped(e);
            }
            let flops = ladder.flops_for(&shape, causal).unwrap_or(0.0);
            out.results
                .into_iter()
                .map(|b| {
                    let mut r = result(&b.backend, shape, causal, RunStatus::Ok, None);
                    r.gpu = out.gpu.clone();
                    if let Some(why) = b.skipped {
                        r.status = RunStatus::Skipped;
                        r.message = Some(why);
                        return r;
                    }
                    r.median_us = b.median_us;
                    r.min_us = b.min_us;
                    r.max_us = b.max_us;
                    r.rel_l2_err = b.rel_l2_err;
                    r.max_abs_err = b.max_abs_err;
                    r.tflops = b.median_us.map(|us| flops / us / 1e6);
                    if b.rel_l2_err.is_some_and(|e| e > ladder.tolerance) {
                        r.status = RunStatus::Failed;
                        r.message = Some("wrong result against the fp32 math backend".into());
                    }
                    r
                })
                .collect()
        }
        Err(e) => skipped(format!("{e:#}")),
    }
}

fn try_run(
    ladder: &KernelLadder,
    shape: Shape,
    causal: bool,
    reps: usize,
    seed: u64,
) -> Result<Output> {
    let script = ladder.read(&ladder.sdpa_script)?;
    let dir = tempfile::tempdir().context("temporary folder")?;
    let path = dir.path().join("sdpa.py");
    std::fs::write(&path, script)?;
    let mut cmd = Command::new("python3");
    cmd.arg(&path)
        .args(["--shape", &shape.to_string(), "--reps", &reps.to_string()])
        .args(["--seed", &seed.to_string()]);
    if causal {
        cmd.arg("--causal");
    }
    let out = cmd
        .output()
        .context("python3 could not be started (PyTorch baselines need python3 with torch)")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'));
    match last {
        Some(line) => serde_json::from_str(line).context("the SDPA script's output"),
        None => {
            let err = String::from_utf8_lossy(&out.stderr);
            let tail = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            anyhow::bail!("the SDPA script failed: {tail}")
        }
    }
}

fn result(
    id: &str,
    shape: Shape,
    causal: bool,
    status: RunStatus,
    message: Option<String>,
) -> RunResult {
    RunResult {
        message,
        ..RunResult::new(id, shape, causal, status)
    }
}
