//! What the numbers say: per version the catalogue's values, the stall breakdown, the
//! hot instruction classes, the (reason × opcode) table and the bottleneck label read
//! from it; per ladder the bottleneck trail.

pub mod catalogue;
pub mod compare;
mod matrix;
pub mod noise;
pub mod occupancy;
pub mod sass;
mod shown;
pub mod speed;
mod stalls;
mod trail;

pub use catalogue::{Better, Group, Kind, METRICS, MetricDef, MetricId};
pub use compare::{Comparison, Verdict, compare};
pub use matrix::{Bottleneck, Cell, EXPORT_SOURCE, NoLabel, StallMatrix};
pub use shown::Shown;
pub use stalls::{OpcodeStat, StallBreakdown, StallSource, hot_ops};
pub use trail::{StepVerdict, TrailStep};

use crate::model::{Ladder, Profile, Version};
use catalogue::Src;
use serde::Serialize;

/// Everything stallscope derives for one version.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VersionAnalysis {
    /// Indexed by [`MetricId`]; `None` is unknown, never zero.
    pub values: Vec<Option<f64>>,
    pub stalls: Option<StallBreakdown>,
    /// Instruction classes by stall samples, hottest first.
    pub hot_ops: Vec<OpcodeStat>,
    /// The (reason × opcode) table of the source page, where there is one.
    pub matrix: Option<StallMatrix>,
    /// The hottest cell of `matrix`; `None` with the reason in `no_label`.
    pub bottleneck: Option<Bottleneck>,
    pub no_label: Option<NoLabel>,
    /// What limits occupancy, from the launch and occupancy sections.
    pub occupancy: Option<occupancy::OccupancyLimit>,
}

impl VersionAnalysis {
    pub fn get(&self, id: MetricId) -> Option<f64> {
        self.values.get(id as usize).copied().flatten()
    }

    /// The overall top stall reason and its share (the figure ncu itself shows).
    pub fn top_reason(&self) -> Option<(crate::ncu::StallReason, f64)> {
        let s = self.stalls.as_ref()?;
        let r = s.dominant()?;
        Some((r, s.share(r)))
    }
}

/// The analysis of every version of a ladder, and its trail.
#[derive(Debug, Clone, Serialize)]
pub struct LadderAnalysis {
    pub versions: Vec<VersionAnalysis>,
    pub trail: Vec<TrailStep>,
}

/// The analysis of every version of `ladder`, its run metrics read from the results
/// `shown`.
pub fn analyse_ladder(ladder: &Ladder, shown: Shown) -> LadderAnalysis {
    let versions: Vec<VersionAnalysis> = ladder
        .versions
        .iter()
        .map(|v| analyse(ladder, v, shown))
        .collect();
    let trail = trail::trail(ladder, &versions);
    LadderAnalysis { versions, trail }
}

