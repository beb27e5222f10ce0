//! Pipeline traces: what a traced kernel's leader threads stamped at their stage marks
//! (`stallscope trace`), decoded from the buffer the kernel wrote ([`decode`]) into
//! spans per block and role, and stored as one compact file per version and shape in
//! the version's folder (`profiles/LADDER/VERSION/trace-1,64,1024,128.json.gz`).
//!
//! The buffer is `blocks × 4` lanes (lane = block × 4 + role) of `2 + 3 × cap` 64-bit
//! words. A lane's word 0 counts the marks its leader made (more than it kept: it
//! overflowed, its first kept), word 1 holds the SM id in its low 32 bits, in bits
//! 32–62 the most marks the kernel could hold on chip for the lane (0: no bound but
//! `cap`), and has bit 63 set once the lane was opened (an unused lane is all zero); a
//! lane keeps its first `min(cap, that bound)` marks; mark `i` is words
//! `2 + 3i ..`: the SM's cycle counter (clock64), %globaltimer in ns, and a tag
//! (stage in bits 0–15, kind in bits 16–31: 1 begin, 2 end, 3 an anchor). A 0 in the
//! timer word is "not stamped". The kernels' header reads %globaltimer only when a lane
//! opens and closes (reading it costs a warp hundreds of cycles) and writes the two as
//! anchors: marks of kind 3 and stage 0 that pair a cycle count with the timer and
//! bound no span, before the lane's first mark and after its last. (Its mark of
//! 2026-12-03 stamped the timer on a lane's first mark and every 64th instead.)
//!
//! Spans within a block are in cycles of its SM (one counter for all its lanes);
//! %globaltimer, whose step may be coarse (~32 ns to 1 µs), only places a block against
//! the others and gives its nanoseconds per cycle where the block lasts long enough.

use super::runs::Shape;
use super::store::Store;
use crate::kinds::Kind;
use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The schema every trace file names.
pub const SCHEMA: &str = "stallscope/trace/1";

/// Lanes a block has in the buffer, one per role (roles beyond are refused).
pub const LANES_PER_BLOCK: usize = 4;

/// The kind bits of a begin mark and of an end mark.
pub const BEGIN: u64 = 1;
pub const END: u64 = 2;
/// The kind bits of an anchor: a cycle count and %globaltimer read together, no stage.
pub const ANCHOR: u64 = 3;

/// Bit 63 of a lane's word 1: the lane was opened.
pub const USED_BIT: u64 = 1 << 63;

/// The %globaltimer step assumed where it was not measured: the coarsest seen.
pub const ASSUMED_RESOLUTION_NS: u64 = 1000;

/// How many timer steps a stretch of time must last for its own nanoseconds per cycle
/// (elapsed ns / elapsed cycles) to be trusted: at this many, a step's error is at most
/// 2 % of it.
pub const LONG_ENOUGH_STEPS: u64 = 100;

/// The words of a lane: its count, its SM word and `cap` marks of three words.
pub fn lane_words(cap: u32) -> u64 {
    2 + 3 * u64::from(cap)
}

/// The words of a buffer of `blocks` blocks whose lanes hold `cap` marks.
pub fn buffer_words(blocks: u32, cap: u32) -> u64 {
    u64::from(blocks) * LANES_PER_BLOCK as u64 * lane_words(cap)
}

/// One version's trace at one shape: what was measured and where, and the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// [`SCHEMA`].
    pub schema: String,
    /// The version traced.
    pub version: String,
    /// The problem it ran.
    pub shape: Shape,
    #[serde(default)]
    pub gpu: Option<String>,
    /// When it ran (RFC 3339, UTC).
    #[serde(default)]
    pub when: Option<String>,
    /// The finest step %globaltimer took on that GPU, where it was measured.
    #[serde(default)]
    pub timer_resolution_ns: Option<u64>,
    /// What tracing cost, where it was timed.
    #[serde(default)]
    pub overhead: Option<Overhead>,
    pub timeline: Timeline,
}

/// The traced build's time against the plain one's, under the same protocol.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Overhead {
    pub plain_us: f64,
    pub traced_us: f64,
}

impl Overhead {
    /// How much longer the traced build took, % of the plain one's time.
    pub fn pct(&self) -> Option<f64> {
        (self.plain_us > 0.0).then(|| (self.traced_us / self.plain_us - 1.0) * 100.0)
    }
}

/// What [`decode`] makes of a buffer: the roles and stages by name, the lanes that
/// overflowed, the marks that found no partner, and each block that marked anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// Role names by index (0: the producer, 1: consumer 0, …), as the recipe gives them.
    pub roles: Vec<String>,
    /// Stage names by index.
    pub stages: Vec<String>,
    /// Marks a lane holds.
    pub cap: u32,
    /// Blocks of the launch (some may have marked nothing: they are not in `blocks`).
    pub grid_blocks: u32,
    /// Lanes that made more marks than they hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflowed: Vec<Overflow>,
    /// Begins without an end and ends without a begin, per block, role and stage.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unmatched: Vec<Unmatched>,
    /// The blocks that made a mark, by block index.
    pub blocks: Vec<Block>,
}

/// A lane that overflowed: its block, role and the marks its leader made (only the
/// first `cap` are kept; begins left open where it was cut are dropped, not counted
/// as unmatched).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overflow {
    pub block: u32,
    pub role: u8,
    pub marks: u64,
}

/// Marks of one block, role and stage that found no partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unmatched {
    pub block: u32,
    pub role: u8,
    pub stage: u16,
    /// Begins never ended.
    pub begins: u32,
    /// Ends with no begin open.
    pub ends: u32,
}

/// Where a block's nanoseconds per cycle come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// The block's own elapsed ns over its elapsed cycles: it lasted long enough.
    Block,
    /// The SM clock the caller gave ([`Clocks::sm_clock_mhz`]).
    Given,
    /// Every block's elapsed ns over their elapsed cycles, pooled.
    Pooled,
    /// None of these: the block is in cycles only.
    Unknown,
}

/// One block's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    /// Its linear block index.
    pub block: u32,
    pub sm: u32,
    /// Its first mark's %globaltimer after the kernel's first mark, ns (to within the
    /// timer's step).
    pub start_ns: u64,
    /// Nanoseconds per cycle of its SM, where known.
    #[serde(default)]
    pub ns_per_cycle: Option<f64>,
    pub clock: Clock,
    /// From its first mark to its last, cycles.
    pub cycles: u64,
    /// Its spans by role, then start.
    pub spans: Vec<Span>,
}

impl Block {
    /// `cycles` after the block's first mark, in ns after the kernel's first mark.
    pub fn ns_at(&self, cycles: u64) -> Option<f64> {
        Some(self.start_ns as f64 + cycles as f64 * self.ns_per_cycle?)
    }

    /// How long the block lasted, ns, where its clock is known.
    pub fn duration_ns(&self) -> Option<f64> {
        Some(self.cycles as f64 * self.ns_per_cycle?)
    }

    /// The spans of role `r`, by start.
    pub fn spans_of(&self, r: usize) -> Vec<&Span> {
        self.spans
            .iter()
            .filter(|s| usize::from(s.role) == r)
            .collect()
    }
}

/// One stage of one role, from its begin to its end, in cycles after the block's first
/// mark. Written `[role, stage, start, end]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "[u64; 4]", into = "[u64; 4]")]
pub struct Span {
    pub role: u8,
    pub stage: u16,
    pub start: u64,
    pub end: u64,
}

impl Span {
    pub fn cycles(&self) -> u64 {
        self.end - self.start
    }
}

impl From<Span> for [u64; 4] {
    fn from(s: Span) -> [u64; 4] {
        [u64::from(s.role), u64::from(s.stage), s.start, s.end]
    }
}

impl TryFrom<[u64; 4]> for Span {
    type Error = String;
    fn try_from([role, stage, start, end]: [u64; 4]) -> Result<Span, String> {
        let bad = || {
            format!(
                "span [{role}, {stage}, {start}, {end}] is not [role, stage, start, end] with start ≤ end"
            )
        };
        if start > end {
            return Err(bad());
        }
        Ok(Span {
            role: u8::try_from(role).map_err(|_| bad())?,
            stage: u16::try_from(stage).map_err(|_| bad())?,
            start,
            end,
        })
    }
}

