//! `stallscope profile`: a recipe's versions, or any command, under ncu, imported.

use super::options::CommandProfile;
use super::output::progress_bar;
use crate::files::limits::SizeLimits;
use crate::gpu::host::profile;
use crate::model::import;
use crate::process;
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub(super) fn profile_any_command(
    req: &CommandProfile,
    profiles: &Path,
    limits: SizeLimits,
) -> Result<bool> {
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let bar = ProgressBar::new_spinner().with_style(
        ProgressStyle::with_template("{spinner} ncu: {msg}").expect("a valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("starting");
    let exports = profile::profile_command(&req.request, &cancel, &mut |s| {
        bar.set_message(s.to_string())
    });
    bar.finish_and_clear();
    let exports = exports?;
    let done = import::import_command_profile(
        &import::Request {
            title: req.title.as_deref(),
            ..import::Request::profiled(
                profiles,
                req.ladder.as_deref(),
                &req.version,
                &exports.files,
                req.force,
                limits,
            )
        },
        &req.request.target.stored(),
    )?;
    eprintln!("{done}");
    Ok(true)
}

pub(super) fn profile_command(req: &profile::Request, profiles: &Path) -> Result<bool> {
    process::handle_interrupts()?;
    let cancel = AtomicBool::new(false);
    let placements = req.slots.placements();
    let bars = indicatif::MultiProgress::new();
    let lines: Vec<ProgressBar> = placements
        .iter()
        .map(|_| bars.add(progress_bar()))
        .collect();
    let many = placements.len() > 1;
    let results = profile::run(
        req,
        &cancel,
        &|p, id, i, n| {
            let bar = placements
                .iter()
                .position(|x| x == p)
                .map(|k| &lines[k])
                .unwrap_or(&lines[0]);
            bar.set_length(n as u64);
            bar.set_position(i as u64);
            let on = if many {
                format!("{}: ", p.describe())
            } else {
                String::new()
            };
            bar.set_message(format!("{on}profiling {id} with ncu"));
        },
        &|recipe, v, shape, files| {
            crate::store_jobs::store_recipe_profile(
                profiles,
                recipe,
                v,
                shape,
                files,
                req.selection.limits,
            )
        },
    );
    for b in &lines {
        b.finish_and_clear();
    }
    let mut ok = true;
    for p in results? {
        match p.outcome {
            Ok(msg) => eprintln!("{:<8} {msg}", p.id),
            Err(e) => {
                ok = false;
                eprintln!("{:<8} FAILED: {e:#}", p.id);
            }
        }
    }
    Ok(ok)
}
