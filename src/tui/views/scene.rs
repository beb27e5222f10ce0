//! What the views draw from besides their own state: the ladder shown, the version
//! selected and the one marked, and the theme. The explorer hands it to each view
//! ([`App::scene`](crate::tui::state::App::scene)); no view reads the explorer's state
//! whole.

use crate::tui::ladder_state::LadderState;
use crate::tui::theme::Theme;

/// The explorer's ladder and selection as a view draws them.
#[derive(Clone, Copy)]
pub struct Scene<'a> {
    ladder: &'a LadderState,
    /// Which of the explorer's ladders it is.
    pub current: usize,
    /// Position of the selected version in display order.
    pub selected: usize,
    /// Index (into the ladder's versions) of the selected version; `None` while the
    /// ladder has no versions yet.
    version: Option<usize>,
    /// Version (index into the ladder's versions) marked for compare.
    pub marked: Option<usize>,
    pub theme: Theme,
}

impl<'a> Scene<'a> {
    /// The ladder at `current` among the explorer's, its version at `selected` in display
    /// order (`version`, its index) and the one `marked`, drawn in `theme`.
    pub fn new(
        ladder: &'a LadderState,
        current: usize,
        selected: usize,
        version: Option<usize>,
        marked: Option<usize>,
        theme: Theme,
    ) -> Scene<'a> {
        Scene {
            ladder,
            current,
            selected,
            version,
            marked,
            theme,
        }
    }

    /// The ladder shown, with its analysis at the run results shown.
    pub fn ladder(&self) -> &'a LadderState {
        self.ladder
    }

    /// Index (into the ladder's versions) of the selected version.
    pub fn version_index(&self) -> Option<usize> {
        self.version
    }

    /// The two versions the compare view shows: the marked one (or else the version the
    /// selected one was built on, its parent; for a baseline the one before it in display
    /// order) against the selected one. `None` when there is none to compare it with
    /// (the first version, nothing marked).
    pub fn compare_pair(&self) -> Option<(usize, usize)> {
        let b = self.version?;
        let ls = self.ladder;
        let before = || {
            let pos = ls.order.iter().position(|&i| i == b)?;
            pos.checked_sub(1).map(|p| ls.order[p])
        };
        let a = self
            .marked
            .filter(|&m| m != b)
            .or_else(|| ls.ladder.parent_of(b))
            .or_else(before)?;
        Some((a, b))
    }

    /// The selected version's SASS listing, when its profile has a source page (read
    /// from its file the first time a view asks; an error says why it cannot be).
    pub fn listing(&self) -> Option<Result<&'a crate::ncu::SourceListing, &'a str>> {
        self.ladder.ladder.versions[self.version?].listing()
    }

    /// A file of the current ladder, as its users name it: relative to the ladder's folder
    /// (`v09/raw.csv.gz`, `../../kernels/…`), or as given for loose files.
    pub fn ladder_path(&self, path: &std::path::Path) -> String {
        let ladder = &self.ladder.ladder;
        match &ladder.dir {
            Some(dir) => crate::files::paths::relative_path(path, dir)
                .display()
                .to_string(),
            None => path.display().to_string(),
        }
    }
}
