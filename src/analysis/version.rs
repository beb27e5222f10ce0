//! What stallscope derives for one version: the catalogue's values, its run's figures,
//! the stall breakdown, the hot instruction classes, the (reason × opcode) table and the
//! bottleneck label read from it, and what limits occupancy.

use super::catalogue::{Arch, METRICS, MetricId, Src};
use super::matrix::{Bottleneck, NoLabel, StallMatrix};
use super::occupancy;
use super::shown::Shown;
use super::stalls::{self, OpcodeStat, StallBreakdown};
use crate::model::{Ladder, Profile, Version};
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
    /// A stall reason's share of all warp samples as shown beside the cells: from the
    /// source page's table where there is one, else from the stall breakdown.
    pub fn reason_share(&self, r: crate::ncu::StallReason) -> Option<f64> {
        match &self.matrix {
            Some(m) => Some(m.reason_share(r)),
            None => self.stalls.as_ref().and_then(|s| s.known_share(r)),
        }
    }

    /// The top stall reason with its share where it is not the label's reason (the label
    /// names a place, the hottest cell; the top reason may be spread over many): what
    /// the trail says beside the label.
    pub fn other_top_reason(&self) -> Option<(crate::ncu::StallReason, f64)> {
        let b = self.bottleneck.as_ref()?;
        self.top_reason().filter(|(r, _)| *r != b.reason())
    }

    pub fn get(&self, id: MetricId) -> Option<f64> {
        self.values.get(id as usize).copied().flatten()
    }

    /// Why this version shows no SASS listing, and what to export for one where a tool
    /// can: every view that would show the listing says it this way.
    pub fn no_sass_reason(&self) -> String {
        match self.stalls.as_ref().map(|s| s.source) {
            Some(super::StallSource::LaunchPercentages) => {
                super::matrix::NO_SASS_LEGACY.to_string()
            }
            _ => format!(
                "no source page (export it with {})",
                super::matrix::EXPORT_SOURCE
            ),
        }
    }

    /// A headline signal of this version, in percent: a stall reason's share where its
    /// breakdown can hold that reason (unknown, not 0, where it cannot), or a metric.
    pub fn headline(&self, h: &super::catalogue::Headline) -> Option<f64> {
        match *h {
            super::catalogue::Headline::Stall(r, _) => self
                .stalls
                .as_ref()
                .and_then(|s| s.known_share(r))
                .map(|x| x * 100.0),
            super::catalogue::Headline::Metric(m, _) => self.get(m),
        }
    }

    /// The overall top stall reason and its share of all warp samples: from the source
    /// page's table where there is one (the page and the denominator of its cells, so no
    /// cell exceeds it), else from the stall breakdown.
    pub fn top_reason(&self) -> Option<(crate::ncu::StallReason, f64)> {
        if let Some(top) = self.matrix.as_ref().and_then(StallMatrix::top_reason) {
            return Some(top);
        }
        let s = self.stalls.as_ref()?;
        let r = s.dominant()?;
        Some((r, s.share(r)))
    }
}

/// What stallscope derives for version `v` of `ladder`, its run metrics read from the
/// result `shown`.
pub fn analyse(ladder: &Ladder, v: &Version, shown: Shown) -> VersionAnalysis {
    let mut values = vec![None; METRICS.len()];
    if let Some(p) = &v.profile {
        let arch = Arch::of(p);
        for def in METRICS {
            values[def.id as usize] = def.sources_on(arch).find_map(|s| read(p, s));
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
        // No source page: the top stall reason of the shares, marked as a reason alone.
        (Some(_), None) => stalls
            .as_ref()
            .and_then(Bottleneck::from_stall_shares)
            .ok_or(NoLabel::NoSourcePage),
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

fn read(p: &Profile, src: &Src) -> Option<f64> {
    match *src {
        Src::Raw(name) | Src::RawOn(_, name) => p.raw_value(name),
        Src::RawMax(_, names) => names
            .iter()
            .filter_map(|n| p.raw_value(n))
            .max_by(f64::total_cmp),
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
    let nvvp = (
        p.detail_value(crate::ncu::nvvp::SECTION, "Static Shared Memory"),
        p.detail_value(crate::ncu::nvvp::SECTION, "Dynamic Shared Memory"),
    );
    match (raw, details, nvvp) {
        ((Some(s), Some(d)), _, _) | (_, (Some(s), Some(d)), _) | (_, _, (Some(s), Some(d))) => {
            Some(s + d)
        }
        _ => None,
    }
}
