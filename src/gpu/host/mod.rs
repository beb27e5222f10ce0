//! The parent side of a run or a profile: the runner and its phases ([`runner`]), where
//! workers run ([`placement`]), the worker client ([`client`]), the timing protocol's
//! knobs ([`protocol`]) and one timed window under it ([`window`]), what the rounds add
//! up to ([`stats`]), the stopping rule ([`stopping`]), NVML's watch on the GPU
//! ([`nvml`]), the PyTorch SDPA workers ([`sdpa`]) and ncu ([`profile`]); what a job
//! runs, the same for each ([`selection`]). It speaks
//! with workers only through [`crate::gpu::wire`]: nothing here names the worker's own
//! modules.

pub mod client;
pub mod nvml;
pub mod placement;
pub mod profile;
pub mod protocol;
pub mod runner;
pub mod script;
pub mod selection;
pub mod stats;
pub mod stopping;
pub mod trace;
pub mod window;
