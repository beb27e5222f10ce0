//! The timeline and the comparison as a grid of cells, printed as aligned text or as a
//! Markdown table.

use super::format::{self, UNKNOWN, width};
use super::{Analysed, CompareInput, Exporter, display_order, stall_rows, trail_line};
use crate::analysis::{Group, METRICS, catalogue::stall_help};

pub enum Row {
    Section(String),
    Cells(Vec<String>),
}

/// Lines of text above a table, a header and rows.
pub struct Grid {
    pub preamble: Vec<String>,
    pub header: Vec<String>,
    pub rows: Vec<Row>,
}

fn group_name(g: Group) -> &'static str {
    match g {
        Group::Speed => "speed",
        Group::Compute => "compute",
        Group::Memory => "memory",
        Group::Launch => "launch",
    }
}

/// The timeline of one ladder: versions as columns, metrics as rows.
pub fn timeline(a: &Analysed) -> Grid {
    let ladder = a.ladder;
    let order = display_order(ladder);
    let mut preamble = vec![format!("{} — {}", ladder.name, ladder.title)];
    if let Some(p) = &ladder.problem {
        preamble.push(p.clone());
    }
    preamble.push(format!("trail: {}", trail_line(a)));
    for &i in &order {
        let v = &ladder.versions[i];
        let kind = if v.baseline { " (baseline)" } else { "" };
        let kernel = v
            .profile
            .as_ref()
            .map(|p| format!(" [{}]", p.short_name()))
            .unwrap_or_default();
        preamble.push(format!("  {:<6} {}{kind}{kernel}", v.id, v.title));
    }

    let mut header = vec!["metric".to_string()];
    header.extend(order.iter().map(|&i| {
        let v = &ladder.versions[i];
        if v.baseline {
            format!("[{}]", v.id)
        } else {
            v.id.clone()
        }
    }));

    let mut rows = Vec::new();
    let cell = |i: usize| &a.analysis.versions[i];
    rows.push(Row::Cells(
        std::iter::once("bottleneck".to_string())
            .chain(order.iter().map(|&i| {
                cell(i)
                    .bottleneck
                    .as_ref()
                    .map(|b| b.to_string())
                    .unwrap_or_else(|| UNKNOWN.to_string())
            }))
            .collect(),
    ));
    let mut group = None;
    for d in METRICS {
        if order.iter().all(|&i| cell(i).get(d.id).is_none()) {
            continue;
        }
        if group != Some(d.group) {
            rows.push(Row::Section(group_name(d.group).to_string()));
            group = Some(d.group);
        }
        let name = d.label();
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
    let reasons = stall_rows(&a.analysis.versions);
    if !reasons.is_empty() {
        rows.push(Row::Section("stalls (% of samples)".to_string()));
        for r in reasons {
            rows.push(Row::Cells(
                std::iter::once(r.metric_name().to_string())
                    .chain(
                        order
                            .iter()
                            .map(|&i| format::share(cell(i).stalls.as_ref().map(|s| s.share(r)))),
                    )
                    .collect(),
            ));
        }
    }
    if order.iter().any(|&i| !cell(i).hot_ops.is_empty()) {
        rows.push(Row::Section(
            "hottest instructions (% of stall samples)".to_string(),
        ));
        for rank in 0..3 {
            rows.push(Row::Cells(
                std::iter::once(format!("#{}", rank + 1))
                    .chain(order.iter().map(|&i| {
                        let ops = &cell(i).hot_ops;
                        let total: u64 = ops.iter().map(|o| o.stall_samples).sum();
                        match ops.get(rank) {
                            Some(o) if total > 0 => format!(
                                "{} {:.0}%",
                                o.opcode,
                                100.0 * o.stall_samples as f64 / total as f64
                            ),
                            _ => UNKNOWN.to_string(),
                        }
                    }))
                    .collect(),
            ));
        }
    }
    Grid {
        preamble,
        header,
        rows,
    }
}

pub fn comparison(input: &CompareInput) -> Grid {
    let c = input.comparison;
    let mut rows = Vec::new();
    for m in &c.metrics {
        if m.a.is_none() && m.b.is_none() {
            continue;
        }
        let d = m.id.def();
        rows.push(Row::Cells(vec![
            d.name.to_string(),
            format::with_unit(d.kind, m.a),
            format::with_unit(d.kind, m.b),
            format::delta(d.kind, m.a, m.b),
            m.verdict.symbol().to_string(),
        ]));
    }
    if !c.stalls.is_empty() {
        rows.push(Row::Section("stalls (% of samples)".to_string()));
        for s in &c.stalls {
            let pct = |x: Option<f64>| x.map(|v| v * 100.0);
            rows.push(Row::Cells(vec![
                s.reason.metric_name().to_string(),
                format::share(s.a),
                format::share(s.b),
                format::delta(crate::analysis::Kind::Percent, pct(s.a), pct(s.b)),
                s.verdict.symbol().to_string(),
            ]));
        }
    }
    if !c.hot_ops_a.is_empty() || !c.hot_ops_b.is_empty() {
        rows.push(Row::Section(
            "hottest instructions (stall samples)".to_string(),
        ));
        let op = |ops: &[crate::analysis::OpcodeStat], i: usize| {
            ops.get(i)
                .map(|o| format!("{} {}", o.opcode, format::thousands(o.stall_samples as f64)))
                .unwrap_or_else(|| UNKNOWN.to_string())
        };
        for i in 0..c.hot_ops_a.len().max(c.hot_ops_b.len()).min(5) {
            rows.push(Row::Cells(vec![
                format!("#{}", i + 1),
                op(&c.hot_ops_a, i),
                op(&c.hot_ops_b, i),
                String::new(),
                String::new(),
            ]));
        }
    }
    Grid {
        preamble: vec![format!("{} → {}", input.a_name, input.b_name)],
        header: vec![
            "metric".into(),
            input.a_name.clone(),
            input.b_name.clone(),
            "delta".into(),
            "verdict".into(),
        ],
        rows,
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
                out.push_str(&render_markdown(&timeline(a)));
                continue;
            }
            out.push_str(&render_text_within(&timeline(a), self.width));
            let reasons = stall_rows(&a.analysis.versions);
            if let Some(top) = reasons.first() {
                let help = format!("{top}: {}", stall_help(*top));
                out.push('\n');
                out.push_str(&fit_line(&help, self.width));
            }
        }
        out
    }

    fn compare(&self, input: &CompareInput) -> String {
        let g = comparison(input);
        if self.markdown {
            render_markdown(&g)
        } else {
            render_text(&g)
        }
    }
}

