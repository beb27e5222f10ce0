//! How much stallscope reads of one file and lets one gzip export inflate to: the
//! defaults, the environment variables and flags that change them, and sizes as they
//! are written (`512MiB`, `8GiB`) and shown (`2 GiB`).

/// The most bytes one file may hold, unless `--max-file-size` says otherwise.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 30;
/// The most a gzip export may inflate to, unless `--max-decompressed` says otherwise: a
/// large raw page of a thousand launches is some tens of MB.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 2 << 30;
/// The environment variables the flags read.
pub const MAX_FILE_SIZE_VAR: &str = "STALLSCOPE_MAX_FILE_SIZE";
pub const MAX_DECOMPRESSED_VAR: &str = "STALLSCOPE_MAX_DECOMPRESSED";

/// [`DEFAULT_MAX_FILE_SIZE`] as `--max-file-size` shows and parses it (`1 GiB`).
pub fn default_max_file_size_text() -> &'static str {
    static TEXT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| size_text(DEFAULT_MAX_FILE_SIZE));
    &TEXT
}

/// [`DEFAULT_MAX_DECOMPRESSED`] as `--max-decompressed` shows and parses it (`2 GiB`).
pub fn default_max_decompressed_text() -> &'static str {
    static TEXT: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| size_text(DEFAULT_MAX_DECOMPRESSED));
    &TEXT
}

/// How much stallscope reads of one file, and lets one gzip file inflate to: resolved
/// once by the commands (`--max-file-size` and `--max-decompressed`, or their
/// environment variables, else the defaults) and handed to every reader with the store
/// it reads (`model::Store`) or the request it serves. No reader looks them up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    pub max_file_size: u64,
    pub max_decompressed: u64,
}

impl SizeLimits {
    /// [`DEFAULT_MAX_FILE_SIZE`] and [`DEFAULT_MAX_DECOMPRESSED`]: what the command line
    /// gives when neither flag nor variable is set.
    pub const DEFAULT: SizeLimits = SizeLimits {
        max_file_size: DEFAULT_MAX_FILE_SIZE,
        max_decompressed: DEFAULT_MAX_DECOMPRESSED,
    };
}

impl Default for SizeLimits {
    fn default() -> SizeLimits {
        SizeLimits::DEFAULT
    }
}

/// `4096`, `512MiB`, `8GiB`, `2G`, `100MB` …: binary units (K, M, G, T, with or without
/// `iB`), or decimal ones (KB, MB, GB, TB).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a size: give bytes or a size such as 512MiB, 8GiB");
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let number: u64 = t[..digits].parse().map_err(|_| bad())?;
    let factor: u64 = match t[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        _ => return Err(bad()),
    };
    match number.checked_mul(factor) {
        Some(0) => Err(format!("{text:?}: the limit must be more than 0 bytes")),
        Some(n) => Ok(n),
        None => Err(bad()),
    }
}

/// A size as the limits' messages give it: `2 GiB`, `512 MiB`, `1000 bytes`.
pub fn size_text(bytes: u64) -> String {
    for (unit, factor) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= factor && bytes.is_multiple_of(factor) {
            return format!("{} {unit}", bytes / factor);
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("100MB"), Ok(100_000_000));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
    }
}
