//! The model: a ladder of kernel versions, each with its profile (what ncu measured for
//! one launch) and its run results (what stallscope measured itself).

pub mod check;
pub mod import;
mod kernel_name;
mod ladder;
pub mod manifest;
mod merge;
mod profile;
pub mod runs;
pub mod source;
pub mod staging;
pub mod store;
pub mod trace;

pub use kernel_name::{TITLE_MAX, default_title, short_kernel_name};
pub use ladder::{
    BrokenLadder, Ladder, LoadReport, LooseOptions, TracesRead, Version, at_least_one, ladder_dirs,
    ladder_folders, ladder_ids, launch_key, launch_table, load_files, load_files_with,
    load_folders, load_ladder, load_ladders, pick_launch,
};
pub use merge::merge_exports;
pub use profile::Profile;
pub use runs::{RunResult, RunStatus, Shape};
pub use source::SourcePage;
pub use store::{Place, Store};
pub use trace::{Trace, TraceFile};
