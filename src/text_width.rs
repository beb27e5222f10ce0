//! Text as a terminal lays it out: how many columns a text takes, and a text cut to a
//! width. The model's listing of launches, the reports and the explorer align by it.

/// Columns a text takes on a terminal (wide characters count two, combining ones none).
pub fn width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// Columns one character takes on a terminal (a control character none).
pub fn char_width(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// A text cut on the right to `width` columns (as the terminal counts them), an
/// ellipsis last where it was cut: never on the left, which can change what it says
/// (`2,090` for 82,090).
pub fn cut(text: &str, width: usize) -> String {
    if self::width(text) <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_width(c);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    if width > 0 {
        out.push('…');
    }
    out
}
