//! Loose raw pages without a source page: each version's label falls back to the raw
//! page's top stall reason, marked `(reason only)`, said once under the trail; a change
//! of reason is a move only where PC samples carry it.

mod common;

use assert_cmd::Command;
use common::fixture;
use predicates::prelude::*;

fn stallscope() -> Command {
    Command::cargo_bin("stallscope").unwrap()
}

fn report(args: &[&std::path::Path], format: &str) -> String {
    let out = stallscope()
        .arg("report")
        .args(args)
        .args(["--format", format])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn raw_pages_with_pc_samples_give_reason_only_labels_weighed_by_their_samples() {
    let (a, b, c) = (
        fixture("h200/sdpa_flash_raw.csv"),
        fixture("h200/sdpa_cudnn_raw.csv"),
        fixture("h200/attn_v11_raw.csv.gz"),
    );
    let text = report(&[&a, &b, &c], "table");
    let trail: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(['1', '2', '3']))
        .collect();
    assert_eq!(trail.len(), 3, "{text}");
    assert!(trail[0].contains("wait (reason only)"), "{text}");
    // The launches' own PC samples weigh each change of reason.
    assert!(
        trail[1].contains("barrier (reason only)") && trail[1].contains("moved (z 13)"),
        "{text}"
    );
    assert!(trail[2].contains("moved (z 10)"), "{text}");
    // Why once, under the trail; the export hint once, never per version.
    assert_eq!(
        text.matches("labels marked (reason only)").count(),
        1,
        "{text}"
    );
    assert_eq!(text.matches("--page source").count(), 1, "{text}");
    assert!(!text.contains("no source page\n"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&report(&[&a, &b], "json")).unwrap();
    let s = json.to_string();
    assert!(s.contains(r#""opcode":"(reason only)""#), "{s}");
    assert!(s.contains(r#""verdict":"moved""#), "{s}");
}

#[test]
fn reason_only_labels_without_pc_samples_are_never_a_move() {
    // The raw pages with their PC sampling counters renamed away: the per-issue stall
    // ratios alone remain, which carry no samples.
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for k in ["flash", "cudnn"] {
        let text = std::fs::read_to_string(fixture(&format!("h200/sdpa_{k}_raw.csv"))).unwrap();
        let (head, rest) = text.split_at(text.find('\n').unwrap());
        let head = head.replace(
            "smsp__pcsamp_warps_issue_stalled_",
            "smsp__pcsamp_unread_stalled_",
        );
        let p = dir.path().join(format!("{k}.csv"));
        std::fs::write(&p, format!("{head}{rest}")).unwrap();
        paths.push(p);
    }
    let text = report(&[&paths[0], &paths[1]], "table");
    assert!(
        text.contains("changed from 1 (reason only, no samples for the noise rule)"),
        "{text}"
    );
    assert!(!text.contains("moved (z"), "{text}");
    let lead = text
        .lines()
        .find(|l| l.starts_with("lead over runner-up"))
        .unwrap();
    assert!(!lead.chars().any(|c| c.is_ascii_digit()), "{lead}");
    let s = report(&[&paths[0], &paths[1]], "json");
    assert!(s.contains(r#""verdict": "unweighed""#), "{s}");
}

#[test]
fn exports_without_stall_shares_say_the_missing_source_page_once() {
    stallscope()
        .arg("report")
        .arg(fixture("h200/others_basic_details.csv"))
        .assert()
        .success()
        .stdout(
            predicate::str::contains(
                "1, 2, 3, 4, 5, 6, 7, 8: no label; the label needs a source page",
            )
            .and(predicate::function(|s: &str| {
                s.matches("--page source").count() == 1
            })),
        );
}
