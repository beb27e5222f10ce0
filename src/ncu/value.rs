//! Cell values of ncu CSV exports: numbers with thousands separators, metric-instance
//! suffixes, non-numeric text, and the conversion of ncu's auto-scaled units to one
//! internal unit per dimension (time in ns, sizes in bytes, frequencies in Hz, rates per
//! second).

use serde::Serialize;
use std::borrow::Cow;

/// One cell, already converted to the internal unit of its column.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// No value: an empty cell. A metric that is absent or empty is unknown, never zero.
    Empty,
    Num(f64),
    /// Non-numeric content kept as written (`PolicySpread`, `-`, `all`, `nan`, `no data`).
    Text(Box<str>),
}

impl Value {
    pub fn num(&self) -> Option<f64> {
        match self {
            Value::Num(v) => Some(*v),
            _ => None,
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Value::Empty)
    }

    fn scaled(self, factor: f64) -> Value {
        match self {
            Value::Num(v) if factor != 1.0 => Value::Num(v * factor),
            other => other,
        }
    }
}

/// Why a cell that looks numeric could not be read, or holds a number no export holds.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberError {
    pub cell: String,
    pub problem: Problem,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Problem {
    /// Not ncu's number format (a locale that swaps '.' and ',').
    Format,
    /// Past the range of numbers (`1e999`).
    Infinite,
    /// A negative duration or count (`-0` among them).
    Negative,
    /// A duration or count written as NaN or infinity.
    NotANumber,
    /// A count with a fraction.
    NotWhole,
    /// A count past the largest its field holds.
    TooLarge(u64),
    /// A duration or count larger than any GPU gives: what it would be.
    Impossible(&'static str),
}

impl std::fmt::Display for NumberError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cell = &self.cell;
        match self.problem {
            Problem::Format => write!(
                f,
                "number {cell:?} is not in ncu's format (1,234.5): was the export made with a locale that swaps '.' and ','?"
            ),
            Problem::Infinite => write!(f, "number {cell:?} is beyond the range of numbers"),
            Problem::Negative => write!(
                f,
                "{cell:?} is negative, and no duration or count is: the file may be edited or damaged"
            ),
            Problem::NotANumber => write!(
                f,
                "{cell:?} is not a number, and no duration or count is: the file may be edited or damaged"
            ),
            Problem::NotWhole => write!(f, "count {cell:?} is not a whole number"),
            Problem::TooLarge(max) => {
                write!(f, "count {cell:?} is larger than {max}, the most it can be")
            }
            Problem::Impossible(what) => write!(
                f,
                "{cell:?} would be {what}, which no GPU gives: the file may be edited or damaged"
            ),
        }
    }
}

/// 2^64: no count a GPU keeps reaches it, nor a duration in ns (584 years).
const PAST_U64: f64 = 18_446_744_073_709_551_616.0;

/// The most registers a thread has on any NVIDIA GPU (the ISA addresses R0 to R254).
pub const MAX_REGISTERS_PER_THREAD: f64 = 255.0;
/// The most threads a block has on any NVIDIA GPU.
pub const MAX_BLOCK_SIZE: f64 = 1024.0;

/// The metrics (raw names and the details page's) bounded by a hardware limit, with it
/// and what a value past it would be. (`launch__registers_per_thread_allocated` is not
/// among them: an allocation is rounded up, to 256 for 255 registers.)
const HARDWARE_LIMITS: [(&str, f64, &str); 4] = [
    (
        "launch__registers_per_thread",
        MAX_REGISTERS_PER_THREAD,
        "more than 255 registers per thread",
    ),
    (
        "Registers Per Thread",
        MAX_REGISTERS_PER_THREAD,
        "more than 255 registers per thread",
    ),
    (
        "launch__block_size",
        MAX_BLOCK_SIZE,
        "more than 1,024 threads in a block",
    ),
    (
        "Block Size",
        MAX_BLOCK_SIZE,
        "more than 1,024 threads in a block",
    ),
];

