//! The catalogue: every metric stallscope shows, with its friendly name, unit, direction
//! and where it is read from; and every stall reason with a one-line explanation.

use crate::ncu::StallReason;
use serde::Serialize;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Higher,
    Lower,
    /// Neither: a change is information, not progress (registers, occupancy …).
    Neutral,
}

/// How a value is stored and shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Stored in ns, shown in µs.
    Time,
    Tflops,
    Percent,
    Count,
    Bytes,
}

impl Kind {
    pub fn unit(self) -> &'static str {
        match self {
            Kind::Time => "µs",
            Kind::Tflops => "TFLOPS",
            Kind::Percent => "%",
            Kind::Count => "",
            Kind::Bytes => "B",
        }
    }

    /// The unit of this kind in machine-readable output (JSON, CSV): times in µs, the
    /// rest as stored.
    pub fn output_unit(self) -> &'static str {
        match self {
            Kind::Time => "us",
            Kind::Tflops => "TFLOPS",
            Kind::Percent => "%",
            Kind::Count => "count",
            Kind::Bytes => "bytes",
        }
    }

    /// A stored value in the output unit.
    pub fn output(self, v: f64) -> f64 {
        match self {
            // Stored in ns.
            Kind::Time => v / 1e3,
            _ => v,
        }
    }

    /// The change below which two values count as the same.
    pub fn tolerance(self) -> f64 {
        match self {
            // Half a percentage point.
            Kind::Percent => 0.5,
            _ => 0.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Group {
    Speed,
    Compute,
    Memory,
    Launch,
}

/// Where a metric is read from, in order of preference.
#[derive(Debug, Clone, Copy)]
pub enum Src {
    /// A raw-page (or `--metrics`) metric name, collection prefix ignored.
    Raw(&'static str),
    /// A details-page metric: section and name.
    Detail(&'static str, &'static str),
}

macro_rules! catalogue {
    ($( $id:ident: $key:literal, $name:literal, $kind:ident, $better:ident, $group:ident,
        [$($src:expr),*], $help:literal; )*) => {
        /// A metric stallscope shows.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum MetricId { $( $id, )* }

        /// Every metric, in display order.
        pub const METRICS: &[MetricDef] = &[ $( MetricDef {
            id: MetricId::$id,
            key: $key,
            name: $name,
            kind: Kind::$kind,
            better: Better::$better,
            group: Group::$group,
            sources: &[$($src),*],
            help: $help,
        }, )* ];
    };
}

#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    pub id: MetricId,
    /// Stable machine name (JSON, CSV).
    pub key: &'static str,
    pub name: &'static str,
    pub kind: Kind,
    pub better: Better,
    pub group: Group,
    /// Empty where stallscope derives the value (see `analysis::analyse`).
    pub sources: &'static [Src],
    pub help: &'static str,
}

use Src::{Detail, Raw};

const SOL: &str = "GPU Speed Of Light Throughput";
/// The section's name up to ncu 2020.3, with its older metric names.
const SOL_2020: &str = "GPU Speed Of Light";

catalogue! {
    RunTime: "run_time", "Time (run)", Time, Lower, Speed, [],
        "median time of one launch measured by stallscope with CUDA events";
    RunTflops: "run_tflops", "TFLOPS (run)", Tflops, Higher, Speed, [],
        "FLOP of one launch over the run's median time";
    Duration: "duration", "Duration (ncu)", Time, Lower, Speed,
        [Raw("gpu__time_duration.sum"), Detail(SOL, "Duration"), Detail(SOL_2020, "Duration")],
        "kernel duration under the profiler (caches flushed, one launch)";
    Tflops: "tflops", "TFLOPS (ncu)", Tflops, Higher, Speed, [],
        "FLOP of one launch over the profiled duration";
    PctOfCeiling: "pct_of_ceiling", "% of ceiling", Percent, Higher, Speed, [],
        "throughput as a share of the ladder's practical tensor-core ceiling";
    TensorPipe: "tensor_pipe", "Tensor pipe active", Percent, Higher, Compute,
        [Raw("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed")],
        "cycles the tensor cores were busy (mma.sync and wgmma together)";
    TensorWgmma: "wgmma_issue", "wgmma issue rate", Percent, Neutral, Compute,
        [Raw("sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active")],
        "warpgroup MMA (HGMMA) instructions issued, of the peak issue rate";
    TensorMma: "mma_issue", "mma.sync issue rate", Percent, Neutral, Compute,
        [Raw("sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active"),
         Raw("sm__inst_executed_pipe_tensor_subpipe_hmma.avg.pct_of_peak_sustained_active")],
        "warp-level MMA (HMMA) instructions issued, of the peak issue rate";
    SmThroughput: "sm_throughput", "SM throughput", Percent, Higher, Compute,
        [Raw("sm__throughput.avg.pct_of_peak_sustained_elapsed"), Detail(SOL, "Compute (SM) Throughput"),
         Detail(SOL, "Compute (SM) [%]"), Detail(SOL_2020, "SM [%]")],
        "the busiest SM pipeline or unit, as a share of its peak";
    IssueActive: "issue_active", "Issue slots busy", Percent, Neutral, Compute,
        [Raw("sm__issue_active.avg.pct_of_peak_sustained_elapsed"), Detail("Compute Workload Analysis", "Issue Slots Busy")],
        "cycles in which a scheduler issued an instruction";
    DramThroughput: "dram", "DRAM throughput", Percent, Neutral, Memory,
        [Raw("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
         Raw("dram__throughput.avg.pct_of_peak_sustained_elapsed"), Detail(SOL, "DRAM Throughput"),
         Detail(SOL_2020, "SOL DRAM"), Detail(SOL_2020, "SOL FB"),
         Raw("fbpa__throughput.avg.pct_of_peak_sustained_elapsed")],
        "device-memory bandwidth used, of its peak";
    L2Throughput: "l2", "L2 throughput", Percent, Neutral, Memory,
        [Raw("lts__throughput.avg.pct_of_peak_sustained_elapsed"), Detail(SOL, "L2 Cache Throughput"),
         Detail(SOL_2020, "SOL L2 Cache"), Detail(SOL_2020, "SOL L2")],
        "L2 cache bandwidth used, of its peak";
    L1Throughput: "l1", "L1/TEX throughput", Percent, Neutral, Memory,
        [Raw("l1tex__throughput.avg.pct_of_peak_sustained_active"), Detail(SOL, "L1/TEX Cache Throughput"),
         Detail(SOL_2020, "SOL L1/TEX Cache"), Detail(SOL_2020, "SOL TEX")],
        "L1 / shared-memory unit bandwidth used, of its peak";
    SharedPipe: "shared", "Shared-memory pipe", Percent, Neutral, Memory,
        [Raw("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed")],
        "shared-memory wavefronts of the load/store unit, of the peak";
    BankConflicts: "bank_conflicts", "Shared bank conflicts", Count, Lower, Memory,
        [Raw("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum")],
        "extra shared-memory wavefronts caused by bank conflicts";
    Occupancy: "occupancy", "Achieved occupancy", Percent, Neutral, Launch,
        [Raw("sm__warps_active.avg.pct_of_peak_sustained_active"), Detail("Occupancy", "Achieved Occupancy")],
        "active warps per SM, of the hardware maximum";
    TheoreticalOccupancy: "theoretical_occupancy", "Theoretical occupancy", Percent, Neutral, Launch,
        [Raw("sm__maximum_warps_per_active_cycle_pct"), Detail("Occupancy", "Theoretical Occupancy")],
        "the occupancy the launch's resources allow";
    Registers: "registers", "Registers / thread", Count, Neutral, Launch,
        [Raw("launch__registers_per_thread"), Detail("Launch Statistics", "Registers Per Thread")],
        "registers allocated to each thread";
    SharedPerBlock: "shared_per_block", "Shared memory / block", Bytes, Neutral, Launch, [],
        "static plus dynamic shared memory of one block";
    Spills: "spills", "Spill instructions", Count, Lower, Launch,
        [Raw("sass__inst_executed_register_spilling"), Detail("Memory Workload Analysis", "Local Memory Spilling Requests")],
        "instructions that spill registers to local memory and load them back";
}

impl MetricDef {
    /// The row label: the name with its unit, unless the unit is in the name already or
    /// the values carry their own (bytes as KiB, MiB).
    pub fn label(&self) -> String {
        let unit = self.kind.unit();
        if unit.is_empty() || self.kind == Kind::Bytes || self.name.contains(unit) {
            self.name.to_string()
        } else {
            format!("{} ({unit})", self.name)
        }
    }
}

impl MetricId {
    pub fn def(self) -> &'static MetricDef {
        &METRICS[self as usize]
    }
}

/// The three signals kept in view for every version.
pub const HEADLINE: &[Headline] = &[
    Headline::Stall(StallReason::Barrier, "barrier"),
    Headline::Stall(StallReason::ShortScoreboard, "SSC"),
    Headline::Metric(MetricId::TensorPipe, "TC"),
];

#[derive(Debug, Clone, Copy)]
pub enum Headline {
    Stall(StallReason, &'static str),
    Metric(MetricId, &'static str),
}

/// A one-line explanation of each stall reason.
pub fn stall_help(r: StallReason) -> &'static str {
    use StallReason::*;
    match r {
        Barrier => "waiting at a block-wide barrier (__syncthreads, bar.sync) for other warps",
        BranchResolving => "waiting for a branch target or the branch unit",
        DispatchStall => "picked, but the dispatcher could not send the instruction on",
        Drain => "at exit, waiting for outstanding memory stores to drain",
        ImcMiss => "waiting for a constant-cache miss",
        LgThrottle => {
            "the queue for global/local memory instructions is full: too many loads in flight per warp"
        }
        LongScoreboard => "waiting for the result of a global, local or texture memory access",
        MathPipeThrottle => "the math pipe it needs is busy with other warps' work",
        Membar => "waiting at a memory fence",
        MioThrottle => "the queue into shared memory / special-function / MIO units is full",
        Misc => "a rarely-seen reason ncu does not split out",
        NoInstructions => {
            "no instruction fetched yet (instruction-cache miss or just after a branch)"
        }
        NotSelected => "ready, but the scheduler issued another warp this cycle",
        Selected => "issued: the sampled warp was the one selected (not a stall)",
        ShortScoreboard => "waiting for a shared-memory, MUFU or other MIO result (SSC)",
        Sleeping => "sleeping (nanosleep or a yielding wait)",
        TexThrottle => "the texture/tensor-memory-access queue is full",
        Wait => {
            "a fixed-latency wait the compiler inserted, e.g. after an MMA or before a dependent math result"
        }
        WarpgroupArrive => "waiting at a warpgroup arrive/wait for wgmma operands",
        Gmma => "waiting for a warpgroup MMA to finish",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_is_indexed_by_id_and_keys_are_unique() {
        for (i, d) in METRICS.iter().enumerate() {
            assert_eq!(d.id as usize, i);
            assert_eq!(d.id.def().key, d.key);
        }
        let mut keys: Vec<_> = METRICS.iter().map(|d| d.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), METRICS.len());
        for &r in StallReason::ALL {
            assert!(!stall_help(r).is_empty());
        }
    }
}
