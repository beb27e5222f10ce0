//! What changed in the SASS between two versions: the instruction mix by opcode class
//! side by side, and the two listings aligned instruction by instruction with addresses
//! and register numbers ignored, so that a moved or renamed register is no change.

use super::OpcodeStat;
use crate::ncu::{SassLine, SourceListing};
use serde::Serialize;

/// One opcode class in the two versions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MixRow {
    pub opcode: String,
    pub a: MixSide,
    pub b: MixSide,
}

/// An opcode class in one listing.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct MixSide {
    /// Instructions of this class in the listing.
    pub instructions: usize,
    pub stall_samples: u64,
    /// Of all the listing's warp samples (`selected` included), a fraction in [0, 1].
    pub share: f64,
}

/// The instruction mix of two source pages, by opcode class: the classes with the most
/// stall samples on either side first, then by instruction count.
pub fn mix(a: &[OpcodeStat], b: &[OpcodeStat]) -> Vec<MixRow> {
    let side = |ops: &[OpcodeStat], op: &str| {
        let total: u64 = ops.iter().map(|o| o.samples).sum();
        ops.iter()
            .find(|o| o.opcode == op)
            .map(|o| MixSide {
                instructions: o.instructions,
                stall_samples: o.stall_samples,
                share: o.stall_samples as f64 / total.max(1) as f64,
            })
            .unwrap_or_default()
    };
    let mut names: Vec<&str> = a.iter().chain(b).map(|o| o.opcode.as_str()).collect();
    names.sort();
    names.dedup();
    let mut rows: Vec<MixRow> = names
        .into_iter()
        .map(|op| MixRow {
            opcode: op.to_string(),
            a: side(a, op),
            b: side(b, op),
        })
        .collect();
    let key = |r: &MixRow| {
        (
            r.a.share.max(r.b.share),
            r.a.instructions.max(r.b.instructions),
        )
    };
    rows.sort_by(|x, y| {
        let (kx, ky) = (key(x), key(y));
        ky.0.total_cmp(&kx.0)
            .then(ky.1.cmp(&kx.1))
            .then_with(|| x.opcode.cmp(&y.opcode))
    });
    rows
}

/// How a line of the aligned listings stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    Same,
    /// Only in the first listing.
    Removed,
    /// Only in the second listing.
    Added,
}

/// One instruction of the aligned listings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffLine {
    pub change: Change,
    /// The instruction with registers and code addresses written without their numbers
    /// (`LDS.128 R, [R+UR+0x400]`).
    pub text: String,
    /// Its stall samples in its own listing (the first one's for unchanged lines).
    pub stall_samples: u64,
}

/// A run of changed instructions with a little context around it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hunk {
    /// Position (from 0) of the hunk's first line in each listing.
    pub a_start: usize,
    pub b_start: usize,
    pub lines: Vec<DiffLine>,
}

/// The two SASS listings aligned instruction by instruction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SassDiff {
    pub a_instructions: usize,
    pub b_instructions: usize,
    pub removed: usize,
    pub added: usize,
    pub hunks: Vec<Hunk>,
}

/// Unchanged instructions kept around each change.
const CONTEXT: usize = 2;