/// The largest value a cell of `metric` in `unit` may hold ([`parse_cell`] and
/// [`check_metric`] refuse more), in the internal unit: a hardware limit, below 2^64 for
/// a duration or a count, else none (infinity). A number from 0 (not `-0`) to it is
/// accepted by both without looking further, which lets a fast reader take it as is.
pub fn largest(metric: &str, unit: &Unit) -> f64 {
    if let Some((_, max, _)) = HARDWARE_LIMITS.iter().find(|(m, ..)| *m == metric) {
        return *max;
    }
    if &*unit.base == "ns" || is_count(metric) {
        // The double just below 2^64.
        return f64::from_bits(PAST_U64.to_bits() - 1);
    }
    f64::INFINITY
}

/// Whether a metric is a count or a launch statistic, which is never negative.
fn is_count(metric: &str) -> bool {
    const DETAIL_COUNTS: [&str; 6] = [
        "Registers Per Thread",
        "Block Size",
        "Grid Size",
        "Threads",
        "Waves Per SM",
        "Shared Memory Configuration Size",
    ];
    metric.starts_with("smsp__pcsamp_")
        || metric.starts_with("launch__")
        || metric.starts_with("sass__")
        || DETAIL_COUNTS.contains(&metric)
}

/// What `x` would be where it is past the hardware limit of `metric`, if it has one.
fn hardware_limit(metric: &str, x: f64) -> Option<&'static str> {
    HARDWARE_LIMITS
        .iter()
        .find(|(m, max, _)| *m == metric && x > *max)
        .map(|(.., what)| *what)
}

/// Parses one cell as written by ncu, in the unit of its column (see [`Unit`]). A
/// duration (a column in a time unit) is neither negative (nor `-0`) nor NaN nor
/// infinite, and shorter than 2^64 ns.
pub fn parse_cell(cell: &str, unit: &Unit) -> Result<Value, NumberError> {
    let value = parse_plain(cell)?.scaled(unit.factor);
    let problem = |problem| {
        Err(NumberError {
            cell: cell.trim().to_string(),
            problem,
        })
    };
    if &*unit.base != "ns" {
        return Ok(value);
    }
    match &value {
        Value::Num(x) if x.is_sign_negative() => problem(Problem::Negative),
        Value::Num(x) if *x >= PAST_U64 => problem(Problem::Impossible(
            "a duration of 2^64 ns (584 years) or more",
        )),
        Value::Text(t) if is_not_a_number(t) => problem(Problem::NotANumber),
        _ => Ok(value),
    }
}

/// NaN and infinity as C and Python print them.
fn is_not_a_number(text: &str) -> bool {
    let t = text.trim_start_matches(['-', '+']).to_ascii_lowercase();
    matches!(
        t.as_str(),
        "nan" | "inf" | "infinity" | "-nan(ind)" | "nan(ind)"
    )
}

/// A count as ncu writes one (launch IDs, sample counts …): a whole number from 0 to
/// `max`; `None` for an empty or text cell.
pub fn parse_count(cell: &str, max: u64) -> Result<Option<u64>, NumberError> {
    let problem = |problem| NumberError {
        cell: cell.trim().to_string(),
        problem,
    };
    let Some(x) = parse_plain(cell)?.num() else {
        return Ok(None);
    };
    if x.is_sign_negative() {
        return Err(problem(Problem::Negative));
    }
    if x.fract() != 0.0 {
        return Err(problem(Problem::NotWhole));
    }
    // max as f64 may round up (u64::MAX to 2^64): compare past it exactly.
    if x >= 18_446_744_073_709_551_616.0 || x as u64 > max {
        return Err(problem(Problem::TooLarge(max)));
    }
    Ok(Some(x as u64))
}

