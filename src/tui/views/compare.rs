//! Two versions side by side: metric deltas coloured by direction, the bottlenecks,
//! stall bars, the (reason × opcode) cells, the instruction mix, the SASS aligned, and
//! the diff of their kernel sources.

use super::scene::Scene;
use super::scroll::{draw_document, moved};
use super::stall_bar::{stall_bar, stall_legend};
use super::text::{fit, wrap};
use crate::analysis::sass::MixSide;
use crate::analysis::{self, StallBreakdown};
use crate::model::Version;
use crate::report::comparison::{self, Document, Figure, Names, Part, Sass, Tag};
use crate::report::{self, format};
use crate::text_width;
use crate::tui::action::Action;
use crate::tui::ladder_state::LadderState;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The compare view's state: its scroll, and the comparison of the pair it shows,
/// refreshed by `update` while the view shows.
#[derive(Default)]
pub struct CompareState {
    pub scroll: usize,
    pub cache: Option<CompareCache>,
}

impl CompareState {
    /// The compare view's own actions: the moves scroll it.
    pub(crate) fn act(&mut self, action: Action, page: usize) {
        if let Some(at) = moved(self.scroll, action, page) {
            self.scroll = at;
        }
    }

    /// The comparison of `pair` of the ladder at `ladder`, when it is the one cached.
    pub fn cached(&self, ladder: usize, pair: (usize, usize)) -> Option<&analysis::Comparison> {
        self.cache
            .as_ref()
            .filter(|c| c.ladder == ladder && c.pair == pair)
            .map(|c| &c.comparison)
    }

    /// Computes the comparison of the pair the view shows (of `ls`, the ladder at
    /// `ladder`) when it is not the one cached; with no pair, none is kept.
    pub(crate) fn refresh(
        &mut self,
        ladder: usize,
        ls: &LadderState,
        pair: Option<(usize, usize)>,
    ) {
        let Some(pair) = pair else {
            self.cache = None;
            return;
        };
        if self.cached(ladder, pair).is_some() {
            return;
        }
        self.cache = Some(CompareCache {
            ladder,
            pair,
            comparison: comparison_of(ls, pair),
        });
    }
}

/// The comparison of versions `pair` of the ladder `ls`: their analyses, listings, and
/// the speed-up of the second over the first from the run results shown.
fn comparison_of(ls: &LadderState, (ia, ib): (usize, usize)) -> analysis::Comparison {
    let (va, vb) = (&ls.ladder.versions[ia], &ls.ladder.versions[ib]);
    let speed = ls
        .shown
        .run(&ls.ladder, va)
        .zip(ls.shown.run(&ls.ladder, vb))
        .and_then(|(ra, rb)| analysis::speed::speedup(rb, ra));
    analysis::compare(
        &ls.analysis.versions[ia],
        &ls.analysis.versions[ib],
        va.readable_listing().zip(vb.readable_listing()),
        speed,
    )
    .with_roofline(&ls.ladder, ia, &ls.ladder, ib)
}

/// The comparison the compare view shows, kept while its pair stays (aligning two SASS
/// listings takes longer than a frame should).
pub struct CompareCache {
    pub ladder: usize,
    pub pair: (usize, usize),
    pub comparison: analysis::Comparison,
}

pub fn draw(frame: &mut Frame, scene: &Scene, state: &CompareState, body: Rect) {
    let lines = document(scene, state, body.width as usize);
    draw_document(frame, lines, state.scroll, body);
}

/// The direction of a row as a glyph, so that better and worse read at every width and
/// without colour: `▲` better, `▼` worse (the timeline's regression mark), blank for
/// neither.
pub fn direction_glyph(t: Tag) -> &'static str {
    match t {
        Tag::Better => "▲",
        Tag::Worse => "▼",
        _ => " ",
    }
}

/// The glyph column: two spaces and the glyph.
const GLYPH_W: usize = 3;

