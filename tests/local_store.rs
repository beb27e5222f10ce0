//! A local store beside the built-in one: an import into a folder without `./profiles`
//! makes one and says so, and the built-in ladders stay visible after the local ones,
//! marked "(built in)"; a local ladder named like a built-in one stands in for it;
//! `check` without `./profiles` verifies the built-in copy, as the other commands read it.

mod common;

use assert_cmd::Command;
use common::{fixture, profiles};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, Store};
use std::path::Path;

fn stallscope(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("stallscope").unwrap();
    c.current_dir(dir).env_remove("STALLSCOPE_PROFILES");
    c
}

/// The built-in ladders: the ladder folders of the repository's `profiles/`, from which
/// the binary's copy is built.
fn built_in() -> Vec<String> {
    model::ladder_dirs(&profiles())
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// `import sgemm/det.csv --version v1 --kernel mm_naive ARGS` in `dir`: its standard error.
fn import(dir: &Path, args: &[&str]) -> String {
    let out = stallscope(dir)
        .arg("import")
        .arg(fixture("sgemm/det.csv"))
        .args(["--version", "v1", "--kernel", "mm_naive"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stderr).unwrap()
}

/// The ladders `report --format json` shows in `dir`: name and title, in order.
fn reported(dir: &Path, args: &[&str]) -> Vec<(String, String)> {
    let out = stallscope(dir)
        .args(["report", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["ladders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap().to_string();
            (s("name"), s("title"))
        })
        .collect()
}

#[test]
fn an_import_into_a_folder_without_profiles_says_so_and_the_built_in_ladders_stay() {
    let dir = tempfile::tempdir().unwrap();
    let said = import(dir.path(), &[]);
    let names = built_in();
    assert!(
        said.contains("profiles is a new local store")
            && said.contains(&format!("then the built-in ones ({})", names.join(", "))),
        "{said}"
    );
    // The local ladder first, then every built-in one, marked.
    let shown = reported(dir.path(), &[]);
    let (first, rest) = shown.split_first().unwrap();
    assert_eq!(first.0, "imported", "{shown:?}");
    assert!(!first.1.contains("built in"), "{shown:?}");
    let rest_names: Vec<&str> = rest.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(rest_names, names);
    assert!(
        rest.iter().all(|(_, t)| t.ends_with("(built in)")),
        "{shown:?}"
    );

    // A pair of versions of a built-in ladder compares from this folder, and one built-in
    // ladder is reported by name.
    let (ladder, ids) = model::ladder_ids(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join(&names[0]),
    )
    .unwrap();
    let pair = &ids[ids.len() - 2..];
    let out = stallscope(dir.path())
        .args(["compare", &pair[0], &pair[1], "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "compare {pair:?}: {out:?}");
    let one = reported(dir.path(), &["--ladder", &ladder]);
    assert_eq!(one.len(), 1);
    assert!(
        one[0].0 == ladder && one[0].1.ends_with("(built in)"),
        "{one:?}"
    );

    // --profiles DIR reads that folder alone.
    let alone = reported(dir.path(), &["--profiles", "profiles"]);
    let alone: Vec<&str> = alone.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(alone, ["imported"]);
}

#[test]
fn a_local_ladder_named_like_a_built_in_one_stands_in_for_it_and_the_import_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let names = built_in();
    let taken = names.last().unwrap();
    let said = import(dir.path(), &["--ladder", taken]);
    assert!(
        said.contains(&format!(
            "profiles/{taken} is named like a built-in ladder: stallscope run from this folder shows it in place of the built-in {taken}"
        )),
        "{said}"
    );
    let shown = reported(dir.path(), &[]);
    let shown_names: Vec<&str> = shown.iter().map(|(n, _)| n.as_str()).collect();
    let mut want = vec![taken.as_str()];
    want.extend(names.iter().map(String::as_str).filter(|n| n != taken));
    assert_eq!(shown_names, want);
    assert!(!shown[0].1.contains("built in"), "{shown:?}");
    // The local one, with its one version.
    let out = stallscope(dir.path())
        .args(["report", "--format", "json", "--ladder", taken])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ladders"][0]["versions"].as_array().unwrap().len(), 1);
}

#[test]
fn check_without_a_profiles_folder_checks_the_built_in_copy() {
    let dir = tempfile::tempdir().unwrap();
    let out = stallscope(dir.path()).arg("check").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success()
            && out.stdout.is_empty()
            && stderr.starts_with(&format!(
                "profiles (built in): {} ladder(s)",
                built_in().len()
            )),
        "{out:?}"
    );
    // With ./profiles, that folder is checked.
    import(dir.path(), &[]);
    let out = stallscope(dir.path()).arg("check").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.starts_with("profiles: 1 ladder(s), 1 version(s)"),
        "{out:?}"
    );
}

#[test]
fn the_explorer_marks_a_built_in_ladder_shown_beside_a_local_one() {
    use ratatui::{Terminal, backend::TestBackend};
    use stallscope::model::LoadReport;
    use stallscope::tui::{frame, ladder_state::LadderState, state::App, theme::Theme};
    let dir = tempfile::tempdir().unwrap();
    import(dir.path(), &[]);
    let mut report = LoadReport::default();
    let local = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &dir.path().join("profiles/imported"),
        &mut report,
    )
    .unwrap();
    let name = &built_in()[0];
    let builtin = model::load_ladder(
        &Store::embedded(SizeLimits::DEFAULT),
        &Path::new("profiles").join(name),
        &mut report,
    )
    .unwrap();
    let mut app = App::new(
        vec![LadderState::new(local), LadderState::new(builtin)],
        Theme { color: false },
    );
    let top = |app: &App| {
        let mut term = Terminal::new(TestBackend::new(220, 30)).unwrap();
        term.draw(|f| frame::draw(f, app)).unwrap();
        let buf = term.backend().buffer();
        (0..220)
            .map(|x| buf[(x, 0)].symbol().to_string())
            .collect::<String>()
    };
    let first = top(&app);
    assert!(
        first.contains("│ imported (1/2") && !first.contains("built in"),
        "{first}"
    );
    app.current = 1;
    let second = top(&app);
    assert!(
        second.contains(&format!("│ {name} (built in) (2/2")),
        "{second}"
    );
}
