//! The explorer without a terminal: state changes from actions, every view rendered on a
//! test backend at 120×40 and 80×24 (snapshots), and the keymap's consistency.

mod common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::tui::action::{Action, View};
use stallscope::tui::keymap::{Context, KEYMAP};
use stallscope::tui::ladder_state::LadderState;
use stallscope::tui::listing::SourceSort;
use stallscope::tui::state::{App, Effect, JobEvent, JobKind};
use stallscope::tui::theme::Theme;
use stallscope::tui::{self, frame, views};

fn app() -> App {
    let ladders = model::load_ladders(
        &Store::disk(SizeLimits::DEFAULT),
        &common::profiles(),
        &mut LoadReport::default(),
    )
    .unwrap();
    App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        Theme { color: false },
    )
}

fn render(app: &App, w: u16, h: u16) -> String {
    let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
    term.draw(|f| frame::draw(f, app)).unwrap();
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let line: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Shows the ladder named `name` (L until it is shown).
fn show_ladder(app: &mut App, name: &str) {
    for _ in 0..app.ladders.len() {
        if app.ladder().ladder.name == name {
            return;
        }
        app.update(Action::NextLadder);
    }
    panic!("no ladder {name}");
}

fn select(app: &mut App, id: &str) {
    let ls = app.ladder();
    let pos = ls
        .order
        .iter()
        .position(|&i| ls.ladder.versions[i].id == id)
        .unwrap();
    app.update(Action::SelectVersion(pos));
}

#[test]
fn views_cycle_and_versions_select() {
    let mut a = app();
    assert_eq!(a.view, View::Timeline);
    a.update(Action::NextView);
    assert_eq!(a.view, View::Compare);
    a.update(Action::PrevView);
    a.update(Action::PrevView);
    assert_eq!(a.view, View::Notes);
    a.update(Action::Show(View::Source));
    assert_eq!(a.view, View::Source);

    assert_eq!(a.selected, 0);
    a.update(Action::PrevVersion);
    assert_eq!(a.selected, 0, "no wrap below the first version");
    for _ in 0..100 {
        a.update(Action::NextVersion);
    }
    assert_eq!(a.selected, a.ladder().order.len() - 1, "stops at the last");
    // Baselines come after the ladder's own versions.
    let last = a.version_index().unwrap();
    assert!(a.ladder().ladder.versions[last].baseline);
}

#[test]
fn compare_pairs_the_marked_or_previous_version() {
    let mut a = app();
    select(&mut a, "v09");
    let idx = |a: &App, id: &str| {
        a.ladder()
            .ladder
            .versions
            .iter()
            .position(|v| v.id == id)
            .unwrap()
    };
    assert_eq!(a.compare_pair(), Some((idx(&a, "v08"), idx(&a, "v09"))));
    select(&mut a, "v05");
    a.update(Action::Mark);
    select(&mut a, "v09");
    assert_eq!(a.compare_pair(), Some((idx(&a, "v05"), idx(&a, "v09"))));
    select(&mut a, "v05");
    a.update(Action::Mark);
    assert_eq!(a.marked, None, "m again unmarks");
}

/// The first version with nothing marked: no pair, and the view says why (it used to
/// compare the version with itself, every row "same").
#[test]
fn compare_of_the_first_version_says_there_is_no_earlier_one() {
    let mut a = app();
    select(&mut a, "v01");
    a.update(Action::Show(View::Compare));
    assert_eq!(a.compare_pair(), None);
    insta::assert_snapshot!("compare_first_version_80x24", render(&a, 80, 24));
}

#[test]
fn compare_pairs_a_version_with_the_one_it_was_built_on() {
    let mut a = app();
    select(&mut a, "v17");
    let ls = a.ladder();
    let pair = a.compare_pair().map(|(x, y)| {
        (
            ls.ladder.versions[x].id.clone(),
            ls.ladder.versions[y].id.clone(),
        )
    });
    assert_eq!(pair, Some(("v15".to_string(), "v17".to_string())));
}

#[test]
fn the_timeline_shows_where_the_ladder_branches() {
    let mut a = app();
    select(&mut a, "v17");
    assert!(render(&a, 120, 40).contains("v17←v15"));
}

#[test]
fn the_header_names_its_signals_in_words() {
    let a = app();
    let shown = render(&a, 160, 40);
    let header = shown.lines().nth(1).unwrap();
    assert!(
        header.contains("barrier stalls")
            && header.contains("short-scoreboard stalls")
            && header.contains("tensor pipe active"),
        "{header}"
    );
}

#[test]
fn the_bottleneck_view_explains_the_row_under_the_cursor() {
    let mut a = app();
    select(&mut a, "v13");
    a.update(Action::Show(View::Bottleneck));
    a.update(Action::Down);
    let (reason, _) = a.bottleneck_reason().unwrap();
    let shown = render(&a, 200, 50).replace('\n', " ");
    let help = stallscope::analysis::catalogue::stall_help(reason);
    assert!(
        shown.contains(&format!("{reason} (")) && shown.contains(help),
        "{shown}"
    );
}

#[test]
fn the_bottleneck_cursor_stays_on_the_table() {
    let mut a = app();
    select(&mut a, "v13");
    a.update(Action::Show(View::Bottleneck));
    a.update(Action::Bottom);
    let rows = a.ladder().analysis.versions[a.version_index().unwrap()]
        .matrix
        .as_ref()
        .unwrap()
        .reasons()
        .len();
    a.update(Action::Up);
    assert_eq!(a.bottleneck.row, rows - 2);
}

#[test]
fn filter_typing_and_cancel() {
    let mut a = app();
    a.update(Action::FilterStart);
    assert_eq!(a.view, View::Inspect);
    assert!(a.inspect.editing);
    for c in "dram".chars() {
        a.update(Action::FilterInput(c));
    }
    a.update(Action::FilterBackspace);
    assert_eq!(a.inspect.filter, "dra");
    a.update(Action::FilterEnd);
    assert!(!a.inspect.editing);
    assert_eq!(a.inspect.filter, "dra");
    let shown = render(&a, 120, 40);
    assert!(shown.contains("DRAM Throughput"), "{shown}");
    assert!(!shown.contains("Registers Per Thread"));
    a.update(Action::FilterStart);
    a.update(Action::FilterCancel);
    assert!(a.inspect.filter.is_empty());
}

/// The inspect view of v09 with the filter "dram" kept (typed, then Enter).
fn filtered_on_dram() -> App {
    let mut a = app();
    select(&mut a, "v09");
    a.update(Action::FilterStart);
    for c in "dram".chars() {
        a.update(Action::FilterInput(c));
    }
    a.update(Action::FilterEnd);
    a
}

#[test]
fn a_kept_filter_is_shown_with_how_to_clear_it_beside_a_status_message() {
    let mut a = filtered_on_dram();
    a.update(Action::Mark);
    let shown = render(&a, 80, 24);
    assert!(
        shown.contains("v09 marked")
            && shown.contains("filter: dram  / changes it · Esc clears it"),
        "{shown}"
    );
}

#[test]
fn the_filter_that_follows_to_another_version_is_shown_there() {
    let mut a = filtered_on_dram();
    a.update(Action::NextVersion);
    let shown = render(&a, 80, 24);
    assert!(
        shown.contains("v10 ") && shown.contains("filter: dram"),
        "{shown}"
    );
}

#[test]
fn the_filter_being_typed_is_shown_though_a_status_message_was() {
    let mut a = app();
    a.update(Action::Mark);
    a.update(Action::FilterStart);
    a.update(Action::FilterInput('d'));
    let shown = render(&a, 80, 24);
    assert!(
        shown.contains("filter: d▏  Enter keeps it · Esc clears it"),
        "{shown}"
    );
}

#[test]
fn esc_clears_a_kept_filter_before_it_quits() {
    let mut a = filtered_on_dram();
    a.update(Action::Quit);
    assert_eq!((a.inspect.filter.as_str(), a.quit), ("", false));
}

#[test]
fn inspect_filtered_80x24() {
    let a = filtered_on_dram();
    insta::assert_snapshot!(render(&a, 80, 24));
}

#[test]
fn keys_while_typing_go_to_the_filter() {
    let mut a = app();
    a.update(Action::FilterStart);
    let key = |c| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    // q and Tab would quit or switch views; while typing they are text.
    assert_eq!(
        tui::actions(&a, &key('q'), Rect::new(0, 0, 120, 40)),
        vec![Action::FilterInput('q')]
    );
    let esc = Event::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(
        tui::actions(&a, &esc, Rect::new(0, 0, 120, 40)),
        vec![Action::FilterCancel]
    );
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert_eq!(
        tui::actions(&a, &ctrl_c, Rect::new(0, 0, 120, 40)),
        vec![Action::QuitNow]
    );
    let back = Event::Key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    assert_eq!(
        tui::actions(&a, &back, Rect::new(0, 0, 120, 40)),
        vec![Action::FilterBackspace]
    );
    // Other Ctrl keys are no text, and mean nothing while typing.
    let ctrl_x = Event::Key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::CONTROL));
    assert_eq!(tui::actions(&a, &ctrl_x, Rect::new(0, 0, 120, 40)), vec![]);
}

