//! `stallscope report`: the ladder timeline in a format, of the ladders asked for.

use super::ladders::{
    default_ladders, default_sources, finish, load_one, load_report, loose_options_unused,
    mark_built_in, named, no_ladder, resolve_paths, shown_shape,
};
use super::output::{emit, terminal_width};
use crate::analysis;
use crate::cli::{Common, ReportArgs};
use crate::report::format;
use crate::report::{self, Analysed, Format};
use anyhow::{Result, bail};
use std::path::PathBuf;

pub(super) fn report_command(common: &Common, a: &ReportArgs) -> Result<bool> {
    let mut report = load_report(common);
    let options = a.loose.options();
    if a.paths.is_empty() {
        loose_options_unused(&options)?;
    }
    let mut ladders = match (&a.ladder, a.paths.is_empty()) {
        // One ladder of the profiles folder: only it is read.
        (Some(name), true) => {
            let sources = default_sources(common)?;
            let (store, dir) = named(&sources, name)?;
            let mut l = load_one(store, dir, &mut report)?;
            mark_built_in(&mut l, &sources);
            vec![l]
        }
        (_, true) => default_ladders(common, &mut report)?,
        (_, false) => resolve_paths(&a.paths, common.size_limits(), &options, &mut report)?,
    };
    if let Some(name) = &a.ladder {
        // What was said of the ladders left out is not this report's.
        let left_out: Vec<PathBuf> = ladders
            .iter()
            .filter(|l| &l.name != name)
            .filter_map(|l| l.dir.clone())
            .collect();
        report
            .warnings
            .retain(|w| !left_out.iter().any(|d| w.path.starts_with(d)));
        let names: Vec<String> = ladders.iter().map(|l| l.name.clone()).collect();
        ladders.retain(|l| &l.name == name);
        // A broken ladder that was not asked for is no failure of this report.
        report.broken.retain(|b| &b.name == name);
        if let Some(b) = report.broken.first() {
            bail!("{b}");
        }
        if ladders.is_empty() {
            return Err(no_ladder(name, &names));
        }
    }
    if !a.versions.is_empty() {
        return step_command(&ladders, a, &report);
    }
    if a.roofline || a.estimates {
        return roofline_command(&ladders, a, &report);
    }
    let shown = shown_shape(&ladders, a.shape.as_ref())?.in_regime(a.regime);
    // The format and chart are checked alike on a terminal and in a pipe.
    let exporter = report::exporter_with_chart(a.format, a.chart)?;
    let exporter = match terminal_width(a.format, a.output.as_deref(), a.wide) {
        Some(w) => report::table_exporter(Some(w)),
        None => exporter,
    };
    if a.format == Format::Svg && ladders.len() > 1 {
        let names: Vec<&str> = ladders.iter().map(|l| l.name.as_str()).collect();
        bail!(
            "--format svg draws one ladder's chart: choose it with --ladder ({})",
            names.join(", ")
        );
    }
    // The traces shown are read now (loading lists them only); one that cannot be read
    // is a warning, and its version is shown without it.
    for l in &mut ladders {
        report.warnings.extend(shown.read_traces(l).failed);
    }
    let analysed: Vec<Analysed> = ladders.iter().map(|l| Analysed::new(l, shown)).collect();
    if a.format == Format::Perfetto && !analysed.iter().any(|a| a.analysis.pipeline.any()) {
        let at = a
            .shape
            .as_ref()
            .map(|s| format!(" at {s}"))
            .unwrap_or_default();
        bail!(
            "--format perfetto writes pipeline traces, and no version of these ladders has one{at} (stallscope trace takes them on a GPU)"
        );
    }
    for a in &analysed {
        for w in analysis::implausible(a.ladder, &a.analysis) {
            eprintln!("warning: {}", format::printable(&w));
        }
    }
    emit(&exporter.timeline(&analysed), a.output.as_deref())?;
    Ok(finish(&report))
}

/// `report --versions A,B`: the step's before/after tables, of the first ladder that
/// holds both versions.
fn step_command(
    ladders: &[crate::model::Ladder],
    a: &ReportArgs,
    report: &crate::model::LoadReport,
) -> Result<bool> {
    let [first, second] = a.versions.as_slice() else {
        bail!(
            "--versions takes two version ids, the step's first and second (v27,v28); got {}",
            a.versions.len()
        );
    };
    if first == second {
        bail!("--versions {first},{second}: a step is between two versions, and these are one");
    }
    if !matches!(a.format, Format::Table | Format::Markdown) {
        bail!("--versions writes Markdown tables: use --format markdown (or table)");
    }
    if a.shape.is_some() {
        bail!("--versions writes a row per shape both versions were run at: leave out --shape");
    }
    if a.regime.is_some() {
        bail!(
            "--versions writes the sustained results (else the burst ones) of each shape: leave out --regime"
        );
    }
    let holding: Vec<(&crate::model::Ladder, usize, usize)> = ladders
        .iter()
        .filter_map(|l| Some((l, l.version_index(first)?, l.version_index(second)?)))
        .collect();
    let (l, i, j) = match holding.as_slice() {
        [one] => *one,
        [] => bail!(
            "no ladder holds both {first} and {second} (read: {}; --ladder picks one)",
            ladder_names(ladders.iter())
        ),
        several => bail!(
            "{first} and {second} are versions of {}: --ladder picks one",
            ladder_names(several.iter().map(|h| h.0))
        ),
    };
    emit(&report::step::markdown(l, i, j), a.output.as_deref())?;
    Ok(finish(report))
}

fn ladder_names<'a>(ls: impl Iterator<Item = &'a crate::model::Ladder>) -> String {
    ls.map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// `report --roofline` / `report --estimates`: each ladder's roofline or estimates table,
/// in Markdown or JSON.
fn roofline_command(
    ladders: &[crate::model::Ladder],
    a: &ReportArgs,
    report: &crate::model::LoadReport,
) -> Result<bool> {
    let json = match a.format {
        Format::Json => true,
        Format::Svg if a.roofline => bail!(
            "--roofline writes Markdown or JSON; its chart is `report --format svg --chart roofline` (without --roofline)"
        ),
        Format::Table | Format::Markdown => false,
        _ => bail!(
            "--roofline and --estimates write Markdown or JSON: use --format markdown, table or json"
        ),
    };
    if a.shape.is_some() || a.regime.is_some() {
        bail!(
            "--roofline and --estimates read the profiles' shape and the reference shape's runs: leave out --shape and --regime"
        );
    }
    let mut parts = Vec::new();
    for l in ladders {
        parts.push(match (a.roofline, json) {
            (true, false) => {
                report::roofline::roofline_markdown(l, &analysis::roofline::ladder_roofline(l))
            }
            (true, true) => report::roofline::json(l, &analysis::roofline::ladder_roofline(l)),
            (false, false) => {
                report::roofline::estimates_markdown(l, &analysis::estimates::estimates_table(l))
            }
            (false, true) => report::roofline::json(l, &analysis::estimates::estimates_table(l)),
        });
    }
    let out = if json {
        format!("[{}]\n", parts.join(",\n"))
    } else {
        parts.join("\n")
    };
    emit(&out, a.output.as_deref())?;
    Ok(finish(report))
}
