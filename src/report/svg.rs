//! A ladder's charts as SVG: inline in the HTML page, or one alone for a slide or a post
//! (`report --format svg --chart NAME`). On the page colours are CSS custom properties
//! of [`colour::css_palette`], so a chart follows the reader's light or dark scheme; a
//! chart alone has them written out ([`standalone`]). Every
//! mark of a version (a bar, a stacked bar, a point of a line) carries `class="mark"`,
//! `data-version` and, where a chart has several series, `data-series`.

use super::exporter::{Analysed, CompareInput, Exporter, column_names};
use super::order::{display_order, stall_rows};
use super::svg_parts::{WIDTH, open_svg, text};
use super::texts::escape;
use super::{colour, format};
use crate::analysis::catalogue::{HEADLINE, Headline, Origin};
use crate::analysis::pipeline::stack_rows;
use crate::analysis::{Kind, MetricId};
use crate::model::trace::{Span, Trace};
use crate::ncu::StallReason;
use std::fmt::Write;

/// The charts of a ladder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Chart {
    /// Throughput (else time) per version, the baselines and the ceiling as lines.
    Speed,
    /// The stall shares of every version, stacked.
    Stalls,
    /// Barrier stalls, short-scoreboard stalls and tensor pipe active across versions.
    Signals,
    /// Every version on the roofline: FLOP/s against FLOP per DRAM byte, log-log, the
    /// DRAM and L2 bandwidth roofs and the compute roofs labelled with their sources.
    Roofline,
}

impl Chart {
    pub const ALL: &[Chart] = &[Chart::Speed, Chart::Stalls, Chart::Signals, Chart::Roofline];

    pub fn name(self) -> &'static str {
        match self {
            Chart::Speed => "speed",
            Chart::Stalls => "stalls",
            Chart::Signals => "signals",
            Chart::Roofline => "roofline",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Chart::Speed => "Speed per version",
            Chart::Stalls => "Where the warps wait: stall shares per version",
            Chart::Signals => "Headline signals across versions",
            Chart::Roofline => "The ladder on the roofline",
        }
    }
}

/// The chart as an `<svg>` element for a page; `None` where the ladder has no data for it.
pub fn draw(chart: Chart, a: &Analysed) -> Option<String> {
    match chart {
        Chart::Speed => speed(a),
        Chart::Stalls => stalls(a),
        Chart::Signals => signals(a),
        Chart::Roofline => super::roofline_svg::roofline(a),
    }
}

/// Chart rules, shared by the page and the stand-alone files.
pub const CHART_CSS: &str = r#"
.chart { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; width: 100%; height: auto; }
.chart text { fill: var(--fg); }
.chart .muted { fill: var(--muted); }
.chart .small { font-size: 9px; }
.chart .grid { stroke: var(--grid); stroke-width: 1; }
.chart .axis { stroke: var(--muted); stroke-width: 1; }
.chart .bar { fill: var(--accent); }
.chart .bar.best { fill: var(--good); }
.chart .ref { stroke: var(--muted); stroke-width: 1.5; stroke-dasharray: 6 4; }
.chart .ceiling { stroke: var(--poor); stroke-width: 1.5; }
.chart text.ceiling-label { fill: var(--poor); }
.chart .line { fill: none; stroke-width: 2; }
.chart .bg { fill: var(--bg); }
.chart .mark:hover { opacity: 0.75; }
.chart line.roof { stroke-width: 1.5; }
.chart line.roof.dram { stroke: var(--blue); }
.chart line.roof.l2 { stroke: var(--cyan); stroke-dasharray: 7 4; }
.chart line.roof.peak { stroke: var(--poor); }
.chart line.roof.datasheet { stroke: var(--muted); stroke-dasharray: 6 4; }
.chart text.roof-label { font-size: 10px; }
.chart text.roof-label.dram { fill: var(--blue); }
.chart text.roof-label.l2 { fill: var(--cyan); }
.chart text.roof-label.peak { fill: var(--poor); }
.chart text.roof-label.datasheet { fill: var(--muted); }
.chart .step { stroke: var(--accent); stroke-width: 1; opacity: 0.55; }
.chart text.point-label { font-size: 10px; }
"#;

