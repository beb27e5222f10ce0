//! Benchmark: parse and analyse a raw page of 1,000 kernel launches, built from the
//! real H200 exports in tests/fixtures (their launch rows repeated with new IDs).
//!
//! Run: `taskset -c 0 cargo bench --bench parse_raw` (one core). Prints throughput in
//! MB/s (median of 7 runs) and the peak memory the first run added, against the file's
//! size; then the same as a whole process, `stallscope report FILE --format json`
//! (start-up, reading, analysis and the JSON written to a pipe), median of 7 after one
//! warm-up, its processor time as the operating system counts it. The file is left at
//! target/bench/raw_1000.csv for other tools to read.

use stallscope::analysis;
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

const LAUNCHES: usize = 1000;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("target/bench/raw_1000.csv");
    build(&root, &path);
    let size = std::fs::metadata(&path).unwrap().len() as f64;

    let rss_before = status_kb("VmRSS");
    let mut times = Vec::new();
    let mut peak_added = 0.0;
    for run in 0..8 {
        let t = Instant::now();
        let ladder = model::load_files(
            std::slice::from_ref(&path),
            SizeLimits::DEFAULT,
            &mut LoadReport::default(),
        )
        .expect("the bench file parses");
        let a = analysis::analyse_ladder(&ladder, analysis::Shown::DEFAULT);
        let elapsed = t.elapsed().as_secs_f64();
        assert_eq!(a.versions.len(), LAUNCHES);
        // A raw page gives every launch its stall shares and top reason; without a
        // source page its label is that reason alone (no instruction).
        assert!(a.versions.iter().all(|v| v.top_reason().is_some()));
        assert!(
            a.versions
                .iter()
                .all(|v| { v.bottleneck.as_ref().is_some_and(|b| b.is_reason_alone()) })
        );
        if run == 0 {
            peak_added = (status_kb("VmHWM") - rss_before) * 1024.0;
        } else {
            times.push(elapsed);
        }
        drop(ladder);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "raw page, {LAUNCHES} launches, {:.1} MB: parse + analyse {:.1} ms median of {} → {:.0} MB/s",
        size / 1e6,
        median * 1e3,
        times.len(),
        size / 1e6 / median
    );
    println!(
        "peak memory added by the first run: {:.1} MB = {:.2} × the file",
        peak_added / 1e6,
        peak_added / size
    );

    let (wall, cpu) = whole_process(&path);
    println!(
        "whole process, report --format json: {:.1} ms wall ({:.0} MB/s), {:.1} ms processor time ({:.0} MB/s), median of 7",
        wall * 1e3,
        size / 1e6 / wall,
        cpu * 1e3,
        size / 1e6 / cpu
    );
}

/// The median wall time and processor time (user + system) of
/// `stallscope report FILE --format json`, its output read through a pipe.
fn whole_process(path: &Path) -> (f64, f64) {
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    for run in 0..8 {
        let before = children_cpu();
        let t = Instant::now();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stallscope"))
            .args(["report", "--format", "json"])
            .arg(path)
            .output()
            .expect("stallscope starts");
        let wall = t.elapsed().as_secs_f64();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if run > 0 {
            walls.push(wall);
            cpus.push(children_cpu() - before);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut walls), median(&mut cpus))
}

/// Seconds of processor time (user + system) of this process's finished children.
fn children_cpu() -> f64 {
    // SAFETY: getrusage writes the struct it is given and nothing else.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Writes the header rows of a real raw page, then its launch rows over and over with
/// fresh launch IDs, streaming (the benchmark's memory is not spent here).
fn build(root: &Path, out: &Path) {
    if out.exists() {
        return;
    }
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut header = Vec::new();
    let mut rows = Vec::new();
    for sample in [
        "tests/fixtures/sgemm/raw.csv",
        "tests/fixtures/h200/sdpa_cudnn_raw.csv",
        "tests/fixtures/h200/sdpa_flash_raw.csv",
    ] {
        let lines: Vec<String> = BufReader::new(std::fs::File::open(root.join(sample)).unwrap())
            .lines()
            .map(Result::unwrap)
            .collect();
        if header.is_empty() {
            header = lines[..2].to_vec();
        }
        assert_eq!(lines[0], header[0], "the samples share one column list");
        rows.extend(lines[2..].iter().filter(|l| !l.is_empty()).cloned());
    }
    let mut w = BufWriter::new(std::fs::File::create(out).unwrap());
    writeln!(w, "{}\n{}", header[0], header[1]).unwrap();
    for i in 0..LAUNCHES {
        let row = &rows[i % rows.len()];
        // Replace the launch ID (the first cell).
        let rest = &row[row.find("\",").unwrap()..];
        writeln!(w, "\"{i}{rest}").unwrap();
    }
    w.flush().unwrap();
}

fn status_kb(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}
