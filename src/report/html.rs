//! The HTML report: one self-contained page per call (styles and charts inline, no
//! scripts, nothing loaded from anywhere), readable in light and dark schemes and on
//! paper. A ladder's page is a list of sections, each drawn by one function from the
//! analysis; a section with nothing to show is left out. Every text that comes from a
//! user (titles, notes, file names, messages) goes through [`escape`] or the notes'
//! Markdown renderer.

use super::colour::{self, Heat};
use super::comparison::{self, Document, Figure, Part, Row, Sass, Tag};
use super::exporter::{Analysed, CompareInput, Exporter, column_names};
use super::order::{display_order, stall_rows};
use super::svg::{self, Chart};
use super::texts::{self, escape};
use super::{format, markdown, pipeline, roofline, runs};
use crate::analysis::{self, Group, METRICS, MetricId, OpcodeStat, VersionAnalysis};
use crate::model::{Ladder, RunResult, RunStatus};
use crate::ncu::StallReason;
use std::fmt::Write;

pub struct HtmlExporter;

impl Exporter for HtmlExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let title = match ladders {
            [a] => a.ladder.title.clone(),
            _ => format!("{} kernel ladders", ladders.len()),
        };
        let mut body = String::new();
        if ladders.len() > 1 {
            body.push_str(
                "<nav class=\"toc ladders\" aria-label=\"ladders\"><span class=\"muted\">Ladders on this page:</span>",
            );
            for a in ladders {
                let _ = write!(
                    body,
                    "<a href=\"#{}\">{}</a>",
                    anchor(a.ladder, "top"),
                    escape(&a.ladder.title)
                );
            }
            body.push_str("</nav>");
        }
        for a in ladders {
            body.push_str(&ladder_page(a));
        }
        page(&title, &body)
    }

    fn compare(&self, input: &CompareInput) -> String {
        page(
            &format!("{} → {}", input.a_name, input.b_name),
            &compare_page(input),
        )
    }
}

/// The document around a body: head, styles, footer.
fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta name=\"generator\" content=\"stallscope {version}\">\n\
         <title>{title} · stallscope</title>\n<style>\n{palette}{page_css}{chart_css}</style>\n\
         </head>\n<body>\n<main>\n<p class=\"tool\">stallscope report</p>\n{body}</main>\n\
         <footer>Made by stallscope {version} from Nsight Compute exports and stallscope's \
         own runs. The page is self-contained: it loads nothing.</footer>\n</body>\n</html>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = escape(title),
        palette = colour::css_palette(":root"),
        page_css = include_str!("page.css"),
        chart_css = svg::CHART_CSS,
    )
}

/// One part of a ladder's page, listed in its table of contents.
struct Section {
    key: &'static str,
    title: &'static str,
    html: String,
}

fn ladder_page(a: &Analysed) -> String {
    let sections: Vec<Section> = [
        trail_section(a),
        charts_section(a),
        roofline_section(a),
        metrics_section(a),
        matrices_section(a),
        pipeline_section(a),
        runs_section(a),
        notes_section(a),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "<section class=\"ladder\" id=\"{}\">\n{}",
        anchor(a.ladder, "top"),
        ladder_header(a)
    );
    out.push_str("<nav class=\"toc\" aria-label=\"sections\">");
    for s in &sections {
        let _ = write!(
            out,
            "<a href=\"#{}\">{}</a>",
            anchor(a.ladder, s.key),
            s.title
        );
    }
    out.push_str("</nav>\n");
    for s in sections {
        let _ = write!(
            out,
            "<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n",
            anchor(a.ladder, s.key),
            s.title,
            s.html
        );
    }
    out.push_str("</section>\n");
    out
}

// ---- names and anchors ----

/// An id fragment of letters, digits, `-` and `_`.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn anchor(l: &Ladder, part: &str) -> String {
    format!("{}-{}", slug(&l.name), slug(part))
}

fn version_anchor(l: &Ladder, id: &str) -> String {
    anchor(l, &format!("v-{id}"))
}

/// A version's id as a link to its notes (or matrix), baselines in brackets.
fn version_link(a: &Analysed, i: usize) -> String {
    let v = &a.ladder.versions[i];
    let id = if v.baseline {
        format!("[{}]", v.id)
    } else {
        v.id.clone()
    };
    format!(
        "<a href=\"#{}\">{}</a>",
        version_anchor(a.ladder, &v.id),
        escape(&id)
    )
}

// ---- header ----

fn ladder_header(a: &Analysed) -> String {
    let l = a.ladder;
    let mut out = format!("<h1>{}</h1>\n", escape(&l.title));
    if let Some(p) = &l.problem {
        let _ = writeln!(out, "<p class=\"problem\">{}</p>", escape(p));
    }
    let own = l.versions.iter().filter(|v| !v.baseline).count();
    let baselines = l.versions.len() - own;
    let mut facts = vec![
        format!("ladder <code>{}</code>", escape(&l.name)),
        format!("{own} versions"),
    ];
    if baselines > 0 {
        facts.push(format!("{baselines} baselines"));
    }
    if let Some(shape) = l.reference_shape {
        facts.push(format!("reference shape {}", shape.labelled()));
    }
    if let Some(f) = l.flops {
        facts.push(format!("{:.1} GFLOP a launch", f / 1e9));
    }
    if let Some(p) = l.peak_tflops {
        facts.push(format!("ceiling {p:.0} TFLOPS"));
    }
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", facts.join(" · "));
    // What a version's figures cannot be trusted for, in full.
    for &i in &display_order(l) {
        let v = &l.versions[i];
        for w in super::texts::version_warnings(v) {
            let _ = writeln!(
                out,
                "<p class=\"warning\">{}: {}</p>",
                escape(&v.id),
                escape(&w)
            );
        }
    }
    out
}

// ---- the trail ----

