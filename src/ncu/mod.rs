//! Reading Nsight Compute CSV exports: the details, raw, source, summary and `--metrics`
//! pages (and the Visual Profiler's GPU Details export of older GPUs), plain or gzip-compressed, with or without a live run's output in front. The
//! kind of page is found from the content, never from the file name.

mod error;
mod export;
mod input;
mod launch;
pub mod legacy;
mod listing;
mod long;
mod non_export;
pub mod nvvp;
mod options;
mod raw;
mod record;
mod rows;
mod source;
pub mod stall;
pub mod value;

pub use error::ParseError;
pub use export::{Export, PageKind, parse_bytes, parse_bytes_with, read_file, read_file_with};
pub use input::{sniff, sniff_export};
pub use launch::LaunchInfo;
pub use listing::{CudaLine, OpcodeSamples, SassLine, SourceListing, SourceSummary, opcode_class};
pub use options::ReadOptions;
pub use raw::{RawColumn, RawMetrics, RawSchema};
pub use record::{DetailMetric, KernelRecord, Page, RuleFinding};
pub use stall::StallReason;
pub use value::{Unit, Value};
