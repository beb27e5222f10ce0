//! What each subcommand does: resolve its inputs to ladders, then hand them to the
//! report, the comparison, the importer or the explorer.

use crate::analysis::{self, compare};
use crate::cli::{BuildArgs, Cli, Command, Common, CompareArgs, ReportArgs, RunArgs};
use crate::gpu::{self, host::profile, host::runner};
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

/// A command's results on standard output. A reader that has gone (`report | head`)
/// ends the output, not the command: what comes after (saving a run's results) still
/// happens, and the command ends quietly.
macro_rules! out {
    ($($arg:tt)*) => { stdout_write(format_args!($($arg)*)) };
}
macro_rules! outln {
    ($($arg:tt)*) => { stdout_write(format_args!("{}\n", format_args!($($arg)*))) };
}

static OUTPUT_GONE: AtomicBool = AtomicBool::new(false);
static OUTPUT_FAILED: AtomicBool = AtomicBool::new(false);

fn stdout_write(args: std::fmt::Arguments) {
    use std::io::Write;
    use std::sync::atomic::Ordering::Relaxed;
    if OUTPUT_GONE.load(Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|_| o.flush()) {
        OUTPUT_GONE.store(true, Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            OUTPUT_FAILED.store(true, Relaxed);
            eprintln!("stallscope: cannot write to standard output: {e}");
        }
    }
}

/// Whether writing a command's results failed for another reason than a reader that
/// went away (a full disk, say): the command then ends with a failure.
pub fn output_failed() -> bool {
    OUTPUT_FAILED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Runs the command line; `Ok(false)` means it finished but some inputs failed.
pub fn run(cli: Cli) -> Result<bool> {
    let common = &cli.common;
    crate::files::set_limits(crate::files::Limits {
        max_file_size: common.max_file_size,
        max_decompressed: common.max_decompressed,
    });
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
            let files = model::reports::expand(&a.files)?;
            let ladders_before = model::ladder_dirs(&profiles);
            let done = import::import(&import::Request {
                profiles: &profiles,
                ladder: a.ladder.as_deref(),
                version: &a.version_id,
                title: a.title.as_deref(),
                kernel: a.kernel.as_deref(),
                launch: a.launch,
                baseline: a.baseline,
                files: &files,
                force: a.force,
                flops: a.flops,
                peak_tflops: a.peak_tflops,
                keep: &a.keep,
            })?;
            let mut said = done.to_string();
            if common.profiles.is_none() {
                said.push_str(&what_an_import_changes(&profiles, &ladders_before, &done));
            }
            eprintln!("{}", format::printable_lines(&said));
            // The figures the import gives (its FLOP count, the ladder's ceiling), read
            // back as a report reads them.
            if let Some(dir) = done.dir.parent()
                && let Ok(ladder) =
                    model::load_ladder(&Store::Disk, dir, &mut model::LoadReport::default())
            {
                let analysed = analysis::analyse_ladder(&ladder);
                for w in analysis::implausible(&ladder, &analysed) {
                    eprintln!("warning: {}", format::printable(&w));
                }
            }
            Ok(true)
        }
        Some(Command::Run(a)) => run_command(common, &a),
        Some(Command::Profile(a)) => match a.command_request() {
            Some(req) => profile_any_command(&req?, &writable_profiles(common)),
            None => profile_command(&a.request(common)?, &writable_profiles(common)),
        },
        Some(Command::Build(a)) => build_command(common, &a),
        Some(Command::Check) => check_command(common),
        Some(Command::Doctor) => {
            let (text, ok) = crate::doctor::report(&crate::doctor::checks());
            out!("{text}");
            Ok(ok)
        }
        Some(Command::Completions { shell }) => {
            let mut script = Vec::new();
            crate::cli::write_completions(shell, &mut script);
            out!("{}", String::from_utf8_lossy(&script));
            Ok(true)
        }
        Some(Command::Man { dir }) => {
            match dir {
                Some(dir) => crate::cli::write_man_pages(&dir).with_context(|| {
                    format!("cannot write the man pages into {}", dir.display())
                })?,
                None => {
                    let mut page = Vec::new();
                    crate::cli::write_man_page(&mut page).context("cannot write the man page")?;
                    out!("{}", String::from_utf8_lossy(&page));
                }
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
            let sources = default_sources(common)?;
            let (store, dir) = named(&sources, name)?;
            let mut l = load_one(store, dir, &mut report)?;
            mark_built_in(&mut l, &sources);
            vec![l]
        }
        (_, true) => default_ladders(common, &mut report)?,
        (_, false) => resolve_paths(&a.paths, &mut report)?,
    };
    if let Some(name) = &a.ladder {
        // What was said of the ladders left out is not this report's.
        let left_out: Vec<PathBuf> = ladders
            .iter()
            .filter(|l| &l.name != name)
            .filter_map(|l| l.dir.clone())
            .collect();
        report
            .warnings
            .retain(|w| !left_out.iter().any(|d| w.path.starts_with(d)));
        let names: Vec<String> = ladders.iter().map(|l| l.name.clone()).collect();
        ladders.retain(|l| &l.name == name);
        // A broken ladder that was not asked for is no failure of this report.
        report.broken.retain(|b| &b.name == name);
        if let Some(b) = report.broken.first() {
            bail!("{b}");
        }
        if ladders.is_empty() {
            return Err(no_ladder(name, &names));
        }
    }
    show_shape(&mut ladders, a.shape)?;
    // The format and chart are checked alike on a terminal and in a pipe.
    let exporter = report::exporter_with_chart(a.format, a.chart)?;
    let exporter = match terminal_width(a.format, a.output.as_deref(), a.wide) {
        Some(w) => report::table_exporter(Some(w)),
        None => exporter,
    };
    if a.format == Format::Svg && ladders.len() > 1 {
        let names: Vec<&str> = ladders.iter().map(|l| l.name.as_str()).collect();
        bail!(
            "--format svg draws one ladder's chart: choose it with --ladder ({})",
            names.join(", ")
        );
    }
    let analysed: Vec<Analysed> = ladders.iter().map(Analysed::new).collect();
    for a in &analysed {
        for w in analysis::implausible(a.ladder, &a.analysis) {
            eprintln!("warning: {}", format::printable(&w));
        }
    }
    emit(&exporter.timeline(&analysed), a.output.as_deref())?;
    Ok(finish(&report))
}

