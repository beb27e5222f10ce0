//! Run results: what stallscope measured itself when it launched a version (time,
//! throughput, error against the reference), stored as `runs.json` in the ladder folder.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

pub const FILE_NAME: &str = "runs.json";

/// A problem shape: its kind, dimensions and flags ([`crate::kinds`]).
pub use crate::kinds::Shape;

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
    /// The problem it ran: kind, dimensions and flags.
    pub shape: Shape,
    pub status: RunStatus,
    /// Time of one launch: the median over the rounds of each round's median, µs.
    #[serde(default)]
    pub median_us: Option<f64>,
    /// Fastest and slowest repetition over all rounds, µs.
    #[serde(default)]
    pub min_us: Option<f64>,
    #[serde(default)]
    pub max_us: Option<f64>,
    /// Each round's timed window, in the order measured: its median, clock, power and
    /// energy, so that ratios (in time and in cycles) are taken round by round.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Round>,
    #[serde(default)]
    pub tflops: Option<f64>,
    /// The worse of the first and the last launch at the timed shape.
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
    /// The kernel a version launched where its recipe chose a path's at this shape
    /// (`[[version.path]]`); absent where it ran its own (and for baselines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Mean SM clock over the timed windows, MHz.
    #[serde(default)]
    pub sm_clock_mhz: Option<f64>,
    /// Mean board power over the timed windows, W.
    #[serde(default)]
    pub power_w: Option<f64>,
    /// Energy of one launch, mJ (unknown where the windows were too short for NVML's
    /// energy counter).
    #[serde(default)]
    pub energy_mj: Option<f64>,
    /// Throttle reasons NVML reported during the timed windows: empty when it reported
    /// none, absent when nobody watched (no NVML, or the candidate was not timed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<Vec<String>>,
    /// How it was timed.
    #[serde(default)]
    pub protocol: Option<Protocol>,
    /// The input cases it was checked on besides the timed shape.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CaseCheck>,
    /// The run it belongs to: its environment is in the run file's `environments`.
    #[serde(default)]
    pub run_id: Option<String>,
    /// The GPU it ran on: its index on the host (where stallscope placed it) and UUID.
    #[serde(default)]
    pub gpu_index: Option<u32>,
    #[serde(default)]
    pub gpu_uuid: Option<String>,
}

/// One round of one candidate: its timed window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// The median time of one launch over the window's repetitions, µs.
    pub us: f64,
    /// Repetitions (graph replays) timed.
    #[serde(default)]
    pub reps: u32,
    /// What was timed: the sum of the repetitions' own times, ms.
    #[serde(default)]
    pub window_ms: f64,
    /// The warm-up before it, ms.
    #[serde(default)]
    pub warmup_ms: f64,
    /// Whether that warm-up settled before its cap (sustained, with NVML).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// Mean SM clock over the window, MHz.
    #[serde(default)]
    pub sm_clock_mhz: Option<f64>,
    /// Mean board power over the window, W: from the energy counter, unknown where
    /// the window is too short for it (a power reading lags the load).
    #[serde(default)]
    pub power_w: Option<f64>,
    /// Energy of one launch over the window, mJ.
    #[serde(default)]
    pub energy_mj: Option<f64>,
}

/// How a candidate warms up before its timed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Regime {
    /// From an idle GPU at boost clock: an idle gap, then a short window.
    Burst,
    /// After the SM clock has settled under the candidate's own load: a long window.
    Sustained,
}

impl fmt::Display for Regime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Regime::Burst => "burst",
            Regime::Sustained => "sustained",
        })
    }
}

/// The timing protocol a result was measured under: the same for every candidate of a
/// run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    pub regime: Regime,
    /// How launches were issued: `cuda_graph` (a graph of back-to-back launches
    /// replayed once per repetition).
    pub mechanism: String,
    /// Launches in one repetition (one graph replay).
    pub launches_per_rep: u32,
    /// Repetitions timed in each round.
    pub reps: u32,
    pub rounds: u32,
    /// Mean length of one round's timed window, ms.
    pub window_ms: f64,
    /// Mean warm-up before a window, ms (sustained: until the SM clock settled).
    pub warmup_ms: f64,
    /// Whether every sustained warm-up settled before its cap.
    #[serde(default)]
    pub settled: Option<bool>,
    /// Idle time before each window, ms (burst).
    #[serde(default)]
    pub idle_ms: Option<f64>,
    /// The least a window had to last, ms: every window lasted at least this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_window_ms: Option<f64>,
    /// How the rounds ended: the stopping rule's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convergence: Option<Convergence>,
}

