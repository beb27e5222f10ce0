//! Where the selected version's warps wait: its label (the hottest cell of the stall
//! reason × instruction class table) with the runner-up and the step from its parent,
//! what they mean, the table itself heat-coloured with a row cursor, and what the row
//! under the cursor means.

use super::scene::Scene;
use super::scroll::{clamp_scroll, moved};
use crate::analysis::catalogue::{cell_help, combination_help, opcode_help, stall_help};
use crate::analysis::{StallMatrix, VersionAnalysis};
use crate::report::{self, format};
use crate::text_width;
use crate::tui::action::Action;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The bottleneck view's state: its cursor, a row (stall reason) of the selected
/// version's (reason × opcode) table.
#[derive(Debug, Default)]
pub struct BottleneckState {
    pub row: usize,
}

impl BottleneckState {
    /// The bottleneck view's own actions: the moves take its cursor from row to row.
    pub(crate) fn act(&mut self, action: Action, page: usize) {
        if let Some(at) = moved(self.row, action, page) {
            self.row = at;
        }
    }

    /// Keeps the cursor on a row of a table of `rows` rows (`None`: no table), so that ↑
    /// after End moves at once.
    pub(crate) fn clamp(&mut self, rows: Option<usize>) {
        self.row = self.row.min(rows.unwrap_or(1).saturating_sub(1));
    }

    /// The row under the cursor of the table `m`: a stall reason, with its samples.
    pub fn reason(&self, m: &StallMatrix) -> Option<(crate::ncu::StallReason, u64)> {
        let rows = m.reasons();
        rows.get(self.row.min(rows.len().saturating_sub(1)))
            .copied()
    }
}

/// Width of a reason (row name), the least of an opcode column, and of a share in it.
const NAME_W: usize = 20;
const COL_W: usize = 10;
const SHARE_W: usize = 5;

pub fn draw(frame: &mut Frame, scene: &Scene, state: &BottleneckState, body: Rect) {
    let Some(i) = scene.version_index() else {
        return;
    };
    let a = &scene.ladder().analysis.versions[i];
    let width = body.width as usize;
    let top = summary(scene, i);
    let Some(m) = &a.matrix else {
        frame.render_widget(Paragraph::new(top).wrap(Wrap { trim: false }), body);
        return;
    };
    let (lines, cursor_line) = table(scene, state, m, width);
    let meaning = row_meaning(scene, state, m);
    let [summary_area, table_area, meaning_area, _] = Layout::vertical([
        Constraint::Length(wrapped_height(&top, width)),
        Constraint::Max(lines.len() as u16),
        Constraint::Length(wrapped_height(&meaning, width)),
        Constraint::Min(0),
    ])
    .areas(body);
    frame.render_widget(Paragraph::new(top).wrap(Wrap { trim: false }), summary_area);
    let visible = table_area.height.saturating_sub(1) as usize;
    let offset = clamp_scroll(
        (cursor_line + 1).saturating_sub(visible),
        lines.len().saturating_sub(1),
        visible,
    );
    let mut shown = vec![lines[0].clone()];
    shown.extend(lines.into_iter().skip(1 + offset).take(visible));
    frame.render_widget(Paragraph::new(shown), table_area);
    frame.render_widget(
        Paragraph::new(meaning).wrap(Wrap { trim: false }),
        meaning_area,
    );
}

/// Rows the lines take once wrapped at `width`.
fn wrapped_height(lines: &[Line], width: usize) -> u16 {
    let rows: usize = lines
        .iter()
        .map(|l| l.width().max(1).div_ceil(width.max(1)))
        .sum();
    rows.min(u16::MAX as usize) as u16
}

/// The label, its runner-up and the step from the parent, with what the cells mean;
/// where the stall figures come from.
pub fn summary(scene: &Scene, i: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let ls = scene.ladder();
    let a = &ls.analysis.versions[i];
    let mut out = Vec::new();
    match &a.bottleneck {
        Some(b) => {
            let mut spans = vec![
                Span::styled("bottleneck ", t.dim()),
                Span::styled(b.top.to_string(), t.moved()),
                Span::raw(format!(" {} %", format::share(Some(b.top.share)))),
            ];
            if let Some(r) = &b.runner_up {
                let z = b.z.map(report::z_text).unwrap_or_else(|| "∞".into());
                spans.push(Span::styled(
                    if b.near_tie {
                        "  ≈ near-tie with "
                    } else {
                        "  runner-up "
                    },
                    t.dim(),
                ));
                spans.push(Span::raw(format!(
                    "{r} {} % (lead z {z})",
                    format::share(Some(r.share))
                )));
            }
            out.push(Line::from(spans));
            let tie = b.runner_up.as_ref().filter(|_| b.near_tie);
            for c in std::iter::once(&b.top).chain(tie) {
                out.push(Line::from(vec![
                    Span::styled(format!("  {c}: "), t.key()),
                    Span::raw(cell_help(c.reason, &c.opcode)),
                ]));
            }
        }
        None => out.push(Line::styled(
            a.no_label
                .map(|n| n.explain())
                .unwrap_or_else(|| "no stall data".into()),
            t.dim(),
        )),
    }
    // The step from the version it was judged against: its parent, or the labelled
    // version before it where the parent has no label.
    if let Some(s) = ls.analysis.trail.iter().find(|s| s.index == i)
        && let Some(p) = &s.parent
    {
        let built_on = match s.judged_against().filter(|j| j != p) {
            Some(j) => format!("built on {p}, compared with {j}: "),
            None => format!("built on {p}: "),
        };
        let against = s.judged_against().unwrap_or(p);
        let before = ls
            .ladder
            .version_index(against)
            .map(|j| &ls.analysis.versions[j])
            .map(|ja| report::label_text(ja.bottleneck.as_ref(), ja.no_label))
            .unwrap_or_default();
        let verdict = report::verdict_text(s, None);
        let said = match (verdict.is_empty(), s.verdict) {
            (_, crate::analysis::StepVerdict::NoLabel) => String::new(),
            (true, _) => "  (same cell)".to_string(),
            (false, _) => format!("  ({verdict})"),
        };
        out.push(Line::from(vec![
            Span::styled(built_on, t.dim()),
            Span::raw(format!(
                "{before} → {}",
                report::label_text(a.bottleneck.as_ref(), a.no_label)
            )),
            Span::styled(said, t.dim()),
        ]));
    }
    out.push(Line::styled(source_line(a), t.dim()));
    if a.matrix.is_some() {
        out.push(Line::default());
    }
    out
}

