//! The selected version's notes (change, prediction, outcome), its bottleneck against
//! its parent's, and the diff of its kernel source from its parent's (the version it was
//! built on).

use super::{App, clamp_scroll, compare::diff_lines, printable};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

pub fn draw(frame: &mut Frame, app: &App, body: Rect) {
    let lines: Vec<Line> = document(app).into_iter().map(printable).collect();
    // Wrapped lines can take more rows than lines: count them for the scroll limit.
    let width = body.width.max(1) as usize;
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
    let offset = clamp_scroll(
        app.scroll_of(super::View::Notes),
        rows,
        body.height as usize,
    );
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((offset.min(u16::MAX as usize) as u16, 0)),
        body,
    );
}

pub fn document(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let ls = app.ladder();
    let Some(i) = app.version_index() else {
        return Vec::new();
    };
    let v = &ls.ladder.versions[i];
    let mut out = Vec::new();
    match &v.notes {
        Some(text) => {
            for l in reflow(text) {
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
                format!("diff from {} ({})", p.id, super::ladder_path(app, path)),
                t.title(),
            ));
            let (_, old) = p.source.as_ref().expect("filtered on a source");
            out.extend(diff_lines(app, old, text));
        }
        (None, Some((path, text))) => {
            out.push(Line::styled(
                format!("source ({})", super::ladder_path(app, path)),
                t.title(),
            ));
            out.extend(text.lines().map(|l| Line::raw(l.to_string())));
        }
        _ => out.push(Line::styled("no kernel source in this ladder", t.dim())),
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
