//! A profiles folder with a broken ladder beside a good one: the good one opens in the
//! explorer, and the status line names the broken one with its error.

mod common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::tui::frame;
use stallscope::tui::ladder_state::LadderState;
use stallscope::tui::state::App;
use stallscope::tui::theme::Theme;

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn the_status_line_names_a_broken_ladder_while_the_others_open() {
    let dir = tempfile::tempdir().unwrap();
    let profiles = dir.path().join("profiles");
    copy_dir(
        &common::profiles().join("sgemm-toy"),
        &profiles.join("sgemm-toy"),
    );
    std::fs::create_dir_all(profiles.join("broken")).unwrap();
    std::fs::write(
        profiles.join("broken/ladder.toml"),
        "title = \"broken\"\n[[version]\nid = \"v1\"\n",
    )
    .unwrap();

    let mut report = LoadReport::default();
    let ladders =
        model::load_ladders(&Store::disk(SizeLimits::DEFAULT), &profiles, &mut report).unwrap();
    let mut app = App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        Theme { color: false },
    );
    app.load_warnings = report.lines();

    let mut term = Terminal::new(TestBackend::new(160, 30)).unwrap();
    term.draw(|f| frame::draw(f, &app)).unwrap();
    let buf = term.backend().buffer();
    let screen: String = (0..30)
        .map(|y| (0..160).map(|x| buf[(x, y)].symbol()).collect::<String>() + "\n")
        .collect();
    assert!(
        app.ladders.len() == 1
            && screen.contains("ladder broken cannot be read: ")
            && screen.contains("ladder.toml:2:11"),
        "{screen}"
    );
}