/// The width a table fits: the terminal's, when it is printed on one (not with
/// `--wide`, `-o FILE` or another format).
fn terminal_width(format: Format, output: Option<&Path>, wide: bool) -> Option<usize> {
    use std::io::IsTerminal;
    let on_terminal = format == Format::Table && output.is_none() && !wide;
    if !(on_terminal && std::io::stdout().is_terminal()) {
        return None;
    }
    crossterm::terminal::size()
        .ok()
        .map(|(cols, _)| usize::from(cols))
        .filter(|&c| c > 0)
}

/// The folder (and its store) of the ladder named `name` among `dirs`; an error naming
/// the others.
fn named<'d>(dirs: &'d [(Store, PathBuf)], name: &str) -> Result<(&'d Store, &'d PathBuf)> {
    dirs.iter()
        .find(|(_, d)| d.file_name().is_some_and(|n| n == name))
        .map(|(s, d)| (s, d))
        .ok_or_else(|| {
            let names: Vec<String> = dirs
                .iter()
                .filter_map(|(_, d)| d.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            no_ladder(name, &names)
        })
}

/// The error for a ladder name that none of `names` is.
fn no_ladder(name: &str, names: &[impl AsRef<str>]) -> anyhow::Error {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    anyhow!("no ladder named {name:?} (there are: {})", names.join(", "))
}

/// Makes the ladders show the run results of `shape`; an error when none of them was
/// run there (naming the shapes that were).
fn show_shape(ladders: &mut [Ladder], shape: Option<model::runs::RunShape>) -> Result<()> {
    let Some(s) = shape else { return Ok(()) };
    let measured: Vec<model::runs::RunShape> =
        ladders.iter().flat_map(|l| l.measured_shapes()).collect();
    if !measured.contains(&s) {
        let list: Vec<String> = measured.iter().map(|m| m.to_string()).collect();
        if list.is_empty() {
            let names: Vec<&str> = ladders.iter().map(|l| l.name.as_str()).collect();
            let none = match names.as_slice() {
                [one] => format!("{one} has no run results"),
                _ => format!("none of {} has run results", names.join(", ")),
            };
            bail!(
                "--shape {s}: {none}, at any shape (--shape picks among the shapes a ladder was run at)"
            );
        }
        bail!(
            "no version was run at {s}; the run results are at: {}",
            list.join(", ")
        );
    }
    for l in ladders {
        l.shown = Some(s);
    }
    Ok(())
}

/// Writes a command's output to a file, or to standard output.
fn emit(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            out!("{text}");
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
            Ok(c) => outln!(
                "{:<16} ok   {}",
                b.id,
                crate::gpu::nvrtc::resource_summary(&c.log).unwrap_or_else(|| "(cached)".into())
            ),
            Err(e) => {
                ok = false;
                outln!("{:<16} FAILED\n{e:#}", b.id);
            }
        }
    }
    Ok(ok)
}

