//! The explorer: a terminal UI over ladders. Input becomes `Action`s through the keymap,
//! `App::update` is the only place state changes (a view's own actions handed to that
//! view's `act`), views draw as pure functions of the state, and GPU runs happen on a
//! worker thread that reports by message.

pub mod action;
pub mod frame;
pub mod jobs;
pub mod keymap;
pub mod ladder_state;
pub mod listing;
pub mod state;
pub mod theme;
pub mod views;

use crate::model::Ladder;
use action::{Action, View};
use anyhow::{Context, Result};
use ladder_state::LadderState;
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyEvent, KeyEventKind, MouseButton,
    MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{self as term, ClearType};
use ratatui::layout::Rect;
use state::{App, Effect, JobEvent};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

/// Opens the explorer on these ladders until the user quits; jobs find their kernel
/// recipes under `kernels`; `load_warnings` (ladders that could not be read, files
/// read in part) show in the status line.
pub fn run(
    ladders: Vec<Ladder>,
    kernels: std::path::PathBuf,
    load_warnings: Vec<String>,
) -> Result<()> {
    let mut app = new_app(ladders, kernels, load_warnings);
    let signals = EndSignals::catch()?;
    let mut terminal = ratatui::try_init().context("cannot take over the terminal")?;
    let guard = TerminalGuard;
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        give_back_terminal();
        previous(info);
    }));
    let watch = Watchdog::start(Arc::clone(&signals.received));
    let result = event_loop(&mut terminal, &mut app, &signals.received);
    watch.stop();
    drop(guard);
    signals.release();
    result
}

fn new_app(ladders: Vec<Ladder>, kernels: std::path::PathBuf, load_warnings: Vec<String>) -> App {
    let mut app = App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        theme::Theme::from_env(),
    );
    app.kernels = kernels;
    app.load_warnings = load_warnings;
    app
}

/// The environment variable that makes the explorer end right after its first frame
/// (set and not empty): a start-up benchmark as a whole process. Undocumented in the
/// help; README's Speed section names it.
pub const FIRST_FRAME_ENV: &str = "STALLSCOPE_FIRST_FRAME_EXIT";

/// Whether [`FIRST_FRAME_ENV`] asks for one frame only.
pub fn first_frame_only() -> bool {
    std::env::var_os(FIRST_FRAME_ENV).is_some_and(|v| !v.is_empty())
}

/// Where there is no terminal: the first frame drawn, as the explorer draws it, on a
/// fixed 120×40 screen in memory, then nothing more.
pub fn first_frame_offscreen(
    ladders: Vec<Ladder>,
    kernels: std::path::PathBuf,
    load_warnings: Vec<String>,
) -> Result<()> {
    let mut app = new_app(ladders, kernels, load_warnings);
    let area = Rect::new(0, 0, 120, 40);
    let mut terminal =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(area.width, area.height))?;
    app.update(Action::Resize {
        rows: frame::areas(area).body.height,
    });
    terminal.draw(|f| frame::draw(f, &app))?;
    Ok(())
}

/// The signals that end the explorer in order, so that the terminal is restored (raw
/// mode off, the alternate screen left) before the process ends of them: a `kill`, a
/// closed terminal or SSH session, an interrupt from outside.
const END_SIGNALS: [i32; 3] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGINT,
];

/// While the explorer runs, an ending signal is only noted (the event loop stops on
/// it); once the terminal is restored, the process ends of that signal, and any later
/// one acts as it does by default.
struct EndSignals {
    /// The signal that came, or 0.
    received: Arc<AtomicUsize>,
    /// Set once the explorer is over: the default actions are back.
    released: Arc<AtomicBool>,
}

impl EndSignals {
    fn catch() -> Result<EndSignals> {
        let s = EndSignals {
            received: Arc::new(AtomicUsize::new(0)),
            released: Arc::new(AtomicBool::new(false)),
        };
        for sig in END_SIGNALS {
            signal_hook::flag::register_conditional_default(sig, Arc::clone(&s.released))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, Arc::clone(&s.received), sig as usize)
                })
                .context("cannot install the signal handlers that restore the terminal")?;
        }
        Ok(s)
    }

    /// Called with the terminal restored.
    fn release(self) {
        self.released.store(true, Ordering::SeqCst);
        let sig = self.received.load(Ordering::SeqCst) as i32;
        if sig != 0 {
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    }
}

/// A terminal that has gone (a closed SSH session, a killed tmux server) can leave
/// crossterm's `event::poll` waiting for ever, timeout or not, so the event loop never
/// gets back to the ending signal it noted and spins on a core. The watchdog ends the
/// process itself, the terminal given back as far as it can be, when the loop has not
/// ended within half a second of an ending signal, or when the terminal on standard
/// input has hung up.
struct Watchdog {
    done: Arc<AtomicBool>,
}

impl Watchdog {
    fn start(received: Arc<AtomicUsize>) -> Watchdog {
        let done = Arc::new(AtomicBool::new(false));
        let over = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut noted: Option<std::time::Instant> = None;
            while !over.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(100));
                let sig = received.load(Ordering::SeqCst) as i32;
                if sig != 0
                    && noted.get_or_insert_with(std::time::Instant::now).elapsed()
                        > Duration::from_millis(500)
                {
                    give_back_terminal();
                    std::process::exit(128 + sig);
                }
                if sig == 0 && terminal_hung_up() {
                    give_back_terminal();
                    std::process::exit(128 + signal_hook::consts::SIGHUP);
                }
            }
        });
        Watchdog { done }
    }

    fn stop(self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

/// Whether standard input is a terminal that has hung up (its other end closed).
fn terminal_hung_up() -> bool {
    use std::os::fd::AsRawFd;
    let fd = std::io::stdin().as_raw_fd();
    // SAFETY: isatty and a zero-timeout poll on one descriptor of our own.
    unsafe {
        if libc::isatty(fd) != 1 {
            return false;
        }
        let mut p = libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        };
        libc::poll(&mut p, 1, 0) == 1
            && p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
    }
}

