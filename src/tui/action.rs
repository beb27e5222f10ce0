//! What the user asks of the explorer (an [`Action`], from a key, a click or the wheel),
//! the views it shows, and what a view says of one of its own actions.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Timeline,
    Compare,
    Roofline,
    Pipeline,
    Inspect,
    Source,
    Bottleneck,
    Notes,
}

impl View {
    pub const ALL: [View; 8] = [
        View::Timeline,
        View::Compare,
        View::Roofline,
        View::Pipeline,
        View::Inspect,
        View::Source,
        View::Bottleneck,
        View::Notes,
    ];

    pub fn title(self) -> &'static str {
        match self {
            View::Timeline => "timeline",
            View::Compare => "compare",
            View::Roofline => "roofline",
            View::Pipeline => "pipeline",
            View::Inspect => "inspect",
            View::Source => "source",
            View::Bottleneck => "bottleneck",
            View::Notes => "notes",
        }
    }
}

/// What a key (or a mouse gesture, or a background job) asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// q or Esc: closes what is open first.
    Quit,
    /// Ctrl-C: quits whatever is open.
    QuitNow,
    ToggleHelp,
    NextView,
    PrevView,
    Show(View),
    PrevVersion,
    NextVersion,
    /// Select a version by its position in display order (mouse).
    SelectVersion(usize),
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    NextLadder,
    /// Show the run results of the next shape the ladder was measured at.
    NextShape,
    Mark,
    FilterStart,
    /// Typing into the inspect filter or the source view's search, whichever is typed.
    FilterInput(char),
    FilterBackspace,
    /// Enter: keep the filter (search), stop typing.
    FilterEnd,
    /// Esc while typing: clear the filter (search).
    FilterCancel,
    ToggleSort,
    NextHot,
    PrevHot,
    /// `/` in the source view: type a search of the listing (the typing actions above
    /// then edit it).
    SearchStart,
    /// The next (previous) instruction that matches the kept search.
    NextMatch,
    PrevMatch,
    /// Show (or close) the full kernel names of the version shown.
    ToggleKernel,
    /// Show (or close) the whole status message and every loading warning.
    ToggleMessage,
    /// Scroll the message popup.
    MessageScroll(i16),
    Run {
        all: bool,
    },
    Profile {
        all: bool,
    },
    StopJob,
    /// Scroll the help popup.
    HelpScroll(i16),
    /// The terminal's size changed (rows of the main area, for paging).
    Resize {
        rows: u16,
    },
    /// Ctrl-Z: give the terminal back and stop until resumed (`fg`).
    Suspend,
}

/// What a view has to say of one of its own actions, and of what: the explorer shows it
/// in the status line while that holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    Nothing,
    /// Of what the view shows of the selected version (no further hot spot).
    OfView(String),
    /// Of the source view's kept search of the selected version (match 2 of 128).
    OfSearch(String),
}
