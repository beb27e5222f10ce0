//! Run results: what stallscope measured itself when it launched a version (time,
//! throughput, error against the reference), stored as `runs.json` in the ladder folder.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

pub const FILE_NAME: &str = "runs.json";

/// An attention problem shape: [B, H, S, D].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Shape {
    pub b: u32,
    pub h: u32,
    pub s: u32,
    pub d: u32,
}

impl Shape {
    pub const REFERENCE: Shape = Shape {
        b: 1,
        h: 64,
        s: 1024,
        d: 128,
    };

    /// FLOP of one forward pass: 4·B·H·S²·D, half of it when causal.
    pub fn attention_flops(&self, causal: bool) -> f64 {
        let f = 4.0 * self.b as f64 * self.h as f64 * (self.s as f64).powi(2) * self.d as f64;
        if causal { f / 2.0 } else { f }
    }

    pub fn elements(&self) -> usize {
        self.b as usize * self.h as usize * self.s as usize * self.d as usize
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{},{}", self.b, self.h, self.s, self.d)
    }
}

impl FromStr for Shape {
    type Err = String;
    fn from_str(s: &str) -> Result<Shape, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let bad =
            || format!("shape {s:?} is not B,H,S,D (four positive integers, e.g. 1,64,1024,128)");
        if parts.len() != 4 {
            return Err(bad());
        }
        let n: Vec<u32> = parts
            .iter()
            .map(|p| p.parse::<u32>().ok().filter(|&v| v > 0))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        Ok(Shape {
            b: n[0],
            h: n[1],
            s: n[2],
            d: n[3],
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Correct within tolerance, timed.
    Ok,
    /// Wrong result, fault, timeout or compile error.
    Failed,
    /// Not run here (no torch for a baseline, a shape the version does not support).
    Skipped,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub version: String,
    pub shape: Shape,
    pub causal: bool,
    pub status: RunStatus,
    /// Median time of one launch over the repetitions, µs.
    #[serde(default)]
    pub median_us: Option<f64>,
    /// Fastest and slowest repetition, µs.
    #[serde(default)]
    pub min_us: Option<f64>,
    #[serde(default)]
    pub max_us: Option<f64>,
    #[serde(default)]
    pub tflops: Option<f64>,
    #[serde(default)]
    pub max_abs_err: Option<f64>,
    #[serde(default)]
    pub rel_l2_err: Option<f64>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub gpu: Option<String>,
    /// When it ran (RFC 3339, UTC).
    #[serde(default)]
    pub when: Option<String>,
    /// Why it failed or was skipped.
    #[serde(default)]
    pub message: Option<String>,
    /// Registers and spills as ptxas reported them.
    #[serde(default)]
    pub resources: Option<String>,
}

impl RunResult {
    /// A result with no measurement yet, stamped with the current time.
    pub fn new(version: &str, shape: Shape, causal: bool, status: RunStatus) -> RunResult {
        RunResult {
            version: version.to_string(),
            shape,
            causal,
            status,
            median_us: None,
            min_us: None,
            max_us: None,
            tflops: None,
            max_abs_err: None,
            rel_l2_err: None,
            seed: None,
            gpu: None,
            when: Some(now_utc()),
            message: None,
            resources: None,
        }
    }
}

/// The current time, RFC 3339 in UTC, without a date crate.
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunFile {
    pub runs: Vec<RunResult>,
}

impl RunFile {
    /// Adds results, replacing earlier ones of the same version, shape and masking.
    pub fn upsert(&mut self, results: impl IntoIterator<Item = RunResult>) {
        for r in results {
            self.runs.retain(|o| {
                !(o.version == r.version && o.shape == r.shape && o.causal == r.causal)
            });
            self.runs.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_look_right() {
        let t = now_utc();
        assert_eq!(t.len(), 20);
        assert!(t.starts_with("20") && t.ends_with('Z'), "{t}");
    }

    #[test]
    fn shapes_parse_and_count_flops() {
        let s: Shape = "1,64,1024,128".parse().unwrap();
        assert_eq!(s, Shape::REFERENCE);
        assert!((s.attention_flops(false) - 34.36e9).abs() < 0.01e9);
        assert_eq!(s.attention_flops(true), s.attention_flops(false) / 2.0);
        assert!("1,64,1024".parse::<Shape>().is_err());
        assert!("1,0,1024,128".parse::<Shape>().is_err());
    }
}
