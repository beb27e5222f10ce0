//! The catalogue: every metric stallscope shows, with its friendly name, unit, direction
//! and where it is read from; and the glossary: every stall reason, every SASS opcode
//! class a Hopper kernel shows, and the (reason @ opcode) cells that matter, each with a
//! one-line explanation.

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
    /// Stored in Hz, shown in MHz.
    Frequency,
    /// Watts.
    Power,
    /// Millijoules.
    Energy,
    /// TFLOPS per watt of board power.
    Efficiency,
    /// Stored in bytes per second, shown in GB/s.
    Bandwidth,
    /// A Visual Profiler utilisation level, 0 (idle) to 10 (max).
    Level,
}

impl Kind {
    pub fn unit(self) -> &'static str {
        match self {
            Kind::Time => "µs",
            Kind::Tflops => "TFLOPS",
            Kind::Percent => "%",
            Kind::Count => "",
            Kind::Bytes => "B",
            Kind::Frequency => "MHz",
            Kind::Power => "W",
            Kind::Energy => "mJ",
            Kind::Efficiency => "TFLOPS/W",
            Kind::Bandwidth => "GB/s",
            Kind::Level => "of 10",
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
            Kind::Frequency => "MHz",
            Kind::Power => "W",
            Kind::Energy => "mJ",
            Kind::Efficiency => "TFLOPS/W",
            Kind::Bandwidth => "GB/s",
            Kind::Level => "level_0_to_10",
        }
    }

    /// A stored value in the output unit.
    pub fn output(self, v: f64) -> f64 {
        match self {
            // Stored in ns.
            Kind::Time => v / 1e3,
            // Stored in Hz.
            Kind::Frequency => v / 1e6,
            // Stored in bytes per second.
            Kind::Bandwidth => v / 1e9,
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
    /// A raw-page (or `--metrics`) metric name, collection prefix ignored, that every
    /// architecture uses.
    Raw(&'static str),
    /// A raw-page metric name that only these architectures use: on the others the
    /// same name counts something else, or nothing.
    RawOn(&'static [Arch], &'static str),
    /// The largest of these raw-page metrics, on these architectures only: one unit fed
    /// by pipes counted apart (sm_100's tensor cores, busy through tcgen05 or mma.sync).
    RawMax(&'static [Arch], &'static [&'static str]),
    /// A details-page metric: section and name.
    Detail(&'static str, &'static str),
}

impl Src {
    /// Whether the profile of a kernel on `arch` is read here.
    pub fn applies_to(&self, arch: Arch) -> bool {
        match self {
            Src::RawOn(archs, _) | Src::RawMax(archs, _) => archs.contains(&arch),
            Src::Raw(_) | Src::Detail(..) => true,
        }
    }
}

/// The GPU architecture a profile was measured on, as far as the metric names go:
/// the families whose counters are named differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// Before Hopper (sm_70 … sm_89).
    Earlier,
    /// sm_90.
    Hopper,
    /// Datacenter Blackwell, sm_100 and sm_103 (B200, GB200, B300): tcgen05, whose
    /// tensor pipe is `sm__pipe_tc_cycles_active`.
    Blackwell,
    /// sm_120 (RTX Blackwell): no tcgen05; its tensor pipe is the mma.sync one.
    Sm120,
    /// The export says neither its compute capability nor a family of its own.
    Unknown,
}

/// Every architecture but datacenter Blackwell, where the tensor pipe's classic name
/// counts only the mma.sync (HMMA) sub-pipe.
const NOT_SM100: &[Arch] = &[Arch::Earlier, Arch::Hopper, Arch::Sm120, Arch::Unknown];
/// Hopper, the only architecture with warpgroup MMA (and an export that does not say).
const WGMMA: &[Arch] = &[Arch::Hopper, Arch::Unknown];
const SM100: &[Arch] = &[Arch::Blackwell];

impl Arch {
    /// From a compute capability as ncu writes it (`9.0`, `10.0`, `12.0`).
    pub fn from_cc(cc: &str) -> Option<Arch> {
        let major: u32 = cc.trim().split('.').next()?.trim().parse().ok()?;
        Some(Self::from_major(major))
    }

    fn from_major(major: u32) -> Arch {
        match major {
            0..=8 => Arch::Earlier,
            9 => Arch::Hopper,
            10 => Arch::Blackwell,
            12 => Arch::Sm120,
            _ => Arch::Unknown,
        }
    }

    /// The architecture of a profile: its `CC` column, else the raw page's
    /// `device__attribute_compute_capability_major`, else the metric families it holds
    /// (`sm__pipe_tc_cycles_active` only on sm_100, `…pipe_tensor_op_gmma` only on sm_90).
    pub fn of(p: &crate::model::Profile) -> Arch {
        if let Some(a) = p.launch.cc.as_deref().and_then(Arch::from_cc) {
            return a;
        }
        if let Some(m) = p.raw_value("device__attribute_compute_capability_major")
            && m >= 0.0
            && m.fract() == 0.0
            && m < 100.0
        {
            return Self::from_major(m as u32);
        }
        let holds = |prefix: &str| {
            p.raw.as_ref().is_some_and(|r| {
                r.schema
                    .columns
                    .iter()
                    .any(|c| c.metric.starts_with(prefix))
            }) || p.details.iter().any(|m| m.name.starts_with(prefix))
        };
        if holds("sm__pipe_tc_cycles_active") || holds("sm__inst_executed_pipe_tmem") {
            Arch::Blackwell
        } else if holds("sm__inst_executed_pipe_tensor_op_gmma") {
            Arch::Hopper
        } else {
            Arch::Unknown
        }
    }

    /// In words, for notes: `sm_100 (Blackwell)`.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Earlier => "before sm_90",
            Arch::Hopper => "sm_90 (Hopper)",
            Arch::Blackwell => "sm_100 (Blackwell)",
            Arch::Sm120 => "sm_120 (Blackwell RTX)",
            Arch::Unknown => "unknown architecture",
        }
    }
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

use Src::{Detail, Raw, RawMax, RawOn};

const SOL: &str = "GPU Speed Of Light Throughput";
/// The section's name up to ncu 2020.3, with its older metric names.
const SOL_2020: &str = "GPU Speed Of Light";
/// The Visual Profiler's GPU Details export (GPUs before Ampere).
const NVVP: &str = crate::ncu::nvvp::SECTION;

catalogue! {
    RunTime: "run_time", "Time (run)", Time, Lower, Speed, [],
        "median time of one launch measured by stallscope with CUDA events";
    RunTflops: "run_tflops", "TFLOPS (run)", Tflops, Higher, Speed, [],
        "FLOP of one launch over the run's median time";
    RunPctOfCeiling: "run_pct_of_ceiling", "% of ladder ceiling (run)", Percent, Higher, Speed, [],
        "TFLOPS (run) as a share of the ladder's ceiling: its manifest's peak_tflops, a rate measured or chosen for the ladder (750 TFLOPS for the bundled fp16 ladders: what cuBLAS reaches on an H200 from idle), not the hardware's peak that Tensor pipe active is a share of";
    RunClock: "run_sm_clock", "SM clock (run)", Frequency, Neutral, Speed, [],
        "mean SM clock NVML reported over the run's timed windows: the H200 drops from 1980 to ~1620 MHz under sustained load";
    RunPower: "run_power", "Board power (run)", Power, Neutral, Speed, [],
        "mean board power over the run's timed windows (NVML's energy counter)";
    RunEnergy: "run_energy", "Energy / launch (run)", Energy, Lower, Speed, [],
        "energy of one launch: under a power cap, energy is speed";
    RunEfficiency: "run_tflops_per_watt", "TFLOPS / W (run)", Efficiency, Higher, Speed, [],
        "throughput per watt of board power";
    Duration: "duration", "Duration (ncu)", Time, Lower, Speed,
        [Raw("gpu__time_duration.sum"), Detail(SOL, "Duration"), Detail(SOL_2020, "Duration"), Detail(NVVP, "Duration")],
        "kernel duration under the profiler: ncu flushes the caches before the profiled launch (cold L2), while stallscope's timed runs are warm, and it runs at whatever clock the GPU is at (see SM clock (ncu))";
    SmClock: "sm_clock", "SM clock (ncu)", Frequency, Neutral, Speed,
        [Raw("gpc__cycles_elapsed.avg.per_second"), Detail(SOL, "SM Frequency"),
         Detail(SOL_2020, "SM Frequency"), Raw("smsp__cycles_elapsed.avg.per_second")],
        "ncu's SM Frequency during the profiled launch (gpc__cycles_elapsed.avg.per_second, the figure its details page shows; ncu with --clock-control none measures at the clock it finds)";
    Tflops: "tflops", "TFLOPS (ncu)", Tflops, Higher, Speed, [],
        "FLOP of one launch over the profiled duration";
    PctOfCeiling: "pct_of_ceiling", "% of ladder ceiling (ncu)", Percent, Higher, Speed, [],
        "TFLOPS (ncu) as a share of the ladder's ceiling: its manifest's peak_tflops, a rate measured or chosen for the ladder (750 TFLOPS for the bundled fp16 ladders: what cuBLAS reaches on an H200 from idle), not the hardware's peak that Tensor pipe active is a share of";
    TensorPipe: "tensor_pipe", "Tensor pipe active", Percent, Higher, Compute,
        [RawOn(NOT_SM100, "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
         RawMax(SM100, &["sm__pipe_tc_cycles_active.avg.pct_of_peak_sustained_elapsed",
                         "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"])],
        "cycles the tensor cores were busy (mma.sync and wgmma together), as a share of the hardware's peak (not of the ladder's ceiling); on sm_100 the busier of its two tensor pipes, tcgen05 (sm__pipe_tc_cycles_active) and mma.sync (sm__pipe_tensor_cycles_active, which counts nothing else there)";
    TensorWgmma: "wgmma_issue", "wgmma issue rate", Percent, Neutral, Compute,
        [RawOn(WGMMA, "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active")],
        "warpgroup MMA (HGMMA) instructions issued, of the peak issue rate (sm_90 only: no other architecture has wgmma)";
    TensorMma: "mma_issue", "mma.sync issue rate", Percent, Neutral, Compute,
        [RawOn(NOT_SM100, "sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active"),
         Raw("sm__inst_executed_pipe_tensor_subpipe_hmma.avg.pct_of_peak_sustained_active")],
        "warp-level MMA (HMMA) instructions issued, of the peak issue rate";
    SmThroughput: "sm_throughput", "SM throughput", Percent, Higher, Compute,
        [Raw("sm__throughput.avg.pct_of_peak_sustained_elapsed"), Detail(SOL, "Compute (SM) Throughput"),
         Detail(SOL, "Compute (SM) [%]"), Detail(SOL_2020, "SM [%]")],
        "the busiest SM pipeline or unit, as a share of its peak";
    IssueActive: "issue_active", "Issue slots busy", Percent, Neutral, Compute,
        [Raw("sm__issue_active.avg.pct_of_peak_sustained_elapsed"), Detail("Compute Workload Analysis", "Issue Slots Busy"),
         Detail(NVVP, "Issue Slot Utilization")],
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
        [Raw("sm__warps_active.avg.pct_of_peak_sustained_active"), Detail("Occupancy", "Achieved Occupancy"),
         Detail(NVVP, "Achieved Occupancy")],
        "active warps per SM, of the hardware maximum";
    TheoreticalOccupancy: "theoretical_occupancy", "Theoretical occupancy", Percent, Neutral, Launch,
        [Raw("sm__maximum_warps_per_active_cycle_pct"), Detail("Occupancy", "Theoretical Occupancy")],
        "the occupancy the launch's resources allow";
    Registers: "registers", "Registers / thread", Count, Neutral, Launch,
        [Raw("launch__registers_per_thread"), Detail("Launch Statistics", "Registers Per Thread"),
         Detail(NVVP, "Registers/Thread")],
        "registers allocated to each thread";
    SharedPerBlock: "shared_per_block", "Shared memory / block", Bytes, Neutral, Launch, [],
        "static plus dynamic shared memory of one block";
    Spills: "spills", "Spill instructions", Count, Lower, Launch,
        [Raw("sass__inst_executed_register_spilling"), Detail("Memory Workload Analysis", "Local Memory Spilling Requests")],
        "instructions that spill registers to local memory and load them back";
    DramReadBandwidth: "dram_read_bandwidth", "DRAM read throughput", Bandwidth, Neutral, Memory,
        [Detail(NVVP, "Device Memory Read Throughput")],
        "bytes read from device memory per second (Visual Profiler exports)";
    DramWriteBandwidth: "dram_write_bandwidth", "DRAM write throughput", Bandwidth, Neutral, Memory,
        [Detail(NVVP, "Device Memory Write Throughput")],
        "bytes written to device memory per second (Visual Profiler exports)";
    GlobalLoadBandwidth: "global_load_bandwidth", "Global load throughput", Bandwidth, Neutral, Memory,
        [Detail(NVVP, "Global Load Throughput")],
        "bytes loaded from global memory per second (Visual Profiler exports)";
    DramLevel: "dram_level", "DRAM utilisation level", Level, Neutral, Memory,
        [Detail(NVVP, "Device Memory Utilization")],
        "the Visual Profiler's device-memory utilisation level, 0 (idle) to 10 (max), of GPUs before Ampere";
    L2Level: "l2_level", "L2 utilisation level", Level, Neutral, Memory,
        [Detail(NVVP, "L2 Cache Utilization")],
        "the Visual Profiler's L2 utilisation level, 0 (idle) to 10 (max)";
    SharedLevel: "l1_shared_level", "L1/shared utilisation level", Level, Neutral, Memory,
        [Detail(NVVP, "L1/Shared Memory Utilization")],
        "the Visual Profiler's L1/shared-memory utilisation level, 0 (idle) to 10 (max)";
    ArithmeticLevel: "arithmetic_level", "Arithmetic unit level", Level, Neutral, Compute,
        [Detail(NVVP, "Arithmetic Function Unit Utilization")],
        "the Visual Profiler's arithmetic-unit utilisation level, 0 (idle) to 10 (max)";
    LoadStoreLevel: "load_store_level", "Load/store unit level", Level, Neutral, Compute,
        [Detail(NVVP, "Load/Store Function Unit Utilization")],
        "the Visual Profiler's load/store-unit utilisation level, 0 (idle) to 10 (max)";
}

/// Where a metric's values come from: stallscope's own timed runs (at one shape) or
/// the profiled launch ncu measured. A row of any view holds values of one origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Run,
    Ncu,
}

impl MetricDef {
    pub fn origin(&self) -> Origin {
        use MetricId::*;
        match self.id {
            RunTime | RunTflops | RunPctOfCeiling | RunClock | RunPower | RunEnergy
            | RunEfficiency => Origin::Run,
            _ => Origin::Ncu,
        }
    }

    /// The row label naming the run shape of a run metric (`TFLOPS (run at
    /// 1,64,1024,128)`), where the shape is known, and the profile's shape of an ncu
    /// metric where the run results shown are of another shape (`profiled_at`, as
    /// [`crate::analysis::Shown::profiled_at`] gives it); other metrics as
    /// [`MetricDef::label`].
    pub fn label_at(&self, run_shape: Option<&str>, profiled_at: Option<&str>) -> String {
        self.label_of(&self.name_at(run_shape, profiled_at))
    }

    /// The name naming the run shape of a run metric (`TFLOPS (run at 1,64,1024,128)`),
    /// where the shape is known; an ncu metric's names the shape it was profiled at
    /// where `profiled_at` gives one (`Duration (ncu at 1,64,1024,128)`, `Tensor pipe
    /// active (ncu at 1,64,1024,128)`): beside run results of another shape, the ncu
    /// rows say that they are not of it.
    pub fn name_at(&self, run_shape: Option<&str>, profiled_at: Option<&str>) -> String {
        match (self.origin(), run_shape, profiled_at) {
            (Origin::Run, Some(shape), _) => {
                self.name.replace("(run)", &format!("(run at {shape})"))
            }
            (Origin::Ncu, _, Some(shape)) if self.name.contains("(ncu)") => {
                self.name.replace("(ncu)", &format!("(ncu at {shape})"))
            }
            (Origin::Ncu, _, Some(shape)) => format!("{} (ncu at {shape})", self.name),
            _ => self.name.to_string(),
        }
    }

    /// Where the metric is read from on `arch`, in order of preference: empty where
    /// that architecture has no name for it (the value is then unknown, never another
    /// metric's).
    pub fn sources_on(&self, arch: Arch) -> impl Iterator<Item = &'static Src> {
        self.sources.iter().filter(move |s| s.applies_to(arch))
    }

    /// The raw-page names read on `arch`, in order of preference.
    pub fn raw_names(&self, arch: Arch) -> Vec<&'static str> {
        self.sources_on(arch)
            .filter_map(|s| match *s {
                Src::Raw(n) | Src::RawOn(_, n) => Some(vec![n]),
                Src::RawMax(_, names) => Some(names.to_vec()),
                Src::Detail(..) => None,
            })
            .flatten()
            .collect()
    }

    /// The row label: the name with its unit, unless the unit is in the name already or
    /// the values carry their own (bytes as KiB, MiB).
    pub fn label(&self) -> String {
        self.label_of(self.name)
    }

    fn label_of(&self, name: &str) -> String {
        let unit = self.kind.unit();
        if unit.is_empty() || self.kind == Kind::Bytes || name.contains(unit) {
            name.to_string()
        } else {
            format!("{name} ({unit})")
        }
    }
}

