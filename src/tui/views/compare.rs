//! Two versions side by side: metric deltas coloured by direction, the bottlenecks,
//! stall bars, the (reason × opcode) cells, the instruction mix, the SASS aligned, and
//! the diff of their kernel sources.

use super::{App, stall_bar, stall_legend, wrap};
use crate::analysis::{self, Verdict};
use crate::report::comparison::{self, Names, Sass};
use crate::report::{self, format};
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

/// The narrowest a metric's name is cut to before rows are stacked instead.
const MIN_NAME_W: usize = 10;

pub fn document(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let ls = app.ladder();
    let Some((ia, ib)) = app.compare_pair() else {
        // The first version, nothing marked: nothing to compare it with.
        return app
            .version_index()
            .map(|i| {
                let mut out: Vec<Line> = wrap(&ls.ladder.no_parent(i), width)
                    .into_iter()
                    .map(|l| Line::styled(l, t.title()))
                    .collect();
                out.extend(
                    wrap(
                        "m marks a version, then select another to compare the two",
                        width,
                    )
                    .into_iter()
                    .map(|l| Line::styled(l, t.dim())),
                );
                out
            })
            .unwrap_or_default();
    };
    let (va, vb) = (&ls.ladder.versions[ia], &ls.ladder.versions[ib]);
    let (aa, ab) = (&ls.analysis.versions[ia], &ls.analysis.versions[ib]);
    let computed;
    let c = match app.cached_comparison((ia, ib)) {
        Some(c) => c,
        None => {
            computed = analysis::compare(aa, ab, va.readable_listing().zip(vb.readable_listing()));
            &computed
        }
    };
    let mut out = vec![Line::from(vec![
        Span::styled(format!("{} {}", va.id, va.title), t.title()),
        Span::raw("  →  "),
        Span::styled(format!("{} {}", vb.id, vb.title), t.title()),
        Span::styled(
            if app.marked.is_some() {
                ""
            } else {
                "   (its parent; m marks another version to compare with)"
            },
            t.dim(),
        ),
    ])];
    // The run results compared are of one shape: the view names it.
    if let Some(line) = super::run_shape_line(app) {
        out.push(line);
    }
    // Columns as wide as their values (and two spaces), the delta column as its
    // deltas; a terminal too narrow for them gets each row stacked (`stacked_row`),
    // so that no value is cut or runs into the next.
    // Per metric: its verdict and its cells (name, a, b, delta).
    let rows: Vec<_> = c
        .metrics
        .iter()
        .filter(|m| m.a.is_some() || m.b.is_some())
        .map(|m| {
            let d = m.id.def();
            let cells = [
                d.name.to_string(),
                format::with_unit(d.kind, m.a),
                format::with_unit(d.kind, m.b),
                format::delta(d.kind, m.a, m.b),
            ];
            (m.verdict, cells)
        })
        .collect();
    let widest = |cols: &[usize], at_least: usize| {
        rows.iter()
            .flat_map(|(_, cells)| cols.iter().map(|&i| format::width(&cells[i])))
            .max()
            .unwrap_or(0)
            .max(at_least)
            + 2
    };
    let val_w = widest(&[1, 2], 8);
    let delta_w = widest(&[3], 5);
    // The names as wide as the widest where the terminal holds them; they give way
    // first (cut with an ellipsis) so that the values fit.
    let name_w = widest(&[0], 8)
        .min(width.saturating_sub(2 * val_w + delta_w))
        .max(MIN_NAME_W);
    // Too narrow for a row of four columns (40 columns): each metric stacked, its name
    // on a line, then its values and its delta packed into lines that hold them whole.
    // The row as laid out below: name, two values, delta and "  ▲".
    let stacked = MIN_NAME_W + 2 * val_w + delta_w + 3 > width;
    if stacked {
        out.push(Line::styled("metric", t.dim()));
        for (verdict, [name, a, b, delta]) in &rows {
            out.extend(stacked_row(
                Line::raw(name.clone()),
                [format!("{} {a}", va.id), format!("{} {b}", vb.id)],
                format!("{delta} {}", verdict.symbol()),
                verdict_style(app, *verdict),
                width,
            ));
        }
    } else {
        out.push(Line::styled(
            format!(
                "{}{}{}{}  verdict",
                format::left("metric", name_w),
                format::right(&va.id, val_w),
                format::right(&vb.id, val_w),
                format::right("delta", delta_w)
            ),
            t.dim(),
        ));
        for (verdict, [name, a, b, delta]) in &rows {
            out.push(Line::from(vec![
                Span::raw(format::left(name, name_w)),
                Span::raw(format::right(a, val_w)),
                Span::raw(format::right(b, val_w)),
                Span::raw(format::right(delta, delta_w)),
                Span::styled(
                    format!("  {}", verdict.symbol()),
                    verdict_style(app, *verdict),
                ),
            ]));
        }
    }
    let name_w = name_w.max(24);

    if c.a.occupancy.is_some() || c.b.occupancy.is_some() {
        out.push(Line::default());
        out.push(Line::styled("occupancy limited by", t.title()));
        for (v, side) in [(va, &c.a), (vb, &c.b)] {
            let text = side
                .occupancy
                .as_ref()
                .map(|o| o.to_string())
                .unwrap_or_else(|| format::UNKNOWN.to_string());
            out.push(Line::from(vec![
                Span::raw(format!("{:<8}", v.id)),
                Span::raw(text),
            ]));
        }
    }

    out.push(Line::default());
    out.push(Line::styled("bottleneck (% of stall samples)", t.title()));
    for (v, side) in [(va, &c.a), (vb, &c.b)] {
        let mut spans = vec![
            Span::raw(format!("{:<8}", v.id)),
            Span::styled(
                report::label_text(side.bottleneck.as_ref(), side.no_label),
                t.moved(),
            ),
        ];
        if let Some(b) = &side.bottleneck {
            spans.push(Span::raw(format!(
                " {} %",
                format::share(Some(b.top.share))
            )));
            if let Some(r) = b.runner_up.as_ref().filter(|_| !b.near_tie) {
                spans.push(Span::styled(
                    format!("  runner-up {r} {} %", format::share(Some(r.share))),
                    t.dim(),
                ));
            }
        }
        out.push(Line::from(spans));
    }

    out.push(Line::default());
    out.push(Line::styled(
        report::stall_heading([c.a.stall_source, c.b.stall_source]),
        t.title(),
    ));
    // Room for the id, the bar and where its figures come from.
    let bar_w = width.saturating_sub(48).clamp(10, 80);
    for (v, a, side) in [(va, aa, &c.a), (vb, ab, &c.b)] {
        let mut spans = vec![Span::raw(format!("{:<8}", v.id))];
        spans.extend(stall_bar(app, a.stalls.as_ref(), bar_w).spans);
        spans.push(Span::styled(
            format!(
                "  {}{}",
                side.stall_source.map_or(format::UNKNOWN, |s| s.describe()),
                side.stall_samples
                    .map(|n| format!(", {} samples", format::thousands(n as f64)))
                    .unwrap_or_default()
            ),
            t.dim(),
        ));
        out.push(Line::from(spans));
    }
    let reasons: Vec<_> = c.stalls.iter().map(|s| s.reason).collect();
    out.extend(stall_legend(app, "stalls", &reasons, width));
    for s in &c.stalls {
        if stacked {
            out.extend(stacked_row(
                Line::from(vec![
                    Span::styled(t.reason_fill(s.reason).to_string(), t.reason(s.reason)),
                    Span::raw(format!(" {}", s.reason.metric_name())),
                ]),
                [
                    format!("{} {}", va.id, format::share(s.a)),
                    format!("{} {}", vb.id, format::share(s.b)),
                ],
                format!("{} {}", format::share_delta(s.a, s.b), s.verdict.symbol()),
                verdict_style(app, s.verdict),
                width,
            ));
            continue;
        }
        out.push(Line::from(vec![
            Span::styled(t.reason_fill(s.reason).to_string(), t.reason(s.reason)),
            Span::raw(format!(" {:<w$}", s.reason.metric_name(), w = name_w - 2)),
            Span::raw(format!("{:>val_w$}", format::share(s.a))),
            Span::raw(format!("{:>val_w$}", format::share(s.b))),
            Span::raw(format!("{:>val_w$}", format::share_delta(s.a, s.b))),
            Span::styled(
                format!("  {}", s.verdict.symbol()),
                verdict_style(app, s.verdict),
            ),
        ]));
    }

    if !c.cells.is_empty() {
        out.push(Line::default());
        out.push(Line::styled(
            "stall reason × instruction (stall samples · % of them; changed: beyond sampling noise)",
            t.title(),
        ));
        let cell_w = name_w + 8;
        // Room for the counts beside the shares.
        let pair_w = val_w + 8;
        for d in &c.cells {
            if stacked {
                out.extend(stacked_row(
                    Line::raw(format!("{} @ {}", d.reason, d.opcode)),
                    [
                        format!("{} {}", va.id, format::samples_share(d.a_samples, d.a)),
                        format!("{} {}", vb.id, format::samples_share(d.b_samples, d.b)),
                    ],
                    format!(
                        "{} {}",
                        format::samples_share_delta((d.a_samples, d.a), (d.b_samples, d.b)),
                        d.verdict.symbol()
                    ),
                    t.dim(),
                    width,
                ));
                continue;
            }
            out.push(Line::from(vec![
                Span::raw(format!(
                    "{:<cell_w$}",
                    format!("{} @ {}", d.reason, d.opcode)
                )),
                Span::raw(format!(
                    "{:>w$}",
                    format::samples_share(d.a_samples, d.a),
                    w = pair_w - 8
                )),
                Span::raw(format!(
                    "{:>pair_w$}",
                    format::samples_share(d.b_samples, d.b)
                )),
                Span::raw(format!(
                    "{:>pair_w$}",
                    format::samples_share_delta((d.a_samples, d.a), (d.b_samples, d.b))
                )),
                Span::styled(format!("  {}", d.verdict.symbol()), t.dim()),
            ]));
        }
    }

    out.push(Line::default());
    out.push(Line::styled(
        format!(
            "instruction mix: {} │ {} (instructions, stall samples, % of them)",
            va.id, vb.id
        ),
        t.title(),
    ));
    if c.hot_ops_a.is_empty() && c.hot_ops_b.is_empty() {
        out.push(Line::styled("  no source pages", t.dim()));
    }
    let side = |present: bool, m: &crate::analysis::sass::MixSide| {
        if present {
            format!(
                "{:>6} {:>7} {:>5}",
                format::thousands(m.instructions as f64),
                format::thousands(m.stall_samples as f64),
                format::share(Some(m.share))
            )
        } else {
            format!("{:>20}", format::UNKNOWN)
        }
    };
    let (has_a, has_b) = (!c.hot_ops_a.is_empty(), !c.hot_ops_b.is_empty());
    for r in c.mix.iter().take(comparison::MIX_ROWS) {
        let style = match (r.a.instructions, r.b.instructions) {
            (0, n) if n > 0 && has_a => t.added(),
            (n, 0) if n > 0 && has_b => t.removed(),
            _ => Style::new(),
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {:<14}", r.opcode), style),
            Span::raw(side(has_a, &r.a)),
            Span::raw("  │ "),
            Span::raw(side(has_b, &r.b)),
        ]));
    }

    out.push(Line::default());
    let listing_error = va.listing_error().or_else(|| vb.listing_error());
    let names = Names {
        a: &va.id,
        b: &vb.id,
        run_shape: None,
        other_shape: false,
        listing_error: listing_error.as_deref(),
    };
    match comparison::document(c, &names).sass {
        Sass::Aligned { diff: d, lines, .. } => {
            out.push(Line::styled(
                format!(
                    "SASS: {} → {} instructions, {} removed, {} added (registers and addresses ignored; [stall samples])",
                    d.a_instructions, d.b_instructions, d.removed, d.added
                ),
                t.title(),
            ));
            out.extend(lines.into_iter().map(|(_, l)| styled_diff_line(app, l)));
        }
        Sass::Missing(l) => out.push(Line::styled(l, t.dim())),
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
        .map(|l| styled_diff_line(app, l.to_string()))
        .collect()
}

