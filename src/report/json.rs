//! JSON: the timeline and comparisons as structured data for scripts.

use super::{Analysed, CompareInput, Exporter, display_order};
use crate::analysis::{Bottleneck, METRICS, OpcodeStat, TrailStep};
use crate::model::RunResult;
use serde::Serialize;
use std::collections::BTreeMap;

pub struct JsonExporter;

/// The version of the report document's layout.
pub const REPORT_SCHEMA: &str = "stallscope/report/1";
/// The version of the comparison document's layout.
pub const COMPARE_SCHEMA: &str = "stallscope/compare/1";

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
    flops: Option<f64>,
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
    /// Share of samples per stall reason, a fraction in [0, 1].
    stalls: BTreeMap<&'static str, f64>,
    bottleneck: Option<&'a Bottleneck>,
    hot_ops: &'a [OpcodeStat],
    runs: &'a [RunResult],
}

#[derive(Serialize)]
struct PageJson {
    kind: crate::ncu::PageKind,
    file: String,
}

impl Exporter for JsonExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let out: Vec<LadderJson> = ladders
            .iter()
            .map(|a| LadderJson {
                name: &a.ladder.name,
                title: &a.ladder.title,
                problem: a.ladder.problem.as_deref(),
                flops: a.ladder.flops,
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
                                        Some(dir) => crate::files::relative_path(file, dir),
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
                        }
                    })
                    .collect(),
            })
            .collect();
        let doc = ReportJson {
            schema: REPORT_SCHEMA,
            units: units(),
            ladders: out,
        };
        serde_json::to_string_pretty(&doc).expect("report data serializes") + "\n"
    }

    fn compare(&self, input: &CompareInput) -> String {
        #[derive(Serialize)]
        struct Metric {
            metric: &'static str,
            unit: &'static str,
            a: Option<f64>,
            b: Option<f64>,
            verdict: crate::analysis::Verdict,
        }
        #[derive(Serialize)]
        struct Stall {
            reason: &'static str,
            /// Fractions of all samples.
            a: Option<f64>,
            b: Option<f64>,
            verdict: crate::analysis::Verdict,
        }
        #[derive(Serialize)]
        struct Out<'a> {
            schema: &'static str,
            a: &'a str,
            b: &'a str,
            metrics: Vec<Metric>,
            stalls: Vec<Stall>,
            hot_ops_a: &'a [OpcodeStat],
            hot_ops_b: &'a [OpcodeStat],
        }
        let c = input.comparison;
        let out = Out {
            schema: COMPARE_SCHEMA,
            a: &input.a_name,
            b: &input.b_name,
            metrics: c
                .metrics
                .iter()
                .map(|m| {
                    let d = m.id.def();
                    Metric {
                        metric: d.key,
                        unit: d.kind.output_unit(),
                        a: m.a.map(|x| d.kind.output(x)),
                        b: m.b.map(|x| d.kind.output(x)),
                        verdict: m.verdict,
                    }
                })
                .collect(),
            stalls: c
                .stalls
                .iter()
                .map(|s| Stall {
                    reason: s.reason.metric_name(),
                    a: s.a,
                    b: s.b,
                    verdict: s.verdict,
                })
                .collect(),
            hot_ops_a: &c.hot_ops_a,
            hot_ops_b: &c.hot_ops_b,
        };
        serde_json::to_string_pretty(&out).expect("comparison serializes") + "\n"
    }
}
