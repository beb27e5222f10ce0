//! The timeline and the comparison as a grid of cells, printed as aligned text or as a
//! Markdown table.

use super::comparison::{Document, Sass};
use super::exporter::{Analysed, CompareInput, Exporter, column_names};
use super::format::{self, UNKNOWN};
use super::order::{display_order, stall_rows};
use super::pipeline;
use super::texts::{
    label_cell, stall_heading, stall_samples_cell, stall_source_cell, step_name, verdict_text,
    z_text,
};
use crate::analysis::catalogue::{explained_cell, stall_help};
use crate::analysis::{Group, METRICS, NoLabel, StallMatrix, VersionAnalysis};
use crate::ncu::StallReason;
use crate::text_width;
use crate::text_width::width;

pub enum Row {
    Section(String),
    Cells(Vec<String>),
}

/// Lines of text above a table, a header and rows.
pub struct Grid {
    pub preamble: Vec<String>,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
    /// Columns of text, aligned left in the terminal (the first always is; the others,
    /// numbers mostly, align right).
    pub text_columns: Vec<usize>,
}

impl Grid {
    /// The grid with every piece of text made safe for a terminal ([`format::printable`]):
    /// names, titles and notes come from imported data.
    fn printable(&self) -> Grid {
        let text = |xs: &[String]| -> Vec<String> {
            xs.iter()
                .map(|x| format::printable(x).into_owned())
                .collect()
        };
        Grid {
            preamble: text(&self.preamble),
            header: text(&self.header),
            rows: self
                .rows
                .iter()
                .map(|r| match r {
                    Row::Section(name) => Row::Section(format::printable(name).into_owned()),
                    Row::Cells(cells) => Row::Cells(text(cells)),
                })
                .collect(),
            text_columns: self.text_columns.clone(),
        }
    }
}

fn group_name(g: Group) -> &'static str {
    match g {
        Group::Speed => "speed",
        Group::Compute => "compute",
        Group::Memory => "memory",
        Group::Launch => "launch",
    }
}

/// The ladder's name, its problem and its versions (a version's warnings marked beside
/// it and written in full under the list): the lines above its tables.
pub fn header_lines(a: &Analysed) -> Vec<String> {
    let ladder = a.ladder;
    let mut out = vec![format!("{} — {}", ladder.name, ladder.title)];
    if let Some(p) = &ladder.problem {
        out.push(p.clone());
    }
    // Run results of another shape than the reference (`--shape`): said, since the
    // problem line tells the reference.
    if let Some(s) = a.shown.other_shape(ladder) {
        out.push(format!("run results at {s} (not the reference shape)"));
    }
    // The ncu rows are of the profiles' shape: said where the runs shown are of another.
    if let Some(p) = a.profiled_at() {
        out.push(format!("ncu rows: profiled at {p}"));
    }
    for &i in &display_order(ladder) {
        let v = &ladder.versions[i];
        let kind = if v.baseline { " (baseline)" } else { "" };
        let kernel = v
            .profile
            .as_ref()
            .map(|p| format!(" [{}]", p.short_name()))
            .unwrap_or_default();
        let marker = super::texts::warning_marker(v)
            .map(|m| format!(" {m}"))
            .unwrap_or_default();
        out.push(format!("  {:<6} {}{kind}{kernel}{marker}", v.id, v.title));
    }
    // What a version's figures cannot be trusted for, in full under the list.
    for &i in &display_order(ladder) {
        let v = &ladder.versions[i];
        for w in super::texts::version_warnings(v) {
            out.push(format!("  {}: {w}", v.id));
        }
    }
    out
}

