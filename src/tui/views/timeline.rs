//! The home view: versions as columns, metrics as rows, the bottleneck trail on top.

use super::scene::Scene;
use super::scroll::clamp_scroll;
use super::stall_bar::{stall_bar, stall_legend};
use super::text::{fit, printable_span};
use crate::analysis::catalogue::{Kind, cell_help};
use crate::analysis::speed::{SpeedVerdict, single_verdict, speedup};
use crate::analysis::{METRICS, MetricId, StepVerdict, TrailStep, VersionAnalysis};
use crate::report::{
    colour, format, label_cell, stall_heading, stall_rows, stall_samples_cell, stall_source_cell,
    step_name,
};
use crate::text_width;
use crate::tui::ladder_state::LadderState;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};

/// The timeline view's state: how far it is scrolled.
pub type TimelineState = super::scroll::Scrolled;

/// Which versions are visible and how wide the columns are: the selected version is
/// always among them. Used for drawing and for mouse clicks.
pub struct Columns {
    pub name_w: u16,
    pub col_w: u16,
    /// First visible position in display order.
    pub first: usize,
    pub count: usize,
}

/// The widest row name of the timeline: the metrics some version has, the stall
/// reasons' rows (with their colour mark) and the fixed rows.
fn widest_name(scene: &Scene) -> usize {
    let ls = scene.ladder();
    let profiled_at = ls.shown.profiled_at(&ls.ladder);
    let metrics = METRICS
        .iter()
        .filter(|d| ls.analysis.versions.iter().any(|v| v.get(d.id).is_some()))
        .map(|d| text_width::width(&d.label_at(None, profiled_at.as_deref())));
    let reasons = stall_rows(&ls.analysis.versions)
        .into_iter()
        .map(|r| 1 + text_width::width(&stall_row_name(r)));
    let occupancy = ls
        .analysis
        .versions
        .iter()
        .any(|a| a.occupancy.is_some())
        .then(|| text_width::width(OCCUPANCY_ROW));
    metrics
        .chain(reasons)
        .chain(occupancy)
        .chain(["stall samples"].map(text_width::width))
        .max()
        .unwrap_or(0)
}

const OCCUPANCY_ROW: &str = "occupancy limit (blocks/SM)";

/// A stall reason's row name, after its colour mark.
fn stall_row_name(r: crate::ncu::StallReason) -> String {
    format!(" {} %", r.metric_name())
}

/// The columns at `width`: the row names as wide as the widest (up to a quarter of a
/// terminal of 110 columns or more, 22 columns below), the versions' columns wider on a
/// wider terminal.
pub fn columns(scene: &Scene, width: u16) -> Columns {
    let room = if width >= 110 { width / 4 } else { 22 };
    let name_w = (widest_name(scene) as u16).min(room);
    let col_w: u16 = if width >= 150 {
        16
    } else if width >= 110 {
        13
    } else {
        10
    };
    let total = scene.ladder().order.len();
    let visible = (((width.saturating_sub(name_w)) / (col_w + 1)) as usize).clamp(1, total.max(1));
    let first = (scene.selected + 1)
        .saturating_sub(visible)
        .min(total.saturating_sub(visible));
    Columns {
        name_w,
        col_w,
        first,
        count: visible,
    }
}

/// The most lines the trail takes above the table.
const TRAIL_LINES: usize = 3;

/// The lines the trail may take in `body`: [`TRAIL_LINES`], fewer where the body is too
/// low to keep the meaning line, three table rows and the legend beside them.
fn trail_room(body: Rect) -> usize {
    TRAIL_LINES
        .min(usize::from(body.height.saturating_sub(5)))
        .max(1)
}

/// Splits the body: trail, the meaning of the selected version's label, table, legend.
pub fn layout(scene: &Scene, body: Rect) -> [Rect; 4] {
    let trail_h = trail_lines(scene, body.width as usize, trail_room(body)).len() as u16;
    let legend_h =
        legend_lines(scene, body.width as usize, legend_room(body, trail_h)).len() as u16;
    Layout::vertical([
        Constraint::Length(trail_h),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(legend_h),
    ])
    .areas(body)
}

