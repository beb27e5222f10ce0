//! `stallscope profile`: runs Nsight Compute on stallscope itself (the hidden child mode
//! that launches one version after two warm-up launches), exports the raw, details and
//! source pages in base units, and imports them into the profiles ladder.

use super::child::Mode;
use super::runner::{ChildEnd, mode_name, record_versions, run_child};
use crate::import;
use crate::model::Shape;
use anyhow::{Context, Result, anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub struct Request<'a> {
    pub kernels: &'a Path,
    pub versions: &'a [String],
    pub shape: Option<Shape>,
    pub causal: bool,
    pub profiles: &'a Path,
    /// ncu section set (`full` gives stall sampling and the source page).
    pub set: &'a str,
    pub timeout: Duration,
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
    cancel: &Arc<AtomicBool>,
    progress: &mut dyn FnMut(&str, usize, usize),
) -> Result<Vec<Profiled>> {
    let ladder = super::load_kernels(req.kernels)?;
    let versions = ladder.select(req.versions)?;
    let ncu = find_ncu()?;
    if let Some(why) = super::device::unavailable() {
        bail!(why);
    }
    let shape = req.shape.unwrap_or_else(|| ladder.reference_shape());
    let exe = super::runner::stallscope_exe()?;
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
    ladder: &super::recipe::KernelLadder,
    v: &super::recipe::KernelVersion,
    shape: Shape,
    cancel: &Arc<AtomicBool>,
) -> Result<String> {
    let report = work.join(&v.id);
    let mut cmd = Command::new(ncu);
    cmd.args([
        "--clock-control",
        "none",
        "--set",
        req.set,
        "--import-source",
        "yes",
    ])
    .args(["-k", &format!("regex:^{}$", v.entry)])
    .args(["--launch-skip", "2", "--launch-count", "1", "-f", "-o"])
    .arg(&report)
    .arg(exe)
    .arg("__child")
    .args(["--mode", mode_name(Mode::Profile), "--version", &v.id])
    .arg("--kernels")
    .arg(req.kernels)
    .args(["--shape", &shape.to_string(), "--seed", "1"]);
    if req.causal {
        cmd.arg("--causal");
    }
    let out = run_child(cmd, req.timeout, cancel)?;
    let all = format!("{}\n{}", out.stdout, out.stderr);
    match out.status {
        ChildEnd::TimedOut => bail!("ncu timed out after {} s", req.timeout.as_secs()),
        ChildEnd::Cancelled => bail!("stopped"),
        ChildEnd::Exited(_) => {}
    }
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
        let o = Command::new(ncu)
            .arg("--import")
            .arg(&rep)
            .arg("--csv")
            .args(args)
            .output()
            .with_context(|| format!("ncu export of the {name} page"))?;
        if !o.status.success() {
            bail!(
                "ncu could not export the {name} page: {}",
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            );
        }
        let path = dir.join(name);
        std::fs::write(&path, &o.stdout)?;
        files.push(path);
    }

    let done = import::import(&import::Request {
        profiles: req.profiles,
        ladder: Some(&ladder.ladder),
        version: &v.id,
        title: Some(&v.title),
        kernel: Some(&v.entry),
        baseline: false,
        files: &files,
        force: true,
    })?;
    // The import wrote the exports; the kernel ladder supplies notes and source.
    record_versions(req.profiles, ladder, &[v.id.as_str()])?;
    Ok(done.to_string())
}
