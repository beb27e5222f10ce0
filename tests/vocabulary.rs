//! One output vocabulary: `report` and `compare` name every metric with the same id and
//! write it in the same unit, in JSON and in CSV, and every JSON document says its
//! schema.

mod common;

use assert_cmd::Command;
use common::profiles;
use serde_json::Value;
use std::collections::HashMap;

fn out(args: &[&str]) -> String {
    let o = Command::cargo_bin("stallscope")
        .unwrap()
        .env_remove("STALLSCOPE_PROFILES")
        .args(args)
        .arg("--profiles")
        .arg(profiles())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&out(args)).unwrap()
}

#[test]
fn report_and_compare_agree_in_json() {
    let report = json(&["report", "--ladder", "sgemm-toy", "--format", "json"]);
    let compare = json(&[
        "compare",
        "v1",
        "v2",
        "--ladder",
        "sgemm-toy",
        "--format",
        "json",
    ]);
    assert_eq!(report["schema"], "stallscope/report/1");
    assert_eq!(compare["schema"], "stallscope/compare/1");
    let units = report["units"].as_object().unwrap();
    let versions = report["ladders"][0]["versions"].as_array().unwrap();
    let v2 = versions.iter().find(|v| v["id"] == "v2").unwrap();
    let mut checked = 0;
    for m in compare["metrics"].as_array().unwrap() {
        let id = m["metric"].as_str().unwrap();
        assert_eq!(units[id], m["unit"], "{id}");
        if let Some(b) = m["b"].as_f64() {
            assert_eq!(v2["metrics"][id].as_f64(), Some(b), "{id}");
            checked += 1;
        }
    }
    assert!(checked > 5, "only {checked} metrics compared");
    // Times are in µs in both: the sgemm v2 kernel ran for about 2.7 ms.
    assert_eq!(units["duration"], "us");
    let d = v2["metrics"]["duration"].as_f64().unwrap();
    assert!(d > 1000.0 && d < 10_000.0, "{d}");
}

#[test]
fn report_and_compare_agree_in_csv() {
    let report = out(&["report", "--ladder", "sgemm-toy", "--format", "csv"]);
    let compare = out(&[
        "compare",
        "v1",
        "v2",
        "--ladder",
        "sgemm-toy",
        "--format",
        "csv",
    ]);
    let mut r = csv::Reader::from_reader(report.as_bytes());
    let head = r.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (version, metric, value, unit) = (col("version"), col("metric"), col("value"), col("unit"));
    let mut v2: HashMap<String, (String, String)> = HashMap::new();
    for row in r.records() {
        let row = row.unwrap();
        if &row[version] == "v2" {
            v2.insert(
                row[metric].to_string(),
                (row[value].to_string(), row[unit].to_string()),
            );
        }
    }
    let mut c = csv::Reader::from_reader(compare.as_bytes());
    let head = c.headers().unwrap().clone();
    assert_eq!(&head[0], "metric");
    assert_eq!(&head[1], "unit");
    let mut checked = 0;
    for row in c.records() {
        let row = row.unwrap();
        let (id, u, b) = (&row[0], &row[1], &row[3]);
        if b.is_empty() {
            continue;
        }
        let (value, unit) = v2
            .get(id)
            .unwrap_or_else(|| panic!("{id} not in the report"));
        assert_eq!(unit, u, "{id}");
        assert_eq!(
            value.parse::<f64>().unwrap(),
            b.parse::<f64>().unwrap(),
            "{id}"
        );
        assert!(!value.contains(','), "no thousands separators: {value}");
        checked += 1;
    }
    assert!(checked > 5, "only {checked} rows compared");
}
