//! The built-in baselines' device code, one file per baseline, each of one problem
//! kind ([`crate::kinds::BaselineRun::Builtin`]): it launches on the problem's own
//! tensors, so it is checked and timed exactly as a version is.

pub mod cublas;
pub mod cublas_gemm;
pub mod unfused;

use super::candidate::Candidate;
use super::problem::Problem;
use crate::gpu::recipe::KernelRecipe;
use crate::gpu::wire::ErrorStats;
use anyhow::{Result, bail};

/// The built-in baseline called `id`, on `problem`.
pub fn start<'p, 'd>(
    id: &str,
    problem: &'p Problem<'d>,
    recipe: &KernelRecipe,
) -> Result<Box<dyn Candidate + 'p>> {
    Ok(match id {
        "unfused" => Box::new(Builtin(unfused::Unfused::new(problem, recipe)?)),
        "cublas" => Box::new(Builtin(cublas_gemm::CublasGemm::new(problem)?)),
        other => bail!(
            "no built-in baseline {other:?} (of {})",
            problem.shape.kind()
        ),
    })
}

/// What a built-in baseline does: launch once on its problem.
pub trait Launches<'d> {
    fn run(&self) -> Result<()>;
    fn problem(&self) -> &Problem<'d>;
}

impl<'d> Launches<'d> for unfused::Unfused<'_, 'd> {
    fn run(&self) -> Result<()> {
        unfused::Unfused::run(self)
    }
    fn problem(&self) -> &Problem<'d> {
        unfused::Unfused::problem(self)
    }
}

impl<'d> Launches<'d> for cublas_gemm::CublasGemm<'_, 'd> {
    fn run(&self) -> Result<()> {
        cublas_gemm::CublasGemm::run(self)
    }
    fn problem(&self) -> &Problem<'d> {
        cublas_gemm::CublasGemm::problem(self)
    }
}

/// A built-in baseline as the protocol drives it: its output is the problem's.
struct Builtin<B>(B);

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
