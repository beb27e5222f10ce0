//! Pipeline traces end to end, without a GPU: buffers written by hand exactly as
//! kernels/stallscope_trace.h lays them out, decoded, stored, loaded with their ladder,
//! and reported as the table, the HTML page and a Perfetto (Chrome trace-event) file.
//!
//! The bundled traces under tests/fixtures/trace/synthetic/ are SYNTHETIC: this file's
//! buffers, written by stallscope's own writer (`STALLSCOPE_WRITE_FIXTURES=1 cargo test
//! --test trace` writes them again). No measured trace exists yet; a GPU session
//! replaces or joins them with real ones.

mod common;

use stallscope::files::limits::SizeLimits;
use stallscope::model::trace::{self, Clock, Clocks, Overhead, Trace};
use stallscope::model::{LoadReport, Store, load_ladder};
use std::path::{Path, PathBuf};

const LANES: usize = 4;

/// A trace buffer as the header writes it: lane = block × 4 + role, 2 + 3 × cap words.
struct Buffer {
    words: Vec<u64>,
    blocks: u32,
    cap: u32,
}

impl Buffer {
    fn new(blocks: u32, cap: u32) -> Buffer {
        let stride = 2 + 3 * cap as usize;
        Buffer {
            words: vec![0; blocks as usize * LANES * stride],
            blocks,
            cap,
        }
    }

    fn base(&self, block: u32, role: u32) -> usize {
        (block as usize * LANES + role as usize) * (2 + 3 * self.cap as usize)
    }

    fn open(&mut self, block: u32, role: u32, sm: u32) {
        let at = self.base(block, role);
        self.words[at] = 0;
        self.words[at + 1] = 1 << 63 | u64::from(sm);
    }

    fn mark(&mut self, block: u32, role: u32, clock: u64, ns: u64, stage: u16, kind: u64) {
        let at = self.base(block, role);
        let i = self.words[at];
        if i < u64::from(self.cap) {
            let m = at + 2 + 3 * i as usize;
            self.words[m..m + 3].copy_from_slice(&[clock, ns, u64::from(stage) | kind << 16]);
        }
        self.words[at] = i + 1;
    }
}

fn roles() -> Vec<String> {
    ["producer", "consumer 0", "consumer 1"]
        .map(String::from)
        .to_vec()
}

fn stages() -> Vec<String> {
    ["load K", "load V", "Q·Kᵀ", "softmax", "P·V", "store"]
        .map(String::from)
        .to_vec()
}

const LOAD_K: u16 = 0;
const LOAD_V: u16 = 1;
const QK: u16 = 2;
const SOFTMAX: u16 = 3;
const PV: u16 = 4;

/// %globaltimer of the kernel's start: a multiple of the 32 ns step.
const T0: u64 = 1_700_000_000_000_000_000;
const STEP_NS: u64 = 32;
/// Each block's SM counter starts here (blocks on different SMs count apart).
const CLOCK0: u64 = 5_000_000;

/// The synthetic step: two tiles of 3000 cycles per block. The producer loads K
/// [0, 500] and V [500, 1000] of each tile; consumer 0 runs Q·Kᵀ [1000, 1600], softmax
/// [1600, 2200], P·V [2200, 2800]; consumer 1 the same `lag` cycles later (v13: 1200,
/// v14: 600). Four blocks (0 to 3) on SMs 10, 17, 24, 31, starting 1000 ns apart (+7
/// ns, so the 32 ns timer step shows), their cycles scaled by 1.0, 1.2, 0.9 and 1.1; the
/// SM runs 2 cycles a ns; %globaltimer readings fall to its 32 ns step.
fn step_buffer(lag: u64) -> Buffer {
    let mut b = Buffer::new(4, 64);
    for (k, scale) in [10, 12, 9, 11].into_iter().enumerate() {
        let block = k as u32;
        let sm = 10 + 7 * block;
        let origin = T0 + 1000 * k as u64 + 7;
        let at = |c: u64| {
            let c = c * scale / 10;
            (CLOCK0 + c, (origin + c / 2) / STEP_NS * STEP_NS)
        };
        let span = |b: &mut Buffer, role: u32, stage: u16, from: u64, to: u64| {
            let (c, ns) = at(from);
            b.mark(block, role, c, ns, stage, 1);
            let (c, ns) = at(to);
            b.mark(block, role, c, ns, stage, 2);
        };
        for role in 0..3 {
            b.open(block, role, sm);
        }
        for tile in 0..2 {
            let t = 3000 * tile;
            span(&mut b, 0, LOAD_K, t, t + 500);
            span(&mut b, 0, LOAD_V, t + 500, t + 1000);
        }
        for (role, late) in [(1, 0), (2, lag)] {
            for tile in 0..2 {
                let t = 3000 * tile + late;
                span(&mut b, role, QK, t + 1000, t + 1600);
                span(&mut b, role, SOFTMAX, t + 1600, t + 2200);
                span(&mut b, role, PV, t + 2200, t + 2800);
            }
        }
    }
    b
}

