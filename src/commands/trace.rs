//! `stallscope trace`: what tracing costs (each marked version's trace build timed
//! against its plain build in one run, under the one protocol), then each version's
//! trace taken, decoded and stored beside its profiles.

use super::ladders::writable_profiles;
use super::options;
use crate::analysis::speed::{self, Speedup};
use crate::cli::{Common, TraceArgs};
use crate::gpu::host::protocol::Settings;
use crate::gpu::host::{runner, trace};
use crate::model::RunResult;
use crate::model::trace::{Clocks, Overhead, SCHEMA, Trace, decode};
use crate::process;
use anyhow::{Context, Result};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::analysis::pipeline::TRUSTED_OVERHEAD_PCT;

/// What tracing cost one version: its plain and traced results, and the verdict.
struct Cost<'r> {
    plain: &'r RunResult,
    traced: &'r RunResult,
    speedup: Option<Speedup>,
}

pub(super) fn trace_command(common: &Common, a: &TraceArgs) -> Result<bool> {
    let limits = common.size_limits();
    let kernels = crate::recipe::folders::find_recipe(
        &options::kernels(common),
        a.ladder.as_deref(),
        limits,
    )?;
    let recipe = crate::recipe::folders::load_recipe(&kernels, limits)?;
    let versions = trace::marked_versions(&recipe, &a.versions)?;
    let ids: Vec<String> = versions.iter().map(|v| v.id.clone()).collect();
    if let Some(why) = crate::gpu::driver::unavailable() {
        anyhow::bail!(why);
    }
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);

    // What tracing costs: the plain and the trace builds timed alike, in one run.
    let timed = if a.no_overhead {
        None
    } else {
        eprintln!("timing {} against their trace builds", ids.join(" "));
        let req = runner::Request {
            versions: ids.clone(),
            shape: a.shape.clone(),
            flags: a.flags.clone(),
            seed: a.seed,
            cases: false,
            traced_twins: true,
            settings: Settings {
                fixed_rounds: a.rounds,
                ..Settings::for_regime(a.regime)
            },
            ..runner::Request::new(kernels.clone(), limits)
        };
        let mut said = |p: runner::Progress| {
            if let runner::Progress::Finished(r) = p {
                let time = r
                    .median_us
                    .map_or("no time".into(), |us| format!("{us:.1} µs"));
                eprintln!("  {}: {time}", r.version);
            }
        };
        Some(runner::run(&req, &cancel, &mut said)?)
    };
    let cost = |id: &str| -> Option<Cost> {
        let results = &timed.as_ref()?.results;
        let at = |v: &str| {
            results
                .iter()
                .find(|r| r.version == v && r.median_us.is_some())
        };
        let (plain, traced) = (at(id)?, at(&runner::traced_id(id))?);
        Some(Cost {
            plain,
            traced,
            speedup: speed::speedup(plain, traced),
        })
    };

    if a.no_capture {
        return Ok(overhead_table(&ids, &cost));
    }
    let req = trace::Request {
        kernels: kernels.clone(),
        limits,
        versions: ids.clone(),
        shape: a.shape.clone(),
        flags: a.flags.clone(),
        cap: a.cap,
        seed: a.seed.unwrap_or(1),
        timeout: Duration::from_secs(a.timeout),
        placement: Default::default(),
    };
    let captured = trace::capture(&req, &cancel, &mut |id| eprintln!("tracing {id}"))?;
    let mut ok = true;
    outln!(
        "{:<8} {:>26} {:>7} {:>10} {:>10} {:>10}  trace",
        "version",
        "plain over traced",
        "blocks",
        "marks/lane",
        "overflowed",
        "timer"
    );
    for c in captured {
        let id = c.version.id.clone();
        let cost = cost(&id);
        let timeline = decode(
            &c.words,
            c.info.blocks,
            c.info.cap,
            &c.version.trace_roles,
            &c.version.trace_stages,
            Clocks {
                timer_resolution_ns: c.info.timer_resolution_ns,
                sm_clock_mhz: cost.as_ref().and_then(|k| k.traced.sm_clock_mhz),
            },
        )
        .with_context(|| format!("version {id}: its trace buffer"))?;
        let overhead = cost.as_ref().and_then(|k| {
            Some(Overhead {
                plain_us: k.plain.median_us?,
                traced_us: k.traced.median_us?,
            })
        });
        let overflowed = timeline.overflowed.len();
        let t = Trace {
            schema: SCHEMA.to_string(),
            version: id.clone(),
            shape: c.shape,
            gpu: c.info.gpu.clone(),
            when: Some(crate::model::runs::now_utc()),
            timer_resolution_ns: c.info.timer_resolution_ns,
            overhead,
            timeline,
        };
        let stored = if a.no_save {
            "not stored (--no-save)".to_string()
        } else {
            let dir = writable_profiles(common).join(&recipe.ladder);
            crate::store_jobs::store_trace(&dir, &recipe, &t, limits)?
                .display()
                .to_string()
        };
        // The plain build's speed-up over the trace build, rounds paired, with the
        // verdict's rule (clocks apart or cycles disagreeing say unclear).
        let speedup = cost.as_ref().and_then(|k| k.speedup.as_ref());
        let cost_cell = if a.no_overhead {
            "not timed".to_string()
        } else {
            crate::report::runs::ratio_cell(speedup)
        };
        let timer = c
            .info
            .timer_resolution_ns
            .map_or("unknown".into(), |n| format!("{n} ns"));
        outln!(
            "{id:<8} {cost_cell:>26} {:>7} {:>10} {overflowed:>10} {timer:>10}  {stored}",
            c.info.blocks,
            c.info.cap
        );
        if overflowed > 0 {
            eprintln!(
                "{id}: {overflowed} lanes made more marks than they hold (--cap {}, and the \
                 kernel's own bound: SS_TRACE_RING in kernels/stallscope_trace.h) and kept their first",
                c.info.cap
            );
        }
        ok &= trusted(&id, speedup, &cost_cell);
    }
    Ok(ok)
}