impl MetricId {
    pub fn def(self) -> &'static MetricDef {
        &METRICS[self as usize]
    }
}

/// The three signals kept in view for every version, named in words.
pub const HEADLINE: &[Headline] = &[
    Headline::Stall(StallReason::Barrier, "barrier stalls"),
    Headline::Stall(StallReason::ShortScoreboard, "short-scoreboard stalls"),
    Headline::Metric(MetricId::TensorPipe, "tensor pipe active"),
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
        LegacyExecDependency => {
            "legacy (before Volta): an input of the instruction was not ready (any pipe or memory latency but loads)"
        }
        LegacyDataRequest => {
            "legacy (before Volta): a memory request could not be issued or its data not returned yet (memory dependency)"
        }
        LegacySynchronization => "legacy (before Volta): waiting at __syncthreads",
        LegacyMemoryThrottle => {
            "legacy (before Volta): too many memory operations in flight; the memory pipeline is throttled"
        }
        LegacyPipeBusy => "legacy (before Volta): the compute pipe it needs was busy",
        LegacyTexture => {
            "legacy (before Volta): the texture sub-system was fully used or had too many requests outstanding"
        }
        LegacyInstFetch => "legacy (before Volta): the next instruction was not fetched yet",
        LegacyConstant => "legacy (before Volta): waiting for an immediate-constant cache miss",
        LegacyOther => "legacy (before Volta): a reason the profiler did not split out",
    }
}

