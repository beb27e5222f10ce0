//! The trace build of a version (`kernels/stallscope_trace.h` with `STALLSCOPE_TRACE`
//! defined): its buffer set in the module's globals before a launch, one launch traced
//! after a warm-up and checked, the buffer written out for the runner to decode, and
//! the timer's resolution on this GPU.

use super::device::{Buffer, Device};
use super::problem::{Prepared, Problem};
use crate::gpu::wire::Traced;
use crate::model::trace::{LANES_PER_BLOCK, buffer_words};
use crate::recipe::{KernelRecipe, KernelVersion};
use anyhow::{Context, Result, bail};
use std::path::Path;

/// The definition that turns the markers on.
pub const DEFINE: &str = "-DSTALLSCOPE_TRACE";
/// Marks a lane holds unless asked otherwise: as many as the kernels' header writes out
/// of a lane (`SS_TRACE_RING` in kernels/stallscope_trace.h: its ring's marks but the
/// last slot, which takes the overflow, and the two anchors).
pub const DEFAULT_CAP: u32 = 256 + 1;
/// The most memory a trace buffer takes: a grid of many blocks gets fewer marks a lane.
const MAX_BUFFER_BYTES: u64 = 1 << 30;

/// A trace buffer bound to a prepared trace build.
pub struct TraceBuffer {
    pub buf: Buffer,
    pub blocks: u32,
    pub cap: u32,
}

/// The capacity a lane gets: `asked`, lowered until the buffer fits its bound, and at
/// least [`MIN_CAP`].
pub fn capacity(blocks: u32, asked: u32) -> u32 {
    let lanes = blocks as u64 * LANES_PER_BLOCK as u64;
    let most = (MAX_BUFFER_BYTES / 8 / lanes.max(1)).saturating_sub(2) / 3;
    asked.min(most as u32).max(MIN_CAP)
}

/// The fewest marks a lane may hold: the header's two anchors (a lane with less room
/// stays unused).
pub const MIN_CAP: u32 = 2;

/// Compiles the version's trace build for `problem` and gives it a zeroed buffer.
pub fn prepare(
    problem: &Problem,
    recipe: &KernelRecipe,
    v: &KernelVersion,
    asked_cap: u32,
) -> Result<(Prepared, TraceBuffer)> {
    if let Some(why) = v.untraceable() {
        bail!(why);
    }
    let prepared = problem
        .prepare_with(recipe, v, &[DEFINE.to_string()])
        .context("the trace build")?;
    let (x, y, z) = prepared.launch.grid;
    let blocks = x * y * z;
    let cap = capacity(blocks, asked_cap);
    let dev = problem.device();
    let words = buffer_words(blocks, cap);
    let buf = dev.alloc((words * 8) as usize)?;
    dev.zero(&buf)?;
    dev.set_global(
        &prepared.kernel,
        "stallscope_trace_buffer",
        &buf.ptr.to_le_bytes(),
    )?;
    dev.set_global(&prepared.kernel, "stallscope_trace_cap", &cap.to_le_bytes())?;
    Ok((prepared, TraceBuffer { buf, blocks, cap }))
}

/// Three warm-up launches of the trace build, then one traced launch from a zeroed
/// buffer, its output poisoned before it and checked after; the buffer is written to
/// `out`.
pub fn capture(
    problem: &Problem,
    recipe: &KernelRecipe,
    v: &KernelVersion,
    asked_cap: u32,
    out: &Path,
) -> Result<Traced> {
    let dev = problem.device();
    let (mut prepared, trace) = prepare(problem, recipe, v, asked_cap)?;
    for _ in 0..3 {
        problem.run(&mut prepared)?;
    }
    dev.sync()?;
    dev.zero(&trace.buf)?;
    problem.poison()?;
    problem.run(&mut prepared)?;
    let error = problem.check_current()?;
    let words: Vec<u64> = dev.download(&trace.buf)?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    crate::files::write::atomically(out, &bytes)
        .with_context(|| format!("writing the trace buffer to {}", out.display()))?;
    Ok(Traced {
        gpu: Some(dev.name.clone()),
        blocks: trace.blocks,
        cap: trace.cap,
        error: Some(error),
        timer_resolution_ns: timer_resolution(dev).ok(),
    })
}

/// The finest step %globaltimer takes on this GPU, ns (the header's own kernel).
pub fn timer_resolution(dev: &Device) -> Result<u64> {
    let source = "#include \"stallscope_trace.h\"\n";
    let k = dev.kernel(
        "stallscope_timer_resolution.cu",
        source,
        "stallscope_timer_resolution",
        &[DEFINE.to_string()],
    )?;
    let out = dev.alloc(8)?;
    let mut ptr = out.ptr;
    let mut samples: i32 = 200;
    let mut args = [
        &mut ptr as *mut u64 as *mut std::ffi::c_void,
        &mut samples as *mut i32 as *mut std::ffi::c_void,
    ];
    let launch = crate::recipe::Launch {
        grid: (1, 1, 1),
        block: (32, 1, 1),
        shared_bytes: 0,
    };
    dev.launch(&k, &launch, &mut args)?;
    let v: Vec<u64> = dev.download(&out)?;
    Ok(v[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_grid_gets_fewer_marks_a_lane_within_the_bound() {
        assert_eq!(capacity(132, 4096), 4096);
        let many = capacity(100_000, 4096);
        assert!((1..4096).contains(&many));
        let bytes = buffer_words(100_000, many) * 8;
        assert!(bytes <= MAX_BUFFER_BYTES, "{bytes}");
        // Room for the anchors, whatever is asked.
        assert_eq!(capacity(132, 1), MIN_CAP);
        assert_eq!(capacity(132, 0), MIN_CAP);
    }

    #[test]
    fn the_default_capacity_is_what_the_header_keeps_on_chip() {
        // A larger default would only allocate words no lane fills; the decoder reads
        // each lane's own bound from its word 1 either way.
        let header = include_str!("../../../kernels/stallscope_trace.h");
        assert!(
            header.contains(&format!("#define SS_TRACE_RING {}u", DEFAULT_CAP - 1)),
            "kernels/stallscope_trace.h's SS_TRACE_RING is not DEFAULT_CAP - 1 ({})",
            DEFAULT_CAP - 1
        );
    }
}
