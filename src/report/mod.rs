//! Text reports of a ladder (the timeline) and of a comparison, in several formats.
//! Each format is one [`Exporter`]; the table and Markdown formats share one grid.

pub mod colour;
pub mod format;
pub mod grid;
mod html;
mod json;
mod markdown;
pub mod runs;
pub mod svg;

pub use grid::Grid;

use crate::analysis::{self, Comparison, LadderAnalysis, METRICS};
use crate::model::Ladder;
use crate::ncu::StallReason;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for the terminal.
    Table,
    Markdown,
    Json,
    /// One row per version and metric.
    Csv,
    /// A standalone page: trail, charts, tables, matrices, notes and runs (loads nothing).
    Html,
    /// One chart alone (name it with --chart).
    Svg,
}

/// A ladder with its analysis: what every report is made from.
pub struct Analysed<'a> {
    pub ladder: &'a Ladder,
    pub analysis: LadderAnalysis,
}

impl<'a> Analysed<'a> {
    pub fn new(ladder: &'a Ladder) -> Self {
        Analysed {
            ladder,
            analysis: analysis::analyse_ladder(ladder),
        }
    }
}

/// Two versions being compared, with their names.
pub struct CompareInput<'a> {
    pub a_name: String,
    pub b_name: String,
    pub comparison: &'a Comparison,
}

/// One output format.
pub trait Exporter {
    fn timeline(&self, ladders: &[Analysed]) -> String;
    fn compare(&self, input: &CompareInput) -> String;
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => table_exporter(None),
        Format::Markdown => Box::new(grid::TextExporter {
            markdown: true,
            width: None,
        }),
        Format::Json => Box::new(json::JsonExporter),
        Format::Csv => Box::new(CsvExporter),
        Format::Html => Box::new(html::HtmlExporter),
        Format::Svg => Box::new(svg::SvgExporter {
            chart: svg::Chart::Speed,
        }),
    }
}

/// The table format within `width` columns (a terminal's): the timeline's versions in
/// blocks that fit; `None`, one line per metric.
pub fn table_exporter(width: Option<usize>) -> Box<dyn Exporter> {
    Box::new(grid::TextExporter {
        markdown: false,
        width,
    })
}

/// The exporter for a format and the chart that `svg` draws; a chart belongs to `svg`
/// alone.
pub fn exporter_with_chart(
    format: Format,
    chart: Option<svg::Chart>,
) -> anyhow::Result<Box<dyn Exporter>> {
    match (format, chart) {
        (Format::Svg, Some(chart)) => Ok(Box::new(svg::SvgExporter { chart })),
        (_, None) => Ok(exporter(format)),
        (_, Some(_)) => anyhow::bail!("--chart draws one chart as SVG: give it with --format svg"),
    }
}

/// Text made safe inside HTML and SVG, in element content and in quoted attributes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The trail as one line: `v1 lg_throttle @ LDG → v2 mio_throttle @ LDS (moved)`.
pub fn trail_line(a: &Analysed) -> String {
    let steps: Vec<String> = a
        .analysis
        .trail
        .iter()
        .map(|s| {
            let label = s.label.as_deref().unwrap_or(format::UNKNOWN);
            let moved = if s.changed { " (moved)" } else { "" };
            format!("{} {label}{moved}", s.id)
        })
        .collect();
    if steps.is_empty() {
        "no ladder versions".to_string()
    } else {
        steps.join(" → ")
    }
}

/// Stall reasons worth a row: present in some version, largest first.
pub fn stall_rows(versions: &[crate::analysis::VersionAnalysis]) -> Vec<StallReason> {
    let max_share = |r: StallReason| {
        versions
            .iter()
            .filter_map(|v| v.stalls.as_ref().map(|s| s.share(r)))
            .fold(0.0f64, f64::max)
    };
    let mut reasons: Vec<(StallReason, f64)> = StallReason::ALL
        .iter()
        .map(|&r| (r, max_share(r)))
        .filter(|(_, s)| *s >= 0.005)
        .collect();
    reasons.sort_by(|x, y| y.1.total_cmp(&x.1));
    reasons.into_iter().map(|(r, _)| r).collect()
}

/// Versions in display order: the ladder's own first, then the baselines.
pub fn display_order(ladder: &Ladder) -> Vec<usize> {
    let (mut own, base): (Vec<usize>, Vec<usize>) =
        (0..ladder.versions.len()).partition(|&i| !ladder.versions[i].baseline);
    own.extend(base);
    own
}

/// The unit of stall shares in machine-readable output.
pub const STALL_UNIT: &str = "fraction";

struct CsvExporter;

impl Exporter for CsvExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "ladder", "version", "title", "baseline", "metric", "value", "unit",
        ]);
        for a in ladders {
            for &i in &display_order(a.ladder) {
                let v = &a.ladder.versions[i];
                let an = &a.analysis.versions[i];
                let base = if v.baseline { "true" } else { "false" };
                let mut row = |metric: &str, value: String, unit: &str| {
                    let _ = w.write_record([
                        a.ladder.name.as_str(),
                        &v.id,
                        &v.title,
                        base,
                        metric,
                        &value,
                        unit,
                    ]);
                };
                for d in METRICS {
                    if let Some(x) = an.get(d.id) {
                        row(d.key, format!("{}", d.kind.output(x)), d.kind.output_unit());
                    }
                }
                if let Some(s) = &an.stalls {
                    for (r, share) in s.ranked() {
                        row(
                            &format!("stall_{}", r.metric_name()),
                            format!("{share}"),
                            STALL_UNIT,
                        );
                    }
                }
                if let Some(b) = &an.bottleneck {
                    row("bottleneck", b.to_string(), "");
                }
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    fn compare(&self, input: &CompareInput) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(["metric", "unit", &input.a_name, &input.b_name, "verdict"]);
        let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        for m in &input.comparison.metrics {
            let d = m.id.def();
            let out = |x: Option<f64>| num(x.map(|v| d.kind.output(v)));
            let _ = w.write_record([
                d.key,
                d.kind.output_unit(),
                &out(m.a),
                &out(m.b),
                m.verdict.symbol(),
            ]);
        }
        for s in &input.comparison.stalls {
            let _ = w.write_record([
                &format!("stall_{}", s.reason.metric_name()),
                STALL_UNIT,
                &num(s.a),
                &num(s.b),
                s.verdict.symbol(),
            ]);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
