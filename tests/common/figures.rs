//! Figures as the README and the notes write them, and the run results they are of.

use stallscope::model::runs::{Regime, Shape};
use stallscope::model::{RunResult, Version};

/// A figure as written, with how far its last digit lets it be from the value: `69.8`
/// is (69.8, 0.05); `1,980` is 1980; a sign may be `+`, `-` or `−`.
pub fn written(cell: &str) -> Option<(f64, f64)> {
    let t: String = cell
        .trim()
        .chars()
        .filter(|&c| c != ',')
        .map(|c| if c == '−' { '-' } else { c })
        .collect();
    let x: f64 = t.parse().ok()?;
    let decimals = t.split_once('.').map_or(0, |(_, f)| f.len());
    Some((x, 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9))
}

/// A version's run result at a shape, as the ladder shows it: the latest there not of
/// the burst regime, else the latest. Picked from the version's own runs, so that it
/// needs no shown shape on the ladder.
pub fn run_at<'a>(v: &'a Version, shape: &Shape) -> Option<&'a RunResult> {
    let at: Vec<&RunResult> = v.runs.iter().filter(|r| r.shape == *shape).collect();
    at.iter()
        .rev()
        .find(|r| r.regime() != Some(Regime::Burst))
        .or(at.last())
        .copied()
}
