//! The roofline and ncu's estimates as text: `report --roofline` and `report
//! --estimates` (Markdown tables, or JSON with `--format json`), and the rows of a step
//! that `report --versions` and `compare` add.

use crate::analysis::estimates::{
    EstimatesTable, Fate, Resolved, StepEstimates, Tally, TimeSource,
};
use crate::analysis::roofline::{LadderRoofline, Level, RoofShare, RoofStep};
use crate::model::Ladder;
use serde::Serialize;

const UNKNOWN: &str = super::format::UNKNOWN;

/// `2.31×`: a ratio of a step.
pub fn times(x: Option<f64>) -> String {
    x.map_or(UNKNOWN.into(), |x| format!("{x:.2}×"))
}

/// A step's FLOP/s ratio, or why there is none: profiles of two GPUs.
pub fn flops_times(s: &RoofStep) -> String {
    match &s.gpus {
        Some((a, b)) => format!("{UNKNOWN} ({a} → {b})"),
        None => times(s.flops_x),
    }
}

fn tflops(x: f64) -> String {
    format!("{:.1}", x / 1e12)
}

/// `L2 37 %`: the roof and the point's share of it.
pub fn share(s: Option<RoofShare>) -> String {
    s.map_or(UNKNOWN.into(), |s| {
        format!("{} {:.0} %", s.roof.name(), s.share * 100.0)
    })
}

fn signed(pct: f64) -> String {
    format!("{pct:+.1} %").replacen('-', "−", 1)
}

/// Imported text as a Markdown table cell: control characters shown escaped, `|` too.
fn md_cell(s: &str) -> String {
    super::format::printable(s).replace('|', "\\|")
}

/// A table of one of these texts: its columns (with whether each holds a number) and
/// its rows, cells as text; drawn as Markdown here and as HTML by the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub columns: Vec<(&'static str, bool)>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table in Markdown, numbers aligned right.
    pub fn markdown(&self) -> String {
        let cells = |c: &[String]| {
            let c: Vec<String> = c.iter().map(|x| md_cell(x)).collect();
            format!("| {} |\n", c.join(" | "))
        };
        let head: Vec<String> = self.columns.iter().map(|c| c.0.to_string()).collect();
        let rule: Vec<String> = self
            .columns
            .iter()
            .map(|c| if c.1 { "---:" } else { "---" }.to_string())
            .collect();
        let mut out = cells(&head);
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            out.push_str(&cells(r));
        }
        out
    }
}

/// The ceilings the roofline is measured against, each with its GPU and source.
pub fn ceilings_table(r: &LadderRoofline) -> Table {
    let rows = r
        .ceilings
        .iter()
        .map(|c| {
            let gpu = c.device.as_deref().unwrap_or("ladder");
            vec![c.label.clone(), gpu.to_string(), c.source.clone()]
        })
        .collect();
    Table {
        columns: vec![("ceiling", false), ("GPU", false), ("source", false)],
        rows,
    }
}

/// A row per version with a point: its intensities, FLOP/s, nearer roof and share, and
/// the step from its parent.
pub fn points_table(r: &LadderRoofline) -> Table {
    let mut rows = Vec::new();
    for (i, v) in r.versions.iter().enumerate() {
        let Some(p) = &v.point else { continue };
        let ai = |l: Level| {
            p.level(l)
                .and_then(|x| x.intensity)
                .map_or(UNKNOWN.into(), |x| format!("{x:.1}"))
        };
        let step = r.step_to(i);
        let id = if v.baseline {
            format!("{} (baseline)", v.id)
        } else {
            v.id.clone()
        };
        rows.push(vec![
            id,
            tflops(p.flop_per_s),
            ai(Level::Dram),
            ai(Level::L2),
            ai(Level::L1),
            share(p.nearer),
            times(step.and_then(|s| s.intensity_x)),
            step.map_or(times(None), flops_times),
            step.map_or(String::new(), |s| {
                format!("{} → {}", share(s.before), share(s.after))
            }),
        ]);
    }
    Table {
        columns: vec![
            ("version", false),
            ("TFLOP/s", true),
            ("FLOP/B DRAM", true),
            ("FLOP/B L2", true),
            ("FLOP/B L1/shared", true),
            ("nearer roof", false),
            ("step: intensity ×", true),
            ("FLOP/s ×", true),
            ("share before → after", false),
        ],
        rows,
    }
}