/// The most lines the stall legend takes under the table.
const LEGEND_LINES: usize = 2;

/// The lines the legend may take in `body` under a trail of `trail_h` lines:
/// [`LEGEND_LINES`], one where the body is too low to keep the meaning line and three
/// table rows beside them.
fn legend_room(body: Rect, trail_h: u16) -> usize {
    LEGEND_LINES
        .min(usize::from(body.height.saturating_sub(trail_h + 4)))
        .max(1)
}

/// The legend of the stall rows' colours (the eight largest reasons), whole, in at most
/// `room` lines of `width` columns (the last cut where more would not fit).
fn legend_lines(scene: &Scene, width: usize, room: usize) -> Vec<Line<'static>> {
    let room = room.max(1);
    let ls = scene.ladder();
    let legend: Vec<_> = stall_rows(&ls.analysis.versions)
        .into_iter()
        .take(8)
        .collect();
    let heading = stall_heading(
        ls.analysis
            .versions
            .iter()
            .map(|v| v.stalls.as_ref().map(|s| s.source)),
    );
    let mut lines = stall_legend(&scene.theme, &heading, &legend, width);
    if lines.len() > room {
        let rest: Vec<Span<'static>> = lines.drain(room - 1..).flat_map(|l| l.spans).collect();
        lines.push(fit(Line::from(rest), width));
    }
    lines
}

/// What the selected version's label means: `v13 barrier @ WARPGROUP: waiting at …`
/// (for a near-tie, the top cell's meaning and the runner-up named).
fn meaning_line(scene: &Scene) -> Line<'static> {
    let t = &scene.theme;
    let Some(i) = scene.version_index() else {
        return Line::default();
    };
    let ls = scene.ladder();
    let a = &ls.analysis.versions[i];
    let id = ls.ladder.versions[i].id.clone();
    match &a.bottleneck {
        Some(b) => {
            let mut spans = vec![
                Span::styled(format!("{id} {}: ", b.top), t.key()),
                Span::raw(cell_help(b.reason(), b.opcode())),
            ];
            if let Some(r) = b.runner_up.as_ref().filter(|_| b.near_tie) {
                spans.push(Span::styled(
                    format!(" · near-tie with {r} (b explains both)"),
                    t.dim(),
                ));
            }
            Line::from(spans)
        }
        None => Line::styled(
            format!(
                "{id}: {}",
                a.no_label.map(|n| n.explain()).unwrap_or_default()
            ),
            t.dim(),
        ),
    }
}

/// One step of the trail as drawn: `v17 ← v15 barrier @ WARPGROUP`.
fn step_spans(scene: &Scene, s: &TrailStep) -> Vec<Span<'static>> {
    let t = &scene.theme;
    let label = crate::report::trail_label(s)
        .or_else(|| s.no_label.map(|n| n.short()))
        .unwrap_or_else(|| format::UNKNOWN.into());
    let mut spans = vec![
        Span::styled(format!("{} ", step_name(s)), t.title()),
        Span::styled(label, if s.changed { t.moved() } else { Style::new() }),
    ];
    match s.verdict {
        StepVerdict::WithinNoise => spans.push(Span::styled(" (within noise)", t.dim())),
        StepVerdict::Unweighed => spans.push(Span::styled(" (unweighed)", t.dim())),
        _ => {}
    }
    spans.into_iter().map(printable_span).collect()
}

