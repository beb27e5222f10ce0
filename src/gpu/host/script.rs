//! Baselines that a recipe's script runs (`baseline_script`, such as PyTorch SDPA's
//! backends for attention or `torch.matmul` for GEMM: the kind's
//! [`crate::kinds::BaselineRun::Script`] baselines) in the same run: each runs as a
//! worker of its own, `python3 SCRIPT --backend ID --shape DIMS [--FLAG…] --seed N`,
//! which speaks the runner's timing protocol. Where python3, PyTorch or a backend is
//! missing, that baseline is skipped with the reason.

use crate::kinds::Shape;
use crate::recipe::KernelRecipe;
use anyhow::{Context, Result, anyhow};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The recipe's baseline script written to `dir` (it may come from the built-in copy).
pub fn write_script(recipe: &KernelRecipe, dir: &Path) -> Result<PathBuf> {
    let rel = recipe
        .baseline_script
        .as_deref()
        .ok_or_else(|| anyhow!("the recipe names no baseline_script"))?;
    let script = recipe.read(rel)?;
    let name = Path::new(rel)
        .file_name()
        .map_or("baseline.py".into(), |n| n.to_string_lossy().into_owned());
    let path = dir.join(name);
    std::fs::write(&path, script).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// The command that starts one backend's worker: the shape's dimensions, then each flag
/// set as an option of its own.
pub fn worker(script: &Path, backend: &str, shape: Shape, seed: u64) -> Command {
    let mut cmd = Command::new(python());
    cmd.arg(script)
        .args(["--backend", backend, "--shape", &shape.dims_text()])
        .args(["--seed", &seed.to_string()]);
    for f in shape.flags_set() {
        cmd.arg(format!("--{f}"));
    }
    cmd
}

/// `$STALLSCOPE_PYTHON`, else `python3`.
pub fn python() -> std::ffi::OsString {
    std::env::var_os("STALLSCOPE_PYTHON").unwrap_or_else(|| "python3".into())
}