/// The help and the kernel name take the keys while they are open, from the keymap (the
/// help lists them, and the footer shows how to close them).
#[test]
fn the_popups_keys_come_from_the_keymap() {
    let key = |c| Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    let area = Rect::new(0, 0, 120, 40);
    let mut a = app();
    a.update(Action::ToggleHelp);
    assert_eq!(
        tui::actions(&a, &key('j'), area),
        vec![Action::HelpScroll(1)]
    );
    // Tab switches views only once the help is closed.
    let tab = Event::Key(KeyEvent::new(KeyCode::Tab, KeyModifiers::NONE));
    assert_eq!(tui::actions(&a, &tab, area), vec![]);
    assert_eq!(tui::actions(&a, &key('q'), area), vec![Action::ToggleHelp]);
    assert!(render(&a, 120, 40).contains("Esc close"));
    a.update(Action::ToggleHelp);
    a.update(Action::ToggleKernel);
    assert_eq!(tui::actions(&a, &key('j'), area), vec![]);
    assert_eq!(
        tui::actions(&a, &key('q'), area),
        vec![Action::ToggleKernel]
    );
}

/// Ctrl-C quits whatever is open, as the README says: with the help shown and a search
/// being typed in the source view it quitted nothing (it closed the help, then cleared
/// the text and left the typing on).
#[test]
fn ctrl_c_quits_whatever_is_open() {
    let mut a = app();
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "LD");
    a.update(Action::ToggleHelp);
    let ctrl_c = Event::Key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    for action in tui::actions(&a, &ctrl_c, Rect::new(0, 0, 120, 40)) {
        a.update(action);
    }
    assert!(a.quit);
}

#[test]
fn quit_closes_help_first() {
    let mut a = app();
    a.update(Action::ToggleHelp);
    a.update(Action::Quit);
    assert!(!a.help && !a.quit);
    a.update(Action::Quit);
    assert!(a.quit);
}

#[test]
fn source_sorting_and_hot_spots() {
    let mut a = app();
    select(&mut a, "v09");
    a.update(Action::Show(View::Source));
    let by_samples = render(&a, 120, 40);
    assert!(by_samples.contains("by stall samples"));
    a.update(Action::NextHot);
    assert_eq!(
        a.scroll_of(View::Source),
        1,
        "the second hottest line is the next hot spot"
    );
    a.update(Action::ToggleSort);
    assert_eq!(a.source.sort, SourceSort::Address);
    assert_eq!(a.scroll_of(View::Source), 0);
    a.update(Action::NextHot);
    let first = a.scroll_of(View::Source);
    assert!(first > 0);
    a.update(Action::NextHot);
    let second = a.scroll_of(View::Source);
    assert!(second > first, "a second hot spot further down");
    a.update(Action::PrevHot);
    assert_eq!(
        a.scroll_of(View::Source),
        first,
        "back to the first hot spot"
    );
}

#[test]
fn run_asks_for_a_job_and_refuses_a_second_one() {
    let mut a = app();
    select(&mut a, "v09");
    let effect = a.update(Action::Run { all: false });
    match effect {
        Some(Effect::StartJob(req)) => {
            assert_eq!(req.kind, JobKind::Run);
            assert_eq!(req.versions, vec!["v09".to_string()]);
            assert_eq!(req.ladder, "flash-attention");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        a.update(Action::Profile { all: true }).is_none(),
        "one job at a time"
    );
    assert!(matches!(a.update(Action::StopJob), Some(Effect::CancelJob)));
    a.update(JobEvent::Done {
        outcome: Err("no CUDA driver found".into()),
        reloaded: None,
    });
    assert!(a.job.is_none());
    let shown = render(&a, 120, 40);
    assert!(
        shown.contains("run failed: no CUDA driver found"),
        "{shown}"
    );
}

#[test]
fn a_streamed_run_result_updates_the_timeline() {
    let mut a = app();
    let mut r = a.ladder().ladder.version("v09").unwrap().runs[0].clone();
    r.median_us = Some(50.0);
    r.shape = stallscope::kinds::attention::shape(1, 64, 1024, 128, false);
    a.update(JobEvent::Result {
        ladder: "flash-attention".into(),
        result: Box::new(r),
    });
    let i = a
        .ladder()
        .ladder
        .versions
        .iter()
        .position(|v| v.id == "v09")
        .unwrap();
    assert_eq!(
        a.ladder().analysis.versions[i].get(stallscope::analysis::MetricId::RunTime),
        Some(50_000.0)
    );
}

#[test]
fn mouse_selects_tabs_and_version_columns_and_scrolls() {
    let mut a = app();
    let area = Rect::new(0, 0, 120, 40);
    let click = |x, y| {
        Event::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        })
    };
    let (_, x0, _) = frame::tab_spans(&a, 120)
        .into_iter()
        .find(|t| t.0 == View::Notes)
        .unwrap();
    assert_eq!(
        tui::actions(&a, &click(x0 + 1, 0), area),
        vec![Action::Show(View::Notes)]
    );
    // The third version column of the timeline.
    let body = frame::areas(area).body;
    let [_, _, table, _] = views::timeline::layout(&a.scene(), body);
    let cols = views::timeline::columns(&a.scene(), table.width);
    let x = table.x + cols.name_w + 1 + 2 * (cols.col_w + 1) + 1;
    let acts = tui::actions(&a, &click(x, table.y + 3), area);
    assert_eq!(acts, vec![Action::SelectVersion(2)]);
    for act in acts {
        a.update(act);
    }
    assert_eq!(a.selected, 2);
    let wheel = Event::Mouse(MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 5,
        row: 10,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(tui::actions(&a, &wheel, area), vec![Action::Down; 3]);
}

#[test]
fn no_panic_at_any_size() {
    let mut a = app();
    select(&mut a, "v09");
    for view in View::ALL {
        a.update(Action::Show(view));
        for (w, h) in [
            (1, 1),
            (10, 3),
            (20, 6),
            (40, 10),
            (80, 24),
            (200, 60),
            (300, 8),
        ] {
            let _ = render(&a, w, h);
        }
        a.update(Action::Bottom);
        let _ = render(&a, 80, 24);
    }
    a.update(Action::ToggleHelp);
    for (w, h) in [(20, 6), (80, 24), (120, 40)] {
        let _ = render(&a, w, h);
    }
}

#[test]
fn snapshots_of_every_view() {
    for (w, h) in [(120u16, 40u16), (80, 24)] {
        let mut a = app();
        select(&mut a, "v09");
        for view in View::ALL {
            a.update(Action::Show(view));
            insta::assert_snapshot!(format!("{}_{w}x{h}", view.title()), render(&a, w, h));
        }
        a.update(Action::ToggleHelp);
        insta::assert_snapshot!(format!("help_{w}x{h}"), render(&a, w, h));
        // The other ladder: the SGEMM toy, its first version.
        let mut b = app();
        show_ladder(&mut b, "sgemm-toy");
        insta::assert_snapshot!(format!("sgemm_timeline_{w}x{h}"), render(&b, w, h));
    }
}

#[test]
fn at_80_columns_the_footer_starts_with_the_keys_a_newcomer_needs() {
    let mut a = app();
    for view in View::ALL {
        a.update(Action::Show(view));
        let shown = render(&a, 80, 24);
        let footer = shown.lines().last().unwrap();
        assert!(
            footer.starts_with("←→ version  ↑↓ scroll  m mark  L ladder"),
            "{view:?}: {footer}"
        );
    }
}

