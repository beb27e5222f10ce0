//! The table `stallscope run` prints: per candidate its time and spread over rounds,
//! throughput, clock, power and energy, its errors and checks, and its speed against the
//! best version and each baseline of the same run, with the verdict.

use super::format::{self, UNKNOWN};
use super::grid::{Grid, Row, render_text};
use crate::analysis::Kind;
use crate::analysis::speed::{Speedup, Unclear, speedup};
use crate::model::runs::{Convergence, Environment, Protocol};
use crate::model::{RunResult, RunStatus};

/// A ratio and its verdict in a few characters: `1.02× faster`, `1.00× unclear:
/// cycles` (the reason in one word, [`unclear_word`]).
pub fn ratio_cell(s: Option<&Speedup>) -> String {
    match s {
        Some(Speedup {
            ratio,
            why: Some(why),
            ..
        }) => format!("{ratio:.2}× unclear: {}", unclear_word(*why)),
        Some(s) => format!("{:.2}× {}", s.ratio, s.verdict.word()),
        None => UNKNOWN.to_string(),
    }
}

/// Why a verdict is unclear, in the one word the table has room for.
pub fn unclear_word(why: Unclear) -> &'static str {
    match why {
        Unclear::NotConverged => "noisy",
        Unclear::ClocksApart => "clocks",
        Unclear::TimeAndCyclesDisagree => "cycles",
        Unclear::DifferentRuns => "runs",
        Unclear::DifferentRegimes => "regime",
    }
}

/// How a result was timed, in one phrase: `sustained, 12 rounds (converged to ±1 %
/// against v28) × ≥ 20 reps of 65 launches (CUDA graph), windows ≥ 200 ms (mean 231),
/// 310 ms warm-up`.
pub fn protocol_words(p: &Protocol) -> String {
    let rounds = match &p.convergence {
        Some(c) => format!(
            "{} rounds ({}{})",
            p.rounds,
            c.ending().unwrap_or_else(|| "a fixed count".to_string()),
            c.interval_pct
                .map(|h| format!(
                    ", this one ±{h:.2} %{}",
                    if c.decided { ", decided" } else { "" }
                ))
                .unwrap_or_default()
        ),
        None => format!("{} rounds", p.rounds),
    };
    let windows = match p.min_window_ms {
        Some(m) => format!("windows ≥ {m:.0} ms (mean {:.0})", p.window_ms),
        None => format!("~{:.0} ms windows", p.window_ms),
    };
    format!(
        "{}, {rounds} × ≥ {} reps of {} launches (CUDA graph), {windows}, {:.0} ms warm-up",
        p.regime, p.reps, p.launches_per_rep, p.warmup_ms
    )
}

/// The spread over rounds as ± percent of the median.
pub fn spread(r: &RunResult) -> Option<f64> {
    let m = r.median_us?;
    if r.rounds.len() < 2 || m <= 0.0 {
        return None;
    }
    let us = r.rounds_us();
    let lo = us.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = us.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((hi - lo) / 2.0 / m * 100.0)
}

/// A run result's figures as text: the one place the run table, the HTML report's run
/// tables and the explorer's inspect view take them from, each number written by
/// report/format.rs ([`format::value`] of its kind where it has one). `None`: the result
/// lacks the figure.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields {
    /// The median time in µs.
    pub median: Option<String>,
    /// The spread over rounds: `±1.2%`.
    pub spread: Option<String>,
    /// The fastest and the slowest repetition in µs: `106.9–112.6`.
    pub range: Option<String>,
    pub tflops: Option<String>,
    /// The SM clock in MHz.
    pub clock: Option<String>,
    /// Board power in W.
    pub power: Option<String>,
    /// Energy per launch in mJ.
    pub energy: Option<String>,
    /// TFLOPS per watt.
    pub efficiency: Option<String>,
    /// The relative L2 error against the reference.
    pub rel_err: Option<String>,
    /// The largest absolute error.
    pub max_abs_err: Option<String>,
    /// The correctness checks passed of those that ran: `8/8`; `None` where none ran.
    pub checks: Option<String>,
    /// The cases whose check failed.
    pub failed: Vec<String>,
    /// What held the clocks back: `none`, or the reasons.
    pub throttle: Option<String>,
}

/// A time in µs as the tables write it: in µs, a large one in its own unit (`1.20 s`).
fn micros(us: f64) -> String {
    format::value(Kind::Time, Some(us * 1e3))
}