/// A metric's name in `w` columns: a name too wide keeps its source in parentheses
/// (`% of ladder c…(run)`, `Energy / lau…(run)`), so that the run and ncu rows of one
/// quantity stay told apart; cut on the right where that leaves too little of the rest.
fn fit_name(name: &str, w: usize) -> String {
    if text_width::width(name) <= w {
        return name.to_string();
    }
    if let Some(at) = name.rfind(" (").filter(|_| name.ends_with(')')) {
        let suffix = &name[at + 1..];
        let head_w = w.saturating_sub(text_width::width(suffix));
        if head_w >= 6 {
            return format!("{}{suffix}", text_width::cut(&name[..at], head_w));
        }
    }
    text_width::cut(name, w)
}

/// What the compare view's glyphs mean, for the help.
pub fn legend() -> String {
    format!(
        "compare: {} better, {} worse, by the metric's direction (the verdict column beside it says how, where the terminal is wide enough)",
        direction_glyph(Tag::Better),
        direction_glyph(Tag::Worse)
    )
}

fn tag_style(scene: &Scene, t: Tag) -> Style {
    match t {
        Tag::Better => scene.theme.better(),
        Tag::Worse => scene.theme.worse(),
        _ => scene.theme.dim(),
    }
}

/// The narrowest a metric's name is cut to before rows are stacked instead.
const MIN_NAME_W: usize = 10;

/// The comparison's columns at a terminal's width: as wide as their values (and two
/// spaces), the delta column as its deltas; a terminal too narrow for them gets each row
/// stacked (`stacked_row`), so that no value is cut or runs into the next.
struct Columns {
    name_w: usize,
    val_w: usize,
    delta_w: usize,
    stacked: bool,
}

/// The shown metric rows: verdict tag, and the cells (name, a, b, delta, verdict word).
/// The document names the ncu rows' profile shape where the run results are of another;
/// the run rows' shape is on the line above the table.
fn metric_rows<'a>(doc: &'a Document) -> Vec<(Tag, [String; 4], &'a str)> {
    doc.rows(Part::Metrics)
        .filter(|r| r.shown)
        .map(|r| {
            (
                r.tag,
                [r.name.clone(), r.a.clone(), r.b.clone(), r.delta.clone()],
                r.verdict.as_str(),
            )
        })
        .collect()
}

impl Columns {
    fn of(rows: &[(Tag, [String; 4], &str)], width: usize) -> Columns {
        let widest = |cols: &[usize], at_least: usize| {
            rows.iter()
                .flat_map(|(_, cells, _)| cols.iter().map(|&i| text_width::width(&cells[i])))
                .max()
                .unwrap_or(0)
                .max(at_least)
                + 2
        };
        let val_w = widest(&[1, 2], 8);
        let delta_w = widest(&[3], 5);
        // The names as wide as the widest where the terminal holds them; they give way
        // first (cut with an ellipsis) so that the values and the direction glyph fit.
        let name_w = widest(&[0], 8)
            .min(width.saturating_sub(2 * val_w + delta_w + GLYPH_W))
            .max(MIN_NAME_W);
        // Too narrow for a row of four columns (40 columns): each row stacked, its name
        // on a line, then its values and its delta packed into lines that hold them
        // whole. The row as laid out: name, two values, delta and "  ▲".
        let stacked = MIN_NAME_W + 2 * val_w + delta_w + GLYPH_W > width;
        Columns {
            name_w,
            val_w,
            delta_w,
            stacked,
        }
    }
}

/// Two versions' ids, as the view's rows name the sides.
type Ids<'a> = [&'a str; 2];