#[test]
fn the_source_view_shows_branch_targets_as_offsets() {
    // v13 waits on a BRA (an mbarrier try-wait loop): its hottest lines are branches.
    let mut a = app();
    select(&mut a, "v13");
    a.update(Action::Show(View::Source));
    let shown = render(&a, 120, 40);
    assert!(
        shown.contains("BRA 0x") && !shown.contains("0x7f"),
        "{shown}"
    );
}

#[test]
fn the_footer_names_each_binding_by_its_first_key() {
    for b in KEYMAP {
        if let Some(f) = b.footer {
            assert!(
                f.keys.starts_with(&b.keys[0].label()),
                "{} for {:?}",
                f.keys,
                b.action
            );
        }
    }
}

#[test]
fn keymap_binds_each_key_once_per_context_and_documents_every_action() {
    // A key bound in a view must not also be bound globally, and never twice anywhere;
    // only the modes (a kept search, what is typed, the help, the kernel name and the
    // whole message: each
    // says so in the help, and Esc ends it) come before the other keys.
    let is_mode = |c: Context| {
        matches!(
            c,
            Context::Search
                | Context::Typing
                | Context::Help
                | Context::KernelName
                | Context::Message
        )
    };
    for (i, a) in KEYMAP.iter().enumerate() {
        for b in &KEYMAP[i + 1..] {
            let mode = is_mode(a.context) || is_mode(b.context);
            let anywhere = a.context == Context::Anywhere || b.context == Context::Anywhere;
            let overlap = a.context == b.context
                || anywhere
                || (!mode && (a.context == Context::Global || b.context == Context::Global));
            if !overlap {
                continue;
            }
            for ka in a.keys {
                assert!(
                    !b.keys.contains(ka),
                    "{} is bound to both {:?} and {:?}",
                    ka.label(),
                    a.action,
                    b.action
                );
            }
        }
    }
    // Every action a user can ask for has a key, and so a line in the help.
    let user_actions = [
        Action::Quit,
        Action::ToggleHelp,
        Action::NextView,
        Action::PrevView,
        Action::Show(View::Timeline),
        Action::Show(View::Compare),
        Action::Show(View::Inspect),
        Action::Show(View::Source),
        Action::Show(View::Bottleneck),
        Action::Show(View::Notes),
        Action::PrevVersion,
        Action::NextVersion,
        Action::Up,
        Action::Down,
        Action::PageUp,
        Action::PageDown,
        Action::Top,
        Action::Bottom,
        Action::NextLadder,
        Action::NextShape,
        Action::Mark,
        Action::FilterStart,
        Action::ToggleSort,
        Action::NextHot,
        Action::PrevHot,
        Action::Run { all: false },
        Action::Run { all: true },
        Action::Profile { all: false },
        Action::Profile { all: true },
        Action::StopJob,
        Action::Suspend,
        Action::SearchStart,
        Action::NextMatch,
        Action::PrevMatch,
        Action::ToggleKernel,
        Action::ToggleMessage,
        Action::MessageScroll(1),
        Action::MessageScroll(-1),
        Action::QuitNow,
        Action::FilterEnd,
        Action::FilterCancel,
        Action::FilterBackspace,
        Action::HelpScroll(1),
        Action::HelpScroll(-1),
    ];
    for action in user_actions {
        assert!(
            KEYMAP.iter().any(|b| b.action == action),
            "{action:?} has no key"
        );
    }
    let mut a = app();
    a.update(Action::ToggleHelp);
    let mut help = String::new();
    for _ in 0..10 {
        help.push_str(&render(&a, 120, 60));
        a.update(Action::HelpScroll(20));
    }
    for b in KEYMAP {
        assert!(help.contains(b.help), "the help lacks {:?}", b.help);
    }
}

#[test]
fn a_ladder_without_versions_yet_renders_and_can_be_run() {
    // A new ladder before its first run: nothing selected, every view and key survives.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ladder.toml"), "title = 'new'\n").unwrap();
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        dir.path(),
        &mut LoadReport::default(),
    )
    .unwrap();
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    assert_eq!(a.version_index(), None);
    for view in View::ALL {
        a.update(Action::Show(view));
        for action in [
            Action::NextVersion,
            Action::Mark,
            Action::NextHot,
            Action::Down,
            Action::ToggleSort,
        ] {
            a.update(action);
        }
        for (w, h) in [(80, 24), (120, 40), (20, 6)] {
            let shown = render(&a, w, h);
            if w == 120 {
                assert!(shown.contains("no versions yet"), "{shown}");
            }
        }
    }
    assert!(a.update(Action::Run { all: false }).is_none());
    assert!(matches!(
        a.update(Action::Run { all: true }),
        Some(Effect::StartJob(_))
    ));
}

/// `S` shows the run results of the next measured shape: the timeline's run time of v01
/// goes from the reference shape's to another's, the tab line says which, and inspect
/// lists every shape's run with its spread, clock and checks fields.
#[test]
fn shape_key_switches_the_run_results_shown() {
    let mut a = app();
    select(&mut a, "v01");
    let i = a.version_index().unwrap();
    let time =
        |a: &App| a.ladder().analysis.versions[i].get(stallscope::analysis::MetricId::RunTime);
    let at_reference = time(&a);
    let first = render(&a, 200, 40);
    assert!(first.contains("runs at 1,64,1024,128 (S)"), "{first}");
    a.update(Action::NextShape);
    assert_ne!(time(&a), at_reference, "another shape's run time");
    let next = render(&a, 200, 40);
    assert!(!next.contains("runs at 1,64,1024,128 (S)"), "{next}");
    assert!(next.contains("runs at 1,16,8192,128"), "{next}");
    a.update(Action::Show(View::Inspect));
    let shown = render(&a, 200, 60);
    assert!(shown.contains("run at 1,64,1024,128"), "{shown}");
    assert!(shown.contains("median (µs)"), "{shown}");
}

