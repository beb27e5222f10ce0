//! Benchmark of the explorer's frames (release build, no terminal: a test backend).
//!
//! * First frame: from loading the built-in profiles (parse, merge, analyse) to the
//!   first rendered frame, as `stallscope` does at start. The source pages are known
//!   by their summaries there (their listings are read when a view shows them).
//! * Slowest frame: a ladder of 20 versions with source pages (the bundled
//!   flash-attention versions repeated), every view for every version at 120×40 and
//!   200×60, and the compare view of every adjacent pair.
//!
//! Run: `cargo bench --bench tui_frames`.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::tui::action::{Action, View};
use stallscope::tui::frame;
use stallscope::tui::ladder_state::LadderState;
use stallscope::tui::state::App;
use stallscope::tui::theme::Theme;
use std::time::{Duration, Instant};

fn main() {
    let start = Instant::now();
    let ladders = model::load_ladders(
        &Store::embedded(SizeLimits::DEFAULT),
        &Store::embedded(SizeLimits::DEFAULT).default_profiles(),
        &mut LoadReport::default(),
    )
    .expect("the built-in profiles load");
    let app = App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        Theme { color: true },
    );
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| frame::draw(f, &app)).unwrap();
    let first = start.elapsed();
    // The trail on that frame is complete: every version with a source page has its
    // hottest instruction class (from the page's summary; no listing was read).
    for ls in &app.ladders {
        for (v, a) in ls.ladder.versions.iter().zip(&ls.analysis.versions) {
            let page = v.profile.as_ref().and_then(|p| p.source.as_ref());
            if let Some(page) = page {
                assert!(!page.rows_read(), "{} read its listing", v.id);
                assert!(
                    !a.hot_ops.is_empty(),
                    "{} has no hot instruction class",
                    v.id
                );
            }
        }
    }
    println!(
        "first frame on the built-in profiles: {:.1} ms (load, analyse, draw)",
        first.as_secs_f64() * 1e3
    );

    // 20 versions with source pages, from the bundled flash-attention ladder.
    let fa = model::load_ladder(
        &Store::embedded(SizeLimits::DEFAULT),
        std::path::Path::new("profiles/flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let with_source: Vec<_> = fa
        .versions
        .iter()
        .filter(|v| v.profile.as_ref().is_some_and(|p| p.source.is_some()))
        .cloned()
        .collect();
    let mut big = fa.clone();
    big.versions = (0..20)
        .map(|i| {
            let mut v = with_source[i % with_source.len()].clone();
            v.id = format!("v{:02}", i + 1);
            v.baseline = false;
            v
        })
        .collect();
    let mut app = App::new(vec![LadderState::new(big)], Theme { color: true });
    let mut slowest = (Duration::ZERO, String::new());
    let mut frames = 0;
    for (w, h) in [(120u16, 40u16), (200, 60)] {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        for pos in 0..20 {
            app.update(Action::SelectVersion(pos));
            for view in View::ALL {
                app.update(Action::Show(view));
                let t = Instant::now();
                term.draw(|f| frame::draw(f, &app)).unwrap();
                let d = t.elapsed();
                frames += 1;
                if d > slowest.0 {
                    slowest = (d, format!("{} of v{:02} at {w}×{h}", view.title(), pos + 1));
                }
            }
        }
    }
    println!(
        "slowest of {frames} frames on a 20-version ladder with source pages: {:.2} ms ({})",
        slowest.0.as_secs_f64() * 1e3,
        slowest.1
    );
}
