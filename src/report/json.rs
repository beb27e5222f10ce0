//! JSON: the timeline and comparisons as structured data for scripts.

use super::comparison::{Document, Figure, Part, Sass};
use super::exporter::{Analysed, CompareInput, CompareSide, Exporter};
use super::order::display_order;
use crate::analysis::compare::{CellDelta, Side, Verdict};
use crate::analysis::occupancy::OccupancyLimit;
use crate::analysis::sass::{MixRow, SassDiff};
use crate::analysis::speed::Against;
use crate::analysis::{Bottleneck, Cell, METRICS, NoLabel, OpcodeStat, StallMatrix, TrailStep};
use crate::model::RunResult;
use serde::Serialize;
use std::collections::BTreeMap;

pub struct JsonExporter;

/// The version of the report document's layout.
/// 2: a version's `bottleneck` is the hottest (reason × opcode) cell or null.
/// 3: a version carries the `verdicts` of its shown run; `runs` hold `rounds` as
/// objects (runs.json's schema 2).
/// 4: a ladder names its problem `kind` and the `dims` of its shapes; a run's `shape`
/// names its kind and holds its flags (runs.json's schema 3).
pub const REPORT_SCHEMA: &str = "stallscope/report/4";
/// The version of the comparison document's layout. 2: `a` and `b` name each side as
/// the report names a version (id, title, kernel; a file's path and launch).
/// 3: `speed`, b's speed-up over a from their run results, with its verdict; since
/// added beside the others (no field changed its meaning): `occupancy`.
pub const COMPARE_SCHEMA: &str = "stallscope/compare/3";

/// The unit of every metric id, as the values are written.
fn units() -> BTreeMap<&'static str, &'static str> {
    METRICS
        .iter()
        .map(|d| (d.key, d.kind.output_unit()))
        .collect()
}

#[derive(Serialize)]
struct ReportJson<'a> {
    schema: &'static str,
    /// Unit of each metric id (`us`, `%`, `TFLOPS`, `count`, `bytes`); stall shares are
    /// fractions of all samples.
    units: BTreeMap<&'static str, &'static str>,
    ladders: Vec<LadderJson<'a>>,
}

#[derive(Serialize)]
struct LadderJson<'a> {
    name: &'a str,
    title: &'a str,
    problem: Option<&'a str>,
    /// The problem kind its runs solve, and the names of its shape's dimensions, in the
    /// order `run_shape` gives them.
    kind: Option<&'static str>,
    dims: Vec<&'static str>,
    /// FLOP of one launch at the reference shape.
    flops: Option<f64>,
    /// The shape the run metrics (`run_*`) are of.
    run_shape: Option<String>,
    trail: &'a [TrailStep],
    versions: Vec<VersionJson<'a>>,
}

#[derive(Serialize)]
struct VersionJson<'a> {
    id: &'a str,
    title: &'a str,
    baseline: bool,
    technique: Option<&'a str>,
    kernel: Option<&'a str>,
    /// The pages the profile was merged from: their kind and file (relative to the
    /// ladder folder).
    pages: Vec<PageJson>,
    /// Catalogue values by metric id, in the units of `units`. Unknown metrics are
    /// absent.
    metrics: BTreeMap<&'static str, f64>,
    /// The version this one was built on.
    parent: Option<&'a str>,
    /// Where `stalls` come from: `pc_sampling`, `source_page` or `per_issue_ratios`.
    stall_source: Option<&'static str>,
    /// The PC samples behind `stalls` (with per-issue ratios, the profile's sample
    /// count, often 0).
    stall_samples: Option<u64>,
    /// Share of samples per stall reason, a fraction in [0, 1].
    stalls: BTreeMap<&'static str, f64>,
    /// The largest stall reason over the whole kernel (`selected` aside), as ncu shows it.
    top_reason: Option<TopReason>,
    /// The hottest (reason × opcode) cell of the source page, with the runner-up.
    bottleneck: Option<&'a Bottleneck>,
    /// Why `bottleneck` is null.
    no_label: Option<NoLabel>,
    /// The (reason × opcode) table: its top cells.
    matrix: Option<MatrixJson<'a>>,
    hot_ops: &'a [OpcodeStat],
    runs: &'a [RunResult],
    /// The shown run result's verdicts (at `run_shape`): against the fastest version
    /// and each baseline, as `run --json` gives them.
    verdicts: Vec<Against>,
    /// What its figures cannot be trusted for, one sentence each (pages of two ncu runs
    /// merged into one launch); left out where there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<String>,
}

#[derive(Serialize)]
struct PageJson {
    kind: crate::ncu::PageKind,
    file: String,
}

#[derive(Serialize)]
struct TopReason {
    reason: &'static str,
    share: f64,
}

