//! One comparison of two versions as a format-neutral document: its sections in order,
//! each a list of rows, each row its name, the two sides' values, the change and what
//! the change means ([`Tag`]), with the figures it was made from. It is built once
//! ([`document`]); the table, Markdown, HTML, JSON, CSV and the explorer only render it,
//! so that every format shows the same sections.

use super::format::{self, UNKNOWN};
use super::texts::{label_text, stall_heading};
use crate::analysis::catalogue::cell_name;
use crate::analysis::compare::{CellDelta, MetricDelta, Side, StallDelta, follows_run_time};
use crate::analysis::sass::{Change, MixRow, MixSide, SassDiff};
use crate::analysis::{Comparison, NoLabel, OpcodeStat, Verdict};

/// What a row's change means, for a format that colours it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Better,
    Worse,
    /// In b only (an instruction class, a line of SASS).
    Added,
    /// In a only.
    Removed,
    /// Neither better nor worse: the same, changed without a direction, or unknown.
    Neutral,
}

impl Tag {
    pub fn of(v: Verdict) -> Tag {
        match v {
            Verdict::Better => Tag::Better,
            Verdict::Worse => Tag::Worse,
            _ => Tag::Neutral,
        }
    }
}

/// The sections of a comparison, in the order they come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every catalogue metric's delta.
    Metrics,
    /// What limits each side's occupancy (where one side knows).
    Occupancy,
    /// The two bottlenecks: label, share, runner-up.
    Bottleneck,
    /// b's move on the roofline from a, and a's ncu findings b resolved with ncu's
    /// estimate beside the measured change in time.
    Roofline,
    /// Where the stall shares come from, and each reason's share.
    Stalls,
    /// The hottest (reason × instruction) cells of either side.
    Cells,
    /// Instruction classes side by side.
    Mix,
}

/// What a row was made from, for a format that writes the figures rather than the text
/// (JSON, CSV) or lays them out its own way (the explorer, the page).
#[derive(Debug, Clone, Copy)]
pub enum Figure<'a> {
    Metric(&'a MetricDelta),
    /// The sides' occupancy limits ([`Document::sides`]).
    Occupancy,
    /// The sides' bottleneck labels, their shares and their runner-ups.
    Label,
    TopShare,
    RunnerUp,
    /// The sides' overall top stall reasons where they are not their labels'.
    TopReason,
    /// Where the sides' stall shares come from, and their samples.
    StallSource,
    StallSamples,
    Stall(&'a StallDelta),
    Cell(&'a CellDelta),
    Mix(&'a MixRow),
    /// The step on the roofline and ncu's estimates ([`Comparison::roofline`],
    /// [`Comparison::estimates`]).
    Roofline,
}

/// One row: its name, both sides' values, the change and its verdict as the table
/// writes them.
pub struct Row<'a> {
    pub name: String,
    pub a: String,
    pub b: String,
    pub delta: String,
    /// The verdict's word (`better`, `same`, `changed`); empty where the row has none.
    pub verdict: String,
    pub tag: Tag,
    /// Whether text shows the row: not a metric neither side has, nor the instruction
    /// mix beyond its first [`MIX_ROWS`]; data (JSON, CSV) carries every row.
    pub shown: bool,
    pub figure: Figure<'a>,
}

pub struct Section<'a> {
    pub part: Part,
    /// Its heading in the table (the metrics and occupancy, the table's first rows, have
    /// none).
    pub heading: Option<String>,
    pub rows: Vec<Row<'a>>,
}

/// The two SASS listings aligned, or why there are none.
pub enum Sass<'a> {
    Aligned {
        diff: &'a SassDiff,
        heading: String,
        /// Unified-diff lines with each instruction's stall samples.
        lines: Vec<(Tag, String)>,
    },
    /// Why there is no SASS, in one line, printable (names escaped).
    Missing(String),
}

/// What names the two sides and the run results compared.
pub struct Names<'a> {
    pub a: &'a str,
    pub b: &'a str,
    /// The shape whose run results are compared.
    pub run_shape: Option<&'a str>,
    /// Whether that is another shape than the reference.
    pub other_shape: bool,
    /// The shape of the profiles, where the run results compared are of another: the
    /// ncu rows name it.
    pub profiled_at: Option<&'a str>,
    /// Why a side's SASS listing could not be read, where it could not.
    pub listing_error: Option<&'a str>,
    /// Each side's warnings ([`super::version_warnings`]).
    pub warnings: [&'a [String]; 2],
}