pub fn document(scene: &Scene, state: &CompareState, width: usize) -> Vec<Line<'static>> {
    let ls = scene.ladder();
    let Some((ia, ib)) = scene.compare_pair() else {
        return no_pair(scene, width);
    };
    let (va, vb) = (&ls.ladder.versions[ia], &ls.ladder.versions[ib]);
    let (aa, ab) = (&ls.analysis.versions[ia], &ls.analysis.versions[ib]);
    let computed;
    let c = match state.cached(scene.current, (ia, ib)) {
        Some(c) => c,
        None => {
            computed = comparison_of(ls, (ia, ib));
            &computed
        }
    };
    let listing_error = va.listing_error().or_else(|| vb.listing_error());
    let profiled_at = ls.shown.profiled_at(&ls.ladder);
    let warnings = [report::version_warnings(va), report::version_warnings(vb)];
    let names = Names {
        a: &va.id,
        b: &vb.id,
        run_shape: None,
        other_shape: false,
        profiled_at: profiled_at.as_deref(),
        listing_error: listing_error.as_deref(),
        warnings: [&warnings[0], &warnings[1]],
    };
    let doc = comparison::document(c, &names);
    let ids = [va.id.as_str(), vb.id.as_str()];
    let mut out = title_lines(scene, va, vb);
    // What a side's figures cannot be trusted for, in full under the title.
    for w in doc.warning_lines() {
        let w = format::printable(&w).into_owned();
        out.extend(
            wrap(&format!("⚠ {w}"), width)
                .into_iter()
                .map(|l| Line::styled(l, scene.theme.error())),
        );
    }
    let rows = metric_rows(&doc);
    let cols = Columns::of(&rows, width);
    out.extend(metric_lines(scene, &rows, &cols, ids, width));
    out.extend(occupancy_lines(scene, &doc, ids));
    out.extend(bottleneck_lines(scene, &doc, ids));
    out.extend(roofline_lines(scene, &doc, width));
    let stalls = [aa.stalls.as_ref(), ab.stalls.as_ref()];
    out.extend(stall_lines(scene, &doc, stalls, &cols, ids, width));
    out.extend(cell_lines(scene, &doc, &cols, ids, width));
    out.extend(mix_lines(scene, &doc, ids));
    out.extend(sass_lines(scene, &doc));
    out.extend(source_lines(scene, va, vb));
    out
}

/// The first version, nothing marked: nothing to compare it with.
fn no_pair(scene: &Scene, width: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    scene
        .version_index()
        .map(|i| {
            let mut out: Vec<Line> = wrap(&scene.ladder().ladder.no_parent(i), width)
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
        .unwrap_or_default()
}

/// The two versions compared, and the shape of the run results compared.
fn title_lines(scene: &Scene, va: &Version, vb: &Version) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let mut out = vec![Line::from(vec![
        Span::styled(format!("{} {}", va.id, va.title), t.title()),
        Span::raw("  →  "),
        Span::styled(format!("{} {}", vb.id, vb.title), t.title()),
        Span::styled(
            if scene.marked.is_some() {
                ""
            } else {
                "   (its parent; m marks another version to compare with)"
            },
            t.dim(),
        ),
    ])];
    // The run results compared are of one shape: the view names it.
    out.extend(run_shape_line(scene));
    out
}

/// Which run results a view's "(run)" rows show, where the ladder has any: `run results
/// at 1,64,1024,128 (S: next of 3 shapes)`, and the profiles' shape where it is another
/// (`; ncu rows profiled at 1,64,1024,128`).
fn run_shape_line(scene: &Scene) -> Option<Line<'static>> {
    let ls = scene.ladder();
    let shapes = ls.ladder.measured_shapes();
    let s = ls.shown.shape(&ls.ladder).filter(|_| !shapes.is_empty())?;
    let next = match shapes.len() {
        1 => String::new(),
        n => format!(" (S: next of {n} shapes)"),
    };
    let profiled = ls
        .shown
        .profiled_at(&ls.ladder)
        .map(|p| format!("; ncu rows profiled at {p}"))
        .unwrap_or_default();
    Some(Line::styled(
        format!("run results at {s}{next}{profiled}"),
        scene.theme.dim(),
    ))
}

