//! The long layout: one row per metric per kernel. Used by the details page (with rule
//! rows, whose section is an identifier and whose metric columns are empty), by
//! `--metrics` output, and by the summary page (Minimum / Maximum / Average).

use super::error::ParseError;
use super::input::CsvText;
use super::launch::LaunchColumns;
use super::record::{DetailMetric, KernelRecord, Page, RuleFinding};
use super::rows::{
    Columns, Ending, check_id, check_unique_names, csv_error, is_blank, length_error, more_rows,
    non_empty, parse_id, reader,
};
use super::value::{Unit, Value, check_metric, parse_cell};
use std::collections::HashMap;
use std::path::Path;

struct Layout {
    id: Option<usize>,
    process: Option<usize>,
    kernel: usize,
    launch: LaunchColumns,
    invocations: Option<usize>,
    section: usize,
    name: usize,
    unit: usize,
    /// Details: "Metric Value". Summary: "Average".
    value: usize,
    min: Option<usize>,
    max: Option<usize>,
    rule: Option<[usize; 5]>,
    width: usize,
}

impl Layout {
    fn new(path: &Path, cols: &Columns, summary: bool) -> Result<Layout, ParseError> {
        let need = |name: &str| {
            cols.find(name).ok_or_else(|| {
                ParseError::at(path, 1, format!("the header lacks the column {name:?}"))
            })
        };
        let rule = match (
            cols.find("Rule Name"),
            cols.find("Rule Type"),
            cols.find("Rule Description"),
            cols.find("Estimated Speedup Type"),
            cols.find("Estimated Speedup"),
        ) {
            (Some(a), Some(b), Some(c), Some(d), Some(e)) => Some([a, b, c, d, e]),
            (Some(a), Some(b), Some(c), _, _) => Some([a, b, c, usize::MAX, usize::MAX]),
            _ => None,
        };
        Ok(Layout {
            id: cols.find("ID"),
            process: cols.find("Process ID"),
            kernel: need("Kernel Name")?,
            launch: LaunchColumns::find(|n| cols.find(n)),
            invocations: cols.find("Invocations"),
            section: need("Section Name")?,
            name: need("Metric Name")?,
            unit: need("Metric Unit")?,
            value: need(if summary { "Average" } else { "Metric Value" })?,
            min: cols.find("Minimum"),
            max: cols.find("Maximum"),
            rule,
            width: cols.len(),
        })
    }

    /// The fields a metric row must have: everything up to its value.
    fn metric_width(&self) -> usize {
        [self.section, self.name, self.unit, self.value, self.kernel]
            .into_iter()
            .chain(self.min)
            .chain(self.max)
            .max()
            .unwrap_or(0)
            + 1
    }
}

/// A launch's key: its launch ID and kernel, and on summary pages (no launch ID) its
/// launch configuration.
type Key = (Option<u64>, String, Option<String>);

pub fn parse(
    path: &Path,
    csv: &CsvText,
    summary: bool,
    ending: &mut Ending,
) -> Result<Vec<KernelRecord>, ParseError> {
    let mut rows = reader(&csv.text).into_records();
    let header = match rows.next() {
        Some(h) => h.map_err(|e| csv_error(path, csv, e))?,
        None => return Ok(Vec::new()),
    };
    let header_line = csv.file_line(header.position().map_or(1, |p| p.line()));
    check_unique_names(path, header_line, header.iter())?;
    let layout = Layout::new(path, &Columns::new(&header), summary)?;
    let mut page = LongPage {
        path,
        metric_width: layout.metric_width(),
        layout,
        records: Vec::new(),
        by_key: HashMap::new(),
        units: HashMap::new(),
    };
    let mut last_line = 0;
    while let Some(row) = rows.next() {
        let row = row.map_err(|e| csv_error(path, csv, e))?;
        let line = csv.file_line(row.position().map_or(0, |p| p.line()));
        if is_blank(&row) {
            continue;
        }
        last_line = line;
        if let Err(e) = page
            .read_row(&row, line)
            .and_then(|()| ending.check_row(path, &row, line))
        {
            // The launch the cut row belongs to is incomplete.
            if let Some(i) = page.launch_of_cut(&row) {
                page.records.remove(i);
            }
            ending.cut(e, more_rows(&mut rows), page.records.len())?;
            return Ok(page.records);
        }
    }
    // A file cut between two rows leaves no sign in its text: its last launch then holds
    // the first metrics of the launch before it, in the same order, and no more (ncu
    // writes the same sections in the same order for every launch of one run; on the
    // real exports no whole launch is such a prefix of the one before it).
    if let [.., before, last] = page.records.as_slice()
        && let Some((had, of)) = cut_short(before, last)
    {
        let e = ParseError::at(
            path,
            last_line,
            format!(
                "launch {} has {had} of the {of} metrics of the launch before it, the same ones in the same order: the file seems to stop inside it",
                last.launch_id.map_or("?".to_string(), |id| id.to_string())
            ),
        );
        ending.cut(e, false, page.records.len() - 1)?;
        page.records.pop();
    }
    Ok(page.records)
}