/// The trail in at most `room` lines of `width` columns, a step never split between two
/// lines: all of it where it fits, otherwise the longest run of steps that holds the
/// selected version's step and its neighbours, with `…` where more steps lie before or
/// after (selecting another version moves the run); where not even the selected step
/// fits, that step alone on one line, cut.
fn trail_lines(scene: &Scene, width: usize, room: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let trail = &scene.ladder().analysis.trail;
    if trail.is_empty() {
        return vec![Line::from(vec![
            Span::styled("trail ", t.dim()),
            Span::styled("(only baselines in this ladder)", t.dim()),
        ])];
    }
    let steps: Vec<Vec<Span<'static>>> = trail.iter().map(|s| step_spans(scene, s)).collect();
    let more = || vec![Span::styled("…", t.dim())];
    // The steps `lo..hi`, wrapped.
    let wrapped = |lo: usize, hi: usize| {
        let mut items: Vec<Vec<Span<'static>>> = Vec::new();
        if lo > 0 {
            items.push(more());
        }
        items.extend(steps[lo..hi].iter().cloned());
        if hi < steps.len() {
            items.push(more());
        }
        wrap_steps(Span::styled("trail ", t.dim()), items, width)
    };
    let fits = |lo: usize, hi: usize| wrapped(lo, hi).len() <= room;
    if fits(0, steps.len()) {
        return wrapped(0, steps.len());
    }
    let at = scene
        .version_index()
        .and_then(|i| trail.iter().position(|s| s.index == i))
        .unwrap_or(0);
    let (mut lo, mut hi) = (at.saturating_sub(1), (at + 2).min(steps.len()));
    if !fits(lo, hi) {
        (lo, hi) = (at, at + 1);
    }
    if !fits(lo, hi) {
        let mut line = vec![Span::styled("trail ", t.dim())];
        if at > 0 {
            line.extend([Span::styled("…", t.dim()), Span::raw(" → ")]);
        }
        line.extend(steps[at].iter().cloned());
        return vec![fit(Line::from(line), width)];
    }
    loop {
        let later = hi < steps.len() && fits(lo, hi + 1);
        if later {
            hi += 1;
        }
        let earlier = lo > 0 && fits(lo - 1, hi);
        if earlier {
            lo -= 1;
        }
        if !later && !earlier {
            break;
        }
    }
    wrapped(lo, hi)
}

/// `head` and the items joined by ` → `, in lines of `width` columns: an item starts a
/// new line where it would not fit on the current one, and a line still too wide (one
/// item wider than the width) is cut with an ellipsis.
fn wrap_steps(
    head: Span<'static>,
    items: Vec<Vec<Span<'static>>>,
    width: usize,
) -> Vec<Line<'static>> {
    let span_width = |spans: &[Span]| -> usize { spans.iter().map(|s| s.width()).sum() };
    let mut lines: Vec<Vec<Span<'static>>> = Vec::new();
    let mut line = vec![head];
    for (n, item) in items.into_iter().enumerate() {
        let sep = if n == 0 { "" } else { " → " };
        if n > 0 && span_width(&line) + text_width::width(sep) + span_width(&item) > width {
            lines.push(std::mem::replace(&mut line, vec![Span::raw("→ ")]));
        } else {
            line.push(Span::raw(sep));
        }
        line.extend(item);
    }
    lines.push(line);
    lines
        .into_iter()
        .map(|spans| fit(Line::from(spans), width))
        .collect()
}

pub fn draw(frame: &mut Frame, scene: &Scene, state: &TimelineState, body: Rect) {
    let [trail_area, meaning_area, table_area, legend_area] = layout(scene, body);
    frame.render_widget(
        Paragraph::new(trail_lines(
            scene,
            trail_area.width as usize,
            trail_room(body),
        )),
        trail_area,
    );
    frame.render_widget(
        Paragraph::new(fit(meaning_line(scene), meaning_area.width as usize)),
        meaning_area,
    );
    draw_table(frame, scene, state, table_area);
    frame.render_widget(
        Paragraph::new(legend_lines(
            scene,
            legend_area.width as usize,
            legend_area.height as usize,
        )),
        legend_area,
    );
}

/// The table's visible part: its columns, and the versions in them (positions in
/// display order). Each group of rows is built from it.
struct Grid<'a> {
    scene: &'a Scene<'a>,
    ls: &'a LadderState,
    cols: Columns,
    shown: Vec<usize>,
}