/// A grid as aligned text, one line per row however long.
pub fn render_text(g: &Grid) -> String {
    render_text_within(g, None)
}

/// A grid as aligned text within `width` columns: the columns after the first in
/// blocks that fit, each block with the first column again, one after the other; the
/// lines above the table broken to fit. `None`, or a grid that fits: one block.
pub fn render_text_within(g: &Grid, width: Option<usize>) -> String {
    let mut widths: Vec<usize> = g.header.iter().map(|h| format::width(h)).collect();
    for row in &g.rows {
        if let Row::Cells(cells) = row {
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(format::width(c));
            }
        }
    }
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
        };
        out.push('\n');
        out.push_str(&render_block(&sub, width));
    }
    out
}

/// A line of text broken to fit `width` columns: before each `→` of a trail, else at
/// spaces, continued with an indent; a word longer than a line (a
/// kernel's name) cut with an ellipsis. As it is without a width.
fn fit_line(line: &str, width: Option<usize>) -> String {
    let Some(width) = width.filter(|&w| format::width(line) > w) else {
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
        if !current.trim().is_empty() && format::width(&current) + format::width(&piece) > width {
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
        .map(|l| format!("{}\n", cut(l, width)))
        .collect()
}

/// A text cut to `width` columns, an ellipsis last where it was cut.
fn cut(text: &str, width: usize) -> String {
    if format::width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for c in text.chars() {
        if format::width(&out) + format::width(c.encode_utf8(&mut [0; 4])) + 1 > width {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

/// One block of a grid: header, rule and rows, aligned; a section's name longer than
/// `fit` cut.
fn render_block(g: &Grid, fit: Option<usize>) -> String {
    let cols = g.header.len();
    let mut widths: Vec<usize> = g.header.iter().map(|h| width(h)).collect();
    for row in &g.rows {
        if let Row::Cells(cells) = row {
            for (w, c) in widths.iter_mut().zip(cells) {
                *w = (*w).max(width(c));
            }
        }
    }
    let total: usize = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = w.saturating_sub(width(c));
            if i == 0 {
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
                rule.push_str(&"─".repeat(total.saturating_sub(format::width(name) + 4)));
                let rule = match fit {
                    Some(w) => cut(&rule, w),
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

pub fn render_markdown(g: &Grid) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for (i, p) in g.preamble.iter().enumerate() {
        if i == 0 {
            out.push_str(&format!("## {}\n\n", esc(p)));
        } else {
            out.push_str(&format!("- {}\n", esc(p.trim())));
        }
    }
    out.push('\n');
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
            .map(|(i, _)| if i == 0 { " --- " } else { " ---: " })
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
