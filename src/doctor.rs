//! `stallscope doctor`: what this machine can do and what to fix, one line a check —
//! the GPU and its driver, CUDA's driver API and NVRTC, Nsight Compute and whether it
//! may read the performance counters, NVML, Python with PyTorch and cuDNN. Browsing
//! needs none of them; `run` needs the GPU, the driver and NVRTC; `profile` needs ncu.

use crate::process::{self, Limits};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Ok,
    /// Works, with a caveat.
    Warn,
    Missing,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    pub what: &'static str,
    pub state: State,
    pub detail: String,
    pub fix: Option<String>,
    /// Commands that cannot work while this is missing.
    pub blocks: &'static [&'static str],
}

impl Check {
    fn ok(what: &'static str, detail: String) -> Check {
        Check {
            what,
            state: State::Ok,
            detail,
            fix: None,
            blocks: &[],
        }
    }

    fn missing(
        what: &'static str,
        detail: String,
        fix: &str,
        blocks: &'static [&'static str],
    ) -> Check {
        Check {
            what,
            state: State::Missing,
            detail,
            fix: Some(fix.to_string()),
            blocks,
        }
    }
}

/// The shared libraries of a name this process has loaded, by path.
fn loaded(name: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            Path::new(p)
                .file_name()
                .is_some_and(|f| f.to_string_lossy().starts_with(name))
        })
        .map(str::to_string)
}

fn gpu() -> Vec<Check> {
    use crate::gpu::driver;
    let mut out = Vec::new();
    match driver::unavailable() {
        Some(why) => out.push(Check::missing(
            "GPU and driver",
            why,
            "install the NVIDIA driver on a machine with an NVIDIA GPU (browsing works without)",
            &["run", "profile"],
        )),
        None => {
            let names = driver::device_names().unwrap_or_default();
            let cuda = driver::driver_cuda_version().unwrap_or_else(|| "?".into());
            let lib = loaded("libcuda").unwrap_or_else(|| "libcuda.so.1".into());
            out.push(Check::ok(
                "GPU and driver",
                format!("{} · CUDA {cuda} driver API ({lib})", names.join(", ")),
            ));
        }
    }
    if crate::gpu::nvrtc::nvrtc_present() {
        let (maj, min) = crate::gpu::nvrtc::version().unwrap_or((0, 0));
        let lib = loaded("libnvrtc").unwrap_or_else(|| "libnvrtc.so".into());
        let headers = crate::gpu::nvrtc::cuda_include_dir();
        match headers {
            Some(h) => out.push(Check::ok(
                "NVRTC",
                format!("{maj}.{min} ({lib}); CUDA headers in {}", h.display()),
            )),
            None => out.push(Check::missing(
                "NVRTC",
                format!("{maj}.{min} ({lib}), but no CUDA headers (cuda_fp16.h) were found"),
                "set CUDA_PATH or CUDA_HOME to the CUDA toolkit (its include/ folder)",
                &["run", "build"],
            )),
        }
    } else {
        out.push(Check::missing(
            "NVRTC",
            "libnvrtc.so was not found".into(),
            "install the CUDA toolkit, or put its lib64 folder on LD_LIBRARY_PATH",
            &["run", "build"],
        ));
    }
    out
}

fn nvml() -> Check {
    match nvml_wrapper::Nvml::init() {
        Ok(n) => Check::ok(
            "NVML",
            format!(
                "driver {} ({})",
                n.sys_driver_version().unwrap_or_else(|_| "?".into()),
                loaded("libnvidia-ml").unwrap_or_else(|| "libnvidia-ml.so.1".into())
            ),
        ),
        Err(e) => Check {
            what: "NVML",
            state: State::Warn,
            detail: format!("not usable ({e}): runs go on without clocks, power and energy"),
            fix: Some("NVML comes with the NVIDIA driver (libnvidia-ml.so.1)".into()),
            blocks: &[],
        },
    }
}

fn ncu(cancel: &AtomicBool) -> Vec<Check> {
    let path = match crate::nsight::find_ncu() {
        Ok(p) => p,
        Err(e) => {
            return vec![Check::missing(
                "Nsight Compute",
                format!("{e:#}"),
                "install Nsight Compute (it comes with the CUDA toolkit) and put ncu on the PATH, or set NCU",
                &["profile"],
            )];
        }
    };
    let mut cmd = Command::new(&path);
    cmd.arg("--version");
    let version = match process::run(
        cmd,
        &Limits::new(Duration::from_secs(30), cancel),
        &mut |_| {},
    ) {
        Ok(Ok(f)) if f.status.success() => f
            .stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string(),
        Ok(Ok(f)) => {
            return vec![Check::missing(
                "Nsight Compute",
                format!("{} --version failed: {}", path.display(), f.last_words()),
                "reinstall Nsight Compute",
                &["profile"],
            )];
        }
        Ok(Err(stop)) => format!("? (--version {stop})"),
        Err(e) => {
            return vec![Check::missing(
                "Nsight Compute",
                format!("{e:#}"),
                "check that ncu can be executed",
                &["profile"],
            )];
        }
    };
    let mut out = vec![Check::ok(
        "Nsight Compute",
        format!("{} ({})", version, path.display()),
    )];
    out.push(counters());
    out
}

