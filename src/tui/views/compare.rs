//! Two versions side by side: metric deltas coloured by direction, stall bars, hot
//! instruction classes, and the diff of their kernel sources.

use super::{App, stall_bar, stall_legend};
use crate::analysis::{self, Verdict};
use crate::report::format;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub fn draw(frame: &mut Frame, app: &App, body: Rect) {
    let lines = document(app, body.width as usize);
    super::draw_document(frame, lines, app.scroll_of(super::View::Compare), body);
}

fn verdict_style(app: &App, v: Verdict) -> Style {
    match v {
        Verdict::Better => app.theme.better(),
        Verdict::Worse => app.theme.worse(),
        _ => app.theme.dim(),
    }
}

pub fn document(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let ls = app.ladder();
    let Some((ia, ib)) = app.compare_pair() else {
        return Vec::new();
    };
    let (va, vb) = (&ls.ladder.versions[ia], &ls.ladder.versions[ib]);
    let (aa, ab) = (&ls.analysis.versions[ia], &ls.analysis.versions[ib]);
    let c = analysis::compare(aa, ab);
    let mut out = vec![Line::from(vec![
        Span::styled(format!("{} {}", va.id, va.title), t.title()),
        Span::raw("  →  "),
        Span::styled(format!("{} {}", vb.id, vb.title), t.title()),
        Span::styled(
            if app.marked.is_some() {
                ""
            } else {
                "   (m marks another version to compare with)"
            },
            t.dim(),
        ),
    ])];
    let name_w = 24;
    let val_w = ((width.saturating_sub(name_w + 10)) / 3).clamp(10, 22);
    out.push(Line::styled(
        format!(
            "{:<name_w$}{:>val_w$}{:>val_w$}{:>val_w$}  verdict",
            "metric", va.id, vb.id, "delta"
        ),
        t.dim(),
    ));
    for m in &c.metrics {
        if m.a.is_none() && m.b.is_none() {
            continue;
        }
        let d = m.id.def();
        out.push(Line::from(vec![
            Span::raw(format!("{:<name_w$}", d.name)),
            Span::raw(format!("{:>val_w$}", format::with_unit(d.kind, m.a))),
            Span::raw(format!("{:>val_w$}", format::with_unit(d.kind, m.b))),
            Span::raw(format!("{:>val_w$}", format::delta(d.kind, m.a, m.b))),
            Span::styled(
                format!("  {}", m.verdict.symbol()),
                verdict_style(app, m.verdict),
            ),
        ]));
    }

    out.push(Line::default());
    out.push(Line::styled(
        "stall breakdown (share of samples)",
        t.title(),
    ));
    let bar_w = width.saturating_sub(10).min(80);
    for (v, a) in [(va, aa), (vb, ab)] {
        let mut spans = vec![Span::raw(format!("{:<8}", v.id))];
        spans.extend(stall_bar(app, a.stalls.as_ref(), bar_w).spans);
        out.push(Line::from(spans));
    }
    let reasons: Vec<_> = c.stalls.iter().map(|s| s.reason).collect();
    out.push(stall_legend(app, &reasons));
    for s in &c.stalls {
        let pct = |x: Option<f64>| x.map(|v| v * 100.0);
        out.push(Line::from(vec![
            Span::styled(t.reason_fill(s.reason).to_string(), t.reason(s.reason)),
            Span::raw(format!(" {:<name_w$}", s.reason.metric_name())),
            Span::raw(format!("{:>val_w$}", format::share(s.a))),
            Span::raw(format!("{:>val_w$}", format::share(s.b))),
            Span::raw(format!(
                "{:>val_w$}",
                format::delta(crate::analysis::Kind::Percent, pct(s.a), pct(s.b))
            )),
            Span::styled(
                format!("  {}", s.verdict.symbol()),
                verdict_style(app, s.verdict),
            ),
        ]));
    }

    out.push(Line::default());
    out.push(Line::styled(
        "hottest instruction classes (stall samples, top reason)",
        t.title(),
    ));
    let op = |ops: &[analysis::OpcodeStat], i: usize| -> String {
        ops.get(i)
            .map(|o| {
                let reason = o.top_stall_reason().map(|r| r.metric_name()).unwrap_or("");
                format!(
                    "{} {} {}",
                    o.opcode,
                    format::thousands(o.stall_samples as f64),
                    reason
                )
            })
            .unwrap_or_default()
    };
    let half = (width.saturating_sub(6) / 2).max(20);
    for i in 0..c.hot_ops_a.len().max(c.hot_ops_b.len()).min(6) {
        out.push(Line::raw(format!(
            "#{}  {:<half$}{}",
            i + 1,
            op(&c.hot_ops_a, i),
            op(&c.hot_ops_b, i)
        )));
    }
    if c.hot_ops_a.is_empty() && c.hot_ops_b.is_empty() {
        out.push(Line::styled("  no source pages", t.dim()));
    }

    out.push(Line::default());
    match (&va.source, &vb.source) {
        (Some((pa, sa)), Some((pb, sb))) => {
            out.push(Line::styled(
                format!(
                    "source diff: {} → {}",
                    super::ladder_path(app, pa),
                    super::ladder_path(app, pb)
                ),
                t.title(),
            ));
            out.extend(diff_lines(app, sa, sb));
        }
        _ => out.push(Line::styled(
            "source diff: one of the two versions has no kernel source",
            t.dim(),
        )),
    }
    out
}

/// A unified diff, coloured.
pub fn diff_lines(app: &App, old: &str, new: &str) -> Vec<Line<'static>> {
    let t = &app.theme;
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(3).to_string();
    if text.is_empty() {
        return vec![Line::styled("  (identical)", t.dim())];
    }
    text.lines()
        .map(|l| {
            let style = if l.starts_with('+') {
                t.added()
            } else if l.starts_with('-') {
                t.removed()
            } else if l.starts_with("@@") {
                t.key()
            } else {
                Style::new()
            };
            Line::styled(l.to_string(), style)
        })
        .collect()
}