/// The bottleneck view tells a step from the version it was judged against: where the
/// parent has too few samples for a label, the labelled one before it (it showed the
/// parent's "no label" before the arrow, and the verdict against the other).
#[test]
fn the_bottleneck_view_names_the_version_a_step_was_compared_with() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::fixture("sgemm/src_sass.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let end = (2..lines.len())
        .find(|&i| lines[i].starts_with("\"Kernel Name\""))
        .unwrap();
    // The last 14 instructions of the first kernel: 95 samples, too few for a label.
    let few = [&lines[..2], &lines[end - 14..end]].concat().join("\n");
    let again = text.replace("\"Kernel Name\",\"mm_", "\"Kernel Name\",\"again_mm_");
    let mut paths = Vec::new();
    for (name, body) in [
        ("src_sass.csv", text.clone()),
        ("few.csv", few + "\n"),
        ("again.csv", again),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        paths.push(path);
    }
    let ladder =
        model::load_files(&paths, SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    select(&mut a, "4");
    a.update(Action::Show(View::Bottleneck));
    let shown = render(&a, 160, 40);
    // 3 (the naive kernel, unlabelled) was built on 1, the naive kernel's first launch.
    assert!(shown.contains("built on 3, compared with 1: "), "{shown}");
}

/// A source page with CUDA lines (`--print-source cuda,sass`) adds a third order to the
/// source view: the hottest CUDA lines, each with its SASS under it; a SASS-only page
/// cycles between two.
#[test]
fn cuda_lines_show_with_their_sass() {
    let ladder = model::load_files(
        &[
            common::fixture("sgemm/raw.csv"),
            common::fixture("sgemm/src_cs.csv"),
        ],
        SizeLimits::DEFAULT,
        &mut LoadReport::default(),
    )
    .unwrap();
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    a.update(Action::Show(View::Source));
    a.update(Action::ToggleSort);
    a.update(Action::ToggleSort);
    assert_eq!(a.source.sort, SourceSort::CudaLine);
    let shown = render(&a, 160, 40);
    assert!(shown.contains("under the hottest CUDA lines"), "{shown}");
    assert!(
        shown.contains("line 2") && shown.contains("__global__ void mm_naive"),
        "{shown}"
    );
    a.update(Action::ToggleSort);
    assert_eq!(a.source.sort, SourceSort::Samples);

    let mut sass_only = app();
    select(&mut sass_only, "v09");
    sass_only.update(Action::Show(View::Source));
    sass_only.update(Action::ToggleSort);
    sass_only.update(Action::ToggleSort);
    assert_eq!(
        sass_only.source.sort,
        SourceSort::Samples,
        "no CUDA lines to sort under"
    );
}

/// A version's run result at the reference shape (the one the explorer shows first),
/// from the bundled runs, and a figure of it as the explorer writes it.
fn bundled(version: &str) -> stallscope::model::RunResult {
    let ladders = model::load_ladders(
        &Store::disk(SizeLimits::DEFAULT),
        &common::profiles(),
        &mut LoadReport::default(),
    )
    .unwrap();
    let fa = ladders
        .iter()
        .find(|l| l.name == "flash-attention")
        .unwrap();
    let v = fa.versions.iter().find(|v| v.id == version).unwrap();
    let at = stallscope::kinds::attention::shape(1, 64, 1024, 128, false);
    common::run_at(v, &at).unwrap().clone()
}

/// A run's time as the explorer shows it (µs, about four digits).
fn shown_us(version: &str) -> String {
    stallscope::report::format::micros(bundled(version).median_us.unwrap())
}

/// The row of `render` output that starts with `name`.
fn row_of(screen: &str, name: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no row {name} in\n{screen}"))
        .to_string()
}

/// v13 is slower than v12, which it was built on: its time and TFLOPS carry the mark,
/// v12's (faster than its parent v11) do not.
#[test]
fn the_timeline_marks_a_time_worse_than_the_parents() {
    let mut a = app();
    select(&mut a, "v13");
    let screen = render(&a, 120, 40);
    let time = row_of(&screen, "Time (run)");
    assert!(
        time.contains(&format!("▼{}", shown_us("v13")))
            && time.contains(&shown_us("v12"))
            && !time.contains(&format!("▼{}", shown_us("v12"))),
        "{time}"
    );
    let tflops = format!("▼{:.1}", bundled("v13").tflops.unwrap());
    assert!(
        row_of(&screen, "TFLOPS (run)").contains(&tflops),
        "{screen}"
    );
}

/// With v01's 9444 µs in the row, v02's 1748 µs was green on a linear scale, as green
/// as the 68 µs of the last versions; by ratio it is not green (a third of the way up
/// from the worst).
#[test]
fn times_are_coloured_by_ratio() {
    let mut a = app();
    a.theme = Theme { color: true };
    select(&mut a, "v02");
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| frame::draw(f, &a)).unwrap();
    let buf = term.backend().buffer();
    let text = |y: u16| -> String { (0..120).map(|x| buf[(x, y)].symbol().to_string()).collect() };
    let y = (0..40)
        .find(|&y| text(y).starts_with("Time (run)"))
        .expect("a time row");
    let line: Vec<String> = (0..120).map(|x| buf[(x, y)].symbol().to_string()).collect();
    let x = line
        .windows(4)
        .position(|w| w.concat() == shown_us("v02"))
        .expect("v02's time") as u16;
    let fg = buf[(x, y)].fg;
    assert!(
        fg != ratatui::style::Color::Green && fg != ratatui::style::Color::LightGreen,
        "{fg:?}"
    );
}

#[test]
fn the_help_explains_the_timeline_colours_and_marks() {
    let mut a = app();
    a.update(Action::ToggleHelp);
    for _ in 0..200 {
        a.update(Action::HelpScroll(1));
    }
    let screen = render(&a, 200, 60);
    assert!(
        screen.contains("▆ bars: TFLOPS as a share of the row's best")
            && screen.contains("▼ slower than the version it was built on, by the speed verdict")
            && screen.contains("times and TFLOPS by ratio"),
        "{screen}"
    );
}

/// At 80 columns a key's description wider than the popup wraps under itself, whole
/// (it was cut: `compare: the marked version, or the parent, with the selec`).
#[test]
fn the_help_wraps_long_descriptions_at_80_columns() {
    let mut a = app();
    a.update(Action::ToggleHelp);
    let screen = render(&a, 80, 24);
    assert!(
        screen.contains("│                selected one "),
        "{screen}"
    );
}

/// Narrow terminals: every view that holds a table, at 40×10 and 80×24, on v21 (a
/// version whose hot instruction classes include WARPGROUP), the timeline scrolled to
/// its hot instructions.
#[test]
fn snapshots_of_narrow_terminals() {
    for (w, h) in [(40u16, 10u16), (80, 24)] {
        let mut a = app();
        select(&mut a, "v21");
        for view in [View::Timeline, View::Compare, View::Source, View::Inspect] {
            a.update(Action::Show(view));
            if view == View::Timeline {
                a.update(Action::Bottom);
            }
            insta::assert_snapshot!(format!("narrow_{}_{w}x{h}", view.title()), render(&a, w, h));
        }
    }
}

/// At 40 columns the source view showed `2,090` for v01's hottest line (82,090 stall
/// samples): a number cut on the left. Numbers stay whole.
#[test]
fn the_source_view_at_40_columns_keeps_numbers_whole() {
    let mut a = app();
    select(&mut a, "v01");
    a.update(Action::Show(View::Source));
    let screen = render(&a, 40, 10);
    assert!(row_of(&screen, "0x4330").contains(" 82,090 "), "{screen}");
}

/// The source view's title is cut on the right, its position first, so that a narrow
/// terminal still says where the cursor is (it read `line 1/12┌` for 1/1272).
#[test]
fn the_source_title_keeps_the_position_when_cut() {
    let mut a = app();
    select(&mut a, "v01");
    a.update(Action::Show(View::Source));
    let screen = render(&a, 40, 10);
    let title = screen.lines().nth(2).unwrap();
    assert!(
        title.starts_with(" line 1/2088 · ") && title.ends_with('…'),
        "{screen}"
    );
}

/// A hot instruction class longer than its column is cut on the right, its share kept
/// (it read `hot #2 PGROUP` for WARPGROUP).
#[test]
fn the_timeline_cuts_hot_opcodes_on_the_right() {
    let mut a = app();
    select(&mut a, "v29");
    a.update(Action::Bottom);
    let screen = render(&a, 80, 24);
    assert!(
        row_of(&screen, "hot #2").contains(" WARPG… 16%"),
        "{screen}"
    );
}

/// A baseline's column heading is cut on the right (it read `efficient]` for
/// `[mem-efficient]`).
#[test]
fn a_long_column_heading_is_cut_on_the_right() {
    let mut a = app();
    select(&mut a, "mem-efficient");
    let screen = render(&a, 80, 24);
    assert!(screen.contains(" [mem-effi…"), "{screen}");
}

/// At 80 columns compare's values and deltas stay apart (they ran together:
/// `100.4 µs+16.85 µs`).
#[test]
fn compare_at_80_columns_keeps_its_columns_apart() {
    let mut a = app();
    select(&mut a, "v21");
    a.update(Action::Show(View::Compare));
    let screen = render(&a, 80, 24);
    use predicates::Predicate;
    let joined = predicates::str::is_match(r"(µs|TFLOPS|MHz|%|\d)[+-]\d").unwrap();
    assert!(
        row_of(&screen, "Time (run)").contains(&format!("{} µs  ", shown_us("v21")))
            && !screen.lines().any(|l| joined.eval(l)),
        "{screen}"
    );
}

/// At 80 columns, where the verdict column is cut, each row keeps its direction as a
/// glyph (▲ better, ▼ worse) beside its delta, which reads without colour; the run and
/// ncu rows of one quantity keep their sources when their names are cut.
#[test]
fn compare_at_80_columns_keeps_each_rows_direction() {
    let mut a = app();
    select(&mut a, "v21");
    a.update(Action::Show(View::Compare));
    let screen = render(&a, 80, 24);
    // v21 lost time against v20 and moved fewer TFLOPS.
    assert!(row_of(&screen, "Time (run)").ends_with("×)  ▼"), "{screen}");
    assert!(
        row_of(&screen, "TFLOPS (run)").ends_with("×)  ▼"),
        "{screen}"
    );
    assert!(
        row_of(&screen, "Tensor pipe active").ends_with("pt  ▼"),
        "{screen}"
    );
    assert!(
        screen.contains("…(run) ") && screen.contains("…(ncu) "),
        "{screen}"
    );
    select(&mut a, "v09");
    let screen = render(&a, 80, 24);
    assert!(row_of(&screen, "Time (run)").ends_with("×)  ▲"), "{screen}");
    // Neither better nor worse: no glyph.
    assert!(
        row_of(&screen, "SM clock (run)").ends_with("×)"),
        "{screen}"
    );
}

