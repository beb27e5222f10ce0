//! GPU work started from the explorer: a worker thread runs or profiles versions and
//! reports by [`JobEvent`]s, which the event loop hands to `App::update` like any other
//! message. The event loop and the GPU tests drive it the same way.

use super::state::{App, JobEvent, JobKind, JobRequest};
use crate::files::limits::SizeLimits;
use crate::gpu::host::selection::Selection;
use crate::gpu::{host::profile, host::runner};
use crate::model::{self, LoadReport, import};
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;

pub struct Job {
    pub cancel: Arc<AtomicBool>,
    pub handle: std::thread::JoinHandle<()>,
}

/// Starts a job on a worker thread.
pub fn start(app: &App, req: JobRequest, tx: Sender<JobEvent>) -> Job {
    let cancel = Arc::new(AtomicBool::new(false));
    let ls = app
        .ladders
        .iter()
        .find(|l| l.ladder.name == req.ladder)
        .map(|l| &l.ladder);
    // The job reads and writes the ladder's files within the limits it was read with.
    let target = ls.and_then(|l| match (&l.store, &l.dir) {
        (store, Some(dir)) if store.is_disk() => Some((store.clone(), dir.clone())),
        _ => None,
    });
    let kernels = app.kernels.clone();
    let flag = cancel.clone();
    let handle = std::thread::spawn(move || {
        let outcome = match target {
            None => Err(anyhow!(
                "the built-in profiles are read-only: start stallscope in the repository (or with --profiles DIR) to run kernels"
            )),
            Some((store, dir)) => run_job(&req, &kernels, &dir, store.limits, &flag, &tx)
                .map(|(said, dir)| (said, dir, store)),
        };
        let reloaded = outcome.as_ref().ok().and_then(|(_, dir, store)| {
            model::load_ladder(store, dir, &mut LoadReport::keep_going()).ok()
        });
        let _ = tx.send(JobEvent::Done {
            outcome: outcome.map(|(m, _, _)| m).map_err(|e| format!("{e:#}")),
            reloaded: reloaded.map(Box::new),
        });
    });
    Job { cancel, handle }
}

fn run_job(
    req: &JobRequest,
    kernels: &Path,
    ladder_dir: &Path,
    limits: SizeLimits,
    cancel: &AtomicBool,
    tx: &Sender<JobEvent>,
) -> Result<(String, PathBuf)> {
    let profiles = ladder_dir.parent().unwrap_or(Path::new(".")).to_path_buf();
    if let (JobKind::Profile, Some(cmd), [version]) =
        (req.kind, &req.command, req.versions.as_slice())
    {
        let done = profile_own_command(req, cmd, version, &profiles, limits, cancel, tx)?;
        return Ok((done, ladder_dir.to_path_buf()));
    }
    let recipe_dir = crate::recipe::folders::find_recipe_advised(
        kernels,
        Some(&req.ladder),
        crate::recipe::folders::EXPLORER_RECIPE_ADVICE,
        limits,
    )?;
    let done = match req.kind {
        JobKind::Run => run_versions(req, recipe_dir, ladder_dir, limits, cancel, tx)?,
        JobKind::Profile => profile_versions(req, recipe_dir, &profiles, limits, cancel, tx)?,
    };
    Ok((done, ladder_dir.to_path_buf()))
}

/// A version of the user's own program: its stored command profiled again.
fn profile_own_command(
    req: &JobRequest,
    cmd: &crate::model::manifest::ProfileCommand,
    version: &str,
    profiles: &Path,
    limits: SizeLimits,
    cancel: &AtomicBool,
    tx: &Sender<JobEvent>,
) -> Result<String> {
    let c = profile::CommandRequest {
        target: crate::nsight::Target::from_stored(cmd),
        timeout: std::time::Duration::from_secs(profile::DEFAULT_TIMEOUT_S),
        placement: Default::default(),
    };
    let exports = profile::profile_command(&c, cancel, &mut |s| {
        let _ = tx.send(JobEvent::Progress {
            current: s.to_string(),
            done: 0,
            total: 1,
        });
    })?;
    let done = import::import_command_profile(
        &import::Request::profiled(
            profiles,
            Some(&req.ladder),
            version,
            &exports.files,
            true,
            limits,
        ),
        cmd,
    )?;
    Ok(done.to_string())
}

/// The recipe's versions run, each result sent as it comes, and stored.
fn run_versions(
    req: &JobRequest,
    recipe_dir: PathBuf,
    ladder_dir: &Path,
    limits: SizeLimits,
    cancel: &AtomicBool,
    tx: &Sender<JobEvent>,
) -> Result<String> {
    let r = runner::Request {
        baselines: req.versions.iter().any(|v| v == "all"),
        ..runner::Request::new(Selection {
            versions: req.versions.clone(),
            ..Selection::new(recipe_dir, limits)
        })
    };
    let out = runner::run(&r, cancel, &mut |p| {
        let _ = match p {
            runner::Progress::Step {
                id,
                what,
                index,
                total,
            } => tx.send(JobEvent::Progress {
                current: format!("{id}: {what}"),
                done: index,
                total,
            }),
            runner::Progress::Finished(result) => tx.send(JobEvent::Result {
                ladder: req.ladder.clone(),
                result,
            }),
        };
    })?;
    crate::store_jobs::store_run(ladder_dir, &out, limits)?;
    Ok(ran_message(&out))
}

/// The recipe's versions profiled with ncu and imported; an error naming each version
/// that failed.
fn profile_versions(
    req: &JobRequest,
    recipe_dir: PathBuf,
    profiles: &Path,
    limits: SizeLimits,
    cancel: &AtomicBool,
    tx: &Sender<JobEvent>,
) -> Result<String> {
    let p = profile::Request::new(Selection {
        versions: req.versions.clone(),
        ..Selection::new(recipe_dir, limits)
    });
    let done = profile::run(
        &p,
        cancel,
        &|_, id, i, n| {
            let _ = tx.send(JobEvent::Progress {
                current: id.to_string(),
                done: i,
                total: n,
            });
        },
        &|recipe, v, shape, files| {
            crate::store_jobs::store_recipe_profile(profiles, recipe, v, shape, files, limits)
        },
    )?;
    let failed: Vec<String> = done
        .iter()
        .filter_map(|d| d.outcome.as_ref().err().map(|e| format!("{}: {e:#}", d.id)))
        .collect();
    if failed.is_empty() {
        Ok(format!("profiled {} version(s)", done.len()))
    } else {
        Err(anyhow!(failed.join("; ")))
    }
}

/// What the explorer's status line says of a finished run: the failures counted by the
/// rule `stallscope run` ends non-zero on ([`crate::store_jobs::failed_versions`]).
pub(crate) fn ran_message(out: &runner::Outcome) -> String {
    let failed = crate::store_jobs::failed_versions(&out.recipe, &out.results).len();
    format!(
        "ran {} version(s), {failed} failed; seed {}",
        out.results.len(),
        out.seed
    )
}
