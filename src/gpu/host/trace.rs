//! `stallscope trace`, the GPU side: each marked version's trace build launched once
//! after a warm-up in a worker of its own (`--mode trace`), checked there, its buffer
//! read back. What the buffer holds is the model's to decode (`model::trace`); what
//! tracing costs is timed by the runner, the trace build beside the plain one
//! (`Request::traced_twins`).

use super::client::{Starting, WorkerError};
use super::placement::Placement;
use crate::gpu::wire::{Mode, Traced, WorkerArgs};
use crate::kinds::Shape;
use crate::model::trace::{Clocks, Overhead, SCHEMA, Trace, decode};
use crate::recipe::KernelVersion;
use anyhow::{Context, Result, anyhow, bail};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Seconds one version's trace may take (its reference, compile, warm-up, launch).
pub const DEFAULT_TIMEOUT_S: u64 = 300;

#[derive(Debug, Clone)]
pub struct Request {
    /// Which recipe, versions and shape.
    pub selection: super::selection::Selection,
    /// Marks a lane holds [default: the worker's].
    pub cap: Option<u32>,
    pub seed: u64,
    pub timeout: Duration,
    pub placement: Placement,
}

/// One version's trace as the worker left it: the buffer's words and what it said.
pub struct Captured {
    pub version: KernelVersion,
    pub shape: Shape,
    pub words: Vec<u64>,
    pub info: Traced,
}

/// The marked versions the request names (`all` or none: every marked one), or why
/// one of them cannot be traced.
pub fn marked_versions(
    recipe: &crate::recipe::KernelRecipe,
    ids: &[String],
) -> Result<Vec<KernelVersion>> {
    let all = ids.is_empty() || ids.iter().any(|i| i == "all");
    let picked: Vec<KernelVersion> = recipe
        .select(ids)?
        .into_iter()
        .filter(|v| !all || v.marked)
        .cloned()
        .collect();
    if let Some(why) = picked.iter().find_map(|v| v.untraceable()) {
        bail!(why);
    }
    if picked.is_empty() {
        bail!(
            "no version of {} has pipeline markers (marked = true in its recipe)",
            recipe.ladder
        );
    }
    Ok(picked)
}

/// Takes the trace of each version, one worker at a time.
pub fn capture(
    req: &Request,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<Captured>> {
    let recipe = req.selection.recipe()?;
    let versions = marked_versions(&recipe, &req.selection.versions)?;
    let shape = recipe.shape(req.selection.shape.as_ref(), &req.selection.flags)?;
    if req.placement.launcher.is_empty()
        && let Some(why) = crate::gpu::driver::unavailable()
    {
        bail!(why);
    }
    if let Some(v) = versions.iter().find(|v| v.unsupported(&shape).is_some()) {
        bail!(
            "version {} cannot run {shape}: {}",
            v.id,
            v.unsupported(&shape).unwrap_or_default()
        );
    }
    let exe = super::runner::stallscope_exe()?;
    let work = tempfile::tempdir().context("temporary folder")?;
    let mut out = Vec::new();
    for v in versions {
        progress(&v.id);
        let file = work.path().join(format!("{}.trace", v.id));
        let args = WorkerArgs {
            mode: Mode::Trace,
            recipe: req.selection.kernels.clone(),
            version: v.id.clone(),
            shape: shape.into(),
            seed: req.seed,
            no_cases: true,
            traced: true,
            trace_out: Some(file.clone()),
            trace_cap: req.cap,
        };
        let mut cmd = std::process::Command::new(&exe);
        cmd.args(args.command_line());
        let info = Starting::spawn(&v.id, req.placement.wrap(cmd))
            .and_then(|s| s.traced(req.timeout, cancel))
            .map_err(|e: WorkerError| anyhow!("version {}: {e}", v.id))?;
        let bytes = std::fs::read(&file)
            .with_context(|| format!("version {}: the worker wrote no trace buffer", v.id))?;
        let words = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        out.push(Captured {
            version: v,
            shape,
            words,
            info,
        });
    }
    Ok(out)
}

/// A captured buffer decoded into the trace stored beside the version's profiles: its
/// blocks timed by the trace build's measured SM clock where known, and what tracing
/// cost where it was timed.
pub fn decoded(
    c: &Captured,
    sm_clock_mhz: Option<f64>,
    overhead: Option<Overhead>,
) -> Result<Trace> {
    let id = &c.version.id;
    let timeline = decode(
        &c.words,
        c.info.blocks,
        c.info.cap,
        &c.version.trace_roles,
        &c.version.trace_stages,
        Clocks {
            timer_resolution_ns: c.info.timer_resolution_ns,
            sm_clock_mhz,
        },
    )
    .with_context(|| format!("version {id}: its trace buffer"))?;
    Ok(Trace {
        schema: SCHEMA.to_string(),
        version: id.clone(),
        shape: c.shape,
        gpu: c.info.gpu.clone(),
        when: Some(crate::model::runs::now_utc()),
        timer_resolution_ns: c.info.timer_resolution_ns,
        overhead,
        timeline,
    })
}
