//! The ladder on the roofline: log-log axes on a braille canvas, x the arithmetic
//! intensity against DRAM (FLOP/byte), y the achieved FLOP/s; the ceilings as lines
//! with a tag each (DRAM and L2 bandwidth, the compute roofs: the ladder's peak and the
//! datasheet's), every version a point joined to the one it was built on, the selected
//! version and its parent marked and named, the baselines marks of their own. Beneath
//! the chart: the selected version's figures, its step, the roofs in full and the
//! versions left off with the reason. Drawn from the roofline the ladder state keeps
//! ([`LadderState::roofline`](crate::tui::ladder_state::LadderState)); the marks are
//! characters, so that the chart reads without colour.

use super::compare::step_value;
use super::scene::Scene;
use super::scroll::{Scrolled, clamp_scroll};
use super::text::{fit, printable, wrap};
use crate::analysis::roofline::{Ceiling, LadderRoofline, Level, Roof, RoofPoint};
use crate::report::roofline::{estimate_cells, flops_times, share, tally_line, times};
use crate::text_width;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::widgets::canvas::{Canvas, Context, Line as Segment};

/// The roofline view's state: how far the text beneath the chart is scrolled.
pub type RooflineState = Scrolled;

/// The marks, as the legend names them.
pub const SELECTED: &str = "◉";
pub const PARENT: &str = "◎";
pub const VERSION: &str = "•";
pub const BASELINE: &str = "■";

/// The least rows the chart is drawn in; fewer, and the view is the text alone.
const MIN_CHART_ROWS: u16 = 4;
/// Columns of the y axis's labels (`100T `).
const GUTTER: u16 = 5;

/// What the legend says of the marks, for the help.
pub fn legend() -> String {
    format!(
        "roofline: {SELECTED} the selected version, {PARENT} its parent, {VERSION} the other versions (a line joins each to its parent), {BASELINE} baselines; x FLOP per DRAM byte, y FLOP/s, both log"
    )
}

/// The chart's bounds in log10 units: x (FLOP/byte) and y (FLOP/s).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounds {
    x: [f64; 2],
    y: [f64; 2],
}

/// A version on the chart: its index, id, place in log10 units, and whether a baseline.
struct Mark<'a> {
    index: usize,
    id: &'a str,
    x: f64,
    y: f64,
    baseline: bool,
}

fn marks(r: &LadderRoofline) -> Vec<Mark<'_>> {
    r.versions
        .iter()
        .enumerate()
        .filter_map(|(index, v)| {
            let (x, y) = v.chart_xy()?;
            Some(Mark {
                index,
                id: &v.id,
                x: x.log10(),
                y: y.log10(),
                baseline: v.baseline,
            })
        })
        .collect()
}

fn memory(ceilings: &[&Ceiling], level: Level) -> Option<f64> {
    ceilings
        .iter()
        .find(|c| c.roof == Roof::Memory(level))
        .map(|c| c.value.log10())
}

fn computes(ceilings: &[&Ceiling]) -> Vec<f64> {
    ceilings
        .iter()
        .filter(|c| c.roof == Roof::Compute)
        .map(|c| c.value.log10())
        .collect()
}

/// Whole decades around the points and where the roofs meet; `None` without a point.
fn bounds(marks: &[Mark], ceilings: &[&Ceiling]) -> Option<Bounds> {
    let min = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::INFINITY, f64::min);
    let max = |it: &mut dyn Iterator<Item = f64>| it.fold(f64::NEG_INFINITY, f64::max);
    if marks.is_empty() {
        return None;
    }
    let dram = memory(ceilings, Level::Dram);
    let tops = computes(ceilings);
    // Where the DRAM roof meets each compute roof.
    let ridges: Vec<f64> = dram.map_or(Vec::new(), |d| tops.iter().map(|c| c - d).collect());
    let xs = marks.iter().map(|m| m.x).chain(ridges.iter().copied());
    let x_lo = min(&mut xs.clone()).floor();
    let x_hi = max(&mut xs.clone()).ceil().max(x_lo + 1.0);
    let ys = marks.iter().map(|m| m.y);
    let y_lo = min(&mut ys.clone()).floor();
    let y_top = max(&mut ys.clone().chain(tops.iter().copied()));
    // Room above the highest roof for its tag.
    let y_hi = (y_top + 0.35).max(y_lo + 1.0);
    Some(Bounds {
        x: [x_lo, x_hi],
        y: [y_lo, y_hi],
    })
}

