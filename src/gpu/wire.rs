//! What the runner and a worker say to each other, the one file both sides read: the
//! command line a worker is started with ([`WorkerArgs`], the hidden subcommand
//! `__worker`), and the conversation after it, one JSON object a line. The worker
//! speaks first with [`Hello`]; then the runner sends a [`Command`] and reads one
//! [`Reply`] per command. The recipes' baseline scripts (`baselines/sdpa.py`,
//! `baselines/matmul.py`) speak the same messages.

use crate::kinds::ShapeText;
use crate::model::runs::CaseCheck;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::PathBuf;

/// The hidden subcommand that runs a worker.
pub const SUBCOMMAND: &str = "__worker";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Check one version on every case, then serve the timing protocol.
    Run,
    /// Check the built-in baseline named by `--version`, then serve the timing
    /// protocol.
    Baseline,
    /// Launch one version after two warm-up launches, for ncu.
    Profile,
    /// Launch the trace build of one version once after a warm-up, check it, write its
    /// trace buffer to `--trace-out` and say [`Hello::Traced`].
    Trace,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Run => "run",
            Mode::Baseline => "baseline",
            Mode::Profile => "profile",
            Mode::Trace => "trace",
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct WorkerArgs {
    #[arg(long, value_enum)]
    pub mode: Mode,
    /// The recipe folder.
    #[arg(long)]
    pub recipe: PathBuf,
    #[arg(long)]
    pub version: String,
    /// The shape with its flags, read in the recipe's kind.
    #[arg(long)]
    pub shape: ShapeText,
    #[arg(long)]
    pub seed: u64,
    /// Skip the check cases (the timed shape is still checked).
    #[arg(long)]
    pub no_cases: bool,
    /// Run the version's trace build (its pipeline markers stamping into a buffer), to
    /// time it against the plain build.
    #[arg(long)]
    pub traced: bool,
    /// Where `--mode trace` writes the trace buffer (little-endian 64-bit words).
    #[arg(long)]
    pub trace_out: Option<PathBuf>,
    /// Marks a lane of the trace buffer holds.
    #[arg(long)]
    pub trace_cap: Option<u32>,
}

impl WorkerArgs {
    /// The arguments that start a worker for these, after the executable:
    /// `__worker --mode … --version … --recipe … --shape … --seed …` then the flags.
    pub fn command_line(&self) -> Vec<OsString> {
        let mut line: Vec<OsString> = [SUBCOMMAND, "--mode", self.mode.name(), "--version"]
            .iter()
            .map(OsString::from)
            .collect();
        line.push(self.version.clone().into());
        line.push("--recipe".into());
        line.push(self.recipe.clone().into());
        for a in [
            "--shape",
            &self.shape.to_string(),
            "--seed",
            &self.seed.to_string(),
        ] {
            line.push(a.into());
        }
        if self.no_cases {
            line.push("--no-cases".into());
        }
        if self.traced {
            line.push("--traced".into());
        }
        if let Some(p) = &self.trace_out {
            line.push("--trace-out".into());
            line.push(p.clone().into());
        }
        if let Some(c) = self.trace_cap {
            line.push("--trace-cap".into());
            line.push(c.to_string().into());
        }
        line
    }
}

/// What the runner asks a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Command {
    /// Time one launch, then build a graph of enough launches to last `rep_ms`.
    Calibrate {
        rep_ms: f64,
    },
    /// Replay the graph `count` times back to back, timing each replay.
    Reps {
        count: u32,
    },
    /// Poison the output, replay the graph once, and check the last launch's output.
    CheckLast,
    Quit,
}

/// The worker's first line: set up and checked, or failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Hello {
    Ready(Ready),
    /// A trace was taken ([`Mode::Trace`]).
    Traced(Traced),
    Failed {
        message: String,
        /// Not run here rather than wrong (a PyTorch backend this machine lacks).
        #[serde(default)]
        skipped: bool,
    },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub gpu: Option<String>,
    pub gpu_uuid: Option<String>,
    /// ptxas's registers and spills.
    #[serde(default)]
    pub resources: Option<String>,
    /// The kernel launched where it is a path's, chosen at this shape instead of the
    /// version's own (none: the version's own, or a baseline).
    #[serde(default)]
    pub kernel: Option<String>,
    /// The first launch at the timed shape against the reference.
    pub first: Option<ErrorStats>,
    /// The check cases (ladder versions only).
    #[serde(default)]
    pub checks: Vec<CaseCheck>,
    /// Versions of what the worker runs on (PyTorch, cuDNN, NVRTC), by name.
    #[serde(default)]
    pub versions: Vec<(String, String)>,
}

/// What a trace worker says once its buffer is written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Traced {
    pub gpu: Option<String>,
    /// Blocks of the traced launch (lanes: blocks × 4).
    pub blocks: u32,
    /// Marks a lane holds.
    pub cap: u32,
    /// The traced launch against the reference: a trace of a wrong result is refused.
    pub error: Option<ErrorStats>,
    /// The finest step %globaltimer took, ns.
    pub timer_resolution_ns: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum Reply {
    Calibrated { launches: u32, launch_ms: f64 },
    Times { ms: Vec<f64> },
    Checked { error: ErrorStats },
    Error { message: String },
}