impl Timeline {
    /// The name of role `r`.
    pub fn role_name(&self, r: u8) -> &str {
        self.roles.get(usize::from(r)).map_or("?", String::as_str)
    }

    /// The name of stage `s`.
    pub fn stage_name(&self, s: u16) -> &str {
        self.stages.get(usize::from(s)).map_or("?", String::as_str)
    }

    /// Every mark that found no partner.
    pub fn unmatched_marks(&self) -> u64 {
        self.unmatched
            .iter()
            .map(|u| u64::from(u.begins) + u64::from(u.ends))
            .sum()
    }

    /// Whether a lane of block `b` overflowed (its figures are cut short).
    pub fn cut(&self, b: &Block) -> bool {
        self.overflowed.iter().any(|o| o.block == b.block)
    }

    /// Every span names a role and a stage there are names for and lies within its
    /// block; a trace read from a file is checked so before anything indexes it.
    pub fn check(&self) -> Result<()> {
        if self.roles.is_empty() || self.roles.len() > LANES_PER_BLOCK {
            bail!(
                "the timeline names {} roles; a trace has 1 to {LANES_PER_BLOCK}",
                self.roles.len()
            );
        }
        if self.stages.is_empty() || self.stages.len() > usize::from(u16::MAX) + 1 {
            bail!("the timeline names {} stages", self.stages.len());
        }
        for b in &self.blocks {
            for s in &b.spans {
                if usize::from(s.role) >= self.roles.len()
                    || usize::from(s.stage) >= self.stages.len()
                    || s.end > b.cycles
                {
                    bail!(
                        "block {}: span [{}, {}, {}, {}] names a role or stage without a name, or ends after the block ({} cycles)",
                        b.block,
                        s.role,
                        s.stage,
                        s.start,
                        s.end,
                        b.cycles
                    );
                }
            }
            if b.ns_per_cycle.is_some_and(|x| !(x.is_finite() && x > 0.0)) {
                bail!("block {}: ns_per_cycle must be a positive number", b.block);
            }
        }
        Ok(())
    }
}

/// What the caller knows of the clocks, for [`decode`]: the timer's measured step (else
/// [`ASSUMED_RESOLUTION_NS`]) and the SM clock during the launch, for the blocks too
/// short to give their own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Clocks {
    pub timer_resolution_ns: Option<u64>,
    pub sm_clock_mhz: Option<f64>,
}

impl Clocks {
    fn resolution(&self) -> u64 {
        self.timer_resolution_ns
            .filter(|&r| r > 0)
            .unwrap_or(ASSUMED_RESOLUTION_NS)
    }

    /// Whether `ns` lasts long enough for its own ns per cycle.
    fn long_enough(&self, ns: u64) -> bool {
        ns >= LONG_ENOUGH_STEPS * self.resolution()
    }
}

/// One mark as the buffer holds it.
#[derive(Debug, Clone, Copy)]
struct Mark {
    clock: u64,
    ns: u64,
    stage: u16,
    kind: u64,
}

/// One lane's marks, read and checked.
struct Lane {
    role: u8,
    sm: u32,
    marks: Vec<Mark>,
    made: u64,
    /// The most marks the lane could keep (the buffer's capacity, or the kernel's ring).
    held: u64,
}

/// Decodes a traced launch's buffer (`raw`, as the kernel left it) of `blocks` blocks
/// whose lanes hold `cap` marks, naming roles and stages as the recipe does. Begins and
/// ends pair per lane and stage, the latest begin first (so a stage may nest in itself;
/// different stages may interleave); a mark without a partner is counted in
/// [`Timeline::unmatched`]. An error names the block and role (and the mark) where the
/// buffer breaks the layout: a size that is not the layout's, an unused lane holding
/// data, a used lane of a role without a name, a kind that is neither begin nor end, a
/// stage without a name, a cycle counter that goes back, or lanes of one block on two
/// SMs.
pub fn decode(
    raw: &[u64],
    blocks: u32,
    cap: u32,
    roles: &[String],
    stages: &[String],
    clocks: Clocks,
) -> Result<Timeline> {
    check_layout(raw.len(), blocks, cap, roles, stages)?;
    let lane = lane_words(cap) as usize;
    let block_words = LANES_PER_BLOCK * lane;
    let mut overflowed = Vec::new();
    let mut unmatched = Vec::new();
    let mut found = Vec::new();
    for (block, words) in (0..blocks).zip(raw.chunks_exact(block_words)) {
        let lanes = read_block(words, block, cap, roles, stages)?;
        overflowed.extend(lanes.iter().filter(|l| l.made > l.held).map(|l| Overflow {
            block,
            role: l.role,
            marks: l.made,
        }));
        found.extend(block_marks(block, &lanes, &mut unmatched));
    }
    let blocks_out = place_blocks(clock_blocks(found, &clocks));
    Ok(Timeline {
        roles: roles.to_vec(),
        stages: stages.to_vec(),
        cap,
        grid_blocks: blocks,
        overflowed,
        unmatched,
        blocks: blocks_out,
    })
}

/// Refuses role and stage lists the buffer cannot hold and a buffer whose size is not
/// the layout's.
fn check_layout(
    words: usize,
    blocks: u32,
    cap: u32,
    roles: &[String],
    stages: &[String],
) -> Result<()> {
    if roles.is_empty() || roles.len() > LANES_PER_BLOCK {
        bail!(
            "a trace names 1 to {LANES_PER_BLOCK} roles, not {} ({})",
            roles.len(),
            roles.join(", ")
        );
    }
    if stages.is_empty() || stages.len() > usize::from(u16::MAX) + 1 {
        bail!("a trace names 1 to 65536 stages, not {}", stages.len());
    }
    let want = buffer_words(blocks, cap);
    if words as u64 != want {
        bail!(
            "the trace buffer holds {words} words, but {blocks} blocks × {LANES_PER_BLOCK} lanes × (2 + 3 × {cap} marks) make {want}"
        );
    }
    Ok(())
}

/// A block's used lanes, read and checked; an error where they ran on two SMs.
fn read_block(
    words: &[u64],
    block: u32,
    cap: u32,
    roles: &[String],
    stages: &[String],
) -> Result<Vec<Lane>> {
    let mut lanes = Vec::new();
    for (role, lane) in words.chunks_exact(lane_words(cap) as usize).enumerate() {
        lanes.extend(read_lane(lane, block, role as u8, cap, roles, stages)?);
    }
    if let Some(other) = lanes.iter().find(|l| l.sm != lanes[0].sm) {
        bail!(
            "block {block}: role {} ({}) ran on SM {} but role {} ({}) on SM {}: the lanes of one block share an SM",
            lanes[0].role,
            roles[usize::from(lanes[0].role)],
            lanes[0].sm,
            other.role,
            roles[usize::from(other.role)],
            other.sm
        );
    }
    Ok(lanes)
}

/// One block's marks as decode needs them: its lanes' spans in absolute cycles, its
/// first and last marks, and its first and last marks that %globaltimer stamped.
struct BlockMarks {
    block: u32,
    sm: u32,
    first: Mark,
    last: Mark,
    stamped: Option<(Mark, Mark)>,
    spans: Vec<Span>,
}

impl BlockMarks {
    /// The ns and cycles between its first and last stamped marks ((0, 0): none).
    fn elapsed(&self) -> (u64, u64) {
        self.stamped.map_or((0, 0), |(a, b)| {
            (b.ns.saturating_sub(a.ns), b.clock - a.clock)
        })
    }

    /// Its first mark in ns: its first stamped one (or anchor), less the cycles from its
    /// first mark to it (an anchor before the first mark adds them back).
    fn start_ns(&self, ns_per_cycle: Option<f64>) -> u64 {
        self.stamped.map_or(0, |(a, _)| {
            let before =
                (a.clock as i128 - self.first.clock as i128) as f64 * ns_per_cycle.unwrap_or(0.0);
            (i128::from(a.ns) - before.round() as i128).clamp(0, i128::from(u64::MAX)) as u64
        })
    }
}

