//! The (stall reason × SASS opcode class) table of a source page and the bottleneck
//! label read from it: its hottest cell, with the runner-up and the margin between them.

use super::OpcodeStat;
use super::noise::{self, MIN_SAMPLES};
use crate::ncu::StallReason;
use serde::Serialize;
use std::fmt;

/// How to export the source page a label (and a SASS comparison) needs.
pub const EXPORT_SOURCE: &str = "ncu --import REPORT --csv --page source --print-source sass";

/// Why a profile of a GPU before Ampere has no SASS: no ncu export to ask for.
pub const NO_SASS_LEGACY: &str =
    "a Visual Profiler export holds no SASS listing and no PC samples (GPUs before Ampere)";

/// One cell of the table: the samples of one reason at one instruction class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    pub reason: StallReason,
    pub opcode: String,
    pub samples: u64,
    /// Of all warp samples of its page (`selected` included), a fraction in [0, 1]: the
    /// one denominator of every share, so a cell never exceeds its reason's share.
    pub share: f64,
}

impl Cell {
    pub fn same_place(&self, other: &Cell) -> bool {
        self.reason == other.reason && self.opcode == other.opcode
    }
}

impl fmt::Display for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::catalogue::cell_name(self.reason, &self.opcode))
    }
}

/// The stall samples of a source page by reason and instruction class, `selected` (the
/// warp issued) left out of the cells but counted in the denominator: every share is of
/// all the page's warp samples, as the reason shares are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StallMatrix {
    /// All warp samples of the page, `selected` included: the denominator of every share.
    pub samples: u64,
    /// The stall samples of the table (its cells, `selected` left out): what the noise
    /// rule weighs a lead in, and what [`MIN_SAMPLES`] counts.
    pub stall_samples: u64,
    /// The cells holding samples, largest first (ties: reason order, then opcode).
    pub cells: Vec<Cell>,
}

impl StallMatrix {
    /// The table of a source page, from its per-opcode aggregate.
    pub fn from_ops(ops: &[OpcodeStat]) -> StallMatrix {
        let mut cells: Vec<Cell> = ops
            .iter()
            .flat_map(|o| {
                o.reasons
                    .iter()
                    .filter(|(r, n)| r.is_stall() && *n > 0)
                    .map(|&(reason, samples)| Cell {
                        reason,
                        opcode: o.opcode.clone(),
                        samples,
                        share: 0.0,
                    })
            })
            .collect();
        let stall_samples: u64 = cells.iter().map(|c| c.samples).sum();
        let samples = ops
            .iter()
            .map(|o| o.samples)
            .sum::<u64>()
            .max(stall_samples);
        for c in &mut cells {
            c.share = c.samples as f64 / samples.max(1) as f64;
        }
        cells.sort_by(|a, b| {
            b.samples
                .cmp(&a.samples)
                .then(a.reason.cmp(&b.reason))
                .then_with(|| a.opcode.cmp(&b.opcode))
        });
        StallMatrix {
            samples,
            stall_samples,
            cells,
        }
    }

    /// Samples of one cell (zero where it holds none).
    pub fn count(&self, reason: StallReason, opcode: &str) -> u64 {
        self.cells
            .iter()
            .find(|c| c.reason == reason && c.opcode == opcode)
            .map_or(0, |c| c.samples)
    }

    /// A cell's share of all the page's warp samples (zero where it holds none).
    pub fn share(&self, reason: StallReason, opcode: &str) -> f64 {
        self.fraction(self.count(reason, opcode))
    }

    /// `n` samples as a share of all the page's warp samples, the denominator of every
    /// cell and reason share.
    pub fn fraction(&self, n: u64) -> f64 {
        n as f64 / self.samples.max(1) as f64
    }

    /// A reason's share of all the page's warp samples: its row, so no cell of the row
    /// exceeds it.
    pub fn reason_share(&self, reason: StallReason) -> f64 {
        self.fraction(
            self.cells
                .iter()
                .filter(|c| c.reason == reason)
                .map(|c| c.samples)
                .sum(),
        )
    }