impl<'a> Grid<'a> {
    fn new(scene: &'a Scene<'a>, width: u16) -> Grid<'a> {
        let ls = scene.ladder();
        let cols = columns(scene, width);
        let shown: Vec<usize> =
            (cols.first..(cols.first + cols.count).min(ls.order.len())).collect();
        Grid {
            scene,
            ls,
            cols,
            shown,
        }
    }

    /// The width of a version's column.
    fn cw(&self) -> usize {
        self.cols.col_w as usize
    }

    /// A cell wider than its column would be cut on the left, changing what it says: it
    /// is cut on the right, with an ellipsis (the values themselves fit the columns).
    fn value_cell(&self, text: String, style: Style) -> Cell<'static> {
        let text = text_width::cut(&format::printable(&text), self.cw());
        Cell::from(Line::from(Span::styled(text, style)).right_aligned())
    }

    /// A row: its name, then a cell for each version shown (by its index into the
    /// ladder's versions).
    fn row(&self, name: Cell<'static>, cell: impl Fn(usize) -> Cell<'static>) -> Row<'static> {
        Row::new(
            std::iter::once(name).chain(self.shown.iter().map(|&pos| cell(self.ls.order[pos]))),
        )
    }
}

/// The metrics table, scrolled: the versions' header, then the rows from the bottleneck
/// down to the hot instructions.
fn draw_table(frame: &mut Frame, scene: &Scene, state: &TimelineState, area: Rect) {
    let g = Grid::new(scene, area.width);
    let mut rows = summary_rows(&g);
    rows.extend(metric_rows(&g));
    rows.extend(occupancy_row(&g));
    rows.extend(reason_rows(&g));
    rows.extend(hot_rows(&g));
    let visible = area.height.saturating_sub(1) as usize;
    let offset = clamp_scroll(state.scroll, rows.len(), visible);
    let rows: Vec<Row> = rows.into_iter().skip(offset).collect();
    let widths = std::iter::once(Constraint::Length(g.cols.name_w))
        .chain(g.shown.iter().map(|_| Constraint::Length(g.cols.col_w)));
    frame.render_widget(
        Table::new(rows, widths)
            .header(header_row(&g))
            .column_spacing(1),
        area,
    );
}

/// The versions' ids over their columns: a baseline's in brackets, where the ladder
/// branches the parent's after `←`, the marked one's with `*`, the selected one's
/// highlighted.
fn header_row(g: &Grid) -> Row<'static> {
    let (scene, ls, t) = (g.scene, g.ls, &g.scene.theme);
    Row::new(
        std::iter::once(Cell::from("")).chain(g.shown.iter().map(|&pos| {
            let v = &ls.ladder.versions[ls.order[pos]];
            let mut label = if v.baseline {
                format!("[{}]", v.id)
            } else if ls.ladder.branches_at(ls.order[pos])
                && let Some(p) = ls.ladder.parent_of(ls.order[pos])
            {
                // Where the ladder branches: `v17←v15`.
                format!("{}←{}", v.id, ls.ladder.versions[p].id)
            } else {
                v.id.clone()
            };
            if scene.marked == Some(ls.order[pos]) {
                label.push('*');
            }
            let style = if pos == scene.selected {
                t.selected()
            } else {
                t.title()
            };
            let label = text_width::cut(&format::printable(&label), g.cw());
            Cell::from(Line::from(Span::styled(label, style)).right_aligned())
        })),
    )
}

/// The first rows: the bottleneck (coloured where it moved along the trail), the stall
/// mix, and where the stall figures come from.
fn summary_rows(g: &Grid) -> Vec<Row<'static>> {
    let (ls, t, cw) = (g.ls, &g.scene.theme, g.cw());
    let mut rows = vec![g.row(Cell::from("bottleneck"), |i| {
        let a = &ls.analysis.versions[i];
        let changed = ls.analysis.trail.iter().any(|s| s.index == i && s.changed);
        g.value_cell(
            fit_label(&label_cell(a), cw),
            if changed { t.moved() } else { Style::new() },
        )
    })];
    rows.push(g.row(Cell::from("stall mix"), |i| {
        Cell::from(stall_bar(
            &g.scene.theme,
            ls.analysis.versions[i].stalls.as_ref(),
            cw,
        ))
    }));
    for (name, cell) in [
        (
            "stall source",
            stall_source_cell as fn(&VersionAnalysis) -> String,
        ),
        ("stall samples", stall_samples_cell),
    ] {
        rows.push(g.row(Cell::from(name), |i| {
            g.value_cell(cell(&ls.analysis.versions[i]), t.dim())
        }));
    }
    rows
}

