//! The ladder on its roofline as an SVG chart (`report --format svg --chart roofline`,
//! and on the HTML page): log-log axes with a grid line and label per decade, x the
//! arithmetic intensity against DRAM (FLOP/byte), y the achieved FLOP/s; the DRAM and L2
//! bandwidth roofs and the compute roofs (the ladder's `peak_tflops`, the datasheet's)
//! as lines labelled with their value and source; every version a point, joined to its
//! parent, the baselines as diamonds. Labels go where they do not cover another label
//! or point: the first and last versions and the baselines first, then every version
//! that moved far from its parent; the others are named by their tooltips.
//!
//! Every decade's grid line carries its value (`data-x` in FLOP/byte, `data-y` in
//! FLOP/s), so that a reader of the file (and tests/svg_render.rs) can map a point back.

use super::exporter::Analysed;
use super::svg_parts::{WIDTH, open_svg, text};
use super::texts::escape;
use crate::analysis::roofline::{
    Ceiling, LadderRoofline, Level, Roof, VersionRoof, ladder_roofline,
};
use std::fmt::Write;

const LEFT: f64 = 64.0;
const RIGHT: f64 = WIDTH - 24.0;
const TOP: f64 = 40.0;
const PLOT_H: f64 = 380.0;
const BOTTOM: f64 = TOP + PLOT_H;
/// A version's point, a baseline's diamond (half its side), in px.
const POINT_R: f64 = 4.5;
const DIAMOND: f64 = 4.5;
/// A step that moves its point further than this (px) gets the child's label.
const FAR: f64 = 28.0;

/// One logarithmic axis: decades `lo..=hi` (powers of ten) over the pixels `from..to`.
#[derive(Debug, Clone, Copy)]
struct LogAxis {
    lo: i32,
    hi: i32,
    from: f64,
    to: f64,
}

impl LogAxis {
    /// The decades that hold `values` (the positive ones).
    fn around(values: &[f64], from: f64, to: f64) -> Option<LogAxis> {
        let known = values.iter().copied().filter(|v| v.is_finite() && *v > 0.0);
        let (min, max) = known.fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(a, b)| (a.min(v), b.max(v))))
        })?;
        let lo = min.log10().floor() as i32;
        let hi = (max.log10().ceil() as i32).max(lo + 1);
        Some(LogAxis { lo, hi, from, to })
    }

    fn at(&self, v: f64) -> f64 {
        let f = (v.log10() - f64::from(self.lo)) / f64::from(self.hi - self.lo);
        self.from + f * (self.to - self.from)
    }

    fn decades(&self) -> impl Iterator<Item = i32> {
        self.lo..=self.hi
    }

    fn min(&self) -> f64 {
        10f64.powi(self.lo)
    }

    fn max(&self) -> f64 {
        10f64.powi(self.hi)
    }
}

/// A power of ten as a tick label: `0.01`, `1`, `1000`, else `1e-5`, `1e6`.
fn decade_label(e: i32) -> String {
    match e {
        -3..=-1 => format!("{}", 10f64.powi(e)),
        0..=4 => format!("{}", 10i64.pow(e as u32)),
        _ => format!("1e{e}"),
    }
}

/// What the chart draws: the ceilings (memory roofs of one GPU, compute roofs) and the
/// axes that hold them and the points.
struct Frame<'a> {
    x: LogAxis,
    y: LogAxis,
    dram: Option<&'a Ceiling>,
    l2: Option<&'a Ceiling>,
    compute: Vec<&'a Ceiling>,
}