/// A block's marks gathered and its lanes' begins and ends paired (what finds no
/// partner goes to `unmatched`); `None` where its lanes made no mark.
fn block_marks(block: u32, lanes: &[Lane], unmatched: &mut Vec<Unmatched>) -> Option<BlockMarks> {
    let all = || lanes.iter().flat_map(|l| &l.marks);
    let staged = || all().filter(|m| m.kind != ANCHOR);
    let first = staged().min_by_key(|m| m.clock).copied()?;
    let last = staged().max_by_key(|m| m.clock).copied()?;
    let timed = || all().filter(|m| m.ns != 0);
    let stamped = timed()
        .min_by_key(|m| m.clock)
        .copied()
        .zip(timed().max_by_key(|m| m.clock).copied());
    let mut spans = Vec::new();
    for l in lanes {
        pair(l, block, &mut spans, unmatched);
    }
    Some(BlockMarks {
        block,
        sm: lanes[0].sm,
        first,
        last,
        stamped,
        spans,
    })
}

/// Each block's clock: its own where it lasted long enough, else the given one, else
/// every block's pooled.
fn clock_blocks(found: Vec<BlockMarks>, clocks: &Clocks) -> Vec<(BlockMarks, Option<f64>, Clock)> {
    let (pooled_ns, pooled_cycles) = found
        .iter()
        .map(BlockMarks::elapsed)
        .filter(|&(_, c)| c > 0)
        .fold((0u64, 0u64), |(n, c), (dn, dc)| (n + dn, c + dc));
    let pooled = (pooled_cycles > 0 && pooled_ns > 0 && clocks.long_enough(pooled_ns))
        .then(|| pooled_ns as f64 / pooled_cycles as f64);
    let given = clocks
        .sm_clock_mhz
        .filter(|&m| m.is_finite() && m > 0.0)
        .map(|mhz| 1e3 / mhz);
    found
        .into_iter()
        .map(|r| {
            let (ns, cycles) = r.elapsed();
            let (ns_per_cycle, clock) = if cycles > 0 && ns > 0 && clocks.long_enough(ns) {
                (Some(ns as f64 / cycles as f64), Clock::Block)
            } else if given.is_some() {
                (given, Clock::Given)
            } else if pooled.is_some() {
                (pooled, Clock::Pooled)
            } else {
                (None, Clock::Unknown)
            };
            (r, ns_per_cycle, clock)
        })
        .collect()
}

/// The blocks placed on one time axis (ns after the kernel's first mark), their spans
/// in cycles after their own first mark.
fn place_blocks(clocked: Vec<(BlockMarks, Option<f64>, Clock)>) -> Vec<Block> {
    let kernel_start = clocked
        .iter()
        .map(|(r, npc, _)| r.start_ns(*npc))
        .min()
        .unwrap_or(0);
    clocked
        .into_iter()
        .map(|(r, ns_per_cycle, clock)| {
            let start_ns = r.start_ns(ns_per_cycle).saturating_sub(kernel_start);
            let origin = r.first.clock;
            let mut spans: Vec<Span> = r
                .spans
                .into_iter()
                .map(|s| Span {
                    start: s.start - origin,
                    end: s.end - origin,
                    ..s
                })
                .collect();
            spans.sort_by_key(|s| (s.role, s.start, s.end, s.stage));
            Block {
                block: r.block,
                sm: r.sm,
                start_ns,
                ns_per_cycle,
                clock,
                cycles: r.last.clock - r.first.clock,
                spans,
            }
        })
        .collect()
}

/// Reads one lane's words: `None` where the lane is unused (all zero).
fn read_lane(
    words: &[u64],
    block: u32,
    role: u8,
    cap: u32,
    roles: &[String],
    stages: &[String],
) -> Result<Option<Lane>> {
    let name = roles
        .get(usize::from(role))
        .map_or("no name", String::as_str);
    let here = || format!("block {block}, role {role} ({name})");
    let (made, sm_word) = (words[0], words[1]);
    if sm_word & USED_BIT == 0 {
        if let Some(i) = words.iter().position(|&w| w != 0) {
            bail!(
                "{}: the lane is not marked used (bit 63 of its word 1 is clear) but its word {i} holds {:#x}",
                here(),
                words[i]
            );
        }
        return Ok(None);
    }
    if usize::from(role) >= roles.len() {
        bail!(
            "{}: the lane was used, but the recipe names {} roles ({})",
            here(),
            roles.len(),
            roles.join(", ")
        );
    }
    let ring = (sm_word & !USED_BIT) >> 32;
    let held = if ring == 0 {
        u64::from(cap)
    } else {
        ring.min(u64::from(cap))
    };
    let kept = made.min(held) as usize;
    let mut marks = Vec::with_capacity(kept);
    for i in 0..kept {
        let [clock, ns, tag] = [words[2 + 3 * i], words[3 + 3 * i], words[4 + 3 * i]];
        let (stage, kind) = (tag & 0xFFFF, (tag >> 16) & 0xFFFF);
        if tag >> 32 != 0 || !(kind == BEGIN || kind == END || (kind == ANCHOR && stage == 0)) {
            bail!(
                "{}, mark {i}: tag {tag:#x} is not stage | kind << 16 with kind 1 (begin) or 2 (end), nor an anchor (3 << 16)",
                here()
            );
        }
        if kind != ANCHOR && stage as usize >= stages.len() {
            bail!(
                "{}, mark {i}: stage {stage}, but the recipe names {} stages ({})",
                here(),
                stages.len(),
                stages.join(", ")
            );
        }
        if let Some(prev) = marks.last().map(|m: &Mark| m.clock)
            && clock < prev
        {
            bail!(
                "{}, mark {i}: the cycle counter went back ({prev} then {clock}): marks of a lane are in program order",
                here()
            );
        }
        marks.push(Mark {
            clock,
            ns,
            stage: stage as u16,
            kind,
        });
    }
    Ok(Some(Lane {
        role,
        sm: sm_word as u32,
        marks,
        made,
        held,
    }))
}

/// Pairs a lane's begins and ends per stage, the latest begin first, into `spans`
/// (absolute cycles); what finds no partner goes to `unmatched`, but the begins an
/// overflow left open (their ends were not kept).
fn pair(lane: &Lane, block: u32, spans: &mut Vec<Span>, unmatched: &mut Vec<Unmatched>) {
    use std::collections::BTreeMap;
    let mut open: BTreeMap<u16, Vec<u64>> = BTreeMap::new();
    let mut ends: BTreeMap<u16, u32> = BTreeMap::new();
    for m in lane.marks.iter().filter(|m| m.kind != ANCHOR) {
        if m.kind == BEGIN {
            open.entry(m.stage).or_default().push(m.clock);
        } else if let Some(start) = open.get_mut(&m.stage).and_then(Vec::pop) {
            spans.push(Span {
                role: lane.role,
                stage: m.stage,
                start,
                end: m.clock,
            });
        } else {
            *ends.entry(m.stage).or_default() += 1;
        }
    }
    let cut = lane.made > lane.held;
    let mut counts: BTreeMap<u16, (u32, u32)> = BTreeMap::new();
    if !cut {
        for (stage, starts) in &open {
            if !starts.is_empty() {
                counts.entry(*stage).or_default().0 = starts.len() as u32;
            }
        }
    }
    for (stage, n) in ends {
        counts.entry(stage).or_default().1 = n;
    }
    unmatched.extend(counts.into_iter().map(|(stage, (begins, ends))| Unmatched {
        block,
        role: lane.role,
        stage,
        begins,
        ends,
    }));
}

// ---- files ----

/// The file name of a trace at `shape`: `trace-1,64,1024,128.json.gz`, each flag set
/// after a `-` (`trace-1,16,8192,128-causal.json.gz`).
pub fn file_name(shape: &Shape) -> String {
    let flags: String = shape.flags_set().iter().map(|f| format!("-{f}")).collect();
    format!("trace-{}{flags}.json.gz", shape.dims_text())
}

