//! Nsight Compute's command line: finding `ncu`, profiling a command into a report,
//! exporting the report's pages that stallscope reads, and saying in one line what went
//! wrong when ncu fails. Used by `profile` (stallscope's own kernels or any command) and
//! by the reading of `.ncu-rep` reports ([`reports`]: the model reads files and starts no
//! process, so a report's pages are exported here, before the model reads them).

pub mod reports;

use crate::model::manifest::ProfileCommand;
use crate::process::{self, Limits, Line};
use anyhow::{Context, Result, anyhow, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

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
            anyhow!(
                "Nsight Compute's ncu was not found on the PATH: install Nsight Compute (it comes with the CUDA toolkit) or set NCU to its path"
            )
        })
}

/// Launches profiled: one, the launch after `launch_skip`.
pub const LAUNCH_COUNT: u32 = 1;

/// What to profile and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// ncu's `-k` filter: a kernel name, or `regex:…` [default: every kernel].
    pub kernel: Option<String>,
    pub launch_skip: u32,
    pub launch_count: u32,
    /// The section set (`full` gives stall sampling and the source page).
    pub set: String,
}

impl Target {
    /// `command` profiled at [`LAUNCH_COUNT`] launch of the kernels `kernel` matches,
    /// after `launch_skip` of them, with the section set `set`.
    pub fn new(
        command: Vec<OsString>,
        kernel: Option<String>,
        launch_skip: u32,
        set: &str,
    ) -> Target {
        Target {
            command,
            kernel,
            launch_skip,
            launch_count: LAUNCH_COUNT,
            set: set.to_string(),
        }
    }

    /// A stored command profiled again.
    pub fn from_stored(c: &ProfileCommand) -> Target {
        Target::new(
            c.command.iter().map(Into::into).collect(),
            c.kernel.clone(),
            c.launch_skip,
            &c.set,
        )
    }

    /// The target as a ladder's manifest stores it with the version it became.
    pub fn stored(&self) -> ProfileCommand {
        ProfileCommand {
            command: self
                .command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            kernel: self.kernel.clone(),
            launch_skip: self.launch_skip,
            set: self.set.clone(),
        }
    }
}

/// The pages exported from a report: file name and ncu's options. The source page is
/// asked for with CUDA lines first (`cuda,sass`), and with SASS alone where the report
/// has no line information.
pub const PAGES: &[(&str, &[&str])] = &[
    ("raw.csv", &["--page", "raw", "--print-units", "base"]),
    (
        "details.csv",
        &["--page", "details", "--print-units", "base"],
    ),
    (
        "source.csv",
        &["--page", "source", "--print-source", "cuda,sass"],
    ),
];

const SASS_ONLY: &[&str] = &["--page", "source", "--print-source", "sass"];

/// Profiles `target` into `report` (ncu adds `.ncu-rep`); `status` hears what ncu is
/// doing ("attn_v28: 0%....50%") as it goes. Returns the report's path.
/// `wrap` places the ncu child (a GPU of the host, a cluster launcher's prefix).
pub fn profile(
    ncu: &Path,
    target: &Target,
    report: &Path,
    limits: &Limits,
    wrap: &dyn Fn(Command) -> Command,
    status: &mut dyn FnMut(&str),
) -> Result<PathBuf> {
    if target.command.is_empty() {
        bail!("no command to profile: give it after `--`");
    }
    let mut cmd = Command::new(ncu);
    cmd.args(["--clock-control", "none", "--set", &target.set])
        .args(["--import-source", "yes"]);
    if let Some(k) = &target.kernel {
        cmd.args(["-k", k]);
    }
    cmd.args(["--launch-skip", &target.launch_skip.to_string()])
        .args(["--launch-count", &target.launch_count.to_string()])
        .args(["-f", "-o"])
        .arg(report)
        .args(&target.command);
    let started = Instant::now();
    let out = process::run(wrap(cmd), limits, &mut |l| {
        let text = match l {
            Line::Out(t) | Line::Err(t) | Line::Partial(t) => t,
        };
        if let Some(s) = progress(text) {
            status(&format!("{s} ({} s)", started.elapsed().as_secs()));
        }
    })?;
    let out = match out {
        Ok(f) => f,
        Err(process::Stopped::TimedOut(d)) => bail!("ncu timed out after {} s", d.as_secs()),
        Err(stop) => bail!("ncu {stop}"),
    };
    let all = format!("{}\n{}", out.stdout, out.stderr);
    let rep = report.with_extension("ncu-rep");
    if let Some(why) = failure(&all, target) {
        bail!(why);
    }
    if !rep.is_file() {
        bail!("ncu wrote no report ({}): {}", out.status, out.last_words());
    }
    Ok(rep)
}

/// What ncu says it is doing, from one of its lines: the kernel and its replay passes.
pub fn progress(line: &str) -> Option<String> {
    let rest = line.split("==PROF== ").nth(1)?;
    if let Some(p) = rest.strip_prefix("Profiling \"") {
        let (name, tail) = p.split_once('"')?;
        let short = crate::model::short_kernel_name(name);
        let passes = tail.rsplit_once(": ").map(|(_, t)| t.trim()).unwrap_or("");
        return Some(
            format!("profiling {short}: {passes}")
                .trim_end_matches(": ")
                .to_string(),
        );
    }
    if rest.starts_with("Connected") {
        return Some("the program started".into());
    }
    if rest.starts_with("Disconnected") {
        return Some("the program ended".into());
    }
    None
}

