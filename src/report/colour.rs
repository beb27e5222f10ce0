//! How values are coloured wherever they are shown: the heat of a metric's value among
//! the versions' values, and one hue per stall reason. The explorer turns these into the
//! terminal's named colours, the HTML page and its charts into CSS colours, so both read
//! alike.

use crate::analysis::Better;
use crate::analysis::catalogue::Kind;
use crate::ncu::StallReason;

/// How good a value is among the values of its metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heat {
    Good,
    Fair,
    Poor,
    /// A metric with no better direction: not coloured.
    Plain,
}

impl Heat {
    /// The CSS class of the HTML page.
    pub fn class(self) -> &'static str {
        match self {
            Heat::Good => "good",
            Heat::Fair => "fair",
            Heat::Poor => "poor",
            Heat::Plain => "plain",
        }
    }
}

/// Heat of a value whose `rank` among its metric's values is 0 (the worst) to 1 (the best).
pub fn heat(better: Better, rank: f64) -> Heat {
    if better == Better::Neutral {
        return Heat::Plain;
    }
    match rank {
        r if r >= 0.67 => Heat::Good,
        r if r >= 0.34 => Heat::Fair,
        _ => Heat::Poor,
    }
}

/// How a metric's values are placed between the worst and the best.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// By difference.
    Linear,
    /// By ratio: times and TFLOPS, which a ladder improves by factors (a first version
    /// 150× slower would otherwise make every later one look alike).
    Log,
}

impl Scale {
    pub fn of(kind: Kind) -> Scale {
        match kind {
            Kind::Time | Kind::Tflops => Scale::Log,
            _ => Scale::Linear,
        }
    }
}

/// Each value's rank between the worst (0) and the best (1) of the known values, by the
/// metric's direction, on `scale` (linear where a value is not positive); 1 where the
/// value is unknown or all values are equal.
pub fn ranks(values: &[Option<f64>], better: Better, scale: Scale) -> Vec<f64> {
    let log = scale == Scale::Log && values.iter().flatten().all(|&x| x > 0.0);
    let at = |x: f64| if log { x.ln() } else { x };
    let (lo, hi) = values
        .iter()
        .flatten()
        .map(|&x| at(x))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
            (a.min(x), b.max(x))
        });
    values
        .iter()
        .map(|x| match (x, hi > lo) {
            (Some(x), true) => {
                let r = (at(*x) - lo) / (hi - lo);
                if better == Better::Lower { 1.0 - r } else { r }
            }
            _ => 1.0,
        })
        .collect()
}

/// A named colour: the terminal's own, or a CSS colour of the same name in each scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hue {
    Magenta,
    Cyan,
    Blue,
    Yellow,
    LightCyan,
    LightBlue,
    LightYellow,
    Green,
    LightGreen,
    LightMagenta,
    Gray,
}

impl Hue {
    /// Its CSS custom property on the HTML page and in the charts.
    pub fn css_var(self) -> &'static str {
        match self {
            Hue::Magenta => "var(--magenta)",
            Hue::Cyan => "var(--cyan)",
            Hue::Blue => "var(--blue)",
            Hue::Yellow => "var(--yellow)",
            Hue::LightCyan => "var(--light-cyan)",
            Hue::LightBlue => "var(--light-blue)",
            Hue::LightYellow => "var(--light-yellow)",
            Hue::Green => "var(--green)",
            Hue::LightGreen => "var(--light-green)",
            Hue::LightMagenta => "var(--light-magenta)",
            Hue::Gray => "var(--gray)",
        }
    }
}

/// One hue per stall reason, for stacked bars and their legends.
pub fn reason_hue(r: StallReason) -> Hue {
    use StallReason::*;
    match r {
        Barrier => Hue::Magenta,
        ShortScoreboard => Hue::Cyan,
        LongScoreboard => Hue::Blue,
        Wait => Hue::Yellow,
        MioThrottle => Hue::LightCyan,
        LgThrottle => Hue::LightBlue,
        MathPipeThrottle => Hue::LightYellow,
        Selected => Hue::Green,
        NotSelected => Hue::LightGreen,
        DispatchStall => Hue::LightMagenta,
        _ => Hue::Gray,
    }
}

/// One hue per stage of a pipeline trace, by its index in the trace's stages (after ten,
/// they come round again).
pub fn stage_hue(stage: usize) -> Hue {
    const HUES: [Hue; 10] = [
        Hue::Blue,
        Hue::LightBlue,
        Hue::Magenta,
        Hue::Yellow,
        Hue::Green,
        Hue::Cyan,
        Hue::Gray,
        Hue::LightMagenta,
        Hue::LightYellow,
        Hue::LightGreen,
    ];
    HUES[stage % HUES.len()]
}