/// A run result's figures as text.
pub fn fields(r: &RunResult) -> Fields {
    let ran: Vec<_> = r
        .checks
        .iter()
        .filter(|c| c.status != RunStatus::Skipped)
        .collect();
    let ok = ran.iter().filter(|c| c.status == RunStatus::Ok).count();
    Fields {
        median: r.median_us.map(micros),
        spread: spread(r).map(plus_minus),
        range: match (r.min_us, r.max_us) {
            (Some(lo), Some(hi)) => Some(format!("{}–{}", micros(lo), micros(hi))),
            _ => None,
        },
        tflops: r.tflops.map(|t| format::value(Kind::Tflops, Some(t))),
        clock: r
            .sm_clock_mhz
            .map(|c| format::value(Kind::Frequency, Some(c * 1e6))),
        power: r.power_w.map(|w| format::value(Kind::Power, Some(w))),
        energy: r.energy_mj.map(|e| format::value(Kind::Energy, Some(e))),
        efficiency: r
            .tflops_per_watt()
            .map(|e| format::value(Kind::Efficiency, Some(e))),
        rel_err: r.rel_l2_err.map(format::error),
        max_abs_err: r.max_abs_err.map(format::error),
        checks: (!ran.is_empty()).then(|| format!("{ok}/{}", ran.len())),
        failed: ran
            .iter()
            .filter(|c| c.status == RunStatus::Failed)
            .map(|c| c.case.clone())
            .collect(),
        throttle: r.throttle.as_ref().map(|t| {
            if t.is_empty() {
                "none".into()
            } else {
                t.join(", ")
            }
        }),
    }
}

/// A spread in percent as the run cells write it: `±1.2%`.
fn plus_minus(pct: f64) -> String {
    format!("±{}%", format::value(Kind::Percent, Some(pct)))
}

