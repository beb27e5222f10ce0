//! How values are coloured wherever they are shown: the heat of a metric's value among
//! the versions' values, and one hue per stall reason. The explorer turns these into the
//! terminal's named colours, the HTML page and its charts into CSS colours, so both read
//! alike.

use crate::analysis::Better;
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

/// Each value's rank between the worst (0) and the best (1) of the known values, by the
/// metric's direction; 1 where the value is unknown or all values are equal.
pub fn ranks(values: &[Option<f64>], better: Better) -> Vec<f64> {
    let (lo, hi) = values
        .iter()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    values
        .iter()
        .map(|x| match (x, hi > lo) {
            (Some(x), true) => {
                let r = (x - lo) / (hi - lo);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_follow_the_metric_direction() {
        let values = [Some(10.0), None, Some(20.0), Some(15.0)];
        assert_eq!(ranks(&values, Better::Lower), vec![1.0, 1.0, 0.0, 0.5]);
    }
}
