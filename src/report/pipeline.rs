//! A ladder's pipeline traces as one format-neutral document: per traced version its
//! facts (blocks summarised, the median block, what tracing cost, the timer's step),
//! what to be wary of, one row per role and stage with its share of the block's time
//! over all blocks and in the median block and the stage of another role that overlaps
//! it most, and the step from the version it was built on in a sentence. Built once
//! ([`document`]); the table, Markdown and the HTML page render it.

use super::exporter::Analysed;
use crate::analysis::pipeline::{Figures, MIN_CHANGE, TRUSTED_OVERHEAD_PCT, TracedVersion, pct};
use crate::model::trace::{Clock, Trace};

/// What every rendering says of the figures, under its heading.
pub const NOTES: [&str; 4] = [
    "One traced launch per version (stallscope trace); shares are of a block's time, its first mark to its last in its SM's cycles.",
    "all blocks: each figure's median over the blocks (those an overflow cut are left out); median block: the block of median duration, the one drawn.",
    "waiting: the gaps of a role's lane between its spans; overlapped most by: the other role's stage that ran during most of this one (all blocks).",
    "%globaltimer places the blocks against each other to within its step; time within a block is counted in cycles.",
];

/// One row: a role's stage, its time in any stage, or its waiting.
pub struct FigureRow {
    pub role: String,
    /// The stage, `any stage` or `waiting`.
    pub what: String,
    /// Over all blocks (the median), as written, and as a fraction.
    pub all: String,
    pub all_share: f64,
    /// In the median block.
    pub block: String,
    /// `Q·Kᵀ of consumer 1: 67 %`, where another role's stage overlaps it.
    pub overlapped: String,
}

/// One traced version.
pub struct VersionPart<'a> {
    /// Its index in the ladder.
    pub index: usize,
    pub id: String,
    pub title: String,
    pub trace: &'a Trace,
    /// The median block (an index into the timeline's blocks), the one drawn.
    pub block: Option<usize>,
    /// `median of 512 of 512 blocks`, `median block 17 on SM 40, 15.21 µs`, … .
    pub facts: Vec<String>,
    /// What to be wary of: tracing that cost too much, marks without a partner, lanes
    /// that overflowed, blocks in cycles only.
    pub warnings: Vec<String>,
    pub rows: Vec<FigureRow>,
    /// The step from the nearest version it was built on that has a trace:
    /// `from v13: softmax of consumer 0 now overlaps …`.
    pub step: Option<String>,
}

/// The pipeline traces of a ladder at the shape shown.
pub struct Document<'a> {
    /// The shape shown, where known.
    pub shape: Option<String>,
    pub versions: Vec<VersionPart<'a>>,
}

/// The document of `a`'s pipeline traces; `None` where no version has one at the shape
/// shown.
pub fn document<'a>(a: &Analysed<'a>) -> Option<Document<'a>> {
    let lp = &a.analysis.pipeline;
    if !lp.any() {
        return None;
    }
    let l = a.ladder;
    let mut versions = Vec::new();
    for (i, tv) in lp.versions.iter().enumerate() {
        let (Some(tv), Some(trace)) = (tv, a.shown.trace(l, &l.versions[i])) else {
            continue;
        };
        let v = &l.versions[i];
        let step = lp
            .step_to(i)
            .map(|s| step_text(&l.versions[s.from].id, s.sentence.as_deref()));
        versions.push(VersionPart {
            index: i,
            id: v.id.clone(),
            title: v.title.clone(),
            trace,
            block: tv.pipeline.median_block,
            facts: facts(tv, trace),
            warnings: warnings(tv, trace),
            rows: rows(&tv.pipeline.summary, tv.pipeline.block.as_ref()),
            step,
        });
    }
    Some(Document {
        shape: versions.first().map(|p| p.trace.shape.to_string()),
        versions,
    })
}

/// A step between two traced versions in words: `from v13: softmax of consumer 0 now
/// overlaps …`, or that no figure moved enough to tell.
pub fn step_text(from: &str, sentence: Option<&str>) -> String {
    match sentence {
        Some(text) => format!("from {from}: {text}"),
        None => format!(
            "from {from}: no figure moved by {} points or more",
            (MIN_CHANGE * 100.0).round()
        ),
    }
}

/// A duration of `block` cycles as the reports write it: µs where its clock is known.
pub fn duration(b: &crate::model::trace::Block) -> String {
    match b.duration_ns() {
        Some(ns) => format!("{:.2} µs", ns / 1e3),
        None => format!("{} cycles", b.cycles),
    }
}