/// What stallscope derives for version `v` of `ladder`, its run metrics read from the
/// result `shown`.
pub fn analyse(ladder: &Ladder, v: &Version, shown: Shown) -> VersionAnalysis {
    let mut values = vec![None; METRICS.len()];
    if let Some(p) = &v.profile {
        for def in METRICS {
            values[def.id as usize] = def.sources.iter().find_map(|s| read(p, s));
        }
        values[MetricId::SharedPerBlock as usize] = shared_per_block(p);
    }
    let flops = ladder.flops_of(v);
    if let Some(run) = shown.run(ladder, v).filter(|r| r.median_us.is_some()) {
        let us = run.median_us.expect("filtered");
        values[MetricId::RunTime as usize] = Some(us * 1e3);
        values[MetricId::RunTflops as usize] = run.tflops.or(flops.map(|f| f / us / 1e6));
        values[MetricId::RunClock as usize] = run.sm_clock_mhz.map(|m| m * 1e6);
        values[MetricId::RunPower as usize] = run.power_w;
        values[MetricId::RunEnergy as usize] = run.energy_mj;
        values[MetricId::RunEfficiency as usize] = run.tflops_per_watt();
    }
    let tflops = match (flops, values[MetricId::Duration as usize]) {
        (Some(f), Some(ns)) if ns > 0.0 => Some(f / ns / 1e3),
        _ => None,
    };
    values[MetricId::Tflops as usize] = tflops;
    // Each share of the ceiling from its own throughput: a row never mixes the run's
    // figure with ncu's.
    let of_ceiling = |t: Option<f64>| match (t, ladder.peak_tflops) {
        (Some(t), Some(peak)) if peak > 0.0 => Some(100.0 * t / peak),
        _ => None,
    };
    values[MetricId::RunPctOfCeiling as usize] = of_ceiling(values[MetricId::RunTflops as usize]);
    values[MetricId::PctOfCeiling as usize] = of_ceiling(tflops);

    let stalls = v.profile.as_ref().and_then(StallBreakdown::from_profile);
    let source = v.profile.as_ref().and_then(|p| p.source.as_ref());
    let hot_ops = source
        .map(|s| stalls::hot_ops(&s.summary))
        .unwrap_or_default();
    let matrix = source.map(|_| StallMatrix::from_ops(&hot_ops));
    let label = match (&v.profile, &matrix) {
        (None, _) => Err(NoLabel::NoProfile),
        (Some(_), None) => Err(NoLabel::NoSourcePage),
        (Some(_), Some(m)) => m.bottleneck(),
    };
    VersionAnalysis {
        values,
        stalls,
        hot_ops,
        matrix,
        no_label: label.as_ref().err().copied(),
        bottleneck: label.ok(),
        occupancy: v.profile.as_ref().and_then(occupancy::OccupancyLimit::of),
    }
}

/// Figures no kernel gives, one line each with what to check: a throughput above the
/// ladder's ceiling (a `% of ceiling` past 100 comes from a FLOP count or a ceiling that
/// is wrong far more often than from a kernel beating its GPU's practical peak).
pub fn implausible(ladder: &Ladder, a: &LadderAnalysis) -> Vec<String> {
    let Some(peak) = ladder.peak_tflops else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (v, an) in ladder.versions.iter().zip(&a.versions) {
        for (share, tflops) in [
            (MetricId::PctOfCeiling, MetricId::Tflops),
            (MetricId::RunPctOfCeiling, MetricId::RunTflops),
        ] {
            let (Some(pct), Some(t)) = (an.get(share), an.get(tflops)) else {
                continue;
            };
            if pct > 100.0 {
                let flops = match ladder.flops_of(v) {
                    Some(f) => format!("{f:e}"),
                    None => "none".to_string(),
                };
                out.push(format!(
                    "{} of {}: {} {t:.1} is {pct:.0} % of the ladder's ceiling ({peak} TFLOPS), past what its GPU can do: check its FLOP count of one launch ({flops}: --flops, `flops` in ladder.toml) and the ceiling (--peak-tflops, `peak_tflops`)",
                    v.id,
                    ladder.name,
                    tflops.def().name,
                ));
            }
        }
    }
    out
}

fn read(p: &Profile, src: &Src) -> Option<f64> {
    match *src {
        Src::Raw(name) => p.raw_value(name),
        Src::Detail(section, name) => p.detail_value(section, name),
    }
}

fn shared_per_block(p: &Profile) -> Option<f64> {
    let raw = (
        p.raw_value("launch__shared_mem_per_block_static"),
        p.raw_value("launch__shared_mem_per_block_dynamic"),
    );
    let details = (
        p.detail_value("Launch Statistics", "Static Shared Memory Per Block"),
        p.detail_value("Launch Statistics", "Dynamic Shared Memory Per Block"),
    );
    match (raw, details) {
        ((Some(s), Some(d)), _) | (_, (Some(s), Some(d))) => Some(s + d),
        _ => None,
    }
}
