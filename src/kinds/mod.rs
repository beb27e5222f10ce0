//! Problem kinds: what a ladder's kernels compute, told apart by their shape, their
//! inputs, their fp64 CPU check and their check cases. Pure host code, below the model
//! and the GPU side, naming nothing of the crate but [`crate::seeded`].
//!
//! Only [`gemm`] lives here so far, and nothing routes through it yet: attention's
//! pieces are still under `model::runs` and `gpu::worker`, and the runner launches
//! attention only.

pub mod gemm;
