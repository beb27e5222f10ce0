//! On a GPU: the runner isolates broken kernels, and every version of the ladder is
//! correct on fresh random inputs, causal too. Without a GPU these tests say that they
//! skipped and pass.

mod common;

use assert_cmd::Command;
use common::{repo, skip};
use serde_json::Value;

fn gpu_missing(test: &str) -> bool {
    match stallscope::gpu::device::unavailable() {
        Some(why) => {
            skip(test, &why);
            true
        }
        None => false,
    }
}

fn run_json(args: &[&str]) -> Vec<Value> {
    let out = Command::cargo_bin("stallscope")
        .unwrap()
        .current_dir(repo())
        .arg("run")
        .args(args)
        .args(["--json", "--no-save", "--reps", "3"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    v.as_array().unwrap().clone()
}

fn by_id<'a>(results: &'a [Value], id: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["version"] == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn gpu_broken_kernels_fail_alone() {
    if gpu_missing("gpu_broken_kernels_fail_alone") {
        return;
    }
    let r = run_json(&["all", "--kernels", "kernels/selftest", "--timeout", "20"]);
    for ok in ["naive", "naive-again"] {
        assert_eq!(by_id(&r, ok)["status"], "ok", "{}", by_id(&r, ok));
    }
    let msg = |id: &str| by_id(&r, id)["message"].as_str().unwrap_or("").to_string();
    assert_eq!(by_id(&r, "fault")["status"], "failed");
    assert!(msg("fault").contains("ILLEGAL_ADDRESS"), "{}", msg("fault"));
    assert!(msg("hang").contains("timed out"), "{}", msg("hang"));
    assert!(msg("wrong").contains("wrong result"), "{}", msg("wrong"));
    assert!(
        msg("unwritten").contains("never written"),
        "{}",
        msg("unwritten")
    );
}

#[test]
fn gpu_every_version_is_correct() {
    if gpu_missing("gpu_every_version_is_correct") {
        return;
    }
    for extra in [&[][..], &["--causal"][..]] {
        // A shape that is no multiple of the tiles, two batches.
        let mut args = vec!["all", "--shape", "2,3,333,128"];
        args.extend_from_slice(extra);
        for r in run_json(&args) {
            assert_eq!(r["status"], "ok", "{r}");
            assert!(r["rel_l2_err"].as_f64().unwrap() < 2e-3, "{r}");
        }
    }
}
