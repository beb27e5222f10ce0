//! The SASS listing of a version as the source view orders it: its lines by stall
//! samples or by address, and where the hot spots are. Shared by the state (cursor
//! moves) and the source view (drawing), so neither imports the other.

use super::state::SourceSort;
use crate::ncu::{SassLine, SourceListing, StallReason};

/// Stall samples of a line: everything but `selected` (the warp issued).
pub fn stall_samples(l: &SassLine) -> u64 {
    l.samples - l.stall(StallReason::Selected) as u64
}

/// The listing's lines in display order (indices into its lines).
pub fn rows(s: &SourceListing, sort: SourceSort) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..s.lines.len()).collect();
    if sort == SourceSort::Samples {
        idx.sort_by(|&a, &b| {
            stall_samples(&s.lines[b])
                .cmp(&stall_samples(&s.lines[a]))
                .then(a.cmp(&b))
        });
    }
    idx
}

/// Positions (in `rows`) of the hot spots: lines with at least 1 % of the stall samples.
pub fn hot_positions(s: &SourceListing, rows: &[usize]) -> Vec<usize> {
    let total: u64 = s.lines.iter().map(stall_samples).sum();
    rows.iter()
        .enumerate()
        .filter(|&(_, &i)| total > 0 && stall_samples(&s.lines[i]) * 100 >= total)
        .map(|(p, _)| p)
        .collect()
}
