//! Why an export could not be read: the file, and the line where it went wrong.

use std::path::{Path, PathBuf};

/// A file that could not be read, with the line where it went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ParseError {
    pub path: PathBuf,
    pub line: Option<u64>,
    pub message: String,
}

impl ParseError {
    pub fn file(path: &Path, message: impl Into<String>) -> ParseError {
        ParseError {
            path: path.to_path_buf(),
            line: None,
            message: message.into(),
        }
    }

    pub fn at(path: &Path, line: u64, message: impl Into<String>) -> ParseError {
        ParseError {
            path: path.to_path_buf(),
            line: Some(line),
            message: message.into(),
        }
    }
}