pub struct Document<'a> {
    pub a_name: String,
    pub b_name: String,
    /// The shape of the run results compared, where it is not the reference.
    pub other_shape: Option<String>,
    /// Each side's warnings ([`super::version_warnings`]).
    pub warnings: [Vec<String>; 2],
    pub sides: [&'a Side; 2],
    /// Each side's instruction classes (empty without a source page).
    pub hot_ops: [&'a [OpcodeStat]; 2],
    /// The sections that have something to show, in order.
    pub sections: Vec<Section<'a>>,
    pub sass: Sass<'a>,
}

/// Rows of the instruction mix a comparison shows as text.
pub const MIX_ROWS: usize = 16;

impl<'a> Document<'a> {
    pub fn section(&self, part: Part) -> Option<&Section<'a>> {
        self.sections.iter().find(|s| s.part == part)
    }

    /// The rows of a section; none where it is left out.
    pub fn rows(&self, part: Part) -> impl Iterator<Item = &Row<'a>> {
        self.section(part).into_iter().flat_map(|s| &s.rows)
    }

    /// The lines above the table: the two sides, the shape compared where it is not
    /// the reference, and each side's warnings.
    pub fn preamble(&self) -> Vec<String> {
        std::iter::once(format!("{} → {}", self.a_name, self.b_name))
            .chain(
                self.other_shape
                    .iter()
                    .map(|s| format!("run results at {s} (not the reference shape)")),
            )
            .chain(self.warning_lines())
            .collect()
    }

    /// Each side's warnings, named by the side: `v01: warning: pages of two ncu runs …`.
    pub fn warning_lines(&self) -> Vec<String> {
        let names = [&self.a_name, &self.b_name];
        names
            .iter()
            .zip(&self.warnings)
            .flat_map(|(n, ws)| ws.iter().map(move |w| format!("{n}: {w}")))
            .collect()
    }

    /// Whether each side has a source page (instruction classes).
    pub fn has_source(&self) -> [bool; 2] {
        self.hot_ops.map(|o| !o.is_empty())
    }
}

/// The comparison `c` as a document.
pub fn document<'a>(c: &'a Comparison, names: &Names) -> Document<'a> {
    let doc = Document {
        a_name: names.a.to_string(),
        b_name: names.b.to_string(),
        other_shape: names
            .run_shape
            .filter(|_| names.other_shape)
            .map(String::from),
        warnings: names.warnings.map(<[String]>::to_vec),
        sides: [&c.a, &c.b],
        hot_ops: [&c.hot_ops_a, &c.hot_ops_b],
        sections: Vec::new(),
        sass: sass(c, names),
    };
    let sections = [
        Some(metrics(c, names.run_shape, names.profiled_at)),
        occupancy(c),
        Some(bottleneck(c)),
        roofline(c),
        stalls(c),
        cells(c),
        mix(c, doc.has_source()),
    ];
    Document {
        sections: sections.into_iter().flatten().collect(),
        ..doc
    }
}

/// The step on the roofline and ncu's estimates, where the comparison has them: the
/// texts of [`super::roofline`].
fn roofline(c: &Comparison) -> Option<Section<'_>> {
    use super::roofline::{estimate_cells, step_cells};
    let cells = c
        .roofline
        .iter()
        .flat_map(step_cells)
        .chain(c.estimates.iter().flat_map(estimate_cells));
    let rows: Vec<Row> = cells
        .map(|x| Row {
            name: x.name,
            a: x.a,
            b: x.b,
            delta: x.change,
            verdict: x.note,
            tag: Tag::Neutral,
            shown: true,
            figure: Figure::Roofline,
        })
        .collect();
    (!rows.is_empty()).then(|| Section {
        part: Part::Roofline,
        heading: Some("roofline and ncu's estimates (a's findings b resolved)".into()),
        rows,
    })
}

/// A row of the two sides' values alone: no change, no verdict.
fn plain<'a>(name: &str, a: String, b: String, figure: Figure<'a>) -> Row<'a> {
    Row {
        name: name.to_string(),
        a,
        b,
        delta: String::new(),
        verdict: String::new(),
        tag: Tag::Neutral,
        shown: true,
        figure,
    }
}

fn metrics<'a>(
    c: &'a Comparison,
    run_shape: Option<&str>,
    profiled_at: Option<&str>,
) -> Section<'a> {
    let rows = c
        .metrics
        .iter()
        .map(|m| {
            let d = m.id.def();
            // A row that follows the run time carries the runs' verdict with its interval.
            let verdict = match (&c.speed, m.verdict) {
                (Some(s), v) if follows_run_time(m.id) && v != Verdict::Unknown => {
                    super::texts::verdict_and_interval(s)
                }
                _ => m.verdict.symbol().to_string(),
            };
            Row {
                name: d.name_at(run_shape, profiled_at),
                a: format::with_unit(d.kind, m.a),
                b: format::with_unit(d.kind, m.b),
                delta: format::delta(d.kind, m.a, m.b),
                verdict,
                tag: Tag::of(m.verdict),
                shown: m.a.is_some() || m.b.is_some(),
                figure: Figure::Metric(m),
            }
        })
        .collect();
    Section {
        part: Part::Metrics,
        heading: None,
        rows,
    }
}

