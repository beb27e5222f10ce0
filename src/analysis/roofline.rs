//! The ladder on the roofline: for every version its arithmetic intensity against DRAM,
//! L2 and L1/shared memory, its achieved FLOP/s, the ceilings it is measured against
//! (each labelled with where it came from) and the roof nearest above it; for every
//! step (parent → child) how the point moved.
//!
//! Pure data for the views that draw it (explorer, HTML, SVG) and the text reports.
//! Every figure is read from the version's own export; a metric the export lacks is
//! unknown, never zero: a version without its FLOP count, duration or DRAM bytes has no
//! point ([`VersionRoof::point`] is `None`) and [`VersionRoof::no_point`] says why.
//!
//! Where the figures come from (ncu metric names, base units):
//! - DRAM bytes: `dram__bytes_read.sum` + `dram__bytes_write.sum`; bandwidth:
//!   `dram__bytes.sum.peak_sustained` (byte/cycle) × `dram__cycles_elapsed.avg.per_second`.
//! - L2 bytes: `lts__t_sectors.sum` × 32; bandwidth: `lts__t_sectors.avg.peak_sustained`
//!   (sectors/cycle per slice) × 32 × slices (`lts__t_sectors.sum` / `lts__t_sectors.avg`)
//!   × `lts__cycles_elapsed.avg.per_second`.
//! - L1/shared bytes: the LSU writeback bytes of local, global and shared loads,
//!   `derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second` ×
//!   `gpu__time_duration.sum`; bandwidth:
//!   `derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained` (byte/cycle, all
//!   SMs) × `l1tex__cycles_elapsed.avg.per_second`. Stores, TMA copies and wgmma's own
//!   reads of shared memory do not pass the LSU writeback: a TMA/wgmma kernel's L1
//!   intensity is high because the counter does not see its traffic.
//! - FLOP: the ladder's count of one launch at its profiled shape (`flops` in ladder.toml,
//!   per version or for the ladder) over `gpu__time_duration.sum`; for a loose export
//!   without one, ncu's counters ([`counted_flops`]).
//! - Compute ceilings: the ladder's `peak_tflops`, and the datasheet's dense fp16 tensor
//!   and fp32 rates of the GPU the export names ([`DATASHEET`]).

use crate::model::{Ladder, Profile, Version};
use serde::Serialize;

/// A memory level of the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Dram,
    L2,
    L1,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Dram, Level::L2, Level::L1];

    pub fn name(self) -> &'static str {
        match self {
            Level::Dram => "DRAM",
            Level::L2 => "L2",
            Level::L1 => "L1/shared",
        }
    }
}

/// A roof: a memory level's bandwidth slope, or a flat compute ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "level")]
pub enum Roof {
    Memory(Level),
    Compute,
}

impl Roof {
    pub fn name(self) -> &'static str {
        match self {
            Roof::Memory(l) => l.name(),
            Roof::Compute => "compute",
        }
    }
}

/// One ceiling line: a bandwidth in byte/s (a memory roof) or a rate in FLOP/s (a
/// compute roof), with its label and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ceiling {
    pub roof: Roof,
    /// byte/s for a memory roof, FLOP/s for a compute roof.
    pub value: f64,
    /// Short label for a chart: `DRAM 4.81 TB/s`, `ladder 750 TFLOP/s`.
    pub label: String,
    /// Where the figure came from, in words (metric names, file, datasheet).
    pub source: String,
    /// The GPU it is of (ncu's device name); `None` for the ladder's own ceiling.
    pub device: Option<String>,
}

/// A version's traffic at one memory level.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LevelPoint {
    pub level: Level,
    /// Bytes moved at this level in the launch; `None` where the export lacks them.
    pub bytes: Option<f64>,
    /// FLOP per byte; `None` where the bytes are unknown or zero.
    pub intensity: Option<f64>,
    /// The level's bandwidth ceiling from this export's own peak metrics.
    pub ceiling: Option<Ceiling>,
    /// Why the bytes or the ceiling are unknown, where one is.
    pub missing: Option<String>,
}

