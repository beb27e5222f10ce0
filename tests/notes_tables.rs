//! Every flash-attention note's measured tables (the first ones under its heading
//! `## Measured (H200, 2026-12-03, …`, written by kernels/notes-run-tables.py) are the
//! bundled runs': per shape the version's median time and mean SM clock and cuDNN's time
//! over the version's with stallscope's verdict; then, where the version has a parent,
//! its change against the parent (in cycles too where the clocks are more than 2 % apart)
//! and stallscope's verdict against the parent with its interval; each to the precision
//! written.

mod common;

use common::{profiles, run_at, written};
use stallscope::analysis::speed::{self, CLOCK_BAND, Speedup};
use stallscope::files::limits::SizeLimits;
use stallscope::kinds::{Kind, Shape};
use stallscope::model::{self, Ladder, LoadReport, RunResult, Store};

const HEADING: &str = "## Measured (H200, 2026-12-03";
const HEADER: &str = "| shape (B,H,S,D) |";
const SHAPES: [&str; 3] = ["1,64,1024,128", "1,16,8192,128", "1,16,8192,128:causal"];

fn ladder() -> Ladder {
    model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &profiles().join("flash-attention"),
        &mut LoadReport::default(),
    )
    .unwrap()
}

/// The note's measured tables, the first under [`HEADING`] (before the next heading,
/// one blank line between two): each as its header's cells, then its rows' (the rule
/// under the header left out).
fn tables(notes: &str) -> Vec<Vec<Vec<String>>> {
    let cells = |l: &str| -> Vec<String> {
        l.trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let lines: Vec<&str> = notes
        .lines()
        .skip_while(|l| !l.starts_with(HEADING))
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .collect();
    let Some(mut at) = lines.iter().position(|l| l.starts_with(HEADER)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    loop {
        let n = lines[at..]
            .iter()
            .take_while(|l| l.starts_with('|'))
            .count();
        let rows = &lines[at..at + n];
        out.push(
            rows.iter()
                .enumerate()
                .filter(|(i, _)| *i != 1)
                .map(|(_, l)| cells(l))
                .collect(),
        );
        at += n;
        match lines.get(at..at + 2) {
            Some(["", next]) if next.starts_with(HEADER) => at += 1,
            _ => return out,
        }
    }
}

/// A figure with its unit after it (`68.91 µs`, `1.059 ms`, `+0.1 %`, `1.017×`): its
/// value and tolerance, in the unit `scale` says (µs for a time).
fn figure(cell: &str, units: &[(&str, f64)]) -> Option<(f64, f64)> {
    let cell = cell.trim();
    units.iter().find_map(|(unit, scale)| {
        let (x, tolerance) = written(cell.strip_suffix(unit)?)?;
        Some((x * scale, tolerance * scale))
    })
}

const TIME: &[(&str, f64)] = &[(" µs", 1.0), (" ms", 1000.0)];
const MHZ: &[(&str, f64)] = &[(" MHz", 1.0)];
const PCT: &[(&str, f64)] = &[(" %", 1.0)];
const RATIO: &[(&str, f64)] = &[("×", 1.0)];

/// stallscope's verdict as the table writes it: `faster`, `level`, `unclear: not
/// converged`.
fn words(s: &Speedup) -> String {
    match s.why {
        Some(why) => format!("{}: {}", s.verdict.word(), why.words()),
        None => s.verdict.word().to_string(),
    }
}

fn apart(clock_ratio: Option<f64>) -> bool {
    clock_ratio.is_some_and(|c| (c - 1.0).abs() > CLOCK_BAND)
}

/// Collects what a note's row gets wrong.
struct Check<'a> {
    id: &'a str,
    shape: &'a str,
    wrong: Vec<String>,
    checked: usize,
}

impl Check<'_> {
    /// The figure written in `cell` (read with `units`) is `value`, to its last digit.
    fn figure(&mut self, what: &str, cell: &str, units: &[(&str, f64)], value: Option<f64>) {
        self.checked += 1;
        match (figure(cell, units), value) {
            (Some((x, tolerance)), Some(v)) if (v - x).abs() <= tolerance => {}
            _ => self.fail(format!("{what}: {cell:?}, the runs say {value:?}")),
        }
    }

    fn text(&mut self, what: &str, cell: &str, expected: &str) {
        self.checked += 1;
        if cell != expected {
            self.fail(format!("{what}: {cell:?}, the runs say {expected:?}"));
        }
    }

    fn fail(&mut self, why: String) {
        self.wrong
            .push(format!("{} at {}: {why}", self.id, self.shape));
    }

    /// `+0.1 %` and `—`, or `−1.9 %` and `−5.2 %` where the clocks are more than 2 %
    /// apart: the change of the median time, and of time × clock, against the parent's.
    fn change(&mut self, time: &str, cycles: &str, r: &RunResult, p: &RunResult) {
        let pct = |a: Option<f64>, b: Option<f64>| Some((a? / b? - 1.0) * 100.0);
        self.figure("vs parent", time, PCT, pct(r.median_us, p.median_us));
        let clocks = r.sm_clock_mhz.zip(p.sm_clock_mhz).map(|(a, b)| a / b);
        if apart(clocks) {
            let cyc = |x: &RunResult| Some(x.median_us? * x.sm_clock_mhz?);
            self.figure("vs parent in cycles", cycles, PCT, pct(cyc(r), cyc(p)));
        } else {
            self.text("vs parent in cycles (clocks within 2 %)", cycles, "—");
        }
    }

    /// `unclear: not converged (−1.5 % to +1.6 %)`: stallscope's verdict of the version
    /// against its parent, and the interval of its speed-up as the change of the time.
    fn verdict(&mut self, cell: &str, s: &Speedup) {
        let Some((verdict, interval)) = cell.split_once(" (") else {
            return self.fail(format!("verdict vs parent: {cell:?}"));
        };
        self.text("verdict vs parent", verdict, &words(s));
        let interval = interval.strip_suffix(')').unwrap_or(interval);
        let Some((low, high)) = interval.split_once(" to ") else {
            return self.fail(format!("interval vs parent: {cell:?}"));
        };
        self.figure("interval low", low, PCT, Some((1.0 / s.high - 1.0) * 100.0));
        self.figure(
            "interval high",
            high,
            PCT,
            Some((1.0 / s.low - 1.0) * 100.0),
        );
    }

    /// `1.017×, unclear: not converged; cycles 0.965×`: cuDNN's time over the version's
    /// with stallscope's verdict, and in cycles where the clocks are more than 2 % apart.
    fn against_cudnn(&mut self, cell: &str, s: &Speedup) {
        let (head, cycles) = match cell.split_once("; cycles ") {
            Some((h, c)) => (h, Some(c)),
            None => (cell, None),
        };
        let Some((ratio, verdict)) = head.split_once(", ") else {
            return self.fail(format!("cuDNN: {cell:?}"));
        };
        self.figure("cuDNN ratio", ratio, RATIO, Some(s.ratio));
        self.text("verdict vs cuDNN", verdict, &words(s));
        match (cycles, apart(s.clock_ratio) && s.cycles.is_some()) {
            (Some(c), true) => self.figure("cuDNN ratio in cycles", c, RATIO, s.cycles),
            (None, false) => {}
            (c, _) => self.fail(format!(
                "cuDNN: {cell:?} has {} cycles, clock ratio {:?}",
                if c.is_some() { "its" } else { "no" },
                s.clock_ratio
            )),
        }
    }
}