fn occupancy(c: &Comparison) -> Option<Section<'_>> {
    if c.a.occupancy.is_none() && c.b.occupancy.is_none() {
        return None;
    }
    let occ = |s: &Side| {
        s.occupancy
            .as_ref()
            .map(|o| o.short())
            .unwrap_or_else(|| UNKNOWN.to_string())
    };
    let changed = c.a.occupancy.as_ref().map(|o| (&o.limiters, o.blocks))
        != c.b.occupancy.as_ref().map(|o| (&o.limiters, o.blocks));
    let mut row = plain(
        "Occupancy limited by",
        occ(&c.a),
        occ(&c.b),
        Figure::Occupancy,
    );
    row.verdict = if changed { "changed" } else { "same" }.into();
    Some(Section {
        part: Part::Occupancy,
        heading: None,
        rows: vec![row],
    })
}

fn bottleneck(c: &Comparison) -> Section<'_> {
    let label = |s: &Side| label_text(s.bottleneck.as_ref(), s.no_label);
    let top_share = |s: &Side| s.bottleneck.as_ref().map(|b| b.top.share);
    let runner_up = |s: &Side| {
        s.bottleneck
            .as_ref()
            .and_then(|b| b.runner_up.as_ref())
            .map(|r| format!("{r} {}", format::share(Some(r.share))))
            .unwrap_or_else(|| UNKNOWN.to_string())
    };
    let top_reason = |s: &Side| {
        s.top_reason
            .map(|(r, x)| super::texts::top_reason_text(r, x))
            .unwrap_or_default()
    };
    let mut share = plain(
        "share",
        format::share(top_share(&c.a)),
        format::share(top_share(&c.b)),
        Figure::TopShare,
    );
    share.delta = format::share_delta(top_share(&c.a), top_share(&c.b));
    Section {
        part: Part::Bottleneck,
        heading: Some("bottleneck (% of all warp samples)".into()),
        rows: vec![
            plain("bottleneck", label(&c.a), label(&c.b), Figure::Label),
            share,
            plain(
                "runner-up",
                runner_up(&c.a),
                runner_up(&c.b),
                Figure::RunnerUp,
            ),
            Row {
                // Shown where a side's label is not of its top reason.
                shown: c.a.top_reason.is_some() || c.b.top_reason.is_some(),
                ..plain(
                    "top reason (where other)",
                    top_reason(&c.a),
                    top_reason(&c.b),
                    Figure::TopReason,
                )
            },
        ],
    }
}

fn stalls(c: &Comparison) -> Option<Section<'_>> {
    if c.stalls.is_empty() {
        return None;
    }
    let source = |s: &Side| s.stall_source.map_or(UNKNOWN, |s| s.describe()).to_string();
    let samples = |s: &Side| super::texts::samples_text(s.stall_samples);
    let mut rows = vec![
        plain(
            "stall source",
            source(&c.a),
            source(&c.b),
            Figure::StallSource,
        ),
        plain(
            "stall samples",
            samples(&c.a),
            samples(&c.b),
            Figure::StallSamples,
        ),
    ];
    rows.extend(c.stalls.iter().map(|s| Row {
        name: s.reason.metric_name().to_string(),
        a: format::share(s.a),
        b: format::share(s.b),
        delta: format::share_delta(s.a, s.b),
        verdict: s.verdict.symbol().to_string(),
        tag: Tag::of(s.verdict),
        shown: true,
        figure: Figure::Stall(s),
    }));
    Some(Section {
        part: Part::Stalls,
        heading: Some(stall_heading([c.a.stall_source, c.b.stall_source])),
        rows,
    })
}

fn cells(c: &Comparison) -> Option<Section<'_>> {
    if c.cells.is_empty() {
        return None;
    }
    let rows = c
        .cells
        .iter()
        .map(|d| Row {
            name: cell_name(d.reason, &d.opcode),
            a: format::samples_share(d.a_samples, d.a),
            b: format::samples_share(d.b_samples, d.b),
            delta: format::samples_share_delta((d.a_samples, d.a), (d.b_samples, d.b)),
            verdict: d.verdict.symbol().to_string(),
            tag: Tag::Neutral,
            shown: true,
            figure: Figure::Cell(d),
        })
        .collect();
    Some(Section {
        part: Part::Cells,
        heading: Some(
            "stall reason × instruction (stall samples · % of all warp samples; changed: z ≥ 2)"
                .into(),
        ),
        rows,
    })
}

