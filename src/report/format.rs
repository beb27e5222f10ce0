//! How values read as text: one place for units and precision.

use crate::analysis::Kind;
use crate::ncu::Value;
use crate::text_width::{cut, width};
use std::borrow::Cow;
use std::fmt::Write;

/// A text in a column `w` wide, aligned left: cut with an ellipsis where it would touch
/// the next column (one space stays between them).
pub fn left(text: &str, w: usize) -> String {
    let t = cut(text, w.saturating_sub(1));
    let pad = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(pad))
}

/// A value in a column `w` wide, aligned right after at least one space: a value wider
/// than the column is never cut, the row is longer instead.
pub fn right(text: &str, w: usize) -> String {
    let pad = w.saturating_sub(width(text)).max(1);
    format!("{}{text}", " ".repeat(pad))
}

/// Shown for a value that is unknown (absent from the export), never "0".
pub const UNKNOWN: &str = "—";

pub fn value(kind: Kind, v: Option<f64>) -> String {
    let Some(v) = v else {
        return UNKNOWN.to_string();
    };
    // A value no kernel has (a crafted or damaged export: 1e300 %) in a few columns,
    // not hundreds of digits.
    if v.abs() >= ABSURD {
        return format!("{v:.3e}");
    }
    if let Some(text) = scaled_up(kind, v) {
        return text;
    }
    match kind {
        Kind::Time => micros(v / 1e3),
        Kind::Tflops => format!("{v:.1}"),
        Kind::Percent => format!("{v:.1}"),
        Kind::Count => thousands(v),
        Kind::Bytes => bytes(v),
        Kind::Frequency => format!("{:.0}", v / 1e6),
        Kind::Power => format!("{v:.0}"),
        Kind::Energy => format!("{v:.3}"),
        Kind::Efficiency => format!("{v:.3}"),
        Kind::Bandwidth => format!("{:.1}", v / 1e9),
        Kind::Level => format!("{v:.0}"),
    }
}

/// From here on a value is written with an exponent.
const ABSURD: f64 = 1e15;

/// The larger units of a kind, largest first: (the value in the kind's stored unit from
/// which the unit is used, the stored unit per that unit, the unit). A time stored in ns
/// is shown in µs up to 10 ms, an energy stored in mJ in mJ up to 1 J: small values stay
/// as they are, large ones read in their own unit (1,197,228 µs as 1.20 s, 273,363.716
/// mJ as 273 J).
fn larger_units(kind: Kind) -> &'static [(f64, f64, &'static str)] {
    match kind {
        Kind::Time => &[(1e9, 1e9, "s"), (1e7, 1e6, "ms")],
        Kind::Energy => &[(1e3, 1e3, "J")],
        _ => &[],
    }
}

/// `v` in the larger unit its magnitude calls for, with that unit and about three
/// significant digits (`1.20 s`, `19.09 ms`, `273 J`); `None` where the kind's own unit
/// suits it. A value that carries its unit this way is written with it everywhere,
/// in a row whose label names the kind's unit too.
fn scaled_up(kind: Kind, v: f64) -> Option<String> {
    let &(_, per, unit) = larger_units(kind)
        .iter()
        .find(|(from, _, _)| v.abs() >= *from)?;
    let x = v / per;
    let decimals = if x.abs() >= 100.0 {
        0
    } else if x.abs() >= 10.0 {
        1
    } else {
        2
    };
    Some(format!("{x:.decimals$} {unit}"))
}

/// A value with its unit ("61.02 µs", "62.0 %", "1.20 s").
pub fn with_unit(kind: Kind, v: Option<f64>) -> String {
    match v {
        None => UNKNOWN.to_string(),
        // Byte sizes carry their own unit (KiB, MiB), and so do values in a larger unit.
        Some(_) if kind.unit().is_empty() || kind == Kind::Bytes => value(kind, v),
        Some(x) if x.abs() < ABSURD && scaled_up(kind, x).is_some() => value(kind, v),
        Some(_) => format!("{} {}", value(kind, v), kind.unit()),
    }
}

