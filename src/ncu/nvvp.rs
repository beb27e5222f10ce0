//! The Visual Profiler's (nvvp) "GPU Details" CSV export: an unquoted header starting
//! `Name,Start Time(ns),Duration(ns),GridX,…`, then one row per kernel launch or memory
//! copy, one column per metric with its unit in the name (`Issue Slot Utilization(%)`,
//! `Device Memory Read Throughput(bytes/sec)`) and utilisation levels written as
//! `Low (1)`, `Mid (4)`, `High (9)` or `Idle`.
//!
//! Each kernel row becomes one record whose metrics sit in the section [`SECTION`] under
//! their column names without the unit; memory copies and sets carry no kernel metrics
//! and are left out, counted in a warning.

use super::error::ParseError;
use super::input::CsvText;
use super::launch::{Identity, LaunchInfo};
use super::record::{DetailMetric, KernelRecord, Page};
use super::value::Value;
use std::path::Path;

/// The section the Visual Profiler's metrics are kept in.
pub const SECTION: &str = "Visual Profiler";

/// The kernel launches of a GPU Details export, and a warning counting the memory
/// copies left out.
pub fn parse(
    path: &Path,
    csv: &CsvText,
) -> Result<(Vec<KernelRecord>, Option<ParseError>), ParseError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(csv.text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| ParseError::at(path, csv.file_line(1), e.to_string()))?
        .clone();
    let col = |name: &str| header.iter().position(|h| h.trim() == name);
    let grid = ["GridX", "GridY", "GridZ"].map(col);
    let block = ["BlockX", "BlockY", "BlockZ"].map(col);
    let mut records = Vec::new();
    let mut copies: Vec<String> = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            ParseError::at(path, csv.file_line(line), e.to_string())
        })?;
        let line = csv.file_line(row.position().map_or(0, |p| p.line()));
        let name = row.get(0).unwrap_or_default().trim();
        if name.is_empty() {
            continue;
        }
        let dims = |cols: &[Option<usize>; 3]| -> Option<String> {
            let v: Vec<&str> = cols
                .iter()
                .map(|c| c.and_then(|c| row.get(c)).map(str::trim).unwrap_or(""))
                .collect();
            v.iter()
                .all(|s| !s.is_empty())
                .then(|| format!("({}, {}, {})", v[0], v[1], v[2]))
        };
        let (grid, block) = (dims(&grid), dims(&block));
        if grid.is_none() || is_copy(name) {
            copies.push(name.to_string());
            continue;
        }
        let mut metrics = Vec::new();
        for (i, column) in header.iter().enumerate().skip(1) {
            let cell = row.get(i).unwrap_or_default().trim();
            if cell.is_empty() {
                continue;
            }
            let (name, unit) = split_unit(column.trim());
            let Some((value, unit)) = value_of(name, unit, cell) else {
                return Err(ParseError::at(
                    path,
                    line,
                    format!("column {column:?}: {cell:?} is not a number nor a utilisation level"),
                ));
            };
            metrics.push(DetailMetric {
                section: SECTION.into(),
                name: name.into(),
                unit: unit.into(),
                value,
                range: None,
            });
        }
        let identity = Identity {
            kernel: name.to_string(),
            launch_id: None,
            process_id: None,
            launch: LaunchInfo {
                block,
                grid,
                ..LaunchInfo::default()
            },
            line,
        };
        records.push(KernelRecord::new(
            identity,
            Page::Metrics {
                metrics,
                rules: Vec::new(),
            },
        ));
    }
    let warning = (!copies.is_empty()).then(|| {
        let mut kinds: Vec<&str> = copies.iter().map(String::as_str).collect();
        kinds.sort_unstable();
        kinds.dedup();
        ParseError::file(
            path,
            format!(
                "left out {} memory-copy row{} of this Visual Profiler export ({}): they carry no kernel metrics",
                copies.len(),
                if copies.len() == 1 { "" } else { "s" },
                kinds.join(", ")
            ),
        )
    });
    Ok((records, warning))
}

/// A memory copy or set row (`Memcpy HtoD [sync]`, `Memset`).
fn is_copy(name: &str) -> bool {
    name.starts_with("Memcpy") || name.starts_with("Memset")
}

/// A column name without its unit, and the unit: `Duration(ns)` → (`Duration`, `ns`).
fn split_unit(column: &str) -> (&str, &str) {
    for unit in ["ns", "%", "bytes/sec", "bytes"] {
        if let Some(name) = column.strip_suffix(&format!("({unit})")) {
            return (name.trim_end(), unit);
        }
    }
    (column, "")
}