/// Every note of a version the bundled runs hold has its tables, and every cell of them
/// is the bundled runs': the time and clock at the shape of its row, the change against the parent from the two
/// medians (and clocks), and the verdicts and ratios as stallscope's `speedup` gives
/// them (the rule `compare` and `report` use).
#[test]
fn every_notes_measured_tables_are_the_bundled_runs() {
    let ladder = ladder();
    let attention = Kind::named("attention").unwrap();
    let shapes: Vec<Shape> = SHAPES
        .iter()
        .map(|s| Shape::parse(attention, s).unwrap())
        .collect();
    let cudnn = ladder.version("cudnn").expect("cuDNN's runs");
    let mut wrong = Vec::new();
    let mut checked = 0;
    let mut notes = 0;
    for (i, v) in ladder.versions.iter().enumerate() {
        if v.baseline {
            continue;
        }
        let tables = tables(v.notes.as_deref().unwrap_or_default());
        let parent = ladder.parent_of(i).map(|p| &ladder.versions[p]);
        // A version the bundled runs do not hold (v30 on: profiled, run on another GPU)
        // has no measured tables to keep.
        if shapes.iter().all(|s| run_at(v, s).is_none()) {
            if !tables.is_empty() {
                wrong.push(format!("{}: measured tables but no bundled runs", v.id));
            }
            continue;
        }
        // The headers the tables must have: the version's own, then the step from its
        // parent where it has one.
        let mut headers = vec![format!("shape (B,H,S,D)|time|SM clock|cuDNN / {}", v.id)];
        if let Some(p) = parent {
            headers.push(format!(
                "shape (B,H,S,D)|vs {0}|in cycles|verdict vs {0} (95 % interval)",
                p.id
            ));
        }
        let written: Vec<String> = tables.iter().map(|t| t[0].join("|")).collect();
        if written != headers {
            wrong.push(format!("{}: tables {written:?}, not {headers:?}", v.id));
            continue;
        }
        notes += 1;
        for (t, table) in tables.iter().enumerate() {
            if table.len() != 1 + SHAPES.len() {
                wrong.push(format!(
                    "{}: {} rows, not one a shape",
                    v.id,
                    table.len() - 1
                ));
            }
            for ((row, shape), name) in table.iter().skip(1).zip(&shapes).zip(SHAPES) {
                let mut c = Check {
                    id: &v.id,
                    shape: name,
                    wrong: Vec::new(),
                    checked: 0,
                };
                if row.len() != 4 {
                    c.fail(format!("{} cells: {row:?}", row.len()));
                    wrong.append(&mut c.wrong);
                    continue;
                }
                c.text("shape", &row[0], &name.replace(":causal", " causal"));
                let r = run_at(v, shape).unwrap_or_else(|| panic!("{} at {name}", v.id));
                if t == 0 {
                    c.figure("time", &row[1], TIME, r.median_us);
                    c.figure("SM clock", &row[2], MHZ, r.sm_clock_mhz);
                    let b = run_at(cudnn, shape).unwrap_or_else(|| panic!("cuDNN at {name}"));
                    c.against_cudnn(&row[3], &speed::speedup(r, b).expect("both timed"));
                } else {
                    let p = parent.expect("a parent's table");
                    let p = run_at(p, shape).unwrap_or_else(|| panic!("{} at {name}", p.id));
                    c.change(&row[1], &row[2], r, p);
                    c.verdict(&row[3], &speed::speedup(r, p).expect("both timed"));
                }
                checked += c.checked;
                wrong.append(&mut c.wrong);
            }
        }
    }
    assert!(notes >= 29, "{notes} notes with their tables");
    assert!(checked > 500, "{checked}");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The check reads what it should: a time written to its last digit passes, the same
/// time one digit off or a run's median moved by 0.1 % fails, and a time in ms is read
/// in µs.
#[test]
fn a_cell_one_digit_off_or_a_moved_run_fails_the_check() {
    let check = |cell: &str, value: f64| {
        let mut c = Check {
            id: "v28",
            shape: SHAPES[0],
            wrong: Vec::new(),
            checked: 0,
        };
        c.figure("time", cell, TIME, Some(value));
        c.wrong.is_empty()
    };
    let t = 68.9089;
    assert!(check("68.91 µs", t));
    assert!(!check("68.92 µs", t));
    assert!(!check("68.91 µs", t * 1.001));
    assert!(check("1.059 ms", 1059.4));
    assert!(!check("1.059 ms", 1059.6));
    assert_eq!(figure("−1.9 %", PCT), Some((-1.9, 0.05 + 1e-9)));
}

/// Every note's step section (`## Step from vNN (`stallscope report --ladder L --versions
/// A,B --format markdown`)`) holds that command's tables on the bundled data, line for
/// line: the prose under the heading is left alone, the table rows and the blank line
/// between the tables are compared.
#[test]
fn every_notes_step_tables_are_the_commands_output() {
    let root = common::repo().join("kernels");
    let mut checked = Vec::new();
    let mut loaded: std::collections::HashMap<String, Ladder> = Default::default();
    for ladder_dir in std::fs::read_dir(&root).unwrap() {
        let notes = ladder_dir.unwrap().path().join("notes");
        let Ok(files) = std::fs::read_dir(&notes) else {
            continue;
        };
        for f in files {
            let path = f.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let own = path.file_stem().unwrap().to_str().unwrap().to_string();
            let mut sections = 0;
            for (at, heading) in lines.iter().enumerate() {
                let Some(rest) = heading.strip_prefix("## Step from ") else {
                    continue;
                };
                sections += 1;
                let (from, cmd) = rest
                    .split_once(" (`")
                    .and_then(|(f, c)| Some((f, c.strip_suffix("`)")?)))
                    .unwrap_or_else(|| panic!("{}: {heading:?} names no command", path.display()));
                let words: Vec<&str> = cmd.split_whitespace().collect();
                let arg = |name: &str| {
                    let i = words
                        .iter()
                        .position(|w| *w == name)
                        .unwrap_or_else(|| panic!("{}: {cmd:?} has no {name}", path.display()));
                    words[i + 1]
                };
                assert_eq!(&words[..2], ["stallscope", "report"], "{}", path.display());
                assert_eq!(arg("--format"), "markdown", "{}", path.display());
                // Each bundled ladder read once, whichever note names it first.
                let ladder = loaded
                    .entry(arg("--ladder").to_string())
                    .or_insert_with(|| {
                        model::load_ladder(
                            &Store::disk(SizeLimits::DEFAULT),
                            &profiles().join(arg("--ladder")),
                            &mut LoadReport::default(),
                        )
                        .unwrap()
                    });
                let ladder = &*ladder;
                let (a, b) = arg("--versions").split_once(',').unwrap();
                assert_eq!(
                    (a, b),
                    (from, own.as_str()),
                    "{}: the heading's step and the note's version are not --versions",
                    path.display()
                );
                let index = |id: &str| ladder.versions.iter().position(|v| v.id == id).unwrap();
                let written: Vec<&str> = lines[at + 1..]
                    .iter()
                    .take_while(|l| !l.starts_with("## "))
                    .copied()
                    .skip_while(|l| !l.starts_with('|'))
                    .collect();
                let wanted = stallscope::report::step::markdown(ladder, index(a), index(b));
                let trim = |ls: Vec<&str>| -> Vec<String> {
                    let mut v: Vec<String> = ls.iter().map(|l| l.to_string()).collect();
                    while v.last().is_some_and(|l| l.trim().is_empty()) {
                        v.pop();
                    }
                    v
                };
                assert_eq!(
                    trim(written),
                    trim(wanted.lines().collect()),
                    "{}: the step tables are not `{cmd}`'s output (run it and paste its tables)",
                    path.display()
                );
                checked.push(path.display().to_string());
            }
            // Every version with a parent has its step (the first version has none).
            let ladder = notes
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap();
            if ["flash-attention", "gemm"].contains(&ladder) && own != "v01" {
                let bundled = loaded.entry(ladder.to_string()).or_insert_with(|| {
                    model::load_ladder(
                        &Store::disk(SizeLimits::DEFAULT),
                        &profiles().join(ladder),
                        &mut LoadReport::default(),
                    )
                    .unwrap()
                });
                if bundled.versions.iter().any(|v| v.id == own) {
                    assert_eq!(sections, 1, "{}: one step section", path.display());
                } else {
                    // A version the bundled profiles do not hold has no step to show
                    // yet; its note says so.
                    assert_eq!(sections, 0, "{}: a step of no profile", path.display());
                    assert!(
                        text.contains("Not profiled yet"),
                        "{}: the bundled profiles hold no {own}, and the note does not say it is not profiled yet",
                        path.display()
                    );
                }
            }
        }
    }
    assert!(
        checked.len() >= 37,
        "only {} notes have step tables: {checked:?}",
        checked.len()
    );
}

/// How the sections below a note's tables quote the bundled run (the one of the tables).
const QUOTE: &str = "[the 2026-12-03 run";

/// The time figures of a note's measured section's prose (outside its tables), and of
/// every bracket `[the 2026-12-03 run reads …]` in the note: each
/// number written with `µs` or `ms` after it, or before `against … N µs` (`947.0 against
/// v28's 954.2 µs`), of three significant digits or more (`0.2–0.6 µs a launch` is no run
/// time), in µs with its tolerance, and whether `cuDNN's` stands before it.
fn prose_times(notes: &str) -> Vec<(String, f64, f64, bool)> {
    let prose: Vec<&str> = notes
        .lines()
        .skip_while(|l| !l.starts_with(HEADING))
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.starts_with('|'))
        .collect();
    // And anywhere in the note, what a bracket `[the 2026-12-03 run reads …]` quotes.
    let all = notes.lines().collect::<Vec<_>>().join(" ");
    let quoted = all
        .split(QUOTE)
        .skip(1)
        .map(|q| q.split(']').next().unwrap_or_default());
    let prose = std::iter::once(prose.join(" ")).chain(quoted.map(str::to_string));
    let prose = prose.collect::<Vec<_>>().join(" ");
    let words: Vec<&str> = prose
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| "()*,;:[]".contains(c)))
        .collect();
    let significant = |w: &str| {
        w.chars()
            .filter(char::is_ascii_digit)
            .skip_while(|&c| c == '0')
            .count()
    };
    let mut out = Vec::new();
    let mut take = |at: usize, scale: f64| {
        let Some(w) = at.checked_sub(1).map(|i| words[i]) else {
            return;
        };
        if significant(w) < 3 {
            return;
        }
        if let Some((x, tolerance)) = written(w) {
            let cudnn = at >= 2 && words[at - 2] == "cuDNN's";
            out.push((w.to_string(), x * scale, tolerance * scale, cudnn));
        }
    };
    for (i, w) in words.iter().enumerate() {
        let scale = match *w {
            "µs" => 1.0,
            "ms" => 1000.0,
            _ => continue,
        };
        take(i, scale);
        // `A against [words] B µs`: A in the same unit.
        if let Some(a) = (i.saturating_sub(4)..i).find(|&j| words[j] == "against")
            && a >= 1
            && written(words[a - 1]).is_some()
        {
            take(a, scale);
        }
    }
    out
}

