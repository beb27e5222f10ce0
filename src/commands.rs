//! What each subcommand does: resolve its inputs to ladders, then hand them to the
//! report, the comparison, the importer or the explorer.

use crate::analysis::{self, compare};
use crate::cli::{BuildArgs, Cli, Command, Common, CompareArgs, ReportArgs, RunArgs};
use crate::gpu::{profile, runner};
use crate::model::RunStatus;
use crate::model::import;
use crate::model::{self, Ladder, LoadReport, Store, manifest};
use crate::process;
use crate::report::format;
use crate::report::{self, Analysed, CompareInput, Format};
use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Runs the command line; `Ok(false)` means it finished but some inputs failed.
pub fn run(cli: Cli) -> Result<bool> {
    let common = &cli.common;
    match cli.command {
        None => {
            let mut report = load_report(common);
            let ladders = if cli.files.is_empty() {
                default_ladders(common, &mut report)?
            } else {
                resolve_paths(&cli.files, &mut report)?
            };
            explore(common, ladders, &report)
        }
        Some(Command::Open(a)) => {
            let mut report = load_report(common);
            let ladders = resolve_paths(&[a.dir], &mut report)?;
            explore(common, ladders, &report)
        }
        Some(Command::Report(a)) => report_command(common, &a),
        Some(Command::Compare(a)) => compare_command(common, &a),
        Some(Command::Import(a)) => {
            let profiles = writable_profiles(common);
            let done = import::import(&import::Request {
                profiles: &profiles,
                ladder: a.ladder.as_deref(),
                version: &a.version_id,
                title: a.title.as_deref(),
                kernel: a.kernel.as_deref(),
                launch: a.launch,
                baseline: a.baseline,
                files: &a.files,
                force: a.force,
                flops: a.flops,
                peak_tflops: a.peak_tflops,
            })?;
            eprintln!("{done}");
            Ok(true)
        }
        Some(Command::Run(a)) => run_command(common, &a),
        Some(Command::Profile(a)) => match a.command_request(writable_profiles(common)) {
            Some(req) => profile_any_command(&req?),
            None => {
                let req = a.request(common, writable_profiles(common))?;
                profile_command(&req)
            }
        },
        Some(Command::Build(a)) => build_command(common, &a),
        Some(Command::Doctor) => {
            let (text, ok) = crate::doctor::report(&crate::doctor::checks());
            print!("{text}");
            Ok(ok)
        }
        Some(Command::Completions { shell }) => {
            crate::cli::write_completions(shell, &mut std::io::stdout());
            Ok(true)
        }
        Some(Command::Man { dir }) => {
            match dir {
                Some(dir) => crate::cli::write_man_pages(&dir).with_context(|| {
                    format!("cannot write the man pages into {}", dir.display())
                })?,
                None => crate::cli::write_man_page(&mut std::io::stdout())
                    .context("cannot write the man page")?,
            }
            Ok(true)
        }
        Some(Command::Worker(args)) => {
            crate::gpu::worker::main(&args)?;
            Ok(true)
        }
    }
}

fn report_command(common: &Common, a: &ReportArgs) -> Result<bool> {
    let mut report = load_report(common);
    let mut ladders = match (&a.ladder, a.paths.is_empty()) {
        // One ladder of the profiles folder: only it is read.
        (Some(name), true) => {
            let (store, dir) = default_profiles(common);
            let dirs = model::ladder_folders(&store, &dir)?;
            vec![model::load_ladder(
                &store,
                named(&dirs, name)?,
                &mut report,
            )?]
        }
        (_, true) => default_ladders(common, &mut report)?,
        (_, false) => resolve_paths(&a.paths, &mut report)?,
    };
    if let Some(name) = &a.ladder {
        ladders.retain(|l| &l.name == name);
        if ladders.is_empty() {
            bail!("no ladder named {name:?}");
        }
    }
    let exporter = match terminal_width(a) {
        Some(w) => report::table_exporter(Some(w)),
        None => report::exporter_with_chart(a.format, a.chart)?,
    };
    if a.format == Format::Svg && ladders.len() > 1 {
        let names: Vec<&str> = ladders.iter().map(|l| l.name.as_str()).collect();
        bail!(
            "--format svg draws one ladder's chart: choose it with --ladder ({})",
            names.join(", ")
        );
    }
    let analysed: Vec<Analysed> = ladders.iter().map(Analysed::new).collect();
    emit(&exporter.timeline(&analysed), a.output.as_deref())?;
    Ok(finish(&report))
}

