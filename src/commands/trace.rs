//! `stallscope trace`: what tracing costs (each marked version's trace build timed
//! against its plain build in one run, under the one protocol), then each version's
//! trace taken, decoded and stored beside its profiles. The requests are built in
//! [`options::trace_requests`], the capture and decoding are the GPU side's
//! ([`trace::capture`], [`trace::decoded`]), the tables are the report's
//! ([`crate::report::trace_cost`]).

use super::ladders::writable_profiles;
use super::options::{self, TraceRequests};
use crate::analysis::speed;
use crate::cli::{Common, TraceArgs};
use crate::gpu::host::{runner, trace};
use crate::model::trace::Overhead;
use crate::report::trace_cost::{self, CaptureRow, Cost};
use anyhow::Result;
use std::sync::atomic::AtomicBool;

pub(super) fn trace_command(common: &Common, a: &TraceArgs) -> Result<bool> {
    let TraceRequests {
        recipe,
        ids,
        cost,
        capture,
    } = options::trace_requests(a, common)?;
    if let Some(why) = crate::gpu::driver::unavailable() {
        anyhow::bail!(why);
    }
    crate::process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let timed = match cost {
        Some(req) => Some(time_against_plain(&req, &ids, &cancel)?),
        None => None,
    };
    let cost_for = |id: &str| timed.as_ref().and_then(|t| cost_in(t, id));
    let Some(capture) = capture else {
        return Ok(cost_table(&ids, &cost_for));
    };
    let captured = trace::capture(&capture, &cancel, &mut |id| eprintln!("tracing {id}"))?;
    let mut ok = true;
    outln!("{}", trace_cost::capture_header());
    for c in captured {
        let id = c.version.id.clone();
        let cost = cost_for(&id);
        let overhead = cost.as_ref().and_then(|k| {
            Some(Overhead {
                plain_us: k.plain.median_us?,
                traced_us: k.traced.median_us?,
            })
        });
        // A buffer that does not decode is said and the others go on: one version's
        // broken trace does not cost the traces taken beside it.
        let t = match trace::decoded(
            &c,
            cost.as_ref().and_then(|k| k.traced.sm_clock_mhz),
            overhead,
        ) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{id}: its trace was taken but does not decode, not stored: {e:#}");
                ok = false;
                continue;
            }
        };
        let stored = if a.no_save {
            "not stored (--no-save)".to_string()
        } else {
            let dir = writable_profiles(common).join(&recipe.ladder);
            crate::store_jobs::store_trace(&dir, &recipe, &t, common.size_limits())?
                .display()
                .to_string()
        };
        let overflowed = t.timeline.overflowed.len();
        outln!(
            "{}",
            trace_cost::capture_row(&CaptureRow {
                id: &id,
                cost: cost.as_ref().map_or("not timed".into(), Cost::cell),
                blocks: c.info.blocks,
                cap: c.info.cap,
                overflowed,
                timer_ns: c.info.timer_resolution_ns,
                stored,
            })
        );
        if overflowed > 0 {
            eprintln!("{}", trace_cost::overflowed(&id, overflowed, c.info.cap));
        }
        if let Some(why) = cost.as_ref().and_then(|k| trace_cost::untrusted(&id, k)) {
            eprintln!("{why}");
            ok = false;
        }
    }
    Ok(ok)
}

/// The plain and the trace builds timed alike, in one run.
fn time_against_plain(
    req: &runner::Request,
    ids: &[String],
    cancel: &AtomicBool,
) -> Result<runner::Outcome> {
    eprintln!("timing {} against their trace builds", ids.join(" "));
    let mut said = |p: runner::Progress| {
        if let runner::Progress::Finished(r) = p {
            let time = r
                .median_us
                .map_or("no time".into(), |us| format!("{us:.1} µs"));
            eprintln!("  {}: {time}", r.version);
        }
    };
    runner::run(req, cancel, &mut said)
}

/// What tracing cost `id` in the run: its plain and trace builds' results, paired.
fn cost_in<'r>(timed: &'r runner::Outcome, id: &str) -> Option<Cost<'r>> {
    let at = |v: &str| {
        timed
            .results
            .iter()
            .find(|r| r.version == v && r.median_us.is_some())
    };
    let (plain, traced) = (at(id)?, at(&runner::traced_id(id))?);
    Some(Cost {
        plain,
        traced,
        speedup: speed::speedup(plain, traced),
    })
}

/// `--no-capture`: what tracing cost each version, and no trace; whether every one
/// was timed and cost at most the trusted overhead.
fn cost_table<'r>(ids: &[String], cost_of: &dyn Fn(&str) -> Option<Cost<'r>>) -> bool {
    outln!("{}", trace_cost::cost_header());
    let mut ok = true;
    for id in ids {
        let cost = cost_of(id);
        outln!("{}", trace_cost::cost_row(id, cost.as_ref()));
        match &cost {
            None => {
                ok = false;
                eprintln!(
                    "{id}: no time for its plain build or its trace build (see the run above)"
                );
            }
            Some(k) => {
                if let Some(why) = trace_cost::untrusted(id, k) {
                    eprintln!("{why}");
                    ok = false;
                }
            }
        }
    }
    ok
}
