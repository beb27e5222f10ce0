//! What the timing protocol drives in a worker: a version or a built-in baseline, each
//! launching on its problem, poisoning its output and checking it.

use super::problem::Problem;
use crate::gpu::wire::ErrorStats;
use anyhow::Result;

/// One candidate as the protocol drives it.
pub trait Candidate {
    fn launch(&mut self) -> Result<()>;
    fn poison(&self) -> Result<()>;
    fn check_current(&self) -> Result<ErrorStats>;
}

/// What a built-in baseline does: launch once on its problem.
pub trait Launches<'d> {
    fn run(&self) -> Result<()>;
    fn problem(&self) -> &Problem<'d>;
}

/// A built-in baseline as the protocol drives it: its output is the problem's.
pub struct Builtin<B>(pub B);

impl<'d, B: Launches<'d>> Candidate for Builtin<B> {
    fn launch(&mut self) -> Result<()> {
        self.0.run()
    }
    fn poison(&self) -> Result<()> {
        self.0.problem().poison()
    }
    fn check_current(&self) -> Result<ErrorStats> {
        self.0.problem().check_current()
    }
}
