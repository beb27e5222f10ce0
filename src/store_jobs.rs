//! Where the GPU side's results meet the store: `gpu/` produces a run's results and a
//! recipe version's exported profile, and these store them in the ladder's folder with
//! the recipe's entries of the versions. `stallscope run` and `stallscope profile`
//! store through them, and the explorer's run and profile jobs alike, so that a job
//! started from either place leaves the same files and counts its failures by one rule.

use crate::files::limits::SizeLimits;
use crate::gpu::host::runner;
use crate::model::runs::RunFile;
use crate::model::{RunResult, RunStatus, Shape, import, manifest};
use crate::recipe::{KernelRecipe, KernelVersion};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Stores a run's results in `ladder_dir`: the recipe's entries of the versions that ran
/// recorded in its manifest (the ladder made when missing), then the results added to
/// its runs.json with the run's environment, both files read there within `limits`. The
/// path of runs.json.
pub fn store_run(ladder_dir: &Path, out: &runner::Outcome, limits: SizeLimits) -> Result<PathBuf> {
    let ids: Vec<&str> = out.results.iter().map(|r| r.version.as_str()).collect();
    record(ladder_dir, &out.recipe, &ids, limits)?;
    RunFile::store(
        ladder_dir,
        &out.results,
        Some(out.environment.clone()),
        limits,
    )
}

/// Stores a version's pipeline trace in `ladder_dir`: the recipe's entry of the version
/// recorded in its manifest (the ladder made when missing), so that the ladder lists the
/// version whose folder holds the trace, then the trace file written. Its path.
pub fn store_trace(
    ladder_dir: &Path,
    recipe: &KernelRecipe,
    trace: &crate::model::trace::Trace,
    limits: SizeLimits,
) -> Result<PathBuf> {
    record(ladder_dir, recipe, &[trace.version.as_str()], limits)?;
    crate::model::trace::write_trace(ladder_dir, trace)
}

/// The recipe's entries of the versions `ids` recorded in the manifest of `ladder_dir`
/// (the ladder made when missing), in the recipe's order.
fn record(
    ladder_dir: &Path,
    recipe: &KernelRecipe,
    ids: &[&str],
    limits: SizeLimits,
) -> Result<()> {
    manifest::record_versions(
        ladder_dir,
        &recipe.manifest_defaults(),
        &recipe.manifest_entries(ids, ladder_dir),
        &recipe.manifest_order(),
        limits,
    )
}

/// The one rule of what counts as a run's failure: a version of the recipe whose result
/// failed, in the results' order. A baseline that failed (cuDNN, PyTorch's SDPA) is a
/// reference lost, said in its own row, not a failure of the versions: `stallscope run`
/// ends non-zero on these alone, and the explorer's job counts these.
pub fn failed_versions<'r>(recipe: &KernelRecipe, results: &'r [RunResult]) -> Vec<&'r str> {
    results
        .iter()
        .filter(|r| r.status == RunStatus::Failed && recipe.version(&r.version).is_some())
        .map(|r| r.version.as_str())
        .collect()
}

/// Imports a recipe version's exported profile into `profiles` (replacing the last
/// one), with the recipe's entry of it: the explorer's profile job and `stallscope
/// profile` store alike. The entry keeps the FLOP count of the shape it was profiled
/// at, so that its ncu-timed TFLOPS hold when that is not the ladder's reference shape.
/// The pages and the ladder's manifest are read within `limits`.
pub fn store_recipe_profile(
    profiles: &Path,
    recipe: &KernelRecipe,
    v: &KernelVersion,
    shape: &Shape,
    files: &[PathBuf],
    limits: SizeLimits,
) -> Result<String> {
    let req = import::Request {
        title: Some(&v.title),
        // A version with paths: ncu captured whichever of its kernels ran (the profile
        // asks for any of them), the only launch in the export.
        kernel: v.paths.is_empty().then_some(v.entry.as_str()),
        flops: Some(shape.flops()),
        ..import::Request::profiled(profiles, Some(&recipe.ladder), &v.id, files, true, limits)
    };
    let entries = |dir: &Path| recipe.manifest_entries(&[v.id.as_str()], dir);
    let done = import::import_recipe_profile(
        &req,
        &recipe.manifest_defaults(),
        entries,
        &recipe.manifest_order(),
    )?;
    Ok(done.to_string())
}

