//! The speed verdicts reach every JSON document that reads run results, and each obeys
//! the rule the README states: `level` inside the ±1 % band, `faster`/`slower` wholly
//! above/below 1, `unclear` with its reason.

mod common;

use serde_json::Value;

use common::json_on_bundled as json;

/// Fails unless a verdict says what its interval says.
fn obeys_the_rule(v: &Value) {
    let (ratio, low, high) = (
        v["ratio"].as_f64().unwrap(),
        v["low"].as_f64().unwrap(),
        v["high"].as_f64().unwrap(),
    );
    assert!(low <= ratio && ratio <= high, "{v}");
    match v["verdict"].as_str().unwrap() {
        "level" => assert!(low >= 0.99 && high <= 1.01, "{v}"),
        "faster" => assert!(low > 1.0, "{v}"),
        "slower" => assert!(high < 1.0, "{v}"),
        "unclear" => {
            let why = v["why"].as_str().unwrap_or_else(|| panic!("no why: {v}"));
            assert!(v["detail"].is_string(), "{v}");
            if why == "not_converged" {
                assert!(low <= 1.0 && high >= 1.0, "{v}");
                assert!(low < 0.99 || high > 1.01, "{v}");
            }
        }
        other => panic!("verdict {other}: {v}"),
    }
}

#[test]
fn the_report_gives_each_shown_run_its_verdicts() {
    let doc = json(&["report", "--ladder", "flash-attention", "--format", "json"]);
    let versions = doc["ladders"][0]["versions"].as_array().unwrap();
    let by_id = |id: &str| versions.iter().find(|v| v["id"] == id).unwrap();
    let v28 = by_id("v28");
    let verdicts = v28["verdicts"].as_array().unwrap();
    let against: Vec<&str> = verdicts
        .iter()
        .map(|v| v["against"].as_str().unwrap())
        .collect();
    for baseline in ["cudnn", "fa2", "unfused", "mem-efficient"] {
        assert!(against.contains(&baseline), "{against:?}");
    }
    let mut checked = 0;
    for v in versions {
        for verdict in v["verdicts"].as_array().unwrap() {
            obeys_the_rule(verdict);
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} verdicts");
    // A run file of schema 1 (medians only) is read as rounds without clocks.
    let rounds = v28["runs"][0]["rounds"].as_array().unwrap();
    assert!(rounds.len() >= 2, "{}", v28["runs"][0]);
    assert!(rounds.iter().all(|r| r["us"].as_f64().unwrap() > 0.0));
}

#[test]
fn compare_gives_the_speed_of_b_over_a() {
    let doc = json(&["compare", "v27", "v28", "--format", "json"]);
    let s = &doc["speed"];
    obeys_the_rule(s);
    let report = json(&["report", "--ladder", "flash-attention", "--format", "json"]);
    let versions = report["ladders"][0]["versions"].as_array().unwrap();
    let time = |id: &str| {
        versions.iter().find(|v| v["id"] == id).unwrap()["metrics"]["run_time"]
            .as_f64()
            .unwrap()
    };
    // a's time over b's: above 1, v28 is faster (the geometric mean of the rounds'
    // ratios, near the ratio of the medians).
    let of_medians = time("v27") / time("v28");
    let ratio = s["ratio"].as_f64().unwrap();
    assert!(
        (ratio / of_medians - 1.0).abs() < 0.03,
        "{ratio} vs {of_medians}"
    );
    // A ladder without run results: no speed.
    let files = json(&[
        "compare",
        "v1",
        "v2",
        "--ladder",
        "sgemm-toy",
        "--format",
        "json",
    ]);
    assert!(files["speed"].is_null(), "{}", files["speed"]);
}

/// A candidate decided early (it sat out the rounds after its verdict settled) is paired
/// with the first rounds of its run and marked so in the run table, its legend saying
/// what the mark means. The run is a real one from the H200 (v28 and the baselines at
/// 1,64,1024,128, 10 rounds); the unfused baseline is cut to the 5 rounds it would have
/// had if decided there.
#[test]
fn a_decided_candidate_keeps_a_paired_verdict_and_is_marked() {
    use stallscope::model::RunResult;
    let text =
        std::fs::read_to_string(common::fixture("runs/run-1_64_1024_128-10-rounds.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut results: Vec<RunResult> =
        serde_json::from_value(doc["comparisons"][0]["results"].clone()).unwrap();
    let unfused = results.iter_mut().find(|r| r.version == "unfused").unwrap();
    unfused.rounds.truncate(5);
    let p = unfused.protocol.as_mut().unwrap();
    p.rounds = 5;
    let c = p.convergence.as_mut().unwrap();
    c.decided = true;
    let v28 = results.iter().find(|r| r.version == "v28").unwrap();
    let unfused = results.iter().find(|r| r.version == "unfused").unwrap();
    let s = stallscope::analysis::speed::speedup(v28, unfused).unwrap();
    assert_eq!(s.rounds, 5, "{s:?}");
    assert_eq!(s.verdict.word(), "faster");
    let table = stallscope::report::runs::table(&results, &|id: &str| id.starts_with('v'));
    let row = table.lines().find(|l| l.starts_with("unfused")).unwrap();
    assert!(row.contains("5 decided"), "{table}");
    assert!(
        table.contains("decided = its interval against v28"),
        "{table}"
    );
}
