//! `stallscope run`: every selected version in its own child process (a timeout ends a
//! hung one), the baselines in the same run, a table of the results, and the results
//! stored in the profiles ladder.

use super::child::{Mode, UNFUSED};
use super::recipe::{KernelLadder, KernelVersion};
use crate::import::write_atomically;
use crate::model::manifest::{self, Manifest, VersionEntry};
use crate::model::runs::{self, RunFile};
use crate::model::{RunResult, RunStatus, Shape};
use crate::report::format;
use anyhow::{Context, Result, anyhow, bail};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub struct Request<'a> {
    pub kernels: &'a Path,
    pub versions: &'a [String],
    pub shape: Option<Shape>,
    pub causal: bool,
    pub baselines: bool,
    pub seed: Option<u64>,
    pub reps: usize,
    pub timeout: Duration,
}

/// What a run reports while it goes.
pub enum Progress {
    /// `index` of `total` jobs starts (a version or a baseline).
    Started {
        id: String,
        index: usize,
        total: usize,
    },
    Finished(Box<RunResult>),
}

pub struct Outcome {
    pub results: Vec<RunResult>,
    pub seed: u64,
    pub shape: Shape,
    pub ladder: KernelLadder,
}

/// Runs the request; `cancel` stops it between and during child runs.
pub fn run(
    req: &Request,
    cancel: &Arc<AtomicBool>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome> {
    let ladder = super::load_kernels(req.kernels)?;
    let versions = ladder.select(req.versions)?;
    if let Some(why) = super::device::unavailable() {
        bail!(why);
    }
    let shape = req.shape.unwrap_or_else(|| ladder.reference_shape());
    let seed = req.seed.unwrap_or_else(fresh_seed);
    let total = versions.len() + if req.baselines { 2 } else { 0 };
    let mut results = Vec::new();
    let finish =
        |r: RunResult, results: &mut Vec<RunResult>, progress: &mut dyn FnMut(Progress)| {
            progress(Progress::Finished(Box::new(r.clone())));
            results.push(r);
        };
    for (index, v) in versions.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            bail!("stopped");
        }
        progress(Progress::Started {
            id: v.id.clone(),
            index,
            total,
        });
        let r = match v.unsupported(&shape, req.causal) {
            Some(why) => skipped(&v.id, shape, req.causal, why),
            None => child(req, &v.id, Mode::Run, shape, seed, cancel),
        };
        finish(r, &mut results, progress);
    }
    if req.baselines {
        progress(Progress::Started {
            id: UNFUSED.into(),
            index: versions.len(),
            total,
        });
        let r = child(req, UNFUSED, Mode::Unfused, shape, seed, cancel);
        finish(r, &mut results, progress);
        progress(Progress::Started {
            id: "pytorch sdpa".into(),
            index: versions.len() + 1,
            total,
        });
        for r in super::sdpa::run(&ladder, shape, req.causal, req.reps, seed) {
            finish(r, &mut results, progress);
        }
    }
    Ok(Outcome {
        results,
        seed,
        shape,
        ladder,
    })
}

fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64 ^ (std::process::id() as u64) << 32)
        .unwrap_or(1)
        % 1_000_000_007
}

fn skipped(id: &str, shape: Shape, causal: bool, why: String) -> RunResult {
    RunResult {
        message: Some(why),
        ..RunResult::new(id, shape, causal, RunStatus::Skipped)
    }
}

/// Runs one job in a child process and reads its result line.
fn child(
    req: &Request,
    id: &str,
    mode: Mode,
    shape: Shape,
    seed: u64,
    cancel: &Arc<AtomicBool>,
) -> RunResult {
    let failed = |message: String| RunResult {
        status: RunStatus::Failed,
        seed: Some(seed),
        ..skipped(id, shape, req.causal, message)
    };
    let exe = match stallscope_exe() {
        Ok(e) => e,
        Err(e) => return failed(format!("{e:#}")),
    };
    let mut cmd = Command::new(exe);
    cmd.arg("__child")
        .args(["--mode", mode_name(mode), "--version", id])
        .arg("--kernels")
        .arg(req.kernels)
        .args(["--shape", &shape.to_string(), "--seed", &seed.to_string()])
        .args(["--reps", &req.reps.to_string()]);
    if req.causal {
        cmd.arg("--causal");
    }
    match run_child(cmd, req.timeout, cancel) {
        Err(e) => failed(format!("{e:#}")),
        Ok(out) => {
            let line = out.stdout.lines().rev().find(|l| l.starts_with('{'));
            match line.map(serde_json::from_str::<RunResult>) {
                Some(Ok(r)) => r,
                _ => failed(match out.status {
                    ChildEnd::TimedOut => format!(
                        "timed out after {} s (a hung kernel?)",
                        req.timeout.as_secs()
                    ),
                    ChildEnd::Cancelled => "stopped".to_string(),
                    ChildEnd::Exited(code) => {
                        let tail = out
                            .stderr
                            .lines()
                            .rev()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or("no message");
                        format!("the child process ended ({code}): {tail}")
                    }
                }),
            }
        }
    }
}

