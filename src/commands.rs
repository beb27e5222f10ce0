//! What each subcommand does: resolve its inputs to ladders, then hand them to the
//! report, the comparison, the importer or the explorer.

use crate::analysis::{self, compare};
use crate::cli::{Cli, Command, Common};
use crate::gpu::{profile, runner};
use crate::import;
use crate::model::RunStatus;
use crate::model::{self, Ladder, LoadReport, Store, manifest};
use crate::report::format;
use crate::report::{self, Analysed, CompareInput, Format};
use anyhow::{Context, Result, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Runs the command line; `Ok(false)` means it finished but some inputs failed.
pub fn run(cli: Cli) -> Result<bool> {
    let common = cli.common.clone();
    match cli.command {
        None => {
            let mut report = load_report(&common);
            let ladders = if cli.files.is_empty() {
                default_ladders(&common, &mut report)?
            } else {
                resolve_paths(&cli.files, &mut report)?
            };
            explore(ladders, &report)
        }
        Some(Command::Open { dir }) => {
            let mut report = load_report(&common);
            let ladders = resolve_paths(&[dir], &mut report)?;
            explore(ladders, &report)
        }
        Some(Command::Report {
            paths,
            format,
            ladder,
        }) => {
            let mut report = load_report(&common);
            let mut ladders = if paths.is_empty() {
                default_ladders(&common, &mut report)?
            } else {
                resolve_paths(&paths, &mut report)?
            };
            if let Some(name) = ladder {
                ladders.retain(|l| l.name == name);
                if ladders.is_empty() {
                    bail!("no ladder named {name:?}");
                }
            }
            print_report(&ladders, format);
            Ok(finish(&report))
        }
        Some(Command::Compare {
            a,
            b,
            ladder,
            format,
        }) => compare_command(&common, &a, &b, ladder.as_deref(), format),
        Some(Command::Import {
            files,
            version_id,
            ladder,
            title,
            kernel,
            baseline,
            force,
        }) => {
            let profiles = writable_profiles(&common);
            let done = import::import(&import::Request {
                profiles: &profiles,
                ladder: ladder.as_deref(),
                version: &version_id,
                title: title.as_deref(),
                kernel: kernel.as_deref(),
                baseline,
                files: &files,
                force,
            })?;
            eprintln!("{done}");
            Ok(true)
        }
        Some(Command::Run {
            versions,
            shape,
            causal,
            baselines,
            json,
            seed,
            reps,
            timeout,
            kernels,
            no_save,
        }) => {
            let req = runner::Request {
                kernels: &kernels,
                versions: &versions,
                shape,
                causal,
                baselines,
                seed,
                reps,
                timeout: Duration::from_secs(timeout),
            };
            run_command(&req, json, (!no_save).then(|| writable_profiles(&common)))
        }
        Some(Command::Profile {
            versions,
            shape,
            causal,
            set,
            timeout,
            kernels,
        }) => {
            let profiles = writable_profiles(&common);
            let req = profile::Request {
                kernels: &kernels,
                versions: &versions,
                shape,
                causal,
                profiles: &profiles,
                set: &set,
                timeout: Duration::from_secs(timeout),
            };
            profile_command(&req)
        }
        Some(Command::Build {
            versions,
            arch,
            head_dim,
            kernels,
        }) => {
            let ladder = crate::gpu::load_kernels(&kernels)?;
            let mut ok = true;
            for b in crate::gpu::build(&ladder, &versions, &arch, head_dim)? {
                match b.outcome {
                    Ok(c) => println!(
                        "{:<16} ok   {}",
                        b.id,
                        crate::gpu::nvrtc::resource_summary(&c.log)
                            .unwrap_or_else(|| "(cached)".into())
                    ),
                    Err(e) => {
                        ok = false;
                        println!("{:<16} FAILED\n{e:#}", b.id);
                    }
                }
            }
            Ok(ok)
        }
        Some(Command::Child(args)) => {
            crate::gpu::child::main(&args)?;
            Ok(true)
        }
    }
}

fn run_command(req: &runner::Request, json: bool, save_to: Option<PathBuf>) -> Result<bool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    let outcome = runner::run(req, &cancel, &mut |p| match p {
        runner::Progress::Started { id, index, total } => {
            bar.set_length(total as u64);
            bar.set_position(index as u64);
            bar.set_message(format!("running {id}"));
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
    let header = format!(
        "{} · shape {}{} · seed {} (replay with --seed {}) · {}",
        outcome.ladder.ladder,
        outcome.shape,
        if req.causal { " causal" } else { "" },
        outcome.seed,
        outcome.seed,
        outcome
            .results
            .iter()
            .find_map(|r| r.gpu.clone())
            .unwrap_or_else(|| "GPU unknown".into())
    );
    if json {
        println!("{}", serde_json::to_string_pretty(&outcome.results)?);
    } else {
        println!("{header}\n");
        print!("{}", runner::table(&outcome.results, &outcome.ladder));
    }
    if let Some(profiles) = save_to {
        let path = runner::save(&profiles, &outcome.ladder, &outcome.results)?;
        eprintln!("results stored in {}", path.display());
    }
    let failed: Vec<&str> = outcome
        .results
        .iter()
        .filter(|r| r.status == RunStatus::Failed && outcome.ladder.version(&r.version).is_some())
        .map(|r| r.version.as_str())
        .collect();
    if !failed.is_empty() {
        eprintln!("failed: {}", failed.join(", "));
    }
    Ok(failed.is_empty())
}

fn profile_command(req: &profile::Request) -> Result<bool> {
    let cancel = Arc::new(AtomicBool::new(false));
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
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
        failures: Vec::new(),
    }
}

/// Lists what `--keep-going` let pass; false when anything failed.
fn finish(report: &LoadReport) -> bool {
    for f in &report.failures {
        eprintln!("failed: {}", format::printable_lines(&f.to_string()));
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
fn explore(ladders: Vec<Ladder>, report: &LoadReport) -> Result<bool> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        crate::tui::run(ladders)?;
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

/// The CSV exports of a folder, by name.
fn export_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.ends_with(".csv") || name.ends_with(".csv.gz")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!(
            "{} holds no ladder ({}) and no .csv or .csv.gz exports",
            dir.display(),
            manifest::FILE_NAME
        );
    }
    Ok(files)
}

fn compare_command(
    common: &Common,
    a: &str,
    b: &str,
    ladder: Option<&str>,
    format: Format,
) -> Result<bool> {
    let mut report = load_report(common);
    let (pa, pb) = (Path::new(a), Path::new(b));
    let (ladder_a, ia, ladder_b, ib) = if pa.is_file() || pb.is_file() {
        let la = model::load_files(&[pa.to_path_buf()], &mut report)?;
        let lb = model::load_files(&[pb.to_path_buf()], &mut report)?;
        (la, 0, lb, 0)
    } else {
        let ladders = default_ladders(common, &mut report)?;
        let (l, ia, ib) = find_pair(&ladders, a, b, ladder)?;
        (l.clone(), ia, l.clone(), ib)
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
    print!("{}", report::exporter(format).compare(&input));
    Ok(finish(&report))
}

/// Finds two versions in one ladder: `--ladder`, a `LADDER:ID` prefix, or the first
/// ladder holding both.
fn find_pair<'a>(
    ladders: &'a [Ladder],
    a: &str,
    b: &str,
    ladder: Option<&str>,
) -> Result<(&'a Ladder, usize, usize)> {
    fn split(s: &str) -> (Option<&str>, &str) {
        match s.split_once(':') {
            Some((l, v)) => (Some(l), v),
            None => (None, s),
        }
    }
    let ((la, va), (lb, vb)) = (split(a), split(b));
    let wanted = ladder.or(la).or(lb);
    for l in ladders {
        if wanted.is_some_and(|w| w != l.name) {
            continue;
        }
        if let (Some(ia), Some(ib)) = (l.version_index(va), l.version_index(vb)) {
            return Ok((l, ia, ib));
        }
    }
    let known: Vec<String> = ladders
        .iter()
        .map(|l| {
            format!(
                "{}: {}",
                l.name,
                l.versions
                    .iter()
                    .map(|v| v.id.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
        .collect();
    Err(anyhow!(
        "no ladder holds both {a:?} and {b:?} (and neither is a file); versions: {}",
        known.join("; ")
    ))
}