impl<'a> Frame<'a> {
    fn new(r: &'a LadderRoofline) -> Option<Frame<'a>> {
        let charted = r.charted_ceilings();
        let memory = |l: Level| charted.iter().copied().find(|c| c.roof == Roof::Memory(l));
        let compute: Vec<&Ceiling> = charted
            .iter()
            .copied()
            .filter(|c| c.roof == Roof::Compute)
            .collect();
        let (dram, l2) = (memory(Level::Dram), memory(Level::L2));
        let points: Vec<(f64, f64)> = r.versions.iter().filter_map(|v| v.chart_xy()).collect();
        let ridges = compute.iter().filter_map(|c| Some(c.value / dram?.value));
        // Room on either side of the points, and to their right for the roofs' labels.
        let xs: Vec<f64> = points
            .iter()
            .flat_map(|p| [p.0 / 1.5, p.0 * 4.0])
            .chain(ridges.map(|x| x / 1.5))
            .collect();
        let ys: Vec<f64> = points
            .iter()
            .flat_map(|p| [p.1 / 1.5, p.1 * 1.2])
            .chain(compute.iter().map(|c| c.value))
            .collect();
        if points.is_empty() {
            return None;
        }
        Some(Frame {
            x: LogAxis::around(&xs, LEFT, RIGHT)?,
            y: LogAxis::around(&ys, BOTTOM, TOP)?,
            dram,
            l2,
            compute,
        })
    }

    /// The highest compute roof drawn, else the top of the plot.
    fn top_roof(&self) -> f64 {
        self.compute
            .iter()
            .map(|c| c.value)
            .fold(f64::NAN, f64::max)
            .min(self.y.max())
            .max(self.y.min())
    }
}

/// The roofline of the ladder `a`; `None` where no version has a point.
pub fn roofline(a: &Analysed) -> Option<String> {
    let r = ladder_roofline(a.ladder);
    let frame = Frame::new(&r)?;
    let height = BOTTOM + 62.0;
    let mut out = String::new();
    open_svg(
        &mut out,
        "roofline",
        height,
        &format!(
            "{}: every version on the roofline (FLOP/s against FLOP per DRAM byte, log-log)",
            a.ladder.name
        ),
    );
    grid(&mut out, &frame);
    memory_roofs(&mut out, &frame);
    let roof_labels = compute_roofs(&mut out, &frame);
    let placed = points(&mut out, &r, &frame);
    labels(&mut out, &r, &placed, roof_labels);
    legend(&mut out);
    footer(&mut out, &r);
    out.push_str("</svg>");
    Some(out)
}

/// A grid line and label per decade on both axes, and the axes' titles.
fn grid(out: &mut String, f: &Frame) {
    for e in f.x.decades() {
        let v = 10f64.powi(e);
        let x = f.x.at(v);
        let _ = write!(
            out,
            "<line class=\"grid\" data-x=\"{v:e}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{TOP}\" y2=\"{BOTTOM}\"/>"
        );
        text(out, x, BOTTOM + 15.0, "middle", "muted", &decade_label(e));
    }
    for e in f.y.decades() {
        let v = 10f64.powi(e);
        let y = f.y.at(v);
        let _ = write!(
            out,
            "<line class=\"grid\" data-y=\"{v:e}\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/>"
        );
        text(
            out,
            LEFT - 6.0,
            y + 3.5,
            "end",
            "muted",
            &decade_label(e - 12),
        );
    }
    let _ = write!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{RIGHT}\" y1=\"{BOTTOM}\" y2=\"{BOTTOM}\"/>\
         <line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{BOTTOM}\"/>"
    );
    text(
        out,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 32.0,
        "middle",
        "muted",
        "arithmetic intensity against DRAM (FLOP per byte, log scale)",
    );
    let (x, y) = (14.0, (TOP + BOTTOM) / 2.0);
    let _ = write!(
        out,
        "<text x=\"{x}\" y=\"{y:.1}\" text-anchor=\"middle\" class=\"muted\" transform=\"rotate(-90 {x} {y:.1})\">TFLOP/s achieved (log scale)</text>"
    );
}

/// Where a ceiling's figure came from, short enough for its label (the full source is
/// its tooltip).
fn short_source(c: &Ceiling) -> &'static str {
    match (c.roof, &c.device) {
        (Roof::Compute, None) => "ladder.toml peak_tflops",
        (Roof::Compute, Some(_)) => "datasheet",
        (Roof::Memory(_), _) => "ncu peak metrics",
    }
}

