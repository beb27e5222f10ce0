//! The attention kind's built-in unfused baseline: Q·Kᵀ and P·V through cuBLAS (fp16
//! operands, fp32 accumulation) with a softmax kernel between, the score matrix in
//! device memory. What attention costs without fusion, measured in the same run as the
//! ladder.

use super::cublas::{Cublas, Gemm, cudaDataType};
use crate::gpu::worker::device::{Buffer, Kernel};
use crate::gpu::worker::problem::Problem;
use crate::kinds::attention::Dims;
use crate::recipe::KernelRecipe;
use anyhow::{Context, Result};
use std::ffi::c_void;

pub struct Unfused<'p, 'd> {
    problem: &'p Problem<'d>,
    cublas: Cublas,
    softmax: Kernel,
    scores: Buffer,
    probs: Buffer,
}

impl<'p, 'd> Unfused<'p, 'd> {
    pub fn new(problem: &'p Problem<'d>, recipe: &KernelRecipe) -> Result<Self> {
        let sm = recipe.helpers.get("softmax").context(
            "the recipe names no softmax kernel for the unfused baseline ([helpers.softmax])",
        )?;
        let dev = problem.device();
        let cublas = Cublas::new(dev, "the unfused baseline")?;
        let source = recipe.read(&sm.source)?;
        let softmax = dev.kernel(&sm.source, &source, &sm.entry, &[])?;
        let x = Dims::of(&problem.shape);
        let n_scores = x.b * x.h * x.s * x.s;
        let scores = dev.alloc(n_scores * 4)?;
        let probs = dev.alloc(n_scores * 2)?;
        Ok(Unfused {
            problem,
            cublas,
            softmax,
            scores,
            probs,
        })
    }
}

impl<'d> crate::gpu::worker::candidate::Launches<'d> for Unfused<'_, 'd> {
    /// One forward pass: scores = Q·Kᵀ (fp32), P = softmax(scale · scores) (fp16),
    /// O = P·V (fp16).
    fn run(&self) -> Result<()> {
        let p = self.problem;
        let x = Dims::of(&p.shape);
        let (s, d) = (x.s as i32, x.d as i32);
        let batch = (x.b * x.h) as i32;
        let ptr = |name| p.tensor(name).map(|t| t.1.ptr);
        let (head, scores) = ((s * d) as i64, s as i64 * s as i64);
        // Row-major [S, D] is column-major D×S. Scores (row-major [S, S]) are the
        // column-major product Kᵀ·Q: m = S (keys), n = S (queries), k = D.
        self.cublas.gemm(
            &Gemm {
                transpose_a: true,
                m: s,
                n: s,
                k: d,
                a: (ptr("K")?, d, head),
                b: (ptr("Q")?, d, head),
                c: (self.scores.ptr, s, scores),
                c_type: cudaDataType::CUDA_R_32F,
                batch,
            },
            "cuBLAS Q·Kᵀ",
        )?;
        let mut scores_ptr = self.scores.ptr;
        let mut probs = self.probs.ptr;
        let mut rows = (x.b * x.h * x.s) as i32;
        let mut len = s;
        let mut scale = x.scale() as f32;
        let mut causal = x.causal as i32;
        let mut args: Vec<*mut c_void> = vec![
            &mut scores_ptr as *mut u64 as *mut c_void,
            &mut probs as *mut u64 as *mut c_void,
            &mut rows as *mut i32 as *mut c_void,
            &mut len as *mut i32 as *mut c_void,
            &mut scale as *mut f32 as *mut c_void,
            &mut causal as *mut i32 as *mut c_void,
        ];
        let launch = crate::recipe::Launch {
            grid: (rows as u32, 1, 1),
            block: (256, 1, 1),
            shared_bytes: 0,
        };
        p.device().launch(&self.softmax, &launch, &mut args)?;
        // O (column-major D×S) = V (D×S) · P (column-major S×S, the transpose of
        // row-major P): m = D, n = S (queries), k = S (keys).
        self.cublas.gemm(
            &Gemm {
                transpose_a: false,
                m: d,
                n: s,
                k: s,
                a: (ptr("V")?, d, head),
                b: (self.probs.ptr, s, scores),
                c: (ptr("O")?, d, head),
                c_type: cudaDataType::CUDA_R_16F,
                batch,
            },
            "cuBLAS P·V",
        )
    }

    fn problem(&self) -> &Problem<'d> {
        self.problem
    }
}