/// Where a point's FLOP count came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlopSource {
    /// The ladder's count of one launch at its profiled shape.
    Ladder,
    /// ncu's instruction / tensor-op counters (a loose export); the names used.
    Counters(Vec<String>),
}

/// The nearest roof above a point at its intensities and the point's share of it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoofShare {
    pub roof: Roof,
    /// What the roof allows at the point's intensity, FLOP/s.
    pub attainable: f64,
    /// Achieved over attainable (0..1, above 1 where a ceiling is too low).
    pub share: f64,
}

/// One version on the roofline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoofPoint {
    pub flops: f64,
    pub flop_source: FlopSource,
    pub duration_ns: f64,
    /// Achieved FLOP/s: `flops` over the ncu duration.
    pub flop_per_s: f64,
    /// DRAM, L2 and L1/shared, in that order.
    pub levels: Vec<LevelPoint>,
    /// The binding roof: the lowest of the compute ceiling and every level's bandwidth ×
    /// intensity; `None` where no ceiling is known.
    pub nearer: Option<RoofShare>,
    /// The GPU the profile names, where it names one.
    pub device: Option<String>,
}

impl RoofPoint {
    pub fn level(&self, l: Level) -> Option<&LevelPoint> {
        self.levels.iter().find(|p| p.level == l)
    }

    /// The intensity against DRAM (the chart's x axis).
    pub fn dram_intensity(&self) -> Option<f64> {
        self.level(Level::Dram).and_then(|p| p.intensity)
    }
}

/// A version of the ladder, with its point or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionRoof {
    pub id: String,
    pub title: String,
    pub baseline: bool,
    pub point: Option<RoofPoint>,
    pub no_point: Option<String>,
}

/// How one step (parent → child) moved on the roofline; a figure is `None` where a side
/// has no point or the figure is unknown on one side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoofStep {
    /// Indices into [`LadderRoofline::versions`] (and the ladder's versions).
    pub parent: usize,
    pub child: usize,
    /// The child's DRAM intensity over the parent's.
    pub intensity_x: Option<f64>,
    /// The child's FLOP/s over the parent's; `None` where the two were profiled on
    /// different GPUs ([`RoofStep::gpus`]), whose clocks and memories differ.
    pub flops_x: Option<f64>,
    /// The parent's and the child's GPUs, where they differ.
    pub gpus: Option<(String, String)>,
    pub before: Option<RoofShare>,
    pub after: Option<RoofShare>,
}

/// The roofline of a ladder: the ceilings to draw, every version's point, every step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LadderRoofline {
    /// The ladder's `peak_tflops` first where it has one (the roof every version's nearer
    /// roof is judged against; without it, the datasheet's rate for the precision the
    /// version uses), then per GPU ([`Ceiling::device`]) its datasheet's compute rates
    /// and the memory ceilings of its first version whose export holds them; each
    /// version's own memory ceilings are in its [`LevelPoint`]s.
    pub ceilings: Vec<Ceiling>,
    /// The GPUs its profiles were taken on (more than one: the ceilings differ, and
    /// each is listed per device).
    pub devices: Vec<String>,
    /// Every version of the ladder, in its order (baselines included, marked).
    pub versions: Vec<VersionRoof>,
    pub steps: Vec<RoofStep>,
}

impl LadderRoofline {
    /// The step whose child is version `child`, where there is one.
    pub fn step_to(&self, child: usize) -> Option<&RoofStep> {
        self.steps.iter().find(|s| s.child == child)
    }

    /// The ceilings a chart of the ladder draws (the explorer's and the SVG's): the
    /// compute roofs and the DRAM and L2 roofs, the ladder's own and its first GPU's.
    pub fn charted_ceilings(&self) -> Vec<&Ceiling> {
        let first = self.devices.first();
        self.ceilings
            .iter()
            .filter(|c| c.device.is_none() || c.device.as_ref() == first)
            .filter(|c| c.value.is_finite() && c.value > 0.0)
            .filter(|c| {
                matches!(
                    c.roof,
                    Roof::Compute | Roof::Memory(Level::Dram | Level::L2)
                )
            })
            .collect()
    }
}

