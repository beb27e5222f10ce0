//! The baselines a run can time beside a recipe's versions: its problem kind's
//! ([`crate::kinds::ProblemKind::baselines`]). Built-in ones run in the worker
//! (`gpu::worker::baselines`); script ones are backends of the recipe's
//! `baseline_script`, whose `BACKENDS` table is keyed by their ids.

use super::KernelRecipe;
use crate::kinds::{Baseline, BaselineRun};

/// The kind's baselines that run in the worker.
pub fn builtin(recipe: &KernelRecipe) -> Vec<&'static Baseline> {
    of(recipe, BaselineRun::Builtin)
}

/// The kind's baselines that the recipe's baseline script runs (none without a script).
pub fn scripted(recipe: &KernelRecipe) -> Vec<&'static Baseline> {
    if recipe.baseline_script.is_none() {
        return Vec::new();
    }
    of(recipe, BaselineRun::Script)
}

fn of(recipe: &KernelRecipe, runs: BaselineRun) -> Vec<&'static Baseline> {
    recipe
        .kind
        .baselines()
        .iter()
        .filter(|b| b.runs == runs)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::store::Store;
    use std::path::Path;

    fn recipe(name: &str) -> KernelRecipe {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("kernels")
            .join(name);
        KernelRecipe::load(
            &Store::disk(crate::files::limits::SizeLimits::DEFAULT),
            &dir,
        )
        .expect("the bundled recipe loads")
    }

    /// The ids of a script's `BACKENDS = { "id": …, }` table, in order.
    fn backends(script: &str) -> Vec<String> {
        let table = script
            .split("BACKENDS = {")
            .nth(1)
            .and_then(|t| t.split('}').next())
            .expect("the script has a BACKENDS table");
        table
            .lines()
            .filter_map(|l| Some(l.trim().strip_prefix('"')?.split('"').next()?.to_string()))
            .collect()
    }

    #[test]
    fn every_bundled_script_runs_the_backends_its_kind_names() {
        for name in ["flash-attention", "gemm"] {
            let r = recipe(name);
            let script = r.baseline_script.as_deref().expect("a baseline script");
            let text = std::fs::read_to_string(r.path_of(script)).unwrap();
            let ids: Vec<&str> = scripted(&r).iter().map(|b| b.id).collect();
            assert!(!ids.is_empty(), "{name}");
            assert_eq!(backends(&text), ids, "{name}");
        }
    }

    #[test]
    fn baselines_are_split_by_how_they_run() {
        let r = recipe("flash-attention");
        let ids = |v: Vec<&Baseline>| v.iter().map(|b| b.id).collect::<Vec<_>>();
        assert_eq!(ids(builtin(&r)), ["unfused"]);
        assert_eq!(ids(scripted(&r)), ["cudnn", "fa2", "mem-efficient"]);
        let g = recipe("gemm");
        assert_eq!(ids(builtin(&g)), ["cublas"]);
        assert_eq!(ids(scripted(&g)), ["torch-matmul"]);
    }
}