pub fn diff(a: &SourceListing, b: &SourceListing) -> SassDiff {
    let (na, nb) = (normalized(a), normalized(b));
    let (ra, rb): (Vec<&str>, Vec<&str>) = (
        na.iter().map(String::as_str).collect(),
        nb.iter().map(String::as_str).collect(),
    );
    let ops = similar::capture_diff_slices(similar::Algorithm::Patience, &ra, &rb);
    let mut out = SassDiff {
        a_instructions: a.lines.len(),
        b_instructions: b.lines.len(),
        removed: 0,
        added: 0,
        hunks: Vec::new(),
    };
    let samples = SassLine::stall_samples;
    for group in similar::group_diff_ops(ops, CONTEXT) {
        let Some(first) = group.first() else {
            continue;
        };
        let mut hunk = Hunk {
            a_start: first.old_range().start,
            b_start: first.new_range().start,
            lines: Vec::new(),
        };
        for op in &group {
            for (tag, old, new) in op
                .iter_changes(&ra, &rb)
                .map(|c| (c.tag(), c.old_index(), c.new_index()))
            {
                let (change, text, line) = match (tag, old, new) {
                    (similar::ChangeTag::Delete, Some(i), _) => {
                        out.removed += 1;
                        (Change::Removed, &na[i], &a.lines[i])
                    }
                    (similar::ChangeTag::Insert, _, Some(j)) => {
                        out.added += 1;
                        (Change::Added, &nb[j], &b.lines[j])
                    }
                    (_, Some(i), _) => (Change::Same, &na[i], &a.lines[i]),
                    _ => continue,
                };
                hunk.lines.push(DiffLine {
                    change,
                    text: text.clone(),
                    stall_samples: samples(line),
                });
            }
        }
        out.hunks.push(hunk);
    }
    out
}

/// Every instruction of a listing without its register numbers and code addresses.
fn normalized(s: &SourceListing) -> Vec<String> {
    let lo = s.lines.iter().map(|l| l.address).min().unwrap_or(0);
    let hi = s.lines.iter().map(|l| l.address).max().unwrap_or(0);
    // ncu lists absolute addresses; a listing starting near 0 would take small constants
    // for branch targets, so there none are recognised.
    #[allow(clippy::reversed_empty_ranges)]
    let code = if lo >= 0x10000 { lo..=hi + 16 } else { 1..=0 };
    s.lines
        .iter()
        .map(|l| normalize(&l.text, code.clone()))
        .collect()
}

/// `@!P0 BRA 0x7f98…02d0` → `@!P BRA <addr>`, `IMAD R12, R3, UR4, R12` → `IMAD R, R, UR, R`.
/// Register names keep their file (R, UR, P, UP, B); a hexadecimal number within the
/// listing's code addresses is a branch target and reads `<addr>`; other numbers stay.
pub fn normalize(text: &str, code: std::ops::RangeInclusive<u64>) -> String {
    let text = text.trim().trim_end_matches(';').trim_end();
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if word_start && c.is_ascii_alphanumeric() {
            let end = (i..bytes.len())
                .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
                .unwrap_or(bytes.len());
            let word = &text[i..end];
            out.push_str(&normalize_word(word, &code));
            i = end;
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    // The listing pads predicates and operands with runs of spaces.
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn normalize_word<'a>(
    word: &'a str,
    code: &std::ops::RangeInclusive<u64>,
) -> std::borrow::Cow<'a, str> {
    if let Some(hex) = word.strip_prefix("0x")
        && let Ok(v) = u64::from_str_radix(hex, 16)
        && code.contains(&v)
    {
        return "<addr>".into();
    }
    for file in ["UR", "UP", "R", "P", "B"] {
        if let Some(n) = word.strip_prefix(file)
            && !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_digit())
        {
            return file.into();
        }
    }
    word.into()
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn registers_lose_their_numbers() {
        assert_eq!(
            normalize("      IMAD.WIDE.U32 R12, R3, UR4, R12 ;", 0..=0),
            "IMAD.WIDE.U32 R, R, UR, R"
        );
    }

    #[test]
    fn branch_targets_read_as_addresses() {
        assert_eq!(
            normalize("@!P0  BRA 0x7f984b7a4750", 0x7f984b7a0000..=0x7f984b7a9000),
            "@!P BRA <addr>"
        );
    }

    #[test]
    fn constants_and_special_registers_stay() {
        assert_eq!(
            normalize("LOP3.LUT R17, R17, 0x3fc00, RZ, 0xc0, !PT", 0x7f00..=0x8000),
            "LOP3.LUT R, R, 0x3fc00, RZ, 0xc0, !PT"
        );
    }
}
