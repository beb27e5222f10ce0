//! The raw page: a row of metric names, a row of units, then one row per kernel launch.
//! The column list is shared by all launches of a file, so a file of many launches
//! stores its ~2,200 names once.

use super::error::ParseError;
use super::input::CsvText;
use super::launch::{Identity, LaunchColumns};
use super::rows::{
    Ending, check_id, check_unique_names, count_bytes, csv_error, is_blank, length_error,
    more_rows, parse_id, reader,
};
use super::value::{Unit, Value, check_metric, number_prefix, parse_cell, parse_count};
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
    /// Metric name (prefix stripped) → columns, unprefixed first. Hashed with a fast
    /// hash: the analysis looks up some hundred metrics in each of a thousand launches,
    /// and the names are the export's, not chosen to collide.
    index: HashMap<Box<str>, Vec<usize>, foldhash::fast::RandomState>,
}

impl RawSchema {
    fn new(columns: Vec<RawColumn>) -> RawSchema {
        let mut index: HashMap<Box<str>, Vec<usize>, _> = HashMap::with_capacity_and_hasher(
            columns.len(),
            foldhash::fast::RandomState::default(),
        );
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
/// thousand launches of ~2,200 metrics stays well under three times its size). The rows
/// of a page's launches lie in one block of memory that they share.
#[derive(Clone)]
pub struct RawMetrics {
    pub schema: Arc<RawSchema>,
    /// Numbers; empty and text cells are marked with [`EMPTY`] and [`TEXT`]. This
    /// launch's row starts at `start`.
    block: Arc<Vec<f64>>,
    start: usize,
    /// The few text cells (`PolicySpread`, `no data` …), by column.
    texts: TextCells,
}

impl std::fmt::Debug for RawMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawMetrics")
            .field("columns", &self.schema.columns.len())
            .field("cells", &self.cells())
            .field("texts", &self.texts)
            .finish()
    }
}

/// Markers for cells that hold no number. ncu's numbers are never NaN (a "nan" cell is
/// kept as text), so NaN payloads are free to use.
const EMPTY: u64 = 0x7ff8_0000_0000_e0e0;
const TEXT: u64 = 0x7ff8_0000_0000_7e57;

/// A launch's few text cells, by column.
type TextCells = Vec<(u32, Box<str>)>;

/// The launches of a page as they are read: their cells one row after the other in one
/// block (one allocation, advised to huge pages, for the tens of MB of a large page),
/// the rest by launch.
struct Rows {
    cells: Vec<f64>,
    /// Where the row being read starts.
    row: usize,
    texts: Vec<(u32, Box<str>)>,
    /// The rows read: where each starts, its text cells, its launch.
    done: Vec<(usize, TextCells, Identity)>,
}

impl Rows {
    fn with_capacity(cells: usize) -> Rows {
        let mut rows = Rows {
            cells: Vec::with_capacity(cells),
            row: 0,
            texts: Vec::new(),
            done: Vec::new(),
        };
        crate::files::huge_pages::advise(&mut rows.cells);
        rows
    }

    /// The position of the next cell in its row.
    fn column(&self) -> usize {
        self.cells.len() - self.row
    }

    fn push_num(&mut self, x: f64) {
        self.cells.push(x);
    }

    fn push(&mut self, v: Value) {
        let x = match v {
            Value::Num(x) => x,
            Value::Empty => f64::from_bits(EMPTY),
            Value::Text(t) => {
                self.texts.push((self.column() as u32, t));
                f64::from_bits(TEXT)
            }
        };
        self.cells.push(x);
    }

    /// Ends the row being read, of the launch `identity` describes.
    fn end_row(&mut self, identity: Identity) {
        self.done
            .push((self.row, std::mem::take(&mut self.texts), identity));
        self.row = self.cells.len();
    }

    /// Forgets the row being read.
    fn drop_row(&mut self) {
        self.cells.truncate(self.row);
        self.texts.clear();
    }

    fn len(&self) -> usize {
        self.done.len()
    }

