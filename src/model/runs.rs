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
    fn shapes_parse_and_count_flops() {
        let s: Shape = "1,64,1024,128".parse().unwrap();
        assert_eq!(s, Shape::REFERENCE);
        assert!((s.attention_flops(false) - 34.36e9).abs() < 0.01e9);
        assert_eq!(s.attention_flops(true), s.attention_flops(false) / 2.0);
        assert!("1,64,1024".parse::<Shape>().is_err());
        assert!("1,0,1024,128".parse::<Shape>().is_err());
    }
}