/// One chart as a file of its own: its styles and a background inside, every colour
/// written out (the light scheme's): renderers without CSS custom properties (librsvg
/// and the tools built on it, resvg) draw it as a browser does. The HTML page keeps the
/// custom properties, and with them its light and dark schemes.
pub fn standalone(svg: &str) -> String {
    let style =
        format!("<style>{CHART_CSS}</style><rect class=\"bg\" width=\"100%\" height=\"100%\"/>");
    // After the opening tag (whose end is the first '>').
    let at = svg.find('>').map(|i| i + 1).unwrap_or(0);
    colour::resolve_vars(&format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}{style}{}\n",
        &svg[..at],
        &svg[at..]
    ))
}

/// Draws `--chart NAME` alone; a comparison draws the two versions' stall shares.
pub struct SvgExporter {
    pub chart: Chart,
}

impl Exporter for SvgExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let svg = ladders
            .first()
            .and_then(|a| draw(self.chart, a))
            .unwrap_or_else(|| {
                message(&format!(
                    "no data for the {} chart in these profiles",
                    self.chart.name()
                ))
            });
        standalone(&svg)
    }

    fn compare(&self, input: &CompareInput) -> String {
        standalone(&compare_stalls(input))
    }
}

/// The stall shares of the two compared versions, side by side.
pub fn compare_stalls(input: &CompareInput) -> String {
    let share = |a: bool| -> Vec<(StallReason, f64)> {
        input
            .comparison
            .stalls
            .iter()
            .filter_map(|s| Some((s.reason, if a { s.a? } else { s.b? })))
            .collect()
    };
    let (label_a, label_b) = column_names(input);
    let columns = vec![
        StackColumn {
            label: label_a,
            version: input.a_name.clone(),
            baseline: false,
            shares: share(true),
        },
        StackColumn {
            label: label_b,
            version: input.b_name.clone(),
            baseline: false,
            shares: share(false),
        },
    ];
    let mut reasons: Vec<StallReason> = input.comparison.stalls.iter().map(|s| s.reason).collect();
    let top = |r: &StallReason| {
        let s = input.comparison.stalls.iter().find(|s| s.reason == *r);
        s.map(|s| s.a.unwrap_or(0.0).max(s.b.unwrap_or(0.0)))
            .unwrap_or(0.0)
    };
    reasons.sort_by(|x, y| top(y).total_cmp(&top(x)));
    reasons.retain(|r| top(r) >= 0.005);
    if columns.iter().all(|c| c.shares.is_empty()) {
        message("no stall data in either profile")
    } else {
        stacked("stalls", &columns, &reasons)
    }
}

// ---- geometry ----

const LEFT: f64 = 52.0;

/// Columns evenly spread over the plot; `None` positions are gaps.
struct Slots {
    left: f64,
    width: f64,
}

impl Slots {
    fn new(left: f64, plot_width: f64, n: usize) -> Slots {
        Slots {
            left,
            width: plot_width / n.max(1) as f64,
        }
    }

    fn center(&self, i: usize) -> f64 {
        self.left + (i as f64 + 0.5) * self.width
    }

    fn bar_width(&self) -> f64 {
        (self.width * 0.72).min(56.0)
    }
}

