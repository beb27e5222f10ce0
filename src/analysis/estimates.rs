//! What ncu promised, what the step got: for every step (parent → child) the parent's
//! rule findings with an estimated speedup that the child resolved (the rule no longer
//! fires, or its estimate fell by more than half), ncu's largest such estimate beside
//! the step's measured change in time, and a ladder-wide table of them, so a reader sees
//! how far ncu's estimates can be trusted on a ladder.
//!
//! ncu's "Estimated Speedup" is read as the share of the launch's time the fix would
//! save (a 40 % estimate: the time falls by 40 %); the measured change is read the same
//! way, `1 − t_child / t_parent`. Times come from the bundled runs at the ladder's
//! reference shape (stallscope's paired rounds, with its verdict), else from the two
//! profiles' ncu durations (one launch each, no verdict), and the row says which. Two
//! profiles taken on different GPUs give no change in time: their clocks and memories
//! differ, so their durations do not measure the step.

use super::roofline::{device_name, gpus_apart};
use super::shown::Shown;
use super::speed;
use crate::model::{Ladder, Profile};
use crate::ncu::RuleFinding;
use serde::Serialize;

/// A measured cut under this share of the time is no gain (ncu durations, which carry
/// no interval).
pub const NO_GAIN: f64 = 0.01;

/// What became of a parent's finding in the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// The rule no longer fires.
    Gone,
    /// It fires with less than half the estimate.
    Halved,
}

/// One finding of the parent that the child resolved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resolved {
    pub section: String,
    pub rule: String,
    /// The parent's estimate, percent of its time (the largest of the rule's findings).
    pub estimate_pct: f64,
    /// The child's estimate for the same rule, where it still fires.
    pub child_pct: Option<f64>,
    pub fate: Fate,
}

/// Where a step's measured change in time came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "from")]
pub enum TimeSource {
    /// stallscope's runs at this shape, rounds paired; with its verdict.
    Runs { shape: String, verdict: String },
    /// The two profiles' ncu durations (one launch each): no run of both exists.
    NcuDurations,
}

/// The step's measured change in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    /// The share of the parent's time the child saved, percent (negative: slower).
    pub cut_pct: f64,
    pub source: TimeSource,
}

/// How the measured cut compares with ncu's largest resolved estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The time fell by at least half the estimate.
    Delivered,
    /// It fell, by less than half the estimate.
    Partly,
    /// It did not fall (slower, level, or under [`NO_GAIN`]).
    Nothing,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Partly => "partly",
            Outcome::Nothing => "nothing",
        }
    }
}

/// One step's resolved findings and what the step got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepEstimates {
    /// Indices into the ladder's versions, and their ids.
    pub parent: usize,
    pub child: usize,
    pub parent_id: String,
    pub child_id: String,
    /// Largest estimate first.
    pub resolved: Vec<Resolved>,
    pub measured: Option<Measured>,
    /// The parent's and the child's GPUs where their profiles name two different ones
    /// (and so, without runs of both, no change in time is measured).
    pub gpus: Option<(String, String)>,
    /// `None` where nothing was resolved or the change is unknown.
    pub outcome: Option<Outcome>,
}

impl StepEstimates {
    /// ncu's largest estimate among the resolved findings, percent.
    pub fn largest(&self) -> Option<f64> {
        self.resolved.first().map(|r| r.estimate_pct)
    }
}

/// The ladder-wide table: every step, and a tally of the steps that resolved findings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EstimatesTable {
    pub steps: Vec<StepEstimates>,
    pub tally: Tally,
}

/// How the steps that resolved a finding fared against ncu's largest estimate.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Tally {
    /// Steps with a resolved finding and a known change in time.
    pub judged: usize,
    pub delivered: usize,
    pub partly: usize,
    pub nothing: usize,
    /// Median of measured cut over largest estimate among the judged steps.
    pub median_ratio: Option<f64>,
}

/// The findings of a profile with an estimate, one per (section, rule): the largest.
fn estimates(p: &Profile) -> Vec<(&str, &str, f64)> {
    let mut out: Vec<(&str, &str, f64)> = Vec::new();
    let with: Vec<&RuleFinding> = p.rules.iter().filter(|r| r.speedup_pct.is_some()).collect();
    for r in with {
        let pct = r.speedup_pct.unwrap_or(0.0);
        match out
            .iter_mut()
            .find(|(s, n, _)| *s == r.section && *n == r.rule)
        {
            Some(e) => e.2 = e.2.max(pct),
            None => out.push((&r.section, &r.rule, pct)),
        }
    }
    out
}

/// The parent's findings (with an estimate above zero) that the child resolved, largest
/// first.
pub fn resolved(parent: &Profile, child: &Profile) -> Vec<Resolved> {
    let after = estimates(child);
    let fired = |section: &str, rule: &str| {
        child
            .rules
            .iter()
            .any(|r| r.section == section && r.rule == rule)
    };
    let mut out: Vec<Resolved> = estimates(parent)
        .into_iter()
        .filter(|(_, _, pct)| *pct > 0.0)
        .filter_map(|(section, rule, pct)| {
            let child_pct = after
                .iter()
                .find(|(s, n, _)| *s == section && *n == rule)
                .map(|e| e.2);
            let fate = match child_pct {
                Some(c) if c < pct / 2.0 => Fate::Halved,
                Some(_) => return None,
                None if fired(section, rule) => return None,
                None => Fate::Gone,
            };
            Some(Resolved {
                section: section.to_string(),
                rule: rule.to_string(),
                estimate_pct: pct,
                child_pct,
                fate,
            })
        })
        .collect();
    out.sort_by(|a, b| b.estimate_pct.total_cmp(&a.estimate_pct));
    out
}

