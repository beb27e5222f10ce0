//! The warp stall reasons ncu samples on Hopper (and the legacy ones of older GPUs that
//! mean something else), and the several names each one has in
//! the exports (raw metric suffix, per-issue ratio suffix, source-page column).

use serde::Serialize;

macro_rules! stall_reasons {
    ($( $variant:ident = $metric:literal, $ratio:literal, $column:literal; )*) => {
        /// A reason a warp did not issue in a sampled cycle (`selected` means it did).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum StallReason { $( $variant, )* }

        impl StallReason {
            pub const ALL: &'static [StallReason] = &[ $( StallReason::$variant, )* ];
            pub const COUNT: usize = Self::ALL.len();

            /// The name ncu uses in `smsp__pcsamp_warps_issue_stalled_<name>`.
            pub fn metric_name(self) -> &'static str {
                match self { $( StallReason::$variant => $metric, )* }
            }

            /// The name in `smsp__average_warps_issue_stalled_<name>_per_issue_active.ratio`
            /// (empty where ncu has no such ratio).
            pub fn ratio_name(self) -> &'static str {
                match self { $( StallReason::$variant => $ratio, )* }
            }

            /// The short column name of the source page (empty where there is none).
            pub fn column_name(self) -> &'static str {
                match self { $( StallReason::$variant => $column, )* }
            }
        }
    };
}

stall_reasons! {
    Barrier = "barrier", "barrier", "stall_barrier";
    BranchResolving = "branch_resolving", "branch_resolving", "stall_branch_resolving";
    DispatchStall = "dispatch_stall", "dispatch_stall", "stall_dispatch";
    Drain = "drain", "drain", "stall_drain";
    ImcMiss = "imc_miss", "imc_miss", "stall_imc";
    LgThrottle = "lg_throttle", "lg_throttle", "stall_lg";
    LongScoreboard = "long_scoreboard", "long_scoreboard", "stall_long_sb";
    MathPipeThrottle = "math_pipe_throttle", "math_pipe_throttle", "stall_math";
    Membar = "membar", "membar", "stall_membar";
    MioThrottle = "mio_throttle", "mio_throttle", "stall_mio";
    Misc = "misc", "misc", "stall_misc";
    NoInstructions = "no_instructions", "no_instruction", "stall_no_inst";
    NotSelected = "not_selected", "not_selected", "stall_not_selected";
    Selected = "selected", "selected", "stall_selected";
    ShortScoreboard = "short_scoreboard", "short_scoreboard", "stall_short_sb";
    Sleeping = "sleeping", "sleeping", "stall_sleep";
    TexThrottle = "tex_throttle", "tex_throttle", "stall_tex";
    Wait = "wait", "wait", "stall_wait";
    WarpgroupArrive = "warpgroup_arrive", "", "stall_warpgroup_arrive";
    Gmma = "gmma", "gmma", "stall_gmma";
    // The reasons of GPUs before Volta/Ampere (Visual Profiler, nvprof) whose meaning no
    // Hopper reason shares: kept under their own names (see `legacy`).
    LegacyExecDependency = "legacy_exec_dependency", "", "";
    LegacyDataRequest = "legacy_data_request", "", "";
    LegacySynchronization = "legacy_synchronization", "", "";
    LegacyMemoryThrottle = "legacy_memory_throttle", "", "";
    LegacyPipeBusy = "legacy_pipe_busy", "", "";
    LegacyTexture = "legacy_texture", "", "";
    LegacyInstFetch = "legacy_inst_fetch", "", "";
    LegacyConstant = "legacy_constant_memory", "", "";
    LegacyOther = "legacy_other", "", "";
}

impl StallReason {
    pub fn index(self) -> usize {
        self as usize
    }

    /// Finds a reason by its metric name, ratio name or source column name.
    pub fn from_name(name: &str) -> Option<StallReason> {
        let name = name.trim();
        Self::ALL.iter().copied().find(|r| {
            r.metric_name() == name
                || (!r.ratio_name().is_empty() && r.ratio_name() == name)
                || (!r.column_name().is_empty() && r.column_name() == name)
                || (*r == StallReason::Sleeping && name == "stall_sleeping")
        })
    }

    /// A reason of the GPUs before Volta (Visual Profiler, nvprof), kept under its own
    /// name because no Hopper reason means the same.
    pub fn is_legacy(self) -> bool {
        self.metric_name().starts_with("legacy_")
    }

    /// Whether this "reason" is a stall at all: `selected` is the sampled warp issuing.
    pub fn is_stall(self) -> bool {
        self != StallReason::Selected
    }
}

impl std::fmt::Display for StallReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.metric_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_maps_back() {
        for &r in StallReason::ALL {
            assert_eq!(StallReason::from_name(r.metric_name()), Some(r));
            if !r.column_name().is_empty() {
                assert_eq!(StallReason::from_name(r.column_name()), Some(r));
            }
            assert_eq!(StallReason::ALL[r.index()], r);
        }
        assert_eq!(
            StallReason::from_name("stall_sleeping"),
            Some(StallReason::Sleeping)
        );
        assert_eq!(
            StallReason::from_name("no_instruction"),
            Some(StallReason::NoInstructions)
        );
    }
}