/// A ceiling's tag on the chart: `DRAM`, `L2`, `ladder`, `fp16 tensor`, `fp32`.
fn tag(c: &Ceiling) -> String {
    match (c.roof, c.device.is_some()) {
        (Roof::Memory(l), _) => l.name().to_string(),
        (Roof::Compute, false) => "ladder peak".to_string(),
        (Roof::Compute, true) => c
            .label
            .split_whitespace()
            .skip(1)
            .take_while(|w| !w.chars().next().is_some_and(|ch| ch.is_ascii_digit()))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The styles of the chart: the selected version, its parent, the baselines, roofs.
struct Styles {
    selected: Style,
    parent: Style,
    baseline: Style,
    roof: Style,
    path: Color,
}

fn styles(scene: &Scene) -> Styles {
    let t = scene.theme;
    let fg = |c: Color| {
        if t.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    };
    Styles {
        selected: t.selected(),
        parent: t.title(),
        baseline: fg(Color::Magenta),
        roof: fg(Color::Gray),
        path: if t.color { Color::Cyan } else { Color::Reset },
    }
}

/// Everything the canvas draws, from the roofline and the selection alone.
struct Chart<'a> {
    marks: Vec<Mark<'a>>,
    ceilings: Vec<&'a Ceiling>,
    steps: Vec<(usize, usize)>,
    bounds: Bounds,
    selected: Option<usize>,
    parent: Option<usize>,
}

/// The chart's grid of cells and the texts written over the canvas: the marks, the
/// names of the selected version and its parent, the roofs' tags; none covers another.
struct Overlay {
    bounds: Bounds,
    w: u16,
    h: u16,
    texts: Vec<(u16, u16, String, Style)>,
    /// The columns each text holds: row, first, last.
    taken: Vec<(u16, u16, u16)>,
}

impl Overlay {
    fn new(bounds: Bounds, w: u16, h: u16) -> Overlay {
        Overlay {
            bounds,
            w,
            h,
            texts: Vec::new(),
            taken: Vec::new(),
        }
    }

    /// The cell a point falls in, as the canvas places its text.
    fn cell(&self, x: f64, y: f64) -> (i32, i32) {
        (
            i32::from(cell_of(x, self.bounds.x, self.w, false)),
            i32::from(cell_of(y, self.bounds.y, self.h, true)),
        )
    }

    /// Writes `text` from (`col`, `row`) where it fits and covers nothing; whether it did.
    fn place(&mut self, col: i32, row: i32, text: &str, style: Style) -> bool {
        let len = text.chars().count() as i32;
        let fits = row >= 0
            && row < i32::from(self.h)
            && col >= 0
            && col + len <= i32::from(self.w)
            && len > 0;
        if !fits {
            return false;
        }
        let (row, first, last) = (row as u16, col as u16, (col + len - 1) as u16);
        let free = self
            .taken
            .iter()
            .all(|&(r, a, b)| r != row || b < first || a > last);
        if free {
            self.taken.push((row, first, last));
            self.texts.push((row, first, text.to_string(), style));
        }
        free
    }

    /// The first of `places` (column, row) where `text` fits.
    fn first_of(&mut self, places: &[(i32, i32)], text: &str, style: Style) {
        for &(col, row) in places {
            if self.place(col, row, text, style) {
                return;
            }
        }
    }
}

/// The selected version's and its parent's names beside their points: to the right,
/// else to the left, else a row below or above.
fn place_names(o: &mut Overlay, c: &Chart, s: &Styles) {
    for (i, mark, style) in [
        (c.selected, SELECTED, s.selected),
        (c.parent, PARENT, s.parent),
    ] {
        let Some(m) = i.and_then(|i| c.marks.iter().find(|m| m.index == i)) else {
            continue;
        };
        let (col, row) = o.cell(m.x, m.y);
        let right = format!("{mark}{}", m.id);
        let left = format!("{}{mark}", m.id);
        let back = col + 1 - left.chars().count() as i32;
        for (x, y, t) in [
            (col, row, &right),
            (back, row, &left),
            (col, row + 1, &right),
            (back, row + 1, &left),
            (col, row - 1, &right),
            (back, row - 1, &left),
        ] {
            if o.place(x, y, t, style) {
                break;
            }
        }
    }
}

/// Every other version's mark at its point (one cell each), the baselines' first.
fn place_marks(o: &mut Overlay, c: &Chart, s: &Styles) {
    let (baselines, versions): (Vec<&Mark>, Vec<&Mark>) = c.marks.iter().partition(|m| m.baseline);
    for m in baselines.into_iter().chain(versions) {
        if Some(m.index) == c.selected || Some(m.index) == c.parent {
            continue;
        }
        let (mark, style) = if m.baseline {
            (BASELINE, s.baseline)
        } else {
            (VERSION, Style::new())
        };
        let (col, row) = o.cell(m.x, m.y);
        o.place(col, row, mark, style);
    }
}

/// Each roof's tag beside its line where it covers nothing: a compute roof's at its
/// right end or where it starts (the highest one's above it, the others' beneath), a
/// memory roof's along its slope (DRAM's beneath, L2's above).
fn place_tags(o: &mut Overlay, c: &Chart, s: &Styles) {
    let top = computes(&c.ceilings)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    for ceiling in &c.ceilings {
        let Some(((x0, y0), (x1, y1))) = roof_line(c, ceiling) else {
            continue;
        };
        let text = tag(ceiling);
        let len = text.chars().count() as i32;
        let (a, b) = (o.cell(x0, y0), o.cell(x1, y1));
        let places: Vec<(i32, i32)> = match ceiling.roof {
            Roof::Compute => {
                let side = if ceiling.value.log10() >= top {
                    [-1, 1]
                } else {
                    [1, -1]
                };
                side.iter()
                    .flat_map(|d| [(b.0 + 1 - len, b.1 + d), (a.0 + 1, a.1 + d)])
                    .collect()
            }
            Roof::Memory(l) => {
                let d = if l == Level::Dram { 1 } else { -1 };
                [0.5, 0.3, 0.7, 0.15, 0.85]
                    .iter()
                    .map(|f| {
                        let x = x0 + (x1 - x0) * f;
                        let (col, row) = o.cell(x, y0 + (x - x0));
                        (col, row + d)
                    })
                    .collect()
            }
        };
        o.first_of(&places, &text, s.roof);
    }
}

/// Where a roof's line runs on the chart, its two ends in log10 units: a memory roof
/// (y = bandwidth × intensity, a slope of one) up to the highest compute roof, a
/// compute roof from where it meets the DRAM roof; `None` off the chart.
fn roof_line(c: &Chart, ceiling: &Ceiling) -> Option<((f64, f64), (f64, f64))> {
    let [x0, x1] = c.bounds.x;
    let [y0, _] = c.bounds.y;
    let top = computes(&c.ceilings)
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    let v = ceiling.value.log10();
    let (start, end, slope) = match ceiling.roof {
        Roof::Memory(_) => {
            let end = if top.is_finite() { x1.min(top - v) } else { x1 };
            (x0.max(y0 - v), end, true)
        }
        Roof::Compute => {
            let dram = memory(&c.ceilings, Level::Dram);
            (dram.map_or(x0, |d| x0.max(v - d)), x1, false)
        }
    };
    let y = |x: f64| if slope { v + x } else { v };
    (end > start).then(|| ((start, y(start)), (end, y(end))))
}

fn draw_lines(ctx: &mut Context, c: &Chart, s: &Styles) {
    let roof = s.roof.fg.unwrap_or(Color::Reset);
    for ceiling in &c.ceilings {
        if let Some(((x0, y0), (x1, y1))) = roof_line(c, ceiling) {
            ctx.draw(&Segment::new(x0, y0, x1, y1, roof));
        }
    }
    let at = |i: usize| c.marks.iter().find(|m| m.index == i);
    for &(p, k) in &c.steps {
        if let (Some(a), Some(b)) = (at(p), at(k)) {
            ctx.draw(&Segment::new(a.x, a.y, b.x, b.y, s.path));
        }
    }
}

/// `100T`, `1P`, `10G`: a power of ten of FLOP/s.
fn si(decade: i32) -> String {
    let (unit, base) = match decade {
        d if d >= 15 => ("P", 15),
        d if d >= 12 => ("T", 12),
        d if d >= 9 => ("G", 9),
        _ => ("M", 6),
    };
    format!("{}{unit}", 10f64.powi(decade - base))
}

/// `0.1`, `1`, `100`, `1k`: a power of ten of FLOP/byte.
fn intensity_tick(decade: i32) -> String {
    match decade {
        d if d < 0 => format!("{}", 10f64.powi(d)),
        d if d < 3 => format!("{}", 10f64.powi(d)),
        d => format!("{}k", 10f64.powi(d - 3)),
    }
}

/// Where a value falls among `cells`, as the canvas places its text.
fn cell_of(v: f64, [lo, hi]: [f64; 2], cells: u16, flip: bool) -> u16 {
    let span = f64::from(cells.max(1) - 1);
    let f = if flip { hi - v } else { v - lo };
    (f * span / (hi - lo)).floor().clamp(0.0, span) as u16
}

fn y_axis(b: &Bounds, h: u16) -> Vec<Line<'static>> {
    let mut rows = vec![Line::raw(""); h as usize];
    for d in (b.y[0] as i32)..=(b.y[1] as i32) {
        let r = cell_of(f64::from(d), b.y, h, true) as usize;
        rows[r] = Line::raw(format!("{:>4} ", si(d)));
    }
    rows
}