/// After `S` shows run results at another shape, the ncu rows say the shape they were
/// profiled at, in the timeline and in compare.
#[test]
fn ncu_rows_name_their_profiles_shape_beside_runs_of_another() {
    let mut a = app();
    select(&mut a, "v09");
    let screen = render(&a, 200, 60);
    assert!(!screen.contains("(ncu at "), "{screen}");
    a.update(Action::NextShape);
    let screen = render(&a, 200, 60);
    assert!(
        screen.contains("Duration (ncu at 1,64,1024,128) (µs)")
            && screen.contains("Tensor pipe active (ncu at 1,64,1024,128) (%)"),
        "{screen}"
    );
    a.update(Action::Show(View::Compare));
    let screen = render(&a, 200, 60);
    assert!(
        screen.contains("; ncu rows profiled at 1,64,1024,128")
            && screen.contains("Tensor pipe active (ncu at 1,64,1024,128) "),
        "{screen}"
    );
}

/// Sends a key through the keymap, as the terminal would.
fn press(a: &mut App, code: KeyCode) {
    let ev = Event::Key(KeyEvent::new(code, KeyModifiers::NONE));
    for action in tui::actions(a, &ev, Rect::new(0, 0, 120, 40)) {
        a.update(action);
    }
}

fn type_text(a: &mut App, text: &str) {
    for c in text.chars() {
        press(a, KeyCode::Char(c));
    }
}

/// The instruction under the source view's cursor.
fn at_cursor(a: &App) -> String {
    let s = a.listing().unwrap().unwrap();
    let rows = stallscope::tui::listing::rows(s, a.source.sort);
    match rows[a.source.cursor] {
        stallscope::tui::listing::ListRow::Sass(i) => s.lines[i].text.to_string(),
        _ => String::new(),
    }
}

/// A search on a version without a SASS listing says so, rather than blaming the query.
#[test]
fn a_search_without_a_listing_says_there_is_none() {
    let mut a = app();
    select(&mut a, "mem-efficient");
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "L");
    let said = format!("{:?}", a.status);
    assert!(said.contains("no SASS listing"), "{said}");
}

/// `/` then an opcode, Enter: the cursor is on the hottest instruction of that class;
/// n goes to the next one, N back.
#[test]
fn slash_searches_the_listing_and_n_goes_to_the_next_match() {
    let mut a = app();
    select(&mut a, "v21");
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "hgmma");
    press(&mut a, KeyCode::Enter);
    let first = (a.source.cursor, at_cursor(&a));
    press(&mut a, KeyCode::Char('n'));
    let second = (a.source.cursor, at_cursor(&a));
    press(&mut a, KeyCode::Char('N'));
    assert!(
        first.1.starts_with("HGMMA")
            && second.1.starts_with("HGMMA")
            && second.0 > first.0
            && a.source.cursor == first.0
            && a.view == View::Source,
        "{first:?} {second:?} {}",
        a.source.cursor
    );
}

/// A register and an offset (as the offset column shows it) are found too.
#[test]
fn the_search_finds_registers_and_offsets() {
    let mut a = app();
    select(&mut a, "v01");
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "0x4330");
    press(&mut a, KeyCode::Enter);
    let by_offset = at_cursor(&a);
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "R247");
    press(&mut a, KeyCode::Enter);
    assert!(
        by_offset.starts_with("HADD2.F32 R247") && at_cursor(&a).contains("R247"),
        "{by_offset} / {}",
        at_cursor(&a)
    );
}

/// Without a kept search n is the notes view, as everywhere; Esc clears the search
/// and gives n back.
#[test]
fn n_is_the_notes_again_once_the_search_is_cleared() {
    let mut a = app();
    select(&mut a, "v21");
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "BRA");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Esc);
    press(&mut a, KeyCode::Char('n'));
    assert_eq!(a.view, View::Notes);
}

/// The search heads the listing with its matches, and the footer names n/N.
#[test]
fn a_kept_search_is_shown_with_its_matches() {
    let mut a = app();
    select(&mut a, "v21");
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "HGMMA");
    press(&mut a, KeyCode::Enter);
    insta::assert_snapshot!("source_search_80x24", render(&a, 80, 24));
}

/// K shows the full kernel name where the views show the short one (FlashAttention-2's
/// `flash_fwd_kernel` is a template of several hundred characters); K closes it.
#[test]
fn k_shows_the_full_kernel_name() {
    let mut a = app();
    select(&mut a, "fa2");
    press(&mut a, KeyCode::Char('K'));
    let shown = render(&a, 120, 40);
    press(&mut a, KeyCode::Char('K'));
    assert!(
        shown.contains("kernel names (K or Esc closes)")
            && shown.contains("void flash_fwd_kernel<Flash_fwd_kernel_traits")
            && !a.kernel_popup,
        "{shown}"
    );
}

/// Compare at 40 columns stacks each row, so that no number is cut (it showed `68…` for
/// 688 W, and the stall rows one number with no version named).
#[test]
fn compare_at_40_columns_cuts_no_number() {
    let mut a = app();
    select(&mut a, "v14");
    a.update(Action::Show(View::Compare));
    let shown = render(&a, 40, 200);
    let cut_number = shown.lines().find(|l| {
        l.char_indices()
            .any(|(i, c)| c == '…' && l[..i].ends_with(|d: char| d.is_ascii_digit()))
    });
    assert_eq!(cut_number, None, "{shown}");
    let watts = |v: &str| format!("{:.0}", bundled(v).power_w.unwrap());
    assert!(
        shown.contains(&format!(
            "  v13 {} W   v14 {} W",
            watts("v13"),
            watts("v14")
        )),
        "{shown}"
    );
}

/// In a narrow popup the short name is cut with an ellipsis inside the border (it ran
/// into the border and stopped there, with nothing to say it was cut).
#[test]
fn the_kernel_popup_cuts_a_long_short_name_with_an_ellipsis() {
    let mut a = app();
    select(&mut a, "cudnn");
    press(&mut a, KeyCode::Char('K'));
    let shown = render(&a, 40, 20);
    let short = shown
        .lines()
        .find(|l| l.contains("short "))
        .unwrap_or_else(|| panic!("no short name in\n{shown}"));
    assert!(short.contains("…│"), "{shown}");
}

/// Loose export files are no ladder: none was built on the file before it, so no time
/// is marked worse than its parent's.
#[test]
fn loose_files_carry_no_regression_marks() {
    let l = model::load_files(
        &[
            common::fixture("h200/sdpa_cudnn_details.csv"),
            common::fixture("h200/others_basic_raw.csv"),
        ],
        SizeLimits::DEFAULT,
        &mut LoadReport::default(),
    )
    .unwrap();
    let a = App::new(vec![LadderState::new(l)], Theme { color: false });
    let screen = render(&a, 120, 30);
    assert!(
        row_of(&screen, "Duration (ncu)").contains("182.7") && !screen.contains('▼'),
        "{screen}"
    );
}

#[test]
fn the_trail_follows_the_selected_version_to_the_end_of_the_ladder() {
    // At 120×40 the whole trail takes more than its 3 lines: with v29 selected, the lines
    // show the run of steps that ends with v29 (v28 beside it), "…" for the steps before.
    let mut a = app();
    select(&mut a, "v29");
    let screen = render(&a, 120, 40);
    let trail: Vec<&str> = screen.lines().skip(2).take(3).collect();
    insta::assert_snapshot!("timeline_trail_v29_120x40", trail.join("\n"));
}