/// The bottleneck trail, one step a row: the hottest cell with its share, the runner-up
/// with its, and what the noise rule says of the step.
pub fn trail(a: &Analysed) -> Grid {
    let rows = a
        .analysis
        .trail
        .iter()
        .map(|s| {
            let an = &a.analysis.versions[s.index];
            let b = an.bottleneck.as_ref();
            let pct = |c: Option<&crate::analysis::Cell>| {
                c.map(|c| format::share(Some(c.share))).unwrap_or_default()
            };
            let runner_up = b.and_then(|b| b.runner_up.as_ref());
            Row::Cells(vec![
                step_name(s),
                label_cell(an),
                pct(b.map(|b| &b.top)),
                runner_up.map(|c| c.to_string()).unwrap_or_default(),
                pct(runner_up),
                verdict_text(s, b),
                s.top_reason
                    .map(|t| format!("{} {}", t.reason, format::share(Some(t.share))))
                    .unwrap_or_default(),
            ])
        })
        .collect();
    let mut preamble = vec![
        format!("bottleneck trail: {}", TRAIL_NOTE[0]),
        TRAIL_NOTE[1].to_string(),
        TRAIL_NOTE[2].to_string(),
    ];
    let launch_level = a
        .analysis
        .versions
        .iter()
        .any(|v| v.bottleneck.as_ref().is_some_and(|b| b.is_launch_level()));
    if launch_level {
        preamble.push(LAUNCH_LEVEL_NOTE.to_string());
    }
    // Of the trail's own steps: a baseline's label stands apart from it.
    let reason_only = a
        .ladder
        .versions
        .iter()
        .zip(&a.analysis.versions)
        .any(|(v, an)| !v.baseline && an.bottleneck.as_ref().is_some_and(|b| b.is_reason_only()));
    if reason_only {
        preamble.extend(REASON_ONLY_NOTE.iter().map(|l| l.to_string()));
    }
    Grid {
        preamble,
        header: [
            "step",
            "bottleneck",
            "%",
            "runner-up",
            "%",
            "noise rule",
            "top reason %",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        text_columns: vec![1, 3, 5, 6],
    }
}

/// What the trail's columns say.
const TRAIL_NOTE: [&str; 3] = [
    "each version's hottest stall reason × instruction class cell and the runner-up,",
    "in % of all its warp samples; a step moved when its cell leads the parent's by z ≥ 2 in its samples;",
    "top reason: the overall top stall reason, where it is not the label's (spread over many instructions)",
];

/// Said once under the trail's heading where a label is read from a launch's own stall
/// percentages (a Visual Profiler export) rather than from PC samples.
const LAUNCH_LEVEL_NOTE: &str = "labels marked (launch-level %) are a stall reason alone, in % of the launch's own \
     stall percentages (no PC samples: no instruction, no noise rule)";

/// Said once under the trail's heading where a label is a reason alone, read from the
/// raw page's stall shares for want of a source page.
const REASON_ONLY_NOTE: [&str; 2] = [
    "labels marked (reason only) are the raw page's top stall reason: no source page, so no instruction;",
    "a change of reason is a move only where PC samples carry it (z ≥ 2), else unweighed",
];

/// What the labels of the ladder's versions and baselines mean, one line each (near-tie
/// runner-ups included), and why a profiled version has none.
pub fn meanings(a: &Analysed) -> Vec<String> {
    let mut cells: Vec<(StallReason, &str)> = Vec::new();
    // Versions without a label, grouped by why: each reason (and its hint) said once.
    let mut missing: Vec<(String, Vec<&str>)> = Vec::new();
    let mut reason_only = false;
    for i in display_order(a.ladder) {
        let v = &a.analysis.versions[i];
        let Some(b) = &v.bottleneck else {
            if let Some(n) = v.no_label.filter(|&n| n != NoLabel::NoProfile) {
                let id = a.ladder.versions[i].id.as_str();
                let why = n.explain();
                match missing.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, ids)) => ids.push(id),
                    None => missing.push((why, vec![id])),
                }
            }
            continue;
        };
        reason_only |= b.is_reason_only();
        let tie = b.runner_up.as_ref().filter(|_| b.near_tie);
        for c in std::iter::once(&b.top).chain(tie) {
            if !cells.contains(&(c.reason, c.opcode.as_str())) {
                cells.push((c.reason, &c.opcode));
            }
        }
    }
    let hint = reason_only.then(|| {
        format!(
            "(reason only): for a reason × instruction label, export the source page with `{}`",
            crate::analysis::EXPORT_SOURCE
        )
    });
    cells
        .into_iter()
        .map(|(r, op)| explained_cell(r, op))
        .chain(hint)
        .chain(
            missing
                .into_iter()
                .map(|(why, ids)| format!("{}: no label; {why}", ids.join(", "))),
        )
        .collect()
}