/// Microseconds with about four significant digits.
pub fn micros(us: f64) -> String {
    format!("{us:.*}", micros_decimals(us))
}

/// The decimals [`micros`] writes a time of `us` µs with.
fn micros_decimals(us: f64) -> usize {
    if us >= 1000.0 {
        0
    } else if us >= 100.0 {
        1
    } else {
        2
    }
}

/// A numerical error (relative or absolute) in two significant digits: `2.9e-4`.
pub fn error(e: f64) -> String {
    format!("{e:.1e}")
}

pub fn share(s: Option<f64>) -> String {
    match s {
        Some(s) => format!("{:.1}", s * 100.0),
        None => UNKNOWN.to_string(),
    }
}

/// Stall samples with their share: `1,674 · 17.5` (the share in %).
pub fn samples_share(samples: Option<u64>, share: Option<f64>) -> String {
    match (samples, share) {
        (Some(n), Some(s)) => format!("{} · {}", thousands(n as f64), self::share(Some(s))),
        _ => UNKNOWN.to_string(),
    }
}

/// The change of a count and of a share between two sides: `+12 · -3.4 pt`.
pub fn samples_share_delta(a: (Option<u64>, Option<f64>), b: (Option<u64>, Option<f64>)) -> String {
    match (a.0, b.0) {
        (Some(x), Some(y)) => {
            let d = y as i128 - x as i128;
            let sign = if d >= 0 { "+" } else { "" };
            format!("{sign}{} · {}", thousands(d as f64), share_delta(a.1, b.1))
        }
        _ => UNKNOWN.to_string(),
    }
}

pub fn thousands(v: f64) -> String {
    if v.fract() != 0.0 && v.abs() < 1000.0 {
        return format!("{v:.2}");
    }
    let n = v.round() as i128;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A size in binary units, as shared memory is counted (`48 KiB`, `99.5 KiB`, `1.2 MiB`):
/// [`Scale`]'s for bytes.
pub fn bytes(v: f64) -> String {
    Scale::of("byte", v).text(v)
}

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// How the values of one quantity are shown: one unit for all of them, chosen from
/// the largest, so that a min and a max (or the rows of one section) read alike. The
/// one place a stored unit (ns, byte, Hz, …/s) is scaled: [`bytes`] is a size's own
/// scale, and a time that lands in µs takes the decimals [`micros`] gives the largest.
#[derive(Debug, Clone, PartialEq)]
pub struct Scale {
    /// The stored value is divided by this.
    divisor: f64,
    unit: String,
    digits: Digits,
}

/// How many decimals a [`Scale`] writes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Digits {
    /// The value as stored, with thousands separators (the base unit, or one not
    /// known).
    Thousands,
    /// So many decimals.
    Fixed(usize),
    /// A size in binary units: so many decimals, none for a whole number (`48 KiB`).
    Size(usize),
}

