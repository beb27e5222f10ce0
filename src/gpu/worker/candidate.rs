//! What the timing protocol drives in a worker: a version or a built-in baseline, each
//! launching on its problem, poisoning its output and checking it.

use crate::gpu::wire::ErrorStats;
use anyhow::Result;

/// One candidate as the protocol drives it.
pub trait Candidate {
    fn launch(&mut self) -> Result<()>;
    fn poison(&self) -> Result<()>;
    fn check_current(&self) -> Result<ErrorStats>;
}
