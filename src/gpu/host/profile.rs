//! `stallscope profile`: runs Nsight Compute on stallscope itself (the hidden child mode
//! that launches one version after two warm-up launches), or on any command, and
//! exports the raw, details and source pages in base units. Storing the exports is the
//! caller's (the model side imports them into the profiles ladder).

use super::placement::{Placement, Slots};
use crate::gpu::wire::{Mode, WorkerArgs};
use crate::model::Shape;
use crate::nsight;
use crate::process::Limits;
use crate::recipe::{KernelRecipe, KernelVersion};
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
    /// Which recipe, versions and shape.
    pub selection: super::selection::Selection,
    pub set: String,
    pub timeout: Duration,
    /// Where the ncu children run: the versions are spread over the slots.
    pub slots: Slots,
}

impl Request {
    pub fn new(selection: super::selection::Selection) -> Request {
        Request {
            selection,
            set: DEFAULT_SET.into(),
            timeout: Duration::from_secs(DEFAULT_TIMEOUT_S),
            slots: Slots::default(),
        }
    }
}
/// One version's profile: what storing it said, or why it failed.
pub struct Profiled {
    pub id: String,
    pub outcome: Result<String>,
}

use crate::nsight::find_ncu;

/// Stores one version's exported pages, profiled at the shape given (the caller's: the
/// model side imports them) and says what it did; called one version at a time, as each
/// profile is exported.
pub type Store<'a> =
    dyn Fn(&KernelRecipe, &KernelVersion, &Shape, &[PathBuf]) -> Result<String> + Sync + 'a;

/// Profiles the request's versions, spread over its slots (one ncu child a slot at a
/// time); `progress` hears which version starts where (`i` of `n` started so far);
/// `store` takes each version's exports, whichever slot finishes first.
pub fn run(
    req: &Request,
    cancel: &AtomicBool,
    progress: &(dyn Fn(&Placement, &str, usize, usize) + Sync),
    store: &Store,
) -> Result<Vec<Profiled>> {
    let recipe = req.selection.recipe()?;
    let versions = recipe.select(&req.selection.versions)?;
    let shape = recipe.shape(req.selection.shape.as_ref(), &req.selection.flags)?;
    let ncu = find_ncu()?;
    if req.slots.launcher.is_empty()
        && let Some(why) = crate::gpu::driver::unavailable()
    {
        bail!(why);
    }
    let exe = super::runner::stallscope_exe()?;
    if !recipe
        .ladder
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || recipe.ladder.starts_with('.')
    {
        bail!(
            "the recipe's ladder {:?} must be a plain folder name",
            recipe.ladder
        );
    }
    let work = tempfile::tempdir().context("temporary folder")?;
    let n = versions.len();
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Storing rewrites the one manifest: one at a time, whichever slot finishes first.
    let storing = std::sync::Mutex::new(());
    let out: std::sync::Mutex<Vec<Option<Profiled>>> =
        std::sync::Mutex::new((0..n).map(|_| None).collect());
    std::thread::scope(|scope| {
        for placement in req.slots.placements() {
            let (next, storing, out, versions, recipe) =
                (&next, &storing, &out, &versions, &recipe);
            let (ncu, exe, work) = (&ncu, &exe, work.path());
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(v) = versions.get(i) else { break };
                    progress(&placement, &v.id, i, n);
                    let outcome = match v.unsupported(&shape) {
                        Some(why) => Err(anyhow!("skipped: {why}")),
                        None => profile_one(req, ncu, exe, work, v, shape, &placement, cancel)
                            .and_then(|files| {
                                let _one_at_a_time =
                                    storing.lock().unwrap_or_else(|p| p.into_inner());
                                store(recipe, v, &shape, &files)
                            }),
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

/// Profiles version `v` and exports its pages under `work`. Returns the page files.
#[allow(clippy::too_many_arguments)]
fn profile_one(
    req: &Request,
    ncu: &Path,
    exe: &Path,
    work: &Path,
    v: &KernelVersion,
    shape: Shape,
    placement: &Placement,
    cancel: &AtomicBool,
) -> Result<Vec<PathBuf>> {
    let args = WorkerArgs {
        mode: Mode::Profile,
        recipe: req.selection.kernels.clone(),
        version: v.id.clone(),
        shape: shape.into(),
        seed: 1,
        no_cases: false,
        traced: false,
        trace_out: None,
        trace_cap: None,
    };
    let mut command: Vec<OsString> = vec![exe.into()];
    command.extend(args.command_line());
    // The worker launches the version three times: two warm-ups, then the profiled one
    // (its own kernel, or the path's that runs at this shape).
    let target = nsight::Target::new(
        command,
        Some(format!("regex:^({})$", v.entries().join("|"))),
        2,
        &req.set,
    );
    let limits = Limits::new(req.timeout, cancel);
    let wrap = |c| placement.wrap(c);
    let rep = nsight::profile(ncu, &target, &work.join(&v.id), &limits, &wrap, &mut |_| {})?;
    nsight::export_pages(ncu, &rep, &work.join(format!("{}-pages", v.id)), &limits)
}

/// Any program profiled: `profile --ladder L --version V -- CMD…`.
#[derive(Debug, Clone)]
pub struct CommandRequest {
    pub target: nsight::Target,
    pub timeout: Duration,
    /// Where ncu runs (a GPU of this host, a cluster launcher).
    pub placement: Placement,
}

/// The pages exported of a profile, in a temporary folder that lasts as long as this.
pub struct Exports {
    pub files: Vec<PathBuf>,
    _work: tempfile::TempDir,
}

/// Profiles a command with ncu and exports the report's pages; `status` hears ncu's
/// progress.
pub fn profile_command(
    req: &CommandRequest,
    cancel: &AtomicBool,
    status: &mut dyn FnMut(&str),
) -> Result<Exports> {
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
    Ok(Exports { files, _work: work })
}