/// Every time a note's measured section quotes in its prose is a bundled run's median at
/// one of the three shapes, to its last digit (of some version or baseline: the prose
/// names which in words), and one written `cuDNN's N µs` is cuDNN's; so is every time a
/// bracket `[the 2026-12-03 run reads …]` quotes in the sections below. Those sections'
/// other figures are the first protocol's runs, not bundled, and are not checked.
#[test]
fn every_time_a_notes_measured_prose_quotes_is_a_bundled_run() {
    let ladder = ladder();
    let attention = Kind::named("attention").unwrap();
    let shapes: Vec<Shape> = SHAPES
        .iter()
        .map(|s| Shape::parse(attention, s).unwrap())
        .collect();
    let medians = |v: &model::Version| -> Vec<f64> {
        shapes
            .iter()
            .filter_map(|s| run_at(v, s)?.median_us)
            .collect()
    };
    let all: Vec<f64> = ladder.versions.iter().flat_map(medians).collect();
    let cudnn = medians(ladder.version("cudnn").expect("cuDNN's runs"));
    let mut wrong = Vec::new();
    let mut checked = 0;
    for v in ladder.versions.iter().filter(|v| !v.baseline) {
        for (w, x, tolerance, of_cudnn) in prose_times(v.notes.as_deref().unwrap_or_default()) {
            checked += 1;
            let pool = if of_cudnn { &cudnn } else { &all };
            if !pool.iter().any(|m| (m - x).abs() <= tolerance) {
                let whose = if of_cudnn { "cuDNN's" } else { "any" };
                wrong.push(format!("{}: {w} is no bundled median ({whose})", v.id));
            }
        }
    }
    assert!(checked >= 8, "only {checked} times checked");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// The prose check reads what it should: a cuDNN time and a pair `A against B µs` are
/// taken, a range of one digit is not, and `ms` is read in µs.
#[test]
fn the_prose_times_are_read_with_their_units() {
    let note = format!(
        "{HEADING}, x)\n\nv at 9.243 ms against cuDNN's 69.86 µs (132×);\n\
         (947.0 against v28's 954.2 µs), 0.2–0.6 µs a launch.\n\n## Next\n70.1 µs \
         [the 2026-12-03 run reads cuDNN's\n69.86 µs].\n"
    );
    let got: Vec<(String, bool)> = prose_times(&note)
        .into_iter()
        .map(|(w, _, _, cudnn)| (w, cudnn))
        .collect();
    let want = [
        ("9.243", false),
        ("69.86", true),
        ("954.2", false),
        ("947.0", false),
        ("69.86", true),
    ];
    assert_eq!(got, want.map(|(w, c)| (w.to_string(), c)));
    assert_eq!(prose_times(&note)[0].1, 9243.0);
}