    /// Each launch read, with its row.
    fn finish(self, schema: &Arc<RawSchema>) -> Vec<(Identity, RawMetrics)> {
        let block = Arc::new(self.cells);
        self.done
            .into_iter()
            .map(|(start, texts, id)| {
                let row = RawMetrics {
                    schema: schema.clone(),
                    block: block.clone(),
                    start,
                    texts,
                };
                (id, row)
            })
            .collect()
    }
}

impl RawMetrics {
    fn new(schema: Arc<RawSchema>, values: Vec<Value>) -> RawMetrics {
        let mut rows = Rows::with_capacity(values.len());
        for v in values {
            rows.push(v);
        }
        RawMetrics {
            schema,
            texts: rows.texts,
            block: Arc::new(rows.cells),
            start: 0,
        }
    }

    fn cells(&self) -> &[f64] {
        &self.block[self.start..self.start + self.schema.columns.len()]
    }

    /// This launch's cells to change: copied into a block of their own first, unless
    /// they have one.
    fn cells_mut(&mut self) -> &mut [f64] {
        let n = self.schema.columns.len();
        if self.block.len() != n || Arc::get_mut(&mut self.block).is_none() {
            self.block = Arc::new(self.cells().to_vec());
            self.start = 0;
        }
        let block = Arc::get_mut(&mut self.block).expect("a block of its own");
        &mut block[..]
    }

    /// The value of column `col`.
    pub fn value(&self, col: usize) -> Value {
        let x = self.cells()[col];
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
            .map(|&i| self.cells()[i])
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
        let mut values: Vec<Value> = (0..self.schema.columns.len())
            .map(|i| self.value(i))
            .collect();
        values.extend(extra.iter().map(|&j| other.value(j)));
        *self = RawMetrics::new(Arc::new(RawSchema::new(columns)), values);
    }

    fn set(&mut self, col: usize, value: Value) {
        match value {
            Value::Num(x) => self.cells_mut()[col] = x,
            Value::Empty => self.cells_mut()[col] = f64::from_bits(EMPTY),
            Value::Text(t) => {
                self.cells_mut()[col] = f64::from_bits(TEXT);
                let at = self.texts.partition_point(|(c, _)| *c < col as u32);
                self.texts.insert(at, (col as u32, t));
            }
        }
    }