fn reference() -> stallscope::kinds::Shape {
    stallscope::kinds::attention::shape(1, 64, 1024, 128, false)
}

/// The synthetic trace of `version`, decoded from its buffer as the GPU side would.
fn synthetic(version: &str, lag: u64, overhead: Overhead) -> Trace {
    let b = step_buffer(lag);
    let clocks = Clocks {
        timer_resolution_ns: Some(STEP_NS),
        sm_clock_mhz: Some(1980.0),
    };
    let timeline = trace::decode(&b.words, b.blocks, b.cap, &roles(), &stages(), clocks).unwrap();
    let mut t = Trace::new(version, reference(), timeline);
    t.gpu = Some("synthetic (no GPU)".into());
    t.timer_resolution_ns = Some(STEP_NS);
    t.overhead = Some(overhead);
    t
}

fn v13() -> Trace {
    synthetic(
        "v13",
        1200,
        Overhead {
            plain_us: 100.0,
            traced_us: 101.5,
        },
    )
}

fn v14() -> Trace {
    synthetic(
        "v14",
        600,
        Overhead {
            plain_us: 90.0,
            traced_us: 93.6,
        },
    )
}

fn fixture_ladder() -> PathBuf {
    common::fixture("trace/synthetic")
}

fn store() -> Store {
    Store::disk(SizeLimits::DEFAULT)
}

#[test]
fn the_synthetic_fixture_traces_read_back_as_their_buffers_decode() {
    let dir = fixture_ladder();
    for t in [v13(), v14()] {
        if std::env::var_os("STALLSCOPE_WRITE_FIXTURES").is_some() {
            trace::write_trace(&dir, &t).unwrap();
        }
        let path = dir.join(&t.version).join("trace-1,64,1024,128.json.gz");
        let read = trace::read_trace(&store(), &path).unwrap();
        assert_eq!(read, t, "{}", path.display());
    }
}

/// Block 0 of v13 lasts 7000 cycles (consumer 1's last P·V ends at 1200 + 3000 + 2800)
/// in 3500 ns, read as 3488 ns: %globaltimer's 32 ns steps of T0 + 7 and T0 + 3507.
/// Block 2 (scaled by 0.9) lasts 6300 cycles, 3150 ns: under 100 steps, so the given
/// 1980 MHz. Blocks 1 to 3 start at T0 + 1007, 2007 and 3007, read as 992, 1984 and 2976
/// ns after block 0.
#[test]
fn blocks_take_their_own_clock_or_the_given_one_and_their_offsets_in_timer_steps() {
    let t = v13().timeline;
    let b = &t.blocks;
    assert_eq!(b.iter().map(|b| b.sm).collect::<Vec<_>>(), [10, 17, 24, 31]);
    assert_eq!(
        b.iter().map(|b| b.cycles).collect::<Vec<_>>(),
        [7000, 8400, 6300, 7700]
    );
    assert_eq!(b[0].clock, Clock::Block);
    assert_eq!(b[0].ns_per_cycle, Some(3488.0 / 7000.0));
    assert_eq!(b[2].clock, Clock::Given);
    assert_eq!(b[2].ns_per_cycle, Some(1000.0 / 1980.0));
    assert_eq!(
        b.iter().map(|b| b.start_ns).collect::<Vec<_>>(),
        [0, 992, 1984, 2976]
    );
    assert!(t.overflowed.is_empty() && t.unmatched.is_empty());
}

/// Loading lists each version's trace by its file name (its shape from the name) and
/// reads none; `read_traces` reads them, once.
#[test]
fn the_fixture_ladder_lists_each_version_s_trace_and_reads_it_when_asked() {
    let mut report = LoadReport::default();
    let mut l = load_ladder(&store(), &fixture_ladder(), &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.lines());
    assert_eq!(l.versions.len(), 2);
    for (v, want) in l.versions.iter().zip([v13(), v14()]) {
        assert_eq!(v.traces.len(), 1);
        assert!(!v.traces[0].is_read());
        assert_eq!(v.traces[0].shape, want.shape);
        assert_eq!(v.traces[0].trace(), None);
    }
    let read = l.read_traces(Some(v13().shape));
    assert_eq!((read.read, read.failed.len()), (2, 0));
    for (v, want) in l.versions.iter().zip([v13(), v14()]) {
        assert_eq!(v.traces, [want]);
    }
    assert_eq!(l.read_traces(None).read, 0, "read once");
}

