//! Fault injection, for the tests only: the points where a killed process leaves its
//! files in a state readers must cope with, which the tests abort or hold open by
//! environment variables. Without the `fault-injection` feature (a plain or release
//! build) a fault point is an empty inline function: no environment is read, no counter
//! kept, nothing is left in the binary. `cargo test` builds with the feature (the
//! dev-dependency of the package on itself turns it on).

/// The environment variable that makes the process abort at its Nth fault point (from
/// 1): the tests kill an import at every point this way and find every version whole.
pub const FAULT_VAR: &str = "STALLSCOPE_ABORT_AT_STEP";
/// The environment variable that makes every fault point wait this many milliseconds:
/// the tests widen the window between a read and its write this way, so that writers
/// at once would lose each other's changes without the lock.
pub const DELAY_VAR: &str = "STALLSCOPE_FAULT_DELAY_MS";

#[cfg(feature = "fault-injection")]
mod points {
    use super::{DELAY_VAR, FAULT_VAR};
    use std::sync::atomic::{AtomicU64, Ordering};

    static FAULT_STEP: AtomicU64 = AtomicU64::new(0);
    static FAULT_DELAY_MS: AtomicU64 = AtomicU64::new(0);

    /// Makes every fault point of this process wait (what [`DELAY_VAR`] does for a
    /// child).
    pub fn set_delay(ms: u64) {
        FAULT_DELAY_MS.store(ms, Ordering::Relaxed);
    }

    /// A point where a killed process leaves its files in a state readers must cope
    /// with, or where a concurrent writer could come between a read and its write. With
    /// [`FAULT_VAR`] set to N, the Nth point reached aborts the process on the spot (no
    /// destructor runs, no file is cleaned), as `kill -9` would; with [`DELAY_VAR`]
    /// each point waits.
    pub fn point(what: &str) {
        let env = |var: &str| std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok());
        let delay = match FAULT_DELAY_MS.load(Ordering::Relaxed) {
            0 => env(DELAY_VAR).unwrap_or(0),
            ms => ms,
        };
        if delay > 0 {
            std::thread::sleep(std::time::Duration::from_millis(delay));
        }
        let Some(at) = env(FAULT_VAR) else {
            return;
        };
        let step = FAULT_STEP.fetch_add(1, Ordering::SeqCst) + 1;
        if step == at {
            eprintln!("{FAULT_VAR}={at}: aborting at step {step} ({what})");
            std::process::abort();
        }
    }
}

#[cfg(feature = "fault-injection")]
pub use points::{point, set_delay};

/// A fault point, in a build without the `fault-injection` feature: nothing.
#[cfg(not(feature = "fault-injection"))]
#[inline(always)]
pub fn point(_what: &str) {}
