//! The GEMM kind's built-in baseline: one cuBLAS GEMM on the problem's own A, Bt and C
//! (fp16 in, fp32 accumulation, fp16 out), through the same call the unfused attention
//! baseline makes.

use super::cublas::{Cublas, Gemm, cudaDataType};
use crate::gpu::worker::problem::Problem;
use anyhow::Result;

pub struct CublasGemm<'p, 'd> {
    problem: &'p Problem<'d>,
    cublas: Cublas,
}

impl<'p, 'd> CublasGemm<'p, 'd> {
    pub fn new(problem: &'p Problem<'d>) -> Result<Self> {
        Ok(CublasGemm {
            problem,
            cublas: Cublas::new(problem.device(), "the cuBLAS GEMM baseline")?,
        })
    }
}

impl<'d> crate::gpu::worker::candidate::Launches<'d> for CublasGemm<'_, 'd> {
    /// C = A·B. Row-major C [M, N] is column-major N×M: Cᵀ = Bᵀ·Aᵀ = Bt·Aᵀ, where Bt
    /// (row-major [N, K]) is column-major K×N, used transposed, and A (row-major
    /// [M, K]) is column-major K×M: m = N, n = M, k = K, the `TN` case.
    fn run(&self) -> Result<()> {
        let p = self.problem;
        let (a, c) = (&p.tensor("A")?.1, &p.output().1);
        let bt = &p.tensor("Bt")?.1;
        let d = p.shape.dims();
        let (m, n, k) = (d[0] as i32, d[1] as i32, d[2] as i32);
        self.cublas.gemm(
            &Gemm {
                transpose_a: true,
                m: n,
                n: m,
                k,
                a: (bt.ptr, k, 0),
                b: (a.ptr, k, 0),
                c: (c.ptr, n, 0),
                c_type: cudaDataType::CUDA_R_16F,
                batch: 1,
            },
            "cuBLAS A·B",
        )
    }

    fn problem(&self) -> &Problem<'d> {
        self.problem
    }
}
