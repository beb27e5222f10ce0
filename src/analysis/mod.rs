//! What the numbers say: per version the catalogue's values, the stall breakdown, the
//! hot instruction classes and the bottleneck label; per ladder the bottleneck trail.

pub mod catalogue;
pub mod compare;
pub mod speed;
mod stalls;

pub use catalogue::{Better, Group, Kind, METRICS, MetricDef, MetricId};
pub use compare::{Comparison, Verdict, compare};
pub use stalls::{Bottleneck, OpcodeStat, StallBreakdown, StallSource, hot_ops};

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
    pub bottleneck: Option<Bottleneck>,
}

impl VersionAnalysis {
    pub fn get(&self, id: MetricId) -> Option<f64> {
        self.values.get(id as usize).copied().flatten()
    }
}

/// The analysis of every version of a ladder, and its trail.
#[derive(Debug, Clone, Serialize)]
pub struct LadderAnalysis {
    pub versions: Vec<VersionAnalysis>,
    pub trail: Vec<TrailStep>,
}

/// One step of the bottleneck trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrailStep {
    /// Index into the ladder's versions.
    pub index: usize,
    pub id: String,
    /// `reason @ OPCODE`, or `None` where the profile has no stall data.
    pub label: Option<String>,
    /// The label differs from the previous step's.
    pub changed: bool,
}

pub fn analyse_ladder(ladder: &Ladder) -> LadderAnalysis {
    let versions: Vec<VersionAnalysis> =
        ladder.versions.iter().map(|v| analyse(ladder, v)).collect();
    let trail = trail(ladder, &versions);
    LadderAnalysis { versions, trail }
}

/// The trail over the ladder's own versions (baselines stand apart).
pub fn trail(ladder: &Ladder, analyses: &[VersionAnalysis]) -> Vec<TrailStep> {
    let mut steps: Vec<TrailStep> = Vec::new();
    for (index, (v, a)) in ladder.versions.iter().zip(analyses).enumerate() {
        if v.baseline {
            continue;
        }
        let label = a.bottleneck.as_ref().map(Bottleneck::to_string);
        let previous = steps.iter().rev().find_map(|s| s.label.as_ref());
        let changed = matches!((&label, previous), (Some(l), Some(p)) if l != p);
        steps.push(TrailStep {
            index,
            id: v.id.clone(),
            label,
            changed,
        });
    }
    steps
}

pub fn analyse(ladder: &Ladder, v: &Version) -> VersionAnalysis {
    let mut values = vec![None; METRICS.len()];
    if let Some(p) = &v.profile {
        for def in METRICS {
            values[def.id as usize] = def.sources.iter().find_map(|s| read(p, s));
        }
        values[MetricId::SharedPerBlock as usize] = shared_per_block(p);
    }
    let flops = ladder.flops_of(v);
    if let Some(run) = ladder.reference_run(v).filter(|r| r.median_us.is_some()) {
        let us = run.median_us.expect("filtered");
        values[MetricId::RunTime as usize] = Some(us * 1e3);
        values[MetricId::RunTflops as usize] = run.tflops.or(flops.map(|f| f / us / 1e6));
    }
    let tflops = match (flops, values[MetricId::Duration as usize]) {
        (Some(f), Some(ns)) if ns > 0.0 => Some(f / ns / 1e3),
        _ => None,
    };
    values[MetricId::Tflops as usize] = tflops;
    let best = values[MetricId::RunTflops as usize].or(tflops);
    values[MetricId::PctOfCeiling as usize] = match (best, ladder.peak_tflops) {
        (Some(t), Some(peak)) if peak > 0.0 => Some(100.0 * t / peak),
        _ => None,
    };

    let stalls = v.profile.as_ref().and_then(StallBreakdown::from_profile);
    let hot_ops = v
        .profile
        .as_ref()
        .and_then(|p| p.source.as_ref())
        .map(|s| stalls::hot_ops(&s.summary))
        .unwrap_or_default();
    let bottleneck = stalls.as_ref().and_then(|s| Bottleneck::find(s, &hot_ops));
    VersionAnalysis {
        values,
        stalls,
        hot_ops,
        bottleneck,
    }
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
