//! Any text given as a kernel recipe (kernels/LADDER/recipe.toml) parses and validates
//! or fails cleanly; a valid one launches every version at its reference shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stallscope::gpu::recipe::KernelLadder;

fuzz_target!(|text: &str| {
    if let Ok(l) = KernelLadder::parse(text, "fuzz.toml") {
        let shape = l.reference_shape();
        for v in &l.versions {
            let _ = v.launch(&shape);
        }
    }
});