/// Restores the terminal however the explorer ends.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        give_back_terminal();
    }
}

/// The terminal as the shell had it: mouse reports off, the cursor shown, the screen cleared (a terminal
/// without an alternate screen, or tmux with `alternate-screen off`, would keep the
/// last frame), the alternate screen left, raw mode off.
fn give_back_terminal() {
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        term::Clear(ClearType::All),
        ratatui::crossterm::cursor::MoveTo(0, 0),
        // The frames hide it; an ending signal leaves before the terminal's drop would
        // show it again.
        ratatui::crossterm::cursor::Show
    );
    ratatui::restore();
}

/// Ctrl-Z: the terminal given back, the process stopped as the shell's job control
/// stops it (SIGTSTP); when it continues (`fg`), the terminal taken back and redrawn
/// whole.
fn suspend(terminal: &mut ratatui::DefaultTerminal) -> Result<()> {
    give_back_terminal();
    signal_hook::low_level::raise(signal_hook::consts::SIGTSTP)
        .context("cannot suspend the explorer")?;
    term::enable_raw_mode().context("cannot take the terminal back")?;
    execute!(
        std::io::stdout(),
        term::EnterAlternateScreen,
        EnableMouseCapture
    )
    .context("cannot take the terminal back")?;
    terminal.clear()?;
    Ok(())
}

/// Runs until the user quits or an ending signal is noted in `signal`.
fn event_loop(
    terminal: &mut ratatui::DefaultTerminal,
    app: &mut App,
    signal: &AtomicUsize,
) -> Result<()> {
    let one_frame = first_frame_only();
    let (tx, rx): (Sender<JobEvent>, Receiver<JobEvent>) = channel();
    let mut job: Option<jobs::Job> = None;
    let mut area = terminal
        .size()
        .map(|s| Rect::new(0, 0, s.width, s.height))?;
    app.update(Action::Resize {
        rows: frame::areas(area).body.height,
    });
    loop {
        terminal.draw(|f| frame::draw(f, app))?;
        if app.quit || one_frame || signal.load(Ordering::SeqCst) != 0 {
            break;
        }
        let timeout = Duration::from_millis(if job.is_some() { 100 } else { 500 });
        if event::poll(timeout)? {
            let ev = event::read()?;
            if let Event::Resize(w, h) = ev {
                area = Rect::new(0, 0, w, h);
                // The whole screen drawn anew: nothing of the old frame stays.
                terminal.clear()?;
            }
            for action in actions(app, &ev, area) {
                if let Some(effect) = app.update(action) {
                    match effect {
                        Effect::StartJob(req) => job = Some(jobs::start(app, req, tx.clone())),
                        Effect::CancelJob => {
                            if let Some(j) = &job {
                                j.cancel.store(true, Ordering::Relaxed);
                            }
                        }
                        Effect::Suspend => suspend(terminal)?,
                    }
                }
            }
        }
        while let Ok(msg) = rx.try_recv() {
            app.update(msg);
            if app.job.is_none()
                && let Some(j) = job.take()
            {
                let _ = j.handle.join();
            }
        }
    }
    if let Some(j) = job {
        j.cancel.store(true, Ordering::Relaxed);
        let _ = j.handle.join();
    }
    Ok(())
}

/// Turns a terminal event into actions: keys through the keymap (or into the filter
/// while typing), the mouse through the same layout the views draw with.
pub fn actions(app: &App, ev: &Event, area: Rect) -> Vec<Action> {
    match ev {
        Event::Key(k) if k.kind != KeyEventKind::Release => {
            key_action(app, k).into_iter().collect()
        }
        Event::Resize(w, h) => vec![Action::Resize {
            rows: frame::areas(Rect::new(0, 0, *w, *h)).body.height,
        }],
        Event::Mouse(m) => {
            let a = frame::areas(area);
            match m.kind {
                MouseEventKind::ScrollUp => vec![Action::Up; 3],
                MouseEventKind::ScrollDown => vec![Action::Down; 3],
                MouseEventKind::Down(MouseButton::Left) if m.row == a.tabs.y => {
                    frame::tab_spans(app, a.tabs.width)
                        .into_iter()
                        .find(|&(_, x0, x1)| m.column >= x0 && m.column < x1)
                        .map(|(v, _, _)| vec![Action::Show(v)])
                        .unwrap_or_default()
                }
                MouseEventKind::Down(MouseButton::Left) if app.view == View::Timeline => {
                    let scene = app.scene();
                    let [_, _, table, _] = views::timeline::layout(&scene, a.body);
                    let cols = views::timeline::columns(&scene, table.width);
                    let x = m.column.saturating_sub(table.x);
                    if m.row >= table.y && m.row < table.y + table.height && x > cols.name_w {
                        let i = ((x - cols.name_w - 1) / (cols.col_w + 1)) as usize;
                        if i < cols.count {
                            return vec![Action::SelectVersion(cols.first + i)];
                        }
                    }
                    Vec::new()
                }
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

fn key_action(app: &App, k: &KeyEvent) -> Option<Action> {
    keymap::lookup(&app.key_contexts(), k)
}