/// "stall shares from PC samples (raw page), 10,686 samples; table of 8,782 stall
/// samples of the source page (selected left out)".
fn source_line(a: &VersionAnalysis) -> String {
    let shares = match &a.stalls {
        Some(s) => format!(
            "stall shares from {}{}",
            s.source.describe(),
            s.samples
                .map(|n| format!(", {} samples", format::thousands(n as f64)))
                .unwrap_or_default()
        ),
        None => "no stall shares".into(),
    };
    match &a.matrix {
        Some(m) => format!(
            "{shares}; table of the source page's {} stall samples (samples and % of all {} warp samples, selected included)",
            format::thousands(m.stall_samples as f64),
            format::thousands(m.samples as f64)
        ),
        None => shares,
    }
}

/// The heat table as lines (the header first) and the line of the cursor's row: each
/// cell its stall samples (dim) and their % of the table's.
fn table(
    scene: &Scene,
    state: &BottleneckState,
    m: &StallMatrix,
    width: usize,
) -> (Vec<Line<'static>>, usize) {
    let t = &scene.theme;
    // Wide enough for the largest count (the table's own, in the corner) and "100.0".
    let count_w = text_width::width(&format::thousands(m.stall_samples as f64));
    let col_w = (count_w + SHARE_W + 2).max(COL_W);
    let cols_fit = (width.saturating_sub(NAME_W + col_w) / col_w).max(1);
    let opcodes = m.opcodes();
    let cols: Vec<&str> = opcodes.iter().take(cols_fit).map(|(o, _)| *o).collect();
    let mut header = vec![Span::styled(
        format!("{:<NAME_W$}", "reason \\ opcode"),
        t.dim(),
    )];
    header.extend(
        cols.iter()
            .map(|o| Span::styled(format!("{o:>col_w$}"), t.title())),
    );
    header.push(Span::styled(format!("{:>col_w$}", "all"), t.title()));
    let mut lines = vec![Line::from(header)];
    let share = |n: u64| m.fraction(n);
    // A cell: its samples, dim, and their share.
    let cell = |n: u64, style: ratatui::style::Style| {
        [
            Span::styled(
                format!(
                    "{:>w$}",
                    format::thousands(n as f64),
                    w = col_w - SHARE_W - 1
                ),
                t.dim(),
            ),
            Span::styled(format!(" {:>SHARE_W$.1}", share(n) * 100.0), style),
        ]
    };
    let cursor = state.reason(m).map(|(r, _)| r);
    let top = m.cells.first();
    for (r, n) in m.reasons() {
        let mark = if Some(r) == cursor { '▸' } else { ' ' };
        let mut spans = vec![
            Span::styled(t.reason_fill(r).to_string(), t.reason(r)),
            Span::raw(format!("{mark}{:<w$}", r.metric_name(), w = NAME_W - 2)),
        ];
        for o in &cols {
            let c = m.count(r, o);
            if c == 0 {
                spans.push(Span::raw(format!("{:>col_w$}", "·")));
                continue;
            }
            let is_top = top.is_some_and(|x| x.reason == r && x.opcode == *o);
            spans.extend(cell(c, if is_top { t.moved() } else { t.hot(share(c)) }));
        }
        spans.extend(cell(n, ratatui::style::Style::new()));
        let line = Line::from(spans);
        lines.push(if Some(r) == cursor {
            line.style(t.selected())
        } else {
            line
        });
    }
    let mut all = vec![Span::styled(format!("{:<NAME_W$}", "all"), t.title())];
    for &(_, n) in opcodes.iter().take(cols_fit) {
        all.extend(cell(n, ratatui::style::Style::new()));
    }
    all.extend(cell(m.stall_samples, ratatui::style::Style::new()));
    lines.push(Line::from(all));
    (lines, state.row)
}

/// What the row under the cursor means, and its hottest cell.
fn row_meaning(scene: &Scene, state: &BottleneckState, m: &StallMatrix) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let Some((r, n)) = state.reason(m) else {
        return Vec::new();
    };
    let mut out = vec![Line::from(vec![
        Span::styled(format!("{r} "), t.key()),
        Span::styled(
            format!(
                "({} % of all warp samples): ",
                format::share(Some(m.fraction(n)))
            ),
            t.dim(),
        ),
        Span::raw(stall_help(r)),
    ])];
    if let Some(c) = m.cells.iter().find(|c| c.reason == r) {
        let meaning = combination_help(r, &c.opcode)
            .map(str::to_string)
            .or_else(|| opcode_help(&c.opcode))
            .unwrap_or_else(|| "no glossary entry for this instruction class".into());
        out.push(Line::from(vec![
            Span::styled(format!("hottest at {} ", c.opcode), t.key()),
            Span::styled(format!("({} %): ", format::share(Some(c.share))), t.dim()),
            Span::raw(meaning),
        ]));
    }
    out
}
