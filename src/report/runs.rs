//! The table `stallscope run` prints: per candidate its time and spread over rounds,
//! throughput, clock, power and energy, its errors and checks, and its speed against the
//! best version and each baseline of the same run, with the verdict.

use super::format::{self, UNKNOWN};
use super::grid::{Grid, Row, render_text};
use crate::analysis::speed::{Speedup, speedup};
use crate::model::runs::Environment;
use crate::model::{RunResult, RunStatus};

/// The baselines a ratio column is shown for, when they ran.
const REFERENCES: &[&str] = &["fa2", "cudnn"];

/// A ratio and its verdict in a few characters: `1.02× faster`.
pub fn ratio_cell(s: Option<&Speedup>) -> String {
    match s {
        Some(s) => format!("{:.2}× {}", s.ratio, s.verdict.word()),
        None => UNKNOWN.to_string(),
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| UNKNOWN.to_string())
}

/// The spread over rounds as ± percent of the median.
pub fn spread(r: &RunResult) -> Option<f64> {
    let m = r.median_us?;
    if r.rounds_us.len() < 2 || m <= 0.0 {
        return None;
    }
    let lo = r.rounds_us.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = r
        .rounds_us
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    Some((hi - lo) / 2.0 / m * 100.0)
}

fn checks(r: &RunResult) -> String {
    if r.checks.is_empty() {
        return UNKNOWN.to_string();
    }
    let ran = r
        .checks
        .iter()
        .filter(|c| c.status != RunStatus::Skipped)
        .count();
    let ok = r
        .checks
        .iter()
        .filter(|c| c.status == RunStatus::Ok)
        .count();
    format!("{ok}/{ran}")
}

/// The run table. `is_version` tells a ladder version from a baseline.
pub fn table(results: &[RunResult], is_version: &dyn Fn(&str) -> bool) -> String {
    let timed = |r: &&RunResult| r.status == RunStatus::Ok && r.median_us.is_some();
    let best = results
        .iter()
        .filter(timed)
        .filter(|r| is_version(&r.version))
        .min_by(|a, b| a.median_us.partial_cmp(&b.median_us).expect("finite"));
    let refs: Vec<&RunResult> = REFERENCES
        .iter()
        .filter_map(|id| results.iter().filter(timed).find(|r| r.version == *id))
        .collect();
    let mut header: Vec<String> = [
        "version",
        "µs",
        "±rounds",
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
        let mut row = vec![
            r.version.clone(),
            opt(r.median_us, format::micros),
            opt(spread(r), |s| format!("±{s:.1}%")),
            opt(r.tflops, |t| format!("{t:.1}")),
            opt(r.sm_clock_mhz, |c| format!("{c:.0}")),
            opt(r.power_w, |w| format!("{w:.0}")),
            opt(r.energy_mj, |e| format!("{e:.3}")),
            opt(r.tflops_per_watt(), |e| format!("{e:.3}")),
            opt(r.rel_l2_err, |e| format!("{e:.1e}")),
            opt(r.max_abs_err, |e| format!("{e:.1e}")),
            checks(r),
            match best {
                Some(b) if is_version(&r.version) => vs(b),
                _ => UNKNOWN.to_string(),
            },
        ];
        row.extend(refs.iter().map(|b| vs(b)));
        row.push(match r.status {
            RunStatus::Ok => r
                .resources
                .as_ref()
                .map(|s| format!("ok ({s})"))
                .unwrap_or("ok".into()),
            RunStatus::Failed => format!("FAILED: {}", r.message.as_deref().unwrap_or("")),
            RunStatus::Skipped => format!("skipped: {}", r.message.as_deref().unwrap_or("")),
        });
        rows.push(Row::Cells(row));
    }
    render_text(&Grid {
        preamble: Vec::new(),
        header,
        rows,
        text_columns: Vec::new(),
    })
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
    if let Some(t) = &env.torch {
        parts.push(format!("PyTorch {t}"));
    }
    if let Some(c) = &env.cudnn {
        parts.push(format!("cuDNN {c}"));
    }
    if let Some(p) = results.iter().find_map(|r| r.protocol.as_ref()) {
        parts.push(format!(
            "{} regime, {} rounds of {} reps (~{:.0} ms windows, CUDA graphs)",
            p.regime, p.rounds, p.reps, p.window_ms
        ));
    }
    if let Some(why) = &env.nvml {
        parts.push(format!("no clocks or energy: {why}"));
    }
    parts.join(" · ")
}