/// The JSON `run --json` prints: every comparison of the call.
#[derive(serde::Serialize)]
struct RunJson<'a> {
    schema: &'static str,
    ladder: &'a str,
    comparisons: Vec<ComparisonJson<'a>>,
}

#[derive(serde::Serialize)]
struct ComparisonJson<'a> {
    shape: model::Shape,
    causal: bool,
    seed: u64,
    environment: &'a model::runs::Environment,
    results: Vec<ResultJson<'a>>,
}

/// A result with its verdicts: against the fastest version and each baseline of its
/// comparison (the rule of `analysis::speed`).
#[derive(serde::Serialize)]
pub struct ResultJson<'a> {
    #[serde(flatten)]
    pub result: &'a model::RunResult,
    pub verdicts: Vec<analysis::speed::Against>,
}

impl<'a> ResultJson<'a> {
    /// Every result of one comparison with its verdicts.
    pub fn all(
        results: &'a [model::RunResult],
        is_version: &dyn Fn(&str) -> bool,
    ) -> Vec<ResultJson<'a>> {
        let all: Vec<&model::RunResult> = results.iter().collect();
        results
            .iter()
            .map(|r| ResultJson {
                result: r,
                verdicts: analysis::speed::verdicts(r, &all, is_version),
            })
            .collect()
    }
}

fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// What a finished result says, in a few words.
fn result_line(r: &model::RunResult) -> String {
    let what = match r.status {
        RunStatus::Ok => format!(
            "ok, {} µs",
            r.median_us.map(format::micros).unwrap_or_default()
        ),
        RunStatus::Failed => format!("FAILED: {}", r.message.as_deref().unwrap_or("")),
        RunStatus::Skipped => format!("skipped: {}", r.message.as_deref().unwrap_or("")),
    };
    format!("{:<14} {what}", r.version)
}