/// A step for about `ticks` grid lines from 0 to `max`: 1, 2 or 5 times a power of ten.
fn nice_step(max: f64, ticks: usize) -> f64 {
    let raw = (max / ticks as f64).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let m = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Horizontal grid lines with their values from 0 to `max` at `step`.
fn y_grid(out: &mut String, top: f64, plot_h: f64, max: f64, step: f64, right: f64, unit: &str) {
    // At most a few dozen lines, whatever the values.
    for k in 0..=40 {
        let v = k as f64 * step;
        if v > max + step * 1e-6 {
            break;
        }
        let y = top + plot_h - v / max * plot_h;
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{right:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>"
        );
        text(
            out,
            LEFT - 6.0,
            y + 3.5,
            "end",
            "muted",
            &format!("{}{unit}", tick(v)),
        );
    }
}

fn tick(v: f64) -> String {
    if v.fract().abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// Version ids under their columns, each turned where it would not fit its column.
fn x_labels(out: &mut String, slots: &Slots, labels: &[(usize, String)], y: f64) {
    for (i, label) in labels {
        let x = slots.center(*i);
        if label.chars().count() as f64 * 6.5 > slots.width {
            let _ = write!(
                out,
                "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"end\" class=\"muted\" \
                 transform=\"rotate(-40 {x:.1} {y:.1})\">{}</text>",
                escape(label)
            );
        } else {
            text(out, x, y + 4.0, "middle", "muted", label);
        }
    }
}

fn message(msg: &str) -> String {
    let mut out = String::new();
    open_svg(&mut out, "empty", 60.0, msg);
    text(&mut out, WIDTH / 2.0, 34.0, "middle", "muted", msg);
    out.push_str("</svg>");
    out
}

/// A version's label under the charts: baselines in brackets, as in the timeline.
fn version_label(a: &Analysed, i: usize) -> String {
    let v = &a.ladder.versions[i];
    if v.baseline {
        format!("[{}]", v.id)
    } else {
        v.id.clone()
    }
}

// ---- speed ----

/// The speed metric a ladder's data has: run throughput, ncu throughput, run time or ncu
/// duration, in that order of preference.
pub fn speed_metric(a: &Analysed) -> Option<MetricId> {
    [
        MetricId::RunTflops,
        MetricId::Tflops,
        MetricId::RunTime,
        MetricId::Duration,
    ]
    .into_iter()
    .find(|&id| a.analysis.versions.iter().any(|v| v.get(id).is_some()))
}

fn speed(a: &Analysed) -> Option<String> {
    let id = speed_metric(a)?;
    let def = id.def();
    let known = |v: Option<f64>| v.filter(|x| x.is_finite() && *x >= 0.0);
    let shown = |v: f64| if def.kind == Kind::Time { v / 1e3 } else { v };
    let order = display_order(a.ladder);
    let own = own_versions(a);
    let values: Vec<Option<f64>> = own
        .iter()
        .map(|&i| known(a.analysis.versions[i].get(id)).map(shown))
        .collect();
    let mut refs: Vec<(String, f64, &str)> = order
        .iter()
        .filter(|&&i| a.ladder.versions[i].baseline)
        .filter_map(|&i| {
            let x = known(a.analysis.versions[i].get(id))?;
            Some((a.ladder.versions[i].id.clone(), shown(x), "ref"))
        })
        .collect();
    if def.kind == Kind::Tflops
        && let Some(peak) = a.ladder.peak_tflops.filter(|p| p.is_finite() && *p > 0.0)
    {
        refs.push(("ceiling".to_string(), peak, "ceiling"));
    }
    if values.iter().all(Option::is_none) && refs.is_empty() {
        return None;
    }
    let unit = def.kind.unit();
    let best = match def.better {
        crate::analysis::Better::Lower => values.iter().flatten().copied().reduce(f64::min),
        _ => values.iter().flatten().copied().reduce(f64::max),
    };

    let (top, plot_h, right) = (22.0, 250.0, WIDTH - 136.0);
    let height = top + plot_h + 46.0;
    let max_v = values
        .iter()
        .flatten()
        .chain(refs.iter().map(|r| &r.1))
        .copied()
        .fold(0.0, f64::max);
    let step = nice_step(max_v * 1.04, 5);
    let max = (max_v * 1.04 / step).ceil().max(1.0) * step;
    let y = |v: f64| top + plot_h - v / max * plot_h;
    let slots = Slots::new(LEFT, right - LEFT, own.len());

    let mut out = String::new();
    let what = if def.kind == Kind::Time {
        "time per version (lower is faster)"
    } else {
        "throughput per version"
    };
    let (run_shape, profiled_at) = (a.run_shape(), a.profiled_at());
    open_svg(
        &mut out,
        "speed",
        height,
        &format!(
            "{}: {what}",
            def.name_at(run_shape.as_deref(), profiled_at.as_deref())
        ),
    );
    y_grid(&mut out, top, plot_h, max, step, right, "");
    text(
        &mut out,
        LEFT + 4.0,
        top - 7.0,
        "start",
        "muted",
        &def.label_at(run_shape.as_deref(), profiled_at.as_deref()),
    );

    let bars = Bars {
        slots: &slots,
        y: &y,
        bottom: top + plot_h,
        unit,
    };
    let missing = match def.origin() {
        Origin::Run => "not run at this shape",
        Origin::Ncu => "not profiled",
    };
    bars.draw(&mut out, a, &own, &values, best, missing);
    // Reference lines over the bars, labels pushed apart at the right.
    refs.sort_by(|p, q| q.1.total_cmp(&p.1));
    reference_lines(&mut out, &refs, &y, right, unit);
    close_versions_axis(&mut out, a, &own, &slots, top + plot_h, right);
    Some(out)
}

/// Where the speed chart's bars stand: their slots, the height of a value (`y`), the
/// plot's bottom and the unit their titles name.
struct Bars<'a> {
    slots: &'a Slots,
    y: &'a dyn Fn(f64) -> f64,
    bottom: f64,
    unit: &'a str,
}

impl Bars<'_> {
    /// A bar for each of the versions `own` with a value (the best one marked), each
    /// labelled with its value where the slots are wide enough; a version without one gets
    /// a dash on the axis titled `missing` (not run at the shape, or not profiled), so its
    /// slot does not read as a zero.
    fn draw(
        &self,
        out: &mut String,
        a: &Analysed,
        own: &[usize],
        values: &[Option<f64>],
        best: Option<f64>,
        missing: &str,
    ) {
        let (slots, y, unit) = (self.slots, self.y, self.unit);
        let label_values = slots.width >= 22.0;
        for (n, (&i, x)) in own.iter().zip(values).enumerate() {
            let v = &a.ladder.versions[i];
            let (cx, w) = (slots.center(n), slots.bar_width());
            let Some(x) = *x else {
                let _ = write!(
                    out,
                    "<text class=\"mark none muted small\" data-version=\"{}\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">–<title>{} {}: {missing}</title></text>",
                    escape(&v.id),
                    self.bottom - 3.0,
                    escape(&v.id),
                    escape(&v.title),
                );
                continue;
            };
            let class = if Some(x) == best { "bar best" } else { "bar" };
            let _ = write!(
                out,
                "<rect class=\"mark {class}\" data-version=\"{}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\"><title>{} {}: {} {unit}</title></rect>",
                escape(&v.id),
                cx - w / 2.0,
                y(x),
                (self.bottom - y(x)).max(0.5),
                escape(&v.id),
                escape(&v.title),
                speed_value(x),
            );
            if label_values {
                text(out, cx, y(x) - 3.0, "middle", "small", &speed_value(x));
            }
        }
    }
}