fn trail_section(a: &Analysed) -> Option<Section> {
    let trail = &a.analysis.trail;
    if trail.is_empty() {
        return None;
    }
    let moves = trail.iter().filter(|s| s.changed).count();
    let ties = trail
        .iter()
        .filter(|s| {
            a.analysis.versions[s.index]
                .bottleneck
                .as_ref()
                .is_some_and(|b| b.near_tie)
        })
        .count();
    let mut html = format!(
        "<p class=\"lead\">Where each version's warps wait most: the hottest cell of its \
         stall reason × SASS instruction class table (from the source page's samples, \
         <code>selected</code> left out), with its share of the stall samples and the \
         runner-up. A step moves when the top cell changed and leads the parent's top cell \
         by z ≥ 2 in the version's own samples; a near-tie (≈) is a top cell within \
         sampling noise of its runner-up. {moves} of {} steps move (highlighted), {ties} \
         near-ties.</p>\n<ol class=\"trail\">\n",
        trail.len()
    );
    for s in trail {
        html.push_str(&trail_step(a, s));
    }
    html.push_str("</ol>\n");
    Some(Section {
        key: "trail",
        title: "Bottleneck trail",
        html,
    })
}

fn trail_step(a: &Analysed, s: &crate::analysis::TrailStep) -> String {
    let an = &a.analysis.versions[s.index];
    let b = an.bottleneck.as_ref();
    let label = texts::label_text(b, an.no_label);
    let mut detail = Vec::new();
    if let (Some(p), true) = (&s.parent, s.branch) {
        detail.push(format!("built on {p}"));
    }
    if let Some(b) = b {
        detail.push(format!("{} %", format::share(Some(b.top.share))));
        if let Some(r) = &b.runner_up {
            detail.push(format!("runner-up {r} {} %", format::share(Some(r.share))));
        }
    }
    let verdict = texts::verdict_text(s, b);
    if !verdict.is_empty() {
        detail.push(verdict);
    }
    format!(
        "<li class=\"step{}{}\"><a class=\"id\" href=\"#{}\">{}</a> <span class=\"label\">{}</span> <span class=\"detail\">{}</span></li>\n",
        if s.changed { " moved" } else { "" },
        if b.is_some_and(|b| b.near_tie) {
            " tie"
        } else {
            ""
        },
        version_anchor(a.ladder, &s.id),
        escape(&s.id),
        escape(&label),
        escape(&detail.join(" · ")),
    )
}

// ---- charts ----

fn charts_section(a: &Analysed) -> Option<Section> {
    let mut html = String::new();
    for &chart in Chart::ALL {
        let Some(svg) = svg::draw(chart, a) else {
            continue;
        };
        let _ = write!(
            html,
            "<figure class=\"chart-figure\" id=\"{}\">\n{svg}\n<figcaption><strong>{}.</strong> {}</figcaption>\n</figure>\n",
            anchor(a.ladder, &format!("chart-{}", chart.name())),
            chart.title(),
            chart_caption(chart, a)
        );
    }
    (!html.is_empty()).then_some(Section {
        key: "charts",
        title: "Charts",
        html,
    })
}

/// Why the run results a figure shows cannot be compared as they stand, if they cannot:
/// some carry no timing protocol (measured before stallscope recorded it, when versions
/// and baselines were timed differently), or they ran under different protocols or in
/// different runs.
fn unfair_runs(a: &Analysed) -> Option<String> {
    let runs: Vec<&RunResult> = a
        .ladder
        .versions
        .iter()
        .filter_map(|v| a.shown.run(a.ladder, v))
        .filter(|r| r.median_us.is_some())
        .collect();
    if runs.len() < 2 {
        return None;
    }
    if runs.iter().any(|r| r.protocol.is_none()) {
        return Some(
            "these results carry no timing protocol (they were measured before stallscope \
             recorded one, with the baselines timed in longer windows than the versions), \
             so the ratios between them can owe more to the GPU's clock than to the kernels"
                .into(),
        );
    }
    let regimes: std::collections::BTreeSet<String> = runs
        .iter()
        .filter_map(|r| r.regime().map(|g| g.to_string()))
        .collect();
    let run_ids: std::collections::BTreeSet<&str> =
        runs.iter().filter_map(|r| r.run_id.as_deref()).collect();
    if regimes.len() > 1 {
        return Some("these results were measured under different regimes".into());
    }
    if run_ids.len() > 1 {
        return Some(format!(
            "these results come from {} different runs; only candidates of one run were timed alike, in alternation",
            run_ids.len()
        ));
    }
    None
}

fn chart_caption(chart: Chart, a: &Analysed) -> String {
    let baselines_with = |has: &dyn Fn(&VersionAnalysis) -> bool| {
        a.ladder
            .versions
            .iter()
            .zip(&a.analysis.versions)
            .any(|(v, an)| v.baseline && has(an))
    };
    match chart {
        Chart::Speed => {
            let metric = svg::speed_metric(a).map(|m| m.def());
            let mut s = format!(
                "{} of each version of the ladder (the best in green)",
                metric.map_or("Speed".to_string(), |d| d
                    .name_at(a.run_shape().as_deref(), a.profiled_at().as_deref()))
            );
            if metric.is_some_and(|d| baselines_with(&|an| an.get(d.id).is_some())) {
                s.push_str("; dashed lines: the baselines");
            }
            if a.ladder.peak_tflops.is_some()
                && metric.is_some_and(|d| d.kind == crate::analysis::Kind::Tflops)
            {
                s.push_str("; red: the ladder's practical ceiling");
            }
            s.push('.');
            if metric.is_some_and(|d| d.id == crate::analysis::MetricId::RunTflops)
                && let Some(why) = unfair_runs(a)
            {
                s.push_str(&format!(" <strong>Not a fair comparison:</strong> {why}."));
            }
            s
        }
        Chart::Stalls => {
            let mut s = "Each bar splits a version's warp samples by stall reason (selected: \
                         the warp issued)"
                .to_string();
            if baselines_with(&|an| an.stalls.is_some()) {
                s.push_str(", the baselines after the gap");
            }
            s + "."
        }
        Chart::Signals => "The three signals watched at every step, in percent: barrier \
                           stalls and short-scoreboard stalls (shares of warp samples) and \
                           the tensor pipe's active cycles."
            .to_string(),
        Chart::Roofline => "Each version's achieved FLOP/s (ncu duration, the ladder's FLOP \
                            count) against its FLOP per DRAM byte, both on log scales, each \
                            joined to its parent; the baselines are diamonds. Under the \
                            slanted roofs (DRAM and L2 bandwidth × intensity, from the \
                            export's peak metrics) a kernel is bound by memory, under the \
                            flat ones (the ladder's practical peak, the datasheet's) by \
                            compute; <code>report --roofline</code> lists every point's \
                            intensities and its share of the nearer roof."
            .to_string(),
    }
}