fn ceiling_title(c: &Ceiling) -> String {
    let gpu = c.device.as_deref().unwrap_or("this ladder");
    escape(&format!("{} ({gpu}): {}", c.label, c.source))
}

/// The bandwidth roofs: FLOP/s = bandwidth × intensity, from the plot's left (or
/// bottom) up to the highest compute roof, each labelled along its slope.
fn memory_roofs(out: &mut String, f: &Frame) {
    let top = f.top_roof();
    for (c, class) in [(f.dram, "roof dram"), (f.l2, "roof l2")] {
        let Some(c) = c else { continue };
        let x0 = f.x.min().max(f.y.min() / c.value);
        let x1 = f.x.max().min(top / c.value);
        if x1 <= x0 {
            continue;
        }
        let (px0, py0, px1, py1) = (
            f.x.at(x0),
            f.y.at(c.value * x0),
            f.x.at(x1),
            f.y.at(c.value * x1),
        );
        let _ = write!(
            out,
            "<line class=\"{class}\" x1=\"{px0:.1}\" y1=\"{py0:.1}\" x2=\"{px1:.1}\" y2=\"{py1:.1}\"><title>{}</title></line>",
            ceiling_title(c)
        );
        let angle = (py1 - py0).atan2(px1 - px0).to_degrees();
        let (lx, ly) = (px0 + 12.0, py0 + (py1 - py0) / (px1 - px0) * 12.0 - 5.0);
        let _ = write!(
            out,
            "<text x=\"{lx:.1}\" y=\"{ly:.1}\" class=\"roof-label {class}\" transform=\"rotate({angle:.1} {lx:.1} {ly:.1})\">{} · {}</text>",
            escape(&c.label),
            short_source(c)
        );
    }
}

/// The compute roofs: flat from where they meet the DRAM roof to the right edge, each
/// labelled at its right end, above the line, or under it where the roof above is
/// close; returns the labels' boxes.
fn compute_roofs(out: &mut String, f: &Frame) -> Vec<Box4> {
    let mut roofs: Vec<&Ceiling> = f
        .compute
        .iter()
        .copied()
        .filter(|c| c.value >= f.y.min() && c.value <= f.y.max())
        .collect();
    roofs.sort_by(|a, b| b.value.total_cmp(&a.value));
    let (mut last_line, mut last_label) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
    let mut boxes = Vec::new();
    for c in roofs {
        let from = f
            .dram
            .map_or(f.x.min(), |d| (c.value / d.value).max(f.x.min()));
        let (x0, y) = (f.x.at(from.min(f.x.max())), f.y.at(c.value));
        let class = if c.device.is_none() {
            "roof peak"
        } else {
            "roof datasheet"
        };
        let _ = write!(
            out,
            "<line class=\"{class}\" x1=\"{x0:.1}\" x2=\"{RIGHT}\" y1=\"{y:.1}\" y2=\"{y:.1}\"><title>{}</title></line>",
            ceiling_title(c)
        );
        let above = if y - last_line >= 14.0 {
            y - 4.0
        } else {
            y + 12.0
        };
        let ly = above.max(last_label + 12.0);
        (last_line, last_label) = (y, ly);
        let label = format!("{} · {}", c.label, short_source(c));
        let w = label.chars().count() as f64 * 5.6;
        boxes.push((RIGHT - 4.0 - w, ly - 9.0, RIGHT, ly + 2.0));
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{ly:.1}\" text-anchor=\"end\" class=\"roof-label {class}\">{}</text>",
            RIGHT - 4.0,
            escape(&label)
        );
    }
    boxes
}

/// A drawn point: its version's index, pixel centre and label.
struct Placed {
    index: usize,
    x: f64,
    y: f64,
    label: String,
}

