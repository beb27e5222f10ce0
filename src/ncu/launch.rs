//! A launch's configuration as the pages give it (block, grid, device …), where a page's
//! columns for it are, and what a row says of its launch besides the page's content.

use super::rows::non_empty;
use serde::Serialize;

/// The launch configuration columns some pages carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LaunchInfo {
    pub block: Option<String>,
    pub grid: Option<String>,
    pub device: Option<String>,
    pub cc: Option<String>,
    pub invocations: Option<u64>,
}

/// Where a page's launch configuration columns are (older ncu versions lack some).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LaunchColumns {
    pub block: Option<usize>,
    pub grid: Option<usize>,
    pub device: Option<usize>,
    pub cc: Option<usize>,
}

impl LaunchColumns {
    /// The columns, by the position of each name in the header (`find`).
    pub fn find(find: impl Fn(&str) -> Option<usize>) -> LaunchColumns {
        LaunchColumns {
            block: find("Block Size"),
            grid: find("Grid Size"),
            device: find("Device"),
            cc: find("CC"),
        }
    }

    /// A row's launch configuration; `cell(i)` is its cell at position `i`.
    pub fn read<'r>(
        &self,
        cell: impl Fn(usize) -> Option<&'r str>,
        invocations: Option<u64>,
    ) -> LaunchInfo {
        let get = |i: Option<usize>| non_empty(i.and_then(&cell));
        LaunchInfo {
            block: get(self.block),
            grid: get(self.grid),
            device: get(self.device),
            cc: get(self.cc),
            invocations,
        }
    }
}

impl LaunchInfo {
    /// Fills what `self` lacks from `other`.
    pub fn merge(&mut self, other: &LaunchInfo) {
        fn fill<T: Clone>(a: &mut Option<T>, b: &Option<T>) {
            if a.is_none() {
                a.clone_from(b);
            }
        }
        fill(&mut self.block, &other.block);
        fill(&mut self.grid, &other.grid);
        fill(&mut self.device, &other.device);
        fill(&mut self.cc, &other.cc);
        fill(&mut self.invocations, &other.invocations);
    }
}

/// What a row says of its launch besides its page's content: a
/// [`KernelRecord`](super::record::KernelRecord) but its page.
pub(crate) struct Identity {
    pub kernel: String,
    pub launch_id: Option<u64>,
    pub process_id: Option<u64>,
    pub launch: LaunchInfo,
    pub line: u64,
}