/// What an instruction class of Hopper SASS does, in one line; `None` for a class the
/// glossary does not know (a uniform-datapath `U…` class is explained by its base).
pub fn opcode_help(opcode: &str) -> Option<String> {
    if let Some((_, help)) = OPCODES.iter().find(|(op, _)| *op == opcode) {
        return Some(help.to_string());
    }
    let base = opcode.strip_prefix('U')?;
    let (_, help) = OPCODES.iter().find(|(op, _)| *op == base)?;
    Some(format!(
        "{help}, on the uniform datapath (one value for the whole warp)"
    ))
}

/// SASS opcode classes (the opcode without predicate and modifiers) and what they do.
const OPCODES: &[(&str, &str)] = &[
    (
        "ATOMG",
        "an atomic read-modify-write in global memory (atomicAdd …)",
    ),
    (
        "BAR",
        "a block-wide or named barrier (__syncthreads, bar.sync, bar.arrive)",
    ),
    (
        "BRA",
        "a branch; the one closing an mbarrier try-wait loop is where warps spin waiting for data or a turn",
    ),
    (
        "BREAK",
        "leaves a divergent region (a loop exit some threads take first)",
    ),
    ("BSSY", "opens a convergence region before divergent code"),
    (
        "BSYNC",
        "the threads of a warp meet again after divergent code",
    ),
    ("CALL", "a call to a function"),
    (
        "CCTL",
        "cache control: a cache line invalidated or prefetched",
    ),
    (
        "CGAERRBAR",
        "at exit, waits until the cluster's memory errors are reported",
    ),
    (
        "CS2R",
        "reads a special register into a register pair (CS2R R, SRZ zeroes accumulators)",
    ),
    (
        "DEPBAR",
        "waits until a count of asynchronous operations are done (cp.async.wait_group)",
    ),
    ("ELECT", "elects one thread of the warp (elect.sync)"),
    ("ENDCOLLECTIVE", "ends a warp-collective region"),
    (
        "ERRBAR",
        "at exit, waits until the kernel's memory errors are reported",
    ),
    ("EXIT", "the thread ends"),
    (
        "F2FP",
        "converts two fp32 values to fp16 or bf16 and packs them into one register",
    ),
    ("F2I", "converts a float to an integer"),
    ("FADD", "an fp32 addition (e.g. the row sums of a softmax)"),
    (
        "FENCE",
        "a proxy fence: makes generic-proxy writes visible to TMA or wgmma, or the reverse",
    ),
    ("FFMA", "an fp32 fused multiply-add"),
    (
        "FMNMX",
        "an fp32 minimum or maximum (e.g. the row maxima of a softmax)",
    ),
    (
        "FMUL",
        "an fp32 multiplication (e.g. rescaling an accumulator)",
    ),
    (
        "FSEL",
        "selects one of two fp32 values by a predicate (masking)",
    ),
    ("FSETP", "an fp32 comparison setting a predicate"),
    (
        "HADD2",
        "a packed fp16 × 2 addition (also converts and moves halves)",
    ),
    (
        "HFMA2",
        "a packed fp16 × 2 fused multiply-add (also moves constants)",
    ),
    (
        "HGMMA",
        "a warpgroup MMA on the tensor cores (wgmma.mma_async), operands from shared memory or registers",
    ),
    ("HMMA", "a warp-level MMA on the tensor cores (mma.sync)"),
    ("I2F", "converts an integer to a float"),
    ("IABS", "an integer absolute value"),
    ("IADD3", "an integer addition of three operands"),
    (
        "IMAD",
        "an integer multiply-add (also moves, shifts and address arithmetic)",
    ),
    (
        "ISETP",
        "an integer comparison setting a predicate (bounds, loop tests)",
    ),
    ("LDC", "a load from constant memory (kernel parameters)"),
    ("LDG", "a load from global memory"),
    (
        "LDGDEPBAR",
        "closes a group of cp.async copies (cp.async.commit_group)",
    ),
    (
        "LDGSTS",
        "an asynchronous copy from global to shared memory (cp.async)",
    ),
    (
        "LDL",
        "a load from local memory (a register spilled, or an indexed array)",
    ),
    ("LDS", "a load from shared memory"),
    (
        "LDSM",
        "loads 8×8 matrix fragments from shared memory (ldmatrix)",
    ),
    ("LEA", "shift-and-add address arithmetic"),
    (
        "LOP3",
        "a logic operation on three operands (masks, swizzles)",
    ),
    ("MEMBAR", "a memory fence (__threadfence)"),
    ("MOV", "a register move"),
    (
        "MUFU",
        "the multi-function unit: exp2, reciprocal, rsqrt … (e.g. the exponentials of a softmax)",
    ),
    (
        "NANOSLEEP",
        "sleeps for up to the given nanoseconds (nanosleep): the back-off of a polling loop, e.g. between tries of an mbarrier wait",
    ),
    ("NOP", "no operation (padding)"),
    ("P2R", "packs predicates into a register"),
    ("PLOP3", "a logic operation on predicates"),
    ("PRMT", "permutes bytes (packs halves, converts layouts)"),
    ("R2P", "unpacks a register into predicates"),
    (
        "R2UR",
        "moves a register into a uniform register (wgmma descriptors, TMA coordinates)",
    ),
    ("RET", "returns from a function"),
    ("S2R", "reads a special register (thread index, clock)"),
    ("S2UR", "reads a special register into a uniform register"),
    ("SEL", "selects one of two integers by a predicate"),
    ("SHF", "a funnel shift (shifts of 32- and 64-bit values)"),
    (
        "SHFL",
        "a warp shuffle (e.g. a reduction across the lanes of a warp)",
    ),
    ("STG", "a store to global memory"),
    ("STL", "a store to local memory (a register spilled)"),
    ("STS", "a store to shared memory"),
    (
        "STAS",
        "an asynchronous store to shared memory, possibly of another block of the cluster, that completes bytes on an mbarrier there (st.async)",
    ),
    (
        "STSM",
        "stores 8×8 matrix fragments to shared memory (stmatrix)",
    ),
    (
        "SYNCS",
        "an mbarrier operation: arrive, expect-tx, or a try-wait on a phase",
    ),
    (
        "UCGABAR_ARV",
        "arrives at the cluster barrier (barrier.cluster.arrive) without waiting",
    ),
    (
        "UCGABAR_WAIT",
        "waits at the cluster barrier (barrier.cluster.wait) until every thread of every block of the cluster has arrived",
    ),
    (
        "USETMAXREG",
        "moves registers between warpgroups (setmaxnreg)",
    ),
    ("UTMACCTL", "tensor-map cache control (prefetch.tensormap)"),
    (
        "UTMACMDFLUSH",
        "sends the TMA commands issued so far (commit of a bulk group)",
    ),
    (
        "UTMALDG",
        "a TMA bulk tensor copy from global to shared memory (cp.async.bulk.tensor)",
    ),
    ("UTMAPF", "a TMA prefetch of a tensor tile into L2"),
    (
        "UTMASTG",
        "a TMA bulk tensor copy from shared to global memory",
    ),
    ("VIADD", "an integer addition"),
    (
        "VIADDMNMX",
        "an integer addition followed by a minimum or maximum",
    ),
    ("VIMNMX", "an integer minimum or maximum"),
    ("VOTE", "a warp vote (__any_sync, __ballot_sync)"),
    (
        "VOTEU",
        "a warp vote into a uniform register (one answer for the warp)",
    ),
    (
        "WARPGROUP",
        "warpgroup arrive / wait (wgmma.fence, wgmma.wait_group): the wait for warpgroup MMA results",
    ),
    (
        "WARPSYNC",
        "synchronises the threads of a warp (__syncwarp)",
    ),
    (
        "YIELD",
        "lets the scheduler switch to another warp (in spin loops)",
    ),
];

