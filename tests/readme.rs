//! The README and the ladder's notes tell the data's story: every trail block of the
//! README is `report`'s output on the bundled profiles, and every note's bottleneck line
//! names the labels the analysis gives the version and its parent.

mod common;

use assert_cmd::Command;
use common::{profiles, repo};
use stallscope::analysis;
use stallscope::model::{self, LoadReport, Store};

/// The trail block of `report`'s table for one ladder: from the trail's heading to the
/// meanings of its labels.
fn reported_trail(ladder: &str) -> String {
    let out = Command::cargo_bin("stallscope")
        .unwrap()
        .env_remove("STALLSCOPE_PROFILES")
        .args(["report", "--ladder", ladder, "--profiles"])
        .arg(profiles())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let start = text.find("bottleneck trail:").expect("a trail");
    let end = start
        + text[start..]
            .find("\n\nmetric ")
            .expect("the table after it");
    text[start..end].trim_end().to_string()
}

/// The README's code block after the marker `<!-- trail: LADDER … -->`.
fn readme_trail(ladder: &str) -> String {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let marker = format!("<!-- trail: {ladder} ");
    let at = readme
        .find(&marker)
        .unwrap_or_else(|| panic!("no {marker}"));
    let block = &readme[at..];
    let open = block.find("```text\n").unwrap() + "```text\n".len();
    let close = open + block[open..].find("```").unwrap();
    block[open..close].trim_end().to_string()
}

#[test]
fn the_readme_trail_of_the_flash_attention_ladder_is_reports() {
    assert_eq!(
        readme_trail("flash-attention"),
        reported_trail("flash-attention")
    );
}

#[test]
fn the_readme_trail_of_the_sgemm_toy_is_reports() {
    assert_eq!(readme_trail("sgemm-toy"), reported_trail("sgemm-toy"));
}

#[test]
fn every_note_names_the_labels_of_its_version_and_parent() {
    let ladder = model::load_ladder(
        &Store::Disk,
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap();
    let a = analysis::analyse_ladder(&ladder);
    let label = |i: usize| a.trail.iter().find(|s| s.index == i)?.label.clone();
    let mut wrong = Vec::new();
    for s in &a.trail {
        let v = &ladder.versions[s.index];
        let notes = v.notes.as_deref().unwrap_or_default().replace('\n', " ");
        let Some(at) = notes.find("**Bottleneck: ") else {
            wrong.push(format!("{}: no bottleneck line", v.id));
            continue;
        };
        let line = &notes[at + "**Bottleneck: ".len()..];
        let line = &line[..line.find("**").unwrap_or(line.len())];
        let written = line.trim_end_matches('.');
        let before = ladder
            .parent_of(s.index)
            .and_then(label)
            .unwrap_or_else(|| "—".into());
        let after = s.label.clone().unwrap_or_else(|| "—".into());
        let expected = format!("{before} → {after}");
        if written != expected {
            wrong.push(format!(
                "{}: {written:?}, the profiles say {expected:?}",
                v.id
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
