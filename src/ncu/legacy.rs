//! The issue-stall reasons of GPUs before Volta, as the Visual Profiler (nvvp) and nvprof
//! name them, written once for every importer of those tools, and how each maps onto
//! the reasons stallscope knows.
//!
//! Only a reason whose meaning is the same maps onto a Hopper reason (`Not Selected` is
//! `not_selected`); the others (execution dependency, data request, synchronization …)
//! cut the stalls another way and stay under their own `legacy_…` names.

use super::StallReason;

/// One legacy reason: its Visual Profiler label, its nvprof metric, and the reason it is
/// shown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyStall {
    /// In the Visual Profiler's column `Issue Stall Reasons (<label>)(%)`.
    pub nvvp_label: &'static str,
    /// nvprof's `--metrics` name.
    pub nvprof_metric: &'static str,
    pub reason: StallReason,
}

/// Every legacy reason, in the Visual Profiler's order.
pub const LEGACY_STALLS: &[LegacyStall] = &[
    legacy(
        "Execution Dependency",
        "stall_exec_dependency",
        StallReason::LegacyExecDependency,
    ),
    legacy(
        "Data Request",
        "stall_memory_dependency",
        StallReason::LegacyDataRequest,
    ),
    legacy(
        "Synchronization",
        "stall_sync",
        StallReason::LegacySynchronization,
    ),
    legacy(
        "Memory Throttle",
        "stall_memory_throttle",
        StallReason::LegacyMemoryThrottle,
    ),
    legacy(
        "Not Selected",
        "stall_not_selected",
        StallReason::NotSelected,
    ),
    legacy("Pipe Busy", "stall_pipe_busy", StallReason::LegacyPipeBusy),
    legacy("Texture", "stall_texture", StallReason::LegacyTexture),
    legacy(
        "Instructions Fetch",
        "stall_inst_fetch",
        StallReason::LegacyInstFetch,
    ),
    legacy(
        "Immediate constant",
        "stall_constant_memory_dependency",
        StallReason::LegacyConstant,
    ),
    legacy("Other", "stall_other", StallReason::LegacyOther),
];

const fn legacy(
    nvvp_label: &'static str,
    nvprof_metric: &'static str,
    reason: StallReason,
) -> LegacyStall {
    LegacyStall {
        nvvp_label,
        nvprof_metric,
        reason,
    }
}

/// The legacy reason of a Visual Profiler label (`Data Request`) or an nvprof metric
/// (`stall_memory_dependency`); case and surrounding blanks ignored.
pub fn find(name: &str) -> Option<&'static LegacyStall> {
    let name = name.trim();
    LEGACY_STALLS.iter().find(|l| {
        l.nvvp_label.eq_ignore_ascii_case(name) || l.nvprof_metric.eq_ignore_ascii_case(name)
    })
}

/// The label inside a Visual Profiler column name `Issue Stall Reasons (<label>)(%)`.
pub fn nvvp_label_of(column: &str) -> Option<&str> {
    column
        .strip_prefix("Issue Stall Reasons (")?
        .strip_suffix(")(%)")
        .or_else(|| {
            column
                .strip_prefix("Issue Stall Reasons (")?
                .strip_suffix(')')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tools_names_find_the_same_reason() {
        for l in LEGACY_STALLS {
            assert_eq!(find(l.nvvp_label), Some(l));
            assert_eq!(find(l.nvprof_metric), Some(l));
        }
        assert_eq!(
            find("Data Request").unwrap().reason,
            StallReason::LegacyDataRequest
        );
        assert_eq!(
            find("stall_sync").unwrap().reason,
            StallReason::LegacySynchronization
        );
    }

    #[test]
    fn only_the_same_meaning_maps_onto_a_hopper_reason() {
        let mapped: Vec<_> = LEGACY_STALLS
            .iter()
            .filter(|l| !l.reason.is_legacy())
            .collect();
        assert_eq!(mapped.len(), 1);
        assert_eq!(mapped[0].reason, StallReason::NotSelected);
    }

    #[test]
    fn column_labels() {
        assert_eq!(
            nvvp_label_of("Issue Stall Reasons (Execution Dependency)(%)"),
            Some("Execution Dependency")
        );
        assert_eq!(nvvp_label_of("Issue Slot Utilization(%)"), None);
    }
}
