//! What the commands write: their results on standard output (through `out!` and
//! `outln!`, which outlive a reader that has gone), to a file (`-o FILE`), at the
//! terminal's width, and the progress bars on standard error.

use crate::report::Format;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A command's results on standard output. A reader that has gone (`report | head`)
/// ends the output, not the command: what comes after (saving a run's results) still
/// happens, and the command ends quietly.
macro_rules! out {
    ($($arg:tt)*) => { $crate::commands::output::stdout_write(format_args!($($arg)*)) };
}
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::commands::output::stdout_write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

static OUTPUT_GONE: AtomicBool = AtomicBool::new(false);
static OUTPUT_FAILED: AtomicBool = AtomicBool::new(false);

pub(super) fn stdout_write(args: std::fmt::Arguments) {
    use std::io::Write;
    use std::sync::atomic::Ordering::Relaxed;
    if OUTPUT_GONE.load(Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if let Err(e) = o.write_fmt(args).and_then(|_| o.flush()) {
        OUTPUT_GONE.store(true, Relaxed);
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            OUTPUT_FAILED.store(true, Relaxed);
            eprintln!("stallscope: cannot write to standard output: {e}");
        }
    }
}

/// Whether writing a command's results failed for another reason than a reader that
/// went away (a full disk, say): the command then ends with a failure.
pub fn output_failed() -> bool {
    OUTPUT_FAILED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Writes a command's output to a file, or to standard output.
pub(super) fn emit(text: &str, output: Option<&Path>) -> Result<()> {
    match output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => {
            out!("{text}");
            Ok(())
        }
    }
}

/// The width a table fits: the terminal's, when it is printed on one (not with
/// `--wide`, `-o FILE` or another format).
pub(super) fn terminal_width(format: Format, output: Option<&Path>, wide: bool) -> Option<usize> {
    use std::io::IsTerminal;
    let on_terminal = format == Format::Table && output.is_none() && !wide;
    if !(on_terminal && std::io::stdout().is_terminal()) {
        return None;
    }
    crossterm::terminal::size()
        .ok()
        .map(|(cols, _)| usize::from(cols))
        .filter(|&c| c > 0)
}

pub(super) fn progress_bar() -> ProgressBar {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg} {elapsed}")
            .expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}
