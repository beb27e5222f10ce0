//! The pipeline view: the selected version's pipeline trace (`stallscope trace`) in the
//! terminal. Its median block is drawn as one lane per role, each cell coloured by the
//! stage the role was in there and dotted where it waited between stages; under it the
//! figures per role and stage (share of the block busy, waiting, overlapped most by
//! which stage of another role). A second traced version (the marked one, or else the
//! nearest traced version the selected one was built on) is drawn with it on the same
//! time axis, the earlier version above, with what moved from the earlier to the later
//! in a sentence and both versions' figures side by side (the change: later minus
//! earlier; "overlapped most by": the later one's).

use super::notes::table_lines;
use super::scene::Scene;
use super::scroll::draw_document;
use super::text::{printable, wrap};
use crate::analysis::pipeline::{SENTENCE_CHANGES, TracedVersion, changes, sentence, stack_rows};
use crate::model::trace::{Block, Trace};
use crate::report::format;
use crate::report::pipeline::{FigureRow, facts, rows, step_text, warnings};
use crate::tui::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The pipeline view's state: how far it is scrolled.
pub type PipelineState = super::scroll::Scrolled;

/// Columns of a lane's label (the role's name, cut to fit).
const LABEL_W: usize = 12;
/// The fewest columns a lane is drawn with.
const MIN_CELLS: usize = 10;
/// Rows a lane takes at most where its spans nest (the rest are counted, not drawn).
const MAX_ROWS: usize = 4;

pub fn draw(frame: &mut Frame, scene: &Scene, state: &PipelineState, body: Rect) {
    draw_document(
        frame,
        document(scene, body.width as usize),
        state.scroll,
        body,
    );
}

/// A version drawn: its index in the ladder, its figures and its trace.
struct Drawn<'a> {
    index: usize,
    traced: &'a TracedVersion,
    trace: &'a Trace,
    block: Option<&'a Block>,
}

/// The versions the view draws, the earlier above: the selected one, and the one it is
/// compared with where that has a trace at the shape shown (the marked one, else the
/// nearest traced version it was built on). `Err`: what to say instead.
fn drawn<'a>(scene: &Scene<'a>) -> Result<Vec<Drawn<'a>>, Vec<String>> {
    let ls = scene.ladder();
    let l = &ls.ladder;
    let lp = &ls.analysis.pipeline;
    let Some(b) = scene.version_index() else {
        return Err(Vec::new());
    };
    let at = |i: usize| -> Option<Drawn<'a>> {
        let traced = lp.versions.get(i)?.as_ref()?;
        let trace = ls.shown.trace(l, &l.versions[i])?;
        let block = traced
            .pipeline
            .median_block
            .and_then(|k| trace.timeline.blocks.get(k));
        Some(Drawn {
            index: i,
            traced,
            trace,
            block,
        })
    };
    let Some(selected) = at(b) else {
        let mut said = untraced(scene, b);
        if let (Some(why), Some(first)) = (unread(scene, b), said.first_mut()) {
            *first = why;
        }
        return Err(said);
    };
    let other = scene
        .marked
        .filter(|&m| m != b)
        .and_then(at)
        .or_else(|| lp.step_to(b).and_then(|s| at(s.from)));
    let mut out: Vec<Drawn> = other.into_iter().collect();
    out.push(selected);
    out.sort_by_key(|d| d.index);
    Ok(out)
}

/// Where version `b` has a trace file at the shape shown that could not be read (or
/// is not read yet): the file and why, which the view says in place of "no trace".
fn unread(scene: &Scene, b: usize) -> Option<String> {
    let ls = scene.ladder();
    let l = &ls.ladder;
    let file = ls.shown.trace_file(l, &l.versions[b])?;
    let shown = l.store.describe(&file.path);
    let id = &l.versions[b].id;
    match file.error() {
        Some(why) => Some(format!(
            "error: {id}'s pipeline trace at {} cannot be read: {shown}: {why}",
            file.shape
        )),
        None if !file.is_read() => Some(format!(
            "{id}'s pipeline trace at {} ({shown}) is not read yet.",
            file.shape
        )),
        None => None,
    }
}