/// The reference lines (baselines, the ceiling) across the plot up to `right`, highest
/// first, their labels at the right pushed apart.
fn reference_lines(
    out: &mut String,
    refs: &[(String, f64, &str)],
    y: &dyn Fn(f64) -> f64,
    right: f64,
    unit: &str,
) {
    let mut last_label_y = f64::NEG_INFINITY;
    for (name, x, class) in refs {
        let ly = y(*x);
        let _ = write!(
            out,
            "<line class=\"{class}\" x1=\"{LEFT}\" x2=\"{right:.1}\" y1=\"{ly:.1}\" y2=\"{ly:.1}\"><title>{}: {} {unit}</title></line>",
            escape(name),
            speed_value(*x)
        );
        let label_y = (ly + 3.5).max(last_label_y + 12.0);
        last_label_y = label_y;
        let label_class = if *class == "ceiling" {
            "ceiling-label"
        } else {
            ""
        };
        text(
            out,
            right + 6.0,
            label_y,
            "start",
            label_class,
            &format!("{name} {}", speed_value(*x)),
        );
    }
}

/// The x axis at `bottom` with the ladder's versions under it, and the end of the chart.
fn close_versions_axis(
    out: &mut String,
    a: &Analysed,
    own: &[usize],
    slots: &Slots,
    bottom: f64,
    right: f64,
) {
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{right:.1}\" y1=\"{bottom:.1}\" y2=\"{bottom:.1}\"/>"
    );
    let labels: Vec<(usize, String)> = own
        .iter()
        .enumerate()
        .map(|(n, &i)| (n, version_label(a, i)))
        .collect();
    x_labels(out, slots, &labels, bottom + 14.0);
    out.push_str("</svg>");
}

