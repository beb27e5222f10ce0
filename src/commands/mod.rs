//! What each subcommand does, one file each: resolve its inputs to ladders
//! (`ladders`) or its arguments to a GPU job's request ([`options`]), then hand them
//! to the report, the comparison, the importer, the runner or the explorer; what they
//! print goes through `output`.

#[macro_use]
mod output;
mod build;
mod check;
mod compare;
mod completions;
mod doctor;
mod explore;
mod import;
mod ladders;
mod man;
pub mod options;
mod profile;
mod report;
mod run;
mod trace;

pub use ladders::{default_ladders, resolve_paths, writable_profiles};
pub use output::output_failed;

use crate::cli::{Cli, Command};
use anyhow::Result;

/// Runs the command line; `Ok(false)` means it finished but some inputs failed.
pub fn run(cli: Cli) -> Result<bool> {
    let common = &cli.common;
    match cli.command {
        None => {
            let mut report = ladders::load_report(common);
            let options = cli.loose.options();
            let ladders = if cli.files.is_empty() {
                ladders::loose_options_unused(&options)?;
                default_ladders(common, &mut report)?
            } else {
                resolve_paths(&cli.files, common.size_limits(), &options, &mut report)?
            };
            explore::explore(common, ladders, &report)
        }
        Some(Command::Open(a)) => {
            let mut report = ladders::load_report(common);
            let ladders = resolve_paths(
                &[a.dir],
                common.size_limits(),
                &a.loose.options(),
                &mut report,
            )?;
            explore::explore(common, ladders, &report)
        }
        Some(Command::Report(a)) => report::report_command(common, &a),
        Some(Command::Compare(a)) => compare::compare_command(common, &a),
        Some(Command::Import(a)) => import::import_command(common, &a),
        Some(Command::Run(a)) => run::run_command(common, &a),
        Some(Command::Profile(a)) => match options::command_profile(&a) {
            Some(req) => profile::profile_any_command(
                &req?,
                &writable_profiles(common),
                common.size_limits(),
            ),
            None => profile::profile_command(
                &options::profile_request(&a, common)?,
                &writable_profiles(common),
            ),
        },
        Some(Command::Trace(a)) => trace::trace_command(common, &a),
        Some(Command::Build(a)) => build::build_command(common, &a),
        Some(Command::Check) => check::check_command(common),
        Some(Command::Doctor) => doctor::doctor_command(),
        Some(Command::Completions { shell }) => completions::completions_command(shell),
        Some(Command::Man { dir }) => man::man_command(dir.as_deref()),
        Some(Command::Worker(args)) => {
            crate::gpu::worker::main(&args, common.size_limits())?;
            Ok(true)
        }
    }
}