/// The versions without a point, each with why: `(id, reason)`.
pub fn left_off(r: &LadderRoofline) -> Vec<(String, String)> {
    r.versions
        .iter()
        .filter(|v| v.point.is_none())
        .map(|v| {
            (
                v.id.clone(),
                v.no_point.as_deref().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

/// The ladder's roofline in Markdown: its ceilings with their sources, then a row per
/// version (its intensities, FLOP/s, nearer roof and share, and the step from its
/// parent), then the versions left off and why.
pub fn roofline_markdown(ladder: &Ladder, r: &LadderRoofline) -> String {
    let mut out = format!("## {}: the roofline\n\n", ladder.name);
    out.push_str(&ceilings_table(r).markdown());
    out.push('\n');
    out.push_str(&points_table(r).markdown());
    let left = left_off(r);
    if !left.is_empty() {
        out.push_str("\nLeft off the chart:\n");
        for (id, why) in left {
            out.push_str(&format!("- {}: {}\n", md_cell(&id), md_cell(&why)));
        }
    }
    out
}

/// The roofline and the estimates as short sections at the end of the ladder's
/// Markdown report: the roofs in a line, the points, the versions left off, then the
/// estimates table and its tally.
pub fn report_sections(r: &LadderRoofline, t: &EstimatesTable) -> String {
    let mut out = String::from("### On the roofline\n\n");
    let roofs: Vec<&str> = r.ceilings.iter().map(|c| c.label.as_str()).collect();
    if !roofs.is_empty() {
        out.push_str(&format!(
            "Roofs (sources: `report --roofline`): {}.\n\n",
            roofs.join(" · ")
        ));
    }
    let points = points_table(r);
    if points.rows.is_empty() {
        out.push_str("No version has a point on the roofline.\n");
    } else {
        out.push_str(&points.markdown());
    }
    let left = left_off(r);
    if !left.is_empty() {
        out.push_str("\nLeft off the chart:\n");
        for (id, why) in left {
            out.push_str(&format!("- {}: {}\n", md_cell(&id), md_cell(&why)));
        }
    }
    if !t.steps.is_empty() {
        out.push_str(&format!(
            "\n### What ncu estimated, what each step got\n\n{}\n{}\n",
            estimates_rows(t).markdown(),
            tally_sentence(&t.tally)
        ));
    }
    out
}

/// One line of a step's texts: its name, the parent's and the child's figure, the
/// change, and what it means.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCell {
    pub name: String,
    pub a: String,
    pub b: String,
    pub change: String,
    pub note: String,
}

fn cell(name: impl Into<String>, a: String, b: String, change: String, note: String) -> StepCell {
    StepCell {
        name: name.into(),
        a,
        b,
        change,
        note,
    }
}

/// The step's move on the roofline: intensity ×, FLOP/s ×, the nearer roof's share
/// before and after.
pub fn step_cells(s: &RoofStep) -> Vec<StepCell> {
    let none = String::new;
    vec![
        cell(
            "DRAM intensity ×",
            none(),
            none(),
            times(s.intensity_x),
            none(),
        ),
        cell("FLOP/s ×", none(), none(), flops_times(s), none()),
        cell(
            "nearer roof, share",
            share(s.before),
            share(s.after),
            none(),
            none(),
        ),
    ]
}

/// What became of a resolved finding in the child: `gone`, or its estimate there.
fn fate(r: &Resolved) -> String {
    match (r.fate, r.child_pct) {
        (Fate::Halved, Some(c)) => format!("{c:.0} %"),
        _ => "gone".into(),
    }
}

/// ncu's findings of the parent that the child resolved, each with ncu's estimate in
/// the parent and what became of it, then the step's measured change in time with where
/// it came from, its verdict, and what it bought against the largest estimate.
pub fn estimate_cells(e: &StepEstimates) -> Vec<StepCell> {
    let none = String::new;
    let mut out: Vec<StepCell> = e
        .resolved
        .iter()
        .map(|r| {
            let name = format!("ncu estimate: {}", r.rule);
            let after = match (r.fate, r.child_pct) {
                (Fate::Halved, Some(c)) => signed(-c),
                _ => "gone".into(),
            };
            cell(name, signed(-r.estimate_pct), after, none(), none())
        })
        .collect();
    if out.is_empty() {
        out.push(cell(
            "ncu findings resolved",
            "none".into(),
            none(),
            none(),
            none(),
        ));
    }
    let (name, verdict) = match e.measured.as_ref().map(|m| &m.source) {
        Some(TimeSource::Runs { shape, verdict }) => {
            (format!("change in time (runs at {shape})"), verdict.clone())
        }
        Some(TimeSource::NcuDurations) => {
            ("change in time (ncu durations, no runs)".into(), none())
        }
        None if e.gpus.is_some() => ("change in time (profiles of two GPUs)".into(), none()),
        None => ("change in time".into(), none()),
    };
    let note = [verdict, e.outcome.map_or(none(), |o| o.word().to_string())]
        .into_iter()
        .filter(|x| !x.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    out.push(cell(name, none(), none(), measured(e).0, note));
    out
}

/// The rows of one step's move on the roofline, as a two-column Markdown table's body.
pub fn step_rows(s: &RoofStep) -> String {
    step_cells(s)
        .into_iter()
        .map(|c| {
            let value = if c.change.is_empty() {
                format!("{} → {}", c.a, c.b)
            } else {
                c.change
            };
            format!("| {} | {value} |\n", c.name)
        })
        .collect()
}

/// ncu's resolved findings of a step, `Rule 43 % (gone)`.
pub fn findings(s: &StepEstimates) -> String {
    if s.resolved.is_empty() {
        return "none".into();
    }
    s.resolved
        .iter()
        .map(|r| match r.fate {
            Fate::Halved => format!("{} {:.0} → {}", r.rule, r.estimate_pct, fate(r)),
            Fate::Gone => format!("{} {:.0} % (gone)", r.rule, r.estimate_pct),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The step's measured change in time and where it came from.
pub fn measured(s: &StepEstimates) -> (String, String) {
    match &s.measured {
        None => match &s.gpus {
            Some((a, b)) => (UNKNOWN.into(), format!("profiles of two GPUs: {a} → {b}")),
            None => (UNKNOWN.into(), UNKNOWN.into()),
        },
        Some(m) => {
            let from = match &m.source {
                TimeSource::Runs { shape, verdict } => format!("runs at {shape}: {verdict}"),
                TimeSource::NcuDurations => "ncu durations (no runs)".into(),
            };
            (signed(-m.cut_pct), from)
        }
    }
}

/// The ladder-wide estimates table: a row per step, its resolved findings with ncu's
/// estimates, the largest, the measured change in time, where it came from, the outcome.
pub fn estimates_rows(t: &EstimatesTable) -> Table {
    let rows = t
        .steps
        .iter()
        .map(|s| {
            let (change, from) = measured(s);
            vec![
                format!("{} → {}", s.parent_id, s.child_id),
                findings(s),
                s.largest().map_or(UNKNOWN.into(), |e| format!("−{e:.1} %")),
                change,
                from,
                s.outcome.map_or(UNKNOWN, |o| o.word()).to_string(),
            ]
        })
        .collect();
    Table {
        columns: vec![
            ("step", false),
            ("findings resolved (ncu's estimate)", false),
            ("largest estimate", true),
            ("measured change in time", true),
            ("from", false),
            ("outcome", false),
        ],
        rows,
    }
}

fn median(k: &Tally) -> String {
    k.median_ratio
        .map_or(UNKNOWN.into(), |r| format!("{:.0} %", r * 100.0))
}

/// The tally under the estimates table, as a sentence.
pub fn tally_sentence(k: &Tally) -> String {
    format!(
        "Of {} steps that resolved a finding with an estimate, {} cut the time by at least half of ncu's largest estimate (delivered), {} by less (partly), {} not at all (nothing); the median step got {} of the largest estimate.",
        k.judged,
        k.delivered,
        k.partly,
        k.nothing,
        median(k),
    )
}

/// The tally in one short line, as the explorer shows it.
pub fn tally_line(k: &Tally) -> String {
    if k.judged == 0 {
        return "ncu's estimates on this ladder: no step resolved a finding with an estimate and a known change in time".into();
    }
    format!(
        "ncu's estimates on this ladder: {} {} resolved a finding · {} delivered, {} partly, {} nothing · median step got {} of the estimate",
        k.judged,
        if k.judged == 1 { "step" } else { "steps" },
        k.delivered,
        k.partly,
        k.nothing,
        median(k),
    )
}

/// The ladder-wide estimates table in Markdown, and the tally under it.
pub fn estimates_markdown(ladder: &Ladder, t: &EstimatesTable) -> String {
    format!(
        "## {}: what ncu estimated, what each step got\n\n{}\n{}\n",
        ladder.name,
        estimates_rows(t).markdown(),
        tally_sentence(&t.tally)
    )
}

#[derive(Serialize)]
struct Doc<'a, T: Serialize> {
    ladder: &'a str,
    #[serde(flatten)]
    body: &'a T,
}

/// Any of these models as JSON, under the ladder's name.
pub fn json<T: Serialize>(ladder: &Ladder, body: &T) -> String {
    serde_json::to_string_pretty(&Doc {
        ladder: &ladder.name,
        body,
    })
    .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
