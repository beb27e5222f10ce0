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

/// One comparison, one time verdict: `compare` gives its time, TFLOPS and % of ceiling
/// rows the runs' paired verdict, the one `report --versions` writes in the notes' step
/// tables. v28 → v29 at the reference shape is unclear in both (+1.0 %, its interval
/// −0.9 % to +2.8 %), where a 1 % rule on the medians called it worse.
#[test]
fn compare_and_the_step_table_give_one_time_verdict() {
    let doc = json(&["compare", "v29", "--format", "json"]);
    obeys_the_rule(&doc["speed"]);
    let speed = doc["speed"]["verdict"].as_str().unwrap();
    assert_eq!(speed, "unclear", "{}", doc["speed"]);
    let as_row = |v: &str| {
        match v {
            "faster" => "better",
            "slower" => "worse",
            "level" => "same",
            other => other,
        }
        .to_string()
    };
    let timed = ["run_time", "run_tflops", "run_pct_of_ceiling"];
    let rows: Vec<&Value> = doc["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| timed.contains(&m["metric"].as_str().unwrap()))
        .collect();
    assert_eq!(rows.len(), 3);
    for m in rows {
        assert_eq!(m["verdict"].as_str().unwrap(), as_row(speed), "{m}");
    }
    let table = common::stdout_on_bundled(&["compare", "v29"]);
    let time = table.lines().find(|l| l.starts_with("Time (run")).unwrap();
    assert!(
        time.contains("unclear: not converged (−0.9 % to +2.8 %)"),
        "{time}"
    );
    let step =
        common::stdout_on_bundled(&["report", "--versions", "v28,v29", "--format", "markdown"]);
    assert!(
        step.contains("+1.0 %, unclear: not converged (−0.9 % to +2.8 %)"),
        "{step}"
    );
}

/// A stall share's change is called better or worse only when its sample counts carry
/// it: every judged share of a comparison on the bundled profiles passes the
/// two-proportion z test at 2 on the samples the document gives.
#[test]
fn stall_share_verdicts_stand_on_their_samples() {
    let doc = json(&["compare", "v29", "--format", "json"]);
    let (na, nb) = (
        doc["stall_samples"]["a"].as_f64().unwrap(),
        doc["stall_samples"]["b"].as_f64().unwrap(),
    );
    let mut judged = 0;
    for s in doc["stalls"].as_array().unwrap() {
        let (a, b) = (s["a"].as_f64().unwrap(), s["b"].as_f64().unwrap());
        let pooled = (a * na + b * nb) / (na + nb);
        let z = (b - a) / (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
        match s["verdict"].as_str().unwrap() {
            "better" | "worse" => {
                judged += 1;
                assert!(z.abs() >= 2.0 && (b - a).abs() >= 0.005, "{s} z {z}");
            }
            "same" => assert!(z.abs() < 2.0 || (b - a).abs() < 0.005, "{s} z {z}"),
            other => panic!("{other}: {s}"),
        }
    }
    assert!(judged > 0, "some change is judged");
}