/// What the view says of a version without a trace at the shape shown.
fn untraced(scene: &Scene, b: usize) -> Vec<String> {
    let ls = scene.ladder();
    let l = &ls.ladder;
    let at = ls
        .shown
        .shape(l)
        .map(|s| format!(" at {s}"))
        .unwrap_or_default();
    let traced: Vec<&str> = ls
        .analysis
        .pipeline
        .versions
        .iter()
        .enumerate()
        .filter(|(_, t)| t.is_some())
        .map(|(i, _)| l.versions[i].id.as_str())
        .collect();
    let mut out = vec![format!("{} has no pipeline trace{at}.", l.versions[b].id)];
    if traced.is_empty() {
        out.push(format!(
            "No version of {} has one{at}: `stallscope trace VERSION` takes one on a GPU, for the versions its recipe marks (marked = true).",
            l.name
        ));
    } else {
        out.push(format!(
            "Traced{at}: {} (←→ selects a version).",
            traced.join(", ")
        ));
    }
    out
}

/// The view's lines for a body `width` columns wide.
pub fn document(scene: &Scene, width: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let drawn = match drawn(scene) {
        Ok(d) => d,
        Err(said) => {
            return said
                .iter()
                .flat_map(|s| wrap(s, width.max(20)))
                .map(|s| printable(Line::raw(s)))
                .collect();
        }
    };
    let l = &scene.ladder().ladder;
    let mut out = Vec::new();
    let shape = drawn[0].trace.shape;
    out.extend(
        wrap(
            &format!(
                "pipeline traces at {shape}: each version's median block, one lane per role, coloured by stage, · where the role waits"
            ),
            width.max(20),
        )
        .into_iter()
        .map(|s| Line::styled(s, t.dim())),
    );
    let lp = &scene.ladder().analysis.pipeline;
    if let Some(m) = scene
        .marked
        .filter(|&m| Some(m) != scene.version_index() && lp.versions[m].is_none())
    {
        if let Some(why) = unread(scene, m) {
            out.extend(
                wrap(&why, width.max(20))
                    .into_iter()
                    .map(|s| printable(Line::styled(s, t.worse()))),
            );
        }
        out.push(printable(Line::styled(
            format!(
                "{} (marked) has no trace at {shape}: the selected version is drawn beside the traced version it was built on, where there is one",
                l.versions[m].id
            ),
            t.dim(),
        )));
    }
    let axis = Axis::of(&drawn, width);
    for d in &drawn {
        let v = &l.versions[d.index];
        out.push(Line::raw(""));
        out.push(printable(Line::styled(
            format!("{} {}", v.id, v.title),
            t.title(),
        )));
        out.extend(
            wrap(&facts(d.traced, d.trace).join(" · "), width.max(20))
                .into_iter()
                .map(|s| printable(Line::styled(s, t.dim()))),
        );
        for w in warnings(d.traced, d.trace) {
            out.extend(
                wrap(&format!("warning: {w}"), width.max(20))
                    .into_iter()
                    .map(|s| printable(Line::styled(s, t.worse()))),
            );
        }
        match d.block {
            Some(b) => out.extend(lanes(t, d.trace, b, &axis)),
            None => out.push(Line::styled("no block lasted a cycle", t.dim())),
        }
    }
    out.push(axis.line(t));
    out.push(legend(t, &drawn));
    out.push(Line::raw(""));
    out.extend(step(scene, &drawn, width));
    out.push(Line::raw(""));
    out.extend(figures(scene, &drawn, width));
    out
}

/// The time axis the lanes share: the longest median block of the versions drawn, in
/// µs where every one's clock is known, else in cycles.
struct Axis {
    /// The axis' length, in ns where `ns`, else in cycles.
    length: f64,
    ns: bool,
    cells: usize,
}

impl Axis {
    fn of(drawn: &[Drawn], width: usize) -> Axis {
        let ns = drawn
            .iter()
            .filter_map(|d| d.block)
            .all(|b| b.ns_per_cycle.is_some());
        let length = drawn
            .iter()
            .filter_map(|d| d.block)
            .map(|b| b.cycles as f64 * b.ns_per_cycle.filter(|_| ns).unwrap_or(1.0))
            .fold(0.0, f64::max)
            .max(1.0);
        Axis {
            length,
            ns,
            cells: width.saturating_sub(LABEL_W + 1).max(MIN_CELLS),
        }
    }

