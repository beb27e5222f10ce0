//! The SASS listing of a version as the source view orders it: its lines by stall
//! samples or by address, or, where the source page carries CUDA lines, the hottest
//! CUDA lines each with its SASS under it; and where the hot spots are. The source
//! view's cursor moves and its drawing read it alike.

use crate::ncu::{SassLine, SourceListing};

/// The orders the source view lists a listing in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SourceSort {
    #[default]
    Samples,
    Address,
    /// The hottest CUDA lines, each with its SASS (where the page carries CUDA lines).
    CudaLine,
}

/// One row of the listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRow {
    /// An instruction: an index into the listing's lines.
    Sass(usize),
    /// A CUDA source line (an index into `cuda_lines`) with its stall samples; its
    /// instructions follow it.
    Cuda(usize, u64),
    /// The instructions that carry no source line follow.
    NoSourceLine(u64),
}

/// The sorts a listing offers, in the order `o` cycles through them.
pub fn sorts(s: &SourceListing) -> Vec<SourceSort> {
    let mut v = vec![SourceSort::Samples, SourceSort::Address];
    if !s.cuda_lines.is_empty() {
        v.push(SourceSort::CudaLine);
    }
    v
}

/// The listing's rows in display order.
pub fn rows(s: &SourceListing, sort: SourceSort) -> Vec<ListRow> {
    let mut idx: Vec<usize> = (0..s.lines.len()).collect();
    match sort {
        SourceSort::Address => {}
        SourceSort::Samples => {
            idx.sort_by(|&a, &b| {
                s.lines[b]
                    .stall_samples()
                    .cmp(&s.lines[a].stall_samples())
                    .then(a.cmp(&b))
            });
        }
        SourceSort::CudaLine if !s.cuda_lines.is_empty() => return by_cuda_line(s),
        SourceSort::CudaLine => {}
    }
    idx.into_iter().map(ListRow::Sass).collect()
}

/// The CUDA lines by their instructions' stall samples, hottest first, each followed by
/// its instructions in address order; the instructions of no line last.
fn by_cuda_line(s: &SourceListing) -> Vec<ListRow> {
    let of_line = |line: Option<u32>| -> Vec<usize> {
        (0..s.lines.len())
            .filter(|&i| s.lines[i].cuda_line == line)
            .collect()
    };
    let mut groups: Vec<(ListRow, Vec<usize>)> = s
        .cuda_lines
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let sass = of_line(Some(c.line));
            let n = sass.iter().map(|&i| s.lines[i].stall_samples()).sum();
            (ListRow::Cuda(ci, n), sass)
        })
        .collect();
    groups.sort_by(|a, b| {
        let n = |r: &ListRow| match r {
            ListRow::Cuda(_, n) => *n,
            _ => 0,
        };
        n(&b.0).cmp(&n(&a.0))
    });
    let rest = of_line(None);
    if !rest.is_empty() {
        let n = rest.iter().map(|&i| s.lines[i].stall_samples()).sum();
        groups.push((ListRow::NoSourceLine(n), rest));
    }
    groups
        .into_iter()
        .flat_map(|(head, sass)| std::iter::once(head).chain(sass.into_iter().map(ListRow::Sass)))
        .collect()
}

/// Positions (in `rows`) of the hot spots: instructions with at least 1 % of the stall
/// samples, and CUDA lines with at least 1 %.
pub fn hot_positions(s: &SourceListing, rows: &[ListRow]) -> Vec<usize> {
    let total: u64 = s.lines.iter().map(SassLine::stall_samples).sum();
    rows.iter()
        .enumerate()
        .filter(|&(_, r)| {
            let n = match *r {
                ListRow::Sass(i) => s.lines[i].stall_samples(),
                ListRow::Cuda(_, n) | ListRow::NoSourceLine(n) => n,
            };
            total > 0 && n * 100 >= total
        })
        .map(|(p, _)| p)
        .collect()
}

/// An instruction with the addresses it names inside the listing (branch targets) as
/// offsets from its start, as the address column shows them. A listing whose addresses
/// start at 0 names offsets already, and constants are never inside it.
pub fn with_offsets(text: &str, base: u64, end: u64) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("0x").filter(|_| base > 0) {
        let hex = &rest[i + 2..];
        let len = hex
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(hex.len());
        out.push_str(&rest[..i]);
        match u64::from_str_radix(&hex[..len], 16) {
            Ok(a) if (base..=end).contains(&a) => out.push_str(&format!("{:#06x}", a - base)),
            _ => out.push_str(&rest[i..i + 2 + len]),
        }
        rest = &hex[len..];
    }
    out.push_str(rest);
    out
}

/// The offset column of an instruction: its address from the listing's start.
pub fn offset(l: &SassLine, base: u64) -> String {
    format!("{:#06x}", l.address.saturating_sub(base))
}

/// Positions (in `rows`) of the instructions that match a search: its text (opcode,
/// registers, operands) as the source view shows it, or its offset, holding `query`
/// (case ignored). Nothing for an empty query.
pub fn matches(s: &SourceListing, rows: &[ListRow], query: &str) -> Vec<usize> {
    let query = query.to_lowercase();
    if query.is_empty() {
        return Vec::new();
    }
    let (base, end) = bounds(s);
    rows.iter()
        .enumerate()
        .filter(|&(_, r)| match *r {
            ListRow::Sass(i) => {
                let l = &s.lines[i];
                with_offsets(&l.text, base, end)
                    .to_lowercase()
                    .contains(&query)
                    || offset(l, base).contains(&query)
            }
            _ => false,
        })
        .map(|(p, _)| p)
        .collect()
}

/// The listing's first address and its last.
pub fn bounds(s: &SourceListing) -> (u64, u64) {
    let base = s.lines.first().map(|l| l.address).unwrap_or(0);
    let end = s.lines.iter().map(|l| l.address).max().unwrap_or(0);
    (base, end)
}

#[cfg(test)]
mod tests {
    use super::with_offsets;

    #[test]
    fn branch_targets_read_as_offsets() {
        let base = 0x7f36_2b7a_0000;
        assert_eq!(
            with_offsets("@!P0 BRA 0x7f362b7a0c40", base, base + 0x1000),
            "@!P0 BRA 0x0c40"
        );
        assert_eq!(
            with_offsets("LDC R1, c[0x0][0x28]", base, base + 0x1000),
            "LDC R1, c[0x0][0x28]"
        );
        assert_eq!(with_offsets("BRA 0x40", 0, 0x1000), "BRA 0x40");
    }
}
