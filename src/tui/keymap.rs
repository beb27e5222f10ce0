//! Every key of the explorer, in one table. Input handling, the footer and the help
//! popup all read it, so the help can never drift from the keys.

use super::action::{Action, View};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where a binding applies: everywhere, or in one view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Whatever is open, also while a filter or search is typed or a popup is shown.
    Anywhere,
    Global,
    View(View),
    /// The source view while a search is kept: its keys come before the others (Esc
    /// clears the search and gives them back).
    Search,
    /// While a filter or search is typed: these keys alone (and the `Anywhere` ones).
    Typing,
    /// While the help is open.
    Help,
    /// While the full kernel name is shown.
    KernelName,
    /// While the whole status message is shown.
    Message,
}

/// What has the keys: the views, or something open over them that takes them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Views,
    Typing,
    Help,
    KernelName,
    Message,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::Anywhere => "anywhere, whatever is open or typed",
            Context::Global => "everywhere",
            Context::View(v) => v.title(),
            Context::Search => "source, with a search kept (Esc clears it)",
            Context::Typing => "while a filter or search is typed",
            Context::Help => "in this help",
            Context::KernelName => "over the full kernel name",
            Context::Message => "over the whole message",
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

/// Any character without Ctrl: what is typed into a filter or search. (`KeyCode::Null`
/// stands for it here; `matches` takes it for every `KeyCode::Char`.)
const ANY_CHAR: Key = Key {
    code: KeyCode::Null,
    ctrl: false,
};

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
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Null => "other keys".into(),
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
            (KeyCode::Null, KeyCode::Char(_)) => true,
            // The stand-in matches characters alone, not a terminal's own Null key.
            (KeyCode::Null, _) => false,
            (a, b) => a == b,
        }
    }
}

pub struct Binding {
    pub context: Context,
    pub keys: &'static [Key],
    pub action: Action,
    pub help: &'static str,
    /// How the footer shows it, if it does (the rest only in the help popup).
    pub footer: Option<Footer>,
}

/// A binding in the footer: its place (lowest first, so that a narrow terminal keeps
/// the keys a newcomer needs), its keys and a word or two.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    pub rank: u8,
    pub keys: &'static str,
    pub text: &'static str,
}

const fn shown(rank: u8, keys: &'static str, text: &'static str) -> Option<Footer> {
    Some(Footer { rank, keys, text })
}

use Action::*;
use Context::{Anywhere, Global, View as In};