/// Cells a version's `matrix` lists.
const MATRIX_CELLS: usize = 24;

#[derive(Serialize)]
struct MatrixJson<'a> {
    /// All warp samples of the source page (`selected` included): the denominator.
    samples: u64,
    /// The stall samples of the table (`selected` left out).
    stall_samples: u64,
    /// The hottest cells, largest first; `share` is of `samples`.
    cells: &'a [Cell],
}

fn matrix_json(m: &StallMatrix) -> MatrixJson<'_> {
    MatrixJson {
        samples: m.samples,
        stall_samples: m.stall_samples,
        cells: &m.cells[..m.cells.len().min(MATRIX_CELLS)],
    }
}

impl Exporter for JsonExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let out: Vec<LadderJson> = ladders
            .iter()
            .map(|a| (a, crate::analysis::speed::shown_verdicts(a.ladder, a.shown)))
            .map(|(a, mut verdicts)| LadderJson {
                name: &a.ladder.name,
                title: &a.ladder.title,
                problem: a.ladder.problem.as_deref(),
                kind: a.ladder.kind.map(|k| k.name()),
                dims: a
                    .ladder
                    .kind
                    .map_or(Vec::new(), |k| k.dims().iter().map(|d| d.name).collect()),
                flops: a.ladder.flops,
                run_shape: a.run_shape(),
                trail: &a.analysis.trail,
                versions: display_order(a.ladder)
                    .into_iter()
                    .map(|i| {
                        let v = &a.ladder.versions[i];
                        let an = &a.analysis.versions[i];
                        VersionJson {
                            id: &v.id,
                            title: &v.title,
                            baseline: v.baseline,
                            technique: v.technique.as_deref(),
                            kernel: v.profile.as_ref().map(|p| p.kernel.as_str()),
                            pages: v
                                .profile
                                .iter()
                                .flat_map(|p| &p.pages)
                                .map(|(kind, file)| PageJson {
                                    kind: *kind,
                                    file: match &a.ladder.dir {
                                        Some(dir) => crate::files::paths::relative_path(file, dir),
                                        None => file.clone(),
                                    }
                                    .display()
                                    .to_string(),
                                })
                                .collect(),
                            metrics: METRICS
                                .iter()
                                .filter_map(|d| Some((d.key, d.kind.output(an.get(d.id)?))))
                                .collect(),
                            parent: a
                                .ladder
                                .parent_of(i)
                                .map(|p| a.ladder.versions[p].id.as_str()),
                            stall_source: an.stalls.as_ref().map(|s| s.source.key()),
                            stall_samples: an.stalls.as_ref().and_then(|s| s.samples),
                            top_reason: an.top_reason().map(|(r, share)| TopReason {
                                reason: r.metric_name(),
                                share,
                            }),
                            no_label: an.no_label,
                            matrix: an.matrix.as_ref().map(matrix_json),
                            stalls: an
                                .stalls
                                .as_ref()
                                .map(|s| {
                                    s.ranked()
                                        .into_iter()
                                        .map(|(r, x)| (r.metric_name(), x))
                                        .collect()
                                })
                                .unwrap_or_default(),
                            bottleneck: an.bottleneck.as_ref(),
                            hot_ops: &an.hot_ops,
                            runs: &v.runs,
                            verdicts: std::mem::take(&mut verdicts[i]),
                            warnings: super::texts::version_warnings(v),
                        }
                    })
                    .collect(),
            })
            .collect();
        // About 3 KB a version: written once into a buffer of that size, not grown.
        let versions: usize = out.iter().map(|l| l.versions.len()).sum();
        let doc = ReportJson {
            schema: REPORT_SCHEMA,
            units: units(),
            ladders: out,
        };
        pretty_line(&doc, 4096 + 3072 * versions)
    }

    fn compare(&self, input: &CompareInput) -> String {
        let doc = input.document();
        pretty_line(&compare_json(input, &doc), 16 << 10)
    }
}

/// `value` as indented JSON and a line end, written into a buffer of `capacity` bytes
/// at first.
fn pretty_line(value: &impl Serialize, capacity: usize) -> String {
    let mut buf = Vec::with_capacity(capacity);
    serde_json::to_writer_pretty(&mut buf, value).expect("report data serializes");
    buf.push(b'\n');
    String::from_utf8(buf).expect("serde_json writes UTF-8")
}

#[derive(Serialize)]
struct MetricJson {
    metric: &'static str,
    unit: &'static str,
    a: Option<f64>,
    b: Option<f64>,
    verdict: Verdict,
}

#[derive(Serialize)]
struct StallJson {
    reason: &'static str,
    /// Fractions of all samples.
    a: Option<f64>,
    b: Option<f64>,
    verdict: Verdict,
}

