//! The raw page: a row of metric names, a row of units, then one row per kernel launch.
//! The column list is shared by all launches of a file, so a file of many launches
//! stores its ~2,200 names once.

use super::input::CsvText;
use super::value::{Unit, Value, check_metric, parse_cell};
use super::{
    Ending, KernelRecord, LaunchInfo, Page, ParseError, check_id, csv_error, is_blank,
    length_error, more_rows, non_empty, parse_id, reader,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The identity columns that stand before the metrics.
const IDENTITY: &[&str] = &[
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    // A timestamp, in ncu up to 2020 and in live `--csv` output.
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
];

#[derive(Debug, Clone)]
pub struct RawColumn {
    /// As written, prefix included (`TPC.TriageCompute.sm__…`).
    pub name: Box<str>,
    /// The metric without a collection prefix (`sm__…`).
    pub metric: Box<str>,
    pub unit: Unit,
}

/// The metric columns of one raw page.
#[derive(Debug)]
pub struct RawSchema {
    pub columns: Vec<RawColumn>,
    /// Metric name (prefix stripped) → columns, unprefixed first.
    index: HashMap<Box<str>, Vec<usize>>,
}

impl RawSchema {
    fn new(columns: Vec<RawColumn>) -> RawSchema {
        let mut index: HashMap<Box<str>, Vec<usize>> = HashMap::with_capacity(columns.len());
        for (i, c) in columns.iter().enumerate() {
            let slot = index.entry(c.metric.clone()).or_default();
            if c.name == c.metric {
                slot.insert(0, i);
            } else {
                slot.push(i);
            }
        }
        RawSchema { columns, index }
    }

    pub fn find(&self, metric: &str) -> &[usize] {
        self.index.get(metric).map(Vec::as_slice).unwrap_or(&[])
    }
}

/// One launch's row of the raw page, stored compactly (8 bytes a cell: a file of a
/// thousand launches of ~2,200 metrics stays well under three times its size).
#[derive(Debug, Clone)]
pub struct RawMetrics {
    pub schema: Arc<RawSchema>,
    /// Numbers; empty and text cells are marked with [`EMPTY`] and [`TEXT`].
    cells: Box<[f64]>,
    /// The few text cells (`PolicySpread`, `no data` …), by column.
    texts: Vec<(u32, Box<str>)>,
}

/// Markers for cells that hold no number. ncu's numbers are never NaN (a "nan" cell is
/// kept as text), so NaN payloads are free to use.
const EMPTY: u64 = 0x7ff8_0000_0000_e0e0;
const TEXT: u64 = 0x7ff8_0000_0000_7e57;

impl RawMetrics {
    fn new(schema: Arc<RawSchema>, values: Vec<Value>) -> RawMetrics {
        let mut texts = Vec::new();
        let cells = values
            .into_iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Num(x) => x,
                Value::Empty => f64::from_bits(EMPTY),
                Value::Text(t) => {
                    texts.push((i as u32, t));
                    f64::from_bits(TEXT)
                }
            })
            .collect();
        RawMetrics {
            schema,
            cells,
            texts,
        }
    }

    /// The value of column `col`.
    pub fn value(&self, col: usize) -> Value {
        let x = self.cells[col];
        match x.to_bits() {
            EMPTY => Value::Empty,
            TEXT => self
                .texts
                .binary_search_by_key(&(col as u32), |t| t.0)
                .map(|i| Value::Text(self.texts[i].1.clone()))
                .unwrap_or(Value::Empty),
            _ => Value::Num(x),
        }
    }

    /// A metric's number, matched by name without its collection prefix; among several
    /// columns of that name, the first that holds one.
    pub fn num(&self, metric: &str) -> Option<f64> {
        self.schema
            .find(metric)
            .iter()
            .map(|&i| self.cells[i])
            .find(|x| !x.is_nan())
    }

    /// A metric's value: its number, else its text, else `None`.
    pub fn get(&self, metric: &str) -> Option<Value> {
        if let Some(x) = self.num(metric) {
            return Some(Value::Num(x));
        }
        self.schema
            .find(metric)
            .iter()
            .map(|&i| self.value(i))
            .find(|v| !v.is_empty())
    }

    /// Adds what another raw page of the same launch holds and this one lacks: its other
    /// columns (`--page raw --metrics …` beside `--set full`), and values where this
    /// page's cells are empty. Where both hold a value, this page's stays.
    pub fn absorb(&mut self, other: &RawMetrics) {
        let mut extra = Vec::new();
        for (j, col) in other.schema.columns.iter().enumerate() {
            let here = self
                .schema
                .find(&col.metric)
                .iter()
                .copied()
                .find(|&i| self.schema.columns[i].name == col.name);
            match here {
                Some(i) if self.value(i).is_empty() => self.set(i, other.value(j)),
                Some(_) => {}
                None => extra.push(j),
            }
        }
        if extra.is_empty() {
            return;
        }
        let mut columns = self.schema.columns.clone();
        columns.extend(extra.iter().map(|&j| other.schema.columns[j].clone()));
        let mut values: Vec<Value> = (0..self.cells.len()).map(|i| self.value(i)).collect();
        values.extend(extra.iter().map(|&j| other.value(j)));
        *self = RawMetrics::new(Arc::new(RawSchema::new(columns)), values);
    }

    fn set(&mut self, col: usize, value: Value) {
        match value {
            Value::Num(x) => self.cells[col] = x,
            Value::Empty => self.cells[col] = f64::from_bits(EMPTY),
            Value::Text(t) => {
                self.cells[col] = f64::from_bits(TEXT);
                let at = self.texts.partition_point(|(c, _)| *c < col as u32);
                self.texts.insert(at, (col as u32, t));
            }
        }
    }

    /// Forgets a cell's value (it becomes unknown).
    pub fn clear(&mut self, col: usize) {
        self.cells[col] = f64::from_bits(EMPTY);
    }

    pub fn iter(&self) -> impl Iterator<Item = (&RawColumn, Value)> + '_ {
        self.schema
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c, self.value(i)))
    }
}