/// The instruction mix: a class one side lacks is added or removed (where that side has
/// a source page to lack it in).
fn mix(c: &Comparison, [has_a, has_b]: [bool; 2]) -> Option<Section<'_>> {
    if c.mix.is_empty() {
        return None;
    }
    let side = |present: bool, m: &MixSide| {
        if present {
            format!(
                "{} · {}",
                format::thousands(m.instructions as f64),
                format::samples_share(Some(m.stall_samples), Some(m.share))
            )
        } else {
            UNKNOWN.to_string()
        }
    };
    let rows = c
        .mix
        .iter()
        .enumerate()
        .map(|(n, r)| {
            let delta = if has_a && has_b {
                let d = r.b.instructions as i64 - r.a.instructions as i64;
                format!(
                    "{d:+} · {}",
                    format::samples_share_delta(
                        (Some(r.a.stall_samples), Some(r.a.share)),
                        (Some(r.b.stall_samples), Some(r.b.share))
                    )
                )
            } else {
                UNKNOWN.to_string()
            };
            let tag = match (r.a.instructions, r.b.instructions) {
                (0, n) if n > 0 && has_a => Tag::Added,
                (n, 0) if n > 0 && has_b => Tag::Removed,
                _ => Tag::Neutral,
            };
            Row {
                name: r.opcode.clone(),
                a: side(has_a, &r.a),
                b: side(has_b, &r.b),
                delta,
                verdict: String::new(),
                tag,
                shown: n < MIX_ROWS,
                figure: Figure::Mix(r),
            }
        })
        .collect();
    Some(Section {
        part: Part::Mix,
        heading: Some(
            "instruction mix (instructions · stall samples · % of all warp samples)".into(),
        ),
        rows,
    })
}

fn sass<'a>(c: &'a Comparison, names: &Names) -> Sass<'a> {
    match &c.sass {
        Some(d) => Sass::Aligned {
            diff: d,
            heading: format!(
                "SASS: {} → {} instructions, {} removed, {} added (aligned with registers and addresses ignored; stall samples after each)",
                d.a_instructions, d.b_instructions, d.removed, d.added
            ),
            lines: sass_lines(d),
        },
        None => Sass::Missing(no_sass_line(names.a, names.b, c, names.listing_error)),
    }
}

/// Why a comparison shows no SASS, in one line: the versions without a source page and
/// how to export one, or that the listings could not be read; printable (names escaped).
fn no_sass_line(a_name: &str, b_name: &str, c: &Comparison, listing_error: Option<&str>) -> String {
    let missing: Vec<&str> = [(a_name, &c.a), (b_name, &c.b)]
        .into_iter()
        .filter(|(_, s)| {
            matches!(s.no_label, Some(NoLabel::NoSourcePage | NoLabel::NoProfile))
                || s.bottleneck.as_ref().is_some_and(|b| b.is_reason_only())
        })
        .map(|(name, _)| name)
        .collect();
    let launch_level = [&c.a, &c.b]
        .iter()
        .any(|s| s.bottleneck.as_ref().is_some_and(|b| b.is_launch_level()));
    let line = match missing.as_slice() {
        [] if launch_level => format!(
            "SASS: {}, so there is no SASS to compare",
            crate::analysis::NO_SASS_LEGACY
        ),
        [] => match listing_error {
            Some(e) => format!("SASS: a listing could not be read: {e}"),
            None => "SASS: the listings could not be read".to_string(),
        },
        [one] => format!(
            "SASS: {one} has no source page, so there is no SASS to compare: export one with `{}`",
            crate::analysis::EXPORT_SOURCE
        ),
        _ => format!(
            "SASS: {} have no source page, so there is no SASS to compare: export one with `{}`",
            missing.join(" and "),
            crate::analysis::EXPORT_SOURCE
        ),
    };
    // The names are a file's or a manifest's text: shown escaped, as the grid shows them.
    format::printable(&line).into_owned()
}

/// The aligned SASS as unified-diff lines, with each instruction's stall samples.
fn sass_lines(d: &SassDiff) -> Vec<(Tag, String)> {
    let mut out = Vec::new();
    for h in &d.hunks {
        let (ra, rb) = h.lines.iter().fold((0, 0), |(a, b), l| match l.change {
            Change::Same => (a + 1, b + 1),
            Change::Removed => (a + 1, b),
            Change::Added => (a, b + 1),
        });
        out.push((
            Tag::Neutral,
            format!("@@ -{},{ra} +{},{rb} @@", h.a_start + 1, h.b_start + 1),
        ));
        for l in &h.lines {
            let (tag, mark) = match l.change {
                Change::Same => (Tag::Neutral, ' '),
                Change::Removed => (Tag::Removed, '-'),
                Change::Added => (Tag::Added, '+'),
            };
            let samples = if l.stall_samples > 0 {
                format!("  [{}]", format::thousands(l.stall_samples as f64))
            } else {
                String::new()
            };
            out.push((tag, format!("{mark} {}{samples}", l.text)));
        }
    }
    if out.is_empty() {
        out.push((Tag::Neutral, "  (the same instructions)".into()));
    }
    out
}