/// Whether ncu may read the performance counters: the driver restricts them to
/// administrators unless told otherwise (`ERR_NVGPUCTRPERM`).
fn counters() -> Check {
    let root = unsafe { libc::geteuid() } == 0;
    let params = std::fs::read_to_string("/proc/driver/nvidia/params").unwrap_or_default();
    let admin_only = params
        .lines()
        .find_map(|l| l.strip_prefix("RmProfilingAdminOnly:"))
        .map(|v| v.trim() == "1");
    match (admin_only, root) {
        (Some(true), false) => Check::missing(
            "performance counters",
            "the driver lets only administrators read them: ncu will stop with ERR_NVGPUCTRPERM".into(),
            "run stallscope profile as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0 (e.g. in /etc/modprobe.d)",
            &["profile"],
        ),
        (Some(true), true) => Check::ok(
            "performance counters",
            "readable (running as root; the driver restricts them to administrators)".into(),
        ),
        (Some(false), _) => Check::ok("performance counters", "readable by every user".into()),
        (None, _) => Check {
            what: "performance counters",
            state: State::Warn,
            detail: "unknown (no /proc/driver/nvidia/params): ncu says ERR_NVGPUCTRPERM if it may not read them".into(),
            fix: None,
            blocks: &[],
        },
    }
}

fn python(cancel: &AtomicBool) -> Check {
    let script = "import json\ntry:\n import torch\nexcept Exception as e:\n print(json.dumps({'error': str(e)})); raise SystemExit\nprint(json.dumps({'torch': torch.__version__, 'cuda': torch.cuda.is_available(), 'cudnn': torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None}))";
    let py = crate::gpu::host::script::python();
    let mut cmd = Command::new(&py);
    cmd.args(["-c", script]);
    let fix = "install python3 with PyTorch (CUDA build) for the recipes' PyTorch baselines; set STALLSCOPE_PYTHON to use another Python";
    let name = py.to_string_lossy().into_owned();
    match process::run(
        cmd,
        &Limits::new(Duration::from_secs(120), cancel),
        &mut |_| {},
    ) {
        Err(e) => Check::missing("PyTorch baselines", format!("{name}: {e:#}"), fix, &[]),
        Ok(Err(stop)) => Check::missing("PyTorch baselines", format!("{name}: {stop}"), fix, &[]),
        Ok(Ok(f)) => {
            let v: serde_json::Value = f
                .stdout
                .lines()
                .rev()
                .find_map(|l| serde_json::from_str(l).ok())
                .unwrap_or_default();
            if let Some(e) = v["error"].as_str() {
                return Check::missing(
                    "PyTorch baselines",
                    format!("{name}: no torch ({e})"),
                    fix,
                    &[],
                );
            }
            let Some(torch) = v["torch"].as_str() else {
                return Check::missing(
                    "PyTorch baselines",
                    format!("{name}: {}", f.last_words()),
                    fix,
                    &[],
                );
            };
            let cudnn = v["cudnn"]
                .as_i64()
                .map(|c| format!(", cuDNN {c}"))
                .unwrap_or_default();
            if v["cuda"] == true {
                Check::ok(
                    "PyTorch baselines",
                    format!("{name}: torch {torch}{cudnn}, sees the GPU"),
                )
            } else {
                Check {
                    what: "PyTorch baselines",
                    state: State::Warn,
                    detail: format!("{name}: torch {torch}{cudnn}, but it sees no CUDA device"),
                    fix: Some("install a CUDA build of PyTorch".into()),
                    blocks: &[],
                }
            }
        }
    }
}

/// Every check, in order.
pub fn checks() -> Vec<Check> {
    let cancel = AtomicBool::new(false);
    let mut out = gpu();
    out.push(nvml());
    out.extend(ncu(&cancel));
    out.push(python(&cancel));
    out
}

/// The report as text, and whether `run` and `profile` can work.
pub fn report(checks: &[Check]) -> (String, bool) {
    let mut s = String::new();
    for c in checks {
        let tag = match c.state {
            State::Ok => "ok",
            State::Warn => "warn",
            State::Missing => "missing",
        };
        s.push_str(&format!("{tag:<8} {:<22} {}\n", c.what, c.detail));
        if let Some(f) = &c.fix
            && c.state != State::Ok
        {
            s.push_str(&format!("{:<31} fix: {f}\n", ""));
        }
    }
    let blocked: Vec<&str> = {
        let mut b: Vec<&str> = checks
            .iter()
            .filter(|c| c.state == State::Missing)
            .flat_map(|c| c.blocks.iter().copied())
            .collect();
        b.sort();
        b.dedup();
        b
    };
    let ok = !blocked.iter().any(|b| *b == "run" || *b == "profile");
    if blocked.is_empty() {
        s.push_str("\nrun and profile can work here; browsing always can.\n");
    } else {
        s.push_str(&format!(
            "\ncannot work here: {} (browsing ladders and exports still can)\n",
            blocked.join(", ")
        ));
    }
    (s, ok)
}