/// Metric values no export holds, by the metric's name: a PC-sampling count
/// (`smsp__pcsamp_…`) that is negative (`-0` too), fractional or past a u64; a launch
/// statistic or an instruction count (`launch__…`, `sass__…`: registers, grid and block
/// sizes, shared memory, spills) that is negative, NaN or past 2^64; registers per
/// thread past 255 and a block past 1,024 threads, which no GPU has. The details page's
/// names of them are checked alike ("Registers Per Thread", …).
pub fn check_metric(metric: &str, cell: &str, value: &Value) -> Result<(), NumberError> {
    // Every cell of a raw page comes here: a value no rule refuses is let through
    // before the name is looked at (only a value past 255 looks for a hardware limit).
    let samples = metric.starts_with("smsp__pcsamp_");
    let plausible = match value {
        // Only sample counts must be whole.
        Value::Num(x) => {
            x.is_sign_positive()
                && *x < PAST_U64
                && (x.fract() == 0.0 || !samples)
                && (*x <= MAX_REGISTERS_PER_THREAD || hardware_limit(metric, *x).is_none())
        }
        Value::Text(t) => !is_not_a_number(t),
        Value::Empty => true,
    };
    if plausible || !is_count(metric) {
        return Ok(());
    }
    let problem = |problem| {
        Err(NumberError {
            cell: cell.trim().to_string(),
            problem,
        })
    };
    match value {
        Value::Num(x) if x.is_sign_negative() => problem(Problem::Negative),
        Value::Text(t) if is_not_a_number(t) => problem(Problem::NotANumber),
        Value::Num(x) if samples && x.fract() != 0.0 => problem(Problem::NotWhole),
        Value::Num(x) if samples && *x >= PAST_U64 => problem(Problem::TooLarge(u64::MAX)),
        Value::Num(x) => match hardware_limit(metric, *x) {
            Some(what) => problem(Problem::Impossible(what)),
            None if *x >= PAST_U64 => problem(Problem::Impossible("a count of 2^64 or more")),
            None => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Parses one cell without unit conversion.
pub fn parse_plain(cell: &str) -> Result<Value, NumberError> {
    let s = cell.trim();
    if s.is_empty() {
        return Ok(Value::Empty);
    }
    // `--print-metric-instances values`: "4,096 (0; 0; …)". The aggregate comes first;
    // a cell holding only the instance list has no aggregate.
    let instances = s.as_bytes().windows(2).position(|w| w == b" (");
    let head = match instances {
        Some(i) if s.ends_with(')') => &s[..i],
        _ => s,
    };
    if head.starts_with('(') && s.contains(';') {
        return Ok(Value::Text(s.into()));
    }
    match parse_number(head) {
        Some(v) if v.is_finite() => Ok(Value::Num(v)),
        Some(_) => Err(NumberError {
            cell: s.to_string(),
            problem: Problem::Infinite,
        }),
        None if looks_numeric(head) => Err(NumberError {
            cell: s.to_string(),
            problem: Problem::Format,
        }),
        None => Ok(Value::Text(s.into())),
    }
}

/// The common cell of a raw page, read fast: a plain decimal number as ncu writes it
/// (`193,757`, `0.35`, `-1,024.5`), with the value [`parse_plain`] gives it, bit for
/// bit. `None` for every other cell (empty, spaces, an exponent, text, an instance
/// list), which [`parse_plain`] then reads.
pub fn quick_number(cell: &[u8]) -> Option<f64> {
    match number_prefix(cell) {
        Some((x, len)) if len == cell.len() => Some(x),
        _ => None,
    }
}

/// The plain decimal number `bytes` start with (as [`quick_number`] reads one) and how
/// many bytes it takes; `None` when they start with none (a number's start followed by
/// something else, such as `1,23` or `1e5`, is up to the caller, which sees where the
/// number ends).
pub fn number_prefix(bytes: &[u8]) -> Option<(f64, usize)> {
    // Powers of ten a double holds exactly: a mantissa below 2^53 divided by one of
    // them is rounded once, as a full parse rounds it.
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (negative, digits) = match bytes.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, bytes),
    };
    let sign = bytes.len() - digits.len();
    let run = |mantissa: &mut u64, i: &mut usize| digit_run(digits, i, mantissa);
    let mut mantissa: u64 = 0;
    let mut i = 0;
    // The integer part; with thousands separators, a lead of 1 to 3 digits and groups
    // of exactly 3.
    let lead = run(&mut mantissa, &mut i);
    let mut count = lead;
    if digits.get(i) == Some(&b',') {
        if !(1..=3).contains(&lead) {
            return None;
        }
        while digits.get(i) == Some(&b',') {
            i += 1;
            if run(&mut mantissa, &mut i) != 3 {
                return None;
            }
            count += 3;
        }
    }
    let whole = mantissa;
    let mut fraction = 0;
    if digits.get(i) == Some(&b'.') {
        i += 1;
        fraction = run(&mut mantissa, &mut i);
        count += fraction;
    }
    if count == 0 {
        return None;
    }
    let len = sign + i;
    if count > 19 || mantissa > 1 << 53 || fraction >= POW10.len() {
        // More digits than a double holds exactly (`1,070,680,070,997,912.38`): the
        // full parse of the digits without their separators, as `parse_plain` does.
        let mut buf = [0u8; 48];
        let mut n = 0;
        for &c in bytes[..len].iter().filter(|&&c| c != b',') {
            *buf.get_mut(n)? = c;
            n += 1;
        }
        return Some((std::str::from_utf8(&buf[..n]).ok()?.parse().ok()?, len));
    }
    // A fraction of zeros only (`4096.000000`, as ncu writes many counters) leaves the
    // whole part, exact: no division.
    let x = if digits[i - fraction..i].iter().all(|&c| c == b'0') {
        whole as f64
    } else {
        mantissa as f64 / POW10[fraction]
    };
    Some((if negative { -x } else { x }, len))
}

/// The digits of `d` from `i` on, appended to `mantissa` (modulo 2^64, as one digit at a
/// time would) and `i` moved past them; how many. Eight bytes are looked at together
/// where eight follow `i`: the cells of a raw page are mostly runs of 4 to 12 digits.
#[inline(always)]
fn digit_run(d: &[u8], i: &mut usize, mantissa: &mut u64) -> usize {
    const POW10: [u64; 9] = [
        1,
        10,
        100,
        1_000,
        10_000,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
    ];
    let from = *i;
    while let Some(chunk) = d.get(*i..*i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let n = leading_digits(w);
        if n > 0 {
            // The n digits moved to the end of the word, '0's before them.
            let padded = if n == 8 {
                w
            } else {
                w << (8 * (8 - n)) | 0x3030_3030_3030_3030 >> (8 * n)
            };
            *mantissa = mantissa
                .wrapping_mul(POW10[n])
                .wrapping_add(eight_digits(padded));
            *i += n;
        }
        if n < 8 {
            return *i - from;
        }
    }
    while let Some(&c) = d.get(*i).filter(|c| c.is_ascii_digit()) {
        *mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
        *i += 1;
    }
    *i - from
}

/// How many of the eight bytes in `w` (the first in its low byte) are ASCII digits
/// before the first that is not.
#[inline(always)]
fn leading_digits(w: u64) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    // A byte is a digit where its high nibble is 3 and stays 3 with 6 added (0x30-0x39).
    // A carry out of a byte of 0xFA or more spoils only the bytes after it, which come
    // after a byte that is no digit.
    let off = ((w & HIGH) ^ THREES) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ THREES);
    off.trailing_zeros() as usize / 8
}