/// How a candidate's rounds ended under the stopping rule: rounds go on, every
/// candidate once per round, until the 95 % interval of every candidate's ratio to the
/// reference candidate is within the target, or the comparison's time is up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Convergence {
    /// The reference candidate the intervals were taken against.
    pub against: String,
    /// The half-width the intervals had to reach, % of the ratio.
    pub target_pct: f64,
    /// The half-width this candidate's interval reached, % (none for the reference
    /// itself, or with fewer than two rounds).
    #[serde(default)]
    pub interval_pct: Option<f64>,
    /// Whether this candidate's interval reached the target, or it was decided.
    pub converged: bool,
    /// Whether it was decided: after the floor of rounds its interval lay wholly beyond
    /// the equivalence band (its verdict settled), and it sat out the rounds after.
    #[serde(default)]
    pub decided: bool,
    /// Why the rounds stopped.
    pub stopped: Stop,
}

/// Why a comparison's rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// Every candidate's interval reached the target.
    Converged,
    /// The comparison's time was up first.
    MaxTime,
    /// A fixed number of rounds was asked for.
    Rounds,
}

impl Convergence {
    /// How the rounds ended, in words: `converged to ±1.0 % against v28`, `time up
    /// before ±1.0 % against v28`, or none for a fixed count.
    pub fn ending(&self) -> Option<String> {
        let how = match self.stopped {
            Stop::Converged => "converged to",
            Stop::MaxTime => "time up before",
            Stop::Rounds => return None,
        };
        Some(format!(
            "{how} ±{:.1} % against {}",
            self.target_pct, self.against
        ))
    }
}

/// One input case a version was checked on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseCheck {
    pub case: String,
    pub shape: Shape,
    pub status: RunStatus,
    #[serde(default)]
    pub rel_l2_err: Option<f64>,
    #[serde(default)]
    pub max_abs_err: Option<f64>,
    #[serde(default)]
    pub message: Option<String>,
}

/// What a run ran on, recorded once per run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "EnvironmentFile")]
pub struct Environment {
    pub run_id: String,
    #[serde(default)]
    pub when: Option<String>,
    #[serde(default)]
    pub gpu: Option<String>,
    #[serde(default)]
    pub gpu_uuid: Option<String>,
    #[serde(default)]
    pub driver: Option<String>,
    /// The CUDA version the driver supports.
    #[serde(default)]
    pub cuda_driver: Option<String>,
    #[serde(default)]
    pub nvrtc: Option<String>,
    /// The versions of the libraries the workers reported (a baseline's framework and
    /// the libraries under it, as its script names them: `torch`, `cudnn`, …), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub libraries: BTreeMap<String, String>,
    #[serde(default)]
    pub max_sm_clock_mhz: Option<u32>,
    #[serde(default)]
    pub power_limit_w: Option<f64>,
    /// Why clocks, power and energy are missing, where they are.
    #[serde(default)]
    pub nvml: Option<String>,
}

/// An [`Environment`] as runs.json holds it: files written before the library map
/// name PyTorch's and cuDNN's versions in fields of their own, read into the map.
#[derive(Deserialize)]
struct EnvironmentFile {
    run_id: String,
    #[serde(default)]
    when: Option<String>,
    #[serde(default)]
    gpu: Option<String>,
    #[serde(default)]
    gpu_uuid: Option<String>,
    #[serde(default)]
    driver: Option<String>,
    #[serde(default)]
    cuda_driver: Option<String>,
    #[serde(default)]
    nvrtc: Option<String>,
    #[serde(default)]
    libraries: BTreeMap<String, String>,
    #[serde(default)]
    torch: Option<String>,
    #[serde(default)]
    cudnn: Option<String>,
    #[serde(default)]
    max_sm_clock_mhz: Option<u32>,
    #[serde(default)]
    power_limit_w: Option<f64>,
    #[serde(default)]
    nvml: Option<String>,
}

impl From<EnvironmentFile> for Environment {
    fn from(f: EnvironmentFile) -> Environment {
        let mut libraries = f.libraries;
        for (name, version) in [("torch", f.torch), ("cudnn", f.cudnn)] {
            if let Some(v) = version {
                libraries.entry(name.to_string()).or_insert(v);
            }
        }
        Environment {
            run_id: f.run_id,
            when: f.when,
            gpu: f.gpu,
            gpu_uuid: f.gpu_uuid,
            driver: f.driver,
            cuda_driver: f.cuda_driver,
            nvrtc: f.nvrtc,
            libraries,
            max_sm_clock_mhz: f.max_sm_clock_mhz,
            power_limit_w: f.power_limit_w,
            nvml: f.nvml,
        }
    }
}

