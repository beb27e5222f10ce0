//! A step between two versions of one ladder as the before/after tables a version's
//! notes carry (`stallscope report --versions v27,v28 --format markdown`). The first
//! table has a row per shape both were run at: each one's median time and mean SM
//! clock, the change of the second's time against the first's with stallscope's verdict
//! and its 95 % interval (rounds paired, [`speed::speedup`]), the change in cycles
//! where the clocks are more than 2 % apart, and each one's energy per launch. The
//! second has, from their profiles, the tensor pipe and the top cells of the stall
//! table (reason @ instruction class) and the top stall reason, each in % of all warp
//! samples of the source page (`selected` included), so no cell exceeds its reason. `tests/notes_tables.rs`
//! keeps the notes' copies equal to what this writes from the bundled data.

use super::format;
use crate::analysis::speed::{self, CLOCK_BAND, Speedup};
use crate::analysis::{self, Kind, MetricId, Shown};
use crate::model::{Ladder, RunResult};

/// Stall-table cells the second table shows per version.
pub const TOP_CELLS: usize = 3;

/// The two tables in Markdown, a blank line between them; the first is left out where
/// the two versions share no measured shape, the second where neither has a profile.
pub fn markdown(ladder: &Ladder, a: usize, b: usize) -> String {
    let mut parts = Vec::new();
    if let Some(t) = runs_table(ladder, a, b) {
        parts.push(t);
    }
    if let Some(t) = profile_table(ladder, a, b) {
        parts.push(t);
        parts.push(roofline_table(ladder, a, b));
    }
    if parts.is_empty() {
        parts.push(format!(
            "{} and {} have no run at a shape they share and no profile.\n",
            ladder.versions[a].id, ladder.versions[b].id
        ));
    }
    // What either version's figures cannot be trusted for, under the tables.
    let warnings: String = [a, b]
        .iter()
        .map(|&i| &ladder.versions[i])
        .flat_map(|v| {
            super::texts::version_warnings(v)
                .into_iter()
                .map(move |w| format!("- {}: {}\n", v.id, format::printable(&w)))
        })
        .collect();
    if !warnings.is_empty() {
        parts.push(warnings);
    }
    parts.join("\n")
}

use super::texts::{pct, verdict_and_interval};

/// The second version's change of time against the first's, from the speed-up `s` of
/// the second over the first (the first's time over the second's, read the other way
/// round), with the verdict and its interval: `−2.5 %, faster (−3.1 % to −1.9 %)`.
fn verdict_cell(s: &Speedup) -> String {
    format!("{}, {}", pct(1.0 / s.ratio - 1.0), verdict_and_interval(s))
}

// A run's figures in the catalogue's units and formats, as the report's rows write them.
fn time(r: &RunResult) -> String {
    format::with_unit(Kind::Time, r.median_us.map(|us| us * 1e3))
}

fn clock(r: &RunResult) -> String {
    format::with_unit(Kind::Frequency, r.sm_clock_mhz.map(|mhz| mhz * 1e6))
}

fn energy(r: &RunResult) -> String {
    format::with_unit(Kind::Energy, r.energy_mj)
}

/// Where the clocks are more than [`CLOCK_BAND`] apart, the change in cycles.
fn cycles_cell(s: &Speedup) -> String {
    match (s.clock_ratio, s.cycles) {
        (Some(c), Some(cy)) if (c - 1.0).abs() > CLOCK_BAND => pct(1.0 / cy - 1.0),
        _ => format::UNKNOWN.into(),
    }
}

fn runs_table(ladder: &Ladder, a: usize, b: usize) -> Option<String> {
    let (va, vb) = (&ladder.versions[a], &ladder.versions[b]);
    let mut rows = Vec::new();
    for shape in ladder.measured_shapes() {
        let shown = Shown::at(shape);
        let (Some(ra), Some(rb)) = (shown.run(ladder, va), shown.run(ladder, vb)) else {
            continue;
        };
        if ra.median_us.is_none() || rb.median_us.is_none() {
            continue;
        }
        let s = speed::speedup(rb, ra);
        rows.push(format!(
            "| {} | {} | {} | {} | {} | {} → {} | {} → {} |",
            shape.to_string().replace(':', " "),
            time(ra),
            time(rb),
            s.as_ref().map_or(format::UNKNOWN.into(), verdict_cell),
            s.as_ref().map_or(format::UNKNOWN.into(), cycles_cell),
            clock(ra),
            clock(rb),
            energy(ra),
            energy(rb),
        ));
    }
    if rows.is_empty() {
        return None;
    }
    let mut out = format!(
        "| shape | {a} | {b} | {b} against {a} (rounds paired, 95 % interval) | in cycles | SM clock | energy / launch |\n|---|---:|---:|---|---:|---|---|\n",
        a = va.id,
        b = vb.id
    );
    for r in rows {
        out.push_str(&r);
        out.push('\n');
    }
    Some(out)
}