/// The width the table fits: the terminal's, when it is printed on one (not with
/// `--wide`, `-o FILE` or another format).
fn terminal_width(a: &ReportArgs) -> Option<usize> {
    use std::io::IsTerminal;
    let on_terminal = a.format == Format::Table && a.output.is_none() && !a.wide;
    if !(on_terminal && std::io::stdout().is_terminal()) {
        return None;
    }
    crossterm::terminal::size()
        .ok()
        .map(|(cols, _)| usize::from(cols))
        .filter(|&c| c > 0)
}

/// The folder of the ladder named `name` among `dirs`; an error naming the others.
fn named<'d>(dirs: &'d [PathBuf], name: &str) -> Result<&'d PathBuf> {
    dirs.iter()
        .find(|d| d.file_name().is_some_and(|n| n == name))
        .ok_or_else(|| {
            let names: Vec<String> = dirs
                .iter()
                .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            anyhow!("no ladder named {name:?} (there are: {})", names.join(", "))
        })
}

/// Writes a command's output to a file, or to standard output.
fn emit(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn build_command(common: &Common, a: &BuildArgs) -> Result<bool> {
    let recipe = crate::gpu::load_recipe(&crate::gpu::find_recipe(
        &common.kernels(),
        a.ladder.as_deref(),
    )?)?;
    let mut ok = true;
    for b in crate::gpu::build(&recipe, &a.versions, &a.arch, a.head_dim)? {
        match b.outcome {
            Ok(c) => println!(
                "{:<16} ok   {}",
                b.id,
                crate::gpu::nvrtc::resource_summary(&c.log).unwrap_or_else(|| "(cached)".into())
            ),
            Err(e) => {
                ok = false;
                println!("{:<16} FAILED\n{e:#}", b.id);
            }
        }
    }
    Ok(ok)
}

/// The JSON `run --json` prints.
#[derive(serde::Serialize)]
struct RunJson<'a> {
    schema: &'static str,
    ladder: &'a str,
    shape: model::Shape,
    causal: bool,
    seed: u64,
    environment: &'a model::runs::Environment,
    results: &'a [model::RunResult],
}

fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

fn run_command(common: &Common, a: &RunArgs) -> Result<bool> {
    let req = a.request(common)?;
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let bar = progress_bar();
    let outcome = runner::run(&req, &cancel, &mut |p| match p {
        runner::Progress::Step {
            id,
            what,
            index,
            total,
        } => {
            bar.set_length(total as u64);
            bar.set_position(index as u64);
            bar.set_message(format!("{id}: {what}"));
        }
        runner::Progress::Finished(r) => {
            let what = match r.status {
                RunStatus::Ok => format!(
                    "ok, {} µs",
                    r.median_us.map(format::micros).unwrap_or_default()
                ),
                RunStatus::Failed => format!("FAILED: {}", r.message.as_deref().unwrap_or("")),
                RunStatus::Skipped => format!("skipped: {}", r.message.as_deref().unwrap_or("")),
            };
            bar.println(format!("{:<14} {what}", r.version));
        }
    });
    bar.finish_and_clear();
    let outcome = outcome?;
    let recipe = &outcome.recipe;
    let is_version = |id: &str| recipe.version(id).is_some();
    if a.json {
        let out = RunJson {
            schema: RUN_SCHEMA,
            ladder: &recipe.ladder,
            shape: outcome.shape,
            causal: outcome.causal,
            seed: outcome.seed,
            environment: &outcome.environment,
            results: &outcome.results,
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{} · shape {}{} · seed {} (replay with --seed {})",
            recipe.ladder,
            outcome.shape,
            if outcome.causal { " causal" } else { "" },
            outcome.seed,
            outcome.seed,
        );
        println!(
            "{}\n",
            report::runs::environment_line(&outcome.environment, &outcome.results)
        );
        print!("{}", report::runs::table(&outcome.results, &is_version));
    }
    if !a.no_save {
        let profiles = writable_profiles(common);
        let dir = profiles.join(&recipe.ladder);
        let ids: Vec<&str> = outcome.results.iter().map(|r| r.version.as_str()).collect();
        manifest::record_versions(
            &dir,
            &recipe.manifest_defaults(),
            &recipe.manifest_entries(&ids, &dir),
        )?;
        let path =
            model::runs::RunFile::store(&dir, &outcome.results, Some(outcome.environment.clone()))?;
        eprintln!("results stored in {}", path.display());
    }
    let failed: Vec<&str> = outcome
        .results
        .iter()
        .filter(|r| r.status == RunStatus::Failed && is_version(&r.version))
        .map(|r| r.version.as_str())
        .collect();
    if !failed.is_empty() {
        eprintln!("failed: {}", failed.join(", "));
    }
    let regressed = match (a.fail_if_slower, &a.against) {
        (Some(pct), Some(against)) => slower_than(&outcome.results, &is_version, against, pct)?,
        _ => Vec::new(),
    };
    for line in &regressed {
        eprintln!("{line}");
    }
    Ok(failed.is_empty() && regressed.is_empty())
}

