//! Names that become folders (a ladder's), and the characters that would show a name
//! other than it is written.

use anyhow::{Result, bail};

/// Whether a character reorders the text around it on a terminal or page (Unicode's
/// bidirectional controls: embeddings, overrides, isolates and marks), so that what is
/// shown is not what is written.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A plain folder name (a ladder): not empty, no path separator, not starting with a
/// dot (so neither `.` nor `..`), no control characters and no bidirectional controls
/// (which would show the name other than it is); it names one folder and nothing above
/// it.
pub fn check_folder_name(what: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 255
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control() || is_bidi_control(c));
    if !ok {
        bail!(
            "{what} {name:?} must be a plain folder name: not empty, at most 255 bytes, no '/', '\\', control character or bidirectional control (U+202E and the like), not starting with '.'"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_name_with_a_bidirectional_control_is_refused() {
        assert!(check_folder_name("ladder name", "my-kernel").is_ok());
        for c in [
            '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
        ] {
            let e = check_folder_name("ladder name", &format!("a{c}b")).unwrap_err();
            assert!(!e.to_string().contains(c), "{e}");
        }
    }
}