impl RunResult {
    /// A result with no measurement yet, stamped with the current time.
    pub fn new(version: &str, shape: Shape, status: RunStatus) -> RunResult {
        RunResult {
            version: version.to_string(),
            shape,
            status,
            median_us: None,
            min_us: None,
            max_us: None,
            rounds: Vec::new(),
            tflops: None,
            max_abs_err: None,
            rel_l2_err: None,
            seed: None,
            gpu: None,
            when: Some(now_utc()),
            message: None,
            resources: None,
            kernel: None,
            sm_clock_mhz: None,
            power_w: None,
            energy_mj: None,
            throttle: None,
            protocol: None,
            checks: Vec::new(),
            run_id: None,
            gpu_index: None,
            gpu_uuid: None,
        }
    }

    /// Each round's median, µs, in the order measured.
    pub fn rounds_us(&self) -> Vec<f64> {
        self.rounds.iter().map(|r| r.us).collect()
    }

    /// The rounds whose sustained warm-up hit its cap before the SM clock settled.
    pub fn unsettled_rounds(&self) -> usize {
        self.rounds
            .iter()
            .filter(|r| r.settled == Some(false))
            .count()
    }

    pub fn regime(&self) -> Option<Regime> {
        self.protocol.as_ref().map(|p| p.regime)
    }

    /// TFLOPS per watt of board power.
    pub fn tflops_per_watt(&self) -> Option<f64> {
        match (self.tflops, self.power_w) {
            (Some(t), Some(w)) if w > 0.0 => Some(t / w),
            _ => None,
        }
    }

    /// Time × mean SM clock: the launch in cycles (millions).
    pub fn mega_cycles(&self) -> Option<f64> {
        Some(self.median_us? * self.sm_clock_mhz? / 1e6)
    }
}

/// The current time, RFC 3339 in UTC, to the second.
pub fn now_utc() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The version of the run file's layout. 3: a shape names its problem kind and holds
/// its flags (`{"kind": "attention", "b": 1, …, "causal": false}`). 2: `rounds` are
/// objects (median, clock, power, energy of each window) instead of `rounds_us`; the
/// protocol says how the rounds ended (`convergence`). Schemas 1 and 2 are read too.
pub const SCHEMA: &str = "stallscope/runs/3";
/// The oldest run file layout this stallscope reads.
const OLDEST_SCHEMA: u32 = 1;

/// `runs.json`: every result kept, and the environment of every run they came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFile {
    #[serde(default = "schema")]
    pub schema: String,
    #[serde(default)]
    pub environments: Vec<Environment>,
    pub runs: Vec<RunResult>,
}

fn schema() -> String {
    SCHEMA.to_string()
}

/// Schema 1 kept only each round's median (`rounds_us`): those become rounds without
/// clocks.
fn upgrade_rounds(file: &mut serde_json::Value) {
    let Some(runs) = file.get_mut("runs").and_then(|r| r.as_array_mut()) else {
        return;
    };
    for run in runs.iter_mut().filter_map(|r| r.as_object_mut()) {
        if let Some(us) = run.remove("rounds_us")
            && !run.contains_key("rounds")
            && let Some(us) = us.as_array()
        {
            let rounds = us.iter().map(|u| serde_json::json!({ "us": u })).collect();
            run.insert("rounds".into(), serde_json::Value::Array(rounds));
        }
    }
}

/// Schemas 1 and 2 knew one problem kind ([`crate::kinds::legacy`]) and kept its flags
/// beside the shape (`"causal": true` in a result and a case check): they move into the
/// shape, which reads the kind's default when it names none.
fn upgrade_shapes(file: &mut serde_json::Value) {
    let Some(runs) = file.get_mut("runs").and_then(|r| r.as_array_mut()) else {
        return;
    };
    let flags = crate::kinds::legacy().flags();
    let lift = |entry: &mut serde_json::Map<String, serde_json::Value>| {
        for f in flags {
            if let Some(v) = entry.remove(f.name)
                && let Some(shape) = entry.get_mut("shape").and_then(|s| s.as_object_mut())
            {
                shape.insert(f.name.to_string(), v);
            }
        }
    };
    for run in runs.iter_mut().filter_map(|r| r.as_object_mut()) {
        lift(run);
        if let Some(checks) = run.get_mut("checks").and_then(|c| c.as_array_mut()) {
            checks
                .iter_mut()
                .filter_map(|c| c.as_object_mut())
                .for_each(lift);
        }
    }
}

/// The version number of a run file schema (`stallscope/runs/N`).
fn schema_version(schema: &str) -> Option<u32> {
    schema.strip_prefix("stallscope/runs/")?.parse().ok()
}