/// What a (reason @ opcode) cell means: the combinations that say more than their parts
/// have their own line; the rest read as the reason's line at the opcode's.
pub fn cell_help(reason: StallReason, opcode: &str) -> String {
    if let Some(help) = combination_help(reason, opcode) {
        return help.to_string();
    }
    if opcode == LAUNCH_LEVEL {
        return format!(
            "{}; read from the launch's stall percentages, not from PC samples",
            stall_help(reason)
        );
    }
    if opcode == REASON_ONLY {
        return format!(
            "{}; the top reason of the raw page's stall shares, with no source page to say at which instruction",
            stall_help(reason)
        );
    }
    match opcode_help(opcode) {
        Some(op) => format!("{}, at {opcode}: {op}", stall_help(reason)),
        None => format!("{}, at {opcode}", stall_help(reason)),
    }
}

/// A (reason @ opcode) cell named as every view and report names it.
pub fn cell_name(reason: StallReason, opcode: &str) -> String {
    if opcode == LAUNCH_LEVEL || opcode == REASON_ONLY {
        return format!("{reason} {opcode}");
    }
    format!("{reason} @ {opcode}")
}

/// The place of a label read from a launch's stall percentages (a Visual Profiler
/// export) rather than from PC samples per instruction: no instruction class.
pub const LAUNCH_LEVEL: &str = "(launch-level %)";

