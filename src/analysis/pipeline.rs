//! What a pipeline trace says: per role and stage, the share of a block's time the role
//! spent in the stage, the share it waited (the gaps of its lane between its spans),
//! and how much of each stage of one role another role spent in each of its stages (the
//! overlap); for the median block by duration and, as the median of every block's
//! figure, for the whole launch. Across a ladder, those figures version by version and,
//! for each step, the ones that moved most in a sentence: "softmax of consumer 0 now
//! overlaps 71 % of consumer 1's Q·Kᵀ (was 12 %)".
//!
//! Shares are of cycles within one block (one SM's counter), so they need no clock.

use super::shown::Shown;
use crate::model::trace::{Block, Span, Timeline};
use crate::model::{Ladder, runs::Shape};
use serde::Serialize;
use std::collections::BTreeMap;

/// The least change of a figure a step's sentence tells: 5 points of the block's time.
pub const MIN_CHANGE: f64 = 0.05;

/// How many changes a step's sentence tells at most.
pub const SENTENCE_CHANGES: usize = 2;

/// The most tracing may cost, % of the plain build's time, for the timeline to be taken
/// as the plain kernel's (the goal): past it, the reports say so.
pub const TRUSTED_OVERHEAD_PCT: f64 = 3.0;

/// For the spans of one lane, in the order given, the row each takes so that no two
/// spans on a row overlap (one that starts inside another goes on a row below; touching
/// spans share one), and how many rows that makes.
pub fn stack_rows(spans: &[&Span]) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].start, std::cmp::Reverse(spans[i].end)));
    let mut ends: Vec<u64> = Vec::new();
    let mut rows = vec![0; spans.len()];
    for i in order {
        let s = spans[i];
        match ends.iter().position(|&e| e <= s.start) {
            Some(r) => {
                ends[r] = s.end;
                rows[i] = r;
            }
            None => {
                rows[i] = ends.len();
                ends.push(s.end);
            }
        }
    }
    let n = ends.len();
    (rows, n)
}

/// Share of the block's time a role spent in a stage (its spans there merged).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Busy {
    pub role: String,
    pub stage: String,
    pub share: f64,
}

/// Share of the block's time a role spent in any stage, and between its spans.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleTime {
    pub role: String,
    pub busy: f64,
    /// The gaps of its lane from its first span's start to its last span's end.
    pub waiting: f64,
}

/// Share of `role`'s time in `stage` during which `other_role` was in `other_stage`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overlap {
    pub role: String,
    pub stage: String,
    pub other_role: String,
    pub other_stage: String,
    pub share: f64,
}

/// The figures of one block, or the median of every block's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Figures {
    /// By role, then stage, in the trace's order.
    pub busy: Vec<Busy>,
    pub roles: Vec<RoleTime>,
    /// By role and stage, then the other role and stage.
    pub overlaps: Vec<Overlap>,
}

impl Figures {
    pub fn busy(&self, role: &str, stage: &str) -> Option<f64> {
        self.busy
            .iter()
            .find(|b| b.role == role && b.stage == stage)
            .map(|b| b.share)
    }

    pub fn role(&self, role: &str) -> Option<&RoleTime> {
        self.roles.iter().find(|r| r.role == role)
    }

    pub fn overlap(
        &self,
        role: &str,
        stage: &str,
        other_role: &str,
        other_stage: &str,
    ) -> Option<f64> {
        self.overlaps
            .iter()
            .find(|o| {
                o.role == role
                    && o.stage == stage
                    && o.other_role == other_role
                    && o.other_stage == other_stage
            })
            .map(|o| o.share)
    }

    /// The other role's stage that overlaps most of `role`'s `stage`, where any does.
    pub fn most_overlapped(&self, role: &str, stage: &str) -> Option<&Overlap> {
        self.overlaps
            .iter()
            .filter(|o| o.role == role && o.stage == stage && o.share > 0.0)
            .max_by(|a, b| a.share.total_cmp(&b.share))
    }
}

/// A figure of [`Figures`] by its names, to follow across versions.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "figure", rename_all = "snake_case")]
pub enum Figure {
    Busy {
        role: String,
        stage: String,
    },
    Waiting {
        role: String,
    },
    Overlap {
        role: String,
        stage: String,
        other_role: String,
        other_stage: String,
    },
}