impl Default for RunFile {
    fn default() -> Self {
        RunFile {
            schema: schema(),
            environments: Vec::new(),
            runs: Vec::new(),
        }
    }
}

impl RunFile {
    /// Reads a run file; a missing file is an empty history, anything else unreadable
    /// (not a regular file in the ladder folder, not a run file) is an error naming the
    /// file.
    pub fn read(store: &super::Store, path: &std::path::Path) -> anyhow::Result<RunFile> {
        use anyhow::Context;
        let dir = path.parent().unwrap_or(std::path::Path::new(""));
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let shown = store.describe(path);
        let text = match store.read_confined_text(dir, &name, &[dir.to_path_buf()]) {
            Ok((_, text)) => text,
            Err(e) if e.missing => return Ok(RunFile::default()),
            // The reading error says what to do (raise a limit, make it a regular
            // file); the file is named once.
            Err(e) => {
                let e = e.to_string();
                if e.contains(&shown) {
                    anyhow::bail!("{e}");
                }
                anyhow::bail!("{shown} cannot be read: {e}")
            }
        };
        if let Some(file) = Self::current(&text) {
            return Ok(file);
        }
        let value: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("{shown} is not a run file"))?;
        if let Some(schema) = value.get("schema").and_then(|s| s.as_str()) {
            let newest = schema_version(SCHEMA).unwrap_or(0);
            match schema_version(schema) {
                Some(n) if (OLDEST_SCHEMA..=newest).contains(&n) => {}
                Some(n) if n > newest => anyhow::bail!(
                    "{shown} was written by a newer stallscope (schema {schema}; this one reads {SCHEMA}): update stallscope to read it, or move it aside to start a new history"
                ),
                _ => {
                    anyhow::bail!("{shown} is not a run file (schema {schema}, expected {SCHEMA})")
                }
            }
        }
        let version = value
            .get("schema")
            .and_then(|s| s.as_str())
            .and_then(schema_version)
            .unwrap_or(OLDEST_SCHEMA);
        let mut value = value;
        upgrade_rounds(&mut value);
        if version < 3 {
            upgrade_shapes(&mut value);
        }
        let mut file: RunFile =
            serde_json::from_value(value).with_context(|| format!("{shown} is not a run file"))?;
        file.schema = SCHEMA.to_string();
        Ok(file)
    }

    /// A file of this stallscope's schema with nothing to upgrade, read straight into
    /// its types (the general reading goes through a JSON tree first, for the upgrades);
    /// `None` for anything else, which the general reading takes.
    fn current(text: &str) -> Option<RunFile> {
        #[derive(Deserialize)]
        struct Current {
            schema: Option<String>,
            #[serde(default)]
            environments: Vec<Environment>,
            runs: Vec<RunResult>,
        }
        // Only a file that names this schema is tried: an older one would be parsed
        // twice.
        if text.contains("\"rounds_us\"") || !text.contains(&format!("\"{SCHEMA}\"")) {
            return None;
        }
        let c: Current = serde_json::from_str(text).ok()?;
        (c.schema.as_deref() == Some(SCHEMA)).then(|| RunFile {
            schema: SCHEMA.to_string(),
            environments: c.environments,
            runs: c.runs,
        })
    }

    /// Adds results, replacing earlier ones of the same version, shape (flags
    /// included) and regime; keeps the environment of every run a result still refers to.
    pub fn upsert(
        &mut self,
        results: impl IntoIterator<Item = RunResult>,
        env: Option<Environment>,
    ) {
        for r in results {
            self.runs.retain(|o| {
                !(o.version == r.version && o.shape == r.shape && o.regime() == r.regime())
            });
            self.runs.push(r);
        }
        if let Some(e) = env {
            self.environments.retain(|o| o.run_id != e.run_id);
            self.environments.push(e);
        }
        let used: std::collections::HashSet<&str> = self
            .runs
            .iter()
            .filter_map(|r| r.run_id.as_deref())
            .collect();
        self.environments
            .retain(|e| used.contains(e.run_id.as_str()));
    }

    /// Adds results (skipped ones are not kept) and their run's environment to
    /// `runs.json` in `ladder_dir`, under the ladder's lock; the file there is read
    /// within `limits`.
    pub fn store(
        ladder_dir: &std::path::Path,
        results: &[RunResult],
        env: Option<Environment>,
        limits: crate::files::limits::SizeLimits,
    ) -> anyhow::Result<std::path::PathBuf> {
        let path = ladder_dir.join(FILE_NAME);
        let profiles = ladder_dir.parent().unwrap_or(std::path::Path::new("."));
        crate::files::confine::create_dir(profiles, ladder_dir)?;
        // Read, changed and written under the ladder's lock: two runs saving at once
        // both keep their results.
        let _lock = crate::files::lock::Lock::acquire(ladder_dir)?;
        let mut file = RunFile::read(&super::Store::disk(limits), &path)?;
        crate::files::fault::point("the run file read");
        file.upsert(
            results
                .iter()
                .filter(|r| r.status != RunStatus::Skipped)
                .cloned(),
            env,
        );
        let text = serde_json::to_string_pretty(&file)? + "\n";
        crate::files::write::atomically(&path, text.as_bytes())?;
        Ok(path)
    }

    pub fn environment(&self, run_id: &str) -> Option<&Environment> {
        self.environments.iter().find(|e| e.run_id == run_id)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_environment_of_before_the_library_map_reads_its_versions_into_it() {
        // runs.json as the bundled flash-attention results were written (2026-12-03).
        let old = r#"{"run_id": "r1", "gpu": "NVIDIA H200", "nvrtc": "13.0",
            "torch": "2.11.0+cu130", "cudnn": "91900"}"#;
        let env: Environment = serde_json::from_str(old).unwrap();
        let libraries: Vec<(&str, &str)> = env
            .libraries
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(libraries, [("cudnn", "91900"), ("torch", "2.11.0+cu130")]);
        assert_eq!(env.nvrtc.as_deref(), Some("13.0"));
        // Written again, the versions are the map's only.
        let json = serde_json::to_value(&env).unwrap();
        assert_eq!(json["libraries"]["torch"], "2.11.0+cu130");
        assert!(json.get("torch").is_none() && json.get("cudnn").is_none());
        let back: Environment = serde_json::from_value(json).unwrap();
        assert_eq!(back, env);
        // A map written since wins over an old field of the same name.
        let both = r#"{"run_id": "r2", "libraries": {"torch": "2.12"}, "torch": "2.11"}"#;
        let env: Environment = serde_json::from_str(both).unwrap();
        assert_eq!(env.libraries["torch"], "2.12");
    }

    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = now_utc();
        let parsed: jiff::Timestamp = t.parse().expect("RFC 3339");
        let age = jiff::Timestamp::now().duration_since(parsed);
        assert!(age.as_secs() >= 0 && age.as_secs() < 5, "{t}");
        assert!(t.ends_with('Z'), "{t}");
    }

    #[test]
    fn a_schema_2_file_reads_its_results_as_attention_with_the_mask_in_the_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let old = r#"{"schema": "stallscope/runs/2", "environments": [], "runs": [
            {"version": "v1", "shape": {"b": 1, "h": 16, "s": 8192, "d": 128},
             "causal": true, "status": "ok", "median_us": 5.0,
             "checks": [{"case": "c", "shape": {"b": 4, "h": 32, "s": 777, "d": 128},
                         "causal": false, "status": "ok"}]}]}"#;
        std::fs::write(&path, old).unwrap();
        let store = super::super::Store::disk(crate::files::limits::SizeLimits::DEFAULT);
        let file = RunFile::read(&store, &path).unwrap();
        assert_eq!(file.schema, SCHEMA);
        let r = &file.runs[0];
        assert_eq!(r.shape.kind().name(), "attention");
        assert_eq!(r.shape.to_string(), "1,16,8192,128:causal");
        assert_eq!(r.checks[0].shape.to_string(), "4,32,777,128");
        // Written back as schema 3: the kind and the flag inside the shape.
        let text = serde_json::to_string(&file).unwrap();
        assert!(text.contains(
            r#""shape":{"kind":"attention","b":1,"h":16,"s":8192,"d":128,"causal":true}"#
        ));
        assert!(!text.contains(r#""causal":true,"status""#), "{text}");
        let again: RunFile = serde_json::from_str(&text).unwrap();
        assert_eq!(again.runs[0].shape, r.shape);
    }

    #[test]
    fn a_schema_3_file_keeps_a_gemm_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let text = r#"{"schema": "stallscope/runs/3", "runs": [
            {"version": "v1", "shape": {"kind": "gemm", "m": 4000, "n": 4000, "k": 4000},
             "status": "ok"}]}"#;
        std::fs::write(&path, text).unwrap();
        let store = super::super::Store::disk(crate::files::limits::SizeLimits::DEFAULT);
        let file = RunFile::read(&store, &path).unwrap();
        assert_eq!(file.runs[0].shape.kind().name(), "gemm");
        assert_eq!(file.runs[0].shape.flops(), 2.0 * 4000f64.powi(3));
    }
}