/// The timeline of one ladder: versions as columns, metrics as rows.
pub fn timeline(a: &Analysed) -> Grid {
    let ladder = a.ladder;
    let order = display_order(ladder);
    let mut header = vec!["metric".to_string()];
    header.extend(order.iter().map(|&i| {
        let v = &ladder.versions[i];
        if v.baseline {
            format!("[{}]", v.id)
        } else {
            v.id.clone()
        }
    }));

    let cell = |i: usize| &a.analysis.versions[i];
    let row = |name: &str, f: &dyn Fn(&VersionAnalysis) -> String| {
        Row::Cells(
            std::iter::once(name.to_string())
                .chain(order.iter().map(|&i| f(cell(i))))
                .collect(),
        )
    };
    let mut rows = bottleneck_rows(&row);
    let run_shape = a.run_shape();
    let profiled_at = a.profiled_at();
    let mut group = None;
    for d in METRICS {
        if order.iter().all(|&i| cell(i).get(d.id).is_none()) {
            continue;
        }
        if group != Some(d.group) {
            rows.push(Row::Section(group_name(d.group).to_string()));
            group = Some(d.group);
        }
        let name = d.label_at(run_shape.as_deref(), profiled_at.as_deref());
        rows.push(Row::Cells(
            std::iter::once(name)
                .chain(
                    order
                        .iter()
                        .map(|&i| format::value(d.kind, cell(i).get(d.id))),
                )
                .collect(),
        ));
    }
    if order.iter().any(|&i| cell(i).occupancy.is_some()) {
        rows.push(row("occupancy limited by", &|v| {
            v.occupancy
                .as_ref()
                .map(|o| o.short())
                .unwrap_or_else(|| UNKNOWN.to_string())
        }));
    }
    rows.extend(stall_and_hot_rows(a, &order, &row));
    Grid {
        preamble: Vec::new(),
        header,
        rows,
        text_columns: Vec::new(),
    }
}

/// A timeline row: its name, and each version's cell.
type VersionRow<'r> = dyn Fn(&str, &dyn Fn(&VersionAnalysis) -> String) -> Row + 'r;

/// The timeline's first rows: each version's bottleneck, its share, the runner-up and
/// the lead over it.
fn bottleneck_rows(row: &VersionRow) -> Vec<Row> {
    let top = |v: &VersionAnalysis| v.bottleneck.clone();
    let mut rows = vec![row("bottleneck", &label_cell)];
    rows.push(row("bottleneck share (%)", &|v| {
        format::share(top(v).map(|b| b.top.share))
    }));
    rows.push(row("runner-up", &|v| {
        top(v)
            .and_then(|b| b.runner_up)
            .map(|c| format!("{c} {}", format::share(Some(c.share))))
            .unwrap_or_else(|| UNKNOWN.to_string())
    }));
    rows.push(row("lead over runner-up (z)", &|v| match top(v) {
        // Launch-level percentages and per-issue ratios have no samples to weigh a
        // lead with.
        Some(b) if !b.is_weighed() => UNKNOWN.to_string(),
        Some(b) => {
            let z = b.z.map(z_text).unwrap_or_else(|| "∞".into());
            if b.near_tie {
                format!("{z} near-tie")
            } else {
                z
            }
        }
        None => UNKNOWN.to_string(),
    }));
    rows
}

/// The timeline's last rows: the stall shares and the hottest instructions.
fn stall_and_hot_rows(a: &Analysed, order: &[usize], row: &VersionRow) -> Vec<Row> {
    let cell = |i: usize| &a.analysis.versions[i];
    let mut rows = Vec::new();
    let reasons = stall_rows(&a.analysis.versions);
    if !reasons.is_empty() {
        rows.push(Row::Section(stall_heading(
            a.analysis
                .versions
                .iter()
                .map(|v| v.stalls.as_ref().map(|s| s.source)),
        )));
        rows.push(row("stall source", &stall_source_cell));
        rows.push(row("stall samples", &stall_samples_cell));
        for r in reasons {
            rows.push(row(r.metric_name(), &|v| {
                format::share(v.stalls.as_ref().map(|s| s.share(r)))
            }));
        }
    }
    if order.iter().any(|&i| !cell(i).hot_ops.is_empty()) {
        rows.push(Row::Section(
            "hottest instructions (stall samples, % of all warp samples)".to_string(),
        ));
        for rank in 0..3 {
            rows.push(row(&format!("#{}", rank + 1), &|v| {
                let ops = &v.hot_ops;
                let total: u64 = ops.iter().map(|o| o.samples).sum();
                match ops.get(rank) {
                    Some(o) if total > 0 => format!(
                        "{} {:.0}%",
                        o.opcode,
                        100.0 * o.stall_samples as f64 / total as f64
                    ),
                    _ => UNKNOWN.to_string(),
                }
            }));
        }
    }
    rows
}

/// Reasons (rows) and instruction classes (columns) a version's heat table shows.
pub const MATRIX_ROWS: usize = 6;
pub const MATRIX_COLUMNS: usize = 8;