/// What the reports say of a traced version first: the blocks summarised, the median
/// block, what tracing cost, the timer's step, the GPU.
pub fn facts(tv: &TracedVersion, trace: &Trace) -> Vec<String> {
    let p = &tv.pipeline;
    let t = &trace.timeline;
    let mut out = vec![format!(
        "median of {} of {} blocks",
        p.summarised, t.grid_blocks
    )];
    if p.cut > 0 {
        out.push(format!("{} cut by an overflow left out", p.cut));
    }
    if let Some(b) = p.median_block.map(|i| &t.blocks[i]) {
        out.push(format!(
            "median block {} on SM {}, {}",
            b.block,
            b.sm,
            duration(b)
        ));
    }
    out.push(match tv.overhead_pct {
        Some(x) => format!("tracing cost {x:.1} %"),
        None => "tracing cost not timed".into(),
    });
    out.push(match tv.timer_resolution_ns {
        Some(ns) => format!("timer step {ns} ns"),
        None => "timer step not measured (up to ~1 µs)".into(),
    });
    if let Some(g) = &trace.gpu {
        out.push(g.clone());
    }
    out
}

/// What to be wary of in a traced version's timeline ([`VersionPart::warnings`]).
pub fn warnings(tv: &TracedVersion, trace: &Trace) -> Vec<String> {
    let t = &trace.timeline;
    let mut out = Vec::new();
    if let Some(x) = tv.overhead_pct.filter(|&x| x > TRUSTED_OVERHEAD_PCT) {
        out.push(format!(
            "tracing cost {x:.1} %, over {TRUSTED_OVERHEAD_PCT} %: the timeline may not be the plain kernel's"
        ));
    }
    if tv.pipeline.unmatched > 0 {
        out.push(format!(
            "{} marks without a partner (a begin never ended, or an end with no begin): check the version's markers",
            tv.pipeline.unmatched
        ));
    }
    if !t.overflowed.is_empty() {
        out.push(format!(
            "{} lanes made more marks than they could keep (the buffer's {} a lane, or the kernel's own ring, SS_TRACE_RING in kernels/stallscope_trace.h): their blocks are cut short",
            t.overflowed.len(),
            t.cap
        ));
    }
    let unknown = t
        .blocks
        .iter()
        .filter(|b| b.clock == Clock::Unknown)
        .count();
    if unknown > 0 {
        out.push(format!(
            "{unknown} blocks are in cycles only: too short for their own clock, and no other was known"
        ));
    }
    out
}

/// Per role: its stages, then its time in any stage and its waiting.
pub fn rows(all: &Figures, block: Option<&Figures>) -> Vec<FigureRow> {
    let share = |x: Option<f64>| x.map_or_else(|| "—".to_string(), pct);
    let mut out = Vec::new();
    for r in &all.roles {
        for b in all.busy.iter().filter(|b| b.role == r.role) {
            out.push(FigureRow {
                role: r.role.clone(),
                what: b.stage.clone(),
                all: pct(b.share),
                all_share: b.share,
                block: share(block.map(|f| f.busy(&b.role, &b.stage).unwrap_or(0.0))),
                overlapped: all
                    .most_overlapped(&b.role, &b.stage)
                    .map(|o| format!("{} of {}: {}", o.other_stage, o.other_role, pct(o.share)))
                    .unwrap_or_default(),
            });
        }
        let in_block = block.and_then(|f| f.role(&r.role));
        out.push(FigureRow {
            role: r.role.clone(),
            what: "any stage".into(),
            all: pct(r.busy),
            all_share: r.busy,
            block: share(in_block.map(|x| x.busy)),
            overlapped: String::new(),
        });
        out.push(FigureRow {
            role: r.role.clone(),
            what: "waiting".into(),
            all: pct(r.waiting),
            all_share: r.waiting,
            block: share(in_block.map(|x| x.waiting)),
            overlapped: String::new(),
        });
    }
    out
}

/// The lines after the grid: each version's warnings and its step.
pub fn lines(doc: &Document) -> Vec<String> {
    let mut out = Vec::new();
    for v in &doc.versions {
        out.extend(v.warnings.iter().map(|w| format!("{}: warning: {w}", v.id)));
        if let Some(s) = &v.step {
            out.push(format!("{} {s}", v.id));
        }
    }
    out
}
