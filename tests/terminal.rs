//! The user's terminal is safe from what stallscope shows: escape sequences hidden in
//! an export are printed escaped in human-readable output (and kept in JSON and CSV),
//! and the explorer restores the terminal when a signal ends it.

mod common;

use assert_cmd::Command;
use common::fixture;
use stallscope::files::limits::SizeLimits;
use std::path::{Path, PathBuf};

/// A kernel name with an escape sequence that resets (and so clears) the terminal, a
/// bell and a carriage return that would let the rest overwrite the line.
const HOSTILE: &str = "mm\x1bc\x07\rnaive";
/// How stallscope shows it.
const ESCAPED: &str = "mm\\u{1b}c\\u{7}\\rnaive";

/// The real details page of the naive SGEMM, its kernel renamed to carry `HOSTILE`, in
/// a file whose name carries it too (the loose files' ladder is titled by their path; a
/// kernel's short name keeps only its identifier).
fn crafted_export(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("sgemm/det.csv")).unwrap();
    assert!(text.contains("mm_naive("), "the fixture names mm_naive");
    let path = dir.join(format!("{HOSTILE}.csv"));
    std::fs::write(&path, text.replace("mm_naive(", &format!("{HOSTILE}("))).unwrap();
    path
}

fn stallscope() -> Command {
    let mut c = Command::cargo_bin("stallscope").unwrap();
    c.env_remove("STALLSCOPE_PROFILES");
    c
}

/// stdout of `stallscope ARGS…` on the crafted export.
fn output_on_crafted(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = crafted_export(dir.path());
    let out = stallscope().args(args).arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Whether a text shows the kernel name escaped and holds no escape character.
fn shows_escaped(out: &str) -> bool {
    out.contains(ESCAPED) && !out.contains(['\x1b', '\x07', '\r'])
}

#[test]
fn report_table_shows_escape_sequences_of_imported_text_escaped() {
    let out = output_on_crafted(&["report", "--format", "table"]);
    assert!(shows_escaped(&out), "{out}");
}

/// The bundled SGEMM ladder with an escape sequence in its title, a version's title and
/// technique, and a note: the HTML page shows each escaped and holds none raw.
#[test]
fn report_html_holds_no_control_character_of_imported_text() {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("sgemm-toy");
    std::fs::create_dir(&ladder).unwrap();
    for e in std::fs::read_dir(common::profiles().join("sgemm-toy")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), ladder.join(e.file_name())).unwrap();
    }
    let manifest = std::fs::read_to_string(ladder.join("ladder.toml"))
        .unwrap()
        .replace("title = \"SGEMM", "title = \"\\u001b]0;PWNED\\u0007SGEMM")
        .replace(
            "title = \"naive\"",
            "title = \"na\\u001b[2Jive\"\nnotes = \"n.md\"",
        )
        .replace("technique = \"one", "technique = \"\\u001bcone");
    std::fs::write(ladder.join("ladder.toml"), manifest).unwrap();
    std::fs::write(
        ladder.join("n.md"),
        "# Note\n\nrings \x07 and \x1b[31mred\r\n",
    )
    .unwrap();
    let out = stallscope()
        .args(["report", "--format", "html", "--profiles"])
        .arg(dir.path())
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for shown in [
        "\\u{1b}]0;PWNED",
        "na\\u{1b}[2Jive",
        "\\u{1b}cone",
        "rings \\u{7}",
    ] {
        assert!(page.contains(shown), "{shown} not in the page");
    }
    assert!(
        !page.contains(['\x1b', '\x07']),
        "a raw control character in the page"
    );
}

/// A ladder folder whose name carries an escape sequence, and whose manifest cannot be
/// read: the error naming it (from `report` and from `check`) shows it escaped.
#[test]
fn a_broken_ladders_name_is_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("l\x1b[2J");
    std::fs::create_dir(&ladder).unwrap();
    std::fs::write(ladder.join("ladder.toml"), "name = [\n").unwrap();
    for args in [&["report"][..], &["check"][..]] {
        let out = stallscope()
            .args(args)
            .arg("--profiles")
            .arg(dir.path())
            .output()
            .unwrap();
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            shown.contains("l\\u{1b}[2J") && !shown.contains('\x1b'),
            "{args:?}: {shown}"
        );
    }
}

#[test]
fn report_markdown_shows_escape_sequences_of_imported_text_escaped() {
    let out = output_on_crafted(&["report", "--format", "markdown"]);
    assert!(shows_escaped(&out), "{out}");
}