impl Figure {
    /// The same overlap seen from the other side.
    fn mirror(&self) -> Option<Figure> {
        match self {
            Figure::Overlap {
                role,
                stage,
                other_role,
                other_stage,
            } => Some(Figure::Overlap {
                role: other_role.clone(),
                stage: other_stage.clone(),
                other_role: role.clone(),
                other_stage: stage.clone(),
            }),
            _ => None,
        }
    }
}

/// One figure from one version to the next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub figure: Figure,
    pub was: f64,
    pub now: f64,
}

/// A share as the sentences write it: `71 %`.
pub fn pct(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

impl Change {
    pub fn delta(&self) -> f64 {
        self.now - self.was
    }

    /// The change in words.
    pub fn text(&self) -> String {
        let (now, was) = (pct(self.now), pct(self.was));
        match &self.figure {
            Figure::Busy { role, stage } => {
                format!("{role}'s {stage} now takes {now} of the block's time (was {was})")
            }
            Figure::Waiting { role } => {
                format!("{role} now waits {now} of the block's time between its spans (was {was})")
            }
            Figure::Overlap {
                role,
                stage,
                other_role,
                other_stage,
            } => format!(
                "{other_stage} of {other_role} now overlaps {now} of {role}'s {stage} (was {was})"
            ),
        }
    }
}

/// Every figure both sides have, the largest change first (then in the figures' order).
pub fn changes(was: &Figures, now: &Figures) -> Vec<Change> {
    let (a, b) = (figure_map(was), figure_map(now));
    let mut out: Vec<Change> = b
        .into_iter()
        .filter_map(|(figure, now)| {
            let was = *a.get(&figure)?;
            Some(Change { figure, was, now })
        })
        .collect();
    out.sort_by(|x, y| {
        y.delta()
            .abs()
            .total_cmp(&x.delta().abs())
            .then_with(|| x.figure.cmp(&y.figure))
    });
    out
}

fn figure_map(f: &Figures) -> BTreeMap<Figure, f64> {
    let busy = f.busy.iter().map(|b| {
        (
            Figure::Busy {
                role: b.role.clone(),
                stage: b.stage.clone(),
            },
            b.share,
        )
    });
    let waiting = f.roles.iter().map(|r| {
        (
            Figure::Waiting {
                role: r.role.clone(),
            },
            r.waiting,
        )
    });
    let overlaps = f.overlaps.iter().map(|o| {
        (
            Figure::Overlap {
                role: o.role.clone(),
                stage: o.stage.clone(),
                other_role: o.other_role.clone(),
                other_stage: o.other_stage.clone(),
            },
            o.share,
        )
    });
    busy.chain(waiting).chain(overlaps).collect()
}

/// The changes a sentence tells: the largest, at least [`MIN_CHANGE`], at most `most`,
/// an overlap not told again from its other side.
pub fn told(changes: &[Change], most: usize) -> Vec<&Change> {
    let mut out: Vec<&Change> = Vec::new();
    for c in changes {
        if out.len() >= most || c.delta().abs() < MIN_CHANGE {
            break;
        }
        let mirror = c.figure.mirror();
        if out.iter().any(|o| Some(&o.figure) == mirror.as_ref()) {
            continue;
        }
        out.push(c);
    }
    out
}

/// The step in one sentence, where a figure moved by [`MIN_CHANGE`] or more.
pub fn sentence(changes: &[Change], most: usize) -> Option<String> {
    let parts: Vec<String> = told(changes, most).iter().map(|c| c.text()).collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

// ---- one block ----

/// Intervals of cycles, `(start, end)`.
type Intervals = Vec<(u64, u64)>;

/// A role and a stage, by index.
type Lane = (u8, u16);

/// Merged intervals, in order.
fn merged(mut iv: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    iv.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(iv.len());
    for (s, e) in iv {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn length(iv: &[(u64, u64)]) -> u64 {
    iv.iter().map(|(s, e)| e - s).sum()
}

/// How long two merged lists of intervals overlap.
fn common(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        if s < e {
            sum += e - s;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

/// One block's figures by index.
#[derive(Default)]
struct Indexed {
    busy: BTreeMap<(u8, u16), f64>,
    /// Busy and waiting.
    roles: BTreeMap<u8, (f64, f64)>,
    overlaps: BTreeMap<(u8, u16, u8, u16), f64>,
}

fn indexed(b: &Block) -> Option<Indexed> {
    if b.cycles == 0 {
        return None;
    }
    let time = b.cycles as f64;
    let mut sets: BTreeMap<(u8, u16), Vec<(u64, u64)>> = BTreeMap::new();
    let mut lanes: BTreeMap<u8, Vec<(u64, u64)>> = BTreeMap::new();
    for s in &b.spans {
        sets.entry((s.role, s.stage))
            .or_default()
            .push((s.start, s.end));
        lanes.entry(s.role).or_default().push((s.start, s.end));
    }
    let sets: Vec<(Lane, Intervals)> = sets.into_iter().map(|(k, v)| (k, merged(v))).collect();
    let mut out = Indexed::default();
    for (k, iv) in &sets {
        out.busy.insert(*k, length(iv) as f64 / time);
    }
    for (role, iv) in lanes {
        let all = merged(iv);
        let extent = all.last().map_or(0, |l| l.1) - all.first().map_or(0, |f| f.0);
        let busy = length(&all);
        out.roles
            .insert(role, (busy as f64 / time, (extent - busy) as f64 / time));
    }
    for ((r, s), a) in &sets {
        let own = length(a);
        if own == 0 {
            continue;
        }
        for ((r2, s2), b) in &sets {
            if r2 != r {
                out.overlaps
                    .insert((*r, *s, *r2, *s2), common(a, b) as f64 / own as f64);
            }
        }
    }
    Some(out)
}

fn named(t: &Timeline, f: &Indexed) -> Figures {
    let role = |r: u8| t.role_name(r).to_string();
    let stage = |s: u16| t.stage_name(s).to_string();
    Figures {
        busy: f
            .busy
            .iter()
            .map(|(&(r, s), &share)| Busy {
                role: role(r),
                stage: stage(s),
                share,
            })
            .collect(),
        roles: f
            .roles
            .iter()
            .map(|(&r, &(busy, waiting))| RoleTime {
                role: role(r),
                busy,
                waiting,
            })
            .collect(),
        overlaps: f
            .overlaps
            .iter()
            .map(|(&(r, s, r2, s2), &share)| Overlap {
                role: role(r),
                stage: stage(s),
                other_role: role(r2),
                other_stage: stage(s2),
                share,
            })
            .collect(),
    }
}

/// One block's figures; `None` for a block that lasted no cycle.
pub fn block_figures(t: &Timeline, b: &Block) -> Option<Figures> {
    indexed(b).map(|f| named(t, &f))
}

/// The median of values (the mean of the two middle ones of an even count).
fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// Each figure's median over the blocks: a stage a block's role never entered counts
/// as 0 % busy there; a role's waiting and an overlap count only in the blocks where
/// the role (the stage) has time.
fn summary(t: &Timeline, blocks: &[Indexed]) -> Figures {
    fn medians<K: Ord + Copy>(
        blocks: &[Indexed],
        get: impl Fn(&Indexed) -> &BTreeMap<K, f64>,
        missing: Option<f64>,
    ) -> BTreeMap<K, f64> {
        let keys: std::collections::BTreeSet<K> =
            blocks.iter().flat_map(|b| get(b).keys().copied()).collect();
        keys.into_iter()
            .filter_map(|k| {
                let xs = blocks
                    .iter()
                    .filter_map(|b| get(b).get(&k).copied().or(missing))
                    .collect();
                Some((k, median(xs)?))
            })
            .collect()
    }
    let busy = medians(blocks, |b| &b.busy, Some(0.0));
    let overlaps = medians(blocks, |b| &b.overlaps, None);
    let roles: std::collections::BTreeSet<u8> = blocks
        .iter()
        .flat_map(|b| b.roles.keys().copied())
        .collect();
    let roles = roles
        .into_iter()
        .filter_map(|r| {
            let of = |pick: fn(&(f64, f64)) -> f64| {
                median(
                    blocks
                        .iter()
                        .filter_map(|b| b.roles.get(&r).map(pick))
                        .collect(),
                )
            };
            Some((r, (of(|x| x.0)?, of(|x| x.1)?)))
        })
        .collect();
    named(
        t,
        &Indexed {
            busy,
            roles,
            overlaps,
        },
    )
}

/// What a trace says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pipeline {
    pub roles: Vec<String>,
    pub stages: Vec<String>,
    /// The median block by duration (an index into the timeline's blocks), the one
    /// shown by default.
    pub median_block: Option<usize>,
    /// Its figures.
    pub block: Option<Figures>,
    /// Every figure's median over the blocks summarised.
    pub summary: Figures,
    /// Blocks in the summary and among which the median block is chosen: those that
    /// lasted a cycle and whose lanes did not overflow (all that lasted a cycle, where
    /// every one overflowed).
    pub summarised: usize,
    /// Blocks left out because a lane of theirs overflowed.
    pub cut: usize,
    /// Marks without a partner.
    pub unmatched: u64,
}

/// The blocks figures are read from: see [`Pipeline::summarised`].
fn summarised(t: &Timeline) -> (Vec<usize>, usize) {
    let lasted: Vec<usize> = (0..t.blocks.len())
        .filter(|&i| t.blocks[i].cycles > 0)
        .collect();
    let whole: Vec<usize> = lasted
        .iter()
        .copied()
        .filter(|&i| !t.cut(&t.blocks[i]))
        .collect();
    if whole.is_empty() {
        (lasted, 0)
    } else {
        let cut = lasted.len() - whole.len();
        (whole, cut)
    }
}

/// The median block by duration among the blocks summarised (of an even count, the
/// shorter of the two middle ones; equal durations by block index): an index into the
/// timeline's blocks.
pub fn median_block(t: &Timeline) -> Option<usize> {
    let (mut idx, _) = summarised(t);
    idx.sort_by_key(|&i| (t.blocks[i].cycles, t.blocks[i].block));
    idx.get(idx.len().checked_sub(1)? / 2).copied()
}

/// A timeline's figures: the median block's and the summary over the blocks.
pub fn pipeline(t: &Timeline) -> Pipeline {
    let (idx, cut) = summarised(t);
    let blocks: Vec<Indexed> = idx.iter().filter_map(|&i| indexed(&t.blocks[i])).collect();
    let median_block = median_block(t);
    Pipeline {
        roles: t.roles.clone(),
        stages: t.stages.clone(),
        median_block,
        block: median_block.and_then(|i| block_figures(t, &t.blocks[i])),
        summary: summary(t, &blocks),
        summarised: blocks.len(),
        cut,
        unmatched: t.unmatched_marks(),
    }
}

// ---- across a ladder ----

/// A version's trace shown and what it says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TracedVersion {
    pub shape: Shape,
    pub pipeline: Pipeline,
    /// What tracing cost, % of the plain build's time, where it was timed.
    pub overhead_pct: Option<f64>,
    pub timer_resolution_ns: Option<u64>,
}

/// One step between two traced versions: a version and the nearest version it was
/// built on that has a trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PipelineStep {
    /// Indices into the ladder's versions.
    pub version: usize,
    pub from: usize,
    /// Every summary figure both have, the largest change first.
    pub changes: Vec<Change>,
    /// The largest changes in words, where one moved by [`MIN_CHANGE`] or more.
    pub sentence: Option<String>,
}

/// The traces of a ladder's versions at the shape shown, and the steps between them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LadderPipeline {
    /// One per version of the ladder, in its order: `None` where it has no trace shown.
    pub versions: Vec<Option<TracedVersion>>,
    pub steps: Vec<PipelineStep>,
}

impl LadderPipeline {
    /// Whether any version has a trace shown.
    pub fn any(&self) -> bool {
        self.versions.iter().any(Option::is_some)
    }

    /// The step that ends at version `i`.
    pub fn step_to(&self, i: usize) -> Option<&PipelineStep> {
        self.steps.iter().find(|s| s.version == i)
    }
}

/// The traces of `ladder`'s versions at the shape `shown`, what each says, and for each
/// traced version the step from the nearest version it was built on that has one.
pub fn ladder_pipeline(ladder: &Ladder, shown: Shown) -> LadderPipeline {
    let versions: Vec<Option<TracedVersion>> = ladder
        .versions
        .iter()
        .map(|v| {
            let t = shown.trace(ladder, v)?;
            Some(TracedVersion {
                shape: t.shape,
                pipeline: pipeline(&t.timeline),
                overhead_pct: t.overhead.and_then(|o| o.pct()),
                timer_resolution_ns: t.timer_resolution_ns,
            })
        })
        .collect();
    let mut steps = Vec::new();
    for (i, now) in versions.iter().enumerate() {
        let Some(now) = now else { continue };
        let mut at = ladder.parent_of(i);
        // Up the parents to the nearest traced one (a parent is an earlier version; the
        // count stops a manifest that says otherwise).
        for _ in 0..versions.len() {
            match at {
                Some(p) if versions[p].is_none() => at = ladder.parent_of(p),
                _ => break,
            }
        }
        let Some(from) = at.filter(|&p| p < i) else {
            continue;
        };
        let was = versions[from].as_ref().expect("a traced version");
        let changes = changes(&was.pipeline.summary, &now.pipeline.summary);
        let sentence = sentence(&changes, SENTENCE_CHANGES);
        steps.push(PipelineStep {
            version: i,
            from,
            changes,
            sentence,
        });
    }
    LadderPipeline { versions, steps }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::trace::raw::{self, Buffer, LOAD_K, QK, SOFTMAX};
    use crate::model::trace::{Clocks, Trace, decode};
    use crate::model::{Store, Version};

    fn timeline(b: &Buffer) -> Timeline {
        let clocks = Clocks {
            timer_resolution_ns: Some(32),
            sm_clock_mhz: None,
        };
        decode(
            &b.words,
            b.blocks,
            b.cap,
            &raw::roles(),
            &raw::stages(),
            clocks,
        )
        .unwrap()
    }

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("a figure");
        assert!((a - b).abs() < 1e-9, "{a} ≠ {b}");
    }

    /// Block 0 of the scenario (2000 cycles; see `raw::scenario`):
    /// - producer: load K 400 and load V 400 cycles: 20 % each, 40 % busy, no gap;
    /// - consumer 0: Q·Kᵀ 500 (25 %), softmax 600 (30 %), P·V 400 (20 %), busy 1500
    ///   (75 %), no gap;
    /// - consumer 1: Q·Kᵀ [1000, 1400] (20 %), softmax [1500, 1900] with [1600, 1700]
    ///   inside, merged 400 (20 %); busy 800 of its extent [1000, 1900]: a gap of 100
    ///   (5 %) waiting;
    /// - overlaps: consumer 0's softmax [1000, 1600] holds all of consumer 1's Q·Kᵀ:
    ///   400 / 600 = 66.7 % of the softmax, 100 % of the Q·Kᵀ; consumer 0's P·V
    ///   [1600, 2000] and consumer 1's softmax [1500, 1900] share 300: 75 % of each;
    ///   consumer 0's Q·Kᵀ [500, 1000] and the load V [400, 800] share 300: 60 % of the
    ///   Q·Kᵀ, 75 % of the load.
    #[test]
    fn a_blocks_figures_are_its_shares_of_busy_waiting_and_overlapped_time() {
        let t = timeline(&raw::scenario());
        let f = block_figures(&t, &t.blocks[0]).unwrap();
        let (p, c0, c1) = ("producer", "consumer 0", "consumer 1");
        close(f.busy(p, "load K"), 0.2);
        close(f.busy(p, "load V"), 0.2);
        close(f.busy(c0, "Q·Kᵀ"), 0.25);
        close(f.busy(c0, "softmax"), 0.3);
        close(f.busy(c0, "P·V"), 0.2);
        close(f.busy(c1, "Q·Kᵀ"), 0.2);
        close(f.busy(c1, "softmax"), 0.2);
        assert_eq!(f.busy(c1, "P·V"), None);
        let role = |r: &str| f.role(r).map(|x| (x.busy, x.waiting));
        assert_eq!(role(p), Some((0.4, 0.0)));
        assert_eq!(role(c0), Some((0.75, 0.0)));
        close(role(c1).map(|x| x.0), 0.4);
        close(role(c1).map(|x| x.1), 0.05);
        close(f.overlap(c0, "softmax", c1, "Q·Kᵀ"), 400.0 / 600.0);
        close(f.overlap(c1, "Q·Kᵀ", c0, "softmax"), 1.0);
        close(f.overlap(c0, "P·V", c1, "softmax"), 0.75);
        close(f.overlap(c1, "softmax", c0, "P·V"), 0.75);
        close(f.overlap(c0, "Q·Kᵀ", p, "load V"), 0.6);
        close(f.overlap(p, "load V", c0, "Q·Kᵀ"), 0.75);
        close(f.overlap(c0, "softmax", c1, "softmax"), 100.0 / 600.0);
        close(f.overlap(p, "load K", c1, "Q·Kᵀ"), 0.0);
        // A role with itself is no overlap.
        assert_eq!(f.overlap(c0, "softmax", c0, "P·V"), None);
        let most = f.most_overlapped(c1, "Q·Kᵀ").unwrap();
        assert_eq!(
            (most.other_role.as_str(), most.other_stage.as_str()),
            (c0, "softmax")
        );
    }

    #[test]
    fn a_block_cut_by_an_overflow_is_left_out_of_the_summary() {
        let t = timeline(&raw::scenario());
        let p = pipeline(&t);
        // Block 1 overflowed: block 0 alone is summarised, and is the median block.
        assert_eq!((p.summarised, p.cut, p.unmatched), (1, 1, 2));
        assert_eq!(p.median_block, Some(0));
        assert_eq!(p.block.as_ref(), Some(&p.summary));
    }

    /// Four blocks of 1000, 3000, 2000 and 4000 cycles (blocks 0 to 3), each a load K
    /// of 500, 2700, 400 and 1200 cycles by the producer and a Q·Kᵀ over the whole
    /// block by consumer 0 (one SM each, 1 ns a cycle).
    fn four_blocks() -> Buffer {
        let mut b = Buffer::new(4, 4);
        for (block, (cycles, load)) in [(1000, 500), (3000, 2700), (2000, 400), (4000, 1200)]
            .into_iter()
            .enumerate()
        {
            let block = block as u32;
            let (c0, ns0) = (1_000 * u64::from(block + 1), 10_000 * u64::from(block));
            b.open(block, 0, block);
            b.open(block, 1, block);
            b.begin(block, 0, c0, ns0, LOAD_K);
            b.end(block, 0, c0 + load, ns0 + load, LOAD_K);
            b.begin(block, 1, c0, ns0, QK);
            b.end(block, 1, c0 + cycles, ns0 + cycles, QK);
        }
        b
    }

    #[test]
    fn the_summary_is_each_figures_median_over_the_blocks_and_the_median_block_by_duration() {
        let t = timeline(&four_blocks());
        let p = pipeline(&t);
        // By duration 1000 (0), 2000 (2), 3000 (1), 4000 (3): of an even count, the
        // shorter middle one.
        assert_eq!(p.median_block, Some(2));
        assert_eq!(t.blocks[2].block, 2);
        // Load K: 50 %, 90 %, 20 %, 30 %: the median is (30 + 50) / 2, not the median
        // block's 20 %.
        close(p.summary.busy("producer", "load K"), 0.4);
        close(p.block.as_ref().unwrap().busy("producer", "load K"), 0.2);
        close(p.summary.busy("consumer 0", "Q·Kᵀ"), 1.0);
        // The load overlaps the same share of the Q·Kᵀ; the Q·Kᵀ all of the load.
        close(
            p.summary
                .overlap("consumer 0", "Q·Kᵀ", "producer", "load K"),
            0.4,
        );
        close(
            p.summary
                .overlap("producer", "load K", "consumer 0", "Q·Kᵀ"),
            1.0,
        );
        assert_eq!(p.summarised, 4);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(Vec::new()), None);
    }

    /// One block of 1000 cycles: the producer's load K over all of it, consumer 0's
    /// softmax [0, 500] and consumer 1's Q·Kᵀ from `qk` for 500 cycles.
    fn step_buffer(qk: u64) -> Buffer {
        let mut b = Buffer::new(1, 8);
        for role in 0..3 {
            b.open(0, role, 1);
        }
        b.begin(0, 0, 0, 0, LOAD_K);
        b.end(0, 0, 1000, 1000, LOAD_K);
        b.begin(0, 1, 0, 0, SOFTMAX);
        b.end(0, 1, 500, 500, SOFTMAX);
        b.begin(0, 2, qk, qk, QK);
        b.end(0, 2, qk + 500, qk + 500, QK);
        b
    }

    fn traced(id: &str, qk: Option<u64>) -> Version {
        let shape = crate::kinds::attention::shape(1, 64, 1024, 128, false);
        Version {
            id: id.into(),
            traces: qk
                .map(|qk| {
                    let t = Trace::new(id, shape, timeline(&step_buffer(qk)));
                    crate::model::TraceFile::decoded(t.file_name().into(), t)
                })
                .into_iter()
                .collect(),
            ..Version::default()
        }
    }

    fn ladder(versions: Vec<Version>) -> Ladder {
        Ladder {
            name: "toy".into(),
            title: "toy".into(),
            problem: None,
            flops: None,
            peak_tflops: None,
            kind: None,
            reference_shape: Some(crate::kinds::attention::shape(1, 64, 1024, 128, false)),
            profile_shape: None,
            versions,
            dir: None,
            store: Store::disk(crate::files::limits::SizeLimits::DEFAULT),
        }
    }

    /// v13: consumer 1's Q·Kᵀ [400, 900] shares 100 cycles with consumer 0's softmax
    /// [0, 500] (20 % of each); v15: [100, 600] shares 400 (80 %). v12 and v14 have no
    /// trace: v13 has no step, v15's is from v13.
    #[test]
    fn a_step_tells_the_figures_that_moved_most_from_the_nearest_traced_parent() {
        let l = ladder(vec![
            traced("v12", None),
            traced("v13", Some(400)),
            traced("v14", None),
            traced("v15", Some(100)),
        ]);
        let lp = ladder_pipeline(&l, Shown::DEFAULT);
        assert!(lp.any());
        assert_eq!(
            lp.versions.iter().map(Option::is_some).collect::<Vec<_>>(),
            [false, true, false, true]
        );
        assert_eq!(lp.steps.len(), 1);
        let step = lp.step_to(3).unwrap();
        assert_eq!(step.from, 1);
        let top = &step.changes[0];
        assert!(
            (top.was - 0.2).abs() < 1e-9 && (top.now - 0.8).abs() < 1e-9,
            "{top:?}"
        );
        // The same overlap seen from the other side is told once; the load's overlaps
        // and the busy shares did not move.
        assert_eq!(
            step.sentence.as_deref(),
            Some("Q·Kᵀ of consumer 1 now overlaps 80 % of consumer 0's softmax (was 20 %)")
        );
        assert_eq!(told(&step.changes, 5).len(), 1);
        // Consumer 1 starts later in v13: the figures of its own lane did not change
        // (one span, no gap), and nothing else is told.
        assert!(
            step.changes[2..].iter().all(|c| c.delta().abs() < 1e-9),
            "{:?}",
            step.changes
        );
        // At a shape with no trace, nothing is shown.
        let other = Shown::at(crate::kinds::attention::shape(1, 16, 8192, 128, false));
        assert!(!ladder_pipeline(&l, other).any());
    }

    #[test]
    fn each_kind_of_change_reads_as_a_sentence() {
        let c = |figure| Change {
            figure,
            was: 0.12,
            now: 0.71,
        };
        let s = |x: &str| x.to_string();
        assert_eq!(
            c(Figure::Overlap {
                role: s("consumer 1"),
                stage: s("Q·Kᵀ"),
                other_role: s("consumer 0"),
                other_stage: s("softmax"),
            })
            .text(),
            "softmax of consumer 0 now overlaps 71 % of consumer 1's Q·Kᵀ (was 12 %)"
        );
        assert_eq!(
            c(Figure::Busy {
                role: s("producer"),
                stage: s("load K"),
            })
            .text(),
            "producer's load K now takes 71 % of the block's time (was 12 %)"
        );
        assert_eq!(
            c(Figure::Waiting {
                role: s("consumer 0")
            })
            .text(),
            "consumer 0 now waits 71 % of the block's time between its spans (was 12 %)"
        );
        // Below 5 points, nothing is told.
        let small = Change {
            figure: Figure::Waiting {
                role: s("consumer 0"),
            },
            was: 0.10,
            now: 0.14,
        };
        assert_eq!(sentence(&[small], 2), None);
    }

    #[test]
    fn spans_that_overlap_take_rows_below_and_touching_ones_share_a_row() {
        let s = |start, end| Span {
            role: 0,
            stage: 0,
            start,
            end,
        };
        let spans = [s(0, 10), s(10, 20), s(12, 15), s(2, 4), s(14, 30)];
        let refs: Vec<&Span> = spans.iter().collect();
        // [0, 10] row 0, [2, 4] inside it row 1, [10, 20] row 0 again, [12, 15] row 1
        // (free from 4), [14, 30] row 2.
        assert_eq!(stack_rows(&refs), (vec![0, 0, 1, 1, 2], 3));
        assert_eq!(stack_rows(&[]), (vec![], 0));
    }

    #[test]
    fn intervals_merge_and_intersect() {
        assert_eq!(
            merged(vec![(5, 9), (0, 2), (1, 4), (9, 10)]),
            [(0, 4), (5, 10)]
        );
        assert_eq!(common(&[(0, 4), (5, 10)], &[(3, 6), (8, 20)]), 1 + 1 + 2);
    }
}