#[derive(Serialize)]
struct Pair<T> {
    a: T,
    b: T,
}

impl<T> Pair<T> {
    fn of<'a>(doc: &Document<'a>, f: impl Fn(&'a Side) -> T) -> Pair<T> {
        Pair {
            a: f(doc.sides[0]),
            b: f(doc.sides[1]),
        }
    }
}

#[derive(Serialize)]
struct CompareJson<'a> {
    schema: &'static str,
    a: &'a CompareSide,
    b: &'a CompareSide,
    /// The shape whose run results are compared: the reference, unless `--shape`
    /// chose another (null for export files).
    run_shape: Option<&'a str>,
    /// b's speed-up over a from their run results at `run_shape` (a's time
    /// over b's: above 1, b is faster), with its interval and verdict; null
    /// unless both have one.
    speed: Option<&'a crate::analysis::speed::Speedup>,
    metrics: Vec<MetricJson>,
    /// What limits each side's occupancy (null where unknown).
    occupancy: Pair<Option<&'a OccupancyLimit>>,
    /// Where each side's stall shares come from, and how many samples.
    stall_source: Pair<Option<&'static str>>,
    stall_samples: Pair<Option<u64>>,
    stalls: Vec<StallJson>,
    bottleneck: Pair<Option<&'a Bottleneck>>,
    no_label: Pair<Option<NoLabel>>,
    /// The hottest (reason × opcode) cells of either side, shares of each side's
    /// stall samples.
    cells: Vec<&'a CellDelta>,
    /// Opcode classes side by side: instructions, stall samples, share.
    mix: Vec<&'a MixRow>,
    /// The SASS listings aligned by instruction (registers and addresses
    /// ignored); null unless both sides have a source page.
    sass_diff: Option<&'a SassDiff>,
    hot_ops_a: &'a [OpcodeStat],
    hot_ops_b: &'a [OpcodeStat],
    /// b's move on the roofline from a: intensity and FLOP/s ratios, the nearer roof
    /// and its share before and after (figures null where unknown).
    roofline: Option<&'a crate::analysis::roofline::RoofStep>,
    /// a's ncu findings that b resolved, with ncu's estimates, and the measured change
    /// in time with where it came from; null where a side has no profile.
    estimates: Option<&'a crate::analysis::estimates::StepEstimates>,
}

/// The comparison's document as data: every row of each section (those text leaves
/// out too), by its figures.
fn compare_json<'a>(input: &'a CompareInput, doc: &Document<'a>) -> CompareJson<'a> {
    let figures = |part: Part| doc.rows(part).map(|r| r.figure).collect::<Vec<_>>();
    CompareJson {
        schema: COMPARE_SCHEMA,
        a: &input.a,
        b: &input.b,
        run_shape: input.run_shape.as_deref(),
        speed: input.comparison.speed.as_ref(),
        metrics: figures(Part::Metrics)
            .into_iter()
            .filter_map(|f| match f {
                Figure::Metric(m) => {
                    let d = m.id.def();
                    Some(MetricJson {
                        metric: d.key,
                        unit: d.kind.output_unit(),
                        a: m.a.map(|x| d.kind.output(x)),
                        b: m.b.map(|x| d.kind.output(x)),
                        verdict: m.verdict,
                    })
                }
                _ => None,
            })
            .collect(),
        occupancy: Pair::of(doc, |s| s.occupancy.as_ref()),
        stall_source: Pair::of(doc, |s| s.stall_source.map(|x| x.key())),
        stall_samples: Pair::of(doc, |s| s.stall_samples),
        stalls: figures(Part::Stalls)
            .into_iter()
            .filter_map(|f| match f {
                Figure::Stall(s) => Some(StallJson {
                    reason: s.reason.metric_name(),
                    a: s.a,
                    b: s.b,
                    verdict: s.verdict,
                }),
                _ => None,
            })
            .collect(),
        bottleneck: Pair::of(doc, |s| s.bottleneck.as_ref()),
        no_label: Pair::of(doc, |s| s.no_label),
        cells: figures(Part::Cells)
            .into_iter()
            .filter_map(|f| match f {
                Figure::Cell(c) => Some(c),
                _ => None,
            })
            .collect(),
        mix: figures(Part::Mix)
            .into_iter()
            .filter_map(|f| match f {
                Figure::Mix(m) => Some(m),
                _ => None,
            })
            .collect(),
        sass_diff: match &doc.sass {
            Sass::Aligned { diff, .. } => Some(diff),
            Sass::Missing(_) => None,
        },
        hot_ops_a: doc.hot_ops[0],
        hot_ops_b: doc.hot_ops[1],
        roofline: input.comparison.roofline.as_ref(),
        estimates: input.comparison.estimates.as_ref(),
    }
}