/// One version's (reason × opcode) heat table: the top reasons as rows, the top classes
/// as columns, each cell its stall samples and their % of the version's.
pub fn matrix(v: &crate::model::Version, m: &StallMatrix) -> Grid {
    let reasons = m.reasons();
    let opcodes = m.opcodes();
    let cols: Vec<&str> = opcodes
        .iter()
        .take(MATRIX_COLUMNS)
        .map(|(o, _)| *o)
        .collect();
    let mut header = vec!["reason \\ opcode".to_string()];
    header.extend(cols.iter().map(|o| o.to_string()));
    header.push("all".into());
    let pct = |n: u64| format::samples_share(Some(n), Some(m.fraction(n)));
    let mut rows: Vec<Row> = reasons
        .iter()
        .take(MATRIX_ROWS)
        .map(|&(r, n)| {
            let mut cells = vec![r.metric_name().to_string()];
            cells.extend(cols.iter().map(|o| match m.count(r, o) {
                0 => String::new(),
                c => pct(c),
            }));
            cells.push(pct(n));
            Row::Cells(cells)
        })
        .collect();
    let mut all = vec!["all".to_string()];
    all.extend(opcodes.iter().take(MATRIX_COLUMNS).map(|&(_, n)| pct(n)));
    all.push(pct(m.stall_samples));
    rows.push(Row::Cells(all));
    Grid {
        preamble: vec![format!(
            "{} {}: where the warps wait (stall samples · % of all {} warp samples, selected included)",
            v.id,
            v.title,
            format::thousands(m.samples as f64)
        )],
        header,
        rows,
        text_columns: Vec::new(),
    }
}

/// A comparison's grid: each section of its document under its heading, the rows that
/// text shows.
pub fn comparison(input: &CompareInput) -> Grid {
    comparison_grid(&input.document(), column_names(input))
}

fn comparison_grid(doc: &Document, (a, b): (String, String)) -> Grid {
    let mut rows = Vec::new();
    for section in &doc.sections {
        rows.extend(section.heading.clone().map(Row::Section));
        rows.extend(section.rows.iter().filter(|r| r.shown).map(|r| {
            Row::Cells(vec![
                r.name.clone(),
                r.a.clone(),
                r.b.clone(),
                r.delta.clone(),
                r.verdict.clone(),
            ])
        }));
    }
    Grid {
        preamble: doc.preamble(),
        header: vec!["metric".into(), a, b, "delta".into(), "verdict".into()],
        rows,
        text_columns: Vec::new(),
    }
}

/// The document as a grid for the table and Markdown: a section per version.
pub fn pipeline_grid(doc: &pipeline::Document) -> Grid {
    let mut preamble = vec![match &doc.shape {
        Some(s) => format!("Pipeline traces at {s}"),
        None => "Pipeline traces".to_string(),
    }];
    preamble.extend(pipeline::NOTES.iter().map(|n| n.to_string()));
    let mut rows = Vec::new();
    for v in &doc.versions {
        rows.push(Row::Section(format!("{} · {}", v.id, v.facts.join(" · "))));
        for r in &v.rows {
            rows.push(Row::Cells(vec![
                format!("{} · {}", r.role, r.what),
                r.all.clone(),
                r.block.clone(),
                r.overlapped.clone(),
            ]));
        }
    }
    Grid {
        preamble,
        header: [
            "role · stage",
            "all blocks",
            "median block",
            "overlapped most by",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        text_columns: vec![3],
    }
}

pub struct TextExporter {
    pub markdown: bool,
    /// The terminal's width, when the timeline is to fit it (text only): the versions
    /// then come in blocks of columns. `None`: one line per metric, however long.
    pub width: Option<usize>,
}

impl Exporter for TextExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let mut out = String::new();
        for (n, a) in ladders.iter().enumerate() {
            if n > 0 {
                out.push('\n');
            }
            if self.markdown {
                out.push_str(&markdown_timeline(a));
            } else {
                out.push_str(&text_timeline(a, self.width));
            }
        }
        out
    }

    fn compare(&self, input: &CompareInput) -> String {
        let doc = input.document();
        let grid = comparison_grid(&doc, column_names(input));
        if self.markdown {
            let mut out = render_markdown(&grid, "##");
            match &doc.sass {
                Sass::Aligned { heading, lines, .. } => {
                    out.push_str(&format!("\n### {heading}\n\n```diff\n"));
                    out.extend(lines.iter().map(|(_, l)| format!("{l}\n")));
                    out.push_str("```\n");
                }
                Sass::Missing(l) => out.push_str(&format!("\n{l}\n")),
            }
            out
        } else {
            // On a terminal, within its width like the report: the table in blocks of
            // columns, the other lines cut or broken to fit.
            let mut out = render_text_within(&grid, self.width);
            let text = |l: &str| fit_line(&format::printable(l), self.width);
            out.push('\n');
            match &doc.sass {
                Sass::Aligned { heading, lines, .. } => {
                    out.push_str(&text(heading));
                    // An instruction is cut, not broken, at the edge.
                    out.extend(lines.iter().map(|(_, l)| {
                        let l = format::printable(l);
                        match self.width {
                            Some(w) => format!("{}\n", text_width::cut(&l, w)),
                            None => format!("{l}\n"),
                        }
                    }));
                }
                Sass::Missing(l) => out.push_str(&text(l)),
            }
            out
        }
    }
}