/// A cell as a value in stallscope's internal unit, with that unit: achieved occupancy
/// (a fraction) in %, throughputs in byte/second, utilisation levels (`Low (1)`,
/// `Idle`) as their number 0–10.
fn value_of(name: &str, unit: &str, cell: &str) -> Option<(Value, &'static str)> {
    if let Some(level) = level(cell) {
        return Some((Value::Num(level), "level"));
    }
    let v: f64 = cell.replace(',', "").parse().ok()?;
    let v = Value::Num(v);
    Some(match (name, unit) {
        ("Achieved Occupancy", _) => (Value::Num(v.num()? * 100.0), "%"),
        (_, "ns") => (v, "ns"),
        (_, "%") => (v, "%"),
        (_, "bytes/sec") => (v, "byte/second"),
        (_, "bytes") => (v, "byte"),
        ("Static Shared Memory" | "Dynamic Shared Memory", _) => (v, "byte"),
        _ => (v, ""),
    })
}

/// A utilisation level: `Idle` is 0, `Low (1)`, `Mid (4)`, `High (9)`, `Max (10)` their
/// number.
fn level(cell: &str) -> Option<f64> {
    if cell == "Idle" {
        return Some(0.0);
    }
    let (word, rest) = cell.split_once(" (")?;
    if !matches!(word, "Low" | "Mid" | "High" | "Max") {
        return None;
    }
    rest.strip_suffix(')')?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ncu::input::csv_text;

    // Cut from `1d/Reduce/Profiling Results/cuda_reduce_profiling.csv` of
    // github.com/sankarmanoj/thrust2D (columns kept: the first twelve and a few metrics).
    const SAMPLE: &str = "Name,Start Time(ns),Duration(ns),GridX,GridY,GridZ,BlockX,BlockY,BlockZ,Registers/Thread,Static Shared Memory,Dynamic Shared Memory,Size(bytes),Throughput(bytes/sec),Device Memory Utilization,Issue Stall Reasons (Data Request)(%),Issue Stall Reasons (Not Selected)(%),Achieved Occupancy\n\
\"Memcpy HtoD [sync]\",270472909,104290171,,,,,,,,,,268435456,2573928620,,,,\n\
\"reduce_kernel(int*, int*, int)\",375209321,2063813,26,1,1,1024,1,1,10,0,4096,,,High (8),61.5,0.4,0.604\n";

    #[test]
    fn kernel_rows_become_records_and_copies_a_warning() {
        let path = Path::new("gpu.csv");
        let (records, warning) = parse(path, &csv_text(path, SAMPLE.as_bytes()).unwrap()).unwrap();
        assert_eq!(records.len(), 1);
        let r = &records[0];
        assert_eq!(r.kernel, "reduce_kernel(int*, int*, int)");
        assert_eq!(r.launch.grid.as_deref(), Some("(26, 1, 1)"));
        assert_eq!(r.launch.block.as_deref(), Some("(1024, 1, 1)"));
        let Page::Metrics { metrics, .. } = &r.page else {
            panic!("a metrics page")
        };
        let get = |n: &str| metrics.iter().find(|m| &*m.name == n).unwrap();
        assert_eq!(get("Duration").value, Value::Num(2063813.0));
        assert_eq!(&*get("Duration").unit, "ns");
        assert_eq!(get("Device Memory Utilization").value, Value::Num(8.0));
        assert_eq!(
            get("Issue Stall Reasons (Data Request)").value,
            Value::Num(61.5)
        );
        let occ = get("Achieved Occupancy").value.num().unwrap();
        assert!((occ - 60.4).abs() < 1e-9);
        let warning = warning.unwrap().to_string();
        assert!(warning.contains("left out 1 memory-copy row"), "{warning}");
    }

    #[test]
    fn levels_and_units() {
        assert_eq!(level("Idle"), Some(0.0));
        assert_eq!(level("Low (1)"), Some(1.0));
        assert_eq!(level("Mid (4)"), Some(4.0));
        assert_eq!(level("High (9)"), Some(9.0));
        assert_eq!(level("0.5"), None);
        assert_eq!(split_unit("Duration(ns)"), ("Duration", "ns"));
        assert_eq!(
            split_unit("Issue Stall Reasons (Texture)(%)"),
            ("Issue Stall Reasons (Texture)", "%")
        );
        assert_eq!(
            split_unit("FP Instructions(Single)"),
            ("FP Instructions(Single)", "")
        );
    }
}