    /// The largest stall reason of the page (its largest row) and its share.
    pub fn top_reason(&self) -> Option<(StallReason, f64)> {
        self.reasons().first().map(|&(r, n)| (r, self.fraction(n)))
    }

    /// Reasons (the rows) by their samples, largest first.
    pub fn reasons(&self) -> Vec<(StallReason, u64)> {
        let mut rows: Vec<(StallReason, u64)> = Vec::new();
        for c in &self.cells {
            match rows.iter_mut().find(|(r, _)| *r == c.reason) {
                Some((_, n)) => *n += c.samples,
                None => rows.push((c.reason, c.samples)),
            }
        }
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        rows
    }

    /// Instruction classes (the columns) by their stall samples, largest first.
    pub fn opcodes(&self) -> Vec<(&str, u64)> {
        let mut cols: Vec<(&str, u64)> = Vec::new();
        for c in &self.cells {
            match cols.iter_mut().find(|(o, _)| *o == c.opcode) {
                Some((_, n)) => *n += c.samples,
                None => cols.push((&c.opcode, c.samples)),
            }
        }
        cols.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        cols
    }

    /// The bottleneck label: the hottest cell, or why there is none.
    pub fn bottleneck(&self) -> Result<Bottleneck, NoLabel> {
        if self.stall_samples < MIN_SAMPLES {
            return Err(NoLabel::TooFewSamples(self.stall_samples));
        }
        let Some(top) = self.cells.first().cloned() else {
            return Err(NoLabel::TooFewSamples(self.stall_samples));
        };
        let runner_up = self.cells.get(1).cloned();
        let z = runner_up
            .as_ref()
            .map(|r| noise::lead_z(top.samples, r.samples, self.stall_samples));
        Ok(Bottleneck {
            near_tie: z.is_some_and(|z| z < noise::Z_MIN),
            top,
            runner_up,
            z: z.filter(|z| z.is_finite()),
        })
    }
}

/// The stall samples behind a breakdown of PC samples, where there are enough for the
/// noise rule ([`MIN_SAMPLES`]); `None` for per-issue ratios and launch percentages.
pub fn sampled_stalls(s: &super::StallBreakdown) -> Option<u64> {
    use super::StallSource;
    if !matches!(s.source, StallSource::Sampling | StallSource::SourcePage) {
        return None;
    }
    let stalls: u64 = StallReason::ALL
        .iter()
        .filter(|r| r.is_stall())
        .map(|&r| reason_samples(s, r))
        .sum();
    s.samples.filter(|_| stalls >= MIN_SAMPLES).map(|_| stalls)
}

/// The samples of reason `r` in a breakdown of PC samples (its share of them all).
pub fn reason_samples(s: &super::StallBreakdown, r: StallReason) -> u64 {
    let n = s.samples.unwrap_or(0) as f64;
    (s.share(r) * n).round() as u64
}

/// Where a version's warps wait most: the hottest cell of its (reason × opcode) table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bottleneck {
    #[serde(flatten)]
    pub top: Cell,
    /// The second-hottest cell, where there is one.
    pub runner_up: Option<Cell>,
    /// The top cell's lead over the runner-up in standard deviations (see
    /// [`noise`](super::noise)); absent without a runner-up.
    pub z: Option<f64>,
    /// The lead is within sampling noise: the two cells are a near-tie.
    pub near_tie: bool,
}