/// The timeline as aligned text: the ladder, its trail and what the labels mean, the
/// table, and what the stall reasons shown mean; within `width` columns where one is
/// given (the tables in blocks of columns, the lines broken to fit).
fn text_timeline(a: &Analysed, width: Option<usize>) -> String {
    let mut out = String::new();
    let text = |l: &str| fit_line(&format::printable(l), width);
    for l in header_lines(a) {
        out.push_str(&text(&l));
    }
    out.push('\n');
    out.push_str(&render_text_within(&trail(a), width));
    let meanings = meanings(a);
    if !meanings.is_empty() {
        out.push_str("\nwhat the labels mean:\n");
        for m in meanings {
            out.push_str(&text(&format!("  {m}")));
        }
    }
    out.push_str(&timeline_text(&timeline(a), width));
    let reasons = stall_rows(&a.analysis.versions);
    if !reasons.is_empty() {
        out.push_str("\nwhat the stall reasons mean:\n");
        for r in reasons {
            out.push_str(&text(&format!("  {r}: {}", stall_help(r))));
        }
    }
    if let Some(doc) = pipeline::document(a) {
        out.push('\n');
        out.push_str(&render_text_within(&pipeline_grid(&doc), width));
        for l in pipeline::lines(&doc) {
            out.push_str(&text(&l));
        }
    }
    out
}

/// The timeline's table as text within `width`: versions as columns where they come in
/// one block, else whichever of the two layouts takes fewer lines (blocks of version
/// columns, or versions as rows, said above it).
fn timeline_text(g: &Grid, width: Option<usize>) -> String {
    let columns = render_text_within(g, width);
    let Some(w) = width else {
        return columns;
    };
    let headers = columns.lines().filter(|l| l.starts_with("metric ")).count();
    if headers <= 1 {
        return columns;
    }
    let mut rows = format!(
        "\n{}",
        fit_line(
            "versions as rows: the terminal is too narrow for a column per version (--wide gives one line per metric)",
            Some(w)
        )
    );
    rows.push_str(&render_versions_as_rows(g, w));
    if rows.lines().count() < columns.lines().count() {
        rows
    } else {
        columns
    }
}

/// The timeline as Markdown: the ladder, its trail, the table and each version's heat
/// table.
fn markdown_timeline(a: &Analysed) -> String {
    let esc = |s: &str| format::printable(s).replace('|', "\\|");
    let header = header_lines(a);
    let mut out = format!("## {}\n\n", esc(&header[0]));
    for l in &header[1..] {
        out.push_str(&format!("- {}\n", esc(l.trim())));
    }
    let mut t = trail(a);
    t.preamble = vec!["Bottleneck trail".into(), TRAIL_NOTE.join(" ")];
    out.push('\n');
    out.push_str(&render_markdown(&t, "###"));
    out.push('\n');
    for m in meanings(a) {
        out.push_str(&format!("- {}\n", esc(&m)));
    }
    let mut table = timeline(a);
    table.preamble = vec!["Timeline".into()];
    out.push('\n');
    out.push_str(&render_markdown(&table, "###"));
    for &i in &display_order(a.ladder) {
        if let Some(m) = &a.analysis.versions[i].matrix {
            out.push('\n');
            out.push_str(&render_markdown(&matrix(&a.ladder.versions[i], m), "###"));
        }
    }
    if let Some(doc) = pipeline::document(a) {
        out.push('\n');
        out.push_str(&render_markdown(&pipeline_grid(&doc), "###"));
        let lines = pipeline::lines(&doc);
        if !lines.is_empty() {
            out.push('\n');
        }
        for l in lines {
            out.push_str(&format!("- {}\n", esc(&l)));
        }
    }
    out.push('\n');
    out.push_str(&super::roofline::report_sections(
        &crate::analysis::roofline::ladder_roofline(a.ladder),
        &crate::analysis::estimates::estimates_table(a.ladder),
    ));
    out
}

/// A grid as aligned text, one line per row however long.
pub fn render_text(g: &Grid) -> String {
    render_text_within(g, None)
}

