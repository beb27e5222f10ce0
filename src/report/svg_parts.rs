//! What every SVG chart is drawn with: the width of a chart, its opening tag and text.

use super::texts::escape;
use std::fmt::Write;

/// The width of every chart's view box.
pub(super) const WIDTH: f64 = 960.0;

/// An `<svg>` element's opening tag and title for a chart of `height`.
pub(super) fn open_svg(out: &mut String, chart: &str, height: f64, title: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{chart}\" \
         viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" aria-label=\"{t}\"><title>{t}</title>",
        t = escape(title)
    );
}

/// A text at (`x`, `y`), escaped.
pub(super) fn text(out: &mut String, x: f64, y: f64, anchor: &str, class: &str, content: &str) {
    let _ = write!(
        out,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" class=\"{class}\">{}</text>",
        escape(content)
    );
}
