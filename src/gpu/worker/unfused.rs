//! The built-in unfused baseline: Q·Kᵀ and P·V through cuBLAS (fp16 operands, fp32
//! accumulation) with a softmax kernel between, the score matrix in device memory.
//! What attention costs without fusion, measured in the same run as the ladder.

use super::attention::Problem;
use super::device::{Buffer, Kernel};
use crate::gpu::recipe::KernelRecipe;
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
    /// cuBLAS's workspace, given to it up front so that no allocation happens while
    /// its calls are captured into a graph.
    _workspace: Buffer,
}

/// A strided-batched GEMM's shape and operands; each operand is (pointer, leading
/// dimension, stride between batches).
struct Gemm {
    transpose_a: bool,
    m: i32,
    n: i32,
    k: i32,
    a: (u64, i32, i64),
    b: (u64, i32, i64),
    c: (u64, i32, i64),
    c_type: cublas::cudaDataType,
    batch: i32,
}

/// The workspace cuBLAS gets (its documented recommendation for Hopper is 32 MiB).
const WORKSPACE_BYTES: usize = 32 << 20;

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
        let workspace = dev.alloc(WORKSPACE_BYTES)?;
        ok(
            unsafe {
                cublas::cublasSetWorkspace_v2(
                    handle.0,
                    workspace.ptr as *mut c_void,
                    WORKSPACE_BYTES,
                )
            },
            "cublasSetWorkspace",
        )?;
        Ok(Unfused {
            problem,
            handle,
            softmax,
            scores,
            probs,
            _workspace: workspace,
        })
    }

    /// One strided-batched GEMM, column-major as cuBLAS sees it: fp16 A and B, fp32
    /// accumulation.
    fn gemm(&self, g: &Gemm, what: &str) -> Result<()> {
        let (one, zero) = (1.0f32, 0.0f32);
        let op = |t| {
            if t {
                cublas::cublasOperation_t::CUBLAS_OP_T
            } else {
                cublas::cublasOperation_t::CUBLAS_OP_N
            }
        };
        ok(
            unsafe {
                cublas::cublasGemmStridedBatchedEx(
                    self.handle.0,
                    op(g.transpose_a),
                    cublas::cublasOperation_t::CUBLAS_OP_N,
                    g.m,
                    g.n,
                    g.k,
                    &one as *const f32 as *const c_void,
                    g.a.0 as *const c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    g.a.1,
                    g.a.2,
                    g.b.0 as *const c_void,
                    cublas::cudaDataType::CUDA_R_16F,
                    g.b.1,
                    g.b.2,
                    &zero as *const f32 as *const c_void,
                    g.c.0 as *mut c_void,
                    g.c_type,
                    g.c.1,
                    g.c.2,
                    g.batch,
                    cublas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    cublas::cublasGemmAlgo_t::CUBLAS_GEMM_DFALT,
                )
            },
            what,
        )
    }

    /// One forward pass: scores = Q·Kᵀ (fp32), P = softmax(scale · scores) (fp16),
    /// O = P·V (fp16).
    pub fn run(&self) -> Result<()> {
        let p = self.problem;
        let sh = p.shape;
        let (s, d) = (sh.s as i32, sh.d as i32);
        let batch = (sh.b * sh.h) as i32;
        let (head, scores) = ((s * d) as i64, s as i64 * s as i64);
        // Row-major [S, D] is column-major D×S. Scores (row-major [S, S]) are the
        // column-major product Kᵀ·Q: m = S (keys), n = S (queries), k = D.
        self.gemm(
            &Gemm {
                transpose_a: true,
                m: s,
                n: s,
                k: d,
                a: (p.k.ptr, d, head),
                b: (p.q.ptr, d, head),
                c: (self.scores.ptr, s, scores),
                c_type: cublas::cudaDataType::CUDA_R_32F,
                batch,
            },
            "cuBLAS Q·Kᵀ",
        )?;
        let mut scores_ptr = self.scores.ptr;
        let mut probs = self.probs.ptr;
        let mut rows = (sh.b * sh.h * sh.s) as i32;
        let mut len = s;
        let mut scale = p.scale;
        let mut causal = p.causal as i32;
        let mut args: Vec<*mut c_void> = vec![
            &mut scores_ptr as *mut u64 as *mut c_void,
            &mut probs as *mut u64 as *mut c_void,
            &mut rows as *mut i32 as *mut c_void,
            &mut len as *mut i32 as *mut c_void,
            &mut scale as *mut f32 as *mut c_void,
            &mut causal as *mut i32 as *mut c_void,
        ];
        let launch = crate::gpu::recipe::Launch {
            grid: (rows as u32, 1, 1),
            block: (256, 1, 1),
            shared_bytes: 0,
        };
        p.device().launch(&self.softmax, &launch, &mut args)?;
        // O (column-major D×S) = V (D×S) · P (column-major S×S, the transpose of
        // row-major P): m = D, n = S (queries), k = S (keys).
        self.gemm(
            &Gemm {
                transpose_a: false,
                m: d,
                n: s,
                k: s,
                a: (p.v.ptr, d, head),
                b: (self.probs.ptr, s, scores),
                c: (p.o.ptr, d, head),
                c_type: cublas::cudaDataType::CUDA_R_16F,
                batch,
            },
            "cuBLAS P·V",
        )
    }

    pub fn problem(&self) -> &Problem<'d> {
        self.problem
    }
}
