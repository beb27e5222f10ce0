//! The explorer: a terminal UI over ladders. Input becomes `Action`s through the keymap,
//! `App::update` is the only place state changes, views are pure functions of the state,
//! and GPU runs happen on a worker thread that reports by message.

pub mod keymap;
pub mod state;
pub mod theme;
pub mod views;

use crate::gpu;
use crate::model::{self, Ladder, LoadReport, RunResult, Store};
use anyhow::{Context, Result, anyhow};
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyCode, KeyEvent, KeyEventKind,
    KeyModifiers, MouseButton, MouseEventKind,
};
use ratatui::crossterm::execute;
use ratatui::layout::Rect;
use state::{Action, App, Effect, JobKind, JobRequest, LadderState, View};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

/// Opens the explorer on these ladders until the user quits.
pub fn run(ladders: Vec<Ladder>) -> Result<()> {
    let mut app = App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        theme::Theme::from_env(),
    );
    let mut terminal = ratatui::try_init().context("cannot take over the terminal")?;
    let _guard = TerminalGuard;
    let _ = execute!(std::io::stdout(), EnableMouseCapture);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
        ratatui::restore();
        previous(info);
    }));
    event_loop(&mut terminal, &mut app)
}

/// Restores the terminal however the explorer ends.
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
        ratatui::restore();
    }
}

/// What a worker thread tells the explorer.
enum Msg {
    Progress {
        current: String,
        done: usize,
        total: usize,
    },
    Result {
        ladder: String,
        result: Box<RunResult>,
    },
    Done {
        outcome: Result<String, String>,
        reloaded: Option<Ladder>,
    },
}

