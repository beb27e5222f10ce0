//! One output vocabulary: `report` and `compare` name every metric with the same id and
//! write it in the same unit, in JSON and in CSV, and every JSON document says its
//! schema.

mod common;

use assert_cmd::Command;
use common::{fixture, repo};
use serde_json::Value;
use std::collections::HashMap;

fn out(args: &[&str]) -> String {
    common::stdout_on_bundled(args)
}

fn json(args: &[&str]) -> Value {
    common::json_on_bundled(args)
}

#[test]
fn report_and_compare_agree_in_json() {
    let report = json(&["report", "--ladder", "sgemm-toy", "--format", "json"]);
    let compare: Value = serde_json::from_str(&compare_sgemm("json")).unwrap();
    assert_eq!(report["schema"], "stallscope/report/4");
    assert_eq!(compare["schema"], "stallscope/compare/3");
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
    let compare = compare_sgemm("csv");
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

fn compare_sgemm(format: &str) -> String {
    out(&[
        "compare",
        "v1",
        "v2",
        "--ladder",
        "sgemm-toy",
        "--format",
        format,
    ])
}

#[test]
fn compare_writes_the_same_verdict_word_in_csv_and_json() {
    let json: Value = serde_json::from_str(&compare_sgemm("json")).unwrap();
    let words: HashMap<String, String> = json["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let w = m["verdict"].as_str().unwrap().to_string();
            (m["metric"].as_str().unwrap().to_string(), w)
        })
        .collect();
    let csv = compare_sgemm("csv");
    let mut c = csv::Reader::from_reader(csv.as_bytes());
    let mut differ = Vec::new();
    for row in c.records() {
        let row = row.unwrap();
        if let Some(w) = words.get(&row[0])
            && w != &row[4]
        {
            differ.push(format!("{}: csv {:?}, json {w:?}", &row[0], &row[4]));
        }
    }
    assert_eq!(differ, Vec::<String>::new());
}

#[test]
fn compare_names_versions_as_the_report_does() {
    let report = json(&["report", "--ladder", "sgemm-toy", "--format", "json"]);
    let compare: Value = serde_json::from_str(&compare_sgemm("json")).unwrap();
    let v1 = report["ladders"][0]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == "v1")
        .unwrap();
    let side = |v: &Value| (v["id"].clone(), v["title"].clone(), v["kernel"].clone());
    assert_eq!(side(&compare["a"]), side(v1));
}

#[test]
fn compare_csv_names_versions_by_id() {
    let csv = compare_sgemm("csv");
    assert_eq!(
        csv.lines().next(),
        Some("metric,unit,v1,v2,verdict,run_shape"),
        "{csv}"
    );
}

/// Two launches of one file: the CSV's two columns name the file with each launch, not
/// the same path twice.
#[test]
fn compare_csv_names_two_launches_of_one_file_apart() {
    let f = fixture("h200/others_basic_raw.csv");
    let o = Command::cargo_bin("stallscope")
        .unwrap()
        .arg("compare")
        .args([&f, &f])
        .args(["--launch-a", "3", "--launch-b", "2", "--format", "csv"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let p = f.display();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().next(),
        Some(format!("metric,unit,{p}#3,{p}#2,verdict,run_shape").as_str())
    );
}

#[test]
fn compare_of_files_names_each_by_path_and_full_kernel() {
    let (a, b) = (
        fixture("h200/sdpa_flash_raw.csv"),
        fixture("h200/sdpa_cudnn_raw.csv"),
    );
    let o = Command::cargo_bin("stallscope")
        .unwrap()
        .arg("compare")
        .args([&a, &b])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let kernel = doc["b"]["kernel"].as_str().unwrap();
    assert_eq!(
        (
            doc["b"]["path"].as_str(),
            kernel.contains('…'),
            kernel.len() > 100
        ),
        (Some(b.to_str().unwrap()), false, true),
        "{}",
        doc["b"]
    );
}

/// The README's machine-readable section names every metric id the catalogue can emit
/// and every unit its values are written in.
#[test]
fn the_readme_documents_every_metric_id_and_unit() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme.find("## Machine-readable output").unwrap();
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut missing: Vec<String> = Vec::new();
    for d in stallscope::analysis::METRICS {
        for name in [d.key, d.kind.output_unit()] {
            let quoted = format!("`{name}`");
            if !section.contains(&quoted) && !missing.contains(&quoted) {
                missing.push(quoted);
            }
        }
    }
    assert_eq!(missing, Vec::<String>::new());
}
