//! `stallscope build`: versions compiled with NVRTC, their registers and spills.

use crate::cli::{BuildArgs, Common};
use anyhow::Result;

pub(super) fn build_command(common: &Common, a: &BuildArgs) -> Result<bool> {
    let limits = common.size_limits();
    let recipe = crate::recipe::folders::load_recipe(
        &crate::recipe::folders::find_recipe(
            &super::options::kernels(common),
            a.ladder.as_deref(),
            limits,
        )?,
        limits,
    )?;
    let mut ok = true;
    let shape = recipe.shape(a.shape.as_ref(), &[])?;
    let extra: Vec<String> = if a.trace {
        vec![crate::gpu::worker::trace::DEFINE.to_string()]
    } else {
        Vec::new()
    };
    for b in crate::gpu::build(&recipe, &a.versions, &a.arch, &shape, &extra)? {
        match b.outcome {
            Ok(c) => {
                use crate::gpu::nvrtc::{resource_summary, resource_summary_of};
                let cached = || "(cached)".to_string();
                // Each kernel's own lines of the module's log: a version with paths
                // has several, each path said with its title and condition; the
                // reference and helpers have no version entry.
                let of = |e: &str| match resource_summary_of(&c.log, e) {
                    Some(s) => s,
                    None if c.log.is_empty() => cached(),
                    None => "not in the module's ptxas log".to_string(),
                };
                let summary = match recipe.version(&b.id) {
                    None => resource_summary(&c.log).unwrap_or_else(cached),
                    Some(v) if v.paths.is_empty() => of(&v.entry),
                    Some(v) => std::iter::once(format!("{}: {}", v.entry, of(&v.entry)))
                        .chain(v.paths.iter().map(|p| {
                            format!(
                                "{} ({}, where {}): {}",
                                p.entry,
                                p.title,
                                p.when,
                                of(&p.entry)
                            )
                        }))
                        .collect::<Vec<_>>()
                        .join("; "),
                };
                outln!("{:<16} ok   {summary}", b.id)
            }
            Err(e) => {
                ok = false;
                outln!("{:<16} FAILED\n{e:#}", b.id);
            }
        }
    }
    Ok(ok)
}