pub const KEYMAP: &[Binding] = &[
    Binding {
        context: Anywhere,
        keys: &[ctrl('c')],
        action: QuitNow,
        help: "quit at once",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('q'), code(KeyCode::Esc)],
        action: Quit,
        help: "quit (first closes a popup, or clears a kept filter or search)",
        footer: shown(10, "q", "quit"),
    },
    Binding {
        context: Anywhere,
        keys: &[ctrl('z')],
        action: Suspend,
        help: "suspend to the shell (fg resumes)",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('?')],
        action: ToggleHelp,
        help: "this help",
        footer: shown(9, "?", "help"),
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Tab)],
        action: NextView,
        help: "next view",
        footer: shown(12, "Tab", "view"),
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::BackTab)],
        action: PrevView,
        help: "previous view",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('t')],
        action: Show(View::Timeline),
        help: "ladder timeline",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('c')],
        action: Show(View::Compare),
        help: "compare: the marked version, or the parent, with the selected one",
        footer: shown(11, "c", "compare"),
    },
    Binding {
        context: Global,
        keys: &[k('f')],
        action: Show(View::Roofline),
        help: "roofline: every version's FLOP/s against its FLOP per DRAM byte",
        footer: shown(11, "f", "roofline"),
    },
    Binding {
        context: Global,
        keys: &[k('w')],
        action: Show(View::Pipeline),
        help: "pipeline trace: the warps over time, beside the marked version's",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('i')],
        action: Show(View::Inspect),
        help: "inspect every metric and rule of the selected version",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('s')],
        action: Show(View::Source),
        help: "SASS listing with stall samples",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('b')],
        action: Show(View::Bottleneck),
        help: "bottleneck: the reason × instruction table and what its rows mean",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('n')],
        action: Show(View::Notes),
        help: "the version's notes and its diff from the version it was built on",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Left), k('h')],
        action: PrevVersion,
        help: "select the previous version",
        footer: shown(1, "←→", "version"),
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Right), k('l')],
        action: NextVersion,
        help: "select the next version",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Up), k('k')],
        action: Up,
        help: "scroll up / move up",
        footer: shown(2, "↑↓", "scroll"),
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Down), k('j')],
        action: Down,
        help: "scroll down / move down",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::PageUp)],
        action: PageUp,
        help: "page up",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::PageDown), k(' ')],
        action: PageDown,
        help: "page down",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::Home), k('g')],
        action: Top,
        help: "to the top",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[code(KeyCode::End), k('G')],
        action: Bottom,
        help: "to the bottom",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('S')],
        action: NextShape,
        help: "run results of the next measured shape",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('L')],
        action: NextLadder,
        help: "next ladder",
        footer: shown(4, "L", "ladder"),
    },
    Binding {
        context: Global,
        keys: &[k('m')],
        action: Mark,
        help: "mark the selected version for compare",
        footer: shown(3, "m", "mark"),
    },
    Binding {
        context: Global,
        keys: &[k('r')],
        action: Run { all: false },
        help: "run the selected version on the GPU",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('R')],
        action: Run { all: true },
        help: "run every version on the GPU",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('p')],
        action: Profile { all: false },
        help: "profile the selected version with ncu",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('P')],
        action: Profile { all: true },
        help: "profile every version with ncu",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('K')],
        action: ToggleKernel,
        help: "the full kernel name of the version shown (in compare: of both)",
        footer: shown(13, "K", "kernel name"),
    },
    Binding {
        context: Global,
        keys: &[k('e')],
        action: ToggleMessage,
        help: "the whole status message and every loading warning",
        footer: None,
    },
    Binding {
        context: Global,
        keys: &[k('x')],
        action: StopJob,
        help: "stop the run or profile in progress",
        footer: None,
    },
    Binding {
        context: In(View::Inspect),
        keys: &[k('/')],
        action: FilterStart,
        help: "filter metrics as you type (Enter keeps it, Esc clears it)",
        footer: shown(5, "/", "filter"),
    },
    Binding {
        context: In(View::Source),
        keys: &[k('o')],
        action: ToggleSort,
        help: "sort by stall samples, by address, or under CUDA lines",
        footer: shown(5, "o", "sort"),
    },
    Binding {
        context: In(View::Source),
        keys: &[k(']')],
        action: NextHot,
        help: "next hot spot (≥ 1 % of the stall samples)",
        footer: shown(6, "]", "next hot spot"),
    },
    Binding {
        context: In(View::Source),
        keys: &[k('[')],
        action: PrevHot,
        help: "previous hot spot",
        footer: None,
    },
    Binding {
        context: In(View::Source),
        keys: &[k('/')],
        action: SearchStart,
        help: "search: an opcode, a register or an offset (Enter keeps it)",
        footer: shown(5, "/", "search"),
    },
    Binding {
        context: Context::Search,
        keys: &[k('n')],
        action: NextMatch,
        help: "the next instruction that matches",
        footer: shown(4, "n/N", "next/previous match"),
    },
    Binding {
        context: Context::Search,
        keys: &[k('N')],
        action: PrevMatch,
        help: "the previous instruction that matches",
        footer: None,
    },
    Binding {
        context: Context::Typing,
        keys: &[code(KeyCode::Enter)],
        action: FilterEnd,
        help: "keep what is typed and stop typing",
        footer: shown(1, "Enter", "keep"),
    },
    Binding {
        context: Context::Typing,
        keys: &[code(KeyCode::Esc)],
        action: FilterCancel,
        help: "clear what is typed and stop typing",
        footer: shown(2, "Esc", "clear"),
    },
    Binding {
        context: Context::Typing,
        keys: &[code(KeyCode::Backspace)],
        action: FilterBackspace,
        help: "delete the last character",
        footer: None,
    },
    Binding {
        context: Context::Typing,
        keys: &[ANY_CHAR],
        // The character here is a stand-in: `lookup` puts in the one typed.
        action: FilterInput(' '),
        help: "typed in (q and the view keys too)",
        footer: None,
    },
    Binding {
        context: Context::Help,
        keys: &[code(KeyCode::Esc), k('?'), k('q')],
        action: ToggleHelp,
        help: "close the help",
        footer: shown(1, "Esc", "close"),
    },
    Binding {
        context: Context::Help,
        keys: &[code(KeyCode::Up), k('k')],
        action: HelpScroll(-1),
        help: "scroll up",
        footer: shown(2, "↑↓", "scroll"),
    },
    Binding {
        context: Context::Help,
        keys: &[code(KeyCode::Down), k('j')],
        action: HelpScroll(1),
        help: "scroll down",
        footer: None,
    },
    Binding {
        context: Context::Help,
        keys: &[code(KeyCode::PageUp)],
        action: HelpScroll(-10),
        help: "page up",
        footer: None,
    },
    Binding {
        context: Context::Help,
        keys: &[code(KeyCode::PageDown), k(' ')],
        action: HelpScroll(10),
        help: "page down",
        footer: None,
    },
    Binding {
        context: Context::KernelName,
        keys: &[code(KeyCode::Esc), k('K'), k('q')],
        action: ToggleKernel,
        help: "close the kernel name",
        footer: shown(1, "Esc", "close"),
    },
    Binding {
        context: Context::Message,
        keys: &[code(KeyCode::Esc), k('e'), k('q')],
        action: ToggleMessage,
        help: "close the message",
        footer: shown(1, "Esc", "close"),
    },
    Binding {
        context: Context::Message,
        keys: &[code(KeyCode::Up), k('k')],
        action: MessageScroll(-1),
        help: "scroll up",
        footer: shown(2, "↑↓", "scroll"),
    },
    Binding {
        context: Context::Message,
        keys: &[code(KeyCode::Down), k('j')],
        action: MessageScroll(1),
        help: "scroll down",
        footer: None,
    },
];

