//! What the numbers say: per version the catalogue's values, the stall breakdown, the
//! hot instruction classes, the (reason × opcode) table and the bottleneck label read
//! from it; per ladder the bottleneck trail.

pub mod catalogue;
pub mod compare;
pub mod estimates;
mod ladder;
mod matrix;
pub mod noise;
pub mod occupancy;
pub mod pipeline;
pub mod roofline;
pub mod sass;
mod shown;
pub mod speed;
mod stalls;
mod trail;
mod version;

pub use catalogue::{Arch, Better, Group, Kind, METRICS, MetricDef, MetricId};
pub use compare::{Comparison, Verdict, compare};
pub use ladder::{LadderAnalysis, analyse_ladder, implausible};
pub use matrix::{Bottleneck, Cell, EXPORT_SOURCE, NO_SASS_LEGACY, NoLabel, StallMatrix};
pub use shown::Shown;
pub use stalls::{OpcodeStat, StallBreakdown, StallSource, hot_ops};
pub use trail::{ReasonShare, StepVerdict, TrailStep};
pub use version::{VersionAnalysis, analyse};