/// Whether a file name is a trace's (`trace-….json.gz`, or `.json` uncompressed).
pub fn is_trace_name(name: &str) -> bool {
    name.starts_with("trace-") && (name.ends_with(".json.gz") || name.ends_with(".json"))
}

impl Trace {
    /// A trace of `version` at `shape`, its timeline decoded; the rest unknown.
    pub fn new(version: &str, shape: Shape, timeline: Timeline) -> Trace {
        Trace {
            schema: SCHEMA.to_string(),
            version: version.to_string(),
            shape,
            gpu: None,
            when: None,
            timer_resolution_ns: None,
            overhead: None,
            timeline,
        }
    }

    /// Its file name in the version's folder.
    pub fn file_name(&self) -> String {
        file_name(&self.shape)
    }

    /// The file's content: compact JSON, gzipped.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        use flate2::{Compression, write::GzEncoder};
        use std::io::Write;
        let json = serde_json::to_vec(self)?;
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&json)?;
        Ok(gz.finish()?)
    }

    /// A trace from a file's bytes (gzipped or not, inflated up to `max_inflated`),
    /// checked: its schema, its spans within its names and blocks. `shown` names the
    /// file in errors.
    pub fn from_bytes(shown: &str, bytes: &[u8], max_inflated: u64) -> Result<Trace> {
        use std::io::Read;
        let inflated;
        let json: &[u8] = if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(bytes)
                .take(max_inflated.saturating_add(1))
                .read_to_end(&mut out)
                .map_err(|e| anyhow!("{shown}: gzip data is damaged: {e}"))?;
            if out.len() as u64 > max_inflated {
                bail!(
                    "{shown}: the gzip data inflates to more than {} (the decompressed-size limit, --max-decompressed)",
                    crate::files::limits::size_text(max_inflated)
                );
            }
            inflated = out;
            &inflated
        } else {
            bytes
        };
        // The schema first, so that a file of another schema says so rather than
        // failing on a field.
        #[derive(Deserialize)]
        struct Head {
            schema: Option<String>,
        }
        let head: Head =
            serde_json::from_slice(json).map_err(|e| anyhow!("{shown}: not a trace file ({e})"))?;
        if head.schema.as_deref() != Some(SCHEMA) {
            bail!(
                "{shown}: schema {:?}, but this stallscope reads {SCHEMA:?} traces",
                head.schema.unwrap_or_default()
            );
        }
        let trace: Trace = serde_json::from_slice(json).map_err(|e| anyhow!("{shown}: {e}"))?;
        trace
            .timeline
            .check()
            .with_context(|| format!("{shown}: the trace of {}", trace.version))?;
        Ok(trace)
    }
}

/// Reads the trace file at `path` from `store`, within its limits.
pub fn read_trace(store: &Store, path: &Path) -> Result<Trace> {
    let shown = store.describe(path);
    let bytes = store.read(path)?;
    Trace::from_bytes(&shown, &bytes, store.limits.max_decompressed)
}

/// A version's traces with their paths, and the files that could not be read with why.
pub type VersionTraces = (Vec<(PathBuf, Trace)>, Vec<(PathBuf, String)>);

/// The traces in version `id`'s folder of the ladder in `ladder_dir` (`trace-*.json.gz`),
/// by file name, each with its path, every one read and decoded; a file that cannot be
/// read is an error beside them. A trace of another version, or whose name is not its
/// shape's, is an error too: a writer would not replace it. (Loading a ladder only lists
/// them: [`listed_traces`].)
pub fn version_traces(store: &Store, ladder_dir: &Path, id: &str) -> VersionTraces {
    let (mut found, mut failed) = (Vec::new(), Vec::new());
    for path in trace_paths(store, ladder_dir, id) {
        match checked_trace(store, &path, id) {
            Ok(t) => found.push((path, t)),
            Err(why) => failed.push((path, why)),
        }
    }
    (found, failed)
}

/// The paths of the trace files in version `id`'s folder, by file name.
fn trace_paths(store: &Store, ladder_dir: &Path, id: &str) -> Vec<PathBuf> {
    let Ok(names) = store.files(&ladder_dir.join(id)) else {
        return Vec::new();
    };
    names
        .into_iter()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| is_trace_name(&n.to_string_lossy()))
        })
        .collect()
}

/// The trace file at `path`, read and decoded, of version `id` and named for its shape;
/// else why not (the file's name left out: the caller says it).
fn checked_trace(store: &Store, path: &Path, id: &str) -> Result<Trace, String> {
    match read_trace(store, path) {
        Ok(t) if t.version != id => Err(format!(
            "the trace is of version {:?}, not {id:?}",
            t.version
        )),
        Ok(t) if !named_for(path, &t) => Err(format!(
            "the trace is at {}: its file is named {}",
            t.shape,
            t.file_name()
        )),
        Ok(t) => Ok(t),
        Err(e) => {
            let text = format!("{e:#}");
            let prefix = format!("{}: ", store.describe(path));
            Err(text.strip_prefix(&prefix).unwrap_or(&text).to_string())
        }
    }
}

/// The shape a trace file's name says (`trace-1,16,8192,128-causal.json.gz`), as a
/// shape of `kind` (without one, of the first kind it reads as).
pub fn shape_of_name(name: &str, kind: Option<Kind>) -> Option<Shape> {
    let stem = name.strip_prefix("trace-")?;
    let stem = stem
        .strip_suffix(".json.gz")
        .or_else(|| stem.strip_suffix(".json"))?;
    let text = stem.replace('-', ":");
    match kind {
        Some(k) => Shape::parse(k, &text).ok(),
        None => crate::kinds::KINDS
            .iter()
            .find_map(|k| Shape::parse(Kind::of(*k), &text).ok()),
    }
}

/// A version's trace file: listed by its name when the ladder loads, read and decoded
/// the first time it is asked for ([`TraceFile::read`]), then kept, or why it could not
/// be read.
#[derive(Debug, Clone)]
pub struct TraceFile {
    pub path: PathBuf,
    /// The shape its name says.
    pub shape: Shape,
    read: Option<Result<Arc<Trace>, String>>,
}

impl TraceFile {
    /// A trace file not read yet.
    pub fn listed(path: PathBuf, shape: Shape) -> TraceFile {
        TraceFile {
            path,
            shape,
            read: None,
        }
    }

    /// A trace already read (one just written, or made by a test).
    pub fn decoded(path: PathBuf, trace: Trace) -> TraceFile {
        TraceFile {
            path,
            shape: trace.shape,
            read: Some(Ok(Arc::new(trace))),
        }
    }

    /// Whether it was read (well or not).
    pub fn is_read(&self) -> bool {
        self.read.is_some()
    }

    /// The trace, where it was read and decoded.
    pub fn trace(&self) -> Option<&Trace> {
        match &self.read {
            Some(Ok(t)) => Some(t),
            _ => None,
        }
    }

    /// Why it could not be read, where it was tried and failed (the file's name left
    /// out).
    pub fn error(&self) -> Option<&str> {
        match &self.read {
            Some(Err(why)) => Some(why),
            _ => None,
        }
    }

    /// Reads and decodes the file from `store` as version `id`'s trace, unless it was
    /// read already; whether it was read now. A trace of another version, or of another
    /// shape than its name says (and so than `shape`), is an error, as a file that
    /// cannot be read.
    pub fn read(&mut self, store: &Store, id: &str) -> bool {
        if self.read.is_some() {
            return false;
        }
        self.read = Some(checked_trace(store, &self.path, id).map(Arc::new));
        true
    }
}

/// Equal where it was read as that trace (for the tests).
impl PartialEq<Trace> for TraceFile {
    fn eq(&self, other: &Trace) -> bool {
        self.trace() == Some(other)
    }
}