/// Whether `last`'s metrics are a shorter prefix of `before`'s (by section and name):
/// how many it has, of how many.
fn cut_short(before: &KernelRecord, last: &KernelRecord) -> Option<(usize, usize)> {
    let (Page::Metrics { metrics: a, .. }, Page::Metrics { metrics: b, .. }) =
        (&before.page, &last.page)
    else {
        return None;
    };
    let same = |x: &DetailMetric, y: &DetailMetric| x.section == y.section && x.name == y.name;
    (b.len() < a.len() && a.iter().zip(b).all(|(x, y)| same(x, y))).then_some((b.len(), a.len()))
}

/// A long-layout page being read.
struct LongPage<'p> {
    path: &'p Path,
    layout: Layout,
    metric_width: usize,
    records: Vec<KernelRecord>,
    by_key: HashMap<Key, usize>,
    units: HashMap<String, Unit>,
}

impl LongPage<'_> {
    /// The key of the launch a row belongs to; `None` when the row is too short to hold
    /// it whole.
    fn key(&self, row: &csv::StringRecord) -> Option<Key> {
        let l = &self.layout;
        let config_cells = if l.id.is_none() {
            [l.launch.block, l.launch.grid]
        } else {
            [None, None]
        };
        let needed = [Some(l.kernel), l.id]
            .into_iter()
            .chain(config_cells)
            .flatten()
            .max()
            .unwrap_or(0);
        // Every cell but the last is whole, even in a row cut short.
        if row.len() <= needed + 1 {
            return None;
        }
        let get = |i: Option<usize>| i.and_then(|i| row.get(i));
        // Summary pages have no launch ID: kernels are told apart by their configuration.
        let config = l.id.is_none().then(|| {
            format!(
                "{}|{}",
                get(l.launch.block).unwrap_or_default(),
                get(l.launch.grid).unwrap_or_default()
            )
        });
        Some((
            parse_id(get(l.id)),
            row.get(l.kernel).unwrap_or_default().to_string(),
            config,
        ))
    }

    /// The launch a row cut short belongs to, as far as its whole cells tell: by its
    /// launch ID, else by its key; a row too short to tell is taken for the last
    /// launch's (ncu writes a launch's rows together).
    fn launch_of_cut(&self, row: &csv::StringRecord) -> Option<usize> {
        if let Some(id) = self.layout.id
            && row.len() > id + 1
        {
            let launch_id = parse_id(row.get(id));
            return self.records.iter().position(|r| r.launch_id == launch_id);
        }
        match self.key(row) {
            Some(key) => self.by_key.get(&key).copied(),
            None => self.records.len().checked_sub(1),
        }
    }

    fn read_row(&mut self, row: &csv::StringRecord, line: u64) -> Result<(), ParseError> {
        let (path, layout) = (self.path, &self.layout);
        if row.len() > layout.width {
            return Err(length_error(path, line, row.len(), layout.width, "details"));
        }
        let get = |i: Option<usize>| i.and_then(|i| row.get(i));
        let is_rule = layout
            .rule
            .is_some_and(|r| row.get(r[0]).is_some_and(|c| !c.trim().is_empty()));
        if !is_rule && row.len() < self.metric_width {
            return Err(ParseError::at(
                path,
                line,
                format!(
                    "row is too short ({} fields; a metric row needs {}): the file may be truncated or edited",
                    row.len(),
                    self.metric_width
                ),
            ));
        }
        if !is_rule && row.get(layout.name).is_some_and(|n| n.trim().is_empty()) {
            return Err(ParseError::at(
                path,
                line,
                "row names neither a metric nor a rule: the file may be truncated or edited",
            ));
        }
        check_id(path, line, "ID", get(layout.id))?;
        check_id(path, line, "Process ID", get(layout.process))?;
        check_id(path, line, "Invocations", get(layout.invocations))?;
        let key = self.key(row).ok_or_else(|| {
            ParseError::at(path, line, "row is too short to name its kernel launch")
        })?;
        let records = &mut self.records;
        let index = *self
            .by_key
            .entry(key)
            .or_insert_with_key(|(launch_id, kernel, _)| {
                records.push(KernelRecord {
                    kernel: kernel.clone(),
                    launch_id: *launch_id,
                    process_id: parse_id(get(layout.process)),
                    launch: layout
                        .launch
                        .read(|i| row.get(i), parse_id(get(layout.invocations))),
                    page: Page::Metrics {
                        metrics: Vec::new(),
                        rules: Vec::new(),
                    },
                    line,
                });
                records.len() - 1
            });
        let Page::Metrics { metrics, rules } = &mut self.records[index].page else {
            unreachable!("long-layout records are built as Page::Metrics")
        };

        if is_rule {
            rules.push(rule_finding(path, layout, row, line)?);
            return Ok(());
        }
        metrics.push(detail_metric(path, layout, &mut self.units, row, line)?);
        Ok(())
    }
}