/// The widest cell of each column, its heading included.
fn column_widths(g: &Grid) -> Vec<usize> {
    let mut widths: Vec<usize> = g.header.iter().map(|h| text_width::width(h)).collect();
    for row in &g.rows {
        if let Row::Cells(cells) = row {
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(text_width::width(c));
            }
        }
    }
    widths
}

/// A cell that holds one number (thousands separators allowed): never cut.
fn is_number(c: &str) -> bool {
    c.trim().replace(',', "").parse::<f64>().is_ok()
}

/// On a terminal too narrow for the names beside one column of values: the names keep
/// three fifths of it (all that the widest number leaves, at most) and are cut on the
/// right; text values (a bottleneck label) are cut to what is left. Numbers never are.
fn narrow_to(g: &mut Grid, w: usize) {
    let value_cells = || {
        g.rows.iter().filter_map(|r| match r {
            Row::Cells(c) => Some(c.iter().skip(1)),
            Row::Section(_) => None,
        })
    };
    let first = column_widths(g).first().copied().unwrap_or(0);
    let widest = value_cells()
        .flatten()
        .map(|c| text_width::width(c))
        .max()
        .unwrap_or(0);
    if first + 2 + widest <= w {
        return;
    }
    let widest_number = value_cells()
        .flatten()
        .filter(|c| is_number(c))
        .map(|c| text_width::width(c))
        .max()
        .unwrap_or(0);
    let names = first
        .min(w.saturating_sub(2 + widest_number))
        .min(w * 3 / 5)
        .max(8);
    let values = w.saturating_sub(2 + names).max(8);
    let fit = |cells: &mut Vec<String>| {
        for (i, c) in cells.iter_mut().enumerate() {
            let room = if i == 0 { names } else { values };
            if text_width::width(c) > room && (i == 0 || !is_number(c)) {
                *c = text_width::cut(c, room);
            }
        }
    };
    fit(&mut g.header);
    for row in &mut g.rows {
        if let Row::Cells(cells) = row {
            fit(cells);
        }
    }
}

/// A grid as aligned text within `width` columns: the columns after the first in
/// blocks that fit, each block with the first column again, one after the other; the
/// lines above the table broken to fit. `None`, or a grid that fits: one block.
pub fn render_text_within(g: &Grid, width: Option<usize>) -> String {
    let mut g = g.printable();
    if let Some(w) = width {
        narrow_to(&mut g, w);
    }
    let g = &g;
    let widths = column_widths(g);
    // Blocks of columns (positions after the first), as many as fit in each.
    let mut blocks: Vec<Vec<usize>> = Vec::new();
    let first = widths.first().copied().unwrap_or(0);
    for col in 1..widths.len() {
        let fits = |b: &Vec<usize>| {
            let used: usize = first + b.iter().map(|&c| 2 + widths[c]).sum::<usize>();
            width.is_none_or(|w| used + 2 + widths[col] <= w)
        };
        match blocks.last_mut() {
            Some(b) if fits(b) => b.push(col),
            _ => blocks.push(vec![col]),
        }
    }
    if blocks.is_empty() {
        blocks.push(Vec::new());
    }
    let mut out = String::new();
    for p in &g.preamble {
        out.push_str(&fit_line(p, width));
    }
    for block in &blocks {
        let cols: Vec<usize> = std::iter::once(0).chain(block.iter().copied()).collect();
        let pick = |cells: &[String]| -> Vec<String> {
            cols.iter()
                .map(|&c| cells.get(c).cloned().unwrap_or_default())
                .collect()
        };
        let sub = Grid {
            preamble: Vec::new(),
            header: pick(&g.header),
            rows: g
                .rows
                .iter()
                .map(|r| match r {
                    Row::Section(name) => Row::Section(name.clone()),
                    Row::Cells(cells) => Row::Cells(pick(cells)),
                })
                .collect(),
            text_columns: (0..cols.len())
                .filter(|&i| g.text_columns.contains(&cols[i]))
                .collect(),
        };
        out.push('\n');
        out.push_str(&render_block(&sub, width));
    }
    out
}

/// A header broken into lines of at most `width` columns: at spaces, and after the `_`
/// of a long name (`math_pipe_` `throttle`); a piece longer than a line is cut.
fn wrap_heading(text: &str, within: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let mut pieces: Vec<String> = word.split_inclusive('_').map(String::from).collect();
        // Pieces of a word join without a space; the word after a space.
        let first = pieces.remove(0);
        let joined = std::iter::once((first, true)).chain(pieces.into_iter().map(|p| (p, false)));
        for (piece, spaced) in joined {
            let sep = if spaced && !current.is_empty() {
                " "
            } else {
                ""
            };
            if !current.is_empty() && width(&current) + sep.len() + width(&piece) > within {
                lines.push(std::mem::take(&mut current));
                current.push_str(&piece);
            } else {
                current.push_str(sep);
                current.push_str(&piece);
            }
        }
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
        .into_iter()
        .map(|l| text_width::cut(&l, within))
        .collect()
}

