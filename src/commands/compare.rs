//! `stallscope compare`: two versions of a ladder, or two export files, side by side.

use super::ladders::{
    default_sources, finish, load_one, load_report, loose_options_unused, mark_built_in, no_ladder,
    shown_shape,
};
use super::output::{emit, terminal_width};
use crate::analysis::{self, compare};
use crate::cli::{Common, CompareArgs};
use crate::model::{self, Ladder, LoadReport};
use crate::report::{self, CompareInput};
use anyhow::{Context, Result, anyhow, bail};
use std::path::Path;

pub(super) fn compare_command(common: &Common, args: &CompareArgs) -> Result<bool> {
    let (a, ladder, format) = (args.a.as_str(), args.ladder.as_deref(), args.format.into());
    let mut report = load_report(common);
    let (ladder_a, ia, ladder_b, ib) = match args.b.as_deref() {
        Some(b) if Path::new(a).is_file() || Path::new(b).is_file() => {
            let (pa, pb) = (Path::new(a), Path::new(b));
            for (given, p) in [(a, pa), (b, pb)] {
                if !p.is_file() {
                    bail!(
                        "{given} is not a file: compare takes two version ids of one ladder, or two export files"
                    );
                }
            }
            let limits = common.size_limits();
            let options = args.loose.options();
            let la = model::load_files_with(
                &crate::nsight::reports::expand(&[pa.to_path_buf()], limits)?,
                limits,
                &options,
                &mut report,
            )?;
            let lb = model::load_files_with(
                &crate::nsight::reports::expand(&[pb.to_path_buf()], limits)?,
                limits,
                &options,
                &mut report,
            )?;
            let ia = one_launch(&la, args.launch_a, "--launch-a ID")?;
            let ib = one_launch(&lb, args.launch_b, "--launch-b ID")?;
            (la, ia, lb, ib)
        }
        Some(b) => {
            loose_options_unused(&args.loose.options())?;
            let (l, ia, ib) = ladder_of_pair(common, &mut report, a, b, ladder)?;
            if ia == ib {
                bail!(
                    "{a} and {b} are one version of {}: name two different versions, or one alone to compare it with its parent",
                    l.name
                );
            }
            (l.clone(), ia, l, ib)
        }
        None => {
            loose_options_unused(&args.loose.options())?;
            let (l, ib, _) = ladder_of_pair(common, &mut report, a, a, ladder)?;
            let ia = l.parent_of(ib).ok_or_else(|| {
                anyhow!(
                    "{}; name two versions, `stallscope compare A B`",
                    l.no_parent(ib)
                )
            })?;
            (l.clone(), ia, l.clone(), ib)
        }
    };
    // Each side is checked for the shape asked for; both show it.
    let shown =
        shown_shape(std::slice::from_ref(&ladder_a), args.shape.as_ref())?.in_regime(args.regime);
    shown_shape(std::slice::from_ref(&ladder_b), args.shape.as_ref())?;
    let (va, vb) = (&ladder_a.versions[ia], &ladder_b.versions[ib]);
    let an_a = analysis::analyse(&ladder_a, va, shown);
    let an_b = analysis::analyse(&ladder_b, vb, shown);
    let speed = shown
        .run(&ladder_a, va)
        .zip(shown.run(&ladder_b, vb))
        .and_then(|(ra, rb)| analysis::speed::speedup(rb, ra));
    let comparison = compare(
        &an_a,
        &an_b,
        va.readable_listing().zip(vb.readable_listing()),
        speed,
    )
    .with_roofline(&ladder_a, ia, &ladder_b, ib);
    let name = |l: &Ladder, i: usize| {
        let v = &l.versions[i];
        if l.name == "files" {
            format!("{} ({})", v.title, l.title)
        } else {
            format!("{} {}", v.id, v.title)
        }
    };
    // A file's side is named by the path given; a version's as the report names it.
    let file_of = |given: &str, l: &Ladder| (l.name == "files").then(|| given.to_string());
    let (path_a, path_b) = match args.b.as_deref() {
        Some(b) => (file_of(a, &ladder_a), file_of(b, &ladder_b)),
        None => (None, None),
    };
    let input = CompareInput {
        a_name: name(&ladder_a, ia),
        b_name: name(&ladder_b, ib),
        a: report::CompareSide::of(va, path_a),
        b: report::CompareSide::of(vb, path_b),
        comparison: &comparison,
        run_shape: shown.shape(&ladder_a).map(|s| s.to_string()),
        other_shape: shown.other_shape(&ladder_a).is_some(),
        profiled_at: shown.profiled_at(&ladder_a),
        listing_error: va.listing_error().or_else(|| vb.listing_error()),
    };
    let exporter = match terminal_width(format, args.output.as_deref(), false) {
        Some(w) => report::table_exporter(Some(w)),
        None => report::exporter(format),
    };
    emit(&exporter.compare(&input), args.output.as_deref())?;
    Ok(finish(&report))
}

