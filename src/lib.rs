//! stallscope: launch every version of a kernel ladder, import Nsight Compute exports of
//! each, and show where the bottleneck was at each step and where it moved next.
//!
//! Data flows one way: [`ncu`] parses exports → [`model`] holds ladders, versions,
//! profiles and runs → [`analysis`] derives stall shares, bottlenecks, the trail and the
//! speed verdicts → [`report`] prints them and [`tui`] shows them. The GPU side
//! ([`gpu`]) only produces run results and profiles, which [`store_jobs`] stores on the
//! model side; [`commands`] ties each subcommand to them.

pub mod analysis;
pub mod cli;
pub mod commands;
pub mod doctor;
pub mod files;
pub mod gpu;
pub mod kinds;
pub mod model;
pub mod ncu;
pub mod nsight;
pub mod process;
pub mod recipe;
pub mod report;
pub mod seeded;
pub mod store_jobs;
pub mod text_width;
pub mod tui;

/// How a unit test that cannot run here says so and is counted: the integration tests'
/// own helper, shared.
#[cfg(test)]
#[path = "../tests/common/skip.rs"]
#[allow(dead_code)]
mod test_skip;
