//! The analysis of a whole ladder: every version's, the bottleneck trail, and the
//! figures no kernel gives.

use super::catalogue::MetricId;
use super::pipeline::{self, LadderPipeline};
use super::shown::Shown;
use super::trail::{self, TrailStep};
use super::version::{VersionAnalysis, analyse};
use crate::model::Ladder;
use serde::Serialize;

/// The analysis of every version of a ladder, and its trail.
#[derive(Debug, Clone, Serialize)]
pub struct LadderAnalysis {
    pub versions: Vec<VersionAnalysis>,
    pub trail: Vec<TrailStep>,
    /// The versions' pipeline traces at the shape shown, and the steps between them.
    pub pipeline: LadderPipeline,
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
    let pipeline = pipeline::ladder_pipeline(ladder, shown);
    LadderAnalysis {
        versions,
        trail,
        pipeline,
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
