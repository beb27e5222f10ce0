//! The selected version's notes (change, prediction, outcome), its bottleneck against
//! its parent's, and the diff of its kernel source from its parent's (the version it was
//! built on).

use super::compare::diff_lines;
use super::scene::Scene;
use super::scroll::clamp_scroll;
use super::text::{printable, split_width, wrap};
use crate::report::format;
use crate::text_width;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// The notes view's state: how far it is scrolled.
pub type NotesState = super::scroll::Scrolled;

pub fn draw(frame: &mut Frame, scene: &Scene, state: &NotesState, body: Rect) {
    let lines: Vec<Line> = document(scene, body.width as usize);
    // Wrapped lines can take more rows than lines: count them for the scroll limit.
    let width = body.width.max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
    let offset = clamp_scroll(state.scroll, rows, body.height as usize);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((offset.min(u16::MAX as usize) as u16, 0)),
        body,
    );
}

/// The view's lines for a body `width` columns wide: prose is left for the terminal to
/// wrap, while tables and diff lines come laid out to the width (a table as columns, a
/// diff line's continuation under its `+`/`-` marker).
pub fn document(scene: &Scene, width: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let ls = scene.ladder();
    let Some(i) = scene.version_index() else {
        return Vec::new();
    };
    let v = &ls.ladder.versions[i];
    let mut out = Vec::new();
    match &v.notes {
        Some(text) => {
            let lines = reflow(text);
            let mut at = 0;
            while at < lines.len() {
                let l = &lines[at];
                if let Some(rows) = table_at(&lines[at..]) {
                    let cells: Vec<Vec<String>> = lines[at..at + rows]
                        .iter()
                        .enumerate()
                        .filter(|&(n, _)| n != 1)
                        .map(|(_, r)| table_cells(r))
                        .collect();
                    let aligns = table_cells(&lines[at + 1])
                        .iter()
                        .map(|c| c.ends_with(':'))
                        .collect::<Vec<_>>();
                    out.extend(table_lines(scene, &cells, &aligns, width));
                    at += rows;
                    continue;
                }
                at += 1;
                let l = printable(Line::raw(l.clone())).to_string();
                out.push(if l.starts_with('#') {
                    Line::styled(l.trim_start_matches('#').trim().to_string(), t.title())
                } else if l.starts_with("**") {
                    Line::styled(l.replace("**", ""), t.moved())
                } else {
                    Line::raw(l)
                });
            }
        }
        None => out.push(Line::styled(format!("{} has no notes", v.id), t.dim())),
    }
    out.push(Line::default());
    let a = &ls.analysis.versions[i];
    let now = crate::report::label_text(a.bottleneck.as_ref(), a.no_label);
    let parent = ls.ladder.parent_of(i);
    out.push(Line::from(match parent {
        Some(p) => {
            let pa = &ls.analysis.versions[p];
            vec![
                Span::styled(
                    format!("bottleneck (stallscope): {} ", ls.ladder.versions[p].id),
                    t.dim(),
                ),
                Span::raw(crate::report::label_text(
                    pa.bottleneck.as_ref(),
                    pa.no_label,
                )),
                Span::styled(format!(" → {} ", v.id), t.dim()),
                Span::styled(now, t.moved()),
            ]
        }
        None => vec![
            Span::styled(format!("bottleneck (stallscope): {} ", v.id), t.dim()),
            Span::styled(now, t.moved()),
        ],
    }));
    out.push(Line::default());
    // The diff is from the version this one was built on (its parent), where it has a
    // kernel source.
    let previous = parent
        .map(|p| &ls.ladder.versions[p])
        .filter(|p| p.source.is_some());
    match (previous, &v.source) {
        (Some(p), Some((path, text))) => {
            out.push(Line::styled(
                format!("diff from {} ({})", p.id, scene.ladder_path(path)),
                t.title(),
            ));
            let (_, old) = p.source.as_ref().expect("filtered on a source");
            for l in diff_lines(scene, old, text) {
                out.extend(wrap_diff_line(printable(l), width));
            }
        }
        (None, Some((path, text))) => {
            out.push(Line::styled(
                format!("source ({})", scene.ladder_path(path)),
                t.title(),
            ));
            out.extend(text.lines().map(|l| printable(Line::raw(l.to_string()))));
        }
        _ => out.push(Line::styled("no kernel source in this ladder", t.dim())),
    }
    out
}

/// A diff line (one span) in lines of `width` columns: where it is longer, each
/// continuation starts with the line's marker (`+`, `-`, or a space for context) and `↳`,
/// so that a wrapped added line still reads as added.
fn wrap_diff_line(line: Line<'static>, width: usize) -> Vec<Line<'static>> {
    let text = line.to_string();
    if text_width::width(&text) <= width || width < 4 {
        return vec![line];
    }
    let style = line.spans.first().map_or(line.style, |s| s.style);
    let marker = text.chars().next().unwrap_or(' ');
    let head = split_width(&text, width);
    let mut out = vec![Line::styled(head[0].clone(), style)];
    let rest: String = text[head[0].len()..].to_string();
    let lead = format!("{marker}↳");
    let room = width - text_width::width(&lead);
    for piece in split_width(&rest, room) {
        out.push(Line::styled(format!("{lead}{piece}"), style));
    }
    out
}

/// Where `lines` start with a Markdown table (a row of `|` cells, then its `|---|`
/// line), how many lines it takes.
fn table_at(lines: &[String]) -> Option<usize> {
    let is_row = |l: &String| l.trim_start().starts_with('|');
    let sep = lines.get(1)?;
    let separator = is_row(sep)
        && table_cells(sep).iter().all(|c| {
            let c = c.trim_matches(':');
            !c.is_empty() && c.chars().all(|ch| ch == '-')
        });
    if !(is_row(&lines[0]) && separator) {
        return None;
    }
    Some(lines.iter().take_while(|l| is_row(l)).count())
}

/// The cells of a table row, trimmed, their emphasis marks dropped (`\|` stays a bar
/// inside a cell).
fn table_cells(row: &str) -> Vec<String> {
    let row = row.trim();
    let row = row.strip_prefix('|').unwrap_or(row);
    let row = row.strip_suffix('|').unwrap_or(row);
    let mut cells = vec![String::new()];
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cells.last_mut().expect("one cell").push('|');
                chars.next();
            }
            '|' => cells.push(String::new()),
            c => cells.last_mut().expect("one cell").push(c),
        }
    }
    cells
        .into_iter()
        .map(|c| format::printable(&c.trim().replace("**", "")).into_owned())
        .collect()
}

