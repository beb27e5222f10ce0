//! The stacked bar of a version's stall shares, and the legend of its colours.

use super::text::fit;
use crate::report::format;
use crate::text_width;
use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};

/// A stacked bar of stall shares, `width` cells wide.
pub fn stall_bar(
    t: &Theme,
    stalls: Option<&crate::analysis::StallBreakdown>,
    width: usize,
) -> Line<'static> {
    let Some(s) = stalls else {
        return Line::styled(format!("{:^width$}", format::UNKNOWN), t.dim());
    };
    let ranked = s.ranked();
    let mut spans = Vec::new();
    let mut used = 0usize;
    let mut acc = 0.0;
    for (r, share) in ranked {
        acc += share;
        let end = ((acc * width as f64).round() as usize).min(width);
        if end > used {
            spans.push(Span::styled(
                t.reason_fill(r).to_string().repeat(end - used),
                t.reason(r),
            ));
            used = end;
        }
    }
    if used < width {
        spans.push(Span::raw(" ".repeat(width - used)));
    }
    Line::from(spans)
}

/// The legend of the stall colours, for the reasons shown, under a heading that says
/// what the shares are of: in lines of `width` columns, an entry never split (one wider
/// than a line alone on it, cut).
pub fn stall_legend(
    t: &Theme,
    heading: &str,
    reasons: &[crate::ncu::StallReason],
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Vec<Span<'static>>> =
        vec![vec![Span::styled(format!("{heading}: "), t.dim())]];
    let mut used = text_width::width(heading) + 2;
    for &r in reasons {
        let entry = [
            Span::styled(t.reason_fill(r).to_string(), t.reason(r)),
            Span::raw(format!(" {}  ", r.metric_name())),
        ];
        // The entry's trailing spaces may pass the edge.
        let w = text_width::width(&entry[0].content) + text_width::width(&entry[1].content) - 2;
        if used + w > width && used > 0 {
            lines.push(Vec::new());
            used = 0;
        }
        used += w + 2;
        lines.last_mut().expect("a line").extend(entry);
    }
    lines
        .into_iter()
        .map(|spans| fit(Line::from(spans), width))
        .collect()
}