    /// The ends of the axis under the lanes.
    fn line(&self, t: &Theme) -> Line<'static> {
        let end = if self.ns {
            format!("{:.2} µs", self.length / 1e3)
        } else {
            format!("{:.0} cycles", self.length)
        };
        let pad = self.cells.saturating_sub(1 + end.chars().count());
        Line::styled(
            format!("{:LABEL_W$} 0{}{end}", "", " ".repeat(pad)),
            t.dim(),
        )
    }
}

/// The lanes of block `b` of `trace`: per role, the rows its spans take, each cell the
/// stage that filled most of it.
fn lanes(t: &Theme, trace: &Trace, b: &Block, axis: &Axis) -> Vec<Line<'static>> {
    let tl = &trace.timeline;
    let per_cycle = b.ns_per_cycle.filter(|_| axis.ns).unwrap_or(1.0);
    let cell = axis.length / axis.cells as f64;
    let stages = tl.stages.len().max(1);
    let mut out = Vec::new();
    for r in 0..tl.roles.len() {
        let spans = b.spans_of(r);
        if spans.is_empty() {
            continue;
        }
        let (rows, n) = stack_rows(&spans);
        let first = spans.iter().map(|s| s.start).min().unwrap_or(0) as f64 * per_cycle;
        let last = spans.iter().map(|s| s.end).max().unwrap_or(0) as f64 * per_cycle;
        for row in 0..n.min(MAX_ROWS) {
            // Per cell, the time each stage filled of it.
            let mut filled = vec![0.0f64; axis.cells * stages];
            for (s, _) in spans.iter().zip(&rows).filter(|(_, r)| **r == row) {
                let (a, z) = (s.start as f64 * per_cycle, s.end as f64 * per_cycle);
                let c0 = ((a / cell) as usize).min(axis.cells - 1);
                let c1 = ((z / cell) as usize).min(axis.cells - 1);
                for c in c0..=c1 {
                    let (lo, hi) = (c as f64 * cell, (c + 1) as f64 * cell);
                    let o = z.min(hi) - a.max(lo);
                    let stage = usize::from(s.stage).min(stages - 1);
                    filled[c * stages + stage] += o.max(0.0);
                }
            }
            let label = if row == 0 {
                crate::text_width::cut(tl.role_name(r as u8), LABEL_W)
            } else {
                String::new()
            };
            let mut line = vec![Span::raw(format!("{label:>LABEL_W$} "))];
            for c in 0..axis.cells {
                let cells = &filled[c * stages..(c + 1) * stages];
                let (stage, most) = cells
                    .iter()
                    .enumerate()
                    .fold((0, 0.0), |m, (i, &x)| if x > m.1 { (i, x) } else { m });
                let mid = (c as f64 + 0.5) * cell;
                line.push(if most > 0.0 {
                    let s = stage as u16;
                    Span::styled(t.stage_fill(s).to_string(), t.stage(s))
                } else if row == 0 && mid > first && mid < last {
                    Span::styled("·", t.dim())
                } else {
                    Span::raw(" ")
                });
            }
            out.push(printable(Line::from(line)));
        }
        if n > MAX_ROWS {
            out.push(Line::styled(
                format!(
                    "{:>LABEL_W$} {} more rows of nested spans not drawn",
                    "",
                    n - MAX_ROWS
                ),
                t.dim(),
            ));
        }
    }
    out
}

/// The stages drawn, each with its fill.
fn legend(t: &Theme, drawn: &[Drawn]) -> Line<'static> {
    let mut seen: Vec<(u16, String)> = Vec::new();
    for d in drawn {
        let Some(b) = d.block else { continue };
        for s in &b.spans {
            let name = d.trace.timeline.stage_name(s.stage).to_string();
            if !seen.iter().any(|(i, n)| *i == s.stage && *n == name) {
                seen.push((s.stage, name));
            }
        }
    }
    seen.sort();
    let mut spans = vec![Span::raw(format!("{:LABEL_W$} ", ""))];
    for (i, (s, name)) in seen.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(t.stage_fill(s).to_string(), t.stage(s)));
        spans.push(Span::raw(format!(" {name}")));
    }
    printable(Line::from(spans))
}

