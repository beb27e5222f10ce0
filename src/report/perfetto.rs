//! `report --format perfetto`: the pipeline traces shown as one Chrome trace-event JSON
//! document, which ui.perfetto.dev (and chrome://tracing) opens. Each traced block of
//! each version is a process (`v13 · block 17 · SM 40`), each role a thread of it (a
//! role's spans that overlap one another on threads of their own, `consumer 1 (2)`),
//! each span a complete event (`ph: X`) named by its stage, in µs from the kernel's
//! first mark. Blocks whose clock is unknown (in cycles only) are left out and said so
//! in `otherData`.

use super::exporter::{Analysed, CompareInput, Exporter};
use crate::analysis::pipeline::stack_rows;
use crate::model::trace::Trace;
use serde_json::{Value, json};

pub struct PerfettoExporter;

impl Exporter for PerfettoExporter {
    fn timeline(&self, ladders: &[Analysed]) -> String {
        let doc = chrome_trace(ladders);
        serde_json::to_string(&doc).expect("JSON values serialize") + "\n"
    }

    /// A comparison carries no traces: an empty document that says so.
    fn compare(&self, _input: &CompareInput) -> String {
        let doc = json!({
            "traceEvents": [],
            "otherData": {"notes": ["a comparison holds no pipeline traces: use report --format perfetto"]},
        });
        serde_json::to_string(&doc).expect("JSON values serialize") + "\n"
    }
}

/// The threads of one role of a block start here (role × this + row + 1).
const ROLE_TIDS: u64 = 1000;

/// The traces the ladders show (each at the shape shown), as one document.
pub fn chrome_trace(ladders: &[Analysed]) -> Value {
    let mut events: Vec<Value> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    let mut traced: Vec<Value> = Vec::new();
    let mut pid: u64 = 0;
    let several = ladders.len() > 1;
    for a in ladders {
        for v in &a.ladder.versions {
            let Some(t) = a.shown.trace(a.ladder, v) else {
                continue;
            };
            let label = if several {
                format!("{}:{}", a.ladder.name, v.id)
            } else {
                v.id.clone()
            };
            let (left_out, shown) = version_events(t, &label, &mut pid, &mut events);
            if left_out > 0 {
                notes.push(format!(
                    "{label}: {left_out} blocks left out, their clock unknown (in cycles only)"
                ));
            }
            traced.push(json!({
                "version": label,
                "shape": t.shape,
                "gpu": t.gpu,
                "blocks": shown,
                "timer_resolution_ns": t.timer_resolution_ns,
                "overhead": t.overhead,
                "overflowed_lanes": t.timeline.overflowed.len(),
                "unmatched_marks": t.timeline.unmatched_marks(),
            }));
        }
    }
    notes.push(
        "ts and dur in µs from the kernel's first mark: blocks placed by %globaltimer (to within its step), spans within a block by its SM's cycle counter".into(),
    );
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "generator": format!("stallscope {}", env!("CARGO_PKG_VERSION")),
            "traces": traced,
            "notes": notes,
        },
    })
}

/// Appends one version's blocks as processes; returns the blocks left out (no clock)
/// and those written.
fn version_events(
    t: &Trace,
    label: &str,
    pid: &mut u64,
    events: &mut Vec<Value>,
) -> (usize, usize) {
    let tl = &t.timeline;
    let (mut left_out, mut shown) = (0, 0);
    for b in &tl.blocks {
        let Some(npc) = b.ns_per_cycle else {
            left_out += 1;
            continue;
        };
        *pid += 1;
        shown += 1;
        let p = *pid;
        events.push(json!({
            "ph": "M", "pid": p, "name": "process_name",
            "args": {"name": format!("{label} · block {} · SM {}", b.block, b.sm)},
        }));
        events.push(
            json!({"ph": "M", "pid": p, "name": "process_sort_index", "args": {"sort_index": p}}),
        );
        let us = |cycles: u64| (b.start_ns as f64 + cycles as f64 * npc) / 1e3;
        for (r, role) in tl.roles.iter().enumerate() {
            let spans = b.spans_of(r);
            if spans.is_empty() {
                continue;
            }
            let (rows, n) = stack_rows(&spans);
            for row in 0..n {
                let tid = r as u64 * ROLE_TIDS + row as u64 + 1;
                let name = if row == 0 {
                    role.clone()
                } else {
                    format!("{role} ({})", row + 1)
                };
                events.push(json!({"ph": "M", "pid": p, "tid": tid, "name": "thread_name", "args": {"name": name}}));
                events.push(json!({"ph": "M", "pid": p, "tid": tid, "name": "thread_sort_index", "args": {"sort_index": tid}}));
            }
            for (s, row) in spans.iter().zip(rows) {
                events.push(json!({
                    "ph": "X",
                    "pid": p,
                    "tid": r as u64 * ROLE_TIDS + row as u64 + 1,
                    "name": tl.stage_name(s.stage),
                    "cat": label,
                    "ts": us(s.start),
                    "dur": (us(s.end) - us(s.start)).max(0.0),
                    "args": {"role": role, "block": b.block, "sm": b.sm, "start_cycle": s.start, "cycles": s.cycles()},
                }));
            }
        }
    }
    (left_out, shown)
}
