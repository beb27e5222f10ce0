//! The built-in unfused baseline: Q·Kᵀ and P·V through cuBLAS (fp16 operands, fp32
//! accumulation) with a softmax kernel between, the score matrix in device memory.
//! What attention costs without fusion, measured in the same run as the ladder.

use super::attention::Problem;
use super::device::{Buffer, Kernel};
use super::recipe::KernelRecipe;
use anyhow::{Context, Result, anyhow, bail};
use cudarc::cublas::sys as cublas;
use std::ffi::c_void;

struct Handle(cublas::cublasHandle_t);

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe {
            let _ = cublas::cublasDestroy_v2(self.0);
        }
    }
}

fn ok(status: cublas::cublasStatus_t, what: &str) -> Result<()> {
    if status == cublas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(anyhow!("{what}: {status:?}"))
    }
}

pub struct Unfused<'p, 'd> {
    problem: &'p Problem<'d>,
    handle: Handle,
    softmax: Kernel,
    scores: Buffer,
    probs: Buffer,
}

impl<'p, 'd> Unfused<'p, 'd> {
    pub fn new(problem: &'p Problem<'d>, ladder: &KernelRecipe) -> Result<Self> {
        if !unsafe { cublas::is_culib_present() } {
            bail!("cuBLAS (libcublas.so) was not found: the unfused baseline needs it");
        }
        let sm = ladder
            .unfused_softmax
            .as_ref()
            .context("the kernel ladder names no softmax kernel for the unfused baseline")?;
        let dev = problem.device();
        let source = ladder.read(&sm.source)?;
        let softmax = dev.kernel(&sm.source, &source, &sm.entry, &[])?;
        let sh = problem.shape;
        let n_scores = (sh.b * sh.h) as usize * sh.s as usize * sh.s as usize;
        let scores = dev.alloc(n_scores * 4)?;
        let probs = dev.alloc(n_scores * 2)?;
        let mut h: cublas::cublasHandle_t = std::ptr::null_mut();
        ok(unsafe { cublas::cublasCreate_v2(&mut h) }, "cublasCreate")?;
        let handle = Handle(h);
        ok(
            unsafe { cublas::cublasSetStream_v2(handle.0, dev.stream() as cublas::cudaStream_t) },
            "cublasSetStream",
        )?;
        Ok(Unfused {
            problem,
            handle,
            softmax,
            scores,
            probs,
        })
    }

    /// One forward pass: scores = Q·Kᵀ (fp32), P = softmax(scale · scores) (fp16),
    /// O = P·V (fp16).
    pub fn run(&self) -> Result<()> {
        let p = self.problem;
        let sh = p.shape;
        let (s, d) = (sh.s as i32, sh.d as i32);
        let batch = (sh.b * sh.h) as i32;
        let (one, zero) = (1.0f32, 0.0f32);
        // Row-major [S, D] is column-major D×S. Scores (row-major [S, S]) are the
        // column-major product Kᵀ·Q: m = S (keys), n = S (queries), k = D.
        ok(
            unsafe {
                cublas::cublasGemmStridedBatchedEx(
                    self.handle.0,
                    cublas::cublasOperation_t::CUBLAS_OP_T,
                    cublas::cublasOperation_t::CUBLAS_OP_N,
                    s,
                    s,
                    d,
                    &one as *const f32 as *const c_void,
                    p.k.ptr as *const c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    d,
                    (s * d) as i64,
                    p.q.ptr as *const c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    d,
                    (s * d) as i64,
                    &zero as *const f32 as *const c_void,
                    self.scores.ptr as *mut c_void,
                    cublas::cudaDataType::CUDA_R_32F,
                    s,
                    s as i64 * s as i64,
                    batch,
                    cublas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublas::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
                )
            },
            "cuBLAS Q·Kᵀ",
        )?;
        let mut scores = self.scores.ptr;
        let mut probs = self.probs.ptr;
        let mut rows = (sh.b * sh.h * sh.s) as i32;
        let mut len = s;
        let mut scale = p.scale;
        let mut causal = p.causal as i32;
        let mut args: Vec<*mut c_void> = vec![
            &mut scores as *mut u64 as *mut c_void,
            &mut probs as *mut u64 as *mut c_void,
            &mut rows as *mut i32 as *mut c_void,
            &mut len as *mut i32 as *mut c_void,
            &mut scale as *mut f32 as *mut c_void,
            &mut causal as *mut i32 as *mut c_void,
        ];
        let launch = super::recipe::Launch {
            grid: (rows as u32, 1, 1),
            block: (256, 1, 1),
            shared_bytes: 0,
        };
        p.device().launch(&self.softmax, &launch, &mut args)?;
        // O (column-major D×S) = V (D×S) · P (column-major S×S, the transpose of
        // row-major P): m = D, n = S (queries), k = S (keys).
        ok(
            unsafe {
                cublas::cublasGemmStridedBatchedEx(
                    self.handle.0,
                    cublas::cublasOperation_t::CUBLAS_OP_N,
                    cublas::cublasOperation_t::CUBLAS_OP_N,
                    d,
                    s,
                    s,
                    &one as *const f32 as *const c_void,
                    p.v.ptr as *const c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    d,
                    (s * d) as i64,
                    self.probs.ptr as *const c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    s,
                    s as i64 * s as i64,
                    &zero as *const f32 as *const c_void,
                    p.o.ptr as *mut c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    d,
                    (s * d) as i64,
                    batch,
                    cublas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublas::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
                )
            },
            "cuBLAS P·V",
        )
    }

    pub fn problem(&self) -> &Problem<'d> {
        self.problem
    }
}
