//! What limits a launch's occupancy: of the blocks per SM each resource allows
//! (registers, shared memory, warps, the SM's own block limit, barriers), the smallest.
//! Read from the raw page's `launch__occupancy_limit_*` or the details page's Occupancy
//! section.

use crate::model::Profile;
use serde::Serialize;
use std::fmt;

/// The resources, with the names ncu gives their limits on the raw and details pages.
const LIMITS: &[(&str, &str, &str)] = &[
    (
        "registers",
        "launch__occupancy_limit_registers",
        "Block Limit Registers",
    ),
    (
        "shared memory",
        "launch__occupancy_limit_shared_mem",
        "Block Limit Shared Mem",
    ),
    (
        "warps",
        "launch__occupancy_limit_warps",
        "Block Limit Warps",
    ),
    (
        "blocks per SM",
        "launch__occupancy_limit_blocks",
        "Block Limit SM",
    ),
    (
        "barriers",
        "launch__occupancy_limit_barriers",
        "Block Limit Barriers",
    ),
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OccupancyLimit {
    /// Blocks per SM the launch can have resident.
    pub blocks: u32,
    /// The resources that allow only that many (several on a tie).
    pub limiters: Vec<&'static str>,
    /// Every resource's limit, as read.
    pub limits: Vec<(&'static str, u32)>,
}

impl OccupancyLimit {
    pub fn of(p: &Profile) -> Option<OccupancyLimit> {
        let limits: Vec<(&'static str, u32)> = LIMITS
            .iter()
            .filter_map(|&(name, raw, detail)| {
                let v = p
                    .raw_value(raw)
                    .or_else(|| p.detail_value("Occupancy", detail))?;
                (v.is_finite() && v >= 0.0).then_some((name, v as u32))
            })
            .collect();
        let blocks = limits.iter().map(|&(_, n)| n).min()?;
        Some(OccupancyLimit {
            blocks,
            limiters: limits
                .iter()
                .filter(|&&(_, n)| n == blocks)
                .map(|&(name, _)| name)
                .collect(),
            limits,
        })
    }

    /// `regs+smem 3`: the limiters abbreviated and the blocks per SM, for narrow cells.
    pub fn compact(&self) -> String {
        let short = |n: &str| {
            match n {
                "registers" => "regs",
                "shared memory" => "smem",
                "blocks per SM" => "blocks",
                "barriers" => "bars",
                other => other,
            }
            .to_string()
        };
        let names: Vec<String> = self.limiters.iter().map(|n| short(n)).collect();
        format!("{} {}", names.join("+"), self.blocks)
    }

    /// `registers, 2 blocks/SM`.
    pub fn short(&self) -> String {
        format!(
            "{}, {} block{}/SM",
            self.limiters.join(" + "),
            self.blocks,
            if self.blocks == 1 { "" } else { "s" }
        )
    }
}

impl fmt::Display for OccupancyLimit {
    /// `limited by registers and shared memory: 2 blocks/SM (warps allow 16, …)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let others: Vec<String> = self
            .limits
            .iter()
            .filter(|(name, _)| !self.limiters.contains(name))
            .map(|(name, n)| format!("{name} allow {n}"))
            .collect();
        write!(
            f,
            "limited by {}: {} block{}/SM",
            self.limiters.join(" and "),
            self.blocks,
            if self.blocks == 1 { "" } else { "s" }
        )?;
        if !others.is_empty() {
            write!(f, " ({})", others.join(", "))?;
        }
        Ok(())
    }
}