impl VersionRoof {
    /// Where a chart puts the version: its DRAM intensity (FLOP/B) and FLOP/s, both
    /// positive; `None` for a version left off.
    pub fn chart_xy(&self) -> Option<(f64, f64)> {
        let p = self.point.as_ref()?;
        let x = p.dram_intensity().filter(|x| *x > 0.0)?;
        (p.flop_per_s > 0.0).then_some((x, p.flop_per_s))
    }
}

/// A GPU's datasheet compute rates, TFLOP/s: dense fp16 tensor (fp32 accumulate) and
/// fp32 SIMT.
#[derive(Debug, Clone, Copy)]
pub struct Datasheet {
    /// A substring of ncu's device name.
    pub device: &'static str,
    pub fp16_tensor_tflops: f64,
    pub fp32_tflops: f64,
}

/// NVIDIA's published SXM figures (H100/H200 share their SM configuration and clocks).
pub const DATASHEET: [Datasheet; 2] = [
    Datasheet {
        device: "H200",
        fp16_tensor_tflops: 989.4,
        fp32_tflops: 66.9,
    },
    Datasheet {
        device: "H100",
        fp16_tensor_tflops: 989.4,
        fp32_tflops: 66.9,
    },
];

/// Two GPU names where both are known and they differ: a step between them is across
/// GPUs, whose clocks and memories differ.
pub fn gpus_apart(a: Option<String>, b: Option<String>) -> Option<(String, String)> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Some((x, y)),
        _ => None,
    }
}

/// The GPU a profile names: `device__attribute_display_name` on the raw page, else the
/// details page's `Device` column.
pub fn device_name(p: &Profile) -> Option<String> {
    p.raw
        .as_ref()
        .and_then(|r| r.get("device__attribute_display_name"))
        .and_then(|v| match v {
            crate::ncu::Value::Text(t) => Some(t.to_string()),
            _ => None,
        })
        .or_else(|| p.launch.device.clone())
}

/// The datasheet of the GPU a profile names.
pub fn datasheet(p: &Profile) -> Option<&'static Datasheet> {
    let named = device_name(p)?;
    DATASHEET.iter().find(|d| named.contains(d.device))
}

/// The roofline of every version of `ladder`.
pub fn ladder_roofline(ladder: &Ladder) -> LadderRoofline {
    let peak = ladder_ceiling(ladder);
    let versions: Vec<VersionRoof> = ladder
        .versions
        .iter()
        .map(|v| version_roof(ladder, v, peak.as_ref().map(|c| c.value)))
        .collect();
    let steps = (0..versions.len())
        .filter_map(|child| {
            let parent = ladder.parent_of(child)?;
            Some(step(&versions, parent, child))
        })
        .collect();
    LadderRoofline {
        ceilings: peak
            .into_iter()
            .chain(device_ceilings(ladder, &versions))
            .collect(),
        devices: devices(ladder),
        versions,
        steps,
    }
}

/// The GPUs the ladder's profiles were taken on, in the order of their first version.
fn devices(ladder: &Ladder) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in ladder
        .versions
        .iter()
        .filter_map(|v| device_name(v.profile.as_ref()?))
    {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Per GPU the ladder's profiles were taken on: its datasheet's compute rates and the
/// memory ceilings of its first version whose export holds them.
fn device_ceilings(ladder: &Ladder, versions: &[VersionRoof]) -> Vec<Ceiling> {
    let mut out = Vec::new();
    for device in devices(ladder) {
        let on: Vec<usize> = (0..ladder.versions.len())
            .filter(|&i| {
                let p = ladder.versions[i].profile.as_ref();
                p.and_then(device_name).as_deref() == Some(device.as_str())
            })
            .collect();
        if let Some(d) = on
            .iter()
            .find_map(|&i| datasheet(ladder.versions[i].profile.as_ref()?))
        {
            out.extend(datasheet_ceilings(d, &device));
        }
        for level in Level::ALL {
            let first = on.iter().find_map(|&i| {
                let v = &versions[i];
                let c = v.point.as_ref()?.level(level)?.ceiling.clone()?;
                Some((v.id.as_str(), c))
            });
            if let Some((id, mut c)) = first {
                c.source = format!("{} (from {id}'s export)", c.source);
                c.device = Some(device.clone());
                out.push(c);
            }
        }
    }
    out
}

/// How the point moved from version `parent` to `child`.
pub fn step(versions: &[VersionRoof], parent: usize, child: usize) -> RoofStep {
    let a = versions.get(parent).and_then(|v| v.point.as_ref());
    let b = versions.get(child).and_then(|v| v.point.as_ref());
    let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) if x > 0.0 => Some(y / x),
        _ => None,
    };
    let gpus = gpus_apart(
        a.and_then(|p| p.device.clone()),
        b.and_then(|p| p.device.clone()),
    );
    RoofStep {
        parent,
        child,
        intensity_x: ratio(
            a.and_then(RoofPoint::dram_intensity),
            b.and_then(RoofPoint::dram_intensity),
        ),
        flops_x: ratio(a.map(|p| p.flop_per_s), b.map(|p| p.flop_per_s)).filter(|_| gpus.is_none()),
        gpus,
        before: a.and_then(|p| p.nearer),
        after: b.and_then(|p| p.nearer),
    }
}