/// The row of the compare view of `id` (against its parent) that starts with `start`,
/// its words joined by one space.
fn compare_row(id: &str, start: &str) -> String {
    let mut a = app();
    select(&mut a, id);
    a.update(Action::Show(View::Compare));
    let screen = render(&a, 120, 200);
    screen
        .lines()
        .find(|l| l.trim_start().starts_with(start))
        .unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_compare_view_gives_each_cell_its_samples_beside_its_share() {
    // v12 against v11, the version it was built on: warpgroup_arrive @ HGMMA holds 669
    // of v11's 9,559 warp samples (7.0 %) and 687 of v12's 8,952 (7.7 %).
    assert_eq!(
        compare_row("v12", "warpgroup_arrive @ HGMMA"),
        "warpgroup_arrive @ HGMMA 669 · 7.0 687 · 7.7 +18 · +0.7 pt same"
    );
}

#[test]
fn the_compare_view_gives_the_instruction_mix_its_stall_samples() {
    // v12 against v11: the WARPGROUP class, its instructions, stall samples and their
    // share of all warp samples (1,388 of 9,559; 1,561 of 8,952).
    assert_eq!(
        compare_row("v12", "WARPGROUP "),
        "WARPGROUP 4 1,388 14.5 │ 4 1,561 17.4"
    );
}

/// The inspect view shows one quantity in one unit: the min, max, avg and sum of a raw
/// metric (`dram__bytes.min.per_second` …) alike, scaled together, and no rate unscaled
/// beside scaled ones (`697,841,354 byte/s` beside `33.5 GB/s`): on the real raw pages
/// of eight kernels of the basic set and of cuDNN's and FlashAttention-2's kernels.
#[test]
fn inspect_shows_one_unit_per_quantity() {
    let ladder = model::load_files(
        &[
            common::fixture("h200/others_basic_raw.csv"),
            common::fixture("h200/sdpa_cudnn_raw.csv"),
            common::fixture("h200/sdpa_flash_raw.csv"),
        ],
        SizeLimits::DEFAULT,
        &mut LoadReport::default(),
    )
    .unwrap();
    let ids: Vec<String> = ladder.versions.iter().map(|v| v.id.clone()).collect();
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    a.update(Action::Show(View::Inspect));
    let mut wrong = Vec::new();
    let mut groups = 0;
    for id in &ids {
        select(&mut a, id);
        let mut units: std::collections::BTreeMap<String, (String, String)> = Default::default();
        for e in views::inspect::entries(&a.scene(), 160) {
            let spans: Vec<String> = e.line.spans.iter().map(|s| s.content.to_string()).collect();
            let [name, value] = spans.as_slice() else {
                continue;
            };
            let name = name.trim();
            // Raw metrics: a quantity is the metric before its rollup (`.min`, `.sum` …).
            let Some(at) = name.find("__") else { continue };
            // Past a collection prefix (`TPC.TriageCompute.`).
            let metric = &name[name[..at].rfind('.').map_or(0, |i| i + 1)..];
            let stem = metric.split('.').next().unwrap_or(metric);
            let Some((number, unit)) = value.split_once(' ') else {
                continue;
            };
            if number.parse::<f64>().is_err() && number.replace(',', "").parse::<f64>().is_err() {
                continue;
            }
            if unit.ends_with("/s")
                && number.replace(',', "").parse::<f64>().unwrap().abs() >= 1000.0
            {
                wrong.push(format!("{id}: {name} {value}: unscaled"));
            }
            // The rollups of one metric in one unit ("%" rows are other quantities).
            let key = format!("{stem} {}", unit.split('/').next_back().unwrap_or(""));
            match units.get(&key) {
                Some((u, first)) if u != unit => {
                    wrong.push(format!("{id}: {first} in {u}, {name} {value}"))
                }
                Some(_) => {}
                None => {
                    groups += 1;
                    units.insert(key, (unit.to_string(), format!("{name} {value}")));
                }
            }
        }
    }
    assert!(groups > 1000, "{groups}");
    assert!(
        wrong.is_empty(),
        "{} of them: {:#?}",
        wrong.len(),
        &wrong[..wrong.len().min(20)]
    );
}

/// The status line of a frame rendered at `h` rows.
fn status_row(screen: &str, h: usize) -> String {
    screen.lines().nth(h - 2).unwrap_or_default().to_string()
}

/// The shape of the run results shown is named at 120 and at 80 columns (it showed at
/// 200 and wider only): the tab line keeps it, shrinking the other views' tabs to their
/// key letters where the terminal is narrow; the tabs still take clicks.
#[test]
fn the_run_shape_is_named_on_narrow_terminals() {
    let mut a = app();
    for w in [80u16, 120, 200] {
        let top = render(&a, w, 24).lines().next().unwrap().to_string();
        assert!(
            top.contains("runs at 1,64,1024,128"),
            "at {w} columns: {top}"
        );
    }
    a.update(Action::NextShape);
    let top = render(&a, 80, 24).lines().next().unwrap().to_string();
    assert!(
        top.contains("runs at 1,16,8192,128") && top.contains(" timeline "),
        "{top}"
    );
    let (_, x0, _) = frame::tab_spans(&a, 80)
        .into_iter()
        .find(|t| t.0 == View::Notes)
        .unwrap();
    assert_eq!(&top[x0 as usize..x0 as usize + 3], " n ", "{top}");
    let click = Event::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: x0 + 1,
        row: 0,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(
        tui::actions(&a, &click, Rect::new(0, 0, 80, 24)),
        vec![Action::Show(View::Notes)]
    );
}

/// The compare view says which shape's run results it compares.
#[test]
fn the_compare_view_names_its_run_shape() {
    let mut a = app();
    select(&mut a, "v09");
    a.update(Action::Show(View::Compare));
    let shown = render(&a, 120, 40);
    assert!(
        shown.contains("run results at 1,64,1024,128 (S: next of"),
        "{shown}"
    );
    a.update(Action::NextShape);
    let shown = render(&a, 120, 40);
    assert!(shown.contains("run results at 1,16,8192,128"), "{shown}");
}

/// "run results at …" is said of one ladder: it goes when `L` shows another (one
/// without runs kept saying it), and does not come back with the first.
#[test]
fn a_ladders_status_goes_when_another_ladder_shows() {
    let mut a = app();
    a.update(Action::NextShape);
    assert!(status_row(&render(&a, 120, 40), 40).contains("run results at"));
    let first = a.ladder().ladder.name.clone();
    show_ladder(&mut a, "sgemm-toy");
    let row = status_row(&render(&a, 120, 40), 40);
    assert!(!row.contains("run results at"), "{row}");
    show_ladder(&mut a, &first);
    let row = status_row(&render(&a, 120, 40), 40);
    assert!(!row.contains("run results at"), "{row}");
}

/// A search's "match 2 of N" is said of the kept search: Esc clears both, and it does
/// not follow into another view or version.
#[test]
fn a_searchs_status_goes_with_the_search() {
    let mut a = app();
    select(&mut a, "v21");
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "HGMMA");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char('n'));
    assert!(status_row(&render(&a, 120, 40), 40).contains("match 2 of"));
    press(&mut a, KeyCode::Esc);
    let row = status_row(&render(&a, 120, 40), 40);
    assert!(!row.contains("match"), "after Esc: {row}");
    // Kept, then another view: the match is not said there.
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "HGMMA");
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Char('n'));
    press(&mut a, KeyCode::Char('t'));
    let row = status_row(&render(&a, 120, 40), 40);
    assert!(!row.contains("match"), "in the timeline: {row}");
    // Nor on another version's listing.
    a.update(Action::Show(View::Source));
    press(&mut a, KeyCode::Char('n'));
    a.update(Action::PrevVersion);
    let row = status_row(&render(&a, 120, 40), 40);
    assert!(!row.contains("match"), "on another version: {row}");
}

/// The notes view lays a Markdown table out as columns (it showed the raw `| … |`
/// lines): v09's table of its timings, header over a rule, at 120 and at 80 columns,
/// every line within the width.
#[test]
fn the_notes_show_tables_as_tables() {
    let mut a = app();
    select(&mut a, "v09");
    a.update(Action::Show(View::Notes));
    for w in [120u16, 80] {
        let shown = render(&a, w, 60);
        let lines: Vec<&str> = shown.lines().collect();
        let head = lines
            .iter()
            .position(|l| l.starts_with("shape (B,H,S,D)"))
            .unwrap_or_else(|| panic!("no table header at {w} columns:\n{shown}"));
        assert!(
            lines[head].contains(" │ ") && lines[head].contains("time"),
            "{shown}"
        );
        assert!(lines[head + 1].contains("─┼─"), "{shown}");
        assert!(lines[head + 2].starts_with("1,64,1024,128 "), "{shown}");
        assert!(
            !lines
                .iter()
                .any(|l| l.starts_with("|---") || l.starts_with("| ")),
            "{shown}"
        );
        assert!(
            lines.iter().all(|l| l.chars().count() <= w as usize),
            "{shown}"
        );
    }
}

