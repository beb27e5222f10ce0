//! Text reports of a ladder (the timeline) and of a comparison, in several formats.
//! Each format is one [`Exporter`]; the table and Markdown formats share one grid.

pub mod colour;
pub mod comparison;
pub mod format;
pub mod grid;
mod html;
mod json;
mod markdown;
pub mod runs;
pub mod svg;

pub use grid::Grid;

use crate::analysis::catalogue::Origin;
use crate::analysis::{
    self, Bottleneck, Comparison, LadderAnalysis, METRICS, NoLabel, Shown, StallSource,
    StepVerdict, TrailStep, VersionAnalysis,
};
use crate::model::Ladder;
use crate::ncu::StallReason;

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

/// A ladder with its analysis at the run results shown: what every report is made from.
pub struct Analysed<'a> {
    pub ladder: &'a Ladder,
    pub analysis: LadderAnalysis,
    /// The run results the analysis read (the command's `--shape`, else the default).
    pub shown: Shown,
}

impl<'a> Analysed<'a> {
    /// `ladder` analysed at the run results `shown`.
    pub fn new(ladder: &'a Ladder, shown: Shown) -> Self {
        Analysed {
            ladder,
            analysis: analysis::analyse_ladder(ladder, shown),
            shown,
        }
    }

    /// The shape of the run results shown, as the reports name it.
    pub fn run_shape(&self) -> Option<String> {
        self.shown.shape(self.ladder).map(|s| s.to_string())
    }
}

/// Two versions being compared: their display labels (tables, pages), what
/// machine-readable output names them by, and the comparison.
pub struct CompareInput<'a> {
    pub a_name: String,
    pub b_name: String,
    pub a: CompareSide,
    pub b: CompareSide,
    pub comparison: &'a Comparison,
    /// The shape whose run results are compared (the reference, unless `--shape` chose
    /// another), as the report's JSON names it.
    pub run_shape: Option<String>,
    /// Whether that is another shape than the reference: then the text says so.
    pub other_shape: bool,
    /// Why a side's SASS listing could not be read, where it could not.
    pub listing_error: Option<String>,
    /// b's speed-up over a from their run results at `run_shape`, where both have one.
    pub speed: Option<crate::analysis::speed::Speedup>,
}

impl CompareInput<'_> {
    /// The comparison as the document every format renders.
    pub fn document(&self) -> comparison::Document<'_> {
        comparison::document(
            self.comparison,
            &comparison::Names {
                a: &self.a_name,
                b: &self.b_name,
                run_shape: self.run_shape.as_deref(),
                other_shape: self.other_shape,
                listing_error: self.listing_error.as_deref(),
            },
        )
    }
}

/// One side of a comparison as the report's JSON names a version: id, title and the
/// full kernel name, and for an export file its path and launch; never cut.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CompareSide {
    pub id: String,
    pub title: String,
    pub kernel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<u64>,
}

impl CompareSide {
    /// Version `v`; `path`, the export file it was read from (its launch then named too).
    pub fn of(v: &crate::model::Version, path: Option<String>) -> CompareSide {
        let profile = v.profile.as_ref();
        CompareSide {
            id: v.id.clone(),
            title: v.title.clone(),
            kernel: profile.map(|p| p.kernel.clone()),
            launch: path.as_ref().and(profile.and_then(|p| p.launch_id)),
            path,
        }
    }

    /// How compare's CSV names this side: the version id, or the file's path with
    /// `#launch` where one was chosen.
    pub fn csv_name(&self) -> String {
        match (&self.path, self.launch) {
            (Some(p), Some(l)) => format!("{p}#{l}"),
            (Some(p), None) => p.clone(),
            (None, _) => self.id.clone(),
        }
    }
}

