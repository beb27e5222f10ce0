//! The bottleneck trail: the label of every version of a ladder in order, each step
//! judged against the version it was built on (its parent) by the noise rule.

use super::VersionAnalysis;
use super::matrix::{Bottleneck, NoLabel, reason_samples, sampled_stalls};
use super::noise;
use crate::model::Ladder;
use serde::Serialize;

/// What a step of the trail says about its label against its parent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepVerdict {
    /// No labelled version before it to compare with.
    Start,
    /// The same top cell as the parent's.
    Same,
    /// The top cell changed, and it leads the parent's top cell by z ≥ 2 in this
    /// version's samples.
    Moved,
    /// The top cell changed, but its lead over the parent's top cell is within sampling
    /// noise: not a move.
    WithinNoise,
    /// The reason changed between labels of which one is a reason alone (no source
    /// page: the raw page's shares or a Visual Profiler launch's percentages), and no PC
    /// samples stand behind this version's shares to weigh it: not a move.
    Unweighed,
    /// This version has no label.
    NoLabel,
}

/// A stall reason with its share of all warp samples (0..1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReasonShare {
    pub reason: crate::ncu::StallReason,
    pub share: f64,
}

/// One step of the bottleneck trail.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrailStep {
    /// Index into the ladder's versions.
    pub index: usize,
    pub id: String,
    /// The version it was built on (its parent), labelled or not.
    pub parent: Option<String>,
    /// The labelled version this step's label was compared with, where that is not its
    /// parent (the parent has no label: the nearest labelled ancestor); `None` where it
    /// is the parent or there is none.
    pub compared_with: Option<String>,
    /// The version was built on another than the one before it.
    pub branch: bool,
    /// The label (`barrier @ WARPGROUP`, or `A ≈ B` for a near-tie); `None` where the
    /// version has none (see `no_label`).
    pub label: Option<String>,
    /// The top cell and its runner-up are within sampling noise of each other.
    pub near_tie: bool,
    /// The label's top cell's share of all warp samples, where there is a label.
    pub share: Option<f64>,
    /// The overall top stall reason where it is not the label's (the label names a
    /// place; the top reason may be spread over many instructions), with its share.
    pub top_reason: Option<ReasonShare>,
    pub verdict: StepVerdict,
    /// The lead of this version's top cell over the parent's top cell, in this version's
    /// samples (standard deviations), where the top cell changed.
    pub z: Option<f64>,
    pub no_label: Option<NoLabel>,
    /// A move (`verdict` is `moved`).
    #[serde(skip)]
    pub changed: bool,
}

impl TrailStep {
    /// The version the step's label was compared with (its parent, or the nearest
    /// labelled ancestor), where there was one.
    pub fn judged_against(&self) -> Option<&str> {
        match self.verdict {
            StepVerdict::Start | StepVerdict::NoLabel => None,
            _ => self.compared_with.as_deref().or(self.parent.as_deref()),
        }
    }
}

/// The trail over the ladder's own versions (baselines stand apart).
pub fn trail(ladder: &Ladder, analyses: &[VersionAnalysis]) -> Vec<TrailStep> {
    let mut steps = Vec::new();
    for (index, v) in ladder.versions.iter().enumerate() {
        if v.baseline {
            continue;
        }
        let a = &analyses[index];
        let parent = labelled_ancestor(ladder, analyses, index);
        let (verdict, z) = match (&a.bottleneck, parent) {
            (None, _) => (StepVerdict::NoLabel, None),
            (Some(_), None) => (StepVerdict::Start, None),
            (Some(b), Some(p)) => {
                let before = analyses[p].bottleneck.as_ref().expect("labelled ancestor");
                if b.is_reason_alone() || before.is_reason_alone() {
                    reason_step(a, b, before)
                } else if b.top.same_place(&before.top) {
                    (StepVerdict::Same, None)
                } else {
                    let m = a.matrix.as_ref().expect("a cell label comes from a matrix");
                    let old = m.count(before.reason(), before.opcode());
                    let z = noise::lead_z(b.top.samples, old, m.stall_samples);
                    let verdict = if z >= noise::Z_MIN {
                        StepVerdict::Moved
                    } else {
                        StepVerdict::WithinNoise
                    };
                    (verdict, Some(z).filter(|z| z.is_finite()))
                }
            }
        };
        steps.push(TrailStep {
            index,
            id: v.id.clone(),
            parent: ladder
                .parent_of(index)
                .map(|p| ladder.versions[p].id.clone()),
            compared_with: parent
                .filter(|&p| Some(p) != ladder.parent_of(index))
                .map(|p| ladder.versions[p].id.clone()),
            branch: ladder.branches_at(index),
            label: a.bottleneck.as_ref().map(|b| b.label()),
            near_tie: a.bottleneck.as_ref().is_some_and(|b| b.near_tie),
            share: a.bottleneck.as_ref().map(|b| b.top.share),
            top_reason: a
                .other_top_reason()
                .map(|(reason, share)| ReasonShare { reason, share }),
            verdict,
            z,
            no_label: a.no_label,
            changed: verdict == StepVerdict::Moved,
        });
    }
    steps
}

/// A step where one label or both are a reason alone: judged by reason, the lead of this
/// version's reason over the ancestor's in this version's samples (its source page's
/// rows, else its raw page's PC samples); without samples, unweighed, never a move.
fn reason_step(
    a: &VersionAnalysis,
    b: &Bottleneck,
    before: &Bottleneck,
) -> (StepVerdict, Option<f64>) {
    if b.reason() == before.reason() {
        return (StepVerdict::Same, None);
    }
    let counts = match &a.matrix {
        Some(m) => {
            let rows = m.reasons();
            let of = |r| rows.iter().find(|(x, _)| *x == r).map_or(0, |(_, n)| *n);
            Some((of(b.reason()), of(before.reason()), m.stall_samples))
        }
        None => a.stalls.as_ref().and_then(|s| {
            sampled_stalls(s).map(|n| {
                (
                    reason_samples(s, b.reason()),
                    reason_samples(s, before.reason()),
                    n,
                )
            })
        }),
    };
    match counts {
        None => (StepVerdict::Unweighed, None),
        Some((new, old, n)) => {
            let z = noise::lead_z(new, old, n);
            let verdict = if z >= noise::Z_MIN {
                StepVerdict::Moved
            } else {
                StepVerdict::WithinNoise
            };
            (verdict, Some(z).filter(|z| z.is_finite()))
        }
    }
}

/// The nearest version up the parent chain that has a label.
fn labelled_ancestor(ladder: &Ladder, analyses: &[VersionAnalysis], i: usize) -> Option<usize> {
    let mut at = ladder.parent_of(i);
    // A chain never runs longer than the ladder (a cycle of parents would).
    for _ in 0..ladder.versions.len() {
        let p = at?;
        if analyses[p].bottleneck.is_some() {
            return Some(p);
        }
        at = ladder.parent_of(p);
    }
    None
}