fn x_axis(b: &Bounds, w: u16) -> Line<'static> {
    let mut text = String::new();
    for d in (b.x[0] as i32)..=(b.x[1] as i32) {
        let t = intensity_tick(d);
        let at = (cell_of(f64::from(d), b.x, w, false) as usize)
            .min((w as usize).saturating_sub(t.len()));
        let have = text.chars().count();
        if at >= have + usize::from(have > 0) {
            text.push_str(&" ".repeat(at - have));
            text.push_str(&t);
        }
    }
    Line::raw(format!("{}{text}", " ".repeat(GUTTER as usize)))
}

fn point_text(p: &RoofPoint) -> String {
    let ai = p
        .dram_intensity()
        .map_or("? FLOP/B".into(), |x| format!("{x:.1} FLOP/B"));
    format!(
        "{ai} · {:.1} TFLOP/s · nearer roof {}",
        p.flop_per_s / 1e12,
        share(p.nearer)
    )
}

/// ncu's estimates: the ladder's tally in a line, then the findings of the parent that
/// the selected version resolved, each with ncu's estimate and what became of it, and
/// the step's measured change, as the compare view words them.
fn estimate_lines(scene: &Scene, width: usize) -> Vec<Line<'static>> {
    let e = &scene.ladder().estimates;
    let t = scene.theme;
    let mut lines = Vec::new();
    if e.steps.is_empty() {
        return lines;
    }
    for l in wrap(&tally_line(&e.tally), width.max(10)) {
        lines.push(Line::styled(l, t.dim()));
    }
    let step = scene
        .version_index()
        .and_then(|i| e.steps.iter().find(|s| s.child == i));
    for c in step.into_iter().flat_map(estimate_cells) {
        let value = step_value(&c.a, &c.b, &c.change, &c.note);
        let name_w = text_width::width(&c.name) + 2;
        let room = width.saturating_sub(name_w).max(10);
        for (n, part) in wrap(value.trim(), room).into_iter().enumerate() {
            let head = if n == 0 { c.name.as_str() } else { "" };
            let pad = " ".repeat(name_w - text_width::width(head));
            lines.push(Line::from(vec![
                Span::styled(format!("{head}{pad}"), t.dim()),
                Span::raw(part),
            ]));
        }
    }
    lines
}

