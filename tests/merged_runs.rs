//! A version whose pages are of two ncu runs (the raw page of process 633 and the
//! details page of process 699 of cuDNN's attention kernel, real exports) says so in
//! every view and format, from its profile's warnings; a version of one run says
//! nothing of the kind.

mod common;

use assert_cmd::Command;
use common::fixture;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::tui::action::{Action, View};
use stallscope::tui::frame;
use stallscope::tui::ladder_state::LadderState;
use stallscope::tui::state::App;
use stallscope::tui::theme::Theme;

const RAW: &str = "h200/sdpa_cudnn_raw.csv";
const DETAILS: &str = "h200/sdpa_cudnn_details.csv";
/// The warning's words, as every format writes them.
const WARNING: &str = "warning: pages of two ncu runs merged into one launch of cudnn_generated";
const MARKER: &str = "⚠ merged from 2 ncu runs";

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

/// A profiles folder with a ladder `two`: v1 the raw page alone (one run), v2 the raw
/// page and the details page (two runs).
fn profiles() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let ladder = dir.path().join("two");
    std::fs::create_dir_all(&ladder).unwrap();
    for f in [RAW, DETAILS] {
        let from = fixture(f);
        std::fs::copy(&from, ladder.join(from.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        ladder.join("ladder.toml"),
        r#"title = "pages of one run and of two"

[[version]]
id = "v1"
title = "one run"
files = ["sdpa_cudnn_raw.csv"]

[[version]]
id = "v2"
title = "two runs"
files = ["sdpa_cudnn_raw.csv", "sdpa_cudnn_details.csv"]
"#,
    )
    .unwrap();
    dir
}

fn stdout(profiles: &std::path::Path, args: &[&str]) -> String {
    let out = stallscope()
        .env("STALLSCOPE_PROFILES", profiles)
        .args(args)
        .assert()
        .success();
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// Both runs with their durations, as the warning names them.
fn names_both_runs(s: &str) -> bool {
    ["process 633", "61.02 µs", "process 699", "60.38 µs"]
        .iter()
        .all(|w| s.contains(w))
}

#[test]
fn report_formats_say_which_version_is_of_two_runs() {
    let dir = profiles();
    for format in ["table", "markdown", "html"] {
        let out = stdout(dir.path(), &["report", "--format", format]);
        assert!(
            out.contains("v2: warning: pages of two ncu runs merged") && names_both_runs(&out),
            "{format}:\n{out}"
        );
        assert!(!out.contains("v1: warning"), "{format}:\n{out}");
        assert_eq!(out.matches("two ncu runs merged").count(), 1, "{format}");
    }
    // The marker beside v2 in the version list of the table and Markdown.
    for format in ["table", "markdown"] {
        let out = stdout(dir.path(), &["report", "--format", format]);
        let line = out.lines().find(|l| l.contains("two runs")).unwrap();
        assert!(line.contains(MARKER), "{format}: {line}");
        let line = out.lines().find(|l| l.contains("one run")).unwrap();
        assert!(!line.contains('⚠'), "{format}: {line}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&stdout(dir.path(), &["report", "--format", "json"])).unwrap();
    let versions = &json["ladders"][0]["versions"];
    assert!(versions[0].get("warnings").is_none(), "{}", versions[0]);
    let w = versions[1]["warnings"].as_array().unwrap();
    assert_eq!(w.len(), 1);
    let w = w[0].as_str().unwrap();
    assert!(w.starts_with(WARNING) && names_both_runs(w), "{w}");

    // report --versions: under the step's tables.
    let out = stdout(dir.path(), &["report", "--versions", "v1,v2"]);
    assert!(
        out.contains("- v2: warning: pages of two ncu runs") && names_both_runs(&out),
        "{out}"
    );
}

#[test]
fn compare_formats_say_which_side_is_of_two_runs() {
    let dir = profiles();
    for format in ["table", "markdown", "html"] {
        let out = stdout(dir.path(), &["compare", "v1", "v2", "--format", format]);
        assert!(
            out.contains("v2 two runs: warning: pages of two ncu runs merged")
                && names_both_runs(&out),
            "{format}:\n{out}"
        );
        assert_eq!(out.matches("two ncu runs merged").count(), 1, "{format}");
    }
    let json: serde_json::Value = serde_json::from_str(&stdout(
        dir.path(),
        &["compare", "v1", "v2", "--format", "json"],
    ))
    .unwrap();
    assert!(json["a"].get("warnings").is_none(), "{}", json["a"]);
    let w = json["b"]["warnings"][0].as_str().unwrap();
    assert!(w.starts_with(WARNING) && names_both_runs(w), "{w}");
}

#[test]
fn a_ladder_of_one_run_says_nothing_of_two() {
    // The bundled SGEMM ladder: each version's pages are of one report.
    for args in [
        &["report", "--ladder", "sgemm-toy"][..],
        &["report", "--ladder", "sgemm-toy", "--format", "json"],
        &["report", "--ladder", "sgemm-toy", "--format", "html"],
        &["compare", "v1", "v2", "--ladder", "sgemm-toy"],
        &[
            "compare",
            "v1",
            "v2",
            "--ladder",
            "sgemm-toy",
            "--format",
            "json",
        ],
    ] {
        let out = common::stdout_on_bundled(args);
        assert!(
            !out.contains("ncu runs") && !out.contains('⚠') && !out.contains("\"warnings\""),
            "{args:?}:\n{out}"
        );
    }
}

#[test]
fn a_folder_of_pages_of_two_runs_opens_with_the_warning() {
    let dir = tempfile::tempdir().unwrap();
    for f in [RAW, DETAILS] {
        let from = fixture(f);
        std::fs::copy(&from, dir.path().join(from.file_name().unwrap())).unwrap();
    }
    // Without a terminal, `open` writes the report.
    let out = stallscope().arg("open").arg(dir.path()).assert().success();
    let (o, e) = (out.get_output(), out.get_output());
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(MARKER) && stdout.contains(WARNING) && names_both_runs(&stdout),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&e.stderr).contains("two ncu runs"));
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame::draw(f, app)).unwrap();
    let buf = term.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect()
}

#[test]
fn the_explorer_marks_a_version_of_two_runs_in_every_view() {
    let dir = profiles();
    let mut report = LoadReport::default();
    let ladders =
        model::load_ladders(&Store::disk(SizeLimits::DEFAULT), dir.path(), &mut report).unwrap();
    let mut app = App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        Theme { color: false },
    );
    app.load_warnings = report.lines();
    let at = |app: &mut App, id: &str| {
        let ls = app.ladder();
        let pos = ls
            .order
            .iter()
            .position(|&i| ls.ladder.versions[i].id == id)
            .unwrap();
        app.update(Action::SelectVersion(pos));
    };
    for view in [
        View::Timeline,
        View::Compare,
        View::Inspect,
        View::Source,
        View::Bottleneck,
        View::Notes,
    ] {
        app.update(Action::Show(view));
        at(&mut app, "v2");
        for (w, h) in [(160, 40), (80, 24)] {
            let s = screen(&app, w, h);
            // The headline's marker; the status line's warning, cut at 80 columns.
            assert!(s.contains(MARKER), "{view:?} {w}×{h}:\n{s}");
            assert!(
                s.contains("version v2: pages of t"),
                "{view:?} {w}×{h}:\n{s}"
            );
        }
        at(&mut app, "v1");
        let s = screen(&app, 160, 40);
        assert!(!s.contains('⚠'), "{view:?}:\n{s}");
    }
    // The compare view (v2 against its parent v1) writes the warning in full.
    app.update(Action::Show(View::Compare));
    at(&mut app, "v2");
    let s: String = screen(&app, 200, 40)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join(" ");
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains("⚠ v2: warning: pages of two ncu runs merged") && names_both_runs(&joined),
        "{s}"
    );
}

/// `check` lists the warning under the version and counts it in its summary: a folder
/// with a version merged from two runs is never "no problems" alone.
#[test]
fn check_lists_and_counts_the_warning() {
    let dir = profiles();
    let out = stallscope()
        .args(["check", "--profiles"])
        .arg(dir.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stdout.contains("version v2: warning: pages of two ncu runs")
            || stdout.contains("version v2: pages of two ncu runs"),
        "{stdout}"
    );
    assert!(!stdout.contains("version v1:"), "{stdout}");
    assert!(stderr.contains("no problems, 1 warning(s)"), "{stderr}");
}