/// What moved between the two versions drawn (all blocks' figures), and the selected
/// version's step from the traced version it was built on where that is another.
fn step(scene: &Scene, drawn: &[Drawn], width: usize) -> Vec<Line<'static>> {
    let t = &scene.theme;
    let l = &scene.ladder().ladder;
    let lp = &scene.ladder().analysis.pipeline;
    let mut said = Vec::new();
    if let [a, b] = drawn {
        let moved = changes(&a.traced.pipeline.summary, &b.traced.pipeline.summary);
        let text = sentence(&moved, SENTENCE_CHANGES);
        said.push(format!(
            "{} {}",
            l.versions[b.index].id,
            step_text(&l.versions[a.index].id, text.as_deref())
        ));
    }
    let selected = scene.version_index();
    if let Some(s) = selected.and_then(|i| lp.step_to(i))
        && !drawn.iter().any(|d| d.index == s.from)
    {
        said.push(format!(
            "{} step {}",
            l.versions[s.version].id,
            step_text(&l.versions[s.from].id, s.sentence.as_deref())
        ));
    }
    if said.is_empty() {
        said.push(
            "no earlier traced version to compare with: m marks one, another version selected"
                .into(),
        );
    }
    said.iter()
        .flat_map(|s| wrap(s, width.max(20)))
        .map(|s| printable(Line::styled(s, t.moved())))
        .collect()
}

/// The figures per role and stage: of one version (all blocks, the median block, what
/// overlaps it most), or of two side by side (all blocks of each, the later's change
/// from the earlier's, what overlaps the later one's most).
fn figures(scene: &Scene, drawn: &[Drawn], width: usize) -> Vec<Line<'static>> {
    let l = &scene.ladder().ladder;
    let of = |d: &Drawn| rows(&d.traced.pipeline.summary, d.traced.pipeline.block.as_ref());
    let now = drawn.last().expect("a version drawn");
    let now_rows = of(now);
    let was_rows = (drawn.len() == 2).then(|| of(&drawn[0]));
    let id = |d: &Drawn| l.versions[d.index].id.clone();
    let mut header = vec!["role".to_string(), "stage".to_string()];
    match &was_rows {
        Some(_) => header.extend([id(&drawn[0]), id(now), "change".into()]),
        None => header.extend(["all blocks".into(), "median block".into()]),
    }
    header.push("overlapped most by".into());
    let mut table: Vec<Vec<String>> = vec![header];
    fn find<'r>(rows: &'r [FigureRow], r: &FigureRow) -> Option<&'r FigureRow> {
        rows.iter().find(|x| x.role == r.role && x.what == r.what)
    }
    let unknown = || format::UNKNOWN.to_string();
    for r in &now_rows {
        let mut row = vec![r.role.clone(), r.what.clone()];
        match &was_rows {
            Some(was) => {
                let before = find(was, r);
                row.push(before.map_or_else(unknown, |b| b.all.clone()));
                row.push(r.all.clone());
                row.push(format::share_delta(
                    before.map(|b| b.all_share),
                    Some(r.all_share),
                ));
            }
            None => row.extend([r.all.clone(), r.block.clone()]),
        }
        row.push(r.overlapped.clone());
        table.push(row);
    }
    if let Some(was) = &was_rows {
        for r in was.iter().filter(|r| find(&now_rows, r).is_none()) {
            table.push(vec![
                r.role.clone(),
                r.what.clone(),
                r.all.clone(),
                unknown(),
                String::new(),
                String::new(),
            ]);
        }
    }
    // Names left, figures right, the overlap last and left.
    let cols = table[0].len();
    let right: Vec<bool> = (0..cols).map(|c| c >= 2 && c + 1 < cols).collect();
    table_lines(scene, &table, &right, width)
}
