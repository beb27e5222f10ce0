//! Where recipes are: the kernels folder (a recipe folder, or a folder of them, on disk
//! or in the built-in copy) and the recipe that feeds a ladder.

use super::{FILE_NAME, KernelRecipe};
use crate::files::limits::SizeLimits;
use crate::model::Store;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// Where recipes are looked for: a recipe folder, or a folder of recipe folders.
pub const DEFAULT_KERNELS: &str = "kernels";
/// The ladder `run`, `profile` and `build` pick when the kernels folder holds several
/// recipes and no `--ladder` is given: the one this project ships.
pub const DEFAULT_LADDER: &str = "flash-attention";

/// Where a kernel ladder's sources are read from (within `limits`): the folder on disk
/// when it exists, else the copy built into the binary.
pub fn kernel_store(dir: &Path, limits: SizeLimits) -> Store {
    if dir.join(FILE_NAME).is_file() {
        Store::disk(limits)
    } else {
        Store::embedded(limits)
    }
}

/// The recipe of folder `dir`, its files read within `limits`.
pub fn load_recipe(dir: &Path, limits: SizeLimits) -> Result<KernelRecipe> {
    KernelRecipe::load(&kernel_store(dir, limits), dir)
}

/// The recipe folders `kernels` stands for: itself when it holds a recipe, else its
/// sub-folders that do (on disk, or in the built-in copy), by name.
pub fn recipe_dirs(kernels: &Path, limits: SizeLimits) -> Result<Vec<PathBuf>> {
    if !kernels.exists() && !Store::embedded(limits).exists(kernels) {
        bail!(
            "{}: no such folder (--kernels names a recipe folder or a folder of them)",
            kernels.display()
        );
    }
    let store = kernel_store(kernels, limits);
    if store.exists(&kernels.join(FILE_NAME)) {
        return Ok(vec![kernels.to_path_buf()]);
    }
    let store = if kernels.is_dir() {
        Store::disk(limits)
    } else {
        Store::embedded(limits)
    };
    let dirs: Vec<PathBuf> = store
        .subdirs(kernels)
        .with_context(|| format!("{} holds no kernel recipes", kernels.display()))?
        .into_iter()
        .filter(|d| store.exists(&d.join(FILE_NAME)))
        .collect();
    if dirs.is_empty() {
        bail!(
            "{} holds no kernel recipe ({}), nor folders that do",
            kernels.display(),
            FILE_NAME
        );
    }
    Ok(dirs)
}

/// The recipe folder for a command: the one `kernels` names, or among several the one
/// feeding `ladder` (default [`DEFAULT_LADDER`]); where none does, the error says to pick
/// one with `--ladder`. The recipes are read within `limits`.
pub fn find_recipe(kernels: &Path, ladder: Option<&str>, limits: SizeLimits) -> Result<PathBuf> {
    find_recipe_advised(kernels, ladder, "pick one with --ladder", limits)
}

/// What the explorer advises where no recipe feeds the ladder shown: its keys, not the
/// command line's options.
pub const EXPLORER_RECIPE_ADVICE: &str =
    "r and p run a ladder that one of them feeds (L shows the next ladder)";

/// [`find_recipe`], the error ending with `advice` where no recipe feeds the ladder.
pub fn find_recipe_advised(
    kernels: &Path,
    ladder: Option<&str>,
    advice: &str,
    limits: SizeLimits,
) -> Result<PathBuf> {
    let dirs = recipe_dirs(kernels, limits)?;
    if dirs.len() == 1 && ladder.is_none() {
        return Ok(dirs[0].clone());
    }
    let wanted = ladder.unwrap_or(DEFAULT_LADDER);
    let mut names = Vec::new();
    for d in &dirs {
        let r = load_recipe(d, limits)?;
        if r.ladder == wanted {
            return Ok(d.clone());
        }
        names.push(r.ladder);
    }
    bail!(
        "no recipe under {} feeds the ladder {wanted:?} (they feed {}): {advice}",
        kernels.display(),
        names.join(", ")
    )
}