/// The ladder's own versions (not the baselines), in display order.
fn own_versions(a: &Analysed) -> Vec<usize> {
    display_order(a.ladder)
        .into_iter()
        .filter(|&i| !a.ladder.versions[i].baseline)
        .collect()
}

/// A speed value short enough to stand over a bar.
fn speed_value(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

// ---- stalls ----

/// One stacked bar: shares of samples per reason.
struct StackColumn {
    label: String,
    version: String,
    baseline: bool,
    shares: Vec<(StallReason, f64)>,
}

/// The reasons drawn in their own colour; the rest are stacked as one "other" segment.
const STACKED_REASONS: usize = 10;

fn stalls(a: &Analysed) -> Option<String> {
    let columns: Vec<StackColumn> = display_order(a.ladder)
        .into_iter()
        .filter_map(|i| {
            let s = a.analysis.versions[i].stalls.as_ref()?;
            let v = &a.ladder.versions[i];
            Some(StackColumn {
                label: version_label(a, i),
                version: v.id.clone(),
                baseline: v.baseline,
                shares: s.ranked(),
            })
        })
        .collect();
    if columns.is_empty() {
        return None;
    }
    Some(stacked(
        "stalls",
        &columns,
        &stall_rows(&a.analysis.versions),
    ))
}

fn stacked(chart: &str, columns: &[StackColumn], reasons: &[StallReason]) -> String {
    // Reasons without a hue of their own would look alike: they join "other".
    let reasons: Vec<StallReason> = reasons
        .iter()
        .copied()
        .filter(|&r| colour::reason_hue(r) != colour::Hue::Gray)
        .take(STACKED_REASONS)
        .collect();
    let has_other = columns.iter().any(|c| {
        c.shares
            .iter()
            .any(|(r, s)| *s > 0.0 && !reasons.contains(r))
    });
    // A gap between the ladder's versions and the baselines.
    let gap = columns.iter().position(|c| c.baseline).filter(|&p| p > 0);
    let positions = columns.len() + usize::from(gap.is_some());
    let (top, plot_h, right) = (18.0, 240.0, WIDTH - 16.0);
    let slots = Slots::new(LEFT, right - LEFT, positions);
    let slot_of = |n: usize| {
        if gap.is_some_and(|g| n >= g) {
            n + 1
        } else {
            n
        }
    };

    let mut legend: Vec<(String, &str)> = reasons
        .iter()
        .map(|&r| (r.metric_name().to_string(), colour::reason_hue(r).css_var()))
        .collect();
    if has_other {
        legend.push(("other".to_string(), colour::Hue::Gray.css_var()));
    }
    let legend_rows = legend_layout(&legend, WIDTH - LEFT).len();
    let legend_top = top + plot_h + 48.0;
    let height = legend_top + legend_rows as f64 * 16.0 + 6.0;

    let mut out = String::new();
    open_svg(
        &mut out,
        chart,
        height,
        "Stall shares per version (% of samples)",
    );
    y_grid(&mut out, top, plot_h, 100.0, 25.0, right, " %");
    for (n, c) in columns.iter().enumerate() {
        let (cx, w) = (slots.center(slot_of(n)), slots.bar_width());
        let _ = write!(
            out,
            "<g class=\"mark\" data-version=\"{}\"><title>{}</title>",
            escape(&c.version),
            escape(&c.label)
        );
        let mut base = top + plot_h;
        let mut segment = |name: &str, fill: &str, share: f64, out: &mut String| {
            if share <= 0.0 {
                return;
            }
            let h = share * plot_h;
            base -= h;
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{base:.2}\" width=\"{w:.1}\" height=\"{h:.2}\" style=\"fill:{fill}\"><title>{}: {} {} %</title></rect>",
                cx - w / 2.0,
                escape(&c.label),
                escape(name),
                format::share(Some(share)),
            );
        };
        for &r in &reasons {
            let share = c.shares.iter().find(|(x, _)| *x == r).map_or(0.0, |s| s.1);
            segment(
                r.metric_name(),
                colour::reason_hue(r).css_var(),
                share,
                &mut out,
            );
        }
        let other: f64 = c
            .shares
            .iter()
            .filter(|(r, _)| !reasons.contains(r))
            .map(|s| s.1)
            .sum();
        segment("other", colour::Hue::Gray.css_var(), other, &mut out);
        out.push_str("</g>");
    }
    let labels: Vec<(usize, String)> = columns
        .iter()
        .enumerate()
        .map(|(n, c)| (slot_of(n), c.label.clone()))
        .collect();
    x_labels(&mut out, &slots, &labels, top + plot_h + 14.0);
    draw_legend(&mut out, &legend, LEFT, legend_top);
    out.push_str("</svg>");
    out
}