/// The metric id inside a column name: from the first dot-separated part holding `__`.
fn strip_prefix(name: &str) -> &str {
    let mut start = 0;
    for part in name.split('.') {
        if part.contains("__") {
            return &name[start..];
        }
        start += part.len() + 1;
    }
    name
}

pub fn parse(
    path: &Path,
    csv: &CsvText,
    ending: &mut Ending,
) -> Result<Vec<KernelRecord>, ParseError> {
    let mut rdr = reader(&csv.text);
    let mut names = csv::StringRecord::new();
    let mut units = csv::StringRecord::new();
    let read = |rdr: &mut csv::Reader<&[u8]>, rec: &mut csv::StringRecord| {
        rdr.read_record(rec).map_err(|e| csv_error(path, csv, e))
    };
    if !read(&mut rdr, &mut names)? {
        return Ok(Vec::new());
    }
    if !read(&mut rdr, &mut units)? {
        return Err(ParseError::file(
            path,
            "the raw page ends after its header: the row of units is missing",
        ));
    }
    let width = names.len();
    let unit_line = csv.file_line(units.position().map_or(2, |p| p.line()));
    if units.len() != width {
        return Err(length_error(path, unit_line, units.len(), width, "raw"));
    }

    let pos = |n: &str| names.iter().position(|c| c == n);
    let (id, process, kernel, block, grid, device, cc) = (
        pos("ID"),
        pos("Process ID"),
        pos("Kernel Name"),
        pos("Block Size"),
        pos("Grid Size"),
        pos("Device"),
        pos("CC"),
    );
    let kernel = kernel
        .ok_or_else(|| ParseError::at(path, 1, "the raw page's header lacks \"Kernel Name\""))?;
    let metric_cols: Vec<usize> = (0..width)
        .filter(|&i| !IDENTITY.contains(&&names[i]))
        .collect();
    let schema = Arc::new(RawSchema::new(
        metric_cols
            .iter()
            .map(|&i| RawColumn {
                name: names[i].into(),
                metric: strip_prefix(&names[i]).into(),
                unit: Unit::parse(&units[i]),
            })
            .collect(),
    ));

    let mut records = Vec::new();
    let mut row = csv::StringRecord::new();
    while read(&mut rdr, &mut row)? {
        let line = csv.file_line(row.position().map_or(0, |p| p.line()));
        if is_blank(&row) {
            continue;
        }
        let launch = (|| {
            if row.len() != width {
                return Err(length_error(path, line, row.len(), width, "raw"));
            }
            check_id(path, line, "ID", id.map(|i| &row[i]))?;
            check_id(path, line, "Process ID", process.map(|i| &row[i]))?;
            let mut values = Vec::with_capacity(metric_cols.len());
            for (col, &i) in schema.columns.iter().zip(&metric_cols) {
                let v = parse_cell(&row[i], &col.unit)
                    .and_then(|v| check_metric(&col.metric, &row[i], &v).map(|()| v))
                    .map_err(|e| ParseError::at(path, line, format!("column {}: {e}", col.name)))?;
                values.push(v);
            }
            ending.check_row(path, &row, line)?;
            Ok(values)
        })();
        let values = match launch {
            Ok(values) => values,
            Err(e) => {
                // One row is one launch: the rows before it are whole.
                ending.cut(e, more_rows(rdr.records()), records.len())?;
                break;
            }
        };
        let get = |i: Option<usize>| i.map(|i| &row[i]);
        records.push(KernelRecord {
            kernel: row[kernel].to_string(),
            launch_id: parse_id(get(id)),
            process_id: parse_id(get(process)),
            launch: LaunchInfo {
                block: non_empty(get(block)),
                grid: non_empty(get(grid)),
                device: non_empty(get(device)),
                cc: non_empty(get(cc)),
                invocations: None,
            },
            page: Page::Raw(RawMetrics::new(schema.clone(), values)),
            line,
        });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::strip_prefix;

    #[test]
    fn prefixes_are_stripped() {
        assert_eq!(
            strip_prefix("TPC.TriageCompute.sm__pipe_tensor_cycles_active_realtime.avg.pct"),
            "sm__pipe_tensor_cycles_active_realtime.avg.pct"
        );
        assert_eq!(
            strip_prefix("gpu__time_duration.sum"),
            "gpu__time_duration.sum"
        );
        assert_eq!(strip_prefix("derived_tempMetric0"), "derived_tempMetric0");
    }
}