    /// Forgets a cell's value (it becomes unknown).
    pub fn clear(&mut self, col: usize) {
        self.cells_mut()[col] = f64::from_bits(EMPTY);
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

/// Where a raw page's columns are: the identity columns by name, and the metrics.
#[derive(Clone)]
struct Layout {
    width: usize,
    id: Option<usize>,
    process: Option<usize>,
    kernel: usize,
    launch: LaunchColumns,
    /// The row position of each metric of the schema.
    metrics: Vec<usize>,
}

impl Layout {
    /// What a row says of its launch; `cell(i)` is the row's cell at position `i`.
    fn identity<'r>(&self, cell: impl Fn(usize) -> &'r str, line: u64) -> Identity {
        let get = |i: Option<usize>| i.map(&cell);
        Identity {
            kernel: cell(self.kernel).to_string(),
            launch_id: parse_id(get(self.id)),
            process_id: parse_id(get(self.process)),
            launch: self.launch.read(|i| Some(cell(i)), None),
            line,
        }
    }
}

/// The column lists of the last raw pages read, by the text of their two header rows:
/// the pages of a ladder share theirs (~2,200 columns), so a folder of them builds it
/// once.
static HEADERS: std::sync::Mutex<Vec<Arc<Header>>> = std::sync::Mutex::new(Vec::new());

/// How many column lists [`HEADERS`] keeps.
const HEADERS_KEPT: usize = 4;

struct Header {
    /// The two header rows, line ends included.
    text: Box<str>,
    schema: Arc<RawSchema>,
    layout: Layout,
}

/// The header of a page that starts with `text` (its two rows), if one was read before.
fn known_header(text: &str) -> Option<Arc<Header>> {
    let headers = HEADERS.lock().ok()?;
    headers.iter().find(|h| &*h.text == text).cloned()
}

fn remember_header(header: Header) {
    if let Ok(mut headers) = HEADERS.lock() {
        headers.retain(|h| h.text != header.text);
        headers.insert(0, Arc::new(header));
        headers.truncate(HEADERS_KEPT);
    }
}

/// Where the two header rows end, when each is one line: the byte after them.
fn header_end(text: &str) -> Option<usize> {
    let first = text.find('\n')?;
    Some(first + 1 + text[first + 1..].find('\n')? + 1)
}

/// The rows to make room for: the lines left after `from`, each as long as a launch.
fn capacity(csv: &CsvText, from: usize, layout: &Layout) -> usize {
    let lines = count_bytes(csv.text.as_bytes().get(from..).unwrap_or_default(), b'\n') + 1;
    lines.saturating_mul(layout.metrics.len())
}

/// Launch rows past this many bytes are read in two halves side by side (a raw page of
/// a thousand launches is some 20 MB), where the machine has two cores or more.
const SPLIT_FROM: usize = 8 << 20;

/// The launches of the rows from `start` (on line `start_line`) as [`quick_rows`] reads
/// them; a large page's rows read in two halves at once, split at a row's start, each
/// half in a block of its own. `None` where either half is not as ncu writes it.
fn quick_launches(
    csv: &CsvText,
    (start, start_line): (usize, u64),
    schema: &Arc<RawSchema>,
    layout: &Layout,
) -> Option<Vec<(Identity, RawMetrics)>> {
    let text = csv.text.as_bytes();
    // Room for the most rows the bytes can hold (a row of `width` cells takes at least
    // 3 bytes a cell: its quotes and a comma or the line end), so the block is never
    // moved; the pages it does not fill are never touched.
    let room = |from: usize, end: usize| {
        (end.saturating_sub(from) / (3 * layout.width.max(1)) + 1)
            .saturating_mul(layout.metrics.len())
    };
    // The size first: asking for the cores reads the process's control-group files.
    let large = text.len().saturating_sub(start) >= SPLIT_FROM;
    let middle = (large && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2))
        .then(|| {
            let half = start + (text.len() - start) / 2;
            text[half..]
                .windows(2)
                .position(|w| w == b"\n\"")
                .map(|n| half + n + 1)
        })
        .flatten();
    let end = text.len();
    let Some(middle) = middle else {
        let rows = quick_rows(
            csv,
            (start, start_line),
            end,
            schema,
            layout,
            room(start, end),
        )?;
        return Some(rows.finish(schema));
    };
    let (first, second) = std::thread::scope(|s| {
        let second = s.spawn(|| {
            // The second half starts on the line after the first half's last.
            let line = start_line + count_bytes(&text[start..middle], b'\n') as u64;
            quick_rows(csv, (middle, line), end, schema, layout, room(middle, end))
        });
        let first = quick_rows(
            csv,
            (start, start_line),
            middle,
            schema,
            layout,
            room(start, middle),
        );
        (first, second.join().expect("a row reader does not panic"))
    });
    let mut launches = first?.finish(schema);
    launches.extend(second?.finish(schema));
    Some(launches)
}

/// The launches of a raw page, each with its row.
pub fn parse(
    path: &Path,
    csv: &CsvText,
    ending: &mut Ending,
) -> Result<Vec<(Identity, RawMetrics)>, ParseError> {
    // A page whose header was read before: its launch rows, read fast, are all there is
    // to read (unless they are not as ncu writes them: then the whole page is read).
    let end = header_end(&csv.text);
    if let Some(h) = end.and_then(|e| known_header(&csv.text[..e]))
        && let Some(launches) = quick_launches(csv, (h.text.len(), 3), &h.schema, &h.layout)
    {
        return Ok(launches);
    }
    let mut rdr = reader(&csv.text);
    let Some((schema, layout)) = read_header(path, csv, &mut rdr)? else {
        return Ok(Vec::new());
    };

    // Rows of cells for every line left: the page's block is allocated once.
    let start = rdr.position().clone();
    let from = usize::try_from(start.byte()).unwrap_or(usize::MAX);
    let launches = quick_launches(csv, (from, start.line()), &schema, &layout);
    if end == Some(from) && start.line() == 3 {
        remember_header(Header {
            text: csv.text[..from].into(),
            schema: schema.clone(),
            layout: layout.clone(),
        });
    }
    if let Some(launches) = launches {
        return Ok(launches);
    }
    let capacity = capacity(csv, from, &layout);
    let rows = read_rows(path, csv, &mut rdr, (&schema, &layout), capacity, ending)?;
    Ok(rows.finish(&schema))
}