/// The text beneath the chart: the selected version and its step, the roofs, the
/// baselines and the versions left off.
fn text_lines(scene: &Scene, width: usize) -> Vec<Line<'static>> {
    let r = &scene.ladder().roofline;
    let t = scene.theme;
    let mut lines = Vec::new();
    let para = |lines: &mut Vec<Line<'static>>, style: Style, text: String| {
        for l in wrap(&text, width.max(10)) {
            lines.push(Line::styled(l, style));
        }
    };
    if let Some(i) = scene.version_index()
        && let Some(v) = r.versions.get(i)
    {
        let what = v.point.as_ref().map_or_else(
            || format!("no point: {}", v.no_point.as_deref().unwrap_or("?")),
            point_text,
        );
        para(
            &mut lines,
            t.title(),
            format!("{SELECTED} {} {}: {what}", v.id, v.title),
        );
        if let Some(s) = r.step_to(i) {
            let pid = &r.versions[s.parent].id;
            para(
                &mut lines,
                Style::new(),
                format!(
                    "{PARENT} {pid} → {}: intensity {} · FLOP/s {} · {} → {}",
                    v.id,
                    times(s.intensity_x),
                    flops_times(s),
                    share(s.before),
                    share(s.after)
                ),
            );
        }
    }
    lines.extend(estimate_lines(scene, width));
    let roofs: Vec<String> = r.ceilings.iter().map(|c| c.label.clone()).collect();
    if !roofs.is_empty() {
        para(&mut lines, t.dim(), format!("roofs: {}", roofs.join(" · ")));
    }
    let baselines: Vec<String> = r
        .versions
        .iter()
        .filter(|v| v.baseline && v.point.is_some())
        .map(|v| v.id.clone())
        .collect();
    if !baselines.is_empty() {
        para(
            &mut lines,
            Style::new(),
            format!("{BASELINE} baselines: {}", baselines.join(", ")),
        );
    }
    for v in r.versions.iter().filter(|v| v.point.is_none()) {
        let why = v.no_point.as_deref().unwrap_or("?");
        para(&mut lines, t.dim(), format!("left off: {}: {why}", v.id));
    }
    if r.devices.len() > 1 {
        let gpus = r.devices.join(", ");
        para(
            &mut lines,
            t.dim(),
            format!(
                "profiled on {gpus}: the roofs drawn are of {}",
                r.devices[0]
            ),
        );
    }
    lines.into_iter().map(printable).collect()
}