/// The segments from each parent to its child, then every version's point (the
/// baselines' diamonds last); returns where each was drawn.
fn points(out: &mut String, r: &LadderRoofline, f: &Frame) -> Vec<Placed> {
    let placed: Vec<Placed> = r
        .versions
        .iter()
        .enumerate()
        .filter_map(|(index, v)| {
            let (x, y) = v.chart_xy()?;
            let label = if v.baseline {
                format!("[{}]", v.id)
            } else {
                v.id.clone()
            };
            Some(Placed {
                index,
                x: f.x.at(x),
                y: f.y.at(y),
                label,
            })
        })
        .collect();
    let at = |i: usize| placed.iter().find(|p| p.index == i);
    for s in &r.steps {
        if let (Some(a), Some(b)) = (at(s.parent), at(s.child)) {
            let _ = write!(
                out,
                "<line class=\"step\" x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>",
                a.x, a.y, b.x, b.y
            );
        }
    }
    let (baselines, own): (Vec<&Placed>, Vec<&Placed>) =
        placed.iter().partition(|p| r.versions[p.index].baseline);
    for p in own.into_iter().chain(baselines) {
        point(out, &r.versions[p.index], p);
    }
    placed
}

/// One version's mark with its figures as a tooltip.
fn point(out: &mut String, v: &VersionRoof, p: &Placed) {
    let Some(pt) = &v.point else { return };
    let ai = |l: Level| {
        pt.level(l)
            .and_then(|x| x.intensity)
            .map_or("—".to_string(), |x| format!("{x:.1}"))
    };
    let nearer = super::roofline::share(pt.nearer);
    let title = escape(&format!(
        "{} {}: {:.1} TFLOP/s; FLOP/byte DRAM {}, L2 {}, L1/shared {}; nearer roof {nearer}",
        v.id,
        v.title,
        pt.flop_per_s / 1e12,
        ai(Level::Dram),
        ai(Level::L2),
        ai(Level::L1),
    ));
    let id = escape(&v.id);
    if v.baseline {
        let s = DIAMOND * 2.0;
        let _ = write!(
            out,
            "<rect class=\"mark baseline\" data-version=\"{id}\" x=\"{:.2}\" y=\"{:.2}\" width=\"{s}\" height=\"{s}\" transform=\"rotate(45 {:.2} {:.2})\" style=\"fill:var(--magenta)\"><title>{title}</title></rect>",
            p.x - DIAMOND,
            p.y - DIAMOND,
            p.x,
            p.y
        );
    } else {
        let _ = write!(
            out,
            "<circle class=\"mark point\" data-version=\"{id}\" cx=\"{:.2}\" cy=\"{:.2}\" r=\"{POINT_R}\" style=\"fill:var(--accent)\"><title>{title}</title></circle>",
            p.x, p.y
        );
    }
}

/// A label's box: left, top, right, bottom.
type Box4 = (f64, f64, f64, f64);

fn overlaps(a: Box4, b: Box4) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The versions to label, most wanted first: the first and last of the ladder's own,
/// the baselines, then every version whose step from its parent moved it far.
fn label_order(r: &LadderRoofline, placed: &[Placed]) -> Vec<usize> {
    let own: Vec<usize> = (0..placed.len())
        .filter(|&n| !r.versions[placed[n].index].baseline)
        .collect();
    let mut order: Vec<usize> = own.first().into_iter().chain(own.last()).copied().collect();
    order.extend((0..placed.len()).filter(|&n| r.versions[placed[n].index].baseline));
    let at = |i: usize| placed.iter().find(|p| p.index == i);
    for &n in &own {
        let p = &placed[n];
        let far = r
            .step_to(p.index)
            .and_then(|s| at(s.parent))
            .is_some_and(|q| (q.x - p.x).hypot(q.y - p.y) > FAR);
        if far {
            order.push(n);
        }
    }
    let mut seen = Vec::new();
    order.retain(|n| {
        let new = !seen.contains(n);
        seen.push(*n);
        new
    });
    order
}