fn run_command(common: &Common, a: &RunArgs) -> Result<bool> {
    let reqs = a.requests(common)?;
    let slots = a.slots.slots()?;
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let placements = slots.placements();
    let many = reqs.len() > 1 || placements.len() > 1;
    // One progress line per slot (GPU or launcher job).
    let bars = indicatif::MultiProgress::new();
    let lines: Vec<ProgressBar> = placements
        .iter()
        .map(|_| bars.add(progress_bar()))
        .collect();
    let bar_of = |p: &gpu::host::placement::Placement| {
        placements
            .iter()
            .position(|x| x == p)
            .map(|i| &lines[i])
            .unwrap_or(&lines[0])
    };
    let progress = |p: &gpu::host::placement::Placement, e: runner::Progress| {
        let bar = bar_of(p);
        let on = if many {
            format!("{}: ", p.describe())
        } else {
            String::new()
        };
        match e {
            runner::Progress::Step {
                id,
                what,
                index,
                total,
            } => {
                bar.set_length(total as u64);
                bar.set_position(index as u64);
                bar.set_message(format!("{on}{id}: {what}"));
            }
            runner::Progress::Finished(r) => {
                let line = format!("{on}{}", result_line(&r));
                // A hidden bar (stderr not a terminal) prints nothing of its own.
                if bar.is_hidden() {
                    eprintln!("{line}");
                } else {
                    bar.println(line);
                }
            }
        }
    };
    let outcomes = runner::run_many(reqs, &slots, &cancel, &progress);
    for b in &lines {
        b.finish_and_clear();
    }
    let mut ok = true;
    let mut done = Vec::new();
    for o in outcomes {
        match o {
            Ok(o) => done.push(o),
            Err(e) if done.is_empty() && !many => return Err(e),
            Err(e) => {
                ok = false;
                eprintln!("a comparison could not run: {e:#}");
            }
        }
    }
    let Some(first) = done.first() else {
        bail!("no comparison could run");
    };
    let recipe = &first.recipe;
    let is_version = |id: &str| recipe.version(id).is_some();
    let models: std::collections::BTreeSet<&str> = done
        .iter()
        .filter_map(|o| o.environment.gpu.as_deref())
        .collect();
    if models.len() > 1 {
        eprintln!(
            "note: these comparisons ran on different GPU models ({}): each ratio is taken within one comparison, on one GPU, and none across them",
            models.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if a.json {
        let out = RunJson {
            schema: RUN_SCHEMA,
            ladder: &recipe.ladder,
            comparisons: done
                .iter()
                .map(|o| ComparisonJson {
                    shape: o.shape,
                    causal: o.causal,
                    seed: o.seed,
                    environment: &o.environment,
                    results: ResultJson::all(&o.results, &is_version),
                })
                .collect(),
        };
        outln!("{}", serde_json::to_string_pretty(&out)?);
    }
    for o in &done {
        if !a.json {
            let on = o
                .results
                .iter()
                .find_map(|r| r.gpu_index)
                .map(|g| format!(" · GPU {g}"))
                .unwrap_or_default();
            outln!(
                "{} · shape {}{} · seed {} (replay with --seed {}){on}",
                recipe.ladder,
                o.shape,
                if o.causal { " causal" } else { "" },
                o.seed,
                o.seed,
            );
            outln!(
                "{}\n",
                report::runs::environment_line(&o.environment, &o.results)
            );
            outln!("{}", report::runs::table(&o.results, &is_version));
        }
        if !a.no_save {
            let dir = writable_profiles(common).join(&recipe.ladder);
            let ids: Vec<&str> = o.results.iter().map(|r| r.version.as_str()).collect();
            manifest::record_versions(
                &dir,
                &recipe.manifest_defaults(),
                &recipe.manifest_entries(&ids, &dir),
                &recipe.manifest_order(),
            )?;
            let path = model::runs::RunFile::store(&dir, &o.results, Some(o.environment.clone()))?;
            eprintln!("results stored in {}", path.display());
        }
        let failed: Vec<&str> = o
            .results
            .iter()
            .filter(|r| r.status == RunStatus::Failed && is_version(&r.version))
            .map(|r| r.version.as_str())
            .collect();
        if !failed.is_empty() {
            ok = false;
            eprintln!("failed at {}: {}", o.shape, failed.join(", "));
        }
        if let (Some(pct), Some(against)) = (a.fail_if_slower, &a.against) {
            for line in slower_than(&o.results, &is_version, against, pct)? {
                ok = false;
                eprintln!("{line}");
            }
        }
    }
    Ok(ok)
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
                    "{} is {slower_pct:.1} % slower than {against} (95 % interval {:.3}–{:.3}×), more than --fail-if-slower {pct}",
                    r.version, s.low, s.high
                )
            })
        })
        .collect())
}