/// The widest a heading's column is made for its heading's sake (its values may make it
/// wider): longer headings wrap.
const HEADING_W: usize = 10;

/// A cell of words rather than a figure (`PC samples`, `barrier @ WARPGROUP`,
/// `registers, 2 blocks/SM`): its column aligns left.
fn is_text(c: &str) -> bool {
    c.chars()
        .next()
        .is_some_and(|ch| !(ch.is_ascii_digit() || matches!(ch, '-' | '+' | '−' | '∞' | '—')))
}

/// One metric's column when the versions are rows: its heading lines, its cells, its
/// width, its alignment.
struct Column {
    heading: Vec<String>,
    cells: Vec<String>,
    w: usize,
    text: bool,
}

impl Column {
    /// The column of the timeline row `r` (its name, then one cell per version) with
    /// `room` beside the version column.
    fn of(r: &[String], versions: usize, room: usize) -> Column {
        let mut cells: Vec<String> = (1..=versions)
            .map(|i| r.get(i).cloned().unwrap_or_default())
            .collect();
        let text = cells.iter().any(|c| is_text(c));
        let values = cells.iter().map(|c| width(c)).max().unwrap_or(0);
        let title = &r[0];
        let longest_piece = title
            .split_whitespace()
            .flat_map(|w| w.split_inclusive('_'))
            .map(width)
            .max()
            .unwrap_or(0);
        let w = values.max(longest_piece).max(width(title).min(HEADING_W));
        // Text gives way to the room beside the versions; numbers never do.
        let w = if text { w.min(room) } else { w };
        if text {
            for c in &mut cells {
                *c = text_width::cut(c, w);
            }
        }
        Column {
            heading: wrap_heading(title, w),
            cells,
            w,
            text,
        }
    }
}

/// The timeline grid turned round within `width` columns: versions as rows, one table
/// per section of metrics (the bottleneck's rows first), the metrics as columns in
/// blocks that fit, each block led by the version column; headings wrapped to their
/// column, text cut where a column would not fit beside the versions' (numbers never).
pub fn render_versions_as_rows(g: &Grid, within: usize) -> String {
    let g = g.printable();
    let versions: Vec<String> = g.header.iter().skip(1).cloned().collect();
    // Sections: a name and the metric rows under it.
    let mut sections: Vec<(String, Vec<&Vec<String>>)> = vec![("bottleneck".into(), Vec::new())];
    for r in &g.rows {
        match r {
            Row::Section(name) => sections.push((name.clone(), Vec::new())),
            Row::Cells(cells) => sections.last_mut().expect("a section").1.push(cells),
        }
    }
    let head = "version".to_string();
    let version_w = versions
        .iter()
        .map(|v| width(v))
        .chain([width(&head)])
        .max()
        .unwrap_or(0);
    let room = within.saturating_sub(version_w + 2).max(8);
    let mut out = String::new();
    for (name, rows) in sections.into_iter().filter(|(_, r)| !r.is_empty()) {
        let columns: Vec<Column> = rows
            .iter()
            .map(|r| Column::of(r, versions.len(), room))
            .collect();
        // Blocks of columns that fit beside the version column.
        let mut blocks: Vec<Vec<&Column>> = Vec::new();
        for c in &columns {
            match blocks.last_mut() {
                Some(b)
                    if version_w + b.iter().map(|c| c.w + 2).sum::<usize>() + 2 + c.w <= within =>
                {
                    b.push(c)
                }
                _ => blocks.push(vec![c]),
            }
        }
        let count = blocks.len();
        for (n, block) in blocks.iter().enumerate() {
            let total = version_w + block.iter().map(|c| c.w + 2).sum::<usize>();
            let title = if count > 1 {
                format!("{name} ({} of {count})", n + 1)
            } else {
                name.clone()
            };
            let rule = format!("── {title} ");
            out.push('\n');
            out.push_str(&text_width::cut(
                &format!("{rule}{}", "─".repeat(total.saturating_sub(width(&rule)))),
                within,
            ));
            out.push('\n');
            let height = block.iter().map(|c| c.heading.len()).max().unwrap_or(1);
            let line = |first: &str, cell: &dyn Fn(&Column) -> String| {
                let mut s = format!("{first}{}", " ".repeat(version_w - width(first)));
                for c in block {
                    let text = cell(c);
                    let pad = " ".repeat(c.w.saturating_sub(width(&text)));
                    s.push_str("  ");
                    if c.text {
                        s.push_str(&text);
                        s.push_str(&pad);
                    } else {
                        s.push_str(&pad);
                        s.push_str(&text);
                    }
                }
                s.trim_end().to_string()
            };
            // Headings bottom-aligned, over the rule.
            for k in 0..height {
                let first = if k + 1 == height { head.as_str() } else { "" };
                out.push_str(&line(first, &|c: &Column| {
                    let skip = height - c.heading.len();
                    if k >= skip {
                        c.heading[k - skip].clone()
                    } else {
                        String::new()
                    }
                }));
                out.push('\n');
            }
            out.push_str(&"─".repeat(total));
            out.push('\n');
            for (i, v) in versions.iter().enumerate() {
                out.push_str(&line(v, &|c: &Column| c.cells[i].clone()));
                out.push('\n');
            }
        }
    }
    out
}

