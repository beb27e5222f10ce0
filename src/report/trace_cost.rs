//! `stallscope trace`'s tables: what tracing cost each marked version (its plain build
//! against its trace build, timed in one run) and what each captured trace holds. Pure
//! text from the figures; the command prints it.

use crate::analysis::pipeline::TRUSTED_OVERHEAD_PCT;
use crate::analysis::speed::Speedup;
use crate::model::RunResult;
use crate::report::format::{UNKNOWN, micros};
use crate::report::runs::ratio_cell;

/// One marked version's cost: its plain and traced results, and the plain one's
/// speed-up over the trace build (rounds paired, with the verdict's rule).
pub struct Cost<'r> {
    pub plain: &'r RunResult,
    pub traced: &'r RunResult,
    pub speedup: Option<Speedup>,
}

impl Cost<'_> {
    /// What tracing cost, in % of the plain build's time.
    pub fn overhead_pct(&self) -> Option<f64> {
        self.speedup.as_ref().map(|s| (s.ratio - 1.0) * 100.0)
    }

    /// The cost as the tables write it: the speed-up with its verdict and interval.
    pub fn cell(&self) -> String {
        ratio_cell(self.speedup.as_ref())
    }
}

/// The cost table's header (`trace --no-capture`).
pub fn cost_header() -> String {
    format!(
        "{:<10} {:>12} {:>12} {:>9} {:>26}",
        "version", "plain µs", "traced µs", "cost", "plain over traced"
    )
}

/// A version's row of the cost table; unknown figures where it has no time.
pub fn cost_row(id: &str, cost: Option<&Cost>) -> String {
    let us = |r: Option<&RunResult>| r.and_then(|r| r.median_us).map_or(UNKNOWN.into(), micros);
    let pct = cost
        .and_then(Cost::overhead_pct)
        .map_or(UNKNOWN.into(), |p| format!("{p:+.1} %"));
    let cell = ratio_cell(cost.and_then(|k| k.speedup.as_ref()));
    format!(
        "{id:<10} {:>12} {:>12} {pct:>9} {cell:>26}",
        us(cost.map(|k| k.plain)),
        us(cost.map(|k| k.traced)),
    )
}

/// The capture table's header (`trace`).
pub fn capture_header() -> String {
    format!(
        "{:<8} {:>26} {:>7} {:>10} {:>10} {:>10}  trace",
        "version", "plain over traced", "blocks", "marks/lane", "overflowed", "timer"
    )
}

/// What one captured trace holds, and where it went.
pub struct CaptureRow<'a> {
    pub id: &'a str,
    /// The cost cell, or why there is none.
    pub cost: String,
    pub blocks: u32,
    pub cap: u32,
    pub overflowed: usize,
    pub timer_ns: Option<u64>,
    pub stored: String,
}

pub fn capture_row(r: &CaptureRow) -> String {
    let timer = r.timer_ns.map_or("unknown".into(), |n| format!("{n} ns"));
    format!(
        "{:<8} {:>26} {:>7} {:>10} {:>10} {timer:>10}  {}",
        r.id, r.cost, r.blocks, r.cap, r.overflowed, r.stored
    )
}

/// Why a version's trace may not be its plain build's picture: tracing cost more than
/// [`TRUSTED_OVERHEAD_PCT`]; `None` where it did not (or is unknown).
pub fn untrusted(id: &str, cost: &Cost) -> Option<String> {
    let pct = cost.overhead_pct().filter(|&p| p > TRUSTED_OVERHEAD_PCT)?;
    Some(format!(
        "{id}: tracing costs {pct:.1} % ({}), more than {TRUSTED_OVERHEAD_PCT} %: \
         the marks stretch its stages, so its picture may not be the plain build's",
        cost.cell()
    ))
}

/// What to say of lanes that made more marks than they could keep.
pub fn overflowed(id: &str, lanes: usize, cap: u32) -> String {
    format!(
        "{id}: {lanes} lanes made more marks than they hold (--cap {cap}, and the kernel's \
         own bound: SS_TRACE_RING in kernels/stallscope_trace.h) and kept their first"
    )
}