impl Scale {
    /// The scale of a quantity in `unit` (the internal one: ns, byte, Hz, …/s) whose
    /// largest value is `largest`.
    pub fn of(unit: &str, largest: f64) -> Scale {
        use Digits::{Fixed, Size};
        let largest = if largest.is_finite() {
            largest.abs()
        } else {
            0.0
        };
        let (steps, base): (Vec<(f64, String, Digits)>, String) = match unit {
            "ns" => (
                vec![
                    (1e9, "s".into(), Fixed(3)),
                    (1e6, "ms".into(), Fixed(3)),
                    (1e3, "µs".into(), Fixed(micros_decimals(largest / 1e3))),
                ],
                "ns".into(),
            ),
            "byte" | "byte/block" => {
                let per = &unit[4..];
                (
                    vec![
                        (GIB, format!("GiB{per}"), Size(2)),
                        (MIB, format!("MiB{per}"), Size(1)),
                        (KIB, format!("KiB{per}"), Size(1)),
                    ],
                    format!("B{per}"),
                )
            }
            "Hz" => (
                vec![
                    (1e9, "GHz".into(), Fixed(2)),
                    (1e6, "MHz".into(), Fixed(1)),
                    (1e3, "kHz".into(), Fixed(1)),
                ],
                "Hz".into(),
            ),
            "byte/s" => (
                vec![
                    (1e12, "TB/s".into(), Fixed(2)),
                    (1e9, "GB/s".into(), Fixed(1)),
                    (1e6, "MB/s".into(), Fixed(1)),
                    (1e3, "KB/s".into(), Fixed(1)),
                ],
                "B/s".into(),
            ),
            u if u.ends_with("/s") => {
                let what = &u[..u.len() - 2];
                (
                    [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")]
                        .iter()
                        .map(|&(d, p)| (d, format!("{p}{what}/s"), Fixed(2)))
                        .collect(),
                    u.into(),
                )
            }
            u => (Vec::new(), u.into()),
        };
        steps
            .into_iter()
            .find(|(d, _, _)| largest >= *d)
            .map(|(divisor, unit, digits)| Scale {
                divisor,
                unit,
                digits,
            })
            .unwrap_or(Scale {
                divisor: 1.0,
                unit: base,
                digits: Digits::Thousands,
            })
    }

    /// A number in this scale, with its unit.
    pub fn text(&self, x: f64) -> String {
        let scaled = x / self.divisor;
        let number = match self.digits {
            Digits::Thousands => thousands(x),
            Digits::Size(_) if scaled.fract() == 0.0 => format!("{scaled:.0}"),
            Digits::Fixed(n) | Digits::Size(n) => format!("{scaled:.n$}"),
        };
        if self.unit.is_empty() {
            number
        } else {
            format!("{number} {}", self.unit)
        }
    }

    /// A value of an export in this scale, with its unit: text as it is, an empty cell
    /// as [`UNKNOWN`].
    pub fn show(&self, v: &Value) -> String {
        match v {
            Value::Empty => UNKNOWN.to_string(),
            Value::Text(t) => t.to_string(),
            Value::Num(x) => self.text(*x),
        }
    }
}

/// A value as [`value`] shows it, read back (in the stored unit): a delta of two shown
/// values is then the difference a reader works out from them.
pub fn as_shown(kind: Kind, v: f64) -> f64 {
    if !v.is_finite() || v.abs() >= ABSURD {
        return v;
    }
    let text: String = value(kind, Some(v)).chars().filter(|&c| c != ',').collect();
    let (number, unit) = text.split_once(' ').unwrap_or((&text, ""));
    let Ok(x) = number.parse::<f64>() else {
        return v;
    };
    if let Some(&(_, per, _)) = larger_units(kind).iter().find(|(_, _, u)| *u == unit) {
        return x * per;
    }
    match (kind, unit) {
        (Kind::Time, _) => x * 1e3,
        (Kind::Frequency, _) => x * 1e6,
        (Kind::Bandwidth, _) => x * 1e9,
        (Kind::Bytes, "KiB") => x * KIB,
        (Kind::Bytes, "MiB") => x * MIB,
        (Kind::Bytes, "GiB") => x * GIB,
        _ => x,
    }
}

/// A delta between two values of one metric, in the metric's unit or as a factor:
/// worked out from the values as [`value`] shows them, so that `1970 → 1978 MHz` reads
/// `+8 MHz` and `0.1 → 0.2 %` reads `+0.1 pt`.
pub fn delta(kind: Kind, a: Option<f64>, b: Option<f64>) -> String {
    let (Some(a), Some(b)) = (a, b) else {
        return UNKNOWN.to_string();
    };
    let (a, b) = (as_shown(kind, a), as_shown(kind, b));
    let d = b - a;
    let sign = if d >= 0.0 { "+" } else { "-" };
    let abs = match kind {
        Kind::Percent => format!("{:.1} pt", d.abs()),
        Kind::Bytes => bytes(d.abs()),
        _ => with_unit(kind, Some(d.abs())),
    };
    if a != 0.0 && kind != Kind::Percent {
        format!("{sign}{abs} ({:.2}×)", b / a)
    } else {
        format!("{sign}{abs}")
    }
}

/// Text from imported data made safe for a terminal: every control character (C0, DEL,
/// C1) and every bidirectional override is shown escaped (`\u{1b}`, `\n`, `\r`), so an
/// escape sequence in a kernel name or a note cannot retitle, clear or redraw the
/// user's terminal; a tab becomes four spaces. Human-readable output passes through
/// here; CSV and JSON keep the data as it is.
pub fn printable(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// [`printable`] for text of several lines: line breaks are kept, a CRLF one as `\n`.
pub fn printable_lines(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

fn escape(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        c.is_control() && !(keep_newlines && c == '\n') || crate::files::names::is_bidi_control(c)
    };
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            // The CR of a CRLF line end, where line ends are kept.
            '\r' if keep_newlines && chars.peek() == Some(&'\n') => {}
            '\t' => out.push_str("    "),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// The change of a share (a fraction) in percentage points: `+3.5 pt`.
pub fn share_delta(a: Option<f64>, b: Option<f64>) -> String {
    let pct = |x: Option<f64>| x.map(|v| v * 100.0);
    delta(Kind::Percent, pct(a), pct(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crlf_line_end_is_a_line_end_and_a_lone_cr_is_shown() {
        assert_eq!(printable_lines("a\r\nb\rc"), "a\nb\\rc");
        assert_eq!(printable("a\r\nb"), "a\\r\\nb");
    }

    #[test]
    fn an_absurd_value_takes_a_few_columns() {
        assert_eq!(value(Kind::Percent, Some(1e300)), "1.000e300");
        assert_eq!(value(Kind::Count, Some(-2e20)), "-2.000e20");
        assert_eq!(value(Kind::Percent, Some(99.95)), "100.0");
    }

    #[test]
    fn formats() {
        assert_eq!(value(Kind::Time, Some(61_024.0)), "61.02");
        assert_eq!(value(Kind::Time, Some(2_743_968.0)), "2744");
        assert_eq!(value(Kind::Count, Some(1_230_241_792.0)), "1,230,241,792");
        assert_eq!(value(Kind::Count, Some(-1234.0)), "-1,234");
        assert_eq!(value(Kind::Percent, None), "—");
        assert_eq!(bytes(66_560.0), "65 KiB");
        assert_eq!(bytes(101_888.0), "99.5 KiB");
        assert_eq!(bytes(512.0), "512 B");
        assert_eq!(
            delta(Kind::Time, Some(2000.0), Some(1000.0)),
            "-1.00 µs (0.50×)"
        );
        assert_eq!(delta(Kind::Percent, Some(10.0), Some(12.5)), "+2.5 pt");
        // Display width, not chars: a CJK character takes two columns.
        assert_eq!(width("µs"), 2);
        assert_eq!(width("名前"), 4);
    }

    #[test]
    fn a_large_time_or_energy_reads_in_its_own_unit() {
        // 1,197,228 µs and 273,363.716 mJ.
        assert_eq!(with_unit(Kind::Time, Some(1_197_228_000.0)), "1.20 s");
        assert_eq!(value(Kind::Time, Some(1_197_228_000.0)), "1.20 s");
        assert_eq!(with_unit(Kind::Energy, Some(273_363.716)), "273 J");
        assert_eq!(with_unit(Kind::Time, Some(149_264_000.0)), "149 ms");
        assert_eq!(with_unit(Kind::Time, Some(19_094_000.0)), "19.1 ms");
        // Small values stay as they are.
        assert_eq!(with_unit(Kind::Time, Some(3_262_000.0)), "3262 µs");
        assert_eq!(with_unit(Kind::Time, Some(69_860.0)), "69.86 µs");
        assert_eq!(with_unit(Kind::Energy, Some(90.911)), "90.911 mJ");
        assert_eq!(with_unit(Kind::Energy, Some(-1500.0)), "-1.50 J");
        // A delta is worked out from the values as shown, in the unit its size calls for.
        assert_eq!(
            delta(Kind::Time, Some(1_197_228_000.0), Some(149_264_000.0)),
            "-1.05 s (0.12×)"
        );
        assert_eq!(as_shown(Kind::Time, 1_197_228_000.0), 1.2e9);
        assert_eq!(as_shown(Kind::Energy, 273_363.716), 273_000.0);
    }

    #[test]
    fn one_quantity_is_scaled_from_its_largest_value() {
        let ns = Scale::of("ns", 61_024.0);
        assert_eq!(ns.text(61_024.0), "61.02 µs");
        assert_eq!(ns.text(5_120.0), "5.12 µs");
        // In µs a time takes the decimals `micros` gives the largest.
        let ns = Scale::of("ns", 123_456.0);
        assert_eq!(ns.text(123_456.0), "123.5 µs");
        assert_eq!(ns.text(123_456.0), format!("{} µs", micros(123.456)));
        assert_eq!(Scale::of("ns", 2_743_968.0).text(2_743_968.0), "2.744 ms");
        assert_eq!(Scale::of("ns", 512.0).text(512.0), "512 ns");
        let per_block = Scale::of("byte/block", 49_152.0);
        assert_eq!(per_block.text(49_152.0), "48 KiB/block");
        assert_eq!(per_block.text(1_536.0), "1.5 KiB/block");
        assert_eq!(per_block.text(0.0), "0 KiB/block");
        assert_eq!(Scale::of("byte/s", 519.6e9).text(10.8e9), "10.8 GB/s");
        assert_eq!(Scale::of("Hz", 3.2e9).text(3.2e9), "3.20 GHz");
        assert_eq!(Scale::of("inst/s", 2e9).text(2e9), "2.00 Ginst/s");
        assert_eq!(Scale::of("warp", 5e6).text(1_234_567.0), "1,234,567 warp");
        assert_eq!(Scale::of("", 5e6).text(1_234_567.0), "1,234,567");
        assert_eq!(Scale::of("ns", f64::NAN).text(512.0), "512 ns");
    }

    #[test]
    fn a_size_is_the_byte_scale_of_its_own_value() {
        assert_eq!(bytes(2.0 * GIB), "2 GiB");
        assert_eq!(bytes(1.5 * GIB), "1.50 GiB");
        assert_eq!(bytes(1.25 * MIB), "1.2 MiB");
        assert_eq!(bytes(64.0 * KIB), "64 KiB");
        assert_eq!(bytes(0.0), "0 B");
        for v in [2.0 * GIB, 1.5 * GIB, 99.5 * KIB, 512.0] {
            assert_eq!(as_shown(Kind::Bytes, v), v);
        }
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        assert!(matches!(
            printable("mm_naive(float*) · 61 µs"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn an_escape_sequence_is_shown_escaped() {
        assert_eq!(
            printable("k\u{1b}]0;owned\u{7}\u{1b}[2J"),
            "k\\u{1b}]0;owned\\u{7}\\u{1b}[2J"
        );
    }

    #[test]
    fn line_breaks_and_returns_are_shown_escaped_in_one_line() {
        assert_eq!(printable("a\r\nb"), "a\\r\\nb");
    }

    #[test]
    fn line_breaks_are_kept_in_text_of_several_lines() {
        assert_eq!(printable_lines("a\nb\u{9b}c"), "a\nb\\u{9b}c");
    }

    #[test]
    fn delete_and_c1_controls_are_escaped() {
        assert_eq!(printable("\u{7f}\u{85}"), "\\u{7f}\\u{85}");
    }

    #[test]
    fn bidirectional_overrides_are_escaped() {
        assert_eq!(printable("ab\u{202e}cd\u{2066}"), "ab\\u{202e}cd\\u{2066}");
    }

    #[test]
    fn a_tab_becomes_four_spaces() {
        assert_eq!(printable("a\tb"), "a    b");
    }
}