fn profile_table(ladder: &Ladder, a: usize, b: usize) -> Option<String> {
    let (va, vb) = (&ladder.versions[a], &ladder.versions[b]);
    if va.profile.is_none() && vb.profile.is_none() {
        return None;
    }
    let of = |i: usize| analysis::analyse(ladder, &ladder.versions[i], Shown::DEFAULT);
    let (xa, xb) = (of(a), of(b));
    let share = |v: Option<f64>| format::with_unit(Kind::Percent, v);
    let mut out = format!("| profile (ncu) | {} | {} |\n|---|---|---|\n", va.id, vb.id);
    out.push_str(&format!(
        "| tensor pipe active | {} | {} |\n",
        share(xa.get(MetricId::TensorPipe)),
        share(xb.get(MetricId::TensorPipe))
    ));
    let cell = |x: &analysis::VersionAnalysis, n: usize| {
        x.matrix
            .as_ref()
            .and_then(|m| m.cells.get(n))
            .map_or(format::UNKNOWN.into(), |c| {
                format!("{c} {:.1} %", c.share * 100.0)
            })
    };
    for n in 0..TOP_CELLS {
        out.push_str(&format!(
            "| stall cell {} (% of all warp samples) | {} | {} |\n",
            n + 1,
            cell(&xa, n),
            cell(&xb, n)
        ));
    }
    let top = |x: &analysis::VersionAnalysis| {
        x.top_reason().map_or(format::UNKNOWN.into(), |(r, s)| {
            format!("{r} {:.1} %", s * 100.0)
        })
    };
    out.push_str(&format!(
        "| top stall reason (% of all warp samples) | {} | {} |\n",
        top(&xa),
        top(&xb)
    ));
    Some(out)
}

/// The step on the roofline (intensity ×, FLOP/s ×, the nearer roof's share before and
/// after) and ncu's findings the second resolved against the step's change in time.
fn roofline_table(ladder: &Ladder, a: usize, b: usize) -> String {
    use super::roofline as text;
    let r = analysis::roofline::ladder_roofline(ladder);
    let s = analysis::roofline::step(&r.versions, a, b);
    let mut out = format!(
        "| roofline and ncu's estimates | {} → {} |\n|---|---|\n",
        ladder.versions[a].id, ladder.versions[b].id
    );
    out.push_str(&text::step_rows(&s));
    if let Some(e) = analysis::estimates::step_estimates(ladder, a, b) {
        let (change, from) = text::measured(&e);
        out.push_str(&format!(
            "| ncu findings resolved | {} |\n| measured change in time | {change} ({from}) |\n",
            text::findings(&e)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::runs::Round;

    fn run(us: &[f64]) -> RunResult {
        let mut r = RunResult::new(
            "x",
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            crate::model::RunStatus::Ok,
        );
        r.run_id = Some("run-1".into());
        r.median_us = Some(us[us.len() / 2]);
        r.rounds = us
            .iter()
            .map(|&us| Round {
                us,
                ..Default::default()
            })
            .collect();
        r
    }

    /// A second version 10 % faster reads −10 %, faster, its interval low end first; one
    /// 10 % slower reads +10 %, slower.
    #[test]
    fn a_faster_second_version_reads_as_a_negative_change() {
        let first = run(&[100.0, 101.0, 99.0, 100.5, 99.5]);
        let faster = run(&[90.0, 90.9, 89.1, 90.45, 89.55]);
        let s = speed::speedup(&faster, &first).unwrap();
        let cell = verdict_cell(&s);
        assert!(cell.starts_with("−10.0 %, faster (−"), "{cell}");
        let ends: Vec<f64> = cell
            .split(['(', ')'])
            .nth(1)
            .unwrap()
            .split(" to ")
            .map(|x| x.trim_end_matches(" %").replace('−', "-").parse().unwrap())
            .collect();
        assert!(ends[0] <= -10.0 && -10.0 <= ends[1], "{cell}");
        let slower = run(&[110.0, 111.1, 108.9, 110.55, 109.45]);
        let s = speed::speedup(&slower, &first).unwrap();
        assert!(
            verdict_cell(&s).starts_with("+10.0 %, slower (+"),
            "{}",
            verdict_cell(&s)
        );
    }
}
