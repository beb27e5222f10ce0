//! `stallscope profile`: runs Nsight Compute on stallscope itself (the hidden child mode
//! that launches one version after two warm-up launches), exports the raw, details and
//! source pages in base units, and imports them into the profiles ladder.

use super::placement::{Placement, Slots};
use super::worker::Mode;
use crate::model::Shape;
use crate::model::import;
use crate::model::manifest;
use crate::nsight;
use crate::process::Limits;
use anyhow::{Context, Result, anyhow, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
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
    /// Where the ncu children run: the versions are spread over the slots.
    pub slots: Slots,
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
            slots: Slots::default(),
        }
    }
}
/// One version's profile: where it went, or why it failed.
pub struct Profiled {
    pub id: String,
    pub outcome: Result<String>,
}

pub use crate::nsight::find_ncu;

/// Profiles the request's versions, spread over its slots (one ncu child a slot at a
/// time); `progress` hears which version starts where (`i` of `n` started so far).
pub fn run(
    req: &Request,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Placement, &str, usize, usize) + Sync),
) -> Result<Vec<Profiled>> {
    let ladder = super::load_recipe(&req.kernels)?;
    let versions = ladder.select(&req.versions)?;
    let ncu = find_ncu()?;
    if req.slots.launcher.is_empty()
        && let Some(why) = super::device::unavailable()
    {
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
    let n = versions.len();
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Imports rewrite the one manifest: one at a time, whichever slot finishes first.
    let importing = std::sync::Mutex::new(());
    let out: std::sync::Mutex<Vec<Option<Profiled>>> =
        std::sync::Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for placement in req.slots.placements() {
            let (next, importing, out, versions, ladder) =
                (&next, &importing, &out, &versions, &ladder);
            let (ncu, exe, work) = (&ncu, &exe, work.path());
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(v) = versions.get(i) else { break };
                    progress(&placement, &v.id, i, n);
                    let outcome = match v.unsupported(&shape, req.causal) {
                        Some(why) => Err(anyhow!("skipped: {why}")),
                        None => profile_one(
                            req, ncu, exe, work, ladder, v, shape, &placement, importing, cancel,
                        ),
                    };
                    out.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(Profiled {
                        id: v.id.clone(),
                        outcome,
                    });
                }
            });
        }
    });
    Ok(out
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .flatten()
        .collect())
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
    placement: &Placement,
    importing: &std::sync::Mutex<()>,
    cancel: &AtomicBool,
) -> Result<String> {
    let mut command: Vec<OsString> = vec![exe.into(), "__worker".into()];
    command.extend(
        [
            "--mode",
            Mode::Profile.name(),
            "--version",
            &v.id,
            "--recipe",
        ]
        .iter()
        .map(OsString::from),
    );
    command.push(req.kernels.clone().into());
    command.extend(
        ["--shape", &shape.to_string(), "--seed", "1"]
            .iter()
            .map(OsString::from),
    );
    if req.causal {
        command.push("--causal".into());
    }
    // The worker launches the version three times: two warm-ups, then the profiled one.
    let target = nsight::Target::new(command, Some(format!("regex:^{}$", v.entry)), 2, &req.set);
    let limits = Limits::new(req.timeout, cancel);
    let wrap = |c| placement.wrap(c);
    let rep = nsight::profile(ncu, &target, &work.join(&v.id), &limits, &wrap, &mut |_| {})?;
    let files = nsight::export_pages(ncu, &rep, &work.join(format!("{}-pages", v.id)), &limits)?;
    let _one_at_a_time = importing.lock().unwrap_or_else(|p| p.into_inner());
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
        &ladder.manifest_order(),
    )?;
    Ok(done.to_string())
}

/// Any program profiled into a version: `profile --ladder L --version V -- CMD…`.
#[derive(Debug, Clone)]
pub struct CommandRequest {
    pub profiles: PathBuf,
    pub ladder: Option<String>,
    pub version: String,
    pub title: Option<String>,
    pub target: nsight::Target,
    pub timeout: Duration,
    pub force: bool,
    /// Where ncu runs (a GPU of this host, a cluster launcher).
    pub placement: Placement,
}

/// Profiles a command with ncu and imports the pages as one version, the command
/// stored with it so that it can be profiled again; `status` hears ncu's progress.
pub fn profile_command(
    req: &CommandRequest,
    cancel: &AtomicBool,
    status: &mut dyn FnMut(&str),
) -> Result<String> {
    let ncu = find_ncu()?;
    let work = tempfile::tempdir().context("temporary folder")?;
    let limits = Limits::new(req.timeout, cancel);
    let wrap = |c| req.placement.wrap(c);
    let rep = nsight::profile(
        &ncu,
        &req.target,
        &work.path().join("report"),
        &limits,
        &wrap,
        status,
    )?;
    status("exporting the report's pages");
    let files = nsight::export_pages(&ncu, &rep, &work.path().join("pages"), &limits)?;
    let done = import::import(&import::Request {
        profiles: &req.profiles,
        ladder: req.ladder.as_deref(),
        version: &req.version,
        title: req.title.as_deref(),
        kernel: None,
        launch: None,
        baseline: false,
        files: &files,
        force: req.force,
        flops: None,
        peak_tflops: None,
    })?;
    let ladder_dir = done.dir.parent().unwrap_or(Path::new(".")).to_path_buf();
    manifest::record_profile_command(
        &ladder_dir,
        &req.version,
        &manifest::ProfileCommand {
            command: req
                .target
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            kernel: req.target.kernel.clone(),
            launch_skip: req.target.launch_skip,
            set: req.target.set.clone(),
        },
    )?;
    Ok(done.to_string())
}
