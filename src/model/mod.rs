//! The model: a ladder of kernel versions, each with its profile (what ncu measured for
//! one launch) and its run results (what stallscope measured itself).

pub mod import;
mod ladder;
pub mod manifest;
mod merge;
pub mod runs;
pub mod store;

pub use ladder::{
    Ladder, LoadReport, Version, describe_launch, ladder_dirs, launch_key, load_files, load_ladder,
    load_ladders, pick_launch,
};
pub use merge::merge_exports;
pub use runs::{RunResult, RunStatus, Shape};
pub use store::Store;

use crate::ncu::{DetailMetric, LaunchInfo, PageKind, RawMetrics, RuleFinding, SourceListing};
use std::path::PathBuf;

/// Everything known about one kernel launch, merged from the pages exported from one
/// report (raw, details, source …).
#[derive(Debug, Clone, Default)]
pub struct Profile {
    pub kernel: String,
    pub launch_id: Option<u64>,
    pub process_id: Option<u64>,
    pub launch: LaunchInfo,
    pub raw: Option<RawMetrics>,
    /// Details, `--metrics` and summary rows.
    pub details: Vec<DetailMetric>,
    pub rules: Vec<RuleFinding>,
    pub source: Option<SourceListing>,
    /// The pages merged into this profile and the files they came from.
    pub pages: Vec<(PageKind, PathBuf)>,
}

impl Profile {
    pub fn has_page(&self, kind: PageKind) -> bool {
        self.pages.iter().any(|(k, _)| *k == kind)
    }

    /// A raw metric by name (collection prefix ignored): from the raw page, else from a
    /// `--metrics` page, which uses the same names.
    pub fn raw_value(&self, metric: &str) -> Option<f64> {
        if let Some(v) = self.raw.as_ref().and_then(|r| r.num(metric)) {
            return Some(v);
        }
        self.details
            .iter()
            .find(|m| &*m.name == metric)
            .and_then(|m| m.value.num())
    }

    /// A details-page metric by section and name.
    pub fn detail_value(&self, section: &str, name: &str) -> Option<f64> {
        self.details
            .iter()
            .find(|m| &*m.section == section && &*m.name == name)
            .and_then(|m| m.value.num())
    }

    pub fn short_name(&self) -> String {
        short_kernel_name(&self.kernel)
    }
}

/// A kernel's name without return type, template arguments, parameters and namespaces:
/// `void ns::flash_fwd<T, 128>(Params)` → `flash_fwd`.
pub fn short_kernel_name(full: &str) -> String {
    let s = full.trim();
    let s = s.strip_prefix("void ").unwrap_or(s);
    let mut out = String::with_capacity(s.len());
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let name = out
        .rsplit("::")
        .find(|p| !p.trim().is_empty())
        .unwrap_or("");
    let name = name.trim();
    if name.is_empty() {
        full.to_string()
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::short_kernel_name;

    #[test]
    fn short_names() {
        assert_eq!(
            short_kernel_name("mm_naive(const float *, const float *, float *, int)"),
            "mm_naive"
        );
        assert_eq!(
            short_kernel_name(
                "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<(int)128, (int)128>, (bool)0>(pytorch_flash::Flash_fwd_params)"
            ),
            "flash_fwd_kernel"
        );
        assert_eq!(
            short_kernel_name(
                "void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4>(int)"
            ),
            "distribution_elementwise_grid_stride_kernel"
        );
        assert_eq!(short_kernel_name("softmax_kernel"), "softmax_kernel");
    }
}