/// The step's measured change: the runs at the reference shape, else the ncu durations.
pub fn measured(ladder: &Ladder, parent: usize, child: usize) -> Option<Measured> {
    measured_between(ladder, parent, ladder, child)
}

/// The change from version `ia` of `la` to version `ib` of `lb`: their runs at the
/// reference shape of `la`, else their ncu durations unless the profiles name two
/// different GPUs ([`gpus`]).
pub fn measured_between(la: &Ladder, ia: usize, lb: &Ladder, ib: usize) -> Option<Measured> {
    let (a, b) = (la.versions.get(ia)?, lb.versions.get(ib)?);
    let shown = Shown::DEFAULT;
    let runs = shown.run(la, a).zip(shown.run(lb, b));
    if let Some(s) = runs.and_then(|(ra, rb)| speed::speedup(rb, ra)) {
        let shape = shown.shape(la).map_or("latest".into(), |s| s.to_string());
        return Some(Measured {
            cut_pct: (1.0 - 1.0 / s.ratio) * 100.0,
            source: TimeSource::Runs {
                shape,
                verdict: s.verdict.word().to_string(),
            },
        });
    }
    let (pa, pb) = (a.profile.as_ref()?, b.profile.as_ref()?);
    if gpus(pa, pb).is_some() {
        return None;
    }
    let (ta, tb) = (pa.duration_ns()?, pb.duration_ns()?);
    (ta > 0.0).then(|| Measured {
        cut_pct: (1.0 - tb / ta) * 100.0,
        source: TimeSource::NcuDurations,
    })
}

/// The two profiles' GPUs, where both name one and they differ.
pub fn gpus(a: &Profile, b: &Profile) -> Option<(String, String)> {
    gpus_apart(device_name(a), device_name(b))
}

fn outcome(largest: f64, m: &Measured) -> Outcome {
    let level = match &m.source {
        TimeSource::Runs { verdict, .. } => verdict != "faster",
        TimeSource::NcuDurations => m.cut_pct < NO_GAIN * 100.0,
    };
    if level || m.cut_pct <= 0.0 {
        Outcome::Nothing
    } else if m.cut_pct >= largest / 2.0 {
        Outcome::Delivered
    } else {
        Outcome::Partly
    }
}

/// One step of `ladder`: its resolved findings and what it got. `None` where a side has
/// no profile.
pub fn step_estimates(ladder: &Ladder, parent: usize, child: usize) -> Option<StepEstimates> {
    step_estimates_between(ladder, parent, ladder, child)
}

/// From version `parent` of `la` to version `child` of `lb` (one ladder twice, or two
/// exports' ladders): the parent's findings the child resolved and what it got.
pub fn step_estimates_between(
    la: &Ladder,
    parent: usize,
    lb: &Ladder,
    child: usize,
) -> Option<StepEstimates> {
    let (a, b) = (la.versions.get(parent)?, lb.versions.get(child)?);
    let (pa, pb) = (a.profile.as_ref()?, b.profile.as_ref()?);
    let resolved = resolved(pa, pb);
    let measured = measured_between(la, parent, lb, child);
    let outcome = match (resolved.first(), &measured) {
        (Some(r), Some(m)) => Some(outcome(r.estimate_pct, m)),
        _ => None,
    };
    Some(StepEstimates {
        parent,
        child,
        parent_id: a.id.clone(),
        child_id: b.id.clone(),
        resolved,
        measured,
        gpus: gpus(pa, pb),
        outcome,
    })
}

/// Every step of `ladder` (each version with a parent, both profiled) and the tally.
pub fn estimates_table(ladder: &Ladder) -> EstimatesTable {
    let steps: Vec<StepEstimates> = (0..ladder.versions.len())
        .filter_map(|child| step_estimates(ladder, ladder.parent_of(child)?, child))
        .collect();
    let mut tally = Tally::default();
    let mut ratios = Vec::new();
    for s in &steps {
        let (Some(o), Some(m), Some(e)) = (s.outcome, &s.measured, s.largest()) else {
            continue;
        };
        tally.judged += 1;
        match o {
            Outcome::Delivered => tally.delivered += 1,
            Outcome::Partly => tally.partly += 1,
            Outcome::Nothing => tally.nothing += 1,
        }
        ratios.push(m.cut_pct / e);
    }
    ratios.sort_by(f64::total_cmp);
    let n = ratios.len();
    tally.median_ratio = match n {
        0 => None,
        _ if n % 2 == 1 => Some(ratios[n / 2]),
        _ => Some((ratios[n / 2 - 1] + ratios[n / 2]) / 2.0),
    };
    EstimatesTable { steps, tally }
}