/// The run table. `is_version` tells a ladder version from a baseline. A ratio column
/// is shown for each of the problem kind's reference baselines that ran.
pub fn table(results: &[RunResult], is_version: &dyn Fn(&str) -> bool) -> String {
    let timed = |r: &&RunResult| r.status == RunStatus::Ok && r.median_us.is_some();
    let best = results
        .iter()
        .filter(timed)
        .filter(|r| is_version(&r.version))
        .min_by(|a, b| a.median_us.partial_cmp(&b.median_us).expect("finite"));
    let references = results
        .first()
        .map_or(&[][..], |r| r.shape.kind().reference_baselines());
    let refs: Vec<&RunResult> = references
        .iter()
        .filter_map(|id| results.iter().filter(timed).find(|r| r.version == *id))
        .collect();
    let mut header: Vec<String> = [
        "version",
        "µs",
        "±rounds",
        "rounds",
        "TFLOPS",
        "MHz",
        "W",
        "mJ/launch",
        "TFLOPS/W",
        "rel.err",
        "max abs",
        "checks",
        "vs best",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(refs.iter().map(|r| format!("vs {}", r.version)));
    header.push("status".into());
    let mut rows = Vec::new();
    for r in results {
        let t = timed(&r);
        let vs = |other: &RunResult| {
            if t {
                ratio_cell(speedup(r, other).as_ref())
            } else {
                UNKNOWN.to_string()
            }
        };
        let f = fields(r);
        let cell = |x: Option<String>| x.unwrap_or_else(|| UNKNOWN.to_string());
        let mut row = vec![
            r.version.clone(),
            cell(f.median),
            cell(f.spread),
            rounds_cell(r),
            cell(f.tflops),
            cell(f.clock),
            cell(f.power),
            cell(f.energy),
            cell(f.efficiency),
            cell(f.rel_err),
            cell(f.max_abs_err),
            cell(f.checks),
            match best {
                Some(b) if is_version(&r.version) => vs(b),
                _ => UNKNOWN.to_string(),
            },
        ];
        row.extend(refs.iter().map(|b| vs(b)));
        row.push(match r.status {
            RunStatus::Ok => {
                // A path's kernel first: the resources that follow are its own.
                let mut notes: Vec<String> = r.kernel.iter().map(|k| format!("path {k}")).collect();
                notes.extend(r.resources.iter().cloned());
                let unsettled = r.unsettled_rounds();
                if unsettled > 0 {
                    notes.push(format!(
                        "warm-up unsettled in {unsettled} of {} rounds",
                        r.rounds.len()
                    ));
                }
                if notes.is_empty() {
                    "ok".into()
                } else {
                    format!("ok ({})", notes.join("; "))
                }
            }
            RunStatus::Failed => format!("FAILED: {}", r.message.as_deref().unwrap_or("")),
            RunStatus::Skipped => format!("skipped: {}", r.message.as_deref().unwrap_or("")),
        });
        rows.push(Row::Cells(row));
    }
    let mut out = render_text(&Grid {
        preamble: Vec::new(),
        header,
        rows,
        text_columns: Vec::new(),
    });
    for line in legend(results) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// How many rounds a candidate had and, where the stopping rule did not settle it, the
/// interval it reached: `12`, `20 ±1.6%`, `12 ref` for the reference, `5
/// decided` for one that sat out the rounds after its verdict settled.
fn rounds_cell(r: &RunResult) -> String {
    let Some(p) = &r.protocol else {
        return UNKNOWN.to_string();
    };
    match &p.convergence {
        Some(c) if c.against == r.version => format!("{} ref", p.rounds),
        Some(c) if c.decided => format!("{} decided", p.rounds),
        Some(c) if !c.converged => match c.interval_pct {
            Some(h) => format!("{} {}", p.rounds, plus_minus(h)),
            None => format!("{} ✗", p.rounds),
        },
        _ => p.rounds.to_string(),
    }
}

/// What the table's marks mean, for the ones it shows: the unclear verdicts' words and
/// the intervals that did not converge.
fn legend(results: &[RunResult]) -> Vec<String> {
    let mut out = Vec::new();
    let convergence = results
        .iter()
        .filter_map(|r| r.protocol.as_ref()?.convergence.as_ref())
        .find(|c| !c.converged);
    if let Some(c) = convergence {
        out.push(format!(
            "rounds: a figure after the count is the 95 % interval a candidate reached against {} when time was up: wider than the ±{:.1} % target, or within it but across 1 and an edge of the ±{:.0} % band (its verdict open)",
            c.against,
            c.target_pct,
            crate::analysis::speed::EQUIVALENCE_BAND * 100.0
        ));
    }
    let decided = results
        .iter()
        .filter_map(|r| r.protocol.as_ref()?.convergence.as_ref())
        .find(|c| c.decided);
    if let Some(c) = decided {
        out.push(format!(
            "rounds: decided = its interval against {} lay wholly beyond ±{:.0} % (the verdict settled), and it sat out the rounds after",
            c.against,
            crate::analysis::speed::EQUIVALENCE_BAND * 100.0
        ));
    }
    let words: std::collections::BTreeSet<&str> = results
        .iter()
        .flat_map(|a| results.iter().map(move |b| (a, b)))
        .filter_map(|(a, b)| speedup(a, b)?.why)
        .map(unclear_word)
        .collect();
    if !words.is_empty() {
        out.push(format!(
            "unclear: {}",
            [
                Unclear::NotConverged,
                Unclear::ClocksApart,
                Unclear::TimeAndCyclesDisagree,
                Unclear::DifferentRuns,
                Unclear::DifferentRegimes
            ]
            .iter()
            .filter(|w| words.contains(unclear_word(**w)))
            .map(|w| format!("{} = {}", unclear_word(*w), unclear_meaning(*w)))
            .collect::<Vec<_>>()
            .join("; ")
        ));
    }
    out
}

fn unclear_meaning(why: Unclear) -> String {
    use crate::analysis::speed::{CLOCK_BAND, EQUIVALENCE_BAND};
    match why {
        Unclear::NotConverged => format!(
            "the 95 % interval includes 1 and is wider than ±{:.0} %",
            EQUIVALENCE_BAND * 100.0
        ),
        Unclear::ClocksApart => format!(
            "SM clocks more than {:.0} % apart without settled sustained warm-ups",
            CLOCK_BAND * 100.0
        ),
        Unclear::TimeAndCyclesDisagree => {
            "the verdict in cycles (time × SM clock) is another than in time".into()
        }
        Unclear::DifferentRuns => "measured in different runs".into(),
        Unclear::DifferentRegimes => "measured under different regimes".into(),
    }
}

/// One line on what the run ran on and how it was timed.
pub fn environment_line(env: &Environment, results: &[RunResult]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(g) = &env.gpu {
        parts.push(g.clone());
    }
    if let Some(d) = &env.driver {
        parts.push(format!("driver {d}"));
    }
    if let Some(c) = &env.cuda_driver {
        parts.push(format!("CUDA {c}"));
    }
    for (name, version) in &env.libraries {
        parts.push(format!("{name} {version}"));
    }
    let protocols: Vec<&Protocol> = results.iter().filter_map(|r| r.protocol.as_ref()).collect();
    if let Some(p) = protocols.first() {
        let rounds = protocols.iter().map(|p| p.rounds).max().unwrap_or(0);
        let stop = p
            .convergence
            .as_ref()
            .and_then(Convergence::ending)
            .map(|e| format!(", {e}"))
            .unwrap_or_default();
        let mean = protocols.iter().map(|p| p.window_ms).sum::<f64>() / protocols.len() as f64;
        parts.push(format!(
            "{} regime, {rounds} rounds{stop} · windows ≥ {:.0} ms (mean {mean:.0}), CUDA graphs",
            p.regime,
            p.min_window_ms.unwrap_or(p.window_ms)
        ));
    }
    if let Some(why) = &env.nvml {
        parts.push(format!("no clocks or energy: {why}"));
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::runs::CaseCheck;

    fn check(case: &str, status: RunStatus) -> CaseCheck {
        CaseCheck {
            case: case.into(),
            shape: crate::kinds::attention::shape(1, 64, 1024, 128, false),
            status,
            rel_l2_err: None,
            max_abs_err: None,
            message: None,
        }
    }

    #[test]
    fn a_result_s_figures_are_written_as_their_kinds_are() {
        let mut r = RunResult::new(
            "v1",
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            RunStatus::Ok,
        );
        r.median_us = Some(109.94);
        r.min_us = Some(106.9);
        r.max_us = Some(1595.2);
        r.tflops = Some(312.74);
        r.sm_clock_mhz = Some(1901.3);
        r.power_w = Some(702.4);
        r.energy_mj = Some(77.4651);
        r.rel_l2_err = Some(2.914e-4);
        r.max_abs_err = Some(4.96e-5);
        r.throttle = Some(Vec::new());
        let f = fields(&r);
        assert_eq!(f.median.as_deref(), Some("109.9"));
        assert_eq!(f.range.as_deref(), Some("106.9–1595"));
        assert_eq!(f.tflops.as_deref(), Some("312.7"));
        assert_eq!(f.clock.as_deref(), Some("1901"));
        assert_eq!(f.power.as_deref(), Some("702"));
        assert_eq!(f.energy.as_deref(), Some("77.465"));
        assert_eq!(f.efficiency.as_deref(), Some("0.445"));
        assert_eq!(f.rel_err.as_deref(), Some("2.9e-4"));
        assert_eq!(f.max_abs_err.as_deref(), Some("5.0e-5"));
        assert_eq!(f.throttle.as_deref(), Some("none"));
        assert_eq!(f.spread, None, "no rounds");
        assert_eq!(f.checks, None, "no checks");
    }

    /// A version that ran a path's kernel at its shape says which, before that
    /// kernel's registers; one that ran its own says nothing of kernels.
    #[test]
    fn the_table_names_a_path_s_kernel() {
        let shape = crate::kinds::attention::shape(1, 16, 256, 128, false);
        let mut path = RunResult::new("v31", shape, RunStatus::Ok);
        path.median_us = Some(5.0);
        path.kernel = Some("attn_v31_small".into());
        path.resources = Some("122 regs".into());
        let mut own = RunResult::new("v30", shape, RunStatus::Ok);
        own.median_us = Some(9.0);
        own.resources = Some("168 regs, 12 B spilled".into());
        let t = table(&[path, own], &|id: &str| id.starts_with('v'));
        assert!(t.contains("ok (path attn_v31_small; 122 regs)"), "{t}");
        assert!(t.contains("ok (168 regs, 12 B spilled)"), "{t}");
    }

    #[test]
    fn checks_count_the_cases_that_ran() {
        let mut r = RunResult::new(
            "v1",
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            RunStatus::Ok,
        );
        r.checks = vec![check("a", RunStatus::Skipped)];
        assert_eq!(fields(&r).checks, None, "none ran");
        r.checks.extend([
            check("b", RunStatus::Ok),
            check("c", RunStatus::Failed),
            check("d", RunStatus::Ok),
        ]);
        let f = fields(&r);
        assert_eq!(f.checks.as_deref(), Some("2/3"));
        assert_eq!(f.failed, ["c"]);
    }
}
