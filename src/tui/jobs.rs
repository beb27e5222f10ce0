//! GPU work started from the explorer: a worker thread runs or profiles versions and
//! reports by message; `apply` folds each message into the state. The event loop and the
//! GPU tests drive it the same way.

use super::state::{App, JobKind, JobRequest};
use crate::gpu;
use crate::model::{self, Ladder, LoadReport, RunResult, Store};
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::time::Duration;

/// What a worker thread tells the explorer.
pub enum Msg {
    Progress {
        current: String,
        done: usize,
        total: usize,
    },
    Result {
        ladder: String,
        result: Box<RunResult>,
    },
    Done {
        outcome: Result<String, String>,
        reloaded: Option<Ladder>,
    },
}

pub struct Job {
    pub cancel: Arc<AtomicBool>,
    pub handle: std::thread::JoinHandle<()>,
}

/// Folds a worker's message into the state; true when the job has ended.
pub fn apply(app: &mut App, msg: Msg) -> bool {
    match msg {
        Msg::Progress {
            current,
            done,
            total,
        } => {
            app.job_progress(current, done, total);
            false
        }
        Msg::Result { ladder, result } => {
            app.job_result(&ladder, *result);
            false
        }
        Msg::Done { outcome, reloaded } => {
            app.job_done(outcome, reloaded);
            true
        }
    }
}

/// The kernel ladder that feeds a profiles ladder: `kernels/*/ladder.toml` naming it.
fn kernels_for(ladder: &str) -> Option<PathBuf> {
    let dirs = std::fs::read_dir("kernels").ok()?;
    dirs.filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(gpu::recipe::FILE_NAME).is_file())
        .find(|p| {
            gpu::load_kernels(p)
                .map(|k| k.ladder == ladder)
                .unwrap_or(false)
        })
}

/// Starts a job on a worker thread.
pub fn start(app: &App, req: JobRequest, tx: Sender<Msg>) -> Job {
    let cancel = Arc::new(AtomicBool::new(false));
    let ls = app
        .ladders
        .iter()
        .find(|l| l.ladder.name == req.ladder)
        .map(|l| &l.ladder);
    let target = ls.and_then(|l| match (&l.store, &l.dir) {
        (Store::Disk, Some(dir)) => Some(dir.clone()),
        _ => None,
    });
    let flag = cancel.clone();
    let handle = std::thread::spawn(move || {
        let outcome = match target {
            None => Err(anyhow!(
                "the built-in profiles are read-only: start stallscope in the repository (or with --profiles DIR) to run kernels"
            )),
            Some(dir) => run_job(&req, &dir, &flag, &tx),
        };
        let reloaded = outcome.as_ref().ok().and_then(|(_, dir)| {
            model::load_ladder(&Store::Disk, dir, &mut LoadReport::keep_going()).ok()
        });
        let _ = tx.send(Msg::Done {
            outcome: outcome.map(|(m, _)| m).map_err(|e| format!("{e:#}")),
            reloaded,
        });
    });
    Job { cancel, handle }
}

fn run_job(
    req: &JobRequest,
    ladder_dir: &Path,
    cancel: &Arc<AtomicBool>,
    tx: &Sender<Msg>,
) -> Result<(String, PathBuf)> {
    let kernels = kernels_for(&req.ladder)
        .ok_or_else(|| anyhow!("no kernel ladder under ./kernels builds {}", req.ladder))?;
    let profiles = ladder_dir.parent().unwrap_or(Path::new(".")).to_path_buf();
    match req.kind {
        JobKind::Run => {
            let r = gpu::runner::Request {
                kernels: &kernels,
                versions: &req.versions,
                shape: None,
                causal: false,
                baselines: req.versions.iter().any(|v| v == "all"),
                seed: None,
                reps: 15,
                timeout: Duration::from_secs(180),
            };
            let out = gpu::runner::run(&r, cancel, &mut |p| {
                let _ = match p {
                    gpu::runner::Progress::Started { id, index, total } => tx.send(Msg::Progress {
                        current: id,
                        done: index,
                        total,
                    }),
                    gpu::runner::Progress::Finished(result) => tx.send(Msg::Result {
                        ladder: req.ladder.clone(),
                        result,
                    }),
                };
            })?;
            gpu::runner::save(&profiles, &out.ladder, &out.results)?;
            let failed = out
                .results
                .iter()
                .filter(|r| r.status == model::RunStatus::Failed)
                .count();
            Ok((
                format!(
                    "ran {} version(s), {failed} failed; seed {}",
                    out.results.len(),
                    out.seed
                ),
                ladder_dir.to_path_buf(),
            ))
        }
        JobKind::Profile => {
            let p = gpu::profile::Request {
                kernels: &kernels,
                versions: &req.versions,
                shape: None,
                causal: false,
                profiles: &profiles,
                set: "full",
                timeout: Duration::from_secs(600),
            };
            let done = gpu::profile::run(&p, cancel, &mut |id, i, n| {
                let _ = tx.send(Msg::Progress {
                    current: id.to_string(),
                    done: i,
                    total: n,
                });
            })?;
            let failed: Vec<String> = done
                .iter()
                .filter_map(|d| d.outcome.as_ref().err().map(|e| format!("{}: {e:#}", d.id)))
                .collect();
            if failed.is_empty() {
                Ok((
                    format!("profiled {} version(s)", done.len()),
                    ladder_dir.to_path_buf(),
                ))
            } else {
                Err(anyhow!(failed.join("; ")))
            }
        }
    }
}