/// The versions slower than `against` by more than `pct` percent with the verdict
/// `slower`, one line each.
fn slower_than(
    results: &[model::RunResult],
    is_version: &dyn Fn(&str) -> bool,
    against: &str,
    pct: f64,
) -> Result<Vec<String>> {
    let reference = results
        .iter()
        .find(|r| r.version == against && r.status == RunStatus::Ok)
        .with_context(|| format!("--against {against}: it did not run, or failed"))?;
    Ok(results
        .iter()
        .filter(|r| is_version(&r.version) && r.version != against)
        .filter_map(|r| {
            let s = analysis::speed::speedup(r, reference)?;
            let slower_pct = (1.0 / s.ratio - 1.0) * 100.0;
            (s.verdict == analysis::speed::SpeedVerdict::Slower && slower_pct > pct).then(|| {
                format!(
                    "{} is {slower_pct:.1} % slower than {against} (over rounds {:.3}–{:.3}×), more than --fail-if-slower {pct}",
                    r.version, s.low, s.high
                )
            })
        })
        .collect())
}

/// The schema of `run --json`.
pub const RUN_SCHEMA: &str = "stallscope/run/1";

fn profile_any_command(req: &profile::CommandRequest) -> Result<bool> {
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} ncu: {msg}").expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("starting");
    let done = profile::profile_command(req, &cancel, &mut |s| bar.set_message(s.to_string()));
    bar.finish_and_clear();
    eprintln!("{}", done?);
    Ok(true)
}

fn profile_command(req: &profile::Request) -> Result<bool> {
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let bar = progress_bar();
    let results = profile::run(req, &cancel, &mut |id, i, n| {
        bar.set_length(n as u64);
        bar.set_position(i as u64);
        bar.set_message(format!("profiling {id} with ncu"));
    });
    bar.finish_and_clear();
    let mut ok = true;
    for p in results? {
        match p.outcome {
            Ok(msg) => eprintln!("{:<8} {msg}", p.id),
            Err(e) => {
                ok = false;
                eprintln!("{:<8} FAILED: {e:#}", p.id);
            }
        }
    }
    Ok(ok)
}

fn load_report(common: &Common) -> LoadReport {
    LoadReport {
        keep_going: common.keep_going,
        strict: common.strict,
        ..LoadReport::default()
    }
}

/// Lists what was read in part, and what `--keep-going` let pass; false when anything
/// failed.
fn finish(report: &LoadReport) -> bool {
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    for f in &report.failures {
        eprintln!("failed: {f}");
    }
    if !report.failures.is_empty() {
        eprintln!("{} file(s) could not be read", report.failures.len());
    }
    report.failures.is_empty()
}

fn print_report(ladders: &[Ladder], format: Format) {
    let analysed: Vec<Analysed> = ladders.iter().map(Analysed::new).collect();
    print!("{}", report::exporter(format).timeline(&analysed));
}