/// A ladder folder in a temporary folder naming `ids`, for a trace written by the
/// writer to be loaded.
fn temp_ladder(ids: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("toy");
    std::fs::create_dir(&dir).unwrap();
    let mut manifest = String::from(
        "title = \"toy\"\nkind = \"attention\"\nreference_shape = \"1,64,1024,128\"\n",
    );
    for id in ids {
        manifest.push_str(&format!("\n[[version]]\nid = \"{id}\"\ntitle = \"{id}\"\n"));
    }
    std::fs::write(dir.join("ladder.toml"), manifest).unwrap();
    (tmp, dir)
}

/// A corrupt trace file does not stop the ladder loading, nor warn there (loading does
/// not decode it); reading it says which file and why, and its version is shown without
/// it.
#[test]
fn a_corrupt_trace_loads_without_a_warning_and_fails_when_read() {
    let (_tmp, dir) = temp_ladder(&["v1"]);
    std::fs::create_dir(dir.join("v1")).unwrap();
    std::fs::write(
        dir.join("v1/trace-1,64,1024,128.json.gz"),
        b"\x1f\x8bnot gzip",
    )
    .unwrap();
    let mut report = LoadReport::default();
    let mut l = load_ladder(&store(), &dir, &mut report).unwrap();
    assert!(report.warnings.is_empty(), "{:?}", report.lines());
    assert_eq!(l.versions[0].traces.len(), 1);
    assert!(!l.versions[0].traces[0].is_read());
    let read = l.read_traces(None);
    assert_eq!(read.read, 1);
    let lines: Vec<String> = read.failed.iter().map(|w| w.to_string()).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("trace-1,64,1024,128.json.gz"),
        "{lines:?}"
    );
    assert!(lines[0].contains("gzip data is damaged"), "{lines:?}");
    assert!(
        lines[0].contains("version v1 is shown without this trace"),
        "{lines:?}"
    );
    let t = &l.versions[0].traces[0];
    assert!(t.trace().is_none());
    assert!(
        t.error()
            .is_some_and(|e| e.contains("gzip data is damaged"))
    );
}

/// `report` reads the traces it shows: a corrupt one is a warning of the report (the file
/// and why), and the rest of the report is written.
#[test]
fn the_report_warns_of_a_trace_it_cannot_read() {
    let (_tmp, dir) = temp_ladder(&["v1"]);
    std::fs::create_dir(dir.join("v1")).unwrap();
    std::fs::write(
        dir.join("v1/trace-1,64,1024,128.json.gz"),
        b"\x1f\x8bnot gzip",
    )
    .unwrap();
    let out = stallscope(&["report", &path_arg(&dir)]).success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("trace-1,64,1024,128.json.gz"), "{err}");
    assert!(err.contains("gzip data is damaged"), "{err}");
    assert!(
        err.contains("version v1 is shown without this trace"),
        "{err}"
    );
}

fn stallscope(args: &[&str]) -> assert_cmd::assert::Assert {
    assert_cmd::Command::cargo_bin("stallscope")
        .unwrap()
        .env_remove("STALLSCOPE_PROFILES")
        .args(args)
        .assert()
}

