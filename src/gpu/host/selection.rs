//! What a GPU job runs, the same for a run, a profile and a trace: which recipe, read
//! within which size limits, which of its versions, at which shape with which flags.

use crate::files::limits::SizeLimits;
use crate::kinds::ShapeText;
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub struct Selection {
    /// The recipe folder.
    pub kernels: PathBuf,
    /// How much of the recipe's files is read.
    pub limits: SizeLimits,
    /// Version ids, or none (or `all`) for every version the job takes.
    pub versions: Vec<String>,
    /// The shape as the user wrote it, read in the recipe's kind [default: the
    /// recipe's reference shape].
    pub shape: Option<ShapeText>,
    /// Flags of the kind set on the shape besides its own (`--flag`).
    pub flags: Vec<String>,
}

impl Selection {
    /// Every version of the recipe in `kernels`, at its reference shape.
    pub fn new(kernels: PathBuf, limits: SizeLimits) -> Selection {
        Selection {
            kernels,
            limits,
            versions: Vec::new(),
            shape: None,
            flags: Vec::new(),
        }
    }

    /// The recipe, loaded.
    pub fn recipe(&self) -> anyhow::Result<crate::recipe::KernelRecipe> {
        crate::recipe::folders::load_recipe(&self.kernels, self.limits)
    }
}