/// The place of a label read from the raw page's stall shares where there is no source
/// page: a stall reason, no instruction class.
pub const REASON_ONLY: &str = "(reason only)";

/// A cell's name and what it means, as the help lines and the source view give them.
pub fn explained_cell(reason: StallReason, opcode: &str) -> String {
    format!(
        "{}: {}",
        cell_name(reason, opcode),
        cell_help(reason, opcode)
    )
}

/// The line of a cell that says more than its reason and opcode do apart.
pub fn combination_help(reason: StallReason, opcode: &str) -> Option<&'static str> {
    CELLS
        .iter()
        .find(|(r, op, _)| *r == reason && *op == opcode)
        .map(|(_, _, help)| *help)
}

/// The cells that say more than their reason and opcode do apart.
const CELLS: &[(StallReason, &str, &str)] = {
    use StallReason::*;
    &[
        (
            Barrier,
            "WARPGROUP",
            "waiting at wgmma.wait_group for warpgroup MMA results: the tensor cores are still busy with this warpgroup's products",
        ),
        (
            Barrier,
            "BAR",
            "waiting at a block or named barrier for the other warps (e.g. a ping-pong turn between warpgroups)",
        ),
        (
            Barrier,
            "BRA",
            "waiting at the block or named barrier (BAR.SYNC) right before this branch: a warp waiting at a barrier is sampled at the instruction after it",
        ),
        (
            Barrier,
            "LOP3",
            "waiting at the block or named barrier (BAR.SYNC) right before this logic operation: a warp waiting at a barrier is sampled at the instruction after it",
        ),
        (
            Barrier,
            "UCGABAR_WAIT",
            "waiting at the cluster barrier (barrier.cluster.wait) for every block of the cluster: warps that have finished their work, or have none, park there until the last block's warps arrive",
        ),
        (
            LongScoreboard,
            "BRA",
            "an mbarrier try-wait loop: the branch waits for the try-wait's answer, i.e. for a TMA copy to land or for a consumer to free its stage",
        ),
        (
            LongScoreboard,
            "SYNCS",
            "an mbarrier try-wait: waiting for a TMA copy to land or for a stage to be freed",
        ),
        (
            LongScoreboard,
            "STS",
            "a tile copied through registers: the shared store waits for the global load before it",
        ),
        (
            LongScoreboard,
            "HADD2",
            "a half-precision add or conversion waits for the global load that brings its operand",
        ),
        (
            LongScoreboard,
            "LDG",
            "the load waits for an earlier global or local load whose register it needs (its address, or a register it overwrites)",
        ),
        (
            ShortScoreboard,
            "HMMA",
            "the MMA waits for the shared-memory fragment load (LDS, LDSM) right before it",
        ),
        (
            ShortScoreboard,
            "FFMA",
            "the FMA waits for its operands from shared memory",
        ),
        (
            ShortScoreboard,
            "PRMT",
            "repacking halves waits for the shared-memory loads that bring them",
        ),
        (
            ShortScoreboard,
            "MUFU",
            "waiting for the result of an earlier MUFU (exp2) or shared load",
        ),
        (
            Wait,
            "HMMA",
            "back-to-back MMAs at the tensor pipe's issue rate: the MMA phases are tensor-bound",
        ),
        (
            Wait,
            "MUFU",
            "an exp2, reciprocal or other MUFU operation waits out the fixed latency of the instruction feeding it (in attention, the softmax's exponentials)",
        ),
        (
            Wait,
            "HGMMA",
            "a wgmma waits out a fixed latency after the previous one or its descriptor",
        ),
        (
            MathPipeThrottle,
            "HMMA",
            "the tensor pipe is busy: the MMAs are issued faster than it completes them",
        ),
        (
            MathPipeThrottle,
            "MUFU",
            "the MUFU unit is busy: too many exponentials at once",
        ),
        (
            MioThrottle,
            "LDS",
            "the shared-memory queue is full: too many shared loads in flight",
        ),
        (
            MioThrottle,
            "STS",
            "the shared-memory queue is full: too many shared stores in flight",
        ),
        (
            LgThrottle,
            "LDG",
            "the global-load queue is full: many small loads per thread",
        ),
        (
            WarpgroupArrive,
            "HGMMA",
            "the wgmma waits for every warp of its warpgroup to arrive at it: a warpgroup MMA issues only when all four warps have",
        ),
        (
            WarpgroupArrive,
            "WARPGROUP",
            "waiting at wgmma.fence for the registers the wgmma reads or writes",
        ),
        (
            NotSelected,
            "LDG",
            "ready, but another warp issued: the scheduler is busy, not the loads",
        ),
        (
            Sleeping,
            "BRA",
            "a spin loop that backs off (nanosleep) between tries",
        ),
        (
            Sleeping,
            "NANOSLEEP",
            "a polling loop backing off: the warp sleeps between tries of a wait (an mbarrier or a flag)",
        ),
    ]
};

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