/// A run of the bundled flash-attention recipe in which v01 ran, the cuDNN baseline
/// failed and v02 failed: what the tests of a run's storing and of its failures read.
#[cfg(test)]
pub(crate) fn run_with_a_failed_baseline() -> runner::Outcome {
    let recipe = crate::recipe::folders::load_recipe(
        Path::new("kernels/flash-attention"),
        SizeLimits::DEFAULT,
    )
    .expect("the bundled recipe loads");
    let result = |id: &str, status| {
        let mut r = RunResult::new(
            id,
            crate::kinds::attention::shape(1, 64, 1024, 128, false),
            status,
        );
        r.run_id = Some("run-7".into());
        if status == RunStatus::Ok {
            r.median_us = Some(100.0);
        }
        r
    };
    runner::Outcome {
        results: vec![
            result("v01", RunStatus::Ok),
            result("cudnn", RunStatus::Failed),
            result("v02", RunStatus::Failed),
        ],
        seed: 7,
        shape: crate::kinds::attention::shape(1, 64, 1024, 128, false),
        recipe,
        environment: crate::model::runs::Environment {
            run_id: "run-7".into(),
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace stored in a ladder folder that has no manifest yet: the ladder is made
    /// with the version's recipe entry, and it loads with its trace.
    #[test]
    fn a_stored_trace_is_listed_with_its_version() {
        let recipe =
            crate::recipe::folders::load_recipe(Path::new("kernels/gemm"), SizeLimits::DEFAULT)
                .expect("the bundled recipe loads");
        let v = recipe.version("v09").expect("gemm v09").clone();
        let b = crate::model::trace::raw::scenario();
        let timeline = crate::model::trace::decode(
            &b.words,
            b.blocks,
            b.cap,
            &crate::model::trace::raw::roles(),
            &crate::model::trace::raw::stages(),
            crate::model::trace::Clocks::default(),
        )
        .expect("the scenario decodes");
        let gemm = crate::kinds::Kind::named("gemm").expect("the gemm kind");
        let shape = crate::kinds::Shape::parse(gemm, "1000,777,520").expect("a gemm shape");
        let t = crate::model::trace::Trace::new("v09", shape, timeline);
        let dir = tempfile::tempdir().unwrap();
        let ladder = dir.path().join("gemm");
        let path = store_trace(&ladder, &recipe, &t, SizeLimits::DEFAULT).expect("stored");
        assert!(path.starts_with(ladder.join("v09")), "{}", path.display());
        let mut stored = crate::model::load_ladder(
            &crate::model::Store::disk(SizeLimits::DEFAULT),
            &ladder,
            &mut crate::model::LoadReport::default(),
        )
        .expect("the stored ladder loads");
        // Listed by its name when the ladder loads; read when asked for.
        assert!(
            stored
                .versions
                .iter()
                .all(|v| v.traces.iter().all(|t| !t.is_read()))
        );
        let read = stored.read_traces(Some(shape));
        assert_eq!((read.read, read.failed.len()), (1, 0));
        let v09 = stored
            .versions
            .iter()
            .find(|v| v.id == "v09")
            .expect("v09 listed");
        assert_eq!(v09.title, v.title);
        assert_eq!(v09.traces, [t]);
    }

    #[test]
    fn a_stored_run_records_its_versions_and_its_results() {
        let out = run_with_a_failed_baseline();
        let dir = tempfile::tempdir().unwrap();
        let ladder = dir.path().join("flash-attention");
        let path = store_run(&ladder, &out, SizeLimits::DEFAULT).expect("the run is stored");
        assert_eq!(path, ladder.join(crate::model::runs::FILE_NAME));
        let stored = crate::model::load_ladder(
            &crate::model::Store::disk(SizeLimits::DEFAULT),
            &ladder,
            &mut crate::model::LoadReport::default(),
        )
        .expect("the stored ladder loads");
        let ids: Vec<&str> = stored.versions.iter().map(|v| v.id.as_str()).collect();
        assert!(ids.contains(&"v01") && ids.contains(&"v02"), "{ids:?}");
        let file = RunFile::read(&crate::model::Store::disk(SizeLimits::DEFAULT), &path)
            .expect("runs.json reads");
        let runs: Vec<&str> = file.runs.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(runs, ["v01", "cudnn", "v02"]);
        let envs: Vec<&str> = file
            .environments
            .iter()
            .map(|e| e.run_id.as_str())
            .collect();
        assert_eq!(envs, ["run-7"]);
    }
}
