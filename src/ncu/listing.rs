//! The source page's content: one kernel's SASS listing with its warp-stall samples,
//! the CUDA lines the instructions belong to, and the summary the analysis reads of it.

use super::stall::StallReason;
use serde::Serialize;

/// The SASS listing of one kernel with its samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourceListing {
    pub lines: Vec<SassLine>,
    /// With `--print-source cuda,sass`: the CUDA lines the instructions belong to.
    pub cuda_lines: Vec<CudaLine>,
    pub file: Option<String>,
}

impl SourceListing {
    /// All stall samples of the listing (a parsed listing's total fits a u64: the parser
    /// refuses larger ones).
    pub fn total_samples(&self) -> u128 {
        self.lines.iter().map(|l| u128::from(l.samples)).sum()
    }
}

/// What the analysis reads of a listing, without its rows: the (stall reason × opcode
/// class) table of samples, and what tells two listings apart. Small enough to store
/// beside the page, so that a ladder's trail needs no listing read.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceSummary {
    /// Per opcode class, by name.
    pub opcodes: Vec<OpcodeSamples>,
    /// Instructions listed.
    pub instructions: usize,
    /// CUDA lines listed (`--print-source cuda,sass`).
    pub cuda_lines: usize,
    /// A hash of every instruction's address and samples: the listings one report
    /// gives as `sass` and as `cuda,sass` have the same, other listings another.
    pub fingerprint: u64,
}

/// One opcode class of a listing with its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct OpcodeSamples {
    pub opcode: Box<str>,
    pub instructions: usize,
    /// All samples, `selected` included.
    pub samples: u64,
    /// Samples per reason, indexed by [`StallReason::index`].
    pub stalls: Box<[u64]>,
}

impl SourceSummary {
    /// All samples of the listing.
    pub fn total_samples(&self) -> u128 {
        self.opcodes.iter().map(|o| u128::from(o.samples)).sum()
    }

    /// Samples per reason over the whole listing, indexed by [`StallReason::index`].
    pub fn stalls(&self) -> Vec<u64> {
        let mut out = vec![0u64; StallReason::COUNT];
        for o in &self.opcodes {
            for (t, &n) in out.iter_mut().zip(o.stalls.iter()) {
                *t = t.saturating_add(n);
            }
        }
        out
    }
}

impl SourceListing {
    /// The listing's samples by opcode class and reason (see [`SourceSummary`]).
    pub fn summary(&self) -> SourceSummary {
        let mut by_op: std::collections::BTreeMap<&str, OpcodeSamples> = Default::default();
        // FNV-1a over the addresses and samples: stable from one build to the next, as a
        // summary stored on disk needs.
        let mut fingerprint: u64 = 0xcbf2_9ce4_8422_2325;
        let mut mix = |x: u64| {
            for b in x.to_le_bytes() {
                fingerprint = (fingerprint ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        };
        for l in &self.lines {
            let o = by_op.entry(&l.opcode).or_insert_with(|| OpcodeSamples {
                opcode: l.opcode.clone(),
                instructions: 0,
                samples: 0,
                stalls: vec![0; StallReason::COUNT].into_boxed_slice(),
            });
            o.instructions += 1;
            // A parsed listing's samples add up to a u64 (the parser refuses others).
            o.samples = o.samples.saturating_add(l.samples);
            for (t, &n) in o.stalls.iter_mut().zip(l.stalls.iter()) {
                *t = t.saturating_add(u64::from(n));
            }
            mix(l.address);
            mix(l.samples);
            // The legacy reasons (after the Hopper ones) never stand on a source page:
            // left out, so that summaries stored before they existed still match.
            l.stalls
                .iter()
                .zip(StallReason::ALL)
                .filter(|(_, r)| !r.is_legacy())
                .for_each(|(&n, _)| mix(u64::from(n)));
        }
        SourceSummary {
            opcodes: by_op.into_values().collect(),
            instructions: self.lines.len(),
            cuda_lines: self.cuda_lines.len(),
            fingerprint,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SassLine {
    pub address: u64,
    /// The instruction as printed, predicate included, without surrounding spaces.
    pub text: Box<str>,
    /// The opcode class: no predicate, no modifiers (`LDG`, `HMMA`, `BAR` …).
    pub opcode: Box<str>,
    /// "Warp Stall Sampling (All Samples)"; without that column, the sum of `stalls`.
    /// Never less than the `selected` samples.
    pub samples: u64,
    /// "Warp Stall Sampling (Not-issued Samples)".
    pub samples_not_issued: u64,
    pub executed: Option<u64>,
    /// Samples per reason, indexed by [`StallReason::index`]; they add up to `samples`
    /// where the page has "All Samples" (what its named columns leave out is
    /// `warpgroup_arrive`, see `Header::new`).
    pub stalls: Box<[u32]>,
    pub cuda_line: Option<u32>,
}

impl SassLine {
    pub fn stall(&self, r: StallReason) -> u32 {
        self.stalls[r.index()]
    }

    /// Stall samples: everything but `selected` (the warp issued).
    pub fn stall_samples(&self) -> u64 {
        self.samples - self.stall(StallReason::Selected) as u64
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CudaLine {
    pub line: u32,
    pub text: String,
    pub samples: u64,
}

/// The opcode of a SASS instruction without predicate and modifiers:
/// `@!P0 BRA 0x90` → `BRA`, `LDG.E.128 R4, desc[UR4][R2.64]` → `LDG`.
pub fn opcode_class(sass: &str) -> &str {
    let mut s = sass.trim_start();
    if s.starts_with('@') {
        s = s.split_once(char::is_whitespace).map_or("", |(_, r)| r);
        s = s.trim_start();
    }
    let token = s
        .split(|c: char| c.is_whitespace() || c == ';')
        .next()
        .unwrap_or("");
    token.split('.').next().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::opcode_class;

    #[test]
    fn opcode_classes() {
        assert_eq!(opcode_class("      LDC R1, c[0x0][0x28]"), "LDC");
        assert_eq!(opcode_class("@!P0 BRA 0x7fa82f7a0c40"), "BRA");
        assert_eq!(opcode_class("@UP0 LDG.E.128 R4, desc[UR4][R2.64]"), "LDG");
        assert_eq!(
            opcode_class("HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT ;"),
            "HGMMA"
        );
        assert_eq!(opcode_class("WARPGROUP.ARRIVE ;"), "WARPGROUP");
        assert_eq!(opcode_class("EXIT;"), "EXIT");
        assert_eq!(
            opcode_class("SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4+0x10], R2"),
            "SYNCS"
        );
    }
}
