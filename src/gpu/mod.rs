//! The GPU side: compile every version of a kernel ladder with NVRTC, launch it on
//! fresh inputs, check it against a reference, time it, and profile it with ncu. It
//! only produces run results and profiles; browsing never touches it, and nothing here
//! loads CUDA until a run asks for it.
//!
//! Each version runs in a child process (`stallscope __child …`), so a kernel that
//! faults or hangs fails alone.

pub mod attention;
pub mod check;
pub mod child;
pub mod device;
pub mod launch_expr;
pub mod nvrtc;
pub mod profile;
pub mod recipe;
pub mod runner;
pub mod sdpa;
pub mod unfused;

use crate::model::Store;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const DEFAULT_KERNELS: &str = "kernels/flash-attention";

/// Where a kernel ladder's sources are read from: the folder on disk when it exists,
/// else the copy built into the binary.
pub fn kernel_store(dir: &Path) -> Store {
    if dir.join(recipe::FILE_NAME).is_file() {
        Store::Disk
    } else {
        Store::Embedded
    }
}

pub fn load_kernels(dir: &Path) -> Result<recipe::KernelLadder> {
    recipe::KernelLadder::load(&kernel_store(dir), dir)
}

/// `target` as seen from `base` (both relative to the working directory, or both
/// absolute): `kernels/fa/v01.cu` from `profiles/fa` is `../../kernels/fa/v01.cu`.
pub fn relative_path(target: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        crate::model::store::normalize(&p)
    };
    let (t, b) = (abs(target), abs(base));
    let common = t
        .components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = PathBuf::new();
    for _ in b.components().skip(common) {
        out.push("..");
    }
    for c in t.components().skip(common) {
        out.push(c);
    }
    out
}

/// One kernel compiled without a GPU (NVRTC only): for `stallscope build` and tests.
pub struct Built {
    pub id: String,
    pub outcome: Result<nvrtc::Compiled>,
}

/// Compiles the selected versions, the reference and the unfused softmax for `arch`.
pub fn build(
    ladder: &recipe::KernelLadder,
    ids: &[String],
    arch: &str,
    head_dim: u32,
) -> Result<Vec<Built>> {
    let compiler = nvrtc::Compiler::new(arch)?;
    let define = format!("-DHEAD_DIM={head_dim}");
    let mut jobs: Vec<(String, String, Vec<String>)> = ladder
        .select(ids)?
        .into_iter()
        .map(|v| {
            let mut opts = vec![define.clone()];
            opts.extend(v.options.iter().cloned());
            (v.id.clone(), v.source.clone(), opts)
        })
        .collect();
    jobs.push((
        "reference".into(),
        ladder.reference.source.clone(),
        vec![define.clone()],
    ));
    if let Some(sm) = &ladder.unfused_softmax {
        jobs.push(("unfused softmax".into(), sm.source.clone(), Vec::new()));
    }
    Ok(jobs
        .into_iter()
        .map(|(id, source, opts)| Built {
            outcome: ladder
                .read(&source)
                .and_then(|text| compiler.compile(&source, &text, &opts)),
            id,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::relative_path;
    use std::path::Path;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(Path::new("kernels/fa/v01.cu"), Path::new("profiles/fa")),
            Path::new("../../kernels/fa/v01.cu")
        );
        assert_eq!(
            relative_path(Path::new("/a/b/c.cu"), Path::new("/a/p/q")),
            Path::new("../../b/c.cu")
        );
    }
}