/// The trace files in version `id`'s folder of the ladder in `ladder_dir`, by file name,
/// none of them read: each with the shape of `kind` its name says. A file named
/// `trace-…` whose name says no shape is an error beside them (it cannot be any shape's
/// trace).
pub fn listed_traces(
    store: &Store,
    ladder_dir: &Path,
    id: &str,
    kind: Option<Kind>,
) -> (Vec<TraceFile>, Vec<(PathBuf, String)>) {
    let (mut found, mut failed) = (Vec::new(), Vec::new());
    for path in trace_paths(store, ladder_dir, id) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match shape_of_name(&name, kind) {
            Some(shape) => found.push(TraceFile::listed(path, shape)),
            None => {
                let of = kind.map(|k| format!(" of {k}")).unwrap_or_default();
                failed.push((
                    path,
                    format!("its name says no shape{of} (trace-DIMS[-FLAG].json.gz)"),
                ))
            }
        }
    }
    (found, failed)
}

/// Whether `path` is named for `trace`'s shape (gzipped or not).
fn named_for(path: &Path, trace: &Trace) -> bool {
    let want = trace.file_name();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| n == want || Some(n.as_str()) == want.strip_suffix(".gz"))
}

/// Writes `trace` into its version's folder of the ladder in `ladder_dir` (which must
/// exist), replacing the trace of that version and shape, under the ladder's lock, in
/// one rename; returns its path. The ladder's manifest must name the version for
/// loading to find it (the caller records it, as a run does).
pub fn write_trace(ladder_dir: &Path, trace: &Trace) -> Result<PathBuf> {
    crate::files::names::check_folder_name("version id", &trace.version)?;
    if trace.version.contains(".staging-") {
        bail!(
            "version id {:?} holds \".staging-\", which marks an import in progress",
            trace.version
        );
    }
    trace
        .timeline
        .check()
        .with_context(|| format!("the trace of {}", trace.version))?;
    let bytes = trace.to_bytes()?;
    let _lock = crate::files::lock::Lock::acquire(ladder_dir)?;
    let dir = ladder_dir.join(&trace.version);
    crate::files::confine::create_dir(ladder_dir, &dir)?;
    let path = dir.join(trace.file_name());
    crate::files::write::atomically(&path, &bytes)?;
    Ok(path)
}

/// A trace buffer written as the kernels' header writes it (`kernels/stallscope_trace.h`),
/// for the tests: lanes opened with their SM, marks counted in word 0 and kept up to
/// the capacity.
#[cfg(test)]
pub(crate) mod raw {
    // Named from the crate's root: inside a module of its own, `super` is this file.
    use crate::model::trace::{BEGIN, END, LANES_PER_BLOCK, USED_BIT, lane_words};

    pub struct Buffer {
        pub words: Vec<u64>,
        pub blocks: u32,
        pub cap: u32,
    }

    impl Buffer {
        pub fn new(blocks: u32, cap: u32) -> Buffer {
            let words = vec![0; blocks as usize * LANES_PER_BLOCK * lane_words(cap) as usize];
            Buffer { words, blocks, cap }
        }

        fn base(&self, block: u32, role: u32) -> usize {
            (block as usize * LANES_PER_BLOCK + role as usize) * lane_words(self.cap) as usize
        }

        /// What the leader does first: word 0 zeroed, word 1 the SM with bit 63.
        pub fn open(&mut self, block: u32, role: u32, sm: u32) {
            let at = self.base(block, role);
            self.words[at] = 0;
            self.words[at + 1] = USED_BIT | u64::from(sm);
        }

        /// One mark: kept where the lane has room, counted in any case.
        pub fn mark(&mut self, block: u32, role: u32, clock: u64, ns: u64, stage: u16, kind: u64) {
            let at = self.base(block, role);
            let i = self.words[at];
            if i < u64::from(self.cap) {
                let m = at + 2 + 3 * i as usize;
                self.words[m] = clock;
                self.words[m + 1] = ns;
                self.words[m + 2] = u64::from(stage) | kind << 16;
            }
            self.words[at] = i + 1;
        }

        pub fn begin(&mut self, block: u32, role: u32, clock: u64, ns: u64, stage: u16) {
            self.mark(block, role, clock, ns, stage, BEGIN);
        }

        pub fn end(&mut self, block: u32, role: u32, clock: u64, ns: u64, stage: u16) {
            self.mark(block, role, clock, ns, stage, END);
        }
    }

    pub fn roles() -> Vec<String> {
        ["producer", "consumer 0", "consumer 1"]
            .map(String::from)
            .to_vec()
    }

    pub fn stages() -> Vec<String> {
        [
            "load K", "load V", "Q·Kᵀ", "softmax", "P·V", "store", "wait",
        ]
        .map(String::from)
        .to_vec()
    }

    pub const LOAD_K: u16 = 0;
    pub const LOAD_V: u16 = 1;
    pub const QK: u16 = 2;
    pub const SOFTMAX: u16 = 3;
    pub const PV: u16 = 4;
    pub const STORE: u16 = 5;
    pub const WAIT: u16 = 6;