/// The contexts whose keys apply, first first: always the `Anywhere` keys; then what is
/// open over the views alone, or else a kept search (in the source view), the view's
/// own, the global ones.
pub fn contexts(focus: Focus, view: View, search_kept: bool) -> Vec<Context> {
    let over = match focus {
        Focus::Views => None,
        Focus::Typing => Some(Context::Typing),
        Focus::Help => Some(Context::Help),
        Focus::KernelName => Some(Context::KernelName),
        Focus::Message => Some(Context::Message),
    };
    if let Some(over) = over {
        return vec![Context::Anywhere, over];
    }
    let search = (view == View::Source && search_kept).then_some(Context::Search);
    std::iter::once(Context::Anywhere)
        .chain(search)
        .chain([Context::View(view), Context::Global])
        .collect()
}

/// Every context, in the order the help lists them.
pub fn help_order() -> Vec<Context> {
    let mut all = vec![Context::Anywhere, Context::Global];
    all.extend(View::ALL.iter().map(|v| Context::View(*v)));
    all.extend([
        Context::Search,
        Context::Typing,
        Context::Help,
        Context::KernelName,
        Context::Message,
    ]);
    all
}

/// The action a key means: the binding of the first of `contexts` that binds it.
pub fn lookup(contexts: &[Context], e: &KeyEvent) -> Option<Action> {
    contexts.iter().find_map(|&ctx| {
        KEYMAP
            .iter()
            .filter(|b| b.context == ctx)
            .find(|b| b.keys.iter().any(|k| k.matches(e)))
            .map(|b| match (b.action, e.code) {
                // The typing binding stands for every character: the action carries the
                // one typed.
                (FilterInput(_), KeyCode::Char(c)) => FilterInput(c),
                (action, _) => action,
            })
    })
}

/// The footer's bindings in these contexts, in footer order.
pub fn footer(contexts: &[Context]) -> Vec<Footer> {
    let mut shown: Vec<Footer> = KEYMAP
        .iter()
        .filter(|b| contexts.contains(&b.context))
        .filter_map(|b| b.footer)
        .collect();
    shown.sort_by_key(|f| f.rank);
    shown
}

/// How the help writes the first key of the binding of `action` in `context` (the
/// status line names the key that shows a cut message whole).
pub fn first_key(context: Context, action: Action) -> String {
    KEYMAP
        .iter()
        .find(|b| b.context == context && b.action == action)
        .and_then(|b| b.keys.first())
        .map(Key::label)
        .unwrap_or_default()
}

pub fn keys_label(b: &Binding) -> String {
    b.keys.iter().map(Key::label).collect::<Vec<_>>().join("/")
}
