//! The baselines a run can time beside a ladder's versions, by the ids the profiles
//! ladder names them: the built-in unfused cuBLAS baseline, and PyTorch SDPA's backends,
//! which the recipe's script (`baselines/sdpa.py`, its `BACKENDS` keyed by these ids)
//! runs.

/// Id of the built-in unfused cuBLAS baseline.
pub const UNFUSED: &str = "unfused";
/// Its title in a profiles manifest.
pub const UNFUSED_TITLE: &str = "unfused: cuBLAS Q·Kᵀ, softmax kernel, cuBLAS P·V";

/// The ids the PyTorch SDPA backends get, as the profiles ladder names them, with their
/// titles.
pub const SDPA_BACKENDS: &[(&str, &str)] = &[
    ("cudnn", "cuDNN (PyTorch SDPA cuDNN backend)"),
    ("fa2", "FlashAttention-2 (PyTorch SDPA flash backend)"),
    ("mem-efficient", "memory-efficient attention (PyTorch SDPA)"),
];

/// The title of a baseline, where `id` names one.
pub fn title(id: &str) -> Option<&'static str> {
    SDPA_BACKENDS
        .iter()
        .find(|(b, _)| *b == id)
        .map(|(_, t)| *t)
        .or((id == UNFUSED).then_some(UNFUSED_TITLE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdpa_script_runs_the_backends_named_here() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("kernels/flash-attention/baselines/sdpa.py");
        let script = std::fs::read_to_string(path).unwrap();
        let table = script
            .split("BACKENDS = {")
            .nth(1)
            .and_then(|t| t.split('}').next())
            .expect("sdpa.py has a BACKENDS table");
        let keys: Vec<&str> = table
            .lines()
            .filter_map(|l| l.trim().strip_prefix('"')?.split('"').next())
            .collect();
        let ids: Vec<&str> = SDPA_BACKENDS.iter().map(|(id, _)| *id).collect();
        assert_eq!(keys, ids);
    }

    #[test]
    fn baselines_have_titles_and_versions_do_not() {
        assert_eq!(title(UNFUSED), Some(UNFUSED_TITLE));
        assert_eq!(title("fa2"), Some(SDPA_BACKENDS[1].1));
        assert_eq!(title("v07"), None);
    }
}
