//! Every key of the explorer, in one table. Input handling, the footer and the help
//! popup all read it, so the help can never drift from the keys.

use super::state::{Action, View};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies: everywhere, or in one view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Global,
    View(View),
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "everywhere",
            Context::View(v) => v.title(),
        }
    }
}

/// A key with its modifiers, and how the help writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
}

const fn k(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: false,
    }
}

const fn code(code: KeyCode) -> Key {
    Key { code, ctrl: false }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        ctrl: true,
    }
}

impl Key {
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "S-Tab".into(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            other => format!("{other:?}"),
        };
        if self.ctrl { format!("C-{base}") } else { base }
    }

    pub fn matches(&self, e: &KeyEvent) -> bool {
        let ctrl = e.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl != self.ctrl {
            return false;
        }
        match (self.code, e.code) {
            // Shifted letters arrive as upper-case characters.
            (KeyCode::Char(a), KeyCode::Char(b)) => a == b,
            (a, b) => a == b,
        }
    }
}

pub struct Binding {
    pub context: Context,
    pub keys: &'static [Key],
    pub action: Action,
    pub help: &'static str,
    /// Shown in the footer (the rest only in the help popup).
    pub footer: bool,
}

use Action::*;
use Context::{Global, View as In};

pub const KEYMAP: &[Binding] = &[
    Binding {
        context: Global,
        keys: &[k('q'), code(KeyCode::Esc), ctrl('c')],
        action: Quit,
        help: "quit (first closes the help, or clears the inspect filter)",
        footer: true,
    },
    Binding {
        context: Global,
        keys: &[ctrl('z')],
        action: Suspend,
        help: "suspend to the shell (fg resumes)",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('?')],
        action: ToggleHelp,
        help: "this help",
        footer: true,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Tab)],
        action: NextView,
        help: "next view",
        footer: true,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::BackTab)],
        action: PrevView,
        help: "previous view",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('t')],
        action: Show(View::Timeline),
        help: "ladder timeline",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('c')],
        action: Show(View::Compare),
        help: "compare: the marked (or previous) version with the selected one",
        footer: true,
    },
    Binding {
        context: Global,
        keys: &[k('i')],
        action: Show(View::Inspect),
        help: "inspect every metric and rule of the selected version",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('s')],
        action: Show(View::Source),
        help: "SASS listing with stall samples",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('n')],
        action: Show(View::Notes),
        help: "the version's notes and its diff from the previous version",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Left), k('h')],
        action: PrevVersion,
        help: "select the previous version",
        footer: true,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Right), k('l')],
        action: NextVersion,
        help: "select the next version",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Up), k('k')],
        action: Up,
        help: "scroll up / move up",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Down), k('j')],
        action: Down,
        help: "scroll down / move down",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::PageUp)],
        action: PageUp,
        help: "page up",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::PageDown), k(' ')],
        action: PageDown,
        help: "page down",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Home), k('g')],
        action: Top,
        help: "to the top",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::End), k('G')],
        action: Bottom,
        help: "to the bottom",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('L')],
        action: NextLadder,
        help: "next ladder",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('m')],
        action: Mark,
        help: "mark the selected version for compare",
        footer: true,
    },
    Binding {
        context: Global,
        keys: &[k('r')],
        action: Run { all: false },
        help: "run the selected version on the GPU",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('R')],
        action: Run { all: true },
        help: "run every version on the GPU",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('p')],
        action: Profile { all: false },
        help: "profile the selected version with ncu",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('P')],
        action: Profile { all: true },
        help: "profile every version with ncu",
        footer: false,
    },
    Binding {
        context: Global,
        keys: &[k('x')],
        action: StopJob,
        help: "stop the run or profile in progress",
        footer: false,
    },
    Binding {
        context: In(View::Inspect),
        keys: &[k('/')],
        action: FilterStart,
        help: "filter metrics as you type (Enter keeps it, Esc clears it)",
        footer: true,
    },
    Binding {
        context: In(View::Source),
        keys: &[k('o')],
        action: ToggleSort,
        help: "sort by samples / by address",
        footer: true,
    },
    Binding {
        context: In(View::Source),
        keys: &[k(']')],
        action: NextHot,
        help: "next hot spot (≥ 1 % of the stall samples)",
        footer: true,
    },
    Binding {
        context: In(View::Source),
        keys: &[k('[')],
        action: PrevHot,
        help: "previous hot spot",
        footer: false,
    },
];

/// The action a key means in a view: the view's own binding first, then the global one.
pub fn lookup(view: View, e: &KeyEvent) -> Option<Action> {
    let find = |ctx: Context| {
        KEYMAP
            .iter()
            .filter(|b| b.context == ctx)
            .find(|b| b.keys.iter().any(|k| k.matches(e)))
            .map(|b| b.action)
    };
    find(Context::View(view)).or_else(|| find(Context::Global))
}

/// The footer's bindings for a view: its own first, then the global ones marked.
pub fn footer(view: View) -> impl Iterator<Item = &'static Binding> {
    KEYMAP
        .iter()
        .filter(move |b| b.context == Context::View(view))
        .chain(
            KEYMAP
                .iter()
                .filter(|b| b.context == Context::Global && b.footer),
        )
}

pub fn keys_label(b: &Binding) -> String {
    b.keys.iter().map(Key::label).collect::<Vec<_>>().join("/")
}