/// A row for each metric some version has, heat-coloured by the metric's direction;
/// TFLOPS with bars, a time or TFLOPS slower than the parent's marked.
fn metric_rows(g: &Grid) -> Vec<Row<'static>> {
    let (ls, t, cw, shown, cols) = (g.ls, &g.scene.theme, g.cw(), &g.shown, &g.cols);
    let mut rows = Vec::new();
    // The run rows are of the shape the tab line names; the ncu rows name the profiles'
    // shape where it is another.
    let profiled_at = ls.shown.profiled_at(&ls.ladder);
    for d in METRICS {
        let values: Vec<Option<f64>> = ls
            .order
            .iter()
            .map(|&i| ls.analysis.versions[i].get(d.id))
            .collect();
        if values.iter().all(Option::is_none) {
            continue;
        }
        let ranks = colour::ranks(&values, d.better, colour::Scale::of(d.kind));
        let hi = values
            .iter()
            .flatten()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let name = d.label_at(None, profiled_at.as_deref());
        let bars = matches!(d.id, MetricId::RunTflops | MetricId::Tflops);
        let speed = matches!(d.kind, Kind::Time | Kind::Tflops);
        let name = text_width::cut(&name, cols.name_w as usize);
        rows.push(Row::new(std::iter::once(Cell::from(name)).chain(
            shown.iter().map(|&pos| {
                let x = values[pos];
                let i = ls.order[pos];
                let parent = ls
                    .ladder
                    .parent_of(i)
                    .and_then(|p| ls.analysis.versions[p].get(d.id));
                // Loose files are no ladder: none was built on the one before it.
                let ladder = ls.ladder.dir.is_some();
                let run_parent = ls.ladder.parent_of(i).map(|p| &ls.ladder.versions[p]);
                let slower = match d.id {
                    // Run results: the verdict of their rounds.
                    MetricId::RunTime | MetricId::RunTflops => run_parent
                        .and_then(|p| {
                            let (r, rp) = (
                                ls.shown.run(&ls.ladder, &ls.ladder.versions[i])?,
                                ls.shown.run(&ls.ladder, p)?,
                            );
                            speedup(r, rp)
                        })
                        .is_some_and(|s| s.verdict == SpeedVerdict::Slower),
                    _ => single_verdict(d.better, parent, x) == Some(SpeedVerdict::Slower),
                };
                let mark = if speed && ladder && slower {
                    REGRESSION_MARK
                } else {
                    ""
                };
                let text = format!("{mark}{}", format::value(d.kind, x));
                let text = match (bars, x) {
                    (true, Some(v)) if hi > 0.0 => {
                        let room = cw.saturating_sub(text_width::width(&text) + 1);
                        let n = ((v / hi) * room as f64).round() as usize;
                        format!("{} {text}", "▆".repeat(n.min(room)))
                    }
                    _ => text,
                };
                g.value_cell(text, t.heat(d.better, ranks[pos]))
            }),
        )));
    }
    rows
}

/// Each version's occupancy limit, where some version has one.
fn occupancy_row(g: &Grid) -> Option<Row<'static>> {
    let ls = g.ls;
    if !ls.analysis.versions.iter().any(|a| a.occupancy.is_some()) {
        return None;
    }
    let name = Cell::from(text_width::cut(OCCUPANCY_ROW, g.cols.name_w as usize));
    Some(g.row(name, |i| {
        g.value_cell(
            ls.analysis.versions[i]
                .occupancy
                .as_ref()
                .map(|o| o.compact())
                .unwrap_or_else(|| format::UNKNOWN.to_string()),
            g.scene.theme.dim(),
        )
    }))
}

