//! Which versions and stall reasons a report shows, in the order it shows them.

use crate::analysis::VersionAnalysis;
use crate::model::Ladder;
use crate::ncu::StallReason;

/// Stall reasons worth a row: present in some version, largest first.
pub fn stall_rows(versions: &[VersionAnalysis]) -> Vec<StallReason> {
    let max_share = |r: StallReason| {
        versions
            .iter()
            .filter_map(|v| v.stalls.as_ref().map(|s| s.share(r)))
            .fold(0.0f64, f64::max)
    };
    let mut reasons: Vec<(StallReason, f64)> = StallReason::ALL
        .iter()
        .map(|&r| (r, max_share(r)))
        .filter(|(_, s)| *s >= 0.005)
        .collect();
    reasons.sort_by(|x, y| y.1.total_cmp(&x.1));
    reasons.into_iter().map(|(r, _)| r).collect()
}

/// Versions in display order: the ladder's own first, then the baselines.
pub fn display_order(ladder: &Ladder) -> Vec<usize> {
    let (mut own, base): (Vec<usize>, Vec<usize>) =
        (0..ladder.versions.len()).partition(|&i| !ladder.versions[i].baseline);
    own.extend(base);
    own
}