/// A line of a unified diff, coloured by what it is.
fn styled_diff_line(app: &App, l: String) -> Line<'static> {
    let t = &app.theme;
    let style = if l.starts_with('+') {
        t.added()
    } else if l.starts_with('-') {
        t.removed()
    } else if l.starts_with("@@") {
        t.key()
    } else {
        Style::new()
    };
    Line::styled(l, style)
}

/// A row too wide for the terminal (40 columns): its name on a line (cut on the right),
/// then the two versions' values and the delta packed into lines that hold each whole,
/// three spaces apart; the line with the delta in `style`.
fn stacked_row(
    name: Line<'static>,
    values: [String; 2],
    delta: String,
    style: Style,
    width: usize,
) -> Vec<Line<'static>> {
    let mut lines: Vec<String> = Vec::new();
    for item in values.into_iter().chain([delta]) {
        match lines.last_mut() {
            Some(l) if 2 + format::width(l) + 3 + format::width(&item) <= width => {
                l.push_str("   ");
                l.push_str(&item);
            }
            _ => lines.push(item),
        }
    }
    let last = lines.len() - 1;
    std::iter::once(super::fit(name, width))
        .chain(lines.into_iter().enumerate().map(|(n, l)| {
            Line::styled(
                format!("  {l}"),
                if n == last { style } else { Style::new() },
            )
        }))
        .collect()
}