/// Legend entries in rows that fit `width`: (row, x offset) per entry.
fn legend_layout(entries: &[(String, &str)], width: f64) -> Vec<Vec<(usize, f64)>> {
    let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new()];
    let mut x = 0.0;
    for (n, (name, _)) in entries.iter().enumerate() {
        let w = 22.0 + name.chars().count() as f64 * 6.2;
        if x + w > width && x > 0.0 {
            rows.push(Vec::new());
            x = 0.0;
        }
        rows.last_mut().expect("one row at least").push((n, x));
        x += w;
    }
    rows
}

pub(super) fn draw_legend(out: &mut String, entries: &[(String, &str)], left: f64, top: f64) {
    for (row, items) in legend_layout(entries, WIDTH - left).iter().enumerate() {
        for &(n, dx) in items {
            let (name, fill) = &entries[n];
            let (x, y) = (left + dx, top + row as f64 * 16.0);
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"11\" height=\"11\" rx=\"2\" style=\"fill:{fill}\"/>",
                y - 9.5
            );
            text(out, x + 15.0, y, "start", "", name);
        }
    }
}

// ---- pipeline timeline ----

/// One row of spans in a lane, and the room between lanes.
const SPAN_ROW: f64 = 14.0;
const LANE_GAP: f64 = 10.0;
/// Room for the roles' names left of the lanes.
const LANE_LABELS: f64 = 100.0;

