//! How exports are read: whole or in part, inflated up to a limit.

use crate::files::limits::SizeLimits;

/// How exports are read.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Keep the complete launches of a file that ends in the middle of one (cut short),
    /// with a warning, instead of refusing the file.
    pub partial: bool,
    /// The most a gzip export may inflate to (`--max-decompressed`); by default
    /// [`crate::files::limits::DEFAULT_MAX_DECOMPRESSED`].
    pub max_decompressed: u64,
}

impl Default for ReadOptions {
    fn default() -> ReadOptions {
        ReadOptions::within(SizeLimits::DEFAULT)
    }
}

impl ReadOptions {
    /// Whole exports only, inflated within `limits`.
    pub fn within(limits: SizeLimits) -> ReadOptions {
        ReadOptions {
            partial: false,
            max_decompressed: limits.max_decompressed,
        }
    }
}
