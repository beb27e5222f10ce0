//! Any text given as a kernel recipe (kernels/LADDER/recipe.toml) parses and validates
//! or fails cleanly; a valid one launches every version at its reference shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stallscope::recipe::KernelRecipe;

fuzz_target!(|text: &str| {
    if let Ok(r) = KernelRecipe::parse(text, "fuzz.toml") {
        let shape = r.reference_shape();
        for v in &r.versions {
            let _ = v.launch(&shape);
        }
    }
});