/// A table laid out in `width` columns: its columns as wide as their widest cell
/// where they fit, else the widest ones narrowed (a cell's words wrapped inside its
/// column, a word longer than the column broken); the header row over a rule, the
/// columns right-aligned where the separator line says so (`---:`).
pub(super) fn table_lines(
    scene: &Scene,
    rows: &[Vec<String>],
    right: &[bool],
    width: usize,
) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    if n == 0 {
        return Vec::new();
    }
    const GAP: &str = " │ ";
    let cell = |r: &Vec<String>, c: usize| r.get(c).cloned().unwrap_or_default();
    let natural: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .map(|r| text_width::width(&cell(r, c)))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let longest_word: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .flat_map(|r| {
                    cell(r, c)
                        .split_whitespace()
                        .map(text_width::width)
                        .collect::<Vec<_>>()
                })
                .max()
                .unwrap_or(1)
        })
        .collect();
    let room = width
        .saturating_sub(text_width::width(GAP) * (n - 1))
        .max(n);
    let mut widths = natural.clone();
    // Narrow the widest column, first down to its longest word, then below it.
    for floor in [&longest_word, &vec![1; n]] {
        while widths.iter().sum::<usize>() > room {
            let widest = (0..n)
                .filter(|&c| widths[c] > floor[c].min(natural[c]))
                .max_by_key(|&c| widths[c]);
            match widest {
                Some(c) => widths[c] -= 1,
                None => break,
            }
        }
    }
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        let parts: Vec<Vec<String>> = (0..n)
            .map(|c| {
                wrap(&cell(row, c), widths[c])
                    .into_iter()
                    .flat_map(|l| split_width(&l, widths[c]))
                    .collect()
            })
            .collect();
        let height = parts.iter().map(Vec::len).max().unwrap_or(1).max(1);
        let style = if r == 0 { t.title() } else { Style::new() };
        for k in 0..height {
            let mut spans = Vec::new();
            for c in 0..n {
                if c > 0 {
                    spans.push(Span::styled(GAP, t.dim()));
                }
                let text = parts[c].get(k).cloned().unwrap_or_default();
                let pad = " ".repeat(widths[c].saturating_sub(text_width::width(&text)));
                let text = if right.get(c).copied().unwrap_or(false) {
                    format!("{pad}{text}")
                } else if c + 1 < n {
                    format!("{text}{pad}")
                } else {
                    text
                };
                spans.push(Span::styled(text, style));
            }
            out.push(Line::from(spans));
        }
        if r == 0 {
            let rule: Vec<String> = widths.iter().map(|&w| "─".repeat(w)).collect();
            out.push(Line::styled(rule.join("─┼─"), t.dim()));
        }
    }
    out
}

/// Joins the hard-wrapped lines of Markdown paragraphs and list items, so that the
/// terminal wraps them at its own width. Headings, blank lines, list items and code
/// blocks start new lines.
pub fn reflow(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_code = false;
    let mut joinable = false;
    for l in text.lines() {
        let trimmed = l.trim_start();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            out.push(l.to_string());
            joinable = false;
            continue;
        }
        let starts_block = in_code
            || l.trim().is_empty()
            || trimmed.starts_with('#')
            || trimmed.starts_with("* ")
            || trimmed.starts_with("- ")
            || trimmed.starts_with('|')
            || numbered_item(trimmed);
        if joinable && !starts_block {
            let last = out.last_mut().expect("joinable implies a line");
            last.push(' ');
            last.push_str(trimmed);
        } else {
            out.push(l.to_string());
        }
        joinable = !in_code
            && !l.trim().is_empty()
            && !trimmed.starts_with('#')
            && !trimmed.starts_with('|');
    }
    out
}

/// "1. text", "12. text": a numbered list item.
fn numbered_item(line: &str) -> bool {
    let digits = line.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && line[digits..].starts_with(". ")
}

#[cfg(test)]
mod tests {
    use super::reflow;

    #[test]
    fn paragraphs_and_items_join() {
        let text = "# Title\nOne line\nand its tail.\n0.71 per HMMA\n\n* item one\n  continued\n* item two\n1. first\n\n```\ncode\nkept\n```";
        assert_eq!(
            reflow(text),
            [
                "# Title",
                "One line and its tail. 0.71 per HMMA",
                "",
                "* item one continued",
                "* item two",
                "1. first",
                "",
                "```",
                "code",
                "kept",
                "```"
            ]
        );
    }
}
