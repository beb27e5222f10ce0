//! The output formats `report` and `compare` write, and the exporter of each.

use super::exporter::Exporter;
use super::{csv_rows, grid, html, json, perfetto, svg};

/// What `report` writes: the ladder timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for the terminal: the trail, then versions as columns and metrics
    /// as rows.
    Table,
    /// The trail and the timeline as Markdown tables, with each version's stall matrix.
    Markdown,
    /// Every ladder's versions, metrics, stalls, bottlenecks and runs as one document.
    Json,
    /// One row per version and metric.
    Csv,
    /// A standalone page: trail, charts, tables, matrices, notes and runs (loads nothing).
    Html,
    /// One chart alone (name it with --chart).
    Svg,
    /// The pipeline traces (stallscope trace) as a Chrome trace-event JSON that
    /// ui.perfetto.dev opens: a process per block, a thread per role, a span per stage.
    Perfetto,
}

/// What `compare` writes: the comparison of two versions (or files), each format its
/// own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Aligned text for the terminal: the metric deltas with their verdicts, the two
    /// bottlenecks, stall shares, the (reason × instruction) cells, the instruction mix
    /// and the SASS aligned.
    Table,
    /// The same as Markdown tables, the SASS alignment as a diff block.
    Markdown,
    /// The comparison as one document: both sides, metrics, stalls, bottlenecks, cells,
    /// instruction mix and the SASS alignment.
    Json,
    /// One row per metric and stall reason: metric, unit, A's value, B's value, verdict.
    Csv,
    /// A standalone page: the table's sections (the metric deltas, the bottlenecks, the
    /// (reason × instruction) cells, the instruction mix, the SASS aligned), a chart of
    /// the stall shares side by side and each side's heat table (loads nothing).
    Html,
    /// The two sides' stall shares as one chart, side by side.
    Svg,
}

impl From<CompareFormat> for Format {
    fn from(f: CompareFormat) -> Format {
        match f {
            CompareFormat::Table => Format::Table,
            CompareFormat::Markdown => Format::Markdown,
            CompareFormat::Json => Format::Json,
            CompareFormat::Csv => Format::Csv,
            CompareFormat::Html => Format::Html,
            CompareFormat::Svg => Format::Svg,
        }
    }
}

/// The exporter of a format.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => table_exporter(None),
        Format::Markdown => Box::new(grid::TextExporter {
            markdown: true,
            width: None,
        }),
        Format::Json => Box::new(json::JsonExporter),
        Format::Csv => Box::new(csv_rows::CsvExporter),
        Format::Html => Box::new(html::HtmlExporter),
        Format::Svg => Box::new(svg::SvgExporter {
            chart: svg::Chart::Speed,
        }),
        Format::Perfetto => Box::new(perfetto::PerfettoExporter),
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