// ---- the roofline and ncu's estimates ----

/// A table of [`super::roofline`] as HTML, every cell escaped; text columns left.
fn text_table(t: &roofline::Table) -> String {
    let class = |number: bool| if number { "" } else { " class=\"text\"" };
    let mut html = String::from("<div class=\"scroll\"><table><thead><tr>");
    for (name, number) in &t.columns {
        let _ = write!(html, "<th{}>{}</th>", class(*number), escape(name));
    }
    html.push_str("</tr></thead><tbody>\n");
    for row in &t.rows {
        html.push_str("<tr>");
        for (cell, (_, number)) in row.iter().zip(&t.columns) {
            let _ = write!(html, "<td{}>{}</td>", class(*number), escape(cell));
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html
}

/// Every version on the roofline (its ceilings with their sources, the points, the
/// versions left off and why) and the ladder-wide table of ncu's estimates against
/// what each step got, with its tally: the texts of `report --roofline` and
/// `report --estimates`.
fn roofline_section(a: &Analysed) -> Option<Section> {
    let r = analysis::roofline::ladder_roofline(a.ladder);
    let t = analysis::estimates::estimates_table(a.ladder);
    if r.versions.is_empty() && t.steps.is_empty() {
        return None;
    }
    let mut html = String::from("<h3>The roofline</h3>\n");
    if !r.ceilings.is_empty() {
        html.push_str(&text_table(&roofline::ceilings_table(&r)));
    }
    let points = roofline::points_table(&r);
    if points.rows.is_empty() {
        html.push_str("<p class=\"meta\">No version has a point on the roofline.</p>\n");
    } else {
        html.push_str(&text_table(&points));
    }
    let left = roofline::left_off(&r);
    if !left.is_empty() {
        html.push_str("<p class=\"meta\">Left off the chart:</p>\n<ul>");
        for (id, why) in left {
            let _ = write!(html, "<li>{}: {}</li>", escape(&id), escape(&why));
        }
        html.push_str("</ul>\n");
    }
    html.push_str("<h3>What ncu estimated, what each step got</h3>\n");
    if t.steps.is_empty() {
        html.push_str("<p class=\"meta\">No step has a profile on both sides.</p>\n");
    } else {
        html.push_str(&text_table(&roofline::estimates_rows(&t)));
        let _ = writeln!(
            html,
            "<p>{}</p>",
            escape(&roofline::tally_sentence(&t.tally))
        );
    }
    Some(Section {
        key: "roofline",
        title: "On the roofline, and what ncu promised",
        html,
    })
}

// ---- metric tables ----

fn group_name(g: Group) -> &'static str {
    match g {
        Group::Speed => "Speed",
        Group::Compute => "Compute",
        Group::Memory => "Memory",
        Group::Launch => "Launch",
    }
}

/// The versions as rows, one table per metric group, cells coloured as in the explorer.
fn metrics_section(a: &Analysed) -> Option<Section> {
    let order = display_order(a.ladder);
    if order.is_empty() {
        return None;
    }
    let mut html = String::from(
        "<p class=\"lead\">Green, yellow and red rank a value among all versions' values by the \
         metric's direction (uncoloured: a metric with no better direction). Baselines are \
         shaded. Hover a heading for what it measures.</p>\n<div class=\"tables\">\n",
    );
    let (run_shape, profiled_at) = (a.run_shape(), a.profiled_at());
    let shapes = (run_shape.as_deref(), profiled_at.as_deref());
    for group in [Group::Speed, Group::Compute, Group::Memory, Group::Launch] {
        html.push_str(&group_table(a, &order, group, shapes));
    }
    html.push_str(&stall_table(a, &order));
    html.push_str("</div>\n");
    Some(Section {
        key: "metrics",
        title: "Metrics",
        html,
    })
}

/// One metric group's table: the versions in `order` as rows, the group's metrics
/// that some version has as columns (the speed group with each version's title and
/// bottleneck); empty where no version has any.
/// `shapes`: the run results' shape and, where the profiles are of another, theirs.
fn group_table(
    a: &Analysed,
    order: &[usize],
    group: Group,
    (run_shape, profiled_at): (Option<&str>, Option<&str>),
) -> String {
    let defs: Vec<_> = METRICS
        .iter()
        .filter(|d| d.group == group)
        .filter(|d| {
            order
                .iter()
                .any(|&i| a.analysis.versions[i].get(d.id).is_some())
        })
        .collect();
    if defs.is_empty() {
        return String::new();
    }
    let ranks: Vec<Vec<f64>> = defs
        .iter()
        .map(|d| {
            let values: Vec<Option<f64>> = order
                .iter()
                .map(|&i| a.analysis.versions[i].get(d.id))
                .collect();
            colour::ranks(&values, d.better, colour::Scale::of(d.kind))
        })
        .collect();
    let speed = group == Group::Speed;
    let mut html = String::new();
    let _ = write!(
        html,
        "<div{}><h3>{}</h3><div class=\"scroll\"><table class=\"metrics\"><thead><tr><th>version</th>",
        if speed { " class=\"wide\"" } else { "" },
        group_name(group)
    );
    if speed {
        html.push_str("<th class=\"text\">title</th><th class=\"text\">bottleneck</th>");
    }
    for d in &defs {
        let _ = write!(
            html,
            "<th title=\"{}\">{}</th>",
            escape(d.help),
            escape(&d.label_at(run_shape, profiled_at))
        );
    }
    html.push_str("</tr></thead><tbody>\n");
    for (row, &i) in order.iter().enumerate() {
        html.push_str(&metrics_row(a, i, speed, &defs, &ranks, row));
    }
    html.push_str("</tbody></table></div></div>\n");
    html
}

/// Version `i`'s row of a metric group's table (the `row`th): its link, in the speed
/// group its title and bottleneck, then its value of each metric, coloured by its rank.
fn metrics_row(
    a: &Analysed,
    i: usize,
    speed: bool,
    defs: &[&crate::analysis::MetricDef],
    ranks: &[Vec<f64>],
    row: usize,
) -> String {
    let v = &a.ladder.versions[i];
    let an = &a.analysis.versions[i];
    let mut html = String::new();
    let _ = write!(
        html,
        "<tr{}><td>{}</td>",
        if v.baseline {
            " class=\"baseline\""
        } else {
            ""
        },
        version_link(a, i)
    );
    if speed {
        let moved = a.analysis.trail.iter().any(|s| s.index == i && s.changed);
        let _ = write!(
            html,
            "<td class=\"text wrap\">{}</td><td class=\"text{}\">{}</td>",
            escape(&v.title),
            if moved { " moved" } else { "" },
            escape(
                &an.bottleneck
                    .as_ref()
                    .map_or_else(|| format::UNKNOWN.to_string(), |b| b.to_string())
            )
        );
    }
    for (d, r) in defs.iter().zip(ranks) {
        let x = an.get(d.id);
        let heat = if x.is_some() {
            colour::heat(d.better, r[row])
        } else {
            Heat::Plain
        };
        let _ = write!(
            html,
            "<td class=\"{}\">{}</td>",
            heat.class(),
            format::value(d.kind, x)
        );
    }
    html.push_str("</tr>\n");
    html
}

/// Stall shares per version, one column per reason that matters somewhere.
fn stall_table(a: &Analysed, order: &[usize]) -> String {
    let reasons = stall_rows(&a.analysis.versions);
    if reasons.is_empty() {
        return String::new();
    }
    let mut html = String::from("<div class=\"wide\"><h3>");
    html.push_str(&escape(&texts::stall_heading(
        order
            .iter()
            .map(|&i| a.analysis.versions[i].stalls.as_ref().map(|s| s.source)),
    )));
    html.push_str(
        "</h3><div class=\"scroll\"><table class=\"metrics stalls\"><thead><tr><th>version</th><th>stall samples</th>",
    );
    for &r in &reasons {
        let _ = write!(
            html,
            "<th class=\"reason\" title=\"{}\" style=\"border-bottom-color:{}\">{}</th>",
            escape(crate::analysis::catalogue::stall_help(r)),
            colour::reason_hue(r).css_var(),
            breakable(r.metric_name())
        );
    }
    html.push_str("</tr></thead><tbody>\n");
    for &i in order {
        let an = &a.analysis.versions[i];
        let _ = write!(
            html,
            "<tr{}><td>{}</td>",
            if a.ladder.versions[i].baseline {
                " class=\"baseline\""
            } else {
                ""
            },
            version_link(a, i)
        );
        let _ = write!(html, "<td>{}</td>", escape(&texts::stall_samples_cell(an)));
        for &r in &reasons {
            let _ = write!(
                html,
                "<td>{}</td>",
                format::share(an.stalls.as_ref().map(|s| s.share(r)))
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div></div>\n");
    html
}

// ---- reason × opcode matrices ----

/// The most stalled instruction classes and the reasons they stall on, as rows and
/// columns of one version's matrix.
const MATRIX_ROWS: usize = 6;
const MATRIX_COLUMNS: usize = 4;

/// A version's stall samples by (instruction class, reason), `selected` left out of
/// the cells, each a share of all the version's warp samples (`selected` included).
struct Matrix<'a> {
    ops: Vec<&'a OpcodeStat>,
    reasons: Vec<StallReason>,
    /// All warp samples of the version (every class, `selected` included).
    total: u64,
}

impl<'a> Matrix<'a> {
    fn of(hot_ops: &'a [OpcodeStat]) -> Option<Matrix<'a>> {
        let total: u64 = hot_ops.iter().map(|o| o.samples).sum();
        if total == 0 || hot_ops.iter().all(|o| o.stall_samples == 0) {
            return None;
        }
        let ops: Vec<&OpcodeStat> = hot_ops
            .iter()
            .filter(|o| o.stall_samples > 0)
            .take(MATRIX_ROWS)
            .collect();
        let mut by_reason: Vec<(StallReason, u64)> = StallReason::ALL
            .iter()
            .filter(|r| r.is_stall())
            .map(|&r| (r, ops.iter().map(|o| samples(o, r)).sum()))
            .filter(|(_, n)| *n > 0)
            .collect();
        by_reason.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
        let reasons = by_reason
            .into_iter()
            .take(MATRIX_COLUMNS)
            .map(|(r, _)| r)
            .collect();
        Some(Matrix {
            ops,
            reasons,
            total,
        })
    }

    fn share(&self, n: u64) -> f64 {
        n as f64 / self.total as f64
    }

    /// The hottest cell: (class, reason, samples).
    fn table(&self) -> String {
        let max = self
            .ops
            .iter()
            .flat_map(|o| self.reasons.iter().map(|&r| samples(o, r)))
            .max()
            .unwrap_or(0)
            .max(1);
        let mut html = String::from("<table class=\"matrix\"><thead><tr><th>class</th>");
        for r in &self.reasons {
            let _ = write!(
                html,
                "<th title=\"{}\">{}</th>",
                r.metric_name(),
                short_reason(*r)
            );
        }
        html.push_str("<th>all</th></tr></thead><tbody>");
        for o in &self.ops {
            let _ = write!(html, "<tr><th class=\"op\">{}</th>", escape(&o.opcode));
            for &r in &self.reasons {
                let n = samples(o, r);
                if n == 0 {
                    html.push_str("<td></td>");
                    continue;
                }
                let _ = write!(
                    html,
                    "<td class=\"cell\" style=\"--s:{:.3}\" title=\"{} samples\">{}</td>",
                    n as f64 / max as f64,
                    format::thousands(n as f64),
                    format::share(Some(self.share(n)))
                );
            }
            let _ = write!(
                html,
                "<td>{}</td></tr>",
                format::share(Some(self.share(o.stall_samples)))
            );
        }
        html.push_str("</tbody></table>");
        html
    }
}

/// A name that may wrap after its underscores.
fn breakable(name: &str) -> String {
    escape(name).replace('_', "_<wbr>")
}

/// A reason as the source page's column names it, without `stall_` (`long_sb`, `math`).
fn short_reason(r: StallReason) -> &'static str {
    let c = r.column_name();
    match c.strip_prefix("stall_") {
        Some(short) if !short.is_empty() => short,
        _ => r.metric_name(),
    }
}

fn samples(o: &OpcodeStat, r: StallReason) -> u64 {
    o.reasons
        .iter()
        .find(|(x, _)| *x == r)
        .map_or(0, |(_, n)| *n)
}

fn matrices_section(a: &Analysed) -> Option<Section> {
    let mut html = String::from(
        "<p class=\"lead\">Per version, the most stalled SASS instruction classes (rows) by \
         the reasons they wait on (columns): % of all warp samples of the version's source \
         page (<code>selected</code> included, as in the stall shares); <em>all</em> is the \
         class's stall share.</p>\n<div class=\"matrices\">\n",
    );
    let mut any = false;
    for i in display_order(a.ladder) {
        let an = &a.analysis.versions[i];
        let Some(m) = Matrix::of(&an.hot_ops) else {
            continue;
        };
        any = true;
        html.push_str(&matrix_figure(a, i, &m, &an.hot_ops));
    }
    html.push_str("</div>\n");
    any.then_some(Section {
        key: "matrices",
        title: "Stall reason × instruction class",
        html,
    })
}

fn matrix_figure(a: &Analysed, i: usize, m: &Matrix, hot_ops: &[OpcodeStat]) -> String {
    let v = &a.ladder.versions[i];
    // The bottleneck is the analysis's: the same cell the trail names.
    let hottest = a.analysis.versions[i]
        .bottleneck
        .as_ref()
        .map(|b| {
            format!(
                " · hottest cell <strong>{}</strong> {} %",
                escape(&b.top.to_string()),
                format::share(Some(b.top.share))
            )
        })
        .unwrap_or_default();
    format!(
        "<figure><div class=\"scroll\">{}</div><figcaption>{} {} · {} stall samples in {} classes{hottest}</figcaption></figure>\n",
        m.table(),
        version_link(a, i),
        escape(&v.title),
        format::thousands(m.total as f64),
        hot_ops.len(),
    )
}

// ---- pipeline traces ----

/// Per traced version: its median block drawn as lanes per role, its figures, and the
/// step from the version it was built on.
fn pipeline_section(a: &Analysed) -> Option<Section> {
    let doc = pipeline::document(a)?;
    let mut html = String::from("<p class=\"lead\">");
    let notes: Vec<String> = pipeline::NOTES.iter().map(|n| escape(n)).collect();
    html.push_str(&notes.join(" "));
    html.push_str("</p>\n");
    for v in &doc.versions {
        let svg = v
            .block
            .and_then(|b| svg::pipeline_timeline(v.trace, b))
            .unwrap_or_default();
        let _ = write!(
            html,
            "<figure class=\"chart-figure\" id=\"{}\">\n{svg}\n<figcaption><strong>{} · {}.</strong> {}",
            anchor(a.ladder, &format!("pipeline-{}", v.id)),
            escape(&v.id),
            escape(&v.title),
            escape(&v.facts.join(" · "))
        );
        if let Some(step) = &v.step {
            let _ = write!(html, "<br><span class=\"step\">{}</span>", escape(step));
        }
        for w in &v.warnings {
            let _ = write!(
                html,
                "<br><span class=\"warning\">warning: {}</span>",
                escape(w)
            );
        }
        html.push_str("</figcaption>\n</figure>\n");
        html.push_str(
            "<div class=\"scroll\"><table class=\"metrics pipeline\"><thead><tr><th class=\"text\">role</th><th class=\"text\">stage</th><th>all blocks</th><th>median block</th><th class=\"text\">overlapped most by</th></tr></thead><tbody>\n",
        );
        for r in &v.rows {
            let _ = writeln!(
                html,
                "<tr><td class=\"text\">{}</td><td class=\"text\">{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td></tr>",
                escape(&r.role),
                escape(&r.what),
                escape(&r.all),
                escape(&r.block),
                escape(&r.overlapped)
            );
        }
        html.push_str("</tbody></table></div>\n");
    }
    Some(Section {
        key: "pipeline",
        title: "Pipeline traces",
        html,
    })
}

// ---- run results ----

/// A column of the run tables: its heading and a result's cell (`None`: empty). A field
/// added to [`RunResult`] is one more entry here; a column empty in every row is left out.
struct RunColumn {
    heading: &'static str,
    /// Left-aligned text rather than a number.
    text: bool,
    cell: fn(&RunResult) -> Option<String>,
}

const RUN_COLUMNS: &[RunColumn] = &[
    RunColumn {
        heading: "status",
        text: true,
        cell: |r| match r.status {
            RunStatus::Ok => None,
            RunStatus::Failed => Some("failed".into()),
            RunStatus::Skipped => Some("skipped".into()),
        },
    },
    RunColumn {
        heading: "median µs",
        text: false,
        cell: |r| runs::fields(r).median,
    },
    RunColumn {
        heading: "min–max µs",
        text: false,
        cell: |r| runs::fields(r).range,
    },
    RunColumn {
        heading: "TFLOPS",
        text: false,
        cell: |r| runs::fields(r).tflops,
    },
    RunColumn {
        heading: "± over rounds",
        text: false,
        cell: |r| runs::fields(r).spread,
    },
    RunColumn {
        heading: "SM MHz",
        text: false,
        cell: |r| runs::fields(r).clock,
    },
    RunColumn {
        heading: "W",
        text: false,
        cell: |r| runs::fields(r).power,
    },
    RunColumn {
        heading: "mJ / launch",
        text: false,
        cell: |r| runs::fields(r).energy,
    },
    RunColumn {
        heading: "TFLOPS / W",
        text: false,
        cell: |r| runs::fields(r).efficiency,
    },
    RunColumn {
        heading: "throttle",
        text: true,
        cell: |r| runs::fields(r).throttle,
    },
    RunColumn {
        heading: "protocol",
        text: true,
        cell: |r| r.protocol.as_ref().map(runs::protocol_words),
    },
    RunColumn {
        heading: "checks",
        text: false,
        cell: |r| runs::fields(r).checks,
    },
    RunColumn {
        heading: "rel. L2 error",
        text: false,
        cell: |r| runs::fields(r).rel_err,
    },
    RunColumn {
        heading: "max abs error",
        text: false,
        cell: |r| runs::fields(r).max_abs_err,
    },
    RunColumn {
        heading: "registers, spills",
        text: true,
        cell: |r| r.resources.clone(),
    },
    RunColumn {
        heading: "GPU",
        text: true,
        cell: |r| r.gpu.clone(),
    },
    RunColumn {
        heading: "when (UTC)",
        text: true,
        cell: |r| {
            r.when
                .as_ref()
                .map(|w| w.replace('T', " ").replace('Z', ""))
        },
    },
    RunColumn {
        heading: "seed",
        text: false,
        cell: |r| r.seed.map(|s| s.to_string()),
    },
    RunColumn {
        heading: "message",
        text: true,
        cell: |r| r.message.clone(),
    },
];

fn runs_section(a: &Analysed) -> Option<Section> {
    let order = display_order(a.ladder);
    let configs = a.ladder.measured_shapes();
    if configs.is_empty() {
        return None;
    }
    let mut html = String::from(
        "<p class=\"lead\">What stallscope measured itself (<code>stallscope run</code>): per \
         problem shape, each version's median time over its repetitions, throughput and error \
         against the reference.</p>\n",
    );
    if let Some(why) = unfair_runs(a) {
        let _ = writeln!(
            html,
            "<p class=\"lead\"><strong>Not a fair comparison:</strong> {why}.</p>"
        );
    }
    for shape in configs {
        let rows: Vec<(usize, &RunResult)> = order
            .iter()
            .filter_map(|&i| {
                let v = &a.ladder.versions[i];
                v.runs
                    .iter()
                    .rev()
                    .find(|r| r.shape == shape)
                    .map(|r| (i, r))
            })
            .collect();
        let _ = writeln!(
            html,
            "<h3>{}{}</h3>",
            escape(&shape.labelled()),
            if Some(shape) == a.ladder.reference_run_shape() {
                " (the reference shape)"
            } else {
                ""
            }
        );
        html.push_str(&run_table(a, &rows));
    }
    Some(Section {
        key: "runs",
        title: "Run results",
        html,
    })
}

/// One table of results; a column whose rows all hold one value is said once above it.
fn run_table(a: &Analysed, rows: &[(usize, &RunResult)]) -> String {
    let mut shared: Vec<String> = Vec::new();
    let mut columns: Vec<(&RunColumn, Vec<Option<String>>)> = Vec::new();
    for c in RUN_COLUMNS {
        let cells: Vec<Option<String>> = rows.iter().map(|(_, r)| (c.cell)(r)).collect();
        if cells.iter().all(Option::is_none) {
            continue;
        }
        let first = &cells[0];
        if c.text && rows.len() > 1 && cells.iter().all(|x| x == first) {
            if let Some(v) = first {
                shared.push(format!("{}: {}", c.heading, escape(v)));
            }
            continue;
        }
        columns.push((c, cells));
    }
    let mut html = String::new();
    if !shared.is_empty() {
        let _ = writeln!(html, "<p class=\"meta\">{}</p>", shared.join(" · "));
    }
    html.push_str("<div class=\"scroll\"><table class=\"runs\"><thead><tr><th>version</th>");
    for (c, _) in &columns {
        let _ = write!(
            html,
            "<th{}>{}</th>",
            if c.text { " class=\"text\"" } else { "" },
            c.heading
        );
    }
    html.push_str("</tr></thead><tbody>\n");
    for (n, (i, _)) in rows.iter().enumerate() {
        let _ = write!(
            html,
            "<tr{}><td>{}</td>",
            if a.ladder.versions[*i].baseline {
                " class=\"baseline\""
            } else {
                ""
            },
            version_link(a, *i)
        );
        for (c, cells) in &columns {
            let _ = write!(
                html,
                "<td{}>{}</td>",
                if c.text { " class=\"text wrap\"" } else { "" },
                cells[n].as_deref().map_or_else(String::new, escape)
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table></div>\n");
    html
}

// ---- notes ----

fn notes_section(a: &Analysed) -> Option<Section> {
    let mut html = String::new();
    for i in display_order(a.ladder) {
        html.push_str(&version_note(a, i));
    }
    (!html.is_empty()).then_some(Section {
        key: "notes",
        title: "Versions and notes",
        html,
    })
}

/// A version's heading, technique, kernel and notes; every version gets one, so that
/// links to it land somewhere.
fn version_note(a: &Analysed, i: usize) -> String {
    let v = &a.ladder.versions[i];
    let an = &a.analysis.versions[i];
    let mut html = format!(
        "<article class=\"note\" id=\"{}\">\n<h3>{}{} · {}</h3>\n",
        version_anchor(a.ladder, &v.id),
        escape(&v.id),
        if v.baseline { " (baseline)" } else { "" },
        escape(&v.title)
    );
    if let Some(t) = &v.technique {
        let _ = writeln!(html, "<p class=\"technique\">{}</p>", escape(t));
    }
    let mut facts = Vec::new();
    if let Some(p) = &v.profile {
        facts.push(format!("kernel <code>{}</code>", escape(&p.short_name())));
    }
    if let Some(b) = &an.bottleneck {
        facts.push(format!(
            "bottleneck <strong>{}</strong>",
            escape(&b.to_string())
        ));
    }
    if let Some(x) = an.get(MetricId::RunTime).or(an.get(MetricId::Duration)) {
        facts.push(format::with_unit(crate::analysis::Kind::Time, Some(x)));
    }
    if !facts.is_empty() {
        let _ = writeln!(html, "<p class=\"meta\">{}</p>", facts.join(" · "));
    }
    if let Some(notes) = &v.notes {
        html.push_str(&markdown::to_html(notes, 3));
    }
    let _ = writeln!(
        html,
        "<p class=\"top\"><a href=\"#{}\">↑ top</a></p>\n</article>",
        anchor(a.ladder, "top")
    );
    html
}

// ---- a comparison ----

/// A comparison's page: its document's sections, the stall shares charted and each
/// side's (reason × instruction class) table.
fn compare_page(input: &CompareInput) -> String {
    let doc = input.document();
    let mut html = format!(
        "<h1>{} → {}</h1>\n<p class=\"meta\">Every metric's change, judged by its direction \
         (better green, worse red; within 1 % or the metric's tolerance: same).</p>\n",
        escape(&doc.a_name),
        escape(&doc.b_name)
    );
    if let Some(s) = &doc.other_shape {
        let _ = writeln!(
            html,
            "<p class=\"meta\">Run results at {} (not the reference shape).</p>",
            escape(s)
        );
    }
    for w in doc.warning_lines() {
        let _ = writeln!(html, "<p class=\"warning\">{}</p>", escape(&w));
    }
    let columns = column_names(input);
    html.push_str(&compare_metrics(&doc, &columns));
    if let Some(s) = doc.section(Part::Bottleneck) {
        html.push_str(&compare_table("Bottleneck", s, &columns));
    }
    if let Some(s) = doc.section(Part::Roofline) {
        html.push_str(&compare_table("Roofline", s, &columns));
    }
    if let Some(s) = doc.section(Part::Stalls) {
        let _ = write!(
            html,
            "<h2>Stall shares</h2>\n<p class=\"meta\">{}: each reason's share, where they come from and how many samples are rows of the metrics' table.</p>\n\
             <figure class=\"chart-figure\">{}<figcaption>Each bar splits \
             a version's warp samples by stall reason.</figcaption></figure>\n",
            escape(s.heading.as_deref().unwrap_or_default()),
            svg::compare_stalls(input)
        );
    }
    if let Some(s) = doc.section(Part::Cells) {
        html.push_str(&compare_table("Hottest cells side by side", s, &columns));
    }
    html.push_str(&compare_matrices(&doc));
    if let Some(s) = doc.section(Part::Mix) {
        html.push_str(&compare_table("Instruction mix", s, &columns));
    }
    html.push_str(&compare_sass(&doc));
    html
}

/// The metrics' table: each metric's change, what limits occupancy, where the stall
/// shares come from and each reason's share.
fn compare_metrics(doc: &Document, columns: &(String, String)) -> String {
    let mut html =
        String::from("<h2>Metrics</h2>\n<div class=\"scroll\"><table><thead><tr><th>metric</th>");
    let _ = writeln!(
        html,
        "<th>{}</th><th>{}</th><th>change</th><th class=\"text\">verdict</th></tr></thead><tbody>",
        escape(&columns.0),
        escape(&columns.1)
    );
    let rows = [Part::Metrics, Part::Occupancy, Part::Stalls]
        .into_iter()
        .flat_map(|p| doc.rows(p))
        .filter(|r| r.shown);
    for r in rows {
        let v = tag_class(r.tag);
        let _ = match r.figure {
            Figure::Metric(m) => writeln!(
                html,
                "<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td class=\"{v}\">{}</td><td class=\"text {v}\">{}</td></tr>",
                escape(m.id.def().help),
                escape(&r.name),
                r.a,
                r.b,
                r.delta,
                r.verdict,
            ),
            Figure::Stall(s) => {
                let pct = |x: Option<f64>| x.map(|v| v * 100.0);
                writeln!(
                    html,
                    "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{} stalls (%)</td><td>{}</td><td>{}</td><td class=\"{v}\">{}</td><td class=\"text {v}\">{}</td></tr>",
                    colour::reason_hue(s.reason).css_var(),
                    s.reason.metric_name(),
                    r.a,
                    r.b,
                    format::delta(crate::analysis::Kind::Percent, pct(s.a), pct(s.b)),
                    r.verdict,
                )
            }
            _ => writeln!(html, "{}", compare_row(r)),
        };
    }
    html.push_str("</tbody></table></div>\n");
    html
}

/// A section of the comparison as a table under its own heading, the table's heading
/// (what the figures are) below it.
fn compare_table(title: &str, s: &comparison::Section, columns: &(String, String)) -> String {
    let mut html = format!("<h2>{title}</h2>\n");
    if let Some(h) = &s.heading {
        let _ = writeln!(html, "<p class=\"meta\">{}</p>", escape(h));
    }
    let _ = writeln!(
        html,
        "<div class=\"scroll\"><table><thead><tr><th></th><th>{}</th><th>{}</th><th>change</th><th class=\"text\">verdict</th></tr></thead><tbody>",
        escape(&columns.0),
        escape(&columns.1)
    );
    for r in s.rows.iter().filter(|r| r.shown) {
        let _ = writeln!(html, "{}", compare_row(r));
    }
    html.push_str("</tbody></table></div>\n");
    html
}

/// One row of a comparison's table, every cell escaped (labels and opcodes come from
/// imported data).
fn compare_row(r: &Row) -> String {
    let v = tag_class(r.tag);
    format!(
        "<tr><td class=\"{v}\">{}</td><td>{}</td><td>{}</td><td class=\"{v}\">{}</td><td class=\"text {v}\">{}</td></tr>",
        escape(&r.name),
        escape(&r.a),
        escape(&r.b),
        escape(&r.delta),
        escape(&r.verdict),
    )
}

/// Each side's (reason × instruction class) table, where it has a source page.
fn compare_matrices(doc: &Document) -> String {
    let [ma, mb] = doc.hot_ops.map(Matrix::of);
    if ma.is_none() && mb.is_none() {
        return String::new();
    }
    let mut html =
        String::from("<h2>Stall reason × instruction class</h2>\n<div class=\"matrices\">\n");
    for (name, m) in [(&doc.a_name, ma), (&doc.b_name, mb)] {
        if let Some(m) = m {
            let _ = writeln!(
                html,
                "<figure><div class=\"scroll\">{}</div><figcaption>{} · {} stall samples</figcaption></figure>",
                m.table(),
                escape(name),
                format::thousands(m.total as f64)
            );
        }
    }
    html.push_str("</div>\n");
    html
}

/// The SASS aligned, added lines green and removed red; or why there is none.
fn compare_sass(doc: &Document) -> String {
    match &doc.sass {
        Sass::Aligned { heading, lines, .. } => {
            let mut html = format!(
                "<h2>SASS</h2>\n<p class=\"meta\">{}</p>\n<div class=\"scroll\"><pre>",
                escape(heading)
            );
            for (tag, l) in lines {
                let _ = match tag {
                    Tag::Added => writeln!(
                        html,
                        "<span style=\"color:var(--good)\">{}</span>",
                        escape(l)
                    ),
                    Tag::Removed => writeln!(
                        html,
                        "<span style=\"color:var(--poor)\">{}</span>",
                        escape(l)
                    ),
                    _ => writeln!(html, "{}", escape(l)),
                };
            }
            html.push_str("</pre></div>\n");
            html
        }
        Sass::Missing(l) => format!("<h2>SASS</h2>\n<p class=\"meta\">{}</p>\n", escape(l)),
    }
}

/// The class of a comparison's cell: its verdict's colour.
fn tag_class(t: Tag) -> &'static str {
    match t {
        Tag::Better => "better",
        Tag::Worse => "worse",
        Tag::Added => "added",
        Tag::Removed => "removed",
        Tag::Neutral => "plain",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Shown;
    use crate::files::limits::SizeLimits;
    use crate::model::{LoadReport, Store, Version, load_ladder};

    const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'&";

    fn page_of(ladder: &Ladder) -> String {
        HtmlExporter.timeline(&[Analysed::new(ladder, Shown::DEFAULT)])
    }

    fn ladder(versions: Vec<Version>) -> Ladder {
        Ladder {
            name: "evil<b>".into(),
            title: HOSTILE.into(),
            problem: Some(HOSTILE.into()),
            flops: None,
            peak_tflops: None,
            kind: Some(crate::kinds::legacy()),
            reference_shape: Some(crate::kinds::attention::shape(1, 64, 1024, 128, false)),
            profile_shape: None,
            versions,
            dir: None,
            store: Store::disk(SizeLimits::DEFAULT),
        }
    }

    fn run(version: &str, gpu: &str, median_us: Option<f64>) -> RunResult {
        let mut r = RunResult::new(
            version,
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            RunStatus::Ok,
        );
        r.gpu = Some(gpu.into());
        r.median_us = median_us;
        r.when = None;
        r
    }

    /// Versions v1 and v2, each with one run at 60 µs on `gpu`.
    fn two_run_versions(gpu: &str) -> Vec<Version> {
        ["v1", "v2"]
            .map(|id| Version {
                id: id.into(),
                title: id.into(),
                runs: vec![run(id, gpu, Some(60.0))],
                ..Version::default()
            })
            .to_vec()
    }

    #[test]
    fn user_text_appears_only_escaped() {
        let mut failed = RunResult::new(
            HOSTILE,
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            RunStatus::Failed,
        );
        failed.message = Some(HOSTILE.into());
        let page = page_of(&ladder(vec![Version {
            id: HOSTILE.into(),
            title: HOSTILE.into(),
            technique: Some(HOSTILE.into()),
            notes: Some(format!(
                "# notes\n\n{HOSTILE}\n\n[x](javascript:alert(3))\n"
            )),
            runs: vec![failed],
            ..Version::default()
        }]));
        let raw = ["<script", "<img", "<b>", "javascript:", "onerror=alert(2)>"];
        let found: Vec<&&str> = raw.iter().filter(|r| page.contains(**r)).collect();
        assert!(found.is_empty(), "{found:?} in the page");
    }

    #[test]
    fn the_bundled_sgemm_page_loads_nothing() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/sgemm-toy");
        let ladder = load_ladder(
            &Store::disk(SizeLimits::DEFAULT),
            &dir,
            &mut LoadReport::default(),
        )
        .unwrap();
        let page = page_of(&ladder);
        let loads = [
            "src=", "<link", "url(", "@import", "<script", "<iframe", "<object",
        ];
        let found: Vec<&&str> = loads.iter().filter(|l| page.contains(**l)).collect();
        assert!(found.is_empty(), "{found:?} in the page");
    }

    #[test]
    fn run_tables_leave_out_columns_without_values() {
        let page = page_of(&ladder(two_run_versions("H200")));
        let runs = &page[page.find("class=\"runs\"").expect("a run table")..];
        let runs = &runs[..runs.find("</thead>").unwrap()];
        // version and median µs; the GPU, the same in both, stands above the table.
        assert_eq!(runs.matches("</th>").count(), 2, "{runs}");
    }

    #[test]
    fn a_value_shared_by_every_run_is_said_once_above_its_table() {
        let page = page_of(&ladder(two_run_versions("NVIDIA H200")));
        assert_eq!(page.matches("NVIDIA H200").count(), 1);
    }

    #[test]
    fn results_timed_differently_are_called_unfair() {
        let v = |id: &str, r: RunResult| Version {
            id: id.into(),
            title: id.into(),
            runs: vec![r],
            ..Version::default()
        };
        let old = ladder(vec![
            v("v1", run("v1", "H200", Some(60.0))),
            v("v2", run("v2", "H200", Some(62.0))),
        ]);
        let why = unfair_runs(&Analysed::new(&old, Shown::DEFAULT)).expect("no protocol recorded");
        assert!(why.contains("no timing protocol"), "{why}");
        assert!(page_of(&old).contains("Not a fair comparison"));
        let timed = |id: &str, run_id: &str| {
            let mut r = run(id, "H200", Some(60.0));
            r.run_id = Some(run_id.into());
            r.protocol = Some(crate::model::runs::Protocol {
                regime: crate::model::runs::Regime::Sustained,
                mechanism: "cuda_graph".into(),
                launches_per_rep: 100,
                reps: 20,
                rounds: 3,
                window_ms: 200.0,
                warmup_ms: 300.0,
                settled: Some(true),
                idle_ms: None,
                min_window_ms: Some(200.0),
                convergence: None,
            });
            r
        };
        let fair = ladder(vec![v("v1", timed("v1", "a")), v("v2", timed("v2", "a"))]);
        assert_eq!(unfair_runs(&Analysed::new(&fair, Shown::DEFAULT)), None);
        let apart = ladder(vec![v("v1", timed("v1", "a")), v("v2", timed("v2", "b"))]);
        assert!(
            unfair_runs(&Analysed::new(&apart, Shown::DEFAULT))
                .unwrap()
                .contains("2 different runs")
        );
    }
}
