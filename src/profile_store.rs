//! Where the GPU side's profiles meet the store: `gpu/` produces a recipe version's
//! exports, and the model's import stores them with the recipe's entry of the version.
//! Used alike by `stallscope profile` and the explorer's profile job.

use crate::gpu::recipe::{KernelRecipe, KernelVersion};
use crate::model::import;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Imports a recipe version's exported profile into `profiles` (replacing the last
/// one), with the recipe's entry of it: the explorer's profile job and `stallscope
/// profile` store alike.
pub fn store_recipe_profile(
    profiles: &Path,
    recipe: &KernelRecipe,
    v: &KernelVersion,
    files: &[PathBuf],
) -> Result<String> {
    let req = import::Request {
        title: Some(&v.title),
        kernel: Some(&v.entry),
        ..import::Request::profiled(profiles, Some(&recipe.ladder), &v.id, files, true)
    };
    let entries = |dir: &Path| recipe.manifest_entries(&[v.id.as_str()], dir);
    let done = import::import_recipe_profile(
        &req,
        &recipe.manifest_defaults(),
        entries,
        &recipe.manifest_order(),
    )?;
    Ok(done.to_string())
}
