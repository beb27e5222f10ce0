//! The built-in baselines' device code, one file per baseline, each of one problem
//! kind ([`crate::kinds::BaselineRun::Builtin`]): it launches on the problem's own
//! tensors, so it is checked and timed exactly as a version is.

pub mod cublas;
pub mod cublas_gemm;
pub mod unfused;

use super::candidate::{Builtin, Candidate};
use super::problem::Problem;
use crate::recipe::KernelRecipe;
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