/// Whether tracing `id` cost at most [`TRUSTED_OVERHEAD_PCT`]; said where it did not.
fn trusted(id: &str, speedup: Option<&Speedup>, cost_cell: &str) -> bool {
    let Some(s) = speedup.filter(|s| (s.ratio - 1.0) * 100.0 > TRUSTED_OVERHEAD_PCT) else {
        return true;
    };
    eprintln!(
        "{id}: tracing costs {:.1} % ({cost_cell}), more than {TRUSTED_OVERHEAD_PCT} %: \
         the marks stretch its stages, so its picture may not be the plain build's",
        (s.ratio - 1.0) * 100.0
    );
    false
}

/// `--no-capture`: what tracing cost each version (the plain build's time, the trace
/// build's, the plain one's speed-up over it with the verdict), and no trace; whether
/// every one cost at most [`TRUSTED_OVERHEAD_PCT`].
fn overhead_table<'r>(ids: &[String], cost: &dyn Fn(&str) -> Option<Cost<'r>>) -> bool {
    outln!(
        "{:<10} {:>12} {:>12} {:>9} {:>26}",
        "version",
        "plain µs",
        "traced µs",
        "cost",
        "plain over traced"
    );
    let mut ok = true;
    for id in ids {
        let k = cost(id);
        let us = |r: Option<&RunResult>| {
            r.and_then(|r| r.median_us).map_or(
                crate::report::format::UNKNOWN.into(),
                crate::report::format::micros,
            )
        };
        let speedup = k.as_ref().and_then(|k| k.speedup.as_ref());
        let pct = speedup.map_or(crate::report::format::UNKNOWN.into(), |s| {
            format!("{:+.1} %", (s.ratio - 1.0) * 100.0)
        });
        let cell = crate::report::runs::ratio_cell(speedup);
        outln!(
            "{id:<10} {:>12} {:>12} {pct:>9} {cell:>26}",
            us(k.as_ref().map(|k| k.plain)),
            us(k.as_ref().map(|k| k.traced)),
        );
        if k.is_none() {
            ok = false;
            eprintln!("{id}: no time for its plain build or its trace build (see the run above)");
        }
        ok &= trusted(id, speedup, &cell);
    }
    ok
}