/// Each wanted label beside its point (right, left, above or below) where it covers no
/// other label or point and stays in the plot; a label with no such place is left out.
fn labels(out: &mut String, r: &LadderRoofline, placed: &[Placed], mut taken: Vec<Box4>) {
    let marks: Vec<Box4> = placed
        .iter()
        .map(|p| (p.x - 5.0, p.y - 5.0, p.x + 5.0, p.y + 5.0))
        .collect();
    for n in label_order(r, placed) {
        let p = &placed[n];
        let w = p.label.chars().count() as f64 * 6.2;
        let candidates = [
            (
                p.x + 8.0,
                p.y + 4.0,
                "start",
                (p.x + 7.0, p.y - 6.0, p.x + 9.0 + w, p.y + 6.0),
            ),
            (
                p.x - 8.0,
                p.y + 4.0,
                "end",
                (p.x - 9.0 - w, p.y - 6.0, p.x - 7.0, p.y + 6.0),
            ),
            (
                p.x,
                p.y - 9.0,
                "middle",
                (p.x - w / 2.0, p.y - 19.0, p.x + w / 2.0, p.y - 7.0),
            ),
            (
                p.x,
                p.y + 17.0,
                "middle",
                (p.x - w / 2.0, p.y + 7.0, p.x + w / 2.0, p.y + 19.0),
            ),
        ];
        let fits = |b: Box4| {
            b.0 >= LEFT
                && b.2 <= RIGHT
                && b.1 >= TOP
                && b.3 <= BOTTOM
                && !taken.iter().any(|&t| overlaps(b, t))
                && !marks
                    .iter()
                    .enumerate()
                    .any(|(m, &k)| m != n && overlaps(b, k))
        };
        if let Some(&(x, y, anchor, b)) = candidates.iter().find(|c| fits(c.3)) {
            taken.push(b);
            let _ = write!(
                out,
                "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" class=\"point-label\" data-version=\"{}\">{}</text>",
                escape(&r.versions[p.index].id),
                escape(&p.label)
            );
        }
    }
}

/// What the marks are, above the plot at its right.
fn legend(out: &mut String) {
    let y = 18.0;
    let x = RIGHT - 330.0;
    let _ = write!(
        out,
        "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"{POINT_R}\" style=\"fill:var(--accent)\"/>",
        x,
        y - 4.0
    );
    text(
        out,
        x + 9.0,
        y,
        "start",
        "",
        "version, joined to its parent",
    );
    let bx = x + 210.0;
    let _ = write!(
        out,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" transform=\"rotate(45 {bx:.1} {:.1})\" style=\"fill:var(--magenta)\"/>",
        bx - 4.5,
        y - 8.5,
        y - 4.0
    );
    text(out, bx + 9.0, y, "start", "", "baseline");
}

/// Under the axis title: the versions left off and, where the ladder's profiles are of
/// several GPUs, whose memory roofs are drawn.
fn footer(out: &mut String, r: &LadderRoofline) {
    let mut notes = Vec::new();
    let left_off: Vec<&str> = r
        .versions
        .iter()
        .filter(|v| v.chart_xy().is_none())
        .map(|v| v.id.as_str())
        .collect();
    if !left_off.is_empty() {
        notes.push(format!(
            "left off (no point; report --roofline says why): {}",
            left_off.join(", ")
        ));
    }
    if r.devices.len() > 1 {
        notes.push(format!(
            "roofs of the {}; the profiles are of {} GPUs",
            r.devices[0],
            r.devices.len()
        ));
    }
    if !notes.is_empty() {
        text(
            out,
            LEFT,
            BOTTOM + 52.0,
            "start",
            "muted small",
            &notes.join(" · "),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decades_hold_the_values_and_map_logarithmically() {
        let a = LogAxis::around(&[3.7e12, 989e12], 400.0, 100.0).unwrap();
        assert_eq!((a.lo, a.hi), (12, 15));
        assert!((a.at(1e12) - 400.0).abs() < 1e-9);
        assert!((a.at(1e15) - 100.0).abs() < 1e-9);
        assert!((a.at(10f64.powf(13.5)) - 250.0).abs() < 1e-9);
        assert_eq!(
            [
                decade_label(-2),
                decade_label(0),
                decade_label(3),
                decade_label(6)
            ],
            ["0.01", "1", "1000", "1e6"]
        );
    }

    #[test]
    fn no_axis_without_a_positive_value() {
        assert!(LogAxis::around(&[0.0, f64::NAN], 0.0, 1.0).is_none());
    }
}
