//! `stallscope profile`: runs Nsight Compute on stallscope itself (the hidden child mode
//! that launches one version after two warm-up launches), exports the raw, details and
//! source pages in base units, and imports them into the profiles ladder.

use crate::process::{self, Limits, Line};
use super::worker::Mode;
use crate::model::Shape;
use crate::model::import;
use crate::model::manifest;
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Seconds one version's profile may take.
pub const DEFAULT_TIMEOUT_S: u64 = 600;
/// The ncu section set: `full` gives stall sampling and the source page.
pub const DEFAULT_SET: &str = "full";

#[derive(Debug, Clone)]
pub struct Request {
    /// The recipe folder.
    pub kernels: PathBuf,
    pub versions: Vec<String>,
    pub shape: Option<Shape>,
    pub causal: bool,
    pub profiles: PathBuf,
    pub set: String,
    pub timeout: Duration,
}

impl Request {
    pub fn new(kernels: PathBuf, profiles: PathBuf) -> Request {
        Request {
            kernels,
            versions: Vec::new(),
            shape: None,
            causal: false,
            profiles,
            set: DEFAULT_SET.into(),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
        }
    }
}
/// One version's profile: where it went, or why it failed.
pub struct Profiled {
    pub id: String,
    pub outcome: Result<String>,
}

/// The ncu executable: `$NCU`, else `ncu` on the PATH.
pub fn find_ncu() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("NCU") {
        return Ok(PathBuf::from(p));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("ncu"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            anyhow!("Nsight Compute's ncu was not found on the PATH (set NCU to its path): profiling needs it")
        })
}

pub fn run(
    req: &Request,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Vec<Profiled>> {
    let ladder = super::load_recipe(&req.kernels)?;
    let versions = ladder.select(&req.versions)?;
    let ncu = find_ncu()?;
    if let Some(why) = super::device::unavailable() {
        bail!(why);
    }
    let shape = req.shape.unwrap_or_else(|| ladder.reference_shape());
    let exe = super::runner::stallscope_exe()?;
    if !ladder
        .ladder
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || ladder.ladder.starts_with('.')
    {
        bail!(
            "the recipe's ladder {:?} must be a plain folder name",
            ladder.ladder
        );
    }
    let work = tempfile::tempdir().context("temporary folder")?;
    let mut out = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        progress(&v.id, i, versions.len());
        let outcome = match v.unsupported(&shape, req.causal) {
            Some(why) => Err(anyhow!("skipped: {why}")),
            None => profile_one(req, &ncu, &exe, work.path(), &ladder, v, shape, cancel),
        };
        out.push(Profiled {
            id: v.id.clone(),
            outcome,
        });
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn profile_one(
    req: &Request,
    ncu: &Path,
    exe: &Path,
    work: &Path,
    ladder: &super::recipe::KernelRecipe,
    v: &super::recipe::KernelVersion,
    shape: Shape,
    cancel: &AtomicBool,
) -> Result<String> {
    let report = work.join(&v.id);
    let mut cmd = Command::new(ncu);
    cmd.args([
        "--clock-control",
        "none",
        "--set",
        &req.set,
        "--import-source",
        "yes",
    ])
    .args(["-k", &format!("regex:^{}$", v.entry)])
    .args(["--launch-skip", "2", "--launch-count", "1", "-f", "-o"])
    .arg(&report)
    .arg(exe)
    .arg("__worker")
    .args(["--mode", Mode::Profile.name(), "--version", &v.id])
    .arg("--recipe")
    .arg(&req.kernels)
    .args(["--shape", &shape.to_string(), "--seed", "1"]);
    if req.causal {
        cmd.arg("--causal");
    }
    let limits = Limits::new(req.timeout, cancel);
    let out = match process::run(cmd, &limits, &mut |_: &Line| {})? {
        Ok(f) => f,
        Err(process::Stopped::TimedOut(d)) => bail!("ncu timed out after {} s", d.as_secs()),
        Err(stop) => bail!("{stop}"),
    };
    let all = format!("{}\n{}", out.stdout, out.stderr);
    if all.contains("ERR_NVGPUCTRPERM") {
        bail!(
            "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root or allow profiling for all users"
        );
    }
    let rep = report.with_extension("ncu-rep");
    if !rep.is_file() {
        let why = all
            .lines()
            .rev()
            .find(|l| l.contains("==ERROR==") || l.contains("==WARNING=="))
            .or_else(|| all.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("no output");
        bail!("ncu wrote no report: {why}");
    }

    let pages: [(&str, &[&str]); 3] = [
        ("raw.csv", &["--page", "raw", "--print-units", "base"]),
        (
            "details.csv",
            &["--page", "details", "--print-units", "base"],
        ),
        (
            "source.csv",
            &["--page", "source", "--print-source", "sass"],
        ),
    ];
    let dir = work.join(format!("{}-pages", v.id));
    std::fs::create_dir_all(&dir)?;
    let mut files = Vec::new();
    for (name, args) in pages {
        let mut export = Command::new(ncu);
        export.arg("--import").arg(&rep).arg("--csv").args(args);
        let o = match process::run(
            export,
            &Limits::new(req.timeout, cancel),
            &mut |_: &Line| {},
        )? {
            Ok(f) => process::success(f, &format!("ncu's export of the {name} page"))?,
            Err(stop) => bail!("exporting the {name} page: {stop}"),
        };
        let path = dir.join(name);
        std::fs::write(&path, &o.stdout)
            .with_context(|| format!("cannot write {}", path.display()))?;
        files.push(path);
    }

    let done = import::import(&import::Request {
        profiles: &req.profiles,
        ladder: Some(&ladder.ladder),
        version: &v.id,
        title: Some(&v.title),
        kernel: Some(&v.entry),
        launch: None,
        baseline: false,
        files: &files,
        force: true,
        flops: None,
        peak_tflops: None,
    })?;
    // The import wrote the exports; the recipe supplies title, notes and source.
    let dir = req.profiles.join(&ladder.ladder);
    manifest::record_versions(
        &dir,
        &ladder.manifest_defaults(),
        &ladder.manifest_entries(&[v.id.as_str()], &dir),
    )?;
    Ok(done.to_string())
}