/// Block `b` of a trace (an index into its timeline's blocks) as one lane per role:
/// each span a bar coloured by its stage (one that overlaps another on a row below), a
/// lane's gaps its waits; the time axis in µs where the block's clock is known, else in
/// cycles; a legend of the stages it shows. `None` where there is no block `b`.
pub fn pipeline_timeline(trace: &Trace, b: usize) -> Option<String> {
    let t = &trace.timeline;
    let block = t.blocks.get(b)?;
    let (left, right) = (LANE_LABELS + 8.0, WIDTH - 16.0);
    let plot_w = right - left;
    let cycles = block.cycles.max(1) as f64;
    let x = |c: f64| left + c / cycles * plot_w;
    let lanes: Vec<(usize, Vec<&Span>, Vec<usize>, usize)> = (0..t.roles.len())
        .map(|r| {
            let spans = block.spans_of(r);
            let (rows, n) = stack_rows(&spans);
            (r, spans, rows, n.max(1))
        })
        .collect();
    let mut stages: Vec<u16> = block.spans.iter().map(|s| s.stage).collect();
    stages.sort_unstable();
    stages.dedup();
    let legend: Vec<(String, &str)> = stages
        .iter()
        .map(|&s| {
            (
                t.stage_name(s).to_string(),
                colour::stage_hue(usize::from(s)).css_var(),
            )
        })
        .collect();
    let top = 10.0;
    let lanes_h: f64 = lanes.iter().map(|l| l.3 as f64 * SPAN_ROW + LANE_GAP).sum();
    let axis_y = top + lanes_h;
    let legend_top = axis_y + 54.0;
    let legend_rows = legend_layout(&legend, WIDTH - left).len().max(1) as f64;
    let height = legend_top + legend_rows * 16.0;
    let title = format!(
        "{}: block {} on SM {}, lanes per role, spans coloured by stage",
        trace.version, block.block, block.sm
    );
    let mut out = String::new();
    open_svg(&mut out, "pipeline", height, &title);
    // The axis: µs where the block's clock is known, else cycles.
    let (unit, per_cycle) = match block.ns_per_cycle {
        Some(npc) => ("µs", npc / 1e3),
        None => ("cycles", 1.0),
    };
    let max = cycles * per_cycle;
    let step = nice_step(max, 8);
    for k in 0..=40 {
        let v = k as f64 * step;
        if v > max * (1.0 + 1e-9) {
            break;
        }
        let xv = x(v / per_cycle);
        let _ = write!(
            out,
            "<line class=\"grid\" x1=\"{xv:.1}\" x2=\"{xv:.1}\" y1=\"{top:.1}\" y2=\"{axis_y:.1}\"/>"
        );
        text(&mut out, xv, axis_y + 14.0, "middle", "muted", &tick(v));
    }
    text(
        &mut out,
        left,
        axis_y + 30.0,
        "start",
        "muted",
        &format!("{unit} from the block's first mark"),
    );
    let mut y = top;
    for (r, spans, rows, n) in &lanes {
        let h = *n as f64 * SPAN_ROW;
        let role = t.role_name(*r as u8);
        text(&mut out, LANE_LABELS, y + SPAN_ROW * 0.75, "end", "", role);
        let _ = write!(
            out,
            "<line class=\"axis\" x1=\"{left:.1}\" x2=\"{right:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
            y + h + 1.0,
            y + h + 1.0
        );
        for (s, row) in spans.iter().zip(rows) {
            let (x0, x1) = (x(s.start as f64), x(s.end as f64));
            let stage = t.stage_name(s.stage);
            let when = match (block.ns_at(s.start), block.ns_at(s.end)) {
                (Some(a), Some(b)) => format!(
                    "{:.3}–{:.3} µs after the kernel's first mark, ",
                    a / 1e3,
                    b / 1e3
                ),
                _ => String::new(),
            };
            let _ = write!(
                out,
                "<rect class=\"mark span\" data-version=\"{}\" data-role=\"{}\" data-stage=\"{}\" x=\"{x0:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" style=\"fill:{}\"><title>{}</title></rect>",
                escape(&trace.version),
                escape(role),
                escape(stage),
                y + *row as f64 * SPAN_ROW + 1.0,
                (x1 - x0).max(0.5),
                SPAN_ROW - 2.0,
                colour::stage_hue(usize::from(s.stage)).css_var(),
                escape(&format!(
                    "{role} · {stage}: {when}cycles {}–{} ({})",
                    s.start,
                    s.end,
                    s.cycles()
                )),
            );
        }
        y += h + LANE_GAP;
    }
    draw_legend(&mut out, &legend, left, legend_top);
    out.push_str("</svg>");
    Some(out)
}