/// How the point moved from version `ia` of ladder `la` to version `ib` of `lb` (one
/// ladder twice, or two exports' ladders), each judged against its own ladder's roofs.
pub fn step_between(la: &Ladder, ia: usize, lb: &Ladder, ib: usize) -> RoofStep {
    let side = |l: &Ladder, i: usize| {
        let peak = ladder_ceiling(l).map(|c| c.value);
        l.versions.get(i).map(|v| version_roof(l, v, peak))
    };
    let pair: Vec<VersionRoof> = [side(la, ia), side(lb, ib)]
        .into_iter()
        .map(|v| {
            v.unwrap_or_else(|| VersionRoof {
                id: String::new(),
                title: String::new(),
                baseline: false,
                point: None,
                no_point: Some("no such version".into()),
            })
        })
        .collect();
    RoofStep {
        parent: ia,
        child: ib,
        ..step(&pair, 0, 1)
    }
}

/// The ladder's own compute ceiling, its `peak_tflops`: the roof every version's nearer
/// roof is judged against.
fn ladder_ceiling(ladder: &Ladder) -> Option<Ceiling> {
    let t = ladder.peak_tflops.filter(|t| t.is_finite() && *t > 0.0)?;
    Some(Ceiling {
        roof: Roof::Compute,
        value: t * 1e12,
        label: format!("ladder {t:.0} TFLOP/s"),
        source: format!("peak_tflops in {}'s ladder.toml", ladder.name),
        device: None,
    })
}

fn datasheet_ceilings(d: &Datasheet, device: &str) -> Vec<Ceiling> {
    [
        ("fp16 tensor", d.fp16_tensor_tflops),
        ("fp32", d.fp32_tflops),
    ]
    .into_iter()
    .map(|(what, t)| Ceiling {
        roof: Roof::Compute,
        value: t * 1e12,
        label: format!("{} {what} {t:.0} TFLOP/s", d.device),
        source: format!("{} datasheet, dense {what}", d.device),
        device: Some(device.to_string()),
    })
    .collect()
}

/// One version's point, or why it has none. `peak` is the ladder's compute ceiling in
/// FLOP/s where it has one (else the datasheet's rate for the version's precision).
pub fn version_roof(ladder: &Ladder, v: &Version, peak: Option<f64>) -> VersionRoof {
    let (point, no_point) = match roof_point(ladder, v, peak) {
        Ok(p) => (Some(p), None),
        Err(why) => (None, Some(why)),
    };
    VersionRoof {
        id: v.id.clone(),
        title: v.title.clone(),
        baseline: v.baseline,
        point,
        no_point,
    }
}