    /// Three blocks, eight marks a lane:
    ///
    /// - block 0 on SM 5, from clock 10 000 and 1 000 000 ns, 2 ns a cycle, 2000 cycles
    ///   (4000 ns: long enough at a 32 ns timer). Producer: load K [0, 400], load V
    ///   [400, 800]. Consumer 0: Q·Kᵀ [500, 1000], softmax [1000, 1600], P·V [1600,
    ///   2000]. Consumer 1: Q·Kᵀ [1000, 1400], softmax [1500, 1900] with a softmax
    ///   [1600, 1700] nested in it, then a store begun at 1950 and never ended. Role 3
    ///   unused.
    /// - block 1 on SM 9, from clock 50 000 and 1 000 500 ns (500 ns after block 0),
    ///   100 cycles in 100 ns: too short for its own clock. Producer: load K [0, 100] and
    ///   an end of load V with no begin at 100. Consumer 0 made 10 marks, 8 kept: Q·Kᵀ
    ///   [0, 20], softmax [20, 40], P·V [40, 60], then a store begun at 60 and a wait at
    ///   70, both cut by the overflow.
    /// - block 2 marked nothing.
    pub fn scenario() -> Buffer {
        let mut b = Buffer::new(3, 8);
        let ns0 = |c: u64| 1_000_000 + 2 * (c - 10_000);
        let span =
            |b: &mut Buffer, block, role, stage, from: u64, to: u64, ns: &dyn Fn(u64) -> u64| {
                b.begin(block, role, from, ns(from), stage);
                b.end(block, role, to, ns(to), stage);
            };
        for role in 0..3 {
            b.open(0, role, 5);
        }
        span(&mut b, 0, 0, LOAD_K, 10_000, 10_400, &ns0);
        span(&mut b, 0, 0, LOAD_V, 10_400, 10_800, &ns0);
        span(&mut b, 0, 1, QK, 10_500, 11_000, &ns0);
        span(&mut b, 0, 1, SOFTMAX, 11_000, 11_600, &ns0);
        span(&mut b, 0, 1, PV, 11_600, 12_000, &ns0);
        span(&mut b, 0, 2, QK, 11_000, 11_400, &ns0);
        b.begin(0, 2, 11_500, ns0(11_500), SOFTMAX);
        span(&mut b, 0, 2, SOFTMAX, 11_600, 11_700, &ns0);
        b.end(0, 2, 11_900, ns0(11_900), SOFTMAX);
        b.begin(0, 2, 11_950, ns0(11_950), STORE);

        let ns1 = |c: u64| 1_000_500 + (c - 50_000);
        b.open(1, 0, 9);
        b.open(1, 1, 9);
        span(&mut b, 1, 0, LOAD_K, 50_000, 50_100, &ns1);
        b.end(1, 0, 50_100, ns1(50_100), LOAD_V);
        span(&mut b, 1, 1, QK, 50_000, 50_020, &ns1);
        span(&mut b, 1, 1, SOFTMAX, 50_020, 50_040, &ns1);
        span(&mut b, 1, 1, PV, 50_040, 50_060, &ns1);
        b.begin(1, 1, 50_060, ns1(50_060), STORE);
        b.begin(1, 1, 50_070, ns1(50_070), WAIT);
        // Past the capacity: counted, not kept.
        b.end(1, 1, 50_090, ns1(50_090), WAIT);
        b.end(1, 1, 50_095, ns1(50_095), STORE);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::raw::*;
    use super::*;

    fn clocks() -> Clocks {
        Clocks {
            timer_resolution_ns: Some(32),
            sm_clock_mhz: Some(1980.0),
        }
    }

    fn decoded(clocks: Clocks) -> Timeline {
        let b = scenario();
        decode(&b.words, b.blocks, b.cap, &roles(), &stages(), clocks).unwrap()
    }

    fn span(role: u8, stage: u16, start: u64, end: u64) -> Span {
        Span {
            role,
            stage,
            start,
            end,
        }
    }

    #[test]
    fn a_buffer_decodes_into_spans_per_block_in_cycles_from_its_first_mark() {
        let t = decoded(clocks());
        assert_eq!(t.grid_blocks, 3);
        // Block 2 marked nothing: it is not there.
        assert_eq!(t.blocks.iter().map(|b| b.block).collect::<Vec<_>>(), [0, 1]);
        let b0 = &t.blocks[0];
        assert_eq!((b0.sm, b0.start_ns, b0.cycles), (5, 0, 2000));
        assert_eq!(
            b0.spans,
            [
                span(0, LOAD_K, 0, 400),
                span(0, LOAD_V, 400, 800),
                span(1, QK, 500, 1000),
                span(1, SOFTMAX, 1000, 1600),
                span(1, PV, 1600, 2000),
                span(2, QK, 1000, 1400),
                // Nested in itself: the inner end closes the inner begin.
                span(2, SOFTMAX, 1500, 1900),
                span(2, SOFTMAX, 1600, 1700),
            ]
        );
        let b1 = &t.blocks[1];
        assert_eq!((b1.sm, b1.start_ns, b1.cycles), (9, 500, 100));
        assert_eq!(
            b1.spans,
            [
                span(0, LOAD_K, 0, 100),
                span(1, QK, 0, 20),
                span(1, SOFTMAX, 20, 40),
                span(1, PV, 40, 60),
            ]
        );
    }

    #[test]
    fn marks_the_timer_did_not_stamp_are_placed_by_the_cycle_counter() {
        // The header stamps %globaltimer on a lane's first mark and every 64th; here
        // every third, so that the scenario's short lanes keep a few: the spans, the
        // blocks' places and block 0's own clock come out as when every mark is stamped.
        let mut b = scenario();
        let stride = lane_words(b.cap) as usize;
        for lane in b.words.chunks_mut(stride) {
            let kept = lane[0].min(u64::from(b.cap)) as usize;
            for i in (0..kept).filter(|i| i % 3 != 0) {
                lane[2 + 3 * i + 1] = 0;
            }
        }
        let sparse = decode(&b.words, b.blocks, b.cap, &roles(), &stages(), clocks()).unwrap();
        let full = decoded(clocks());
        assert_eq!(sparse.blocks, full.blocks);
        assert_eq!(sparse.blocks[0].ns_per_cycle, Some(2.0));
        assert_eq!(sparse.blocks[1].start_ns, 500);
    }

    #[test]
    fn a_lane_keeps_no_more_than_the_bound_its_kernel_wrote_in_word_1() {
        // The header's on-chip log holds SS_TRACE_RING marks a lane and says so in bits
        // 32-62 of word 1: block 0's producer could keep 2 of its 4 marks (load K, load
        // V), so it keeps load K's span, drops load V's begin and end, and overflowed.
        let mut b = scenario();
        b.words[1] |= 2 << 32; // block 0, role 0: the buffer's first lane
        let t = decode(&b.words, 3, 8, &roles(), &stages(), clocks()).unwrap();
        assert!(
            t.overflowed
                .iter()
                .any(|o| (o.block, o.role, o.marks) == (0, 0, 4)),
            "{:?}",
            t.overflowed
        );
        let producer: Vec<(u16, u64, u64)> = t.blocks[0]
            .spans
            .iter()
            .filter(|s| s.role == 0)
            .map(|s| (s.stage, s.start, s.end))
            .collect();
        assert_eq!(producer, vec![(0, 0, 400)]);
        // A bound above the buffer's capacity changes nothing.
        let mut b = scenario();
        b.words[1] |= 1000 << 32;
        let t = decode(&b.words, 3, 8, &roles(), &stages(), clocks()).unwrap();
        assert!(!t.overflowed.iter().any(|o| o.block == 0 && o.role == 0));
    }

    #[test]
    fn overflows_and_marks_without_a_partner_are_counted_never_fatal() {
        let t = decoded(clocks());
        assert_eq!(
            t.overflowed,
            [Overflow {
                block: 1,
                role: 1,
                marks: 10
            }]
        );
        // Block 1's consumer 0 left a store and a wait open where it was cut: not
        // counted. Consumer 1's store of block 0 and the producer's stray end are.
        assert_eq!(
            t.unmatched,
            [
                Unmatched {
                    block: 0,
                    role: 2,
                    stage: STORE,
                    begins: 1,
                    ends: 0
                },
                Unmatched {
                    block: 1,
                    role: 0,
                    stage: LOAD_V,
                    begins: 0,
                    ends: 1
                },
            ]
        );
        assert_eq!(t.unmatched_marks(), 2);
        assert!(t.cut(&t.blocks[1]) && !t.cut(&t.blocks[0]));
    }

    #[test]
    fn a_block_long_enough_gives_its_own_clock_a_short_one_takes_the_given_or_the_pooled() {
        // Block 0: 4000 ns over 2000 cycles, at least 100 steps of 32 ns.
        let t = decoded(clocks());
        assert_eq!(t.blocks[0].clock, Clock::Block);
        assert_eq!(t.blocks[0].ns_per_cycle, Some(2.0));
        // Block 1: 100 ns is three steps: the given 1980 MHz.
        assert_eq!(t.blocks[1].clock, Clock::Given);
        let given = t.blocks[1].ns_per_cycle.unwrap();
        assert!((given - 1000.0 / 1980.0).abs() < 1e-12, "{given}");
        assert_eq!(t.blocks[1].ns_at(100), Some(500.0 + 100.0 * given));
        // Without a given clock: both blocks pooled, 4100 ns over 2100 cycles.
        let t = decoded(Clocks {
            sm_clock_mhz: None,
            ..clocks()
        });
        assert_eq!(t.blocks[1].clock, Clock::Pooled);
        let pooled = t.blocks[1].ns_per_cycle.unwrap();
        assert!((pooled - 4100.0 / 2100.0).abs() < 1e-12, "{pooled}");
        // A timer of unknown step is taken at 1 µs: no block and not the pool lasts
        // 100 µs, and nothing is given: cycles only.
        let t = decoded(Clocks::default());
        assert_eq!(t.blocks[0].clock, Clock::Unknown);
        assert_eq!(t.blocks[0].ns_per_cycle, None);
        assert_eq!(t.blocks[0].duration_ns(), None);
    }

    /// The error for `words` changed by `edit`, as decoded with the scenario's names.
    fn refused(edit: impl FnOnce(&mut Buffer)) -> String {
        let mut b = scenario();
        edit(&mut b);
        let e = decode(&b.words, b.blocks, b.cap, &roles(), &stages(), clocks()).unwrap_err();
        format!("{e:#}")
    }

    #[test]
    fn a_buffer_that_breaks_the_layout_is_refused_naming_the_lane() {
        let stride = lane_words(8) as usize;
        let lane = |block: usize, role: usize| (block * 4 + role) * stride;
        let e = refused(|b| {
            b.words.pop();
        });
        assert!(
            e.contains("holds 311 words") && e.contains("make 312"),
            "{e}"
        );
        // Block 2's producer lane unused, yet a mark in it.
        let e = refused(|b| b.words[lane(2, 0) + 2] = 7);
        assert!(
            e.starts_with("block 2, role 0 (producer): the lane is not marked used"),
            "{e}"
        );
        // Block 1's role 3 used, but three roles have names.
        let e = refused(|b| b.open(1, 3, 9));
        assert!(
            e.starts_with(
                "block 1, role 3 (no name): the lane was used, but the recipe names 3 roles"
            ),
            "{e}"
        );
        // A kind 3 in block 0's consumer 0, mark 1.
        let e = refused(|b| b.words[lane(0, 1) + 2 + 3 + 2] = u64::from(QK) | 3 << 16);
        assert!(
            e.starts_with("block 0, role 1 (consumer 0), mark 1: tag 0x30002"),
            "{e}"
        );
        // A stage past the names.
        let e = refused(|b| b.words[lane(0, 1) + 2 + 2] = 7 | BEGIN << 16);
        assert!(
            e.contains("mark 0: stage 7, but the recipe names 7 stages"),
            "{e}"
        );
        // The counter going back.
        let e = refused(|b| b.words[lane(0, 0) + 2 + 3] = 9_999);
        assert!(
            e.contains("role 0 (producer), mark 1: the cycle counter went back (10000 then 9999)"),
            "{e}"
        );
        // Two SMs in one block.
        let e = refused(|b| b.words[lane(0, 2) + 1] = USED_BIT | 6);
        assert!(
            e.contains("block 0: role 0 (producer) ran on SM 5 but role 2 (consumer 1) on SM 6"),
            "{e}"
        );
        let b = scenario();
        let e = decode(&b.words, 3, 8, &[], &stages(), clocks()).unwrap_err();
        assert!(e.to_string().contains("1 to 4 roles, not 0"), "{e}");
    }

    fn trace() -> Trace {
        let mut t = Trace::new(
            "v13",
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            decoded(clocks()),
        );
        t.gpu = Some("NVIDIA H200".into());
        t.timer_resolution_ns = Some(32);
        t.overhead = Some(Overhead {
            plain_us: 100.0,
            traced_us: 102.5,
        });
        t
    }

    #[test]
    fn a_trace_file_reads_back_as_written_with_spans_as_arrays() {
        let t = trace();
        assert_eq!(t.file_name(), "trace-1,64,1024,128.json.gz");
        let bytes = t.to_bytes().unwrap();
        assert!(bytes.starts_with(&[0x1f, 0x8b]));
        assert_eq!(Trace::from_bytes("t", &bytes, 1 << 20).unwrap(), t);
        let json = serde_json::to_string(&t).unwrap();
        assert!(
            json.contains(r#""spans":[[0,0,0,400],[0,1,400,800]"#),
            "{json}"
        );
        assert!(json.contains(
            r#""shape":{"kind":"attention","b":1,"h":64,"s":1024,"d":128,"causal":false}"#
        ));
        assert!((t.overhead.unwrap().pct().unwrap() - 2.5).abs() < 1e-9);
        let causal = crate::kinds::attention::shape(1, 16, 8192, 128, true);
        assert_eq!(file_name(&causal), "trace-1,16,8192,128-causal.json.gz");
    }

    #[test]
    fn a_trace_file_that_does_not_hold_together_is_refused_saying_why() {
        let t = trace();
        let json = serde_json::to_string(&t).unwrap();
        let e = Trace::from_bytes(
            "x.json",
            json.replace(SCHEMA, "stallscope/trace/9").as_bytes(),
            1 << 20,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("x.json: schema \"stallscope/trace/9\", but this stallscope reads"),
            "{e}"
        );
        // A span past its block's end.
        let e = Trace::from_bytes(
            "x.json",
            json.replace("[2,3,1500,1900]", "[2,3,1500,2900]")
                .as_bytes(),
            1 << 20,
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("block 0: span [2, 3, 1500, 2900]"),
            "{e:#}"
        );
        // A stage without a name.
        let e = Trace::from_bytes(
            "x.json",
            json.replace("[2,3,1500,1900]", "[2,9,1500,1900]")
                .as_bytes(),
            1 << 20,
        )
        .unwrap_err();
        assert!(
            format!("{e:#}")
                .contains("span [2, 9, 1500, 1900] names a role or stage without a name"),
            "{e:#}"
        );
        // A span ending before it starts.
        let e = Trace::from_bytes(
            "x.json",
            json.replace("[2,3,1500,1900]", "[2,3,1900,1500]")
                .as_bytes(),
            1 << 20,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("is not [role, stage, start, end] with start ≤ end"),
            "{e}"
        );
        // Inflating past the limit.
        let e = Trace::from_bytes("x.json.gz", &t.to_bytes().unwrap(), 100).unwrap_err();
        assert!(
            e.to_string().contains("inflates to more than 100 bytes"),
            "{e}"
        );
    }

    #[test]
    fn a_trace_is_written_into_its_version_folder_and_found_there() {
        let dir = tempfile::tempdir().unwrap();
        let t = trace();
        let path = write_trace(dir.path(), &t).unwrap();
        assert_eq!(path, dir.path().join("v13/trace-1,64,1024,128.json.gz"));
        let store = Store::disk(crate::files::limits::SizeLimits::DEFAULT);
        let (found, failed) = version_traces(&store, dir.path(), "v13");
        assert_eq!(failed, Vec::<(PathBuf, String)>::new());
        assert_eq!(found, vec![(path.clone(), t.clone())]);
        // Copied under another name, and into another version's folder: both refused.
        std::fs::copy(&path, dir.path().join("v13/trace-1,1,1,1.json.gz")).unwrap();
        std::fs::create_dir(dir.path().join("v14")).unwrap();
        std::fs::copy(&path, dir.path().join("v14/trace-1,64,1024,128.json.gz")).unwrap();
        let (found, failed) = version_traces(&store, dir.path(), "v13");
        assert_eq!(found.len(), 1);
        assert_eq!(failed.len(), 1);
        assert!(
            failed[0]
                .1
                .contains("its file is named trace-1,64,1024,128.json.gz"),
            "{failed:?}"
        );
        let (_, failed) = version_traces(&store, dir.path(), "v14");
        assert!(
            failed[0]
                .1
                .contains("the trace is of version \"v13\", not \"v14\""),
            "{failed:?}"
        );
        // A version id that names no plain folder is refused before anything is written.
        let mut bad = t.clone();
        bad.version = "../v13".into();
        assert!(write_trace(dir.path(), &bad).is_err());
        bad.version = "v13.staging-1".into();
        assert!(write_trace(dir.path(), &bad).is_err());
    }

    // ---- the GPU side's tests of the same decoder (buffers as lane tuples) ----

    fn names(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    /// A mark as (cycles, ns, stage, kind).
    type M = (u64, u64, u64, u64);
    /// A lane as (block, role, SM, marks made, its marks).
    type L<'a> = (u32, usize, u32, u64, &'a [M]);

    /// A buffer of `blocks` blocks and `cap` marks a lane, laid out as
    /// kernels/stallscope_trace.h writes it: each lane given as (block, role, SM, marks
    /// made, marks as (cycles, ns, stage, kind)).
    fn buffer(blocks: u32, cap: u32, lanes: &[L]) -> Vec<u64> {
        let mut raw = vec![0u64; buffer_words(blocks, cap) as usize];
        let stride = lane_words(cap) as usize;
        for &(block, role, sm, made, marks) in lanes {
            let at = (block as usize * LANES_PER_BLOCK + role) * stride;
            raw[at] = made;
            raw[at + 1] = USED_BIT | u64::from(sm);
            for (i, &(c, ns, stage, kind)) in marks.iter().enumerate().take(cap as usize) {
                raw[at + 2 + 3 * i..at + 5 + 3 * i].copy_from_slice(&[c, ns, stage | kind << 16]);
            }
        }
        raw
    }

    #[test]
    fn two_roles_of_a_block_decode_to_their_spans_from_the_block_s_first_mark() {
        // Producer: stage 6 over cycles 100..300. Consumer 0: stage 2 over 200..500,
        // stage 3 over 500..900. The block starts at cycle 100.
        let producer: &[M] = &[(100, 10_000, 6, BEGIN), (300, 10_200, 6, END)];
        let consumer: &[M] = &[
            (200, 10_100, 2, BEGIN),
            (500, 10_400, 2, END),
            (500, 10_400, 3, BEGIN),
            (900, 10_800, 3, END),
        ];
        let raw = buffer(2, 8, &[(0, 0, 5, 2, producer), (0, 1, 5, 4, consumer)]);
        let roles = names(&["producer", "consumer 0"]);
        let stages = names(&[
            "wait K",
            "wait V",
            "Q·Kᵀ",
            "softmax",
            "P·V",
            "store",
            "issue loads",
        ]);
        let t = decode(&raw, 2, 8, &roles, &stages, clocks()).unwrap();
        assert_eq!(t.blocks.len(), 1, "block 1 marked nothing");
        let b = &t.blocks[0];
        assert_eq!((b.block, b.sm, b.start_ns, b.cycles), (0, 5, 0, 800));
        let spans: Vec<(u8, u16, u64, u64)> = b
            .spans
            .iter()
            .map(|s| (s.role, s.stage, s.start, s.end))
            .collect();
        assert_eq!(spans, [(0, 6, 0, 200), (1, 2, 100, 400), (1, 3, 400, 800)]);
        assert!(t.overflowed.is_empty() && t.unmatched.is_empty());
        assert_eq!(t.stage_name(3), "softmax");
    }

    #[test]
    fn an_overflowed_lane_and_an_unmatched_mark_are_counted_not_fatal() {
        // Role 0 made 5 marks into a lane of 2: its first two kept. Role 1 ends a stage
        // it never began.
        let full: &[M] = &[(10, 1, 0, BEGIN), (20, 2, 0, END)];
        let stray: &[M] = &[(15, 1, 1, END)];
        let raw = buffer(1, 2, &[(0, 0, 3, 5, full), (0, 1, 3, 1, stray)]);
        let t = decode(
            &raw,
            1,
            2,
            &names(&["a", "b"]),
            &names(&["x", "y"]),
            clocks(),
        )
        .unwrap();
        assert_eq!(t.overflowed.len(), 1);
        assert_eq!((t.overflowed[0].role, t.overflowed[0].marks), (0, 5));
        assert_eq!(t.unmatched.len(), 1);
        assert_eq!(
            (
                t.unmatched[0].role,
                t.unmatched[0].stage,
                t.unmatched[0].ends
            ),
            (1, 1, 1)
        );
        assert_eq!(t.blocks[0].spans.len(), 1);
    }

    #[test]
    fn a_buffer_that_breaks_the_layout_is_an_error_naming_where() {
        let roles = names(&["producer"]);
        let stages = names(&["x"]);
        let e = decode(&[0; 7], 1, 1, &roles, &stages, clocks()).unwrap_err();
        assert!(format!("{e}").contains("holds 7 words"), "{e}");
        // A stage past the recipe's names.
        let bad: &[M] = &[(1, 1, 4, BEGIN)];
        let raw = buffer(1, 2, &[(0, 0, 0, 1, bad)]);
        let e = decode(&raw, 1, 2, &roles, &stages, clocks()).unwrap_err();
        assert!(
            format!("{e}").contains("block 0, role 0 (producer), mark 0: stage 4"),
            "{e}"
        );
        // Two lanes of one block on two SMs.
        let m: &[M] = &[(1, 1, 0, BEGIN)];
        let raw = buffer(1, 1, &[(0, 0, 1, 1, m), (0, 1, 2, 1, m)]);
        let e = decode(&raw, 1, 1, &names(&["a", "b"]), &stages, clocks()).unwrap_err();
        assert!(format!("{e}").contains("share an SM"), "{e}");
    }

    #[test]
    fn blocks_are_placed_by_the_global_timer_and_timed_by_their_own_clock() {
        // Block 1 starts 5 µs after block 0; each lasts 4000 ns over 8000 cycles, 100
        // steps of 32 ns and more: its own 0.5 ns a cycle.
        let a: &[M] = &[(0, 1_000, 0, BEGIN), (8_000, 5_000, 0, END)];
        let b: &[M] = &[(50, 6_000, 0, BEGIN), (8_050, 10_000, 0, END)];
        let raw = buffer(2, 4, &[(0, 0, 1, 2, a), (1, 0, 2, 2, b)]);
        let t = decode(&raw, 2, 4, &names(&["p"]), &names(&["x"]), clocks()).unwrap();
        let starts: Vec<u64> = t.blocks.iter().map(|b| b.start_ns).collect();
        assert_eq!(starts, [0, 5_000]);
        assert!(
            t.blocks
                .iter()
                .all(|b| b.clock == Clock::Block && b.ns_per_cycle == Some(0.5))
        );
    }

    #[test]
    fn anchors_place_and_time_a_block_and_bound_no_span() {
        // The header's on-chip lanes: %globaltimer only in the anchors, read when the
        // lane opened (100 cycles before its first mark) and closed (100 after its
        // last). Block 1 opens 5 µs after block 0; each lane lasts 8200 cycles over
        // 4100 ns: 0.5 ns a cycle, from the anchors alone.
        let a: &[M] = &[
            (0, 1_000, 0, ANCHOR),
            (100, 0, 0, BEGIN),
            (8_100, 0, 0, END),
            (8_200, 5_100, 0, ANCHOR),
        ];
        let b: &[M] = &[
            (50, 6_000, 0, ANCHOR),
            (150, 0, 0, BEGIN),
            (8_150, 0, 0, END),
            (8_250, 10_100, 0, ANCHOR),
        ];
        let raw = buffer(2, 4, &[(0, 0, 1, 4, a), (1, 0, 2, 4, b)]);
        let t = decode(&raw, 2, 4, &names(&["p"]), &names(&["x"]), clocks()).unwrap();
        let starts: Vec<u64> = t.blocks.iter().map(|b| b.start_ns).collect();
        // A block starts at its first mark: 100 cycles (50 ns) after its opening.
        assert_eq!(starts, [0, 5_000]);
        for b in &t.blocks {
            assert_eq!((b.clock, b.ns_per_cycle), (Clock::Block, Some(0.5)));
            assert_eq!(b.cycles, 8_000, "the anchors are not the block's marks");
            let spans: Vec<(u16, u64, u64)> =
                b.spans.iter().map(|s| (s.stage, s.start, s.end)).collect();
            assert_eq!(spans, [(0, 0, 8_000)]);
        }
        assert!(t.unmatched.is_empty() && t.overflowed.is_empty());
        // An anchor names no stage: a stage there breaks the layout.
        let bad: &[M] = &[(0, 1_000, 1, ANCHOR)];
        let raw = buffer(1, 2, &[(0, 0, 1, 1, bad)]);
        let e = decode(&raw, 1, 2, &names(&["p"]), &names(&["x", "y"]), clocks()).unwrap_err();
        assert!(format!("{e}").contains("nor an anchor"), "{e}");
    }

    #[test]
    fn a_trace_round_trips_through_its_file() {
        let m: &[M] = &[(0, 0, 0, BEGIN), (10, 5, 0, END)];
        let raw = buffer(1, 2, &[(0, 0, 0, 2, m)]);
        let timeline = decode(&raw, 1, 2, &names(&["p"]), &names(&["x"]), clocks()).unwrap();
        let shape = crate::kinds::attention::shape(1, 64, 1024, 128, true);
        let t = Trace {
            schema: SCHEMA.to_string(),
            version: "v13".into(),
            shape,
            gpu: Some("NVIDIA H200".into()),
            when: None,
            timer_resolution_ns: Some(32),
            overhead: Some(Overhead {
                plain_us: 100.0,
                traced_us: 102.0,
            }),
            timeline,
        };
        assert_eq!(t.file_name(), "trace-1,64,1024,128-causal.json.gz");
        let bytes = t.to_bytes().unwrap();
        let back = Trace::from_bytes("t", &bytes, 1 << 20).unwrap();
        assert_eq!(back, t);
        assert!((t.overhead.unwrap().pct().unwrap() - 2.0).abs() < 1e-9);
    }
}