/// Every colour of the HTML page and its charts: the custom property, its value in the
/// light scheme and in the dark scheme. The hues are the terminal's named colours as
/// common light and dark palettes draw them.
const PALETTE: &[(&str, &str, &str)] = &[
    ("--bg", "#ffffff", "#0d1117"),
    ("--panel", "#f6f8fa", "#161b22"),
    ("--fg", "#1f2328", "#e6edf3"),
    ("--muted", "#59636e", "#9198a1"),
    ("--border", "#d1d9e0", "#3d444d"),
    ("--grid", "#e6eaef", "#262c36"),
    ("--accent", "#0969da", "#4493f8"),
    ("--good", "#1a7f37", "#3fb950"),
    ("--fair", "#9a6700", "#d29922"),
    ("--poor", "#cf222e", "#f85149"),
    ("--good-bg", "#dafbe1", "#12261e"),
    ("--fair-bg", "#fff8c5", "#272115"),
    ("--poor-bg", "#ffebe9", "#2d1517"),
    ("--hot", "#e5534b", "#f47067"),
    ("--tensor", "#bc4c00", "#f0883e"),
    ("--magenta", "#8250df", "#a371f7"),
    ("--cyan", "#1b7c83", "#2aa8b2"),
    ("--blue", "#0550ae", "#4493f8"),
    ("--yellow", "#bf8700", "#d29922"),
    ("--light-cyan", "#7ad7de", "#8ee4ea"),
    ("--light-blue", "#80ccff", "#a5d6ff"),
    ("--light-yellow", "#f0d264", "#f5e08a"),
    ("--green", "#2da44e", "#3fb950"),
    ("--light-green", "#aceebb", "#a2eeb0"),
    ("--light-magenta", "#d8b9ff", "#e2c5ff"),
    ("--gray", "#afb8c1", "#6e7681"),
];

/// `text` with every `var(--name)` of the palette written as the light scheme's colour:
/// for an SVG that renderers without CSS custom properties (librsvg, resvg) draw as it
/// is. A `var()` of no palette colour stays as it was.
pub fn resolve_vars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("var(--") {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let resolved = tail.find(')').and_then(|end| {
            let name = &tail["var(".len()..end];
            let (_, light, _) = PALETTE.iter().find(|(n, _, _)| *n == name)?;
            Some((*light, end + 1))
        });
        match resolved {
            Some((colour, len)) => {
                out.push_str(colour);
                rest = &tail[len..];
            }
            None => {
                out.push_str("var(");
                rest = &tail["var(".len()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The palette as CSS for `selector`: the light scheme, the dark scheme where the reader
/// prefers it, and the light scheme again on paper.
pub fn css_palette(selector: &str) -> String {
    let block = |dark: bool| {
        let decls: String = PALETTE
            .iter()
            .map(|(name, light, dk)| format!("{name}:{};", if dark { dk } else { light }))
            .collect();
        format!("{selector}{{{decls}}}")
    };
    format!(
        "{}\n@media (prefers-color-scheme: dark){{{}}}\n@media print{{{}}}\n",
        block(false),
        block(true),
        block(false)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_properties_resolve_to_the_light_scheme() {
        assert_eq!(
            resolve_vars("a{fill:var(--accent)} style=\"fill:var(--gray)\" var(--nope) var(--"),
            "a{fill:#0969da} style=\"fill:#afb8c1\" var(--nope) var(--"
        );
    }

    #[test]
    fn ranks_follow_the_metric_direction() {
        let values = [Some(10.0), None, Some(20.0), Some(15.0)];
        assert_eq!(
            ranks(&values, Better::Lower, Scale::Linear),
            vec![1.0, 1.0, 0.0, 0.5]
        );
    }

    /// The flash-attention ladder's run times (µs) of v01, v02 and v28: on a linear
    /// scale v01's 9439 µs made v02's 1750 µs look good; by ratio v02 is poor.
    #[test]
    fn times_are_ranked_by_ratio() {
        let values = [Some(9439.4), Some(1749.7), Some(60.5)];
        let r = ranks(&values, Better::Lower, Scale::of(Kind::Time));
        assert_eq!(heat(Better::Lower, r[1]), Heat::Poor, "{r:?}");
    }
}