/// The executable that runs child jobs: `$STALLSCOPE_EXE` when set (a program that uses
/// stallscope as a library, or a test), else this process's own executable.
pub fn stallscope_exe() -> Result<PathBuf> {
    match std::env::var_os("STALLSCOPE_EXE") {
        Some(p) => Ok(PathBuf::from(p)),
        None => std::env::current_exe().context("cannot find the stallscope executable"),
    }
}

pub fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Run => "run",
        Mode::Unfused => "unfused",
        Mode::Profile => "profile",
    }
}

pub enum ChildEnd {
    Exited(String),
    TimedOut,
    Cancelled,
}

pub struct ChildOutput {
    pub stdout: String,
    pub stderr: String,
    pub status: ChildEnd,
}

/// Runs a command with a timeout, reading its output as it comes; `cancel` kills it.
pub fn run_child(
    mut cmd: Command,
    timeout: Duration,
    cancel: &Arc<AtomicBool>,
) -> Result<ChildOutput> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start a child process")?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = pipe {
                let mut buf = Vec::new();
                let _ = p.read_to_end(&mut buf);
                s = String::from_utf8_lossy(&buf).into_owned();
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting for a child process")? {
            break ChildEnd::Exited(s.to_string());
        }
        if cancel.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            break ChildEnd::Cancelled;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break ChildEnd::TimedOut;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(ChildOutput {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        status,
    })
}

