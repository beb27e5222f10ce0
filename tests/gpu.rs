//! On a GPU: the runner isolates broken kernels, and every version of the ladder is
//! correct on fresh random inputs, causal too. Without a GPU these tests say that they
//! skipped and pass.

mod common;

use assert_cmd::Command;
use common::{repo, skip};
use serde_json::Value;
use stallscope::files::limits::SizeLimits;

fn gpu_missing(test: &str) -> bool {
    match stallscope::gpu::driver::unavailable() {
        Some(why) => {
            skip(test, "gpu", &why);
            true
        }
        None => false,
    }
}

/// `stallscope run ARGS --json --no-save`, quickly (one burst round): the whole
/// document.
fn run_doc(args: &[&str]) -> Value {
    let out = Command::cargo_bin("stallscope")
        .unwrap()
        .current_dir(repo())
        .arg("run")
        .args(args)
        .args(["--json", "--no-save"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn run_json(args: &[&str]) -> Vec<Value> {
    let mut all = args.to_vec();
    all.extend(["--regime", "burst", "--rounds", "1"]);
    let v = run_doc(&all);
    assert_eq!(v["schema"], "stallscope/run/3");
    comparison(&v)["results"].as_array().unwrap().clone()
}

/// The document's one comparison (one shape was asked for).
fn comparison(doc: &Value) -> &Value {
    let all = doc["comparisons"].as_array().expect("comparisons");
    assert_eq!(all.len(), 1, "one shape, one comparison: {doc}");
    &all[0]
}

fn by_id<'a>(results: &'a [Value], id: &str) -> &'a Value {
    results
        .iter()
        .find(|r| r["version"] == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn gpu_broken_kernels_fail_alone() {
    if gpu_missing("gpu_broken_kernels_fail_alone") {
        return;
    }
    let r = run_json(&["all", "--kernels", "kernels/selftest", "--timeout", "30"]);
    for ok in ["naive", "naive-again"] {
        assert_eq!(by_id(&r, ok)["status"], "ok", "{}", by_id(&r, ok));
    }
    let msg = |id: &str| by_id(&r, id)["message"].as_str().unwrap_or("").to_string();
    for bad in [
        "fault",
        "hang",
        "wrong",
        "unwritten",
        "no-max",
        "stale-counter",
    ] {
        assert_eq!(by_id(&r, bad)["status"], "failed", "{}", by_id(&r, bad));
    }
    assert!(msg("fault").contains("ILLEGAL_ADDRESS"), "{}", msg("fault"));
    assert!(msg("hang").contains("timed out"), "{}", msg("hang"));
    assert!(msg("wrong").contains("wrong result"), "{}", msg("wrong"));
    assert!(
        msg("unwritten").contains("never written"),
        "{}",
        msg("unwritten")
    );
    // The softmax without the row maximum passes gentle inputs: the large-logits case
    // catches it.
    assert!(
        msg("no-max").contains("case large-logits"),
        "{}",
        msg("no-max")
    );
    // Right at its first launch, wrong at a later one.
    assert!(
        msg("stale-counter").contains("the fourth launch"),
        "{}",
        msg("stale-counter")
    );
}

#[test]
fn gpu_every_version_is_correct() {
    if gpu_missing("gpu_every_version_is_correct") {
        return;
    }
    for extra in [&[][..], &["--flag", "causal"][..]] {
        // A shape that is no multiple of the tiles, two batches; and every input case.
        // `run_json` times one burst round: what is asked here is correctness, and the
        // last launch after the timed round is checked too.
        let mut args = vec!["all", "--shape", "2,3,333,128"];
        args.extend_from_slice(extra);
        for r in run_json(&args) {
            assert_eq!(r["status"], "ok", "{r}");
            assert!(r["rel_l2_err"].as_f64().unwrap() < 2e-3, "{r}");
            let checks = r["checks"].as_array().expect("the input cases ran");
            assert!(checks.len() >= 8, "{r}");
            for c in checks {
                assert_eq!(c["status"], "ok", "{}: {c}", r["version"]);
            }
        }
    }
}

#[test]
fn gpu_every_gemm_version_and_baseline_is_correct() {
    if gpu_missing("gpu_every_gemm_version_and_baseline_is_correct") {
        return;
    }
    // M and N multiples of no tile, K a multiple of 8 but not of 64; every input case.
    let args = [
        "all",
        "--kernels",
        "kernels/gemm",
        "--shape",
        "1000,777,520",
        "--baselines",
    ];
    let results = run_json(&args);
    for r in &results {
        if r["status"] == "skipped" {
            // Only a missing PyTorch may skip a baseline; no version skips this shape.
            assert_eq!(r["version"], "torch-matmul", "{r}");
            continue;
        }
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["rel_l2_err"].as_f64().unwrap() < 2e-3, "{r}");
        assert_eq!(r["shape"]["kind"], "gemm", "{r}");
        for c in r["checks"].as_array().into_iter().flatten() {
            assert!(
                c["status"] == "ok" || c["status"] == "skipped",
                "{}: {c}",
                r["version"]
            );
        }
    }
    let ids: Vec<&str> = results
        .iter()
        .filter_map(|r| r["version"].as_str())
        .collect();
    assert!(ids.contains(&"cublas") && ids.contains(&"v01"), "{ids:?}");
}

/// Every round of every timed candidate lasted at least the protocol's window, as
/// measured, and recorded its clock.
fn windows_as_promised(r: &Value) {
    let p = &r["protocol"];
    let floor = p["min_window_ms"].as_f64().expect("the floor is recorded");
    for round in r["rounds"].as_array().unwrap() {
        let w = round["window_ms"].as_f64().unwrap();
        assert!(w >= floor, "{} window {w} < {floor}: {round}", r["version"]);
        assert!(round["sm_clock_mhz"].as_f64().unwrap() > 500.0, "{round}");
        assert!(round["reps"].as_u64().unwrap() >= 1, "{round}");
    }
}

#[test]
fn gpu_every_candidate_is_timed_alike_with_clocks_and_energy() {
    if gpu_missing("gpu_every_candidate_is_timed_alike_with_clocks_and_energy") {
        return;
    }
    let doc = run_doc(&[
        "v01",
        "--baselines",
        "--shape",
        "1,8,512,128",
        "--rounds",
        "2",
    ]);
    let env = &comparison(&doc)["environment"];
    assert!(env["driver"].is_string(), "{env}");
    let results = comparison(&doc)["results"].as_array().unwrap();
    let timed: Vec<&Value> = results.iter().filter(|r| r["status"] == "ok").collect();
    assert!(timed.len() >= 2, "v01 and unfused at least: {doc}");
    for r in &timed {
        let p = &r["protocol"];
        assert_eq!(p["regime"], "sustained", "{r}");
        assert_eq!(p["mechanism"], "cuda_graph", "{r}");
        assert_eq!(p["rounds"], 2, "{r}");
        assert_eq!(p["min_window_ms"], 200.0, "{r}");
        windows_as_promised(r);
        assert_eq!(p["convergence"]["stopped"], "rounds", "{r}");
        assert_eq!(p["convergence"]["against"], "v01", "{r}");
        assert!(r["sm_clock_mhz"].as_f64().unwrap() > 500.0, "{r}");
        assert!(r["power_w"].as_f64().unwrap() > 50.0, "{r}");
        assert!(r["energy_mj"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["throttle"].is_array(), "reasons seen, none too: {r}");
        assert_eq!(r["rounds"].as_array().unwrap().len(), 2, "{r}");
        // Every candidate has its verdicts: v01 against each baseline, a baseline
        // against v01 (the best version) and the other baselines.
        let verdicts = r["verdicts"].as_array().unwrap();
        assert_eq!(verdicts.len(), timed.len() - 1, "{r}");
        for v in verdicts {
            assert!(
                v["verdict"].is_string() && v["ratio"].as_f64().unwrap() > 0.0,
                "{v}"
            );
            assert!(v["cycles"].as_f64().is_some(), "clocks of both rounds: {v}");
        }
    }
}

#[test]
fn gpu_rounds_stop_by_the_rule_and_burst_power_reads_unknown() {
    if gpu_missing("gpu_rounds_stop_by_the_rule_and_burst_power_reads_unknown") {
        return;
    }
    // The defaults' stopping rule, with a short cap.
    let doc = run_doc(&[
        "v01",
        "--baselines",
        "--shape",
        "1,8,512,128",
        "--no-cases",
        "--max-time",
        "15",
    ]);
    let results = comparison(&doc)["results"].as_array().unwrap();
    let timed: Vec<&Value> = results.iter().filter(|r| r["status"] == "ok").collect();
    assert!(timed.len() >= 2, "{doc}");
    for r in &timed {
        let p = &r["protocol"];
        let c = &p["convergence"];
        assert!(p["rounds"].as_u64().unwrap() >= 5, "the floor: {r}");
        windows_as_promised(r);
        match c["stopped"].as_str().unwrap() {
            "converged" => assert_eq!(c["converged"], true, "{r}"),
            "max_time" => {}
            other => panic!("stopped by {other}: {r}"),
        }
        if r["version"] != c["against"] {
            let h = c["interval_pct"].as_f64().unwrap();
            let decided = c["decided"] == true;
            assert_eq!(c["converged"], h <= 1.0 || decided, "{r}");
            // A decided candidate sat out the rounds after its verdict settled: no more
            // rounds than the reference.
            if decided {
                let reference = timed
                    .iter()
                    .find(|x| x["version"] == c["against"])
                    .expect("the reference timed");
                assert!(p["rounds"].as_u64() <= reference["protocol"]["rounds"].as_u64());
            }
        }
    }
    // Baselines far faster than the naive kernel are decided after the floor of
    // rounds: the comparison ends there, converged.
    let naive = timed.iter().find(|r| r["version"] == "v01").unwrap();
    assert_eq!(naive["protocol"]["rounds"], 5, "{naive}");
    assert_eq!(naive["protocol"]["convergence"]["stopped"], "converged");
    // Burst windows are too short for the energy counter: power reads unknown with
    // energy, not NVML's lagging reading of an idle GPU.
    let doc = run_doc(&[
        "v01",
        "--baselines",
        "--shape",
        "1,8,512,128",
        "--no-cases",
        "--regime",
        "burst",
        "--rounds",
        "2",
    ]);
    let results = comparison(&doc)["results"].as_array().unwrap();
    for r in results.iter().filter(|r| r["status"] == "ok") {
        if r["energy_mj"].is_null() {
            assert!(r["power_w"].is_null(), "{r}");
        }
        for round in r["rounds"].as_array().unwrap() {
            if round["energy_mj"].is_null() {
                assert!(round["power_w"].is_null(), "{round}");
            }
            assert!(round["window_ms"].as_f64().unwrap() >= 30.0, "{round}");
        }
    }
}

#[test]
fn gpu_explorer_runs_stream_into_the_timeline_and_failures_show() {
    use stallscope::model::{self, LoadReport, Store};
    use stallscope::tui::{
        action::Action,
        jobs,
        ladder_state::LadderState,
        state::{App, Effect, JobEvent, Status},
        theme::Theme,
    };

    if gpu_missing("gpu_explorer_runs_stream_into_the_timeline_and_failures_show") {
        return;
    }
    // A working folder of its own: a kernel ladder of two versions (the naive kernel and
    // one that faults) built from copies of the repository's sources (a recipe names
    // files inside its folder), and an empty profiles ladder it feeds. The explorer's
    // `R` finds the kernel ladder under ./kernels.
    let work = tempfile::tempdir().unwrap();
    let k = repo().join("kernels");
    let kernels = work.path().join("kernels/tui-test");
    std::fs::create_dir_all(&kernels).unwrap();
    for from in [
        "flash-attention/reference.cu",
        "flash-attention/baselines/softmax.cu",
        "flash-attention/baselines/sdpa.py",
        "flash-attention/v01_naive.cu",
        "selftest/faulty.cu",
    ] {
        let name = std::path::Path::new(from).file_name().unwrap();
        std::fs::copy(k.join(from), kernels.join(name)).unwrap();
    }
    std::fs::write(
        kernels.join("recipe.toml"),
        r#"kind = "attention"
ladder = "tui-test"
title = "explorer test"
tolerance = 2e-3
reference_shape = "1,8,256,128"
baseline_script = "sdpa.py"
[reference]
source = "reference.cu"
entry = "attn_reference"
grid = ["cdiv(S, 16)", "B*H"]
block = ["128"]
[helpers.softmax]
source = "softmax.cu"
entry = "softmax_rows"
[[version]]
id = "naive"
title = "naive"
source = "v01_naive.cu"
entry = "attn_v01"
grid = ["cdiv(S, 128)", "B*H"]
block = ["128"]
[[version]]
id = "fault"
title = "illegal address"
source = "faulty.cu"
entry = "fault_oob"
grid = ["1"]
block = ["32"]
"#,
    )
    .unwrap();
    let ladder_dir = work.path().join("profiles/tui-test");
    std::fs::create_dir_all(&ladder_dir).unwrap();
    std::fs::write(ladder_dir.join("ladder.toml"), "title = 'explorer test'\n").unwrap();
    let ladder = model::load_ladder(
        &Store::disk(SizeLimits::DEFAULT),
        &ladder_dir,
        &mut LoadReport::default(),
    )
    .unwrap();
    let mut app = App::new(vec![LadderState::new(ladder)], Theme { color: false });
    std::env::set_current_dir(work.path()).unwrap();
    // The worker starts children with the stallscope binary, not with this test.
    // SAFETY: the GPU tests run one at a time (--test-threads 1 on the GPU machine).
    unsafe { std::env::set_var("STALLSCOPE_EXE", assert_cmd::cargo::cargo_bin("stallscope")) };

    let Some(Effect::StartJob(req)) = app.update(Action::Run { all: true }) else {
        panic!("R starts a job");
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let job = jobs::start(&app, req, tx);
    let mut streamed = 0;
    loop {
        let msg = rx
            .recv_timeout(std::time::Duration::from_secs(300))
            .expect("the job reports");
        if matches!(msg, JobEvent::Result { .. }) {
            streamed += 1;
        }
        app.update(msg);
        if app.job.is_none() {
            break;
        }
    }
    job.handle.join().unwrap();
    assert!(
        streamed >= 6,
        "each version's result streams in ({streamed})"
    );
    assert!(
        app.job.is_none(),
        "the job has ended and the explorer carries on"
    );
    match &app.status {
        Some(Status::Info(m)) => assert!(m.contains("failed"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The reloaded ladder lists the versions run, with their results.
    let l = &app.ladder().ladder;
    let naive = l.version("naive").expect("naive joined the ladder");
    let last = naive.runs.last().unwrap();
    assert_eq!(last.status, model::RunStatus::Ok, "{:?}", last.message);
    let fault = l.version("fault").unwrap();
    assert_eq!(fault.runs.last().unwrap().status, model::RunStatus::Failed);
}

#[test]
fn gpu_two_launches_on_two_streams_keep_their_own_schedule() {
    if gpu_missing("gpu_two_launches_on_two_streams_keep_their_own_schedule") {
        return;
    }
    use stallscope::gpu::wire::judge;
    use stallscope::gpu::worker::{device::Device, problem::Problem};
    use stallscope::kinds::Shape;
    let recipe = stallscope::recipe::folders::load_recipe(
        &repo().join("kernels/flash-attention"),
        SizeLimits::DEFAULT,
    )
    .unwrap();
    // STALLSCOPE_TWO_STREAM_VERSION=v29 points the test at the schedule in module
    // globals it replaced, which should fail it (shown on the GPU machine, not run in
    // the suite: a race need not show in every run).
    let id = std::env::var("STALLSCOPE_TWO_STREAM_VERSION").unwrap_or_else(|_| "v30".into());
    let v = recipe.version(&id).expect("the version in the recipe");
    let (rel, abs) = v.tolerances(&recipe);
    let dev = Device::open().unwrap();
    let streams = [dev.new_stream().unwrap(), dev.new_stream().unwrap()];
    // Odd S (partial output tiles, items of one to three key tiles), causal. At 2,3 the
    // grid has a block per item (18), so no drawn number names an item; at 2,64 (384
    // items) the blocks draw most of theirs, and shared counters would skip some.
    for s in ["2,3,333,128", "2,64,333,128"] {
        let shape = Shape::parse(recipe.kind, s)
            .unwrap()
            .with_flag("causal", true)
            .unwrap();
        // Two problems on different inputs, each with its own preparation and so its
        // own workspace (the schedule's counters).
        let problems: Vec<Problem> = (0..2u64)
            .map(|i| {
                let mut p = Problem::new(&dev, shape, 7 + i).unwrap();
                p.compute_reference(&recipe).unwrap();
                p
            })
            .collect();
        // One loaded module for both (as a program that loads a kernel once and launches
        // it on two streams): module globals are then shared, which v29's counters
        // were; each preparation still has its own arguments and workspace.
        let first = problems[0].prepare(&recipe, v).unwrap();
        let second = problems[1].prepare_sharing(v, &first).unwrap();
        let mut prepared = [first, second];
        let (a, b) = (&prepared[0].workspace, &prepared[1].workspace);
        assert!(
            v.workspace.is_none()
                || a.as_ref()
                    .zip(b.as_ref())
                    .is_some_and(|(a, b)| a.ptr != b.ptr),
            "a workspace each"
        );
        // Each round: both outputs poisoned, then one launch of each, side by side on
        // the two streams, each starting from the counters its last launch left. An item
        // a corrupted schedule skips keeps its rows NaN.
        for round in 0..20 {
            for p in &problems {
                p.poison().unwrap();
            }
            dev.sync().unwrap();
            for ((p, prep), st) in problems.iter().zip(prepared.iter_mut()).zip(&streams) {
                p.run_on(prep, st).unwrap();
            }
            for (i, p) in problems.iter().enumerate() {
                let e = p.check_current().unwrap();
                assert_eq!(
                    judge(&e, rel, abs),
                    None,
                    "{}: {shape}, round {round}, the launch on stream {i}: {e:?}",
                    v.id
                );
            }
        }
    }
}

/// The versions with a small-problem path (v31 to v36) launch its kernel where their
/// recipe says (few query tiles; from v32 on also short ones) and their own elsewhere,
/// correct at both, the output poisoned before each launch; a run records the path's
/// kernel. (At 4,32,777 causal v33's and v34's own kernels order the 128 heads in four
/// L2 sections, the last of two heads; v35's and v36's in four of 32.)
#[test]
fn gpu_small_problem_paths_are_taken_by_shape_and_correct_on_both_kernels() {
    if gpu_missing("gpu_small_problem_paths_are_taken_by_shape_and_correct_on_both_kernels") {
        return;
    }
    use stallscope::gpu::wire::judge;
    use stallscope::gpu::worker::{device::Device, problem::Problem};
    use stallscope::kinds::Shape;
    let recipe = stallscope::recipe::folders::load_recipe(
        &repo().join("kernels/flash-attention"),
        SizeLimits::DEFAULT,
    )
    .unwrap();
    let dev = Device::open().unwrap();
    for id in ["v31", "v32", "v33", "v34", "v35", "v36"] {
        let v = recipe.version(id).expect("the version in the recipe");
        let (rel, abs) = v.tolerances(&recipe);
        let small = format!("attn_{id}_small");
        // (shape, causal, takes the path): on any GPU of 128 SMs or more, 32 and 18
        // tiles of at most three key tiles take it in all of them; 512 tiles and more never
        // do; 32 tiles of eight key tiles do in v31 only.
        for (s, causal, path) in [
            ("1,16,256,128", false, true),
            ("2,3,333,128", true, true),
            ("1,4,1024,128", false, id == "v31"),
            ("1,64,1000,128", false, false),
            ("4,32,777,128", true, false),
        ] {
            let shape = Shape::parse(recipe.kind, s)
                .unwrap()
                .with_flag("causal", causal)
                .unwrap();
            let mut p = Problem::new(&dev, shape, 11).unwrap();
            p.compute_reference(&recipe).unwrap();
            let mut prep = p.prepare(&recipe, v).unwrap();
            if dev.sm_count().unwrap() >= 128 {
                let want = path.then_some(small.as_str());
                assert_eq!(prep.path(), want, "{id} at {shape}");
            }
            for launch in 0..3 {
                let e = p.check(&mut prep).unwrap();
                assert_eq!(
                    judge(&e, rel, abs),
                    None,
                    "{id} at {shape}, launch {launch}: {e:?}"
                );
            }
        }
        // Through the runner: the result names the path's kernel, and the table says so.
        let results = run_json(&[id, "--shape", "1,16,256,128"]);
        assert_eq!(results[0]["status"], "ok", "{:?}", results[0]);
        assert_eq!(results[0]["kernel"], small.as_str());
    }
}
