//! Text made for the terminal: lines made safe to print, cut to a width, and texts
//! wrapped at spaces or split anywhere.

use crate::report::format;
use crate::text_width;
use ratatui::text::{Line, Span};

/// A line made safe for the terminal ([`format::printable`]): names, titles, notes,
/// SASS, rule text and messages come from imported data. Views pass what they build
/// from that data through here before it is measured or drawn.
pub fn printable(line: Line<'static>) -> Line<'static> {
    Line {
        spans: line.spans.into_iter().map(printable_span).collect(),
        ..line
    }
}

pub fn printable_span(span: Span<'static>) -> Span<'static> {
    match format::printable(&span.content) {
        std::borrow::Cow::Borrowed(_) => span,
        std::borrow::Cow::Owned(safe) => Span {
            content: safe.into(),
            ..span
        },
    }
}

/// A line cut on the right to `width` columns, an ellipsis where it was cut (in the
/// style of the span cut); never on the left, which can change what a text says.
pub fn fit(line: Line<'static>, width: usize) -> Line<'static> {
    if line.width() <= width {
        return line;
    }
    let mut used = 0;
    let mut spans = Vec::new();
    for span in line.spans {
        let w = text_width::width(&span.content);
        if used + w < width {
            used += w;
            spans.push(span);
            continue;
        }
        let rest = width.saturating_sub(used);
        spans.push(Span::styled(
            text_width::cut(&span.content, rest),
            span.style,
        ));
        break;
    }
    Line { spans, ..line }
}

/// A text broken at spaces into lines of at most `width` columns (a word longer than
/// a line stays whole).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && text_width::width(&cur) + 1 + text_width::width(word) > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A text in pieces of at most `width` columns each, cut anywhere (a character wider
/// than `width` alone in its piece); one empty piece for an empty text.
pub fn split_width(text: &str, width: usize) -> Vec<String> {
    let mut pieces = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = text_width::char_width(c);
        if used + w > width && used > 0 {
            pieces.push(String::new());
            used = 0;
        }
        pieces.last_mut().expect("one piece").push(c);
        used += w;
    }
    pieces
}