fn roof_point(ladder: &Ladder, v: &Version, peak: Option<f64>) -> Result<RoofPoint, String> {
    let p = v.profile.as_ref().ok_or("no profile")?;
    let duration_ns = p
        .raw_value("gpu__time_duration.sum")
        .filter(|d| *d > 0.0)
        .ok_or("no gpu__time_duration.sum in its export")?;
    let (flops, flop_source) = match ladder.flops_of(v) {
        Some(f) if f > 0.0 => (f, FlopSource::Ladder),
        _ => counted_flops(p).ok_or(
            "no FLOP count: the ladder has no `flops` for it and its export no ncu FLOP counters (sm__sass_thread_inst_executed_op_*_pred_on.sum, sm__ops_path_tensor_src_*.sum)",
        )?,
    };
    let levels: Vec<LevelPoint> = Level::ALL
        .iter()
        .map(|&l| level_point(p, l, flops, duration_ns))
        .collect();
    if levels[0].bytes.is_none() {
        return Err(
            "no DRAM bytes in its export (dram__bytes_read.sum, dram__bytes_write.sum)".into(),
        );
    }
    let flop_per_s = flops / (duration_ns * 1e-9);
    let peak = peak.or_else(|| datasheet_peak(p));
    Ok(RoofPoint {
        flops,
        flop_source,
        duration_ns,
        flop_per_s,
        nearer: nearer(&levels, peak, flop_per_s),
        levels,
        device: device_name(p),
    })
}

/// The datasheet rate for the precision a launch used: fp16 tensor where it ran tensor
/// ops, else fp32.
fn datasheet_peak(p: &Profile) -> Option<f64> {
    let d = datasheet(p)?;
    let tensor = TENSOR_FLOP_COUNTERS
        .iter()
        .filter_map(|n| p.raw_value(n))
        .sum::<f64>();
    Some(
        if tensor > 0.0 {
            d.fp16_tensor_tflops
        } else {
            d.fp32_tflops
        } * 1e12,
    )
}

/// The binding roof: the lowest of the compute ceiling and every known level's
/// bandwidth × intensity.
fn nearer(levels: &[LevelPoint], peak: Option<f64>, achieved: f64) -> Option<RoofShare> {
    let memory = levels.iter().filter_map(|l| {
        let bw = l.ceiling.as_ref()?.value;
        Some((Roof::Memory(l.level), bw * l.intensity?))
    });
    peak.map(|p| (Roof::Compute, p))
        .into_iter()
        .chain(memory)
        .filter(|(_, a)| a.is_finite() && *a > 0.0)
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .map(|(roof, attainable)| RoofShare {
            roof,
            attainable,
            share: achieved / attainable,
        })
}

/// Bytes per L2 sector.
const SECTOR: f64 = 32.0;

/// ncu's tensor-pipe operation counters (one FMA counts two), summed for a loose export.
pub const TENSOR_FLOP_COUNTERS: [&str; 6] = [
    "sm__ops_path_tensor_src_fp16.sum",
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
    "sm__ops_path_tensor_src_fp64.sum",
    "sm__ops_path_tensor_src_fp8_sparsity_off.sum",
    "sm__ops_path_tensor_src_fp8_sparsity_on.sum",
];

/// ncu's per-thread SIMT floating-point instruction counters and the FLOP each counts.
pub const SIMT_FLOP_COUNTERS: [(&str, f64); 9] = [
    ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1.0),
    ("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 1.0),
    ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 2.0),
    ("sm__sass_thread_inst_executed_op_hadd_pred_on.sum", 2.0),
    ("sm__sass_thread_inst_executed_op_hmul_pred_on.sum", 2.0),
    ("sm__sass_thread_inst_executed_op_hfma_pred_on.sum", 4.0),
    ("sm__sass_thread_inst_executed_op_dadd_pred_on.sum", 1.0),
    ("sm__sass_thread_inst_executed_op_dmul_pred_on.sum", 1.0),
    ("sm__sass_thread_inst_executed_op_dfma_pred_on.sum", 2.0),
];

/// The FLOP of a launch as ncu counted them, for an export no ladder gives a count for:
/// the SIMT instruction counters (FMA twice, half2 twice again) and the tensor-pipe
/// operation counters, those present; `None` where none is, or all present count
/// nothing.
pub fn counted_flops(p: &Profile) -> Option<(f64, FlopSource)> {
    let simt = SIMT_FLOP_COUNTERS
        .iter()
        .filter_map(|&(n, per)| p.raw_value(n).map(|x| (n, x * per)));
    let tensor = TENSOR_FLOP_COUNTERS
        .iter()
        .filter_map(|&n| p.raw_value(n).map(|x| (n, x)));
    let found: Vec<(&str, f64)> = simt.chain(tensor).collect();
    let total: f64 = found.iter().map(|(_, x)| x).sum();
    if total <= 0.0 {
        return None;
    }
    let names = found
        .iter()
        .filter(|(_, x)| *x > 0.0)
        .map(|(n, _)| n.to_string())
        .collect();
    Some((total, FlopSource::Counters(names)))
}