// ---- signals ----

/// A headline signal's name in words.
pub fn headline_name(h: &Headline) -> String {
    match *h {
        Headline::Stall(StallReason::ShortScoreboard, _) => "short-scoreboard stalls".into(),
        Headline::Stall(r, _) => format!("{} stalls", r.metric_name()),
        Headline::Metric(m, _) => m.def().name.to_lowercase(),
    }
}

fn headline_series(h: &Headline) -> (&'static str, &'static str) {
    match *h {
        Headline::Stall(r, _) => (r.metric_name(), colour::reason_hue(r).css_var()),
        Headline::Metric(m, _) => (m.def().key, "var(--tensor)"),
    }
}

fn signals(a: &Analysed) -> Option<String> {
    let own = own_versions(a);
    let series: Vec<(&Headline, Vec<Option<f64>>)> = HEADLINE
        .iter()
        .map(|h| {
            let values = own
                .iter()
                .map(|&i| a.analysis.versions[i].headline(h))
                .collect();
            (h, values)
        })
        .collect();
    if series.iter().all(|(_, v)| v.iter().all(Option::is_none)) {
        return None;
    }
    let (top, plot_h, right) = (34.0, 220.0, WIDTH - 16.0);
    let height = top + plot_h + 46.0;
    let slots = Slots::new(LEFT, right - LEFT, own.len());
    let y = |v: f64| top + plot_h - v.clamp(0.0, 100.0) / 100.0 * plot_h;

    let mut out = String::new();
    open_svg(
        &mut out,
        "signals",
        height,
        "Barrier stalls, short-scoreboard stalls and tensor pipe active per version (%)",
    );
    y_grid(&mut out, top, plot_h, 100.0, 25.0, right, " %");
    let legend: Vec<(String, &str)> = series
        .iter()
        .map(|(h, _)| (headline_name(h), headline_series(h).1))
        .collect();
    draw_legend(&mut out, &legend, LEFT, 14.0);
    for (h, values) in &series {
        let (key, stroke) = headline_series(h);
        // One polyline per run of known values.
        for run in values
            .iter()
            .enumerate()
            .collect::<Vec<_>>()
            .split(|(_, v)| v.is_none())
            .filter(|r| r.len() > 1)
        {
            let points: Vec<String> = run
                .iter()
                .map(|(n, v)| format!("{:.1},{:.1}", slots.center(*n), y(v.unwrap_or(0.0))))
                .collect();
            let _ = write!(
                out,
                "<polyline class=\"line\" style=\"stroke:{stroke}\" points=\"{}\"/>",
                points.join(" ")
            );
        }
        for (n, v) in values.iter().enumerate() {
            let Some(v) = *v else { continue };
            let version = &a.ladder.versions[own[n]];
            let _ = write!(
                out,
                "<circle class=\"mark\" data-series=\"{key}\" data-version=\"{}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.2\" style=\"fill:{stroke}\"><title>{} {}: {v:.1} %</title></circle>",
                escape(&version.id),
                slots.center(n),
                y(v),
                escape(&version.id),
                escape(&headline_name(h)),
            );
        }
    }
    close_versions_axis(&mut out, a, &own, &slots, top + plot_h, right);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::nice_step;

    #[test]
    fn grid_steps_are_round() {
        assert_eq!(
            [nice_step(780.0, 5), nice_step(9.0, 5), nice_step(100.0, 4)],
            [200.0, 2.0, 50.0]
        );
    }
}