#[test]
fn report_json_keeps_the_kernel_name_as_it_is() {
    let out = output_on_crafted(&["report", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let kernels: Vec<&str> = v["ladders"][0]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["kernel"].as_str())
        .collect();
    assert!(
        kernels
            .iter()
            .any(|k| k.starts_with(&format!("{HOSTILE}("))),
        "{kernels:?}"
    );
}

#[test]
fn compare_table_shows_escape_sequences_of_imported_text_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = crafted_export(dir.path());
    let out = stallscope()
        .arg("compare")
        .arg(&file)
        .arg(fixture("sgemm/det.csv"))
        .args(["--launch-a", "0", "--launch-b", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = String::from_utf8(out.stdout).unwrap();
    assert!(shows_escaped(&out), "{out}");
}

/// The explorer's screen on the crafted export, in one view, as text.
fn explorer_screen(view: stallscope::tui::action::View) -> String {
    use ratatui::{Terminal, backend::TestBackend};
    use stallscope::tui::action::Action;
    use stallscope::tui::ladder_state::LadderState;
    use stallscope::tui::state::App;
    let dir = tempfile::tempdir().unwrap();
    let file = crafted_export(dir.path());
    let ladder = stallscope::model::load_files(
        &[file],
        SizeLimits::DEFAULT,
        &mut stallscope::model::LoadReport::default(),
    )
    .unwrap();
    let mut app = App::new(
        vec![LadderState::new(ladder)],
        stallscope::tui::theme::Theme { color: false },
    );
    app.update(Action::Show(view));
    let (w, h) = (200, 40);
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| stallscope::tui::frame::draw(f, &app))
        .unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect()
}

#[test]
fn the_explorer_shows_escape_sequences_of_imported_text_escaped() {
    let screen = explorer_screen(stallscope::tui::action::View::Inspect);
    assert!(screen.contains(ESCAPED), "{screen}");
}

/// The explorer under a pseudo-terminal, ended by a signal: what it wrote after the
/// signal, and how it ended.
#[cfg(unix)]
mod signals {
    use super::common::repo;
    use nix::pty::{Winsize, openpty};
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    use std::io::Read;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{ExitStatus, Stdio};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    const ENTER_ALTERNATE: &[u8] = b"\x1b[?1049h";
    const LEAVE_ALTERNATE: &[u8] = b"\x1b[?1049l";

    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }

    /// Waits until `done` holds for the bytes read so far, or 20 s have passed.
    fn wait_for(out: &Mutex<Vec<u8>>, done: impl Fn(&[u8]) -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if done(&out.lock().unwrap()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn explorer_ended_by(signal: Signal) -> (Vec<u8>, ExitStatus) {
        let size = Winsize {
            ws_row: 40,
            ws_col: 140,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let pty = openpty(Some(&size), None).unwrap();
        let tty = std::fs::File::from(pty.slave);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_stallscope"))
            .current_dir(repo())
            .env("TERM", "xterm-256color")
            .env_remove("STALLSCOPE_PROFILES")
            .stdin(Stdio::from(tty.try_clone().unwrap()))
            .stdout(Stdio::from(tty.try_clone().unwrap()))
            .stderr(Stdio::from(tty))
            .spawn()
            .unwrap();
        // The parent's copies of the terminal side are closed now: the reader sees the
        // end once the child is gone.
        let out = Arc::new(Mutex::new(Vec::new()));
        let reader = {
            let out = Arc::clone(&out);
            let mut master = std::fs::File::from(pty.master);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = master.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    out.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            })
        };
        // Up and drawing: the alternate screen entered and a frame after it.
        let drawn = wait_for(&out, |o| {
            find(o, ENTER_ALTERNATE).is_some_and(|i| o.len() > i + 2000)
        });
        if !drawn {
            let _ = child.kill();
        }
        assert!(drawn, "the explorer never drew");
        let mark = out.lock().unwrap().len();
        kill(Pid::from_raw(child.id() as i32), signal).unwrap();
        let status = child.wait().unwrap();
        reader.join().unwrap();
        let after = out.lock().unwrap()[mark..].to_vec();
        (after, status)
    }

    fn assert_leaves_the_alternate_screen(signal: Signal) {
        let (after, _) = explorer_ended_by(signal);
        assert!(
            find(&after, LEAVE_ALTERNATE).is_some(),
            "{}",
            String::from_utf8_lossy(&after)
        );
    }

    #[test]
    fn sigterm_leaves_the_alternate_screen() {
        assert_leaves_the_alternate_screen(Signal::SIGTERM);
    }

    #[test]
    fn sighup_leaves_the_alternate_screen() {
        assert_leaves_the_alternate_screen(Signal::SIGHUP);
    }

    #[test]
    fn sigterm_still_ends_the_explorer_by_that_signal() {
        let (_, status) = explorer_ended_by(Signal::SIGTERM);
        assert_eq!(status.signal(), Some(Signal::SIGTERM as i32));
    }
}