/// The schema of `run --json`.
/// 2: each result carries `verdicts` and `rounds` as objects (see runs.json's schema 2).
pub const RUN_SCHEMA: &str = "stallscope/run/2";

fn profile_any_command(req: &crate::cli::CommandProfile, profiles: &Path) -> Result<bool> {
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} ncu: {msg}").expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("starting");
    let exports = profile::profile_command(&req.request, &cancel, &mut |s| {
        bar.set_message(s.to_string())
    });
    bar.finish_and_clear();
    let exports = exports?;
    let done = import::import_command_profile(
        &import::Request {
            title: req.title.as_deref(),
            ..import::Request::profiled(
                profiles,
                req.ladder.as_deref(),
                &req.version,
                &exports.files,
                req.force,
            )
        },
        &req.request.target.stored(),
    )?;
    eprintln!("{done}");
    Ok(true)
}

fn profile_command(req: &profile::Request, profiles: &Path) -> Result<bool> {
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let placements = req.slots.placements();
    let bars = indicatif::MultiProgress::new();
    let lines: Vec<ProgressBar> = placements
        .iter()
        .map(|_| bars.add(progress_bar()))
        .collect();
    let many = placements.len() > 1;
    let results = profile::run(
        req,
        &cancel,
        &|p, id, i, n| {
            let bar = placements
                .iter()
                .position(|x| x == p)
                .map(|k| &lines[k])
                .unwrap_or(&lines[0]);
            bar.set_length(n as u64);
            bar.set_position(i as u64);
            let on = if many {
                format!("{}: ", p.describe())
            } else {
                String::new()
            };
            bar.set_message(format!("{on}profiling {id} with ncu"));
        },
        &|recipe, v, files| crate::profile_store::store_recipe_profile(profiles, recipe, v, files),
    );
    for b in &lines {
        b.finish_and_clear();
    }
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
    // Paths and names from a manifest or a folder name can hold control characters:
    // shown escaped, as every other message.
    for b in &report.broken {
        eprintln!("error: {}", format::printable_lines(&b.to_string()));
    }
    for w in &report.warnings {
        eprintln!("warning: {}", format::printable_lines(&w.to_string()));
    }
    for f in &report.failures {
        eprintln!("failed: {}", format::printable_lines(&f.to_string()));
    }
    if !report.failures.is_empty() {
        eprintln!("{} file(s) could not be read", report.failures.len());
    }
    report.failures.is_empty() && report.broken.is_empty()
}

/// `stallscope check`: one line per problem on standard output, a summary on standard
/// error; false when there is a problem.
fn check_command(common: &Common) -> Result<bool> {
    let (store, profiles) = check_target(common);
    let checked = model::check::check(&store, &profiles)?;
    for p in &checked.problems {
        outln!("{}", format::printable_lines(&p.to_string()));
    }
    eprintln!(
        "{}: {} ladder(s), {} version(s), {} file(s) checked; {}",
        format::printable(&store.describe(&profiles)),
        checked.ladders,
        checked.versions,
        checked.files,
        match checked.problems.len() {
            0 => "no problems".to_string(),
            n => format!("{n} problem(s)"),
        }
    );
    Ok(checked.problems.is_empty())
}

/// What `check` verifies: `--profiles DIR`; else `./profiles` when it is a folder (the
/// ladders an import writes); else the built-in copy, which the other commands then
/// read.
fn check_target(common: &Common) -> (Store, PathBuf) {
    let local = writable_profiles(common);
    if common.profiles.is_some() || local.join(".").is_dir() {
        (Store::Disk, local)
    } else {
        (Store::Embedded, Store::Embedded.default_profiles())
    }
}