/// Each metric's row: name, the two values, the delta and the verdict, coloured by it.
fn metric_lines(
    scene: &Scene,
    rows: &[(Tag, [String; 4], &str)],
    cols: &Columns,
    [a_id, b_id]: Ids,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let Columns {
        name_w,
        val_w,
        delta_w,
        ..
    } = *cols;
    let mut out = Vec::new();
    if cols.stacked {
        out.push(Line::styled("metric", t.dim()));
        for (tag, [name, a, b, delta], verdict) in rows {
            let style = tag_style(scene, *tag);
            let values = [format!("{a_id} {a}"), format!("{b_id} {b}")];
            let tail = format!("{delta} {} {verdict}", direction_glyph(*tag));
            if 2 + text_width::width(&tail) <= width {
                out.extend(stacked_row(
                    Line::raw(name.clone()),
                    values,
                    tail,
                    style,
                    width,
                ));
            } else {
                // A verdict with its interval gets lines of its own, wrapped at words,
                // so that no figure of it is cut; the direction stays by the delta.
                out.extend(stacked_row(
                    Line::raw(name.clone()),
                    values,
                    format!("{delta} {}", direction_glyph(*tag)),
                    style,
                    width,
                ));
                out.extend(
                    wrap_words(verdict, width.saturating_sub(2))
                        .into_iter()
                        .map(|l| Line::styled(format!("  {l}"), style)),
                );
            }
        }
        return out;
    }
    out.push(Line::styled(
        format!(
            "{}{}{}{}{}verdict",
            format::left("metric", name_w),
            format::right(a_id, val_w),
            format::right(b_id, val_w),
            format::right("delta", delta_w),
            " ".repeat(GLYPH_W + 2),
        ),
        t.dim(),
    ));
    for (tag, [name, a, b, delta], verdict) in rows {
        let style = tag_style(scene, *tag);
        out.push(Line::from(vec![
            Span::raw(format::left(&fit_name(name, name_w - 1), name_w)),
            Span::raw(format::right(a, val_w)),
            Span::raw(format::right(b, val_w)),
            Span::raw(format::right(delta, delta_w)),
            Span::styled(format!("  {}", direction_glyph(*tag)), style),
            Span::styled(format!("  {verdict}"), style),
        ]));
    }
    out
}

/// What limits each side's occupancy, in full, where one side knows.
fn occupancy_lines(scene: &Scene, doc: &Document, ids: Ids) -> Vec<Line<'static>> {
    let t = &scene.theme;
    if doc.section(Part::Occupancy).is_none() {
        return Vec::new();
    }
    let mut out = vec![
        Line::default(),
        Line::styled("occupancy limited by", t.title()),
    ];
    for (id, side) in ids.into_iter().zip(doc.sides) {
        let text = side
            .occupancy
            .as_ref()
            .map(|o| o.to_string())
            .unwrap_or_else(|| format::UNKNOWN.to_string());
        out.push(Line::from(vec![
            Span::raw(format!("{id:<8}")),
            Span::raw(text),
        ]));
    }
    out
}

/// Each side's bottleneck with its share, and its runner-up unless the two tie.
fn bottleneck_lines(scene: &Scene, doc: &Document, ids: Ids) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let heading = doc
        .section(Part::Bottleneck)
        .and_then(|s| s.heading.clone())
        .unwrap_or_default();
    let mut out = vec![Line::default(), Line::styled(heading, t.title())];
    for (id, side) in ids.into_iter().zip(doc.sides) {
        let mut spans = vec![
            Span::raw(format!("{id:<8}")),
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
    out
}

/// A row of a step's roofline and estimates texts as the views show it: `a → b`, `a`
/// alone where b has nothing (`none`), or where neither side has a figure, the change
/// and what it means.
pub(super) fn step_value(a: &str, b: &str, change: &str, note: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => [change, note]
            .into_iter()
            .filter(|x| !x.is_empty())
            .collect::<Vec<_>>()
            .join(" · "),
        (false, true) => a.to_string(),
        _ => format!("{a} → {b}"),
    }
}