/// How a comparison's table columns name its two sides: as the report names them, but
/// an export file by the shortest end of its path that tells the two apart (`det.csv`,
/// `run2/det.csv`; the launch added where both are one file), not by its whole path.
pub fn column_names(input: &CompareInput) -> (String, String) {
    let (Some(pa), Some(pb)) = (&input.a.path, &input.b.path) else {
        return (input.a_name.clone(), input.b_name.clone());
    };
    let parts = |p: &str| -> Vec<String> {
        std::path::Path::new(p)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let (xa, xb) = (parts(pa), parts(pb));
    let tail = |x: &[String], k: usize| x[x.len().saturating_sub(k)..].join("/");
    let longest = xa.len().max(xb.len()).max(1);
    let (mut a, mut b) = (tail(&xa, 1), tail(&xb, 1));
    for k in 1..=longest {
        (a, b) = (tail(&xa, k), tail(&xb, k));
        if a != b {
            break;
        }
    }
    if a == b {
        // One file twice: its name, and its two launches.
        (a, b) = (tail(&xa, 1), tail(&xb, 1));
        if let (Some(la), Some(lb)) = (input.a.launch, input.b.launch) {
            a = format!("{a}#{la}");
            b = format!("{b}#{lb}");
        }
    }
    if a == b {
        a.push_str(" (a)");
        b.push_str(" (b)");
    }
    (a, b)
}

/// A verdict as machine-readable output writes it: the word compare's JSON gives it.
pub fn verdict_word(v: analysis::Verdict) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(w)) => w,
        _ => format!("{v:?}").to_lowercase(),
    }
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
/// Control characters from imported data are shown escaped as in the terminal
/// ([`format::printable_lines`]): a page holds none of them raw.
pub fn escape(s: &str) -> String {
    let s = format::printable_lines(s);
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

/// A step's name in the trail: its id, and where it branches the version it was built
/// on (`v17 ← v15`).
pub fn step_name(s: &TrailStep) -> String {
    match (&s.parent, s.branch) {
        (Some(p), true) => format!("{} ← {p}", s.id),
        _ => s.id.clone(),
    }
}

/// A lead in standard deviations: `0.2`, `11.3`, `352`.
pub fn z_text(z: f64) -> String {
    if z.abs() >= 10.0 {
        format!("{z:.0}")
    } else {
        format!("{z:.1}")
    }
}

/// What the noise rule says about a step: `moved (z 11.3)`, `near-tie (z 0.2)`,
/// `changed within noise of v17 (z 1.2)`; empty for a step that stayed.
pub fn verdict_text(s: &TrailStep, b: Option<&Bottleneck>) -> String {
    let mut parts = Vec::new();
    let z = |z: Option<f64>| z.map(|z| format!(" (z {})", z_text(z))).unwrap_or_default();
    match s.verdict {
        StepVerdict::Moved => parts.push(format!("moved{}", z(s.z))),
        StepVerdict::WithinNoise => parts.push(format!(
            "changed within noise of {}{}",
            s.judged_against().unwrap_or("its parent"),
            z(s.z)
        )),
        StepVerdict::Start | StepVerdict::Same | StepVerdict::NoLabel => {}
    }
    if let Some(b) = b.filter(|b| b.near_tie) {
        parts.push(format!("near-tie{}", z(b.z)));
    }
    parts.join(", ")
}

/// A version's label in full: the top cell, both cells of a near-tie
/// (`A ≈ B`), or why there is none.
pub fn label_text(b: Option<&Bottleneck>, why: Option<NoLabel>) -> String {
    match (b, why) {
        (Some(b), _) => b.label(),
        (None, Some(n)) => n.short(),
        (None, None) => format::UNKNOWN.to_string(),
    }
}

/// A version's label for a table cell: the top cell, or why there is none.
pub fn label_cell(v: &VersionAnalysis) -> String {
    match (&v.bottleneck, v.no_label) {
        (Some(b), _) => b.to_string(),
        (None, Some(n)) => n.short(),
        (None, None) => format::UNKNOWN.to_string(),
    }
}

/// The heading of a stall section: what the shares are of, by the versions' sources.
pub fn stall_heading(sources: impl IntoIterator<Item = Option<StallSource>>) -> String {
    let mut units: Vec<&str> = sources.into_iter().flatten().map(|s| s.unit()).collect();
    units.sort();
    units.dedup();
    match units.as_slice() {
        [one] => format!("stalls (% of {one})"),
        [] => "stalls".to_string(),
        _ => "stalls (% of PC samples, or of per-issue stall ratios: see the stall source row)"
            .to_string(),
    }
}

/// Where a version's stall shares come from, for a table cell (ten columns at most):
/// PC samples of the raw page, of the source page (`src page`), or per-issue ratios.
pub fn stall_source_cell(v: &VersionAnalysis) -> String {
    match &v.stalls {
        Some(s) => match s.source {
            StallSource::Sampling => "PC samples",
            StallSource::SourcePage => "src page",
            StallSource::PerIssueRatios => "ratios",
        }
        .to_string(),
        None => format::UNKNOWN.to_string(),
    }
}

/// The PC samples behind a version's stall shares, for a table cell.
pub fn stall_samples_cell(v: &VersionAnalysis) -> String {
    match v.stalls.as_ref().and_then(|s| s.samples) {
        Some(n) => format::thousands(n as f64),
        None => format::UNKNOWN.to_string(),
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
            "ladder",
            "version",
            "title",
            "baseline",
            "metric",
            "value",
            "unit",
            "run_shape",
        ]);
        for a in ladders {
            let run_shape = a.run_shape();
            for &i in &display_order(a.ladder) {
                let v = &a.ladder.versions[i];
                let an = &a.analysis.versions[i];
                let base = if v.baseline { "true" } else { "false" };
                // `run_shape`: the shape a run metric's value is of; empty for ncu's.
                let mut row = |metric: &str, value: String, unit: &str, shape: &str| {
                    let _ = w.write_record([
                        a.ladder.name.as_str(),
                        &v.id,
                        &v.title,
                        base,
                        metric,
                        &value,
                        unit,
                        shape,
                    ]);
                };
                for d in METRICS {
                    if let Some(x) = an.get(d.id) {
                        let shape = match d.origin() {
                            Origin::Run => run_shape.as_deref().unwrap_or_default(),
                            Origin::Ncu => "",
                        };
                        row(
                            d.key,
                            format!("{}", d.kind.output(x)),
                            d.kind.output_unit(),
                            shape,
                        );
                    }
                }
                if let Some(s) = &an.stalls {
                    row("stall_source", s.source.key().into(), "", "");
                    if let Some(n) = s.samples {
                        row("stall_samples", n.to_string(), "count", "");
                    }
                    for (r, share) in s.ranked() {
                        row(
                            &format!("stall_{}", r.metric_name()),
                            format!("{share}"),
                            STALL_UNIT,
                            "",
                        );
                    }
                }
                if let Some(b) = &an.bottleneck {
                    row("bottleneck", b.to_string(), "", "");
                    row(
                        "bottleneck_share",
                        format!("{}", b.top.share),
                        STALL_UNIT,
                        "",
                    );
                }
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }

    fn compare(&self, input: &CompareInput) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Two columns never share a name (v1 of two ladders): then each says its side.
        let (mut a, mut b) = (input.a.csv_name(), input.b.csv_name());
        if a == b {
            a.push_str(" (a)");
            b.push_str(" (b)");
        }
        let _ = w.write_record(["metric", "unit", &a, &b, "verdict", "run_shape"]);
        let num = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        let doc = input.document();
        let rows = doc.rows(comparison::Part::Metrics);
        for m in rows.filter_map(|r| match r.figure {
            comparison::Figure::Metric(m) => Some(m),
            _ => None,
        }) {
            let d = m.id.def();
            let out = |x: Option<f64>| num(x.map(|v| d.kind.output(v)));
            let shape = match d.origin() {
                Origin::Run => input.run_shape.as_deref().unwrap_or_default(),
                Origin::Ncu => "",
            };
            let _ = w.write_record([
                d.key,
                d.kind.output_unit(),
                &out(m.a),
                &out(m.b),
                &verdict_word(m.verdict),
                shape,
            ]);
        }
        let rows = doc.rows(comparison::Part::Stalls);
        for s in rows.filter_map(|r| match r.figure {
            comparison::Figure::Stall(s) => Some(s),
            _ => None,
        }) {
            let _ = w.write_record([
                &format!("stall_{}", s.reason.metric_name()),
                STALL_UNIT,
                &num(s.a),
                &num(s.b),
                &verdict_word(s.verdict),
                "",
            ]);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
