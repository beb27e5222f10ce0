//! PyTorch SDPA's cuDNN, flash and memory-efficient backends
//! ([`crate::gpu::recipe::baselines::SDPA_BACKENDS`]) as baselines in the same run: each
//! runs as a worker of its own through the script shipped beside the kernels
//! (`baselines/sdpa.py`), which speaks the runner's timing protocol. Where python3,
//! PyTorch or a backend is missing, that baseline is skipped with the reason.

use crate::gpu::recipe::KernelRecipe;
use crate::model::Shape;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The recipe's SDPA script written to `dir` (it may come from the built-in copy).
pub fn write_script(recipe: &KernelRecipe, dir: &Path) -> Result<PathBuf> {
    let script = recipe.read(&recipe.sdpa_script)?;
    let path = dir.join("sdpa.py");
    std::fs::write(&path, script).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The command that starts one backend's worker.
pub fn worker(script: &Path, backend: &str, shape: Shape, causal: bool, seed: u64) -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(script)
        .args(["--backend", backend, "--shape", &shape.to_string()])
        .args(["--seed", &seed.to_string()]);
    if causal {
        cmd.arg("--causal");
    }
    cmd
}

/// `$STALLSCOPE_PYTHON`, else `python3`.
pub fn python() -> std::ffi::OsString {
    std::env::var_os("STALLSCOPE_PYTHON").unwrap_or_else(|| "python3".into())
}