/// The version (one per launch) of a loose file's ladder that a comparison means.
fn one_launch(l: &Ladder, launch: Option<u64>, how: &str) -> Result<usize> {
    let profiles: Vec<model::Profile> = l
        .versions
        .iter()
        .filter_map(|v| v.profile.clone())
        .collect();
    let p = model::pick_launch(&profiles, None, launch, how).with_context(|| l.title.clone())?;
    Ok(profiles
        .iter()
        .position(|x| std::ptr::eq(x, p))
        .expect("picked from these"))
}

/// The ladder holding versions `a` and `b` ([`find_pair`]) and their positions in it:
/// the manifests say which ladder that is, and only it is read. A ladder whose manifest
/// cannot be read is left out, reported as broken.
fn ladder_of_pair(
    common: &Common,
    report: &mut LoadReport,
    a: &str,
    b: &str,
    ladder: Option<&str>,
) -> Result<(Ladder, usize, usize)> {
    let sources = default_sources(common)?;
    let mut dirs = Vec::new();
    let mut index = Vec::new();
    for (store, d) in &sources {
        match model::ladder_ids(store, d) {
            Ok(ids) => {
                index.push(ids);
                dirs.push((store, d));
            }
            Err(e) => report.broken.push(model::BrokenLadder::new(d, &e)),
        }
    }
    // A ladder asked for by name that cannot be read says why, not that it is missing.
    fn prefix(s: &str) -> Option<&str> {
        s.split_once(':').map(|(l, _)| l)
    }
    if let Some(w) = ladder.or_else(|| prefix(a)).or_else(|| prefix(b))
        && !index.iter().any(|(name, _)| name == w)
        && let Some(b) = report.broken.iter().find(|b| b.name == w)
    {
        bail!("{b}");
    }
    let (at, va, vb) = find_pair(&index, a, b, ladder)?;
    let (store, dir) = dirs[at];
    let mut l = load_one(store, dir, report)?;
    mark_built_in(&mut l, &sources);
    let position = |id: &str| {
        l.version_index(id)
            .with_context(|| format!("{} has no version {id}", l.name))
    };
    let (ia, ib) = (position(va)?, position(vb)?);
    Ok((l, ia, ib))
}

/// Finds two versions in one ladder, given each ladder's name and version ids:
/// `--ladder`, a `LADDER:ID` prefix, or the first ladder holding both. The ladder's
/// position and the two ids.
fn find_pair<'a>(
    ladders: &[(String, Vec<String>)],
    a: &'a str,
    b: &'a str,
    ladder: Option<&str>,
) -> Result<(usize, &'a str, &'a str)> {
    fn split(s: &str) -> (Option<&str>, &str) {
        match s.split_once(':') {
            Some((l, v)) => (Some(l), v),
            None => (None, s),
        }
    }
    let ((la, va), (lb, vb)) = (split(a), split(b));
    let wanted = ladder.or(la).or(lb);
    if let Some(w) = wanted
        && !ladders.iter().any(|(name, _)| name == w)
    {
        let names: Vec<&str> = ladders.iter().map(|(name, _)| name.as_str()).collect();
        return Err(no_ladder(w, &names));
    }
    let holds = |ids: &[String], v: &str| ids.iter().any(|id| id == v);
    for (i, (name, ids)) in ladders.iter().enumerate() {
        if wanted.is_some_and(|w| w != name) {
            continue;
        }
        if holds(ids, va) && holds(ids, vb) {
            return Ok((i, va, vb));
        }
    }
    let known: Vec<String> = ladders
        .iter()
        .map(|(name, ids)| format!("{name}: {}", ids.join(" ")))
        .collect();
    // One version given alone (to compare with its parent) is named once.
    let missing = if a == b {
        format!("no ladder holds {a:?} (nor is it a file)")
    } else {
        format!("no ladder holds both {a:?} and {b:?} (and neither is a file)")
    };
    Err(anyhow!("{missing}; versions: {}", known.join("; ")))
}