/// The next record of the page into `rec`; false at its end.
fn next_record(
    path: &Path,
    csv: &CsvText,
    rdr: &mut csv::Reader<&[u8]>,
    rec: &mut csv::StringRecord,
) -> Result<bool, ParseError> {
    rdr.read_record(rec).map_err(|e| csv_error(path, csv, e))
}

/// The page's two header rows (names, units), checked, as the columns' schema and where
/// they stand; `None` for an empty page.
fn read_header(
    path: &Path,
    csv: &CsvText,
    rdr: &mut csv::Reader<&[u8]>,
) -> Result<Option<(Arc<RawSchema>, Layout)>, ParseError> {
    let mut names = csv::StringRecord::new();
    let mut units = csv::StringRecord::new();
    if !next_record(path, csv, rdr, &mut names)? {
        return Ok(None);
    }
    if !next_record(path, csv, rdr, &mut units)? {
        return Err(ParseError::file(
            path,
            "the raw page ends after its header: the row of units is missing",
        ));
    }
    check_unique_names(
        path,
        csv.file_line(names.position().map_or(1, |p| p.line())),
        names.iter(),
    )?;
    let width = names.len();
    let unit_line = csv.file_line(units.position().map_or(2, |p| p.line()));
    if units.len() != width {
        return Err(length_error(path, unit_line, units.len(), width, "raw"));
    }

    let pos = |n: &str| names.iter().position(|c| c == n);
    let layout = Layout {
        width,
        id: pos("ID"),
        process: pos("Process ID"),
        kernel: pos("Kernel Name").ok_or_else(|| {
            ParseError::at(path, 1, "the raw page's header lacks \"Kernel Name\"")
        })?,
        launch: LaunchColumns::find(pos),
        metrics: (0..width)
            .filter(|&i| !IDENTITY.contains(&&names[i]))
            .collect(),
    };
    let schema = Arc::new(RawSchema::new(
        layout
            .metrics
            .iter()
            .map(|&i| RawColumn {
                name: names[i].into(),
                metric: strip_prefix(&names[i]).into(),
                unit: Unit::parse(&units[i]),
            })
            .collect(),
    ));
    Ok(Some((schema, layout)))
}

/// The launch rows left, read by the CSV reader (what [`quick_rows`] would not read):
/// an error says what is wrong and where, unless the page was cut short in a row
/// (`ending` says whether that is allowed): then the rows before it are kept.
fn read_rows(
    path: &Path,
    csv: &CsvText,
    rdr: &mut csv::Reader<&[u8]>,
    (schema, layout): (&RawSchema, &Layout),
    capacity: usize,
    ending: &mut Ending,
) -> Result<Rows, ParseError> {
    let width = layout.width;
    let mut rows = Rows::with_capacity(capacity);
    let mut row = csv::StringRecord::new();
    while next_record(path, csv, rdr, &mut row)? {
        let line = csv.file_line(row.position().map_or(0, |p| p.line()));
        if is_blank(&row) {
            continue;
        }
        let launch = (|| {
            if row.len() != width {
                return Err(length_error(path, line, row.len(), width, "raw"));
            }
            check_id(path, line, "ID", layout.id.map(|i| &row[i]))?;
            check_id(path, line, "Process ID", layout.process.map(|i| &row[i]))?;
            for (col, &i) in schema.columns.iter().zip(&layout.metrics) {
                rows.push(metric_cell(col, &row[i]).map_err(|e| {
                    ParseError::at(path, line, format!("column {}: {e}", col.name))
                })?);
            }
            ending.check_row(path, &row, line)
        })();
        if let Err(e) = launch {
            // One row is one launch: the rows before it are whole.
            rows.drop_row();
            ending.cut(e, more_rows(rdr.records()), rows.len())?;
            break;
        }
        rows.end_row(layout.identity(|i| &row[i], line));
    }
    Ok(rows)
}

