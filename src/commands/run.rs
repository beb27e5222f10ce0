//! `stallscope run`: every comparison of the call run, printed (a table, or JSON) and
//! stored, and the verdict that ends it.

use super::ladders::writable_profiles;
use super::options;
use super::output::progress_bar;
use crate::analysis;
use crate::cli::{Common, RunArgs};
use crate::gpu::host::{placement, runner};
use crate::model::{self, RunStatus};
use crate::process;
use crate::report::{self, format};
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use std::sync::atomic::AtomicBool;

/// The JSON `run --json` prints: every comparison of the call.
#[derive(serde::Serialize)]
struct RunJson<'a> {
    schema: &'static str,
    ladder: &'a str,
    comparisons: Vec<ComparisonJson<'a>>,
}

#[derive(serde::Serialize)]
struct ComparisonJson<'a> {
    /// The problem: its kind, dimensions and flags.
    shape: model::Shape,
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

/// The schema of `run --json`.
/// 3: a comparison's `shape` names its kind and holds its flags (no `causal` beside it).
/// 2: each result carries `verdicts` and `rounds` as objects (see runs.json's schema 2).
pub const RUN_SCHEMA: &str = "stallscope/run/3";

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

pub(super) fn run_command(common: &Common, a: &RunArgs) -> Result<bool> {
    let reqs = options::run_requests(a, common)?;
    let slots = options::slots(&a.slots)?;
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let many = reqs.len() > 1 || slots.placements().len() > 1;
    let outcomes = run_with_progress(reqs, &slots, &cancel, many);
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
    note_gpu_models(&done);
    if a.json {
        print_json(&recipe.ladder, &done, &is_version)?;
    }
    for o in &done {
        if !a.json {
            print_comparison(&recipe.ladder, o, &is_version);
        }
        if !a.no_save {
            let dir = writable_profiles(common).join(&recipe.ladder);
            let path = crate::store_jobs::store_run(&dir, o, common.size_limits())?;
            eprintln!("results stored in {}", path.display());
        }
        if let Some(line) = failed_line(o) {
            ok = false;
            eprintln!("{line}");
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

/// Runs the comparisons over the slots, with one progress line per slot (GPU or
/// launcher job) on standard error and a line per finished result; with `many` slots or
/// comparisons each line names its slot.
fn run_with_progress(
    reqs: Vec<runner::Request>,
    slots: &placement::Slots,
    cancel: &AtomicBool,
    many: bool,
) -> Vec<Result<runner::Outcome>> {
    let placements = slots.placements();
    let bars = indicatif::MultiProgress::new();
    let lines: Vec<ProgressBar> = placements
        .iter()
        .map(|_| bars.add(progress_bar()))
        .collect();
    let bar_of = |p: &placement::Placement| {
        placements
            .iter()
            .position(|x| x == p)
            .map(|i| &lines[i])
            .unwrap_or(&lines[0])
    };
    let progress = |p: &placement::Placement, e: runner::Progress| {
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
    let outcomes = runner::run_many(reqs, slots, cancel, &progress);
    for b in &lines {
        b.finish_and_clear();
    }
    outcomes
}

/// Says so when the comparisons ran on different GPU models: their ratios are not
/// comparable across them.
fn note_gpu_models(done: &[runner::Outcome]) {
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
}

/// `run --json`: every comparison of the call, in one document on standard output.
fn print_json(
    ladder: &str,
    done: &[runner::Outcome],
    is_version: &dyn Fn(&str) -> bool,
) -> Result<()> {
    let out = RunJson {
        schema: RUN_SCHEMA,
        ladder,
        comparisons: done
            .iter()
            .map(|o| ComparisonJson {
                shape: o.shape,
                seed: o.seed,
                environment: &o.environment,
                results: ResultJson::all(&o.results, is_version),
            })
            .collect(),
    };
    outln!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

/// One comparison as a table on standard output: its shape, seed and GPU, the
/// environment line, then a row per result.
fn print_comparison(ladder: &str, o: &runner::Outcome, is_version: &dyn Fn(&str) -> bool) {
    let on = o
        .results
        .iter()
        .find_map(|r| r.gpu_index)
        .map(|g| format!(" · GPU {g}"))
        .unwrap_or_default();
    outln!(
        "{} · shape {} · seed {} (replay with --seed {}){on}",
        ladder,
        o.shape,
        o.seed,
        o.seed,
    );
    outln!(
        "{}\n",
        report::runs::environment_line(&o.environment, &o.results)
    );
    outln!("{}", report::runs::table(&o.results, is_version));
}

/// What `run` says of a comparison in which versions failed ([`failed_versions`]: a
/// failed baseline is none), which makes it end non-zero.
///
/// [`failed_versions`]: crate::store_jobs::failed_versions
pub(crate) fn failed_line(o: &runner::Outcome) -> Option<String> {
    let failed = crate::store_jobs::failed_versions(&o.recipe, &o.results);
    (!failed.is_empty()).then(|| format!("failed at {}: {}", o.shape, failed.join(", ")))
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

#[cfg(test)]
mod tests {
    use crate::store_jobs::{failed_versions, run_with_a_failed_baseline};

    #[test]
    fn a_failed_baseline_counts_alike_in_run_and_in_the_explorer() {
        let out = run_with_a_failed_baseline();
        assert_eq!(failed_versions(&out.recipe, &out.results), ["v02"]);
        assert_eq!(
            super::failed_line(&out),
            Some(format!(
                "failed at {}: v02",
                crate::kinds::attention::shape(1, 64, 1024, 128, false)
            ))
        );
        assert_eq!(
            crate::tui::jobs::ran_message(&out),
            "ran 3 version(s), 1 failed; seed 7"
        );
    }
}
