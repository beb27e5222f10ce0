//! The GPU side: compile every version of a kernel ladder with NVRTC, launch it on
//! fresh inputs, check it against a reference, time it, and profile it with ncu. It
//! only produces run results and profiles; browsing never touches it, and nothing here
//! loads CUDA until a run asks for it.
//!
//! Each candidate runs in a worker process (`stallscope __worker …`, or the PyTorch
//! script), so a kernel that faults or hangs fails alone; [`crate::process`] starts and
//! stops every child. What a recipe says (versions, launches, tolerances, the
//! baselines' names) is [`crate::recipe`]'s, which names no GPU. Two rooms, the arrows
//! pointing one way:
//! - [`host`]: the parent: [`host::runner`] orchestrates a run and [`host::profile`] a
//!   profile, [`host::protocol`] times every candidate the same way.
//! - [`worker`]: the child: the device, its graphs, the problem it runs and checks.
//!
//! Both sides speak through [`wire`] (the worker's command line and messages) and share
//! [`driver`] (what the CUDA driver says) and [`nvrtc`] (the compiler). Nothing here
//! writes the report or the TUI.

pub mod driver;
pub mod host;
pub mod nvrtc;
pub mod wire;
pub mod worker;

use anyhow::Result;

use crate::recipe;

/// One kernel compiled without a GPU (NVRTC only): for `stallscope build` and tests.
pub struct Built {
    pub id: String,
    pub outcome: Result<nvrtc::Compiled>,
}

/// Compiles the selected versions, the reference and the helper kernels for `arch`,
/// with the kind's definitions at `shape`.
pub fn build(
    ladder: &recipe::KernelRecipe,
    ids: &[String],
    arch: &str,
    shape: &crate::kinds::Shape,
    extra: &[String],
) -> Result<Vec<Built>> {
    let compiler = nvrtc::Compiler::new(arch)?;
    let defines = ladder.kind.defines(shape);
    let mut jobs: Vec<(String, String, Vec<String>)> = ladder
        .select(ids)?
        .into_iter()
        .map(|v| {
            let mut opts = defines.clone();
            opts.extend(v.options.iter().cloned());
            opts.extend(extra.iter().cloned());
            (v.id.clone(), v.source.clone(), opts)
        })
        .collect();
    jobs.push((
        "reference".into(),
        ladder.reference.source.clone(),
        defines.clone(),
    ));
    for (name, h) in &ladder.helpers {
        jobs.push((format!("helper {name}"), h.source.clone(), Vec::new()));
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