/// A metric cell's value, in its column's internal unit.
fn metric_cell(col: &RawColumn, cell: &str) -> Result<Value, super::value::NumberError> {
    let v = parse_cell(cell, &col.unit)?;
    check_metric(&col.metric, cell, &v)?;
    Ok(v)
}

/// The position of the first `"` or line end in `b`, looked for eight bytes at a time
/// (a byte equal to one of them is a zero byte of the word XORed with it; the lowest
/// byte the classic zero-byte test flags is exactly the first).
fn quote_or_line_end(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut chunks = b.chunks_exact(8);
    for (n, chunk) in chunks.by_ref().enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let hits =
            zero_bytes(w ^ (ONES * u64::from(b'"'))) | zero_bytes(w ^ (ONES * u64::from(b'\n')));
        if hits != 0 {
            return Some(n * 8 + hits.trailing_zeros() as usize / 8);
        }
    }
    let done = b.len() - chunks.remainder().len();
    chunks
        .remainder()
        .iter()
        .position(|&c| c == b'"' || c == b'\n')
        .map(|i| done + i)
}

/// The launch rows of a page as ncu writes them, read without the CSV reader (a page
/// of a thousand launches holds millions of cells): every cell quoted with no quote or
/// line end inside, one row a line, every row as long as the header, every cell a value
/// its column holds. `None` at the first thing otherwise: the CSV reader then reads the
/// page from `start`, and says what is wrong and where.
fn quick_rows(
    csv: &CsvText,
    (start, start_line): (usize, u64),
    end: usize,
    schema: &Arc<RawSchema>,
    layout: &Layout,
    capacity: usize,
) -> Option<Rows> {
    let text = csv.text.as_bytes();
    let mut pos = start;
    let mut line = start_line;
    let limits = QuickLimits::of(schema);
    let row = QuickRow {
        csv,
        schema,
        layout,
        limits: &limits,
    };
    let mut fields: Vec<(usize, usize)> = Vec::with_capacity(layout.width);
    let mut rows = Rows::with_capacity(capacity);
    while pos < end {
        let row_line = line;
        line += 1;
        if text[pos] != b'"' {
            // A blank row (spaces) ends some pages.
            let end = text[pos..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |n| pos + n);
            if !text[pos..end]
                .iter()
                .all(|b| matches!(b, b' ' | b'\t' | b'\r'))
            {
                return None;
            }
            pos = end + 1;
            continue;
        }
        fields.clear();
        pos = row.split(pos, &mut fields, &mut rows)?;
        if fields.len() != layout.width {
            return None;
        }
        let cell = |i: usize| &csv.text[fields[i].0..fields[i].1];
        for id in [layout.id, layout.process].into_iter().flatten() {
            parse_count(cell(id), u64::MAX).ok()?;
        }
        rows.end_row(layout.identity(cell, csv.file_line(row_line)));
    }
    Some(rows)
}

/// What [`quick_rows`] accepts of each metric column without the full reading: its
/// unit's factor, the most its cells may hold in the internal unit (a number from 0,
/// not `-0`, to it), and whether they are whole numbers (PC-sampling counts). One entry
/// a column, looked up once a cell.
struct QuickLimits(Vec<QuickColumn>);

#[derive(Clone, Copy)]
struct QuickColumn {
    factor: f64,
    largest: f64,
    whole: bool,
}

impl QuickLimits {
    fn of(schema: &RawSchema) -> QuickLimits {
        QuickLimits(
            schema
                .columns
                .iter()
                .map(|c| QuickColumn {
                    factor: c.unit.factor,
                    largest: super::value::largest(&c.metric, &c.unit),
                    whole: c.metric.starts_with("smsp__pcsamp_"),
                })
                .collect(),
        )
    }
}

/// One launch row as [`quick_rows`] reads it.
struct QuickRow<'a> {
    csv: &'a CsvText<'a>,
    schema: &'a RawSchema,
    layout: &'a Layout,
    limits: &'a QuickLimits,
}

