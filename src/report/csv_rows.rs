//! The CSV format: one row per version and metric of each ladder, or per metric and stall
//! reason of a comparison.

use super::comparison;
use super::exporter::{Analysed, CompareInput, Exporter};
use super::order::display_order;
use super::texts::{STALL_UNIT, verdict_word};
use crate::analysis::METRICS;
use crate::analysis::catalogue::Origin;

/// One row per version and metric, or per metric and stall reason of a comparison.
pub struct CsvExporter;

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