/// The result table: time, throughput, error, and speed against the best version and
/// against each baseline measured in the same run.
pub fn table(results: &[RunResult], ladder: &KernelLadder) -> String {
    let time = |r: &RunResult| r.median_us.filter(|_| r.status == RunStatus::Ok);
    let best = results
        .iter()
        .filter(|r| ladder.version(&r.version).is_some())
        .filter_map(time)
        .fold(f64::INFINITY, f64::min);
    let base = |id: &str| results.iter().find(|r| r.version == id).and_then(time);
    let refs: Vec<(&str, f64)> = ["fa2", "cudnn"]
        .iter()
        .filter_map(|id| base(id).map(|t| (*id, t)))
        .collect();
    let mut header: Vec<String> = [
        "version",
        "µs",
        "min–max µs",
        "TFLOPS",
        "rel.err",
        "max abs",
        "vs best",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(refs.iter().map(|(id, _)| format!("vs {id}")));
    header.push("status".into());
    let mut rows = Vec::new();
    for r in results {
        let t = time(r);
        let ratio = |other: f64| {
            t.map(|t| format!("{:.2}×", other / t))
                .unwrap_or_else(|| format::UNKNOWN.into())
        };
        let mut row = vec![
            r.version.clone(),
            r.median_us
                .map(format::micros)
                .unwrap_or_else(|| format::UNKNOWN.into()),
            match (r.min_us, r.max_us) {
                (Some(a), Some(b)) => format!("{}–{}", format::micros(a), format::micros(b)),
                _ => format::UNKNOWN.into(),
            },
            r.tflops
                .map(|t| format!("{t:.1}"))
                .unwrap_or_else(|| format::UNKNOWN.into()),
            r.rel_l2_err
                .map(|e| format!("{e:.1e}"))
                .unwrap_or_else(|| format::UNKNOWN.into()),
            r.max_abs_err
                .map(|e| format!("{e:.1e}"))
                .unwrap_or_else(|| format::UNKNOWN.into()),
            if ladder.version(&r.version).is_some() && best.is_finite() {
                ratio(best)
            } else {
                format::UNKNOWN.into()
            },
        ];
        row.extend(refs.iter().map(|(_, t)| ratio(*t)));
        let status = match r.status {
            RunStatus::Ok => r
                .resources
                .clone()
                .map(|s| format!("ok ({s})"))
                .unwrap_or("ok".into()),
            RunStatus::Failed => format!("FAILED: {}", r.message.as_deref().unwrap_or("")),
            RunStatus::Skipped => format!("skipped: {}", r.message.as_deref().unwrap_or("")),
        };
        row.push(status);
        rows.push(crate::report::grid::Row::Cells(row));
    }
    crate::report::grid::render_text(&crate::report::Grid {
        preamble: Vec::new(),
        header,
        rows,
    })
}

/// Stores results in `profiles/<ladder>/runs.json` and makes sure the profiles
/// manifest lists every version run (title, notes, source) and every baseline.
pub fn save(profiles: &Path, ladder: &KernelLadder, results: &[RunResult]) -> Result<PathBuf> {
    let ids: Vec<&str> = results.iter().map(|r| r.version.as_str()).collect();
    record_versions(profiles, ladder, &ids)?;
    let dir = profiles.join(&ladder.ladder);
    let path = dir.join(runs::FILE_NAME);
    let mut file: RunFile = match std::fs::read_to_string(&path) {
        Ok(t) => serde_json::from_str(&t)
            .with_context(|| format!("{} is not a run file", path.display()))?,
        Err(_) => RunFile::default(),
    };
    file.upsert(
        results
            .iter()
            .filter(|r| r.status != RunStatus::Skipped)
            .cloned(),
    );
    write_atomically(
        &path,
        (serde_json::to_string_pretty(&file)? + "\n").as_bytes(),
    )?;
    Ok(path)
}

/// Makes the profiles manifest list these versions: kernel versions with their title,
/// technique, notes and source (exports left as they are), other ids as baselines; the
/// kernel ladder's order first.
pub fn record_versions(profiles: &Path, ladder: &KernelLadder, ids: &[&str]) -> Result<()> {
    let dir = profiles.join(&ladder.ladder);
    let mut m = read_manifest(&dir, ladder)?;
    for id in ids {
        match ladder.version(id) {
            Some(v) => sync_entry(&mut m, ladder, v, &dir),
            None => ensure_baseline(&mut m, id),
        }
    }
    let pos = |id: &str| ladder.versions.iter().position(|v| v.id == id);
    m.versions.sort_by_key(|e| pos(&e.id).unwrap_or(usize::MAX));
    write_atomically(&dir.join(manifest::FILE_NAME), m.to_toml().as_bytes())
}

fn read_manifest(dir: &Path, ladder: &KernelLadder) -> Result<Manifest> {
    let path = dir.join(manifest::FILE_NAME);
    match std::fs::read_to_string(&path) {
        Ok(t) => Manifest::parse(&t).map_err(|e| anyhow!("{}: {}", path.display(), e.message())),
        Err(_) => Ok(Manifest {
            title: ladder.title.clone(),
            flops: ladder.flops_for(&ladder.reference_shape(), false).ok(),
            reference_shape: Some(ladder.reference_shape.clone()),
            ..Manifest::default()
        }),
    }
}

/// Copies a kernel version's title, technique, notes and source into the profiles
/// manifest (its exports are left as they are).
fn sync_entry(m: &mut Manifest, ladder: &KernelLadder, v: &KernelVersion, dir: &Path) {
    let rel = |f: &str| {
        super::relative_path(&ladder.dir.join(f), dir)
            .to_string_lossy()
            .into_owned()
    };
    if m.version_mut(&v.id).is_none() {
        m.versions.push(VersionEntry {
            id: v.id.clone(),
            ..VersionEntry::default()
        });
    }
    let e = m.version_mut(&v.id).expect("just added");
    e.title = v.title.clone();
    e.technique = v.technique.clone();
    e.notes = v.notes.as_deref().map(rel);
    e.source = Some(rel(&v.source));
    e.baseline = false;
}

fn ensure_baseline(m: &mut Manifest, id: &str) {
    if m.version_mut(id).is_some() {
        return;
    }
    let title = match id {
        "cudnn" => "cuDNN (PyTorch SDPA cuDNN backend)",
        "fa2" => "FlashAttention-2 (PyTorch SDPA flash backend)",
        "mem-efficient" => "memory-efficient attention (PyTorch SDPA)",
        UNFUSED => "unfused: cuBLAS Q·Kᵀ, softmax kernel, cuBLAS P·V",
        other => other,
    };
    m.versions.push(VersionEntry {
        id: id.to_string(),
        title: title.to_string(),
        baseline: true,
        ..VersionEntry::default()
    });
}