impl QuickRow<'_> {
    /// Splits the row at `pos` into `fields` (each cell's bounds inside its quotes),
    /// its metric cells read into `rows` in the same pass; the position after the row,
    /// or `None` at anything not as ncu writes it.
    #[inline]
    fn split(
        &self,
        mut pos: usize,
        fields: &mut Vec<(usize, usize)>,
        rows: &mut Rows,
    ) -> Option<usize> {
        let text = self.csv.text.as_bytes();
        loop {
            let open = pos + 1;
            let close = self.cell(open, fields.len(), rows)?;
            fields.push((open, close));
            match text.get(close + 1) {
                Some(b',') if text.get(close + 2) == Some(&b'"') => pos = close + 2,
                _ => return Self::row_end(text, close),
            }
        }
    }

    /// Reads the cell that opens at `open`, the row's `field`th, into `rows` when it is
    /// a metric's; where its closing quote is, or `None` at anything not as ncu writes it.
    #[inline(always)]
    fn cell(&self, open: usize, field: usize, rows: &mut Rows) -> Option<usize> {
        let (csv, layout, limits) = (self.csv, self.layout, self.limits);
        let text = csv.text.as_bytes();
        let k = rows.column();
        let metric = layout.metrics.get(k) == Some(&field);
        // Most cells of a raw page are `""` or one digit: read before anything else.
        if metric && let Some(close) = Self::short_cell(text, open, limits, k, rows) {
            return Some(close);
        }
        // A metric cell that is a plain number ends where the number does (read in the
        // same pass); any other cell at its closing quote.
        let number = metric
            .then(|| Some((limits.0[k], number_prefix(text.get(open..)?)?)))
            .flatten()
            .map(|(c, (x, len))| (c, if c.factor == 1.0 { x } else { x * c.factor }, len))
            .filter(|(c, x, len)| {
                x.is_sign_positive()
                    && *x <= c.largest
                    && (!c.whole || x.fract() == 0.0)
                    && text.get(open + len) == Some(&b'"')
            })
            .map(|(_, x, len)| (x, len));
        let close = match number {
            Some((_, len)) => open + len,
            None => open + quote_or_line_end(text.get(open..)?)?,
        };
        if text[close] != b'"' {
            return None;
        }
        if metric {
            match number {
                Some((x, _)) => rows.push_num(x),
                // Negative numbers and those past a limit are checked by the full reading.
                None if close == open => rows.push(Value::Empty),
                None => {
                    rows.push(metric_cell(&self.schema.columns[k], &csv.text[open..close]).ok()?)
                }
            }
        }
        Some(close)
    }

    /// A metric cell that is empty (`""`) or one digit within its column's limits,
    /// pushed onto `rows`; where its closing quote is. `None` for any other cell, which
    /// the general reading takes, with the same result for these two.
    #[inline(always)]
    fn short_cell(
        text: &[u8],
        open: usize,
        limits: &QuickLimits,
        k: usize,
        rows: &mut Rows,
    ) -> Option<usize> {
        match (text.get(open)?, text.get(open + 1)) {
            (b'"', _) => {
                rows.push(Value::Empty);
                Some(open)
            }
            (&d @ b'0'..=b'9', Some(b'"')) => {
                let c = limits.0[k];
                let x = f64::from(d - b'0') * c.factor;
                (x <= c.largest).then(|| {
                    rows.push_num(x);
                    open + 1
                })
            }
            _ => None,
        }
    }

    /// Where the next row starts, after a row whose last cell closes at `close`; `None`
    /// when something other than a line end follows it.
    #[inline(always)]
    fn row_end(text: &[u8], close: usize) -> Option<usize> {
        match text.get(close + 1) {
            Some(b'\n') => Some(close + 2),
            Some(b'\r') if text.get(close + 2) == Some(&b'\n') => Some(close + 3),
            None => Some(close + 1),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{quote_or_line_end, strip_prefix};

    #[test]
    fn quotes_and_line_ends_are_found_first_of_all() {
        for (text, want) in [
            ("abc\"", Some(3)),
            ("", None),
            ("no end here", None),
            ("12345678\"", Some(8)),
            ("1234567\n\"", Some(7)),
            ("\"\"\"\"\"\"\"\"\"", Some(0)),
            ("ab\u{e9}cdefgh\"ij", Some(10)),
            ("abcdefghijklmnopqrs\n", Some(19)),
        ] {
            assert_eq!(quote_or_line_end(text.as_bytes()), want, "{text:?}");
        }
    }

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