fn print_report(ladders: &[Ladder], format: Format) {
    let analysed: Vec<Analysed> = ladders.iter().map(Analysed::new).collect();
    out!("{}", report::exporter(format).timeline(&analysed));
}

/// The explorer in a terminal; the timeline as text when output is not a terminal
/// (a pipe, a file, CI).
fn explore(common: &Common, ladders: Vec<Ladder>, report: &LoadReport) -> Result<bool> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        crate::tui::run(ladders, common.kernels(), report.lines())?;
    } else {
        print_report(&ladders, Format::Table);
    }
    Ok(finish(report))
}

/// The folder of ladders read first when no path is given (the built-in ones may follow
/// it: [`default_sources`]).
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

/// What an import into `./profiles` changes for the commands run from this folder, said
/// after its message: a new local store (its ladders first, then the built-in ones), and
/// a new ladder named like a built-in one, which stands in for it here.
fn what_an_import_changes(
    profiles: &Path,
    ladders_before: &[PathBuf],
    done: &import::Imported,
) -> String {
    let built_in: Vec<String> = built_in_folders()
        .unwrap_or_default()
        .iter()
        .filter_map(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    let ladder = done.dir.parent().unwrap_or(Path::new("."));
    let name = ladder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut out = String::new();
    if ladders_before.is_empty() {
        let shown: Vec<&str> = built_in
            .iter()
            .map(String::as_str)
            .filter(|n| *n != name)
            .collect();
        let at = std::fs::canonicalize(profiles).unwrap_or_else(|_| profiles.to_path_buf());
        out.push_str(&format!(
            "\n{} is a new local store ({}): stallscope run from this folder shows its ladders first, then the built-in ones ({}) marked \"built in\"; --profiles DIR reads another folder alone",
            profiles.display(),
            at.display(),
            shown.join(", ")
        ));
    }
    let new_ladder = !ladders_before.iter().any(|d| d == ladder);
    if new_ladder && built_in.contains(&name) {
        out.push_str(&format!(
            "\n{} is named like a built-in ladder: stallscope run from this folder shows it in place of the built-in {name} (give another name with --ladder to keep both)",
            ladder.display()
        ));
    }
    out
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

/// The ladder folders read when no path is given, in order, each with its store: those
/// of `--profiles DIR` alone; else those of `./profiles`, then the built-in ones whose
/// names it does not hold (a local ladder stands in for the built-in one of its name);
/// else the built-in ones.
pub fn default_sources(common: &Common) -> Result<Vec<(Store, PathBuf)>> {
    let (store, dir) = default_profiles(common);
    let mut out: Vec<(Store, PathBuf)> = model::ladder_folders(&store, &dir)?
        .into_iter()
        .map(|d| (store.clone(), d))
        .collect();
    if store == Store::Disk && common.profiles.is_none() {
        for d in built_in_folders()? {
            if !out.iter().any(|(_, l)| l.file_name() == d.file_name()) {
                out.push((Store::Embedded, d));
            }
        }
    }
    Ok(out)
}

/// The built-in ladder folders.
fn built_in_folders() -> Result<Vec<PathBuf>> {
    model::ladder_folders(&Store::Embedded, &Store::Embedded.default_profiles())
}

/// Marks a built-in ladder shown beside a local store's ("(built in)" after its title),
/// so that the two are told apart in every view and format.
fn mark_built_in(ladder: &mut Ladder, sources: &[(Store, PathBuf)]) {
    let local = sources.iter().any(|(s, _)| *s == Store::Disk);
    if local && ladder.store == Store::Embedded {
        ladder.title = format!("{} (built in)", ladder.title);
    }
}

pub fn default_ladders(common: &Common, report: &mut LoadReport) -> Result<Vec<Ladder>> {
    let sources = default_sources(common)?;
    let before = report.broken.len();
    let mut ladders = model::load_folders(&sources, report);
    if ladders.is_empty() {
        let (store, dir) = default_profiles(common);
        let broken: Vec<String> = report.broken[before..]
            .iter()
            .map(|b| b.to_string())
            .collect();
        bail!(
            "no ladder of {} could be read: {}",
            store.describe(&dir),
            broken.join("; ")
        );
    }
    for l in &mut ladders {
        mark_built_in(l, &sources);
    }
    Ok(ladders)
}

/// Turns command-line paths into ladders: export files (one loose ladder, in the order
/// given), ladder folders, profiles folders, or folders of exports.
pub fn resolve_paths(paths: &[PathBuf], report: &mut LoadReport) -> Result<Vec<Ladder>> {
    let mut ladders = Vec::new();
    let mut loose: Vec<PathBuf> = Vec::new();
    let flush = |loose: &mut Vec<PathBuf>, ladders: &mut Vec<Ladder>, report: &mut LoadReport| {
        if !loose.is_empty() {
            let files = expand_reports(loose, report)?;
            if !files.is_empty() {
                ladders.push(model::load_files(&files, report)?);
            }
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
                let files = expand_reports(&export_files(p)?, report)?;
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

/// The paths with each `.ncu-rep` report replaced by its pages; a report that cannot
/// be converted is a failure like an unreadable export (kept going past with
/// `--keep-going`).
fn expand_reports(paths: &[PathBuf], report: &mut LoadReport) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if !model::reports::is_report(p) {
            out.push(p.clone());
            continue;
        }
        match model::reports::pages_of(p) {
            Ok(pages) => out.extend(pages),
            Err(e) if report.keep_going => report
                .failures
                .push(crate::ncu::ParseError::file(p, format!("{e:#}"))),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
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
        if model::reports::is_report(&p) {
            files.push(p);
            continue;
        }
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
    let (a, ladder, format) = (args.a.as_str(), args.ladder.as_deref(), args.format.into());
    let mut report = load_report(common);
    let (mut ladder_a, ia, mut ladder_b, ib) = match args.b.as_deref() {
        Some(b) if Path::new(a).is_file() || Path::new(b).is_file() => {
            let (pa, pb) = (Path::new(a), Path::new(b));
            for (given, p) in [(a, pa), (b, pb)] {
                if !p.is_file() {
                    bail!(
                        "{given} is not a file: compare takes two version ids of one ladder, or two export files"
                    );
                }
            }
            let la = model::load_files(&model::reports::expand(&[pa.to_path_buf()])?, &mut report)?;
            let lb = model::load_files(&model::reports::expand(&[pb.to_path_buf()])?, &mut report)?;
            let ia = one_launch(&la, args.launch_a, "--launch-a ID")?;
            let ib = one_launch(&lb, args.launch_b, "--launch-b ID")?;
            (la, ia, lb, ib)
        }
        Some(b) => {
            let (l, ia, ib) = ladder_of_pair(common, &mut report, a, b, ladder)?;
            if ia == ib {
                bail!(
                    "{a} and {b} are one version of {}: name two different versions, or one alone to compare it with its parent",
                    l.name
                );
            }
            (l.clone(), ia, l, ib)
        }
        None => {
            let (l, ib, _) = ladder_of_pair(common, &mut report, a, a, ladder)?;
            let ia = l.parent_of(ib).ok_or_else(|| {
                anyhow!(
                    "{}; name two versions, `stallscope compare A B`",
                    l.no_parent(ib)
                )
            })?;
            (l.clone(), ia, l.clone(), ib)
        }
    };
    if args.shape.is_some() {
        show_shape(std::slice::from_mut(&mut ladder_a), args.shape)?;
        show_shape(std::slice::from_mut(&mut ladder_b), args.shape)?;
    }
    let (va, vb) = (&ladder_a.versions[ia], &ladder_b.versions[ib]);
    let an_a = analysis::analyse(&ladder_a, va);
    let an_b = analysis::analyse(&ladder_b, vb);
    let comparison = compare(
        &an_a,
        &an_b,
        va.readable_listing().zip(vb.readable_listing()),
    );
    let name = |l: &Ladder, i: usize| {
        let v = &l.versions[i];
        if l.name == "files" {
            format!("{} ({})", v.title, l.title)
        } else {
            format!("{} {}", v.id, v.title)
        }
    };
    // A file's side is named by the path given; a version's as the report names it.
    let file_of = |given: &str, l: &Ladder| (l.name == "files").then(|| given.to_string());
    let (path_a, path_b) = match args.b.as_deref() {
        Some(b) => (file_of(a, &ladder_a), file_of(b, &ladder_b)),
        None => (None, None),
    };
    let input = CompareInput {
        a_name: name(&ladder_a, ia),
        b_name: name(&ladder_b, ib),
        a: report::CompareSide::of(va, path_a),
        b: report::CompareSide::of(vb, path_b),
        comparison: &comparison,
        run_shape: ladder_a.shown_shape().map(|s| s.to_string()),
        other_shape: ladder_a
            .shown
            .is_some_and(|s| Some(s) != ladder_a.reference_run_shape()),
        listing_error: va.listing_error().or_else(|| vb.listing_error()),
        speed: ladder_a
            .shown_run(va)
            .zip(ladder_b.shown_run(vb))
            .and_then(|(ra, rb)| analysis::speed::speedup(rb, ra)),
    };
    let exporter = match terminal_width(format, args.output.as_deref(), false) {
        Some(w) => report::table_exporter(Some(w)),
        None => report::exporter(format),
    };
    emit(&exporter.compare(&input), args.output.as_deref())?;
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

/// The ladder holding versions `a` and `b` ([`find_pair`]) and their positions in it:
/// the manifests say which ladder that is, and only it is read. A ladder whose manifest
/// cannot be read is left out, reported as broken.
fn ladder_of_pair(
    common: &Common,
    report: &mut LoadReport,
    a: &str,
    b: &str,
    ladder: Option<&str>,
) -> Result<(Ladder, usize, usize)> {
    let sources = default_sources(common)?;
    let mut dirs = Vec::new();
    let mut index = Vec::new();
    for (store, d) in &sources {
        match model::ladder_ids(store, d) {
            Ok(ids) => {
                index.push(ids);
                dirs.push((store, d));
            }
            Err(e) => report.broken.push(model::BrokenLadder::new(d, &e)),
        }
    }
    // A ladder asked for by name that cannot be read says why, not that it is missing.
    fn prefix(s: &str) -> Option<&str> {
        s.split_once(':').map(|(l, _)| l)
    }
    if let Some(w) = ladder.or_else(|| prefix(a)).or_else(|| prefix(b))
        && !index.iter().any(|(name, _)| name == w)
        && let Some(b) = report.broken.iter().find(|b| b.name == w)
    {
        bail!("{b}");
    }
    let (at, va, vb) = find_pair(&index, a, b, ladder)?;
    let (store, dir) = dirs[at];
    let mut l = load_one(store, dir, report)?;
    mark_built_in(&mut l, &sources);
    let position = |id: &str| {
        l.version_index(id)
            .with_context(|| format!("{} has no version {id}", l.name))
    };
    let (ia, ib) = (position(va)?, position(vb)?);
    Ok((l, ia, ib))
}

/// Loads the ladder folder `dir` alone; its error says which ladder cannot be read.
fn load_one(store: &Store, dir: &Path, report: &mut LoadReport) -> Result<Ladder> {
    model::load_ladder(store, dir, report)
        .map_err(|e| anyhow!("{}", model::BrokenLadder::new(dir, &e)))
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
        return Err(no_ladder(w, &names));
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
    // One version given alone (to compare with its parent) is named once.
    let missing = if a == b {
        format!("no ladder holds {a:?} (nor is it a file)")
    } else {
        format!("no ladder holds both {a:?} and {b:?} (and neither is a file)")
    };
    Err(anyhow!("{missing}; versions: {}", known.join("; ")))
}