fn chart<'a>(scene: &Scene, r: &'a LadderRoofline) -> Option<Chart<'a>> {
    let marks = marks(r);
    let ceilings = r.charted_ceilings();
    let bounds = bounds(&marks, &ceilings)?;
    let selected = scene.version_index();
    Some(Chart {
        steps: r.steps.iter().map(|s| (s.parent, s.child)).collect(),
        parent: selected.and_then(|i| r.step_to(i)).map(|s| s.parent),
        selected,
        marks,
        ceilings,
        bounds,
    })
}

pub fn draw(frame: &mut Frame, scene: &Scene, state: &RooflineState, body: Rect) {
    let width = body.width as usize;
    let text = text_lines(scene, width);
    let r = &scene.ladder().roofline;
    let head = Line::styled(
        "FLOP/s against FLOP per DRAM byte (log-log)",
        scene.theme.title(),
    );
    let text_h = (text.len() as u16).min((body.height / 3).max(3));
    let chart_h = body.height.saturating_sub(text_h + 2);
    let c = chart(scene, r).filter(|_| chart_h >= MIN_CHART_ROWS && body.width > GUTTER + 10);
    let Some(c) = c else {
        let mut lines = vec![fit(head, width)];
        if marks(r).is_empty() {
            lines.push(Line::raw("no version has a point on the roofline"));
        }
        let offset = clamp_scroll(state.scroll, text.len(), body.height as usize);
        lines.extend(text.into_iter().skip(offset).map(|l| fit(l, width)));
        frame.render_widget(Paragraph::new(lines), body);
        return;
    };
    let [head_a, plot, axis, below] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(chart_h),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(body);
    frame.render_widget(Paragraph::new(fit(head, width)), head_a);
    let [gutter, canvas] =
        Layout::horizontal([Constraint::Length(GUTTER), Constraint::Min(1)]).areas(plot);
    frame.render_widget(Paragraph::new(y_axis(&c.bounds, canvas.height)), gutter);
    frame.render_widget(Paragraph::new(x_axis(&c.bounds, canvas.width)), axis);
    let s = styles(scene);
    let widget = Canvas::default()
        .marker(Marker::Braille)
        .x_bounds(c.bounds.x)
        .y_bounds(c.bounds.y)
        .paint(|ctx| draw_lines(ctx, &c, &s));
    frame.render_widget(widget, canvas);
    let mut o = Overlay::new(c.bounds, canvas.width, canvas.height);
    place_names(&mut o, &c, &s);
    place_marks(&mut o, &c, &s);
    place_tags(&mut o, &c, &s);
    let buf = frame.buffer_mut();
    for (row, col, text, style) in o.texts {
        buf.set_string(canvas.x + col, canvas.y + row, text, style);
    }
    let offset = clamp_scroll(state.scroll, text.len(), below.height as usize);
    let shown: Vec<Line> = text
        .into_iter()
        .skip(offset)
        .map(|l| fit(l, width))
        .collect();
    frame.render_widget(Paragraph::new(shown), below);
}