/// The number eight ASCII digits in `w` write, the first (most significant) in its low
/// byte.
#[inline(always)]
fn eight_digits(w: u64) -> u64 {
    let v = w.wrapping_sub(0x3030_3030_3030_3030);
    // Pairs of digits, then fours, then the eight.
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_FFFF_0000_FFFF;
    (v.wrapping_mul(10_000) + (v >> 32)) & 0xFFFF_FFFF
}

/// A cell made only of digits, signs, dots and commas that failed the grammar: a number
/// in a format ncu does not write in the C locale.
fn looks_numeric(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().any(u8::is_ascii_digit)
        && b.iter()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b',' | b'-' | b'+'))
}

/// ncu's number grammar: optional sign, digits with optional `,` thousands groups of
/// three, optional fraction, optional exponent.
fn parse_number(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let first = *b.first()?;
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None;
    }
    if !s.contains(',') {
        // Reject things Rust accepts but ncu never writes as numbers ("inf", "nan" have
        // no leading digit so they never reach here; "1e5" is fine).
        if b.iter().all(|c| c.is_ascii_digit() || b".-+eE".contains(c)) {
            return s.parse().ok();
        }
        return None;
    }
    // With thousands separators: validate the groups, then parse without them.
    let (int_part, rest) = match s.find('.') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let digits = int_part.trim_start_matches(['-', '+']);
    let mut groups = digits.split(',');
    let lead = groups.next()?;
    if lead.is_empty() || lead.len() > 3 || !lead.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    for g in groups {
        if g.len() != 3 || !g.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
    }
    if rest.contains(',') {
        return None;
    }
    let mut buf = String::with_capacity(s.len());
    buf.extend(s.chars().filter(|&c| c != ','));
    buf.parse().ok()
}