struct Job {
    cancel: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

fn event_loop(terminal: &mut ratatui::DefaultTerminal, app: &mut App) -> Result<()> {
    let (tx, rx): (Sender<Msg>, Receiver<Msg>) = channel();
    let mut job: Option<Job> = None;
    let mut area = terminal
        .size()
        .map(|s| Rect::new(0, 0, s.width, s.height))?;
    app.update(Action::Resize {
        rows: views::areas(area).body.height,
    });
    loop {
        terminal.draw(|f| views::draw(f, app))?;
        if app.quit {
            break;
        }
        let timeout = Duration::from_millis(if job.is_some() { 100 } else { 500 });
        if event::poll(timeout)? {
            let ev = event::read()?;
            if let Event::Resize(w, h) = ev {
                area = Rect::new(0, 0, w, h);
            }
            for action in actions(app, &ev, area) {
                if let Some(effect) = app.update(action) {
                    match effect {
                        Effect::StartJob(req) => job = Some(start_job(app, req, tx.clone())),
                        Effect::CancelJob => {
                            if let Some(j) = &job {
                                j.cancel.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                }
            }
        }
        while let Ok(msg) = rx.try_recv() {
            match msg {
                Msg::Progress {
                    current,
                    done,
                    total,
                } => app.job_progress(current, done, total),
                Msg::Result { ladder, result } => app.job_result(&ladder, *result),
                Msg::Done { outcome, reloaded } => {
                    app.job_done(outcome, reloaded);
                    if let Some(j) = job.take() {
                        let _ = j.handle.join();
                    }
                }
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
            rows: views::areas(Rect::new(0, 0, *w, *h)).body.height,
        }],
        Event::Mouse(m) => {
            let a = views::areas(area);
            match m.kind {
                MouseEventKind::ScrollUp => vec![Action::Up; 3],
                MouseEventKind::ScrollDown => vec![Action::Down; 3],
                MouseEventKind::Down(MouseButton::Left) if m.row == a.tabs.y => {
                    views::tab_spans(app)
                        .into_iter()
                        .find(|&(_, x0, x1)| m.column >= x0 && m.column < x1)
                        .map(|(v, _, _)| vec![Action::Show(v)])
                        .unwrap_or_default()
                }
                MouseEventKind::Down(MouseButton::Left) if app.view == View::Timeline => {
                    let [_, table, _] = views::timeline::layout(app, a.body);
                    let cols = views::timeline::columns(app, table.width);
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
    let ctrl_c = k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
    if app.filter_editing && !ctrl_c {
        return match k.code {
            KeyCode::Enter => Some(Action::FilterEnd),
            KeyCode::Esc => Some(Action::FilterCancel),
            KeyCode::Backspace => Some(Action::FilterBackspace),
            KeyCode::Char(c) if !k.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(Action::FilterInput(c))
            }
            _ => None,
        };
    }
    if app.help && !ctrl_c {
        return match k.code {
            KeyCode::Esc | KeyCode::Char('?') | KeyCode::Char('q') => Some(Action::ToggleHelp),
            KeyCode::Up | KeyCode::Char('k') => Some(Action::HelpScroll(-1)),
            KeyCode::Down | KeyCode::Char('j') => Some(Action::HelpScroll(1)),
            KeyCode::PageUp => Some(Action::HelpScroll(-10)),
            KeyCode::PageDown | KeyCode::Char(' ') => Some(Action::HelpScroll(10)),
            _ => None,
        };
    }
    keymap::lookup(app.view, k)
}

/// The kernel ladder that feeds a profiles ladder: `kernels/*/ladder.toml` naming it.
fn kernels_for(ladder: &str) -> Option<PathBuf> {
    let dirs = std::fs::read_dir("kernels").ok()?;
    dirs.filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join(gpu::recipe::FILE_NAME).is_file())
        .find(|p| {
            gpu::load_kernels(p)
                .map(|k| k.ladder == ladder)
                .unwrap_or(false)
        })
}

fn start_job(app: &App, req: JobRequest, tx: Sender<Msg>) -> Job {
    let cancel = Arc::new(AtomicBool::new(false));
    let ls = app
        .ladders
        .iter()
        .find(|l| l.ladder.name == req.ladder)
        .map(|l| &l.ladder);
    let target = ls.and_then(|l| match (&l.store, &l.dir) {
        (Store::Disk, Some(dir)) => Some(dir.clone()),
        _ => None,
    });
    let flag = cancel.clone();
    let handle = std::thread::spawn(move || {
        let outcome = match target {
            None => Err(anyhow!(
                "the built-in profiles are read-only: start stallscope in the repository (or with --profiles DIR) to run kernels"
            )),
            Some(dir) => run_job(&req, &dir, &flag, &tx),
        };
        let reloaded = outcome.as_ref().ok().and_then(|(_, dir)| {
            model::load_ladder(&Store::Disk, dir, &mut LoadReport::keep_going()).ok()
        });
        let _ = tx.send(Msg::Done {
            outcome: outcome.map(|(m, _)| m).map_err(|e| format!("{e:#}")),
            reloaded,
        });
    });
    Job { cancel, handle }
}

fn run_job(
    req: &JobRequest,
    ladder_dir: &Path,
    cancel: &Arc<AtomicBool>,
    tx: &Sender<Msg>,
) -> Result<(String, PathBuf)> {
    let kernels = kernels_for(&req.ladder)
        .ok_or_else(|| anyhow!("no kernel ladder under ./kernels builds {}", req.ladder))?;
    let profiles = ladder_dir.parent().unwrap_or(Path::new(".")).to_path_buf();
    match req.kind {
        JobKind::Run => {
            let r = gpu::runner::Request {
                kernels: &kernels,
                versions: &req.versions,
                shape: None,
                causal: false,
                baselines: req.versions.iter().any(|v| v == "all"),
                seed: None,
                reps: 15,
                timeout: Duration::from_secs(180),
            };
            let out = gpu::runner::run(&r, cancel, &mut |p| {
                let _ = match p {
                    gpu::runner::Progress::Started { id, index, total } => tx.send(Msg::Progress {
                        current: id,
                        done: index,
                        total,
                    }),
                    gpu::runner::Progress::Finished(result) => tx.send(Msg::Result {
                        ladder: req.ladder.clone(),
                        result,
                    }),
                };
            })?;
            gpu::runner::save(&profiles, &out.ladder, &out.results)?;
            let failed = out
                .results
                .iter()
                .filter(|r| r.status == model::RunStatus::Failed)
                .count();
            Ok((
                format!(
                    "ran {} version(s), {failed} failed; seed {}",
                    out.results.len(),
                    out.seed
                ),
                ladder_dir.to_path_buf(),
            ))
        }
        JobKind::Profile => {
            let p = gpu::profile::Request {
                kernels: &kernels,
                versions: &req.versions,
                shape: None,
                causal: false,
                profiles: &profiles,
                set: "full",
                timeout: Duration::from_secs(600),
            };
            let done = gpu::profile::run(&p, cancel, &mut |id, i, n| {
                let _ = tx.send(Msg::Progress {
                    current: id.to_string(),
                    done: i,
                    total: n,
                });
            })?;
            let failed: Vec<String> = done
                .iter()
                .filter_map(|d| d.outcome.as_ref().err().map(|e| format!("{}: {e:#}", d.id)))
                .collect();
            if failed.is_empty() {
                Ok((
                    format!("profiled {} version(s)", done.len()),
                    ladder_dir.to_path_buf(),
                ))
            } else {
                Err(anyhow!(failed.join("; ")))
            }
        }
    }
}