/// A diff line wrapped at 80 columns keeps its `+`/`-` marker on its continuation lines
/// (they began with the middle of the source line): every line of v29's diff from v28
/// starts with a marker, a context space or a hunk's `@@`.
#[test]
fn wrapped_diff_lines_keep_their_marker() {
    let mut a = app();
    select(&mut a, "v29");
    a.update(Action::Show(View::Notes));
    let shown = render(&a, 80, 3000);
    let lines: Vec<&str> = shown.lines().collect();
    let from = lines
        .iter()
        .position(|l| l.starts_with("diff from v28"))
        .expect("the diff");
    let diff: Vec<&str> = lines[from + 1..lines.len() - 2]
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    assert!(diff.len() > 20, "{shown}");
    for l in &diff {
        assert!(
            l.starts_with(['+', '-', ' ']) || l.starts_with("@@"),
            "a line without its marker: {l:?}"
        );
    }
    assert!(
        diff.iter()
            .any(|l| l.starts_with("+↳") || l.starts_with("-↳")),
        "no wrapped line in the diff"
    );
}

/// The timeline's row names grow with the terminal: whole at 120 columns and wider
/// (they stayed 25 columns: "Energy / launch (run) (m…"), 22 columns at 80.
#[test]
fn the_timelines_row_names_are_whole_on_a_wide_terminal() {
    let a = app();
    for w in [120u16, 200] {
        let shown = render(&a, w, 60);
        for name in [
            "Energy / launch (run) (mJ) ",
            "TFLOPS / W (run) (TFLOPS/W) ",
            "occupancy limit (blocks/SM) ",
        ] {
            assert!(shown.contains(name), "{name:?} at {w} columns:\n{shown}");
        }
    }
    let narrow = render(&a, 80, 60);
    assert!(narrow.contains("Energy / launch (run)…"), "{narrow}");
}

/// The stall legend wraps rather than cutting a reason's name ("math_…"): under the
/// timeline at 120 columns, in compare at 200 every reason's entry is whole.
#[test]
fn the_stall_legend_keeps_its_names_whole() {
    let mut a = app();
    select(&mut a, "v09");
    let shown = render(&a, 120, 40);
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("stalls (% of PC samples): "))
        .expect("the legend");
    let legend = lines[at..lines.len() - 2].join("\n");
    for name in [
        "long_scoreboard",
        "short_scoreboard",
        "wait",
        "barrier",
        "selected",
        "mio_throttle",
        "math_pipe_throttle",
        "dispatch_stall",
    ] {
        assert!(legend.contains(&format!(" {name}")), "{name}:\n{legend}");
    }
    assert!(!legend.contains('…'), "{legend}");
    a.update(Action::Show(View::Compare));
    let shown = render(&a, 200, 80);
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("stalls: "))
        .expect("compare's legend");
    let legend = format!("{}\n{}", lines[at], lines[at + 1]);
    assert!(!legend.contains('…'), "{legend}");
    assert!(
        legend.contains("# selected") && legend.contains("= wait"),
        "{legend}"
    );
}

/// A status message wider than the terminal ends with the key that shows it whole; `e`
/// opens it in a popup, wrapped, and Esc closes it. The advice of an error met in the
/// explorer is the explorer's: `r` on a ladder no recipe feeds said "pick one with
/// --ladder".
#[test]
fn a_cut_message_can_be_read_whole_and_advises_in_the_explorers_terms() {
    let mut a = app();
    a.kernels = common::repo().join("kernels");
    show_ladder(&mut a, "sgemm-toy");
    let Some(Effect::StartJob(req)) = a.update(Action::Run { all: false }) else {
        panic!("r starts a job");
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let job = tui::jobs::start(&a, req, tx);
    while a.job.is_some() {
        let msg = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the job reports");
        a.update(msg);
    }
    job.handle.join().unwrap();
    let said = a.status.as_ref().map(|s| s.text().to_string()).unwrap();
    assert!(said.contains("no recipe under"), "{said}");
    assert!(!said.contains("--ladder"), "{said}");
    assert!(said.ends_with("(L shows the next ladder)"), "{said}");
    let row = status_row(&render(&a, 80, 24), 24);
    assert!(row.ends_with("(e: all of it)"), "{row}");
    press(&mut a, KeyCode::Char('e'));
    assert!(a.message);
    let shown = render(&a, 80, 24);
    let popup: String = shown
        .lines()
        .filter_map(|l| {
            let inner = l.split('│').nth(1)?;
            Some(inner.trim().to_string())
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert!(popup.contains("(L shows the next ladder)"), "{shown}");
    assert!(shown.contains("Esc close"), "{shown}");
    press(&mut a, KeyCode::Esc);
    assert!(!a.message && !a.quit);
}

/// The explorer on the synthetic trace fixture (tests/fixtures/trace/synthetic: two
/// versions whose traces tests/trace.rs wrote by hand), v14 selected.
fn traced_app() -> App {
    let dir = common::repo().join("tests/fixtures/trace/synthetic");
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &dir,
        &mut LoadReport::default(),
    )
    .unwrap();
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    select(&mut a, "v14");
    a.update(Action::Show(View::Pipeline));
    a
}

/// `w` shows the selected version's pipeline trace under the one it was built on: both
/// median blocks drawn as lanes on one time axis, what moved between them in a
/// sentence, and their figures side by side with the change.
#[test]
fn the_pipeline_view_stacks_a_trace_under_its_parents() {
    let a = traced_app();
    let shown = render(&a, 120, 60);
    let line = |title: &str| shown.lines().position(|l| l == title);
    let v13 = line("v13 consumers in turn (synthetic)").expect("v13 drawn");
    let v14 = line("v14 ping-pong (synthetic)").expect("v14 drawn");
    assert!(v13 < v14, "the earlier version above:\n{shown}");
    // A lane per role, each named, drawn in the stage's fill (no colour: a character per
    // stage), with the gaps where a role waited dotted.
    for role in ["producer", "consumer 0", "consumer 1"] {
        assert!(
            shown.matches(&format!(" {role} ")).count() >= 2,
            "{role} has a lane in each version:\n{shown}"
        );
    }
    let lane = row_of(&shown, "  consumer 1 ");
    assert!(lane.contains('·'), "consumer 1 waits in v13: {lane}");
    assert!(
        shown.contains("# load K") && shown.contains("% softmax"),
        "{shown}"
    );
    // The step, as the report says it, and the table of both versions.
    assert!(shown.contains("v14 from v13: "), "{shown}");
    let header = row_of(&shown, "role ");
    for col in ["stage", "v13", "v14", "change", "overlapped most by"] {
        assert!(header.contains(col), "{header}");
    }
    assert!(shown.contains(" pt"), "a change in points:\n{shown}");
    // The axis ends at the longer median block, in µs (the fixture's clock is known).
    let axis = shown
        .lines()
        .find(|l| l.trim_start().starts_with("0 ") && l.ends_with(" µs"))
        .unwrap_or_else(|| panic!("no axis in µs:\n{shown}"));
    assert!(
        axis.ends_with("3.49 µs"),
        "the longer median block, v13's: {axis}"
    );
}

/// With v14 marked and v13 selected, the pair is the same (the earlier above); the first
/// traced version alone has its own figures (all blocks, median block) and says there
/// is none to compare with; a version without a trace says which have one.
#[test]
fn the_pipeline_view_of_one_version_and_of_none() {
    let mut a = traced_app();
    a.update(Action::Mark);
    select(&mut a, "v13");
    let shown = render(&a, 120, 60);
    let line = |s: &str, title: &str| s.lines().position(|l| l == title);
    let (v13, v14) = (
        "v13 consumers in turn (synthetic)",
        "v14 ping-pong (synthetic)",
    );
    let (at13, at14) = (line(&shown, v13), line(&shown, v14));
    assert!(
        at13.expect("v13 drawn") < at14.expect("v14 drawn"),
        "{shown}"
    );
    // v14 unmarked: v13 alone, the first traced version.
    select(&mut a, "v14");
    a.update(Action::Mark);
    assert_eq!(a.marked, None);
    select(&mut a, "v13");
    let shown = render(&a, 120, 60);
    assert_eq!(line(&shown, v14), None, "{shown}");
    let header = row_of(&shown, "role ");
    assert!(
        header.contains("all blocks") && header.contains("median block"),
        "{header}"
    );
    assert!(shown.contains("no earlier traced version"), "{shown}");
    let mut b = app();
    select(&mut b, "v09");
    b.update(Action::Show(View::Pipeline));
    let shown = render(&b, 120, 40);
    assert!(
        shown.contains("v09 has no pipeline trace at 1,64,1024,128"),
        "{shown}"
    );
    assert!(shown.contains("stallscope trace VERSION"), "{shown}");
}

/// Loading a ladder lists its traces and reads none: the pipeline view reads them when it
/// is shown (in `update`), and draws them then.
#[test]
fn the_pipeline_view_reads_the_traces_when_shown() {
    let dir = common::repo().join("tests/fixtures/trace/synthetic");
    let mut report = LoadReport::default();
    let ladder = model::load_ladder(&Store::disk(SizeLimits::DEFAULT), &dir, &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.lines());
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    let read = |a: &App| -> Vec<bool> {
        a.ladder()
            .ladder
            .versions
            .iter()
            .flat_map(|v| v.traces.iter().map(|t| t.is_read()))
            .collect()
    };
    assert_eq!(read(&a), [false, false], "listed, not read, at load");
    assert!(!a.ladder().analysis.pipeline.any());
    select(&mut a, "v14");
    assert_eq!(read(&a), [false, false], "the timeline view reads none");
    a.update(Action::Show(View::Pipeline));
    assert_eq!(read(&a), [true, true]);
    assert!(a.ladder().analysis.pipeline.any());
    let shown = render(&a, 120, 60);
    assert!(
        shown.lines().any(|l| l == "v14 ping-pong (synthetic)"),
        "{shown}"
    );
    assert!(shown.contains("v14 from v13: "), "{shown}");
}

/// A trace file that cannot be decoded (a real trace of the fixture, cut short) lets the
/// ladder load with no warning; the pipeline view, when shown, says which file and why,
/// and draws the other version's trace as before.
#[test]
fn the_pipeline_view_says_why_a_trace_cannot_be_read() {
    let from = common::repo().join("tests/fixtures/trace/synthetic");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("synthetic");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(from.join("ladder.toml"), dir.join("ladder.toml")).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let e = entry.unwrap();
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir(dir.join(e.file_name())).unwrap();
            for f in std::fs::read_dir(e.path()).unwrap() {
                let f = f.unwrap();
                std::fs::copy(f.path(), dir.join(e.file_name()).join(f.file_name())).unwrap();
            }
        } else {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let broken = dir.join("v14/trace-1,64,1024,128.json.gz");
    let bytes = std::fs::read(&broken).unwrap();
    std::fs::write(&broken, &bytes[..bytes.len() / 2]).unwrap();
    let mut report = LoadReport::default();
    let ladder = model::load_ladder(&Store::disk(SizeLimits::DEFAULT), &dir, &mut report).unwrap();
    assert!(
        report.warnings.is_empty(),
        "nothing decoded at load: {:?}",
        report.lines()
    );
    let mut a = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    select(&mut a, "v14");
    a.update(Action::Show(View::Pipeline));
    let shown = render(&a, 200, 40)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        shown.contains("error: v14's pipeline trace at 1,64,1024,128 cannot be read:"),
        "{shown}"
    );
    assert!(shown.contains("trace-1,64,1024,128.json.gz"), "{shown}");
    assert!(shown.contains("gzip data is damaged"), "{shown}");
    assert!(shown.contains("Traced at 1,64,1024,128: v13"), "{shown}");
    select(&mut a, "v13");
    let shown = render(&a, 120, 60);
    assert!(
        shown
            .lines()
            .any(|l| l == "v13 consumers in turn (synthetic)"),
        "{shown}"
    );
}

/// The pipeline view of the synthetic traces, drawn at 80×24 (lanes cut to the width).
#[test]
fn pipeline_traced_80x24() {
    insta::assert_snapshot!("pipeline_traced_80x24", render(&traced_app(), 80, 24));
}

/// The explorer on loose exports (three of flash-attention's, opened as files).
fn loose_app() -> App {
    let dir = common::profiles().join("flash-attention");
    let files: Vec<_> = ["v01", "v09", "v29"]
        .iter()
        .map(|v| dir.join(v).join("raw.csv.gz"))
        .collect();
    let l = model::load_files(&files, SizeLimits::DEFAULT, &mut LoadReport::default()).unwrap();
    App::new(vec![LadderState::new(l)], Theme { color: false })
}

/// The roofline view of the bundled ladders and of loose exports, at 80×24 and
/// 120×40 (flash-attention's on v09, its parent v08 marked, is among the snapshots of
/// every view): GEMM and the SGEMM toy on their last versions, three loose files on
/// their second.
#[test]
fn snapshots_of_the_roofline() {
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        for ladder in ["gemm", "sgemm-toy"] {
            let mut a = app();
            show_ladder(&mut a, ladder);
            for _ in 0..100 {
                a.update(Action::NextVersion);
            }
            // The last of the ladder's own versions, not a baseline.
            while a.ladder().ladder.versions[a.version_index().unwrap()].baseline {
                a.update(Action::PrevVersion);
            }
            a.update(Action::Show(View::Roofline));
            insta::assert_snapshot!(format!("roofline_{ladder}_{w}x{h}"), render(&a, w, h));
        }
        let mut l = loose_app();
        l.update(Action::NextVersion);
        l.update(Action::Show(View::Roofline));
        insta::assert_snapshot!(format!("roofline_loose_{w}x{h}"), render(&l, w, h));
    }
}