/// A column's unit: the factor from the file's unit to the internal one, and the name
/// of the internal unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub factor: f64,
    pub base: Box<str>,
}

impl Unit {
    pub fn none() -> Unit {
        Unit {
            factor: 1.0,
            base: "".into(),
        }
    }

    /// Reads a unit as ncu writes it (`us`, `Kbyte/block`, `Gbyte/s`, `sector/ns`,
    /// `%/Kbyte`, `Ghz`, `inst/cycle` …).
    pub fn parse(unit: &str) -> Unit {
        let unit = unit.trim();
        let (num, den) = match unit.split_once('/') {
            Some((n, d)) => (n, Some(d)),
            None => (unit, None),
        };
        let (nf, nb) = scale_term(num, false);
        let (df, db) = match den {
            Some(d) => scale_term(d, true),
            None => (1.0, Cow::Borrowed("")),
        };
        let base = match den {
            Some(_) => format!("{nb}/{db}"),
            None => nb.into_owned(),
        };
        Unit {
            factor: nf / df,
            base: base.into(),
        }
    }
}

/// Scales one side of a unit. Time goes to ns in a numerator and to s in a denominator
/// (rates per second); sizes go to bytes, frequencies to Hz. ncu's prefixes are decimal.
fn scale_term(term: &str, denominator: bool) -> (f64, Cow<'_, str>) {
    let time = |ns_per: f64| {
        if denominator {
            (ns_per / 1e9, Cow::Borrowed("s"))
        } else {
            (ns_per, Cow::Borrowed("ns"))
        }
    };
    match term {
        "ns" | "nsecond" => time(1.0),
        "us" | "usecond" => time(1e3),
        "ms" | "msecond" => time(1e6),
        "s" | "second" => time(1e9),
        _ => {
            for (base, out) in [("byte", "byte"), ("hz", "Hz"), ("Hz", "Hz")] {
                if let Some(prefix) = term.strip_suffix(base)
                    && let Some(f) = prefix_factor(prefix)
                {
                    return (f, Cow::Borrowed(out));
                }
            }
            (1.0, Cow::Borrowed(term))
        }
    }
}