/// b's move on the roofline and the findings of a's that b resolved, ncu's largest
/// estimate beside the measured change in time: a row each, its text wrapped under
/// itself.
fn roofline_lines(scene: &Scene, doc: &Document, width: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let Some(section) = doc.section(Part::Roofline) else {
        return Vec::new();
    };
    let heading = section.heading.clone().unwrap_or_default();
    let mut out = vec![Line::default(), Line::styled(heading, t.title())];
    let name_w = section
        .rows
        .iter()
        .map(|r| text_width::width(&r.name))
        .max()
        .unwrap_or(0)
        .min(width / 2);
    let room = width.saturating_sub(name_w + 1).max(10);
    for r in &section.rows {
        let value = step_value(&r.a, &r.b, &r.delta, &r.verdict);
        let name = fit_name(&r.name, name_w);
        for (n, part) in wrap(value.trim(), room).into_iter().enumerate() {
            let head = if n == 0 { name.as_str() } else { "" };
            let pad = " ".repeat(name_w.saturating_sub(text_width::width(head)) + 1);
            out.push(Line::from(vec![
                Span::styled(format!("{head}{pad}"), t.dim()),
                Span::raw(part),
            ]));
        }
    }
    out
}

/// Each side's stall bar with where its shares come from, the legend, and each
/// reason's row.
fn stall_lines(
    scene: &Scene,
    doc: &Document,
    stalls: [Option<&StallBreakdown>; 2],
    cols: &Columns,
    ids: Ids,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let sources = doc.sides.map(|s| s.stall_source);
    let mut out = vec![
        Line::default(),
        Line::styled(report::stall_heading(sources), t.title()),
    ];
    // Room for the id, the bar and where its figures come from.
    let bar_w = width.saturating_sub(48).clamp(10, 80);
    for ((id, shares), side) in ids.into_iter().zip(stalls).zip(doc.sides) {
        let mut spans = vec![Span::raw(format!("{id:<8}"))];
        spans.extend(stall_bar(&scene.theme, shares, bar_w).spans);
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
    let rows: Vec<_> = doc
        .rows(Part::Stalls)
        .filter_map(|r| match r.figure {
            Figure::Stall(s) => Some((s.reason, r)),
            _ => None,
        })
        .collect();
    let reasons: Vec<_> = rows.iter().map(|(reason, _)| *reason).collect();
    out.extend(stall_legend(&scene.theme, "stalls", &reasons, width));
    let (name_w, val_w) = (cols.name_w.max(24), cols.val_w);
    for (reason, r) in rows {
        let swatch = Span::styled(t.reason_fill(reason).to_string(), t.reason(reason));
        if cols.stacked {
            out.extend(stacked_row(
                Line::from(vec![
                    swatch,
                    Span::raw(format!(" {}", reason.metric_name())),
                ]),
                [format!("{} {}", ids[0], r.a), format!("{} {}", ids[1], r.b)],
                format!("{} {} {}", r.delta, direction_glyph(r.tag), r.verdict),
                tag_style(scene, r.tag),
                width,
            ));
            continue;
        }
        let style = tag_style(scene, r.tag);
        out.push(Line::from(vec![
            swatch,
            Span::raw(format!(" {:<w$}", reason.metric_name(), w = name_w - 2)),
            Span::raw(format!("{:>val_w$}", r.a)),
            Span::raw(format!("{:>val_w$}", r.b)),
            Span::raw(format!("{:>val_w$}", r.delta)),
            Span::styled(format!("  {}", direction_glyph(r.tag)), style),
            Span::styled(format!("  {}", r.verdict), style),
        ]));
    }
    out
}

/// The hottest (reason × instruction) cells of either side, samples beside shares.
fn cell_lines(
    scene: &Scene,
    doc: &Document,
    cols: &Columns,
    ids: Ids,
    width: usize,
) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let Some(section) = doc.section(Part::Cells) else {
        return Vec::new();
    };
    let mut out = vec![
        Line::default(),
        Line::styled(
            "stall reason × instruction (stall samples · % of them; changed: beyond sampling noise)",
            t.title(),
        ),
    ];
    let cell_w = cols.name_w.max(24) + 8;
    // Room for the counts beside the shares.
    let pair_w = cols.val_w + 8;
    for r in &section.rows {
        if cols.stacked {
            out.extend(stacked_row(
                Line::raw(r.name.clone()),
                [format!("{} {}", ids[0], r.a), format!("{} {}", ids[1], r.b)],
                format!("{} {}", r.delta, r.verdict),
                t.dim(),
                width,
            ));
            continue;
        }
        out.push(Line::from(vec![
            Span::raw(format!("{:<cell_w$}", r.name)),
            Span::raw(format!("{:>w$}", r.a, w = pair_w - 8)),
            Span::raw(format!("{:>pair_w$}", r.b)),
            Span::raw(format!("{:>pair_w$}", r.delta)),
            Span::styled(format!("  {}", r.verdict), t.dim()),
        ]));
    }
    out
}

