//! cuBLAS as the built-in baselines call it: a handle on the device's stream with its
//! workspace given up front (no allocation while calls are captured into a graph), and
//! one strided-batched GEMM, fp16 operands with fp32 accumulation.

use crate::gpu::worker::device::{Buffer, Device};
use anyhow::{Result, anyhow, bail};
use cudarc::cublas::sys as cublas;
use std::ffi::c_void;

pub use cublas::cudaDataType;

/// The workspace cuBLAS gets (its documented recommendation for Hopper is 32 MiB).
const WORKSPACE_BYTES: usize = 32 << 20;

fn ok(status: cublas::cublasStatus_t, what: &str) -> Result<()> {
    if status == cublas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(anyhow!("{what}: {status:?}"))
    }
}

/// A cuBLAS handle bound to a device's stream.
pub struct Cublas {
    handle: cublas::cublasHandle_t,
    _workspace: Buffer,
}

impl Drop for Cublas {
    fn drop(&mut self) {
        unsafe {
            let _ = cublas::cublasDestroy_v2(self.handle);
        }
    }
}

/// A strided-batched GEMM's shape and operands, column-major as cuBLAS sees it; each
/// operand is (pointer, leading dimension, stride between batches).
pub struct Gemm {
    pub transpose_a: bool,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub a: (u64, i32, i64),
    pub b: (u64, i32, i64),
    pub c: (u64, i32, i64),
    pub c_type: cudaDataType,
    pub batch: i32,
}

impl Cublas {
    /// A handle on `dev`'s stream; `needed_by` names the baseline in the error when
    /// cuBLAS is not installed.
    pub fn new(dev: &Device, needed_by: &str) -> Result<Cublas> {
        if !unsafe { cublas::is_culib_present() } {
            bail!("cuBLAS (libcublas.so) was not found: {needed_by} needs it");
        }
        let mut h: cublas::cublasHandle_t = std::ptr::null_mut();
        ok(unsafe { cublas::cublasCreate_v2(&mut h) }, "cublasCreate")?;
        let workspace = dev.alloc(WORKSPACE_BYTES)?;
        let c = Cublas {
            handle: h,
            _workspace: workspace,
        };
        ok(
            unsafe { cublas::cublasSetStream_v2(c.handle, dev.stream() as cublas::cudaStream_t) },
            "cublasSetStream",
        )?;
        ok(
            unsafe {
                cublas::cublasSetWorkspace_v2(
                    c.handle,
                    c._workspace.ptr as *mut c_void,
                    WORKSPACE_BYTES,
                )
            },
            "cublasSetWorkspace",
        )?;
        Ok(c)
    }

    /// One strided-batched GEMM: fp16 A and B, fp32 accumulation, C of `c_type`.
    pub fn gemm(&self, g: &Gemm, what: &str) -> Result<()> {
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
                    self.handle,
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
}