/// The roofline reads without colour: NO_COLOR draws the same characters (the marks and
/// the names of the selected version and its parent), and with colour the selected
/// version's name is styled apart from the rest.
#[test]
fn the_roofline_reads_without_colour() {
    let mut plain = app();
    select(&mut plain, "v09");
    plain.update(Action::Show(View::Roofline));
    let mut coloured = app();
    coloured.theme = Theme { color: true };
    select(&mut coloured, "v09");
    coloured.update(Action::Show(View::Roofline));
    let shown = render(&plain, 80, 24);
    assert_eq!(shown, render(&coloured, 80, 24));
    let (sel, par) = (views::roofline::SELECTED, views::roofline::PARENT);
    assert!(shown.contains(&format!("{sel}v09")), "{shown}");
    assert!(shown.contains(&format!("{par}v08")), "{shown}");
    assert!(
        shown.lines().last().unwrap().contains("f roofline"),
        "{shown}"
    );
}

/// The compare view shows the step on the roofline and ncu's estimate of what the step
/// resolved beside the change the runs measured (v09 → v10 of flash-attention).
#[test]
fn compare_shows_the_roofline_step_and_ncus_estimate() {
    let mut a = app();
    select(&mut a, "v10");
    a.update(Action::Show(View::Compare));
    let lines = views::compare::document(&a.scene(), &a.compare, 100);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    assert!(text.contains("roofline and ncu's estimates"), "{text}");
    for want in [
        r"\nncu estimate: CPIStall\s+−37\.0 % → gone\n",
        r"\nchange in time \(runs at 1,64,1024,128\)\s+−4\.2 % · faster · partly\n",
    ] {
        assert!(
            regex::Regex::new(want).unwrap().is_match(&text),
            "{want} not in {text}"
        );
    }
    assert!(
        regex::Regex::new(r"nearer roof, share\s+compute \d+ % → compute \d+ %")
            .unwrap()
            .is_match(&text),
        "{text}"
    );
}

/// The roofline view shows ncu's estimates beneath the selected version: the ladder's
/// tally (as `report --estimates` counts it) readable at 80×24, and the findings of v09
/// that v10 resolved with ncu's estimate and what the step got, as compare words them.
#[test]
fn the_roofline_shows_the_tally_of_ncus_estimates() {
    let mut a = app();
    select(&mut a, "v10");
    a.update(Action::Show(View::Roofline));
    let k = &a.ladder().estimates.tally;
    let head = format!(
        "ncu's estimates on this ladder: {} steps resolved a finding",
        k.judged
    );
    assert!(k.judged > 0, "{k:?}");
    let small = render(&a, 80, 24);
    assert!(small.contains(&head), "{small}");
    let large = render(&a, 120, 40);
    for want in [
        format!(
            r"· {} delivered, {} partly, {} nothing ·",
            k.delivered, k.partly, k.nothing
        ),
        r"ncu estimate: CPIStall\s+−37\.0 % → gone".to_string(),
        r"change in time \(runs at 1,64,1024,128\)\s+−4\.2 % · faster · partly".to_string(),
    ] {
        assert!(
            regex::Regex::new(&want).unwrap().is_match(&large),
            "{want} not in {large}"
        );
    }
}