/// A level's bytes, intensity and bandwidth ceiling from one export.
fn level_point(p: &Profile, level: Level, flops: f64, duration_ns: f64) -> LevelPoint {
    let (bytes, ceiling) = match level {
        Level::Dram => dram(p),
        Level::L2 => l2(p),
        Level::L1 => l1(p, duration_ns),
    };
    let missing = match (&bytes, &ceiling) {
        (Err(b), Err(c)) => Some(format!("{b}; {c}")),
        (Err(e), _) | (_, Err(e)) => Some(e.clone()),
        _ => None,
    };
    let bytes = bytes.ok();
    LevelPoint {
        level,
        bytes,
        intensity: bytes.filter(|b| *b > 0.0).map(|b| flops / b),
        ceiling: ceiling.ok(),
        missing,
    }
}

type Read = (Result<f64, String>, Result<Ceiling, String>);

/// A metric of the export, or a sentence naming it as missing.
fn metric(p: &Profile, name: &str) -> Result<f64, String> {
    p.raw_value(name)
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("no {name} in its export"))
}

fn memory_ceiling(level: Level, bytes_per_s: f64, source: String) -> Ceiling {
    Ceiling {
        roof: Roof::Memory(level),
        value: bytes_per_s,
        label: format!("{} {:.2} TB/s", level.name(), bytes_per_s / 1e12),
        source,
        device: None,
    }
}

fn dram(p: &Profile) -> Read {
    let bytes =
        metric(p, "dram__bytes_read.sum").and_then(|r| Ok(r + metric(p, "dram__bytes_write.sum")?));
    let ceiling = metric(p, "dram__bytes.sum.peak_sustained").and_then(|per_cycle| {
        let hz = metric(p, "dram__cycles_elapsed.avg.per_second")?;
        Ok(memory_ceiling(
            Level::Dram,
            per_cycle * hz,
            "dram__bytes.sum.peak_sustained × dram__cycles_elapsed.avg.per_second".into(),
        ))
    });
    (bytes, ceiling)
}

fn l2(p: &Profile) -> Read {
    let sectors = metric(p, "lts__t_sectors.sum");
    let bytes = sectors.clone().map(|s| s * SECTOR);
    let ceiling = sectors.and_then(|sum| {
        let avg = metric(p, "lts__t_sectors.avg").and_then(|a| {
            (a > 0.0)
                .then_some(a)
                .ok_or_else(|| "lts__t_sectors.avg is 0: the L2 slices cannot be counted".to_string())
        })?;
        let per_slice = metric(p, "lts__t_sectors.avg.peak_sustained")?;
        let hz = metric(p, "lts__cycles_elapsed.avg.per_second")?;
        let slices = (sum / avg).round();
        Ok(memory_ceiling(
            Level::L2,
            per_slice * SECTOR * slices * hz,
            format!("lts__t_sectors.avg.peak_sustained × 32 B × {slices:.0} slices (lts__t_sectors.sum / .avg) × lts__cycles_elapsed.avg.per_second"),
        ))
    });
    (bytes, ceiling)
}

const L1_BYTES: &str = "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum";

fn l1(p: &Profile, duration_ns: f64) -> Read {
    let bytes = metric(p, &format!("{L1_BYTES}.per_second")).map(|r| r * duration_ns * 1e-9);
    let ceiling = metric(p, &format!("{L1_BYTES}.peak_sustained")).and_then(|per_cycle| {
        let hz = metric(p, "l1tex__cycles_elapsed.avg.per_second")?;
        Ok(memory_ceiling(
            Level::L1,
            per_cycle * hz,
            format!(
                "{L1_BYTES}.peak_sustained × l1tex__cycles_elapsed.avg.per_second (LSU loads only)"
            ),
        ))
    });
    (bytes, ceiling)
}