/// A rule's row: its finding, with the estimated speed-up it names.
fn rule_finding(
    path: &Path,
    layout: &Layout,
    row: &csv::StringRecord,
    line: u64,
) -> Result<RuleFinding, ParseError> {
    let r = layout
        .rule
        .expect("a rule row is read where the page has rule columns");
    let cell = |i: usize| row.get(i).map(str::trim).unwrap_or_default();
    let speedup = match super::value::parse_plain(cell(r[4])) {
        Ok(v) => v.num(),
        Err(e) => return Err(ParseError::at(path, line, e.to_string())),
    };
    Ok(RuleFinding {
        section: cell(layout.section).to_string(),
        rule: cell(r[0]).to_string(),
        kind: cell(r[1]).to_string(),
        description: cell(r[2]).to_string(),
        speedup_type: non_empty(row.get(r[3])),
        speedup_pct: speedup,
    })
}

/// A metric's row: its value (and range, where the page has one) in its unit, each unit
/// read once into `units`.
fn detail_metric(
    path: &Path,
    layout: &Layout,
    units: &mut HashMap<String, Unit>,
    row: &csv::StringRecord,
    line: u64,
) -> Result<DetailMetric, ParseError> {
    let unit_text = row.get(layout.unit).unwrap_or_default().trim();
    let unit = units
        .entry(unit_text.to_string())
        .or_insert_with(|| Unit::parse(unit_text));
    let read = |i: usize| {
        parse_cell(row.get(i).unwrap_or_default(), unit)
            .map_err(|e| ParseError::at(path, line, e.to_string()))
    };
    let name = row.get(layout.name).unwrap_or_default().trim();
    let value = read(layout.value)?;
    check_metric(name, row.get(layout.value).unwrap_or_default(), &value)
        .map_err(|e| ParseError::at(path, line, e.to_string()))?;
    let range = match (layout.min, layout.max) {
        (Some(lo), Some(hi)) => match (read(lo)?, read(hi)?) {
            (Value::Num(a), Value::Num(b)) => Some((a, b)),
            _ => None,
        },
        _ => None,
    };
    Ok(DetailMetric {
        section: row.get(layout.section).unwrap_or_default().trim().into(),
        name: name.into(),
        unit: unit.base.clone(),
        value,
        range,
    })
}
