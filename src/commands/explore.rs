//! `stallscope [FILE...]` and `stallscope open DIR`: the explorer on the ladders, or
//! the timeline as text where there is no terminal.

use super::ladders::finish;
use crate::analysis::Shown;
use crate::cli::Common;
use crate::model::{Ladder, LoadReport};
use crate::report::{self, Analysed, Format};
use anyhow::Result;

fn print_report(ladders: &mut [Ladder], format: Format) {
    // The explorer's shape key has no counterpart here: the default shape is shown. Its
    // traces are read now (loading lists them only); one that cannot be read is a
    // warning, and its version is shown without it.
    for l in ladders.iter_mut() {
        for w in Shown::DEFAULT.read_traces(l).failed {
            eprintln!(
                "warning: {}",
                crate::report::format::printable_lines(&w.to_string())
            );
        }
    }
    let analysed: Vec<Analysed> = ladders
        .iter()
        .map(|l| Analysed::new(l, Shown::DEFAULT))
        .collect();
    out!("{}", report::exporter(format).timeline(&analysed));
}

/// The explorer in a terminal; the timeline as text when output is not a terminal
/// (a pipe, a file, CI). With `STALLSCOPE_FIRST_FRAME_EXIT` set, the explorer ends after
/// its first frame: drawn in the terminal, or on a 120×40 screen in memory without one.
pub(super) fn explore(
    common: &Common,
    mut ladders: Vec<Ladder>,
    report: &LoadReport,
) -> Result<bool> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        crate::tui::run(ladders, super::options::kernels(common), report.lines())?;
    } else if crate::tui::first_frame_only() {
        crate::tui::first_frame_offscreen(
            ladders,
            super::options::kernels(common),
            report.lines(),
        )?;
    } else {
        print_report(&mut ladders, Format::Table);
    }
    Ok(finish(report))
}