/// A line of text broken to fit `width` columns: before each `→` of a trail, else at
/// spaces, continued with an indent; a word longer than a line (a
/// kernel's name) cut with an ellipsis. As it is without a width.
fn fit_line(line: &str, width: Option<usize>) -> String {
    let Some(width) = width.filter(|&w| text_width::width(line) > w) else {
        return format!("{line}\n");
    };
    // A trail (several steps) breaks between its steps.
    let (words, sep): (Vec<&str>, &str) = if line.matches(" → ").count() > 1 {
        (line.split(" → ").collect(), " → ")
    } else {
        (line.split(' ').collect(), " ")
    };
    let mut out = String::new();
    let mut current = String::new();
    for (i, word) in words.iter().enumerate() {
        let piece = if i == 0 {
            word.to_string()
        } else {
            format!("{sep}{word}")
        };
        if !current.trim().is_empty()
            && text_width::width(&current) + text_width::width(&piece) > width
        {
            out.push_str(current.trim_end());
            out.push('\n');
            current = format!("  {}", piece.trim_start());
        } else {
            current.push_str(&piece);
        }
    }
    out.push_str(current.trim_end());
    out.push('\n');
    out.lines()
        .map(|l| format!("{}\n", text_width::cut(l, width)))
        .collect()
}

/// One block of a grid: header, rule and rows, aligned; a section's name longer than
/// `fit` cut.
fn render_block(g: &Grid, fit: Option<usize>) -> String {
    let cols = g.header.len();
    let widths = column_widths(g);
    let total: usize = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = w.saturating_sub(width(c));
            if i == 0 || g.text_columns.contains(&i) {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    };
    let mut out = String::new();
    out.push_str(&line(&g.header));
    out.push('\n');
    out.push_str(&"─".repeat(total));
    out.push('\n');
    for row in &g.rows {
        match row {
            Row::Section(name) => {
                let mut rule = format!("── {name} ");
                rule.push_str(&"─".repeat(total.saturating_sub(text_width::width(name) + 4)));
                let rule = match fit {
                    Some(w) => text_width::cut(&rule, w),
                    None => rule,
                };
                out.push_str(&rule);
                out.push('\n');
            }
            Row::Cells(cells) => {
                out.push_str(&line(cells));
                out.push('\n');
            }
        }
    }
    out
}

/// A grid as a Markdown table: the preamble's first line a heading at `level` (`##`),
/// the others a list.
pub fn render_markdown(g: &Grid, level: &str) -> String {
    let g = &g.printable();
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for (i, p) in g.preamble.iter().enumerate() {
        if i == 0 {
            out.push_str(&format!("{level} {}\n\n", esc(p)));
        } else {
            out.push_str(&format!("- {}\n", esc(p.trim())));
        }
    }
    if g.preamble.len() > 1 {
        out.push('\n');
    }
    let row = |cells: &[String]| {
        format!(
            "| {} |\n",
            cells.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
        )
    };
    out.push_str(&row(&g.header));
    out.push_str(&format!(
        "|{}|\n",
        g.header
            .iter()
            .enumerate()
            .map(|(i, _)| if i == 0 || g.text_columns.contains(&i) {
                " --- "
            } else {
                " ---: "
            })
            .collect::<Vec<_>>()
            .join("|")
    ));
    for r in &g.rows {
        match r {
            Row::Section(name) => {
                let mut cells = vec![format!("**{name}**")];
                cells.resize(g.header.len(), String::new());
                out.push_str(&row(&cells));
            }
            Row::Cells(cells) => out.push_str(&row(cells)),
        }
    }
    out
}