/// The explorer in a terminal; the timeline as text when output is not a terminal
/// (a pipe, a file, CI).
fn explore(common: &Common, ladders: Vec<Ladder>, report: &LoadReport) -> Result<bool> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        crate::tui::run(ladders, common.kernels())?;
    } else {
        print_report(&ladders, Format::Table);
    }
    Ok(finish(report))
}

/// Where ladders are read from when no path is given.
pub fn default_profiles(common: &Common) -> (Store, PathBuf) {
    if let Some(dir) = &common.profiles {
        return (Store::Disk, dir.clone());
    }
    let local = PathBuf::from("profiles");
    if local.join(".").is_dir() && has_ladders(&local) {
        (Store::Disk, local)
    } else {
        (Store::Embedded, Store::Embedded.default_profiles())
    }
}

fn has_ladders(dir: &Path) -> bool {
    !model::ladder_dirs(dir).is_empty()
}

/// Where import, run and profile write.
pub fn writable_profiles(common: &Common) -> PathBuf {
    common
        .profiles
        .clone()
        .unwrap_or_else(|| PathBuf::from("profiles"))
}

pub fn default_ladders(common: &Common, report: &mut LoadReport) -> Result<Vec<Ladder>> {
    let (store, dir) = default_profiles(common);
    model::load_ladders(&store, &dir, report)
}

/// Turns command-line paths into ladders: export files (one loose ladder, in the order
/// given), ladder folders, profiles folders, or folders of exports.
pub fn resolve_paths(paths: &[PathBuf], report: &mut LoadReport) -> Result<Vec<Ladder>> {
    let mut ladders = Vec::new();
    let mut loose: Vec<PathBuf> = Vec::new();
    let flush = |loose: &mut Vec<PathBuf>, ladders: &mut Vec<Ladder>, report: &mut LoadReport| {
        if !loose.is_empty() {
            ladders.push(model::load_files(loose, report)?);
            loose.clear();
        }
        Ok::<_, anyhow::Error>(())
    };
    for p in paths {
        if p.is_dir() {
            flush(&mut loose, &mut ladders, report)?;
            if p.join(manifest::FILE_NAME).is_file() {
                ladders.push(model::load_ladder(&Store::Disk, p, report)?);
            } else if has_ladders(p) {
                ladders.extend(model::load_ladders(&Store::Disk, p, report)?);
            } else {
                let files = export_files(p)?;
                ladders.push(model::load_files(&files, report)?);
            }
        } else if p.exists() {
            loose.push(p.clone());
        } else {
            let e = crate::ncu::ParseError::file(p, "no such file or folder");
            if report.keep_going {
                report.failures.push(e);
            } else {
                return Err(e.into());
            }
        }
    }
    flush(&mut loose, &mut ladders, report)?;
    if ladders.is_empty() {
        bail!("nothing to show: none of the paths given could be read");
    }
    Ok(ladders)
}

/// The ncu exports of a folder, found by their content whatever their names (`.csv`,
/// `.csv.gz`, `.log`, none), in name order; the other files are left alone.
fn export_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let mut files = Vec::new();
    let mut others = Vec::new();
    for p in paths {
        match crate::ncu::sniff(&p) {
            Ok(()) => files.push(p),
            Err(e) => others.push(e),
        }
    }
    if files.is_empty() {
        let found = match others.first() {
            None => String::new(),
            Some(first) => format!(" ({} other file(s); the first: {first})", others.len()),
        };
        bail!(
            "{} holds no ladder ({}) and no ncu exports{found}",
            dir.display(),
            manifest::FILE_NAME
        );
    }
    Ok(files)
}