/// How far an output is from a reference.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorStats {
    pub max_abs: f64,
    /// ‖out − ref‖ / ‖ref‖.
    pub rel_l2: f64,
    /// Elements that are NaN or infinite: unwritten (the output was poisoned with NaN)
    /// or broken.
    pub non_finite: usize,
}

impl ErrorStats {
    pub fn of(
        out: impl IntoIterator<Item = f64>,
        reference: impl IntoIterator<Item = f64>,
    ) -> ErrorStats {
        let mut s = ErrorStats::default();
        let (mut diff2, mut ref2) = (0.0f64, 0.0f64);
        for (o, r) in out.into_iter().zip(reference) {
            if !o.is_finite() {
                s.non_finite += 1;
                continue;
            }
            let d = (o - r).abs();
            s.max_abs = s.max_abs.max(d);
            diff2 += d * d;
            ref2 += r * r;
        }
        s.rel_l2 = if ref2 > 0.0 {
            (diff2 / ref2).sqrt()
        } else {
            diff2.sqrt()
        };
        s
    }

    /// The worse of two measurements.
    pub fn worst(self, other: ErrorStats) -> ErrorStats {
        ErrorStats {
            max_abs: self.max_abs.max(other.max_abs),
            rel_l2: self.rel_l2.max(other.rel_l2),
            non_finite: self.non_finite.max(other.non_finite),
        }
    }
}

/// Why an output is wrong, if it is: NaN or infinite elements (unwritten, or broken),
/// or an error past either tolerance.
pub fn judge(e: &ErrorStats, rel_tolerance: f64, abs_tolerance: f64) -> Option<String> {
    if e.non_finite > 0 {
        Some(format!(
            "{} output elements are NaN or infinite (never written, or overflowed)",
            e.non_finite
        ))
    } else if e.rel_l2 > rel_tolerance {
        Some(format!(
            "wrong result: relative error {:.2e} exceeds the tolerance {rel_tolerance:.0e}",
            e.rel_l2
        ))
    } else if e.max_abs > abs_tolerance {
        Some(format!(
            "wrong result: largest absolute error {:.2e} exceeds the tolerance {abs_tolerance:.0e}",
            e.max_abs
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_replies_read_back() {
        let c = Command::Reps { count: 7 };
        let line = serde_json::to_string(&c).unwrap();
        assert_eq!(line, r#"{"cmd":"reps","count":7}"#);
        let r: Reply = serde_json::from_str(r#"{"reply":"times","ms":[1.5,2.0]}"#).unwrap();
        assert_eq!(r, Reply::Times { ms: vec![1.5, 2.0] });
        let h: Hello = serde_json::from_str(r#"{"event":"failed","message":"no torch"}"#).unwrap();
        assert_eq!(
            h,
            Hello::Failed {
                message: "no torch".into(),
                skipped: false
            }
        );
    }

    #[test]
    fn error_stats_count_unwritten_elements() {
        let e = ErrorStats::of([1.0, f64::NAN, 2.0], [1.0, 1.0, 2.5]);
        assert_eq!(e.non_finite, 1);
        assert_eq!(e.max_abs, 0.5);
        assert!(e.rel_l2 > 0.0);
        let same = ErrorStats::of([1.0, 2.0], [1.0, 2.0]);
        assert_eq!(same.rel_l2, 0.0);
    }

    #[test]
    fn both_tolerances_judge() {
        let e = |rel, abs, nf| ErrorStats {
            max_abs: abs,
            rel_l2: rel,
            non_finite: nf,
        };
        assert_eq!(judge(&e(1e-4, 1e-3, 0), 2e-3, 2e-2), None);
        assert!(
            judge(&e(3e-3, 1e-3, 0), 2e-3, 2e-2)
                .unwrap()
                .contains("relative error")
        );
        assert!(
            judge(&e(1e-4, 5e-2, 0), 2e-3, 2e-2)
                .unwrap()
                .contains("absolute error")
        );
        assert!(judge(&e(0.0, 0.0, 4), 2e-3, 2e-2).unwrap().contains("NaN"));
    }

    #[test]
    fn a_worker_command_line_reads_back_as_its_arguments() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(subcommand)]
            worker: Sub,
        }
        #[derive(clap::Subcommand)]
        enum Sub {
            #[command(name = "__worker")]
            Worker(WorkerArgs),
        }
        let args = WorkerArgs {
            mode: Mode::Baseline,
            recipe: "kernels/flash-attention".into(),
            version: "unfused".into(),
            shape: "1,64,1024,128:causal".parse().unwrap(),
            seed: 42,
            no_cases: true,
            traced: true,
            trace_out: Some("/tmp/t.bin".into()),
            trace_cap: Some(512),
        };
        let mut line = vec![OsString::from("stallscope")];
        line.extend(args.command_line());
        let Sub::Worker(back) = Cli::parse_from(line).worker;
        assert_eq!(format!("{back:?}"), format!("{args:?}"));
    }
}