/// The one line that says why ncu failed, with the fix, when its output says so.
pub fn failure(output: &str, target: &Target) -> Option<String> {
    if output.contains("ERR_NVGPUCTRPERM") {
        return Some(
            "ncu may not read the GPU's performance counters here (ERR_NVGPUCTRPERM): run as root, or let every user profile (driver option NVreg_RestrictProfilingToAdminUsers=0); `stallscope doctor` checks it".into(),
        );
    }
    if output.contains("No kernels were profiled") {
        return Some(match &target.kernel {
            Some(k) => format!(
                "no kernel matched the filter -k {k} (after --launch-skip {}): check the kernel's name, e.g. with `ncu --print-summary per-kernel` on the command",
                target.launch_skip
            ),
            None => "the program launched no CUDA kernel that ncu could profile".into(),
        });
    }
    if let Some(l) = output
        .lines()
        .find(|l| l.contains("The application returned an error code"))
    {
        let code = l
            .rsplit_once('(')
            .and_then(|(_, c)| c.split_once(')'))
            .map(|(c, _)| c.to_string())
            .unwrap_or_else(|| "?".into());
        let words = output
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.contains("==PROF==") && !l.contains("==ERROR=="))
            .unwrap_or("no output");
        return Some(format!(
            "the program failed under ncu (exit code {code}): {words}"
        ));
    }
    if let Some(l) = output.lines().find(|l| l.contains("==ERROR==")) {
        return Some(format!("ncu: {}", l.trim_start_matches("==ERROR==").trim()));
    }
    None
}

/// Exports `rep`'s pages into `dir`. Returns the files.
pub fn export_pages(ncu: &Path, rep: &Path, dir: &Path, limits: &Limits) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let export = |name: &str, args: &[&str]| -> Result<String> {
        let mut cmd = Command::new(ncu);
        cmd.arg("--import").arg(rep).arg("--csv").args(args);
        match process::run(cmd, limits, &mut |_| {})? {
            Ok(f) => Ok(process::success(f, &format!("ncu's export of the {name} page"))?.stdout),
            Err(stop) => bail!("exporting the {name} page: {stop}"),
        }
    };
    let mut files = Vec::new();
    for (name, args) in PAGES {
        let mut text = export(name, args)?;
        if *name == "source.csv" && !has_cuda_lines(&text) {
            text = export(name, SASS_ONLY)?;
        }
        if text.trim().is_empty() {
            bail!("ncu exported an empty {name} page from {}", rep.display());
        }
        let path = dir.join(name);
        std::fs::write(&path, &text).with_context(|| format!("cannot write {}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

/// Whether a `--print-source cuda,sass` page carries CUDA source lines: without line
/// information ncu prints the SASS alone, which the SASS page already holds.
fn has_cuda_lines(page: &str) -> bool {
    let Ok(export) = crate::ncu::parse_bytes(Path::new("source-cuda.csv"), page.as_bytes()) else {
        return false;
    };
    export.records.iter().any(|r| match &r.page {
        crate::ncu::Page::Source(s) => !s.cuda_lines.is_empty(),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(kernel: Option<&str>) -> Target {
        Target::new(vec!["./app".into()], kernel.map(str::to_string), 2, "full")
    }

    #[test]
    fn ncu_progress_reads_as_kernel_and_passes() {
        assert_eq!(
            progress("==PROF== Profiling \"attn_v28\" - 0: 0%....50%").as_deref(),
            Some("profiling attn_v28: 0%....50%")
        );
        assert_eq!(
            progress("==PROF== Profiling \"void flash_fwd<T>(Params)\" - 3: 0%....50%....100% - 40 passes")
                .as_deref(),
            Some("profiling flash_fwd: 0%....50%....100% - 40 passes")
        );
        assert_eq!(
            progress("==PROF== Connected to process 4242 (/usr/bin/python3.12)").as_deref(),
            Some("the program started")
        );
        assert_eq!(progress("hello from the program"), None);
    }

    #[test]
    fn ncu_failures_read_as_one_line_with_the_fix() {
        let perm = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters";
        assert!(
            failure(perm, &target(None))
                .unwrap()
                .contains("run as root")
        );
        let none = "==PROF== Connected to process 1\n==WARNING== No kernels were profiled.";
        let f = failure(none, &target(Some("regex:attn"))).unwrap();
        assert!(
            f.contains("no kernel matched the filter -k regex:attn"),
            "{f}"
        );
        let app = "Traceback (most recent call last):\nValueError: bad shape\n==ERROR== The application returned an error code (1).";
        let f = failure(app, &target(None)).unwrap();
        assert!(
            f.contains("exit code 1") && f.contains("ValueError: bad shape"),
            "{f}"
        );
        assert_eq!(
            failure("==PROF== Disconnected from process 1", &target(None)),
            None
        );
    }
}