impl Bottleneck {
    /// The label of a profile without a source page: the top stall reason of its stall
    /// shares with the runner-up, marked [`LAUNCH_LEVEL`](super::catalogue::LAUNCH_LEVEL)
    /// where the shares are a Visual Profiler launch's own percentages, else
    /// [`REASON_ONLY`](super::catalogue::REASON_ONLY). Where PC samples stand behind the
    /// shares (at least [`MIN_SAMPLES`] stall samples), the cells carry their counts and
    /// the lead its z; per-issue ratios and launch percentages carry none, and no noise
    /// rule weighs them.
    pub fn from_stall_shares(s: &super::StallBreakdown) -> Option<Bottleneck> {
        let marker = if s.source == super::StallSource::LaunchPercentages {
            super::catalogue::LAUNCH_LEVEL
        } else {
            super::catalogue::REASON_ONLY
        };
        let stalls: Vec<(StallReason, f64)> = s
            .ranked()
            .into_iter()
            .filter(|(r, _)| r.is_stall())
            .collect();
        let sampled = sampled_stalls(s);
        let cell = |&(reason, share): &(StallReason, f64)| Cell {
            reason,
            opcode: marker.to_string(),
            samples: sampled.map_or(0, |_| reason_samples(s, reason)),
            share,
        };
        let top = cell(stalls.first()?);
        let runner_up = stalls.get(1).map(cell);
        let z = sampled.and_then(|n| {
            runner_up
                .as_ref()
                .map(|r| noise::lead_z(top.samples, r.samples, n))
        });
        Some(Bottleneck {
            near_tie: z.is_some_and(|z| z < noise::Z_MIN),
            top,
            runner_up,
            z: z.filter(|z| z.is_finite()),
        })
    }

    /// A label of a stall reason alone (no source page, so no instruction): read from the
    /// raw page's shares or from a launch's own percentages.
    pub fn is_reason_alone(&self) -> bool {
        self.is_reason_only() || self.is_launch_level()
    }

    /// Whether samples stand behind the label, for the noise rule to weigh its lead and
    /// its moves: a cell of a source page always, a reason alone only with PC samples.
    pub fn is_weighed(&self) -> bool {
        self.top.samples > 0
    }

    /// Read from the raw page's stall shares alone: a reason, no instruction.
    pub fn is_reason_only(&self) -> bool {
        self.top.opcode == super::catalogue::REASON_ONLY
    }

    /// Read from launch-level percentages, not PC samples.
    pub fn is_launch_level(&self) -> bool {
        self.top.opcode == super::catalogue::LAUNCH_LEVEL
    }

    pub fn reason(&self) -> StallReason {
        self.top.reason
    }

    pub fn opcode(&self) -> &str {
        &self.top.opcode
    }

    /// The label as the trail writes it: the top cell, and the runner-up beside it when
    /// the two are a near-tie (`long_scoreboard @ BRA ≈ barrier @ WARPGROUP`).
    pub fn label(&self) -> String {
        match (&self.runner_up, self.near_tie) {
            (Some(r), true) => format!("{} ≈ {r}", self.top),
            _ => self.top.to_string(),
        }
    }
}

/// The top cell alone: `barrier @ WARPGROUP`.
impl fmt::Display for Bottleneck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.top.fmt(f)
    }
}

/// Why a version has no bottleneck label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "why", content = "samples")]
pub enum NoLabel {
    /// The version has no profile.
    NoProfile,
    /// The label is read from the source page, and the profile has none.
    NoSourcePage,
    /// Fewer stall samples than the noise rule needs ([`MIN_SAMPLES`]).
    TooFewSamples(u64),
}

impl NoLabel {
    /// A few words, for a table cell.
    pub fn short(self) -> String {
        match self {
            NoLabel::NoProfile => "no profile".to_string(),
            NoLabel::NoSourcePage => "no source page".to_string(),
            NoLabel::TooFewSamples(n) => format!("too few samples ({n})"),
        }
    }

    /// What it means and what to do.
    pub fn explain(self) -> String {
        match self {
            NoLabel::NoProfile => "no profile".to_string(),
            NoLabel::NoSourcePage => {
                format!("the label needs a source page: export it with `{EXPORT_SOURCE}`")
            }
            NoLabel::TooFewSamples(n) => format!(
                "too few samples ({n}): a label needs {MIN_SAMPLES} stall samples on the \
                 source page (profile a longer launch, or several)"
            ),
        }
    }
}