/// A row for each stall reason, with its colour mark: its share of each version's.
fn reason_rows(g: &Grid) -> Vec<Row<'static>> {
    let (ls, t) = (g.ls, &g.scene.theme);
    stall_rows(&ls.analysis.versions)
        .into_iter()
        .map(|r| {
            let name = Cell::from(Line::from(vec![
                Span::styled(t.reason_fill(r).to_string(), t.reason(r)),
                Span::raw(text_width::cut(
                    &stall_row_name(r),
                    (g.cols.name_w as usize).saturating_sub(1),
                )),
            ]));
            g.row(name, |i| {
                let a = &ls.analysis.versions[i];
                g.value_cell(
                    format::share(a.stalls.as_ref().map(|s| s.share(r))),
                    Style::new(),
                )
            })
        })
        .collect()
}

/// The three hottest instruction classes of each version, with their stall samples'
/// share of all its warp samples.
fn hot_rows(g: &Grid) -> Vec<Row<'static>> {
    let (ls, cw) = (g.ls, g.cw());
    (0..3)
        .map(|rank| {
            g.row(Cell::from(format!("hot #{}", rank + 1)), |i| {
                let ops = &ls.analysis.versions[i].hot_ops;
                let total: u64 = ops.iter().map(|o| o.samples).sum();
                g.value_cell(
                    match ops.get(rank) {
                        Some(o) if total > 0 => {
                            // The share whole, the opcode cut to the room left.
                            let pct =
                                format!(" {:.0}%", 100.0 * o.stall_samples as f64 / total as f64);
                            let room = cw.saturating_sub(text_width::width(&pct));
                            format!("{}{pct}", text_width::cut(&o.opcode, room))
                        }
                        _ => format::UNKNOWN.into(),
                    },
                    Style::new(),
                )
            })
        })
        .collect()
}

/// A label in `w` columns: "short_scoreboard @ LDS" → "short_sc…@LDS", the reason cut
/// first so that the opcode stays readable; where the opcode alone fills the cell both
/// are cut ("bar…@WARP…"), so that neither vanishes. Other text is cut on the right.
fn fit_label(label: &str, w: usize) -> String {
    if text_width::width(label) <= w {
        return label.to_string();
    }
    let Some((reason, op)) = label.split_once(" @ ") else {
        return text_width::cut(label, w);
    };
    // Three letters of the reason, its ellipsis and the "@" come first.
    let op = text_width::cut(op, w.saturating_sub(5).max(1));
    let keep = w.saturating_sub(text_width::width(&op) + 2).max(1);
    format!("{}…@{op}", reason.chars().take(keep).collect::<String>())
}

/// Marks a time or TFLOPS worse than the version's parent's: a regression stays visible
/// however the ladder's first versions stretch the row's colours.
pub const REGRESSION_MARK: &str = "▼";

/// What the timeline's colours and marks mean, for the help.
pub fn legend() -> Vec<String> {
    vec![
        "timeline colours: green the best third of a row, yellow the middle, red the worst (by the metric's direction); times and TFLOPS by ratio (a log scale), so a slow first version leaves the later ones apart".into(),
        "▆ bars: TFLOPS as a share of the row's best".into(),
        format!(
            "{REGRESSION_MARK} slower than the version it was built on, by the speed verdict: run results over their rounds (the 95 % interval wholly below 1), ncu's single launches by more than {:.0} %",
            crate::analysis::speed::SINGLE_ROUND_BAND * 100.0
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::fit_label;
    use crate::text_width::width;

    #[test]
    fn a_label_keeps_its_opcode_and_some_of_its_reason() {
        assert_eq!(fit_label("short_scoreboard @ LDS", 13), "short_sc…@LDS");
        assert_eq!(fit_label("barrier @ WARPGROUP", 10), "bar…@WARP…");
        assert_eq!(fit_label("wait @ BRA", 10), "wait @ BRA");
        for w in 5..30 {
            let cut = fit_label("long_scoreboard @ WARPGROUP", w);
            assert!(width(&cut) <= w, "{cut:?} in {w}");
            assert!(cut.starts_with("lo") && cut.contains('@'), "{cut:?} in {w}");
        }
    }
}