fn stdout(args: &[&str]) -> String {
    let out = stallscope(args).success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn path_arg(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn perfetto_holds_a_process_per_block_a_thread_per_role_and_a_span_per_stage() {
    let dir = path_arg(&fixture_ladder());
    let text = stdout(&["report", &dir, "--format", "perfetto"]);
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let events = doc["traceEvents"].as_array().unwrap();
    fn of<'a>(
        events: &'a [serde_json::Value],
        ph: &'a str,
    ) -> impl Iterator<Item = &'a serde_json::Value> + Clone {
        events.iter().filter(move |e| e["ph"] == ph)
    }
    let of = |ph: &'static str| of(events, ph);
    // Two versions × four blocks × (4 loads + 6 + 6 consumer stages).
    assert_eq!(of("X").count(), 2 * 4 * 16);
    let names = |what: &str| -> Vec<String> {
        of("M")
            .filter(|e| e["name"] == what)
            .map(|e| e["args"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names("process_name")[..4],
        [
            "v13 · block 0 · SM 10",
            "v13 · block 1 · SM 17",
            "v13 · block 2 · SM 24",
            "v13 · block 3 · SM 31"
        ]
    );
    assert_eq!(names("process_name").len(), 8);
    assert_eq!(
        names("thread_name")[..3],
        ["producer", "consumer 0", "consumer 1"]
    );
    // v13, block 0: consumer 0's first Q·Kᵀ, cycles 1000 to 1600 after the block's first
    // mark, at 3488 / 7000 ns a cycle (see above), the block at 0 ns.
    let npc = 3488.0 / 7000.0;
    let qk = of("X")
        .find(|e| e["pid"] == 1 && e["name"] == "Q·Kᵀ" && e["args"]["role"] == "consumer 0")
        .unwrap();
    let close = |v: &serde_json::Value, want: f64| {
        let x = v.as_f64().unwrap();
        assert!((x - want).abs() < 1e-9, "{x} ≠ {want}");
    };
    close(&qk["ts"], 1000.0 * npc / 1e3);
    close(&qk["dur"], 600.0 * npc / 1e3);
    assert_eq!(qk["cat"], "v13");
    assert_eq!(qk["args"]["cycles"], 600);
    // Block 1 of v13 starts 992 ns in: its producer's first load K at 0.992 µs.
    let load = of("X")
        .find(|e| e["pid"] == 2 && e["name"] == "load K")
        .unwrap();
    close(&load["ts"], 0.992);
    // The thread of a span is one its process names.
    for e in of("X") {
        assert!(
            of("M").any(|m| m["pid"] == e["pid"]
                && m["tid"] == e["tid"]
                && m["name"] == "thread_name"),
            "{e}"
        );
    }
    let traces = doc["otherData"]["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    assert_eq!(traces[1]["version"], "v14");
    assert_eq!(traces[1]["timer_resolution_ns"], 32);
}

/// Consumer 1 runs the same stages 1200 cycles after consumer 0 in v13, 600 in v14:
/// - v13: consumer 1's Q·Kᵀ [2200, 2800] lies wholly in consumer 0's P·V, its softmax
///   [2800, 3400] after it: consumer 0's P·V overlapped 100 % by the Q·Kᵀ, 0 % by the
///   softmax;
/// - v14: the Q·Kᵀ [1600, 2200] is consumer 0's softmax exactly, the softmax [2200,
///   2800] its P·V: 0 % and 100 %.
///
/// Every overlap of the consumers moved by 100 points; the sentence tells the first two
/// of them in order of their names (one side of each), the rest left out.
const V14_STEP: &str = "v14 from v13: Q·Kᵀ of consumer 1 now overlaps 0 % of consumer 0's P·V (was 100 %); softmax of consumer 1 now overlaps 100 % of consumer 0's P·V (was 0 %)";

#[test]
fn the_table_report_shows_the_figures_per_role_and_stage_and_the_step() {
    let dir = path_arg(&fixture_ladder());
    let text = stdout(&["report", &dir, "--wide"]);
    assert!(text.contains("Pipeline traces at 1,64,1024,128"), "{text}");
    assert!(text.contains(V14_STEP), "{text}");
    // v14's tracing cost 3.6 of 90 µs.
    assert!(
        text.contains("v14: warning: tracing cost 4.0 %, over 3 %"),
        "{text}"
    );
    assert!(!text.contains("v13: warning"), "{text}");
    let row = |label: &str, section: &str| -> String {
        let from = text
            .find(section)
            .unwrap_or_else(|| panic!("{section}: {text}"));
        text[from..]
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}: {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // v13: each block spends 1200 of 7000 cycles (scaled alike in every block) in
    // consumer 0's softmax, and consumer 1 waits between its tiles [4000, 5200]: 17 %.
    // Consumer 1's Q·Kᵀ lies in consumer 0's P·V.
    assert_eq!(
        row("consumer 0 · softmax", "── v13 "),
        "consumer 0 · softmax 17 % 17 %"
    );
    assert_eq!(
        row("consumer 1 · waiting", "── v13 "),
        "consumer 1 · waiting 17 % 17 %"
    );
    assert_eq!(
        row("consumer 1 · Q·Kᵀ", "── v13 "),
        "consumer 1 · Q·Kᵀ 17 % 17 % P·V of consumer 0: 100 %"
    );
    // v14: 1200 of 6400 cycles; the Q·Kᵀ now lies in consumer 0's softmax.
    assert_eq!(
        row("consumer 1 · Q·Kᵀ", "── v14 "),
        "consumer 1 · Q·Kᵀ 19 % 19 % softmax of consumer 0: 100 %"
    );
    let md = stdout(&["report", &dir, "--format", "markdown"]);
    assert!(md.contains("### Pipeline traces at 1,64,1024,128"), "{md}");
    assert!(md.contains(&format!("- {V14_STEP}")), "{md}");
}

#[test]
fn the_html_page_draws_the_median_block_of_each_version_as_lanes_per_role() {
    let dir = path_arg(&fixture_ladder());
    let page = stdout(&["report", &dir, "--format", "html"]);
    assert_eq!(page.matches("data-chart=\"pipeline\"").count(), 2, "{page}");
    // The median block by duration: 6300, 7000, 7700, 8400 cycles; of four, the
    // shorter middle one, block 0. Its 16 spans are drawn, each with its role.
    let v13 = &page[page
        .find("v13: block 0 on SM 10")
        .expect("v13's median block")..];
    let svg = &v13[..v13.find("</svg>").unwrap()];
    assert_eq!(svg.matches("class=\"mark span\"").count(), 16);
    assert_eq!(svg.matches("data-role=\"consumer 1\"").count(), 6);
    for stage in ["load K", "load V", "Q·Kᵀ", "softmax", "P·V"] {
        assert!(svg.contains(&format!("data-stage=\"{stage}\"")), "{stage}");
    }
    assert!(svg.contains("µs from the block&#39;s first mark"), "{svg}");
    let step = V14_STEP["v14 ".len()..].replace('\'', "&#39;");
    assert!(page.contains(&step), "{page}");
    assert!(page.contains("<h2>Pipeline traces</h2>"));
}

#[test]
fn perfetto_without_a_trace_is_refused_and_a_block_in_cycles_only_is_left_out() {
    let bundled = path_arg(&common::profiles());
    let out = stallscope(&["report", &bundled, "--format", "perfetto"]).failure();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(err.contains("no version of these ladders has one"), "{err}");

    // One block of 100 cycles in 50 ns, no clock given: in cycles only.
    let (_tmp, dir) = temp_ladder(&["v1"]);
    let mut b = Buffer::new(1, 4);
    b.open(0, 1, 3);
    b.mark(0, 1, 1_000, T0, QK, 1);
    b.mark(0, 1, 1_100, T0 + 50, QK, 2);
    let timeline = trace::decode(&b.words, 1, 4, &roles(), &stages(), Clocks::default()).unwrap();
    assert_eq!(timeline.blocks[0].clock, Clock::Unknown);
    trace::write_trace(&dir, &Trace::new("v1", reference(), timeline)).unwrap();
    let text = stdout(&["report", &path_arg(&dir), "--format", "perfetto"]);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["traceEvents"].as_array().unwrap().len(), 0);
    let notes = doc["otherData"]["notes"].to_string();
    assert!(
        notes.contains("v1: 1 blocks left out, their clock unknown"),
        "{notes}"
    );
    let text = stdout(&["report", &path_arg(&dir), "--wide"]);
    assert!(
        text.contains("v1: warning: 1 blocks are in cycles only"),
        "{text}"
    );
    assert!(
        text.contains("median block 0 on SM 3, 100 cycles"),
        "{text}"
    );
}

#[test]
fn check_reads_every_trace_and_names_the_one_that_does_not_read() {
    let fixtures = path_arg(&common::fixture("trace"));
    let out = stallscope(&["check", "--profiles", &fixtures]).success();
    let out = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        out.contains("2 version(s), 2 file(s) checked; no problems"),
        "{out}"
    );
    let (tmp, dir) = temp_ladder(&["v13"]);
    trace::write_trace(&dir, &v13()).unwrap();
    // The same trace again under another shape's name.
    std::fs::copy(
        dir.join("v13/trace-1,64,1024,128.json.gz"),
        dir.join("v13/trace-1,16,8192,128.json.gz"),
    )
    .unwrap();
    let out = stallscope(&["check", "--profiles", &path_arg(tmp.path())]).failure();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap()
        + &String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        text.contains("v13/trace-1,16,8192,128.json.gz: the trace is at 1,64,1024,128: its file is named trace-1,64,1024,128.json.gz"),
        "{text}"
    );
    assert!(text.contains("1 problem(s)"), "{text}");
}