/// The instruction classes side by side, a class one side lacks coloured as added or
/// removed.
fn mix_lines(scene: &Scene, doc: &Document, [a_id, b_id]: Ids) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let mut out = vec![
        Line::default(),
        Line::styled(
            format!("instruction mix: {a_id} │ {b_id} (instructions, stall samples, % of them)"),
            t.title(),
        ),
    ];
    if doc.section(Part::Mix).is_none() {
        out.push(Line::styled("  no source pages", t.dim()));
    }
    let side = |present: bool, m: &MixSide| {
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
    let [has_a, has_b] = doc.has_source();
    for r in doc.rows(Part::Mix).filter(|r| r.shown) {
        let Figure::Mix(m) = r.figure else { continue };
        let style = match r.tag {
            Tag::Added => t.added(),
            Tag::Removed => t.removed(),
            _ => Style::new(),
        };
        out.push(Line::from(vec![
            Span::styled(format!("  {:<14}", m.opcode), style),
            Span::raw(side(has_a, &m.a)),
            Span::raw("  │ "),
            Span::raw(side(has_b, &m.b)),
        ]));
    }
    out
}

/// The SASS aligned, or why there is none.
fn sass_lines(scene: &Scene, doc: &Document) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let mut out = vec![Line::default()];
    match &doc.sass {
        Sass::Aligned { diff: d, lines, .. } => {
            out.push(Line::styled(
                format!(
                    "SASS: {} → {} instructions, {} removed, {} added (registers and addresses ignored; [stall samples])",
                    d.a_instructions, d.b_instructions, d.removed, d.added
                ),
                t.title(),
            ));
            out.extend(
                lines
                    .iter()
                    .map(|(_, l)| styled_diff_line(scene, l.clone())),
            );
        }
        Sass::Missing(l) => out.push(Line::styled(l.clone(), t.dim())),
    }
    out
}

/// The diff of the two versions' kernel sources.
fn source_lines(scene: &Scene, va: &Version, vb: &Version) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let mut out = vec![Line::default()];
    match (&va.source, &vb.source) {
        (Some((pa, sa)), Some((pb, sb))) => {
            out.push(Line::styled(
                format!(
                    "source diff: {} → {}",
                    scene.ladder_path(pa),
                    scene.ladder_path(pb)
                ),
                t.title(),
            ));
            out.extend(diff_lines(scene, sa, sb));
        }
        _ => out.push(Line::styled(
            "source diff: one of the two versions has no kernel source",
            t.dim(),
        )),
    }
    out
}

/// A unified diff, coloured.
pub fn diff_lines(scene: &Scene, old: &str, new: &str) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let diff = similar::TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(3).to_string();
    if text.is_empty() {
        return vec![Line::styled("  (identical)", t.dim())];
    }
    text.lines()
        .map(|l| styled_diff_line(scene, l.to_string()))
        .collect()
}

/// A line of a unified diff, coloured by what it is.
fn styled_diff_line(scene: &Scene, l: String) -> Line<'static> {
    let t = &scene.theme;
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
/// `text` in lines of at most `width` columns, broken between words (a word wider than
/// that keeps a line of its own).
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if text_width::width(l) + 1 + text_width::width(word) <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

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
            Some(l) if 2 + text_width::width(l) + 3 + text_width::width(&item) <= width => {
                l.push_str("   ");
                l.push_str(&item);
            }
            _ => lines.push(item),
        }
    }
    let last = lines.len() - 1;
    std::iter::once(fit(name, width))
        .chain(lines.into_iter().enumerate().map(|(n, l)| {
            Line::styled(
                format!("  {l}"),
                if n == last { style } else { Style::new() },
            )
        }))
        .collect()
}