fn compare_command(common: &Common, args: &CompareArgs) -> Result<bool> {
    let (a, b, ladder, format) = (
        args.a.as_str(),
        args.b.as_str(),
        args.ladder.as_deref(),
        args.format,
    );
    let mut report = load_report(common);
    let (pa, pb) = (Path::new(a), Path::new(b));
    let (ladder_a, ia, ladder_b, ib) = if pa.is_file() || pb.is_file() {
        for (given, p) in [(a, pa), (b, pb)] {
            if !p.is_file() {
                bail!(
                    "{given} is not a file: compare takes two version ids of one ladder, or two export files"
                );
            }
        }
        let la = model::load_files(&[pa.to_path_buf()], &mut report)?;
        let lb = model::load_files(&[pb.to_path_buf()], &mut report)?;
        let ia = one_launch(&la, args.launch_a, "--launch-a ID")?;
        let ib = one_launch(&lb, args.launch_b, "--launch-b ID")?;
        (la, ia, lb, ib)
    } else {
        // The manifests say which ladder holds both: only that one is read.
        let (store, dir) = default_profiles(common);
        let dirs = model::ladder_folders(&store, &dir)?;
        let index = dirs
            .iter()
            .map(|d| model::ladder_ids(&store, d))
            .collect::<Result<Vec<_>>>()?;
        let (at, va, vb) = find_pair(&index, a, b, ladder)?;
        let l = model::load_ladder(&store, &dirs[at], &mut report)?;
        let position = |id: &str| {
            l.version_index(id)
                .with_context(|| format!("{} has no version {id}", l.name))
        };
        let (ia, ib) = (position(va)?, position(vb)?);
        (l.clone(), ia, l, ib)
    };
    let an_a = analysis::analyse(&ladder_a, &ladder_a.versions[ia]);
    let an_b = analysis::analyse(&ladder_b, &ladder_b.versions[ib]);
    let comparison = compare(&an_a, &an_b);
    let name = |l: &Ladder, i: usize| {
        let v = &l.versions[i];
        if l.name == "files" {
            format!("{} ({})", v.title, l.title)
        } else {
            format!("{} {}", v.id, v.title)
        }
    };
    let input = CompareInput {
        a_name: name(&ladder_a, ia),
        b_name: name(&ladder_b, ib),
        comparison: &comparison,
    };
    emit(
        &report::exporter(format).compare(&input),
        args.output.as_deref(),
    )?;
    Ok(finish(&report))
}

/// The version (one per launch) of a loose file's ladder that a comparison means.
fn one_launch(l: &Ladder, launch: Option<u64>, how: &str) -> Result<usize> {
    let profiles: Vec<model::Profile> = l
        .versions
        .iter()
        .filter_map(|v| v.profile.clone())
        .collect();
    let p = model::pick_launch(&profiles, None, launch, how).with_context(|| l.title.clone())?;
    Ok(profiles
        .iter()
        .position(|x| std::ptr::eq(x, p))
        .expect("picked from these"))
}

/// Finds two versions in one ladder, given each ladder's name and version ids:
/// `--ladder`, a `LADDER:ID` prefix, or the first ladder holding both. The ladder's
/// position and the two ids.
fn find_pair<'a>(
    ladders: &[(String, Vec<String>)],
    a: &'a str,
    b: &'a str,
    ladder: Option<&str>,
) -> Result<(usize, &'a str, &'a str)> {
    fn split(s: &str) -> (Option<&str>, &str) {
        match s.split_once(':') {
            Some((l, v)) => (Some(l), v),
            None => (None, s),
        }
    }
    let ((la, va), (lb, vb)) = (split(a), split(b));
    let wanted = ladder.or(la).or(lb);
    if let Some(w) = wanted
        && !ladders.iter().any(|(name, _)| name == w)
    {
        let names: Vec<&str> = ladders.iter().map(|(name, _)| name.as_str()).collect();
        bail!("no ladder named {w:?} (there are: {})", names.join(", "));
    }
    let holds = |ids: &[String], v: &str| ids.iter().any(|id| id == v);
    for (i, (name, ids)) in ladders.iter().enumerate() {
        if wanted.is_some_and(|w| w != name) {
            continue;
        }
        if holds(ids, va) && holds(ids, vb) {
            return Ok((i, va, vb));
        }
    }
    let known: Vec<String> = ladders
        .iter()
        .map(|(name, ids)| format!("{name}: {}", ids.join(" ")))
        .collect();
    Err(anyhow!(
        "no ladder holds both {a:?} and {b:?} (and neither is a file); versions: {}",
        known.join("; ")
    ))
}