fn prefix_factor(prefix: &str) -> Option<f64> {
    Some(match prefix {
        "" => 1.0,
        "K" | "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> f64 {
        parse_plain(s).unwrap().num().unwrap()
    }

    #[test]
    fn numbers_with_separators_and_instances() {
        assert_eq!(n("193,757"), 193757.0);
        assert_eq!(n("5,297,086.66"), 5297086.66);
        assert_eq!(n("-1,024"), -1024.0);
        assert_eq!(n("0.35"), 0.35);
        assert_eq!(n("4,096 (0; 0; 1)"), 4096.0);
        assert_eq!(n("1.5e+06"), 1.5e6);
    }

    #[test]
    fn quick_numbers_read_as_the_full_parse_does() {
        for cell in [
            "0",
            "-0",
            "+7",
            "193,757",
            "5,297,086.66",
            "-1,024",
            "0.35",
            "5.",
            ".5",
            "-.5",
            "123456789012345",
            "9,007,199,254,740,992",
            "999,999,999,999,999",
            "0.000000000000001",
            "1,234.567890123",
            "9007199254740993",
            "12345678901234567890",
            "1,070,680,070,997,912.38",
            "-4,282,720,283,991,649.50",
            "0.12345678901234567890123",
            "4096.000000",
            "-4096.000000",
            "0.000",
            "-0.0",
            "9,007,199,254,740,992.0",
            "1342701568.000000",
            "1342701568.000001",
            "5.",
            "12.50",
        ] {
            let quick = quick_number(cell.as_bytes()).expect(cell);
            assert_eq!(quick.to_bits(), n(cell).to_bits(), "{cell}");
        }
    }

    #[test]
    fn digit_runs_of_every_length_and_neighbour_read_as_one_digit_at_a_time_does() {
        // Runs of 0 to 20 digits followed by every byte, at every offset from the end of
        // the buffer (eight bytes at a time, then one at a time).
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        for len in 0..=20 {
            for next in 0..=255u8 {
                if next.is_ascii_digit() {
                    continue;
                }
                let mut cell: Vec<u8> = (0..len)
                    .map(|_| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        b'0' + (rng % 10) as u8
                    })
                    .collect();
                cell.push(next);
                cell.extend_from_slice(b"9876543210");
                for tail in [0, 1, 5, 8, 10] {
                    let d = &cell[..cell.len() - tail];
                    let (mut m, mut i) = (7u64, 0);
                    let n = digit_run(d, &mut i, &mut m);
                    let want = d[..len.min(d.len())].iter().fold(7u64, |m, c| {
                        m.wrapping_mul(10).wrapping_add(u64::from(c - b'0'))
                    });
                    assert_eq!((n, i, m), (len.min(d.len()), n, want), "{d:?}");
                }
            }
        }
    }

    #[test]
    fn quick_numbers_leave_the_rest_to_the_full_parse() {
        for cell in [
            "",
            " 1",
            "1 ",
            "1e5",
            "1.5e+06",
            "nan",
            "-",
            "--1",
            "1,23",
            "1234,567",
            ",123",
            "1,234,",
            "1.2,3",
            "4,096 (0; 0; 1)",
            "1234567890123456789012345678901234567890123456789",
            ".",
            "+",
            "1-2",
            "PolicySpread",
        ] {
            assert_eq!(quick_number(cell.as_bytes()), None, "{cell}");
        }
    }

    #[test]
    fn text_stays_text() {
        for t in [
            "PolicySpread",
            "-",
            "all (all)",
            "nan",
            "no data",
            "(32, 32, 1)",
            "(0; 0; 0)",
        ] {
            assert!(
                matches!(parse_plain(t).unwrap(), Value::Text(_)),
                "{t} should be text"
            );
        }
        assert_eq!(parse_plain("  ").unwrap(), Value::Empty);
    }

    #[test]
    fn swapped_locale_is_an_error() {
        for bad in ["3,20", "1.234,56", "1.234.567", "12,34,567"] {
            assert!(parse_plain(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn units_convert_to_one_internal_unit() {
        let u = Unit::parse("us");
        assert_eq!((u.factor, &*u.base), (1e3, "ns"));
        let u = Unit::parse("Kbyte/block");
        assert_eq!((u.factor, &*u.base), (1e3, "byte/block"));
        let u = Unit::parse("Gbyte/s");
        assert_eq!((u.factor, &*u.base), (1e9, "byte/s"));
        let u = Unit::parse("sector/us");
        assert_eq!((u.factor, &*u.base), (1e6, "sector/s"));
        let u = Unit::parse("Ghz");
        assert_eq!((u.factor, &*u.base), (1e9, "Hz"));
        let u = Unit::parse("%/Kbyte");
        assert!((u.factor - 1e-3).abs() < 1e-15);
        assert_eq!(&*u.base, "%/byte");
        let u = Unit::parse("inst/cycle");
        assert_eq!((u.factor, &*u.base), (1.0, "inst/cycle"));
        // ms in raw pages and ns in base-unit pages give the same internal value.
        let a = parse_cell("2.743968", &Unit::parse("ms"))
            .unwrap()
            .num()
            .unwrap();
        let b = parse_cell("2,743,968", &Unit::parse("ns"))
            .unwrap()
            .num()
            .unwrap();
        assert!((a - b).abs() < 1e-6);
    }
}
