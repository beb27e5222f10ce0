//! JSON: the timeline and comparisons as structured data for scripts.

use super::{Analysed, CompareInput, Exporter, display_order};
use crate::analysis::{Bottleneck, METRICS, OpcodeStat, TrailStep};
use crate::model::RunResult;
use serde::Serialize;
use std::collections::BTreeMap;

pub struct JsonExporter;

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
    /// Catalogue values; times in µs. Unknown metrics are absent.
    metrics: BTreeMap<&'static str, f64>,
    /// Share of samples per stall reason.
    stalls: BTreeMap<&'static str, f64>,
    bottleneck: Option<&'a Bottleneck>,
    hot_ops: &'a [OpcodeStat],
    runs: &'a [RunResult],
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
                            metrics: METRICS
                                .iter()
                                .filter_map(|d| {
                                    let x = an.get(d.id)?;
                                    let x = if d.kind == crate::analysis::Kind::Time {
                                        x / 1e3
                                    } else {
                                        x
                                    };
                                    Some((d.key, x))
                                })
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
        serde_json::to_string_pretty(&out).expect("report data serializes") + "\n"
    }

    fn compare(&self, input: &CompareInput) -> String {
        #[derive(Serialize)]
        struct Out<'a> {
            a: &'a str,
            b: &'a str,
            #[serde(flatten)]
            comparison: &'a crate::analysis::Comparison,
        }
        serde_json::to_string_pretty(&Out {
            a: &input.a_name,
            b: &input.b_name,
            comparison: input.comparison,
        })
        .expect("comparison serializes")
            + "\n"
    }
}
