//! The hostile corpus: every case of `tests/hostile/<case>/` run through the built
//! binary, under a time limit, in a temporary folder of its own. Each asserts the exit
//! status and the words of the message (`case.toml`), and that nothing outside the
//! case's work folder was read or written.
//!
//! How "nothing outside" is proved: beside the work folder stands `outside/`, the only
//! place the cases' absolute paths, `..` paths and symbolic links lead to (apart from
//! `/dev/zero`). Every file in it is a FIFO, watched by a thread that opens it for
//! writing: that open returns only when someone opens the FIFO for reading, so a read
//! of any of them (even one that stops at the first byte) is seen, and a read that
//! waits for data hangs the run past its limit. Writes are seen by comparing the
//! listing of `outside/` (names, types, sizes, modification times) and of the
//! temporary folder before and after.

mod common;

use common::fixture;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What one case runs and expects.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// What the case tries, in one line.
    about: String,
    /// The command line, in the work folder; `@OUTSIDE@` is the outside folder.
    args: Vec<String>,
    /// The exit status.
    status: i32,
    /// Words the standard error must hold, and must not.
    #[serde(default)]
    stderr: Vec<String>,
    #[serde(default)]
    stderr_lacks: Vec<String>,
    /// Words the standard output must hold, and must not.
    #[serde(default)]
    stdout: Vec<String>,
    #[serde(default)]
    stdout_lacks: Vec<String>,
    /// Whether the work folder must be left as it was (names, types, sizes, times).
    #[serde(default)]
    unchanged: bool,
    /// The longest the standard error may be, in bytes.
    #[serde(default)]
    max_stderr: Option<usize>,
    /// Environment variables of the run (every other `STALLSCOPE_…` is removed).
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// What the test makes in the work folder before the run.
    #[serde(default)]
    setup: Vec<Setup>,
}

/// One thing made in the work folder: a copy of a fixture (converted), a FIFO, a
/// symbolic link, a gzip bomb, or a file of one long line.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Setup {
    /// Where, relative to the work folder.
    path: String,
    /// A file of tests/fixtures to copy there …
    #[serde(default)]
    fixture: Option<String>,
    /// … converted: `gzip`, `two-gzip-members`, `utf16`, `semicolons`.
    #[serde(default)]
    convert: Option<String>,
    #[serde(default)]
    fifo: bool,
    /// The target of a symbolic link made there.
    #[serde(default)]
    symlink: Option<String>,
    /// A gzip file of this many bytes of text when inflated (`256MiB`).
    #[serde(default)]
    bomb: Option<String>,
    /// A text file: `prefix` then this many `x`, one line.
    #[serde(default)]
    long_line: Option<usize>,
    #[serde(default)]
    prefix: String,
}

const LIMIT: Duration = Duration::from_secs(60);

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn convert(bytes: Vec<u8>, how: Option<&str>) -> Vec<u8> {
    match how {
        None => bytes,
        Some("gzip") => gzip(&bytes),
        Some("two-gzip-members") => {
            // `cat a.gz b.gz`: the second launch's rows in the second member.
            let text = String::from_utf8(bytes).unwrap();
            let second = text.find("\n\"1\",").expect("a second launch") + 1;
            let mut joined = gzip(&text.as_bytes()[..second]);
            joined.extend(gzip(&text.as_bytes()[second..]));
            joined
        }
        Some("utf16") => {
            let text = String::from_utf8(bytes).unwrap();
            let mut out = vec![0xff, 0xfe];
            for unit in text.encode_utf16() {
                out.extend(unit.to_le_bytes());
            }
            out
        }
        Some("semicolons") => String::from_utf8(bytes)
            .unwrap()
            .replace("\",\"", "\";\"")
            .into_bytes(),
        Some(other) => panic!("unknown conversion {other}"),
    }
}

fn size(text: &str) -> usize {
    stallscope::files::limits::parse_size(text).unwrap() as usize
}

fn make(work: &Path, outside: &Path, s: &Setup) {
    let path = work.join(&s.path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    if let Some(f) = &s.fixture {
        let bytes = std::fs::read(fixture(f)).unwrap();
        std::fs::write(&path, convert(bytes, s.convert.as_deref())).unwrap();
    } else if s.fifo {
        mkfifo(&path);
    } else if let Some(target) = &s.symlink {
        let target = target.replace("@OUTSIDE@", &outside.display().to_string());
        std::os::unix::fs::symlink(target, &path).unwrap();
    } else if let Some(inflated) = &s.bomb {
        // One member of 16 MiB of text, repeated: a few KiB per 16 MiB.
        let member = gzip(&vec![b'7'; 16 << 20]);
        std::fs::write(&path, member.repeat(size(inflated) / (16 << 20))).unwrap();
    } else if let Some(n) = s.long_line {
        std::fs::write(&path, format!("{}{}\n", s.prefix, "x".repeat(n))).unwrap();
    } else {
        panic!("setup of {} makes nothing", s.path);
    }
}

fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

/// Copies a case's `work/` folder, `@OUTSIDE@` replaced in its files.
fn copy_tree(from: &Path, to: &Path, outside: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst, outside);
        } else {
            let text = std::fs::read_to_string(e.path()).unwrap();
            std::fs::write(
                dst,
                text.replace("@OUTSIDE@", &outside.display().to_string()),
            )
            .unwrap();
        }
    }
}

/// The baits: FIFOs in `outside/`, in the folders a symbolic link may lead a ladder or
/// a version to.
const BAITS: [&str; 5] = [
    "bait.csv",
    "bait.md",
    "ladder/ladder.toml",
    "v1/raw.csv.gz",
    "kernels/recipe.toml",
];

/// A thread per bait, each waiting in an open for writing; [`Watch::finish`] says which
/// baits the run opened for reading. Each bait is also held by an `O_PATH` handle (which
/// opens nothing for reading), so that a waiting thread can be released even when the
/// run replaced the bait's name with a file of its own.
struct Watch {
    released: Arc<AtomicBool>,
    threads: Vec<(PathBuf, std::fs::File, std::thread::JoinHandle<bool>)>,
}

impl Watch {
    fn start(outside: &Path) -> Watch {
        let released = Arc::new(AtomicBool::new(false));
        let threads = BAITS
            .iter()
            .map(|b| {
                let path = outside.join(b);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                mkfifo(&path);
                let held = {
                    use std::os::unix::fs::OpenOptionsExt;
                    std::fs::OpenOptions::new()
                        .read(true)
                        .custom_flags(libc::O_PATH)
                        .open(&path)
                        .unwrap()
                };
                let (p, flag) = (path.clone(), released.clone());
                let handle = std::thread::spawn(move || {
                    let _ = std::fs::OpenOptions::new().write(true).open(&p);
                    !flag.load(Ordering::SeqCst)
                });
                (path, held, handle)
            })
            .collect();
        // Every watcher is waiting in its open before the run starts.
        std::thread::sleep(Duration::from_millis(100));
        Watch { released, threads }
    }

    /// Releases the threads still waiting (by opening each bait for reading here,
    /// through its handle), and returns the baits the run opened.
    fn finish(self) -> Vec<PathBuf> {
        use std::os::unix::fs::OpenOptionsExt;
        use std::os::unix::io::AsRawFd;
        self.released.store(true, Ordering::SeqCst);
        let mut opened = Vec::new();
        for (path, held, handle) in self.threads {
            let _release = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(format!("/proc/self/fd/{}", held.as_raw_fd()))
                .unwrap();
            if handle.join().unwrap() {
                opened.push(path);
            }
        }
        opened
    }
}

/// Names, types, sizes and modification times of everything under `dir`.
fn listing(dir: &Path) -> BTreeMap<PathBuf, (String, u64, Option<std::time::SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let m = std::fs::symlink_metadata(e.path()).unwrap();
            if m.is_dir() {
                stack.push(e.path());
            }
            out.insert(
                e.path(),
                (format!("{:?}", m.file_type()), m.len(), m.modified().ok()),
            );
        }
    }
    out
}

/// Runs one case; the reasons it fails, if any.
fn run_case(dir: &Path) -> Vec<String> {
    let case: Case = toml::from_str(&std::fs::read_to_string(dir.join("case.toml")).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let temp = tempfile::tempdir().unwrap();
    let (work, outside) = (temp.path().join("work"), temp.path().join("outside"));
    std::fs::create_dir_all(&work).unwrap();
    let watch = Watch::start(&outside);
    if dir.join("work").is_dir() {
        copy_tree(&dir.join("work"), &work, &outside);
    }
    for s in &case.setup {
        make(&work, &outside, s);
    }
    let outside_before = listing(&outside);
    let work_before = listing(&work);
    let top_before = listing(temp.path())
        .into_keys()
        .filter(|p| !p.starts_with(&work));
    let top_before: Vec<PathBuf> = top_before.collect();

    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("@OUTSIDE@", &outside.display().to_string()))
        .collect();
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("stallscope"));
    cmd.args(&args)
        .current_dir(&work)
        .env("HOME", &work)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("STALLSCOPE_")) {
        cmd.env_remove(k);
    }
    cmd.envs(&case.env);
    let mut child = cmd.spawn().unwrap();
    let (out_reader, err_reader) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read_all = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let (out_thread, err_thread) = (
        read_all(Box::new(out_reader)),
        read_all(Box::new(err_reader)),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let opened = watch.finish();
    let stdout = String::from_utf8_lossy(&out_thread.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&err_thread.join().unwrap()).into_owned();

    let mut failures = Vec::new();
    let mut fail = |why: String| failures.push(why);
    let outside_text = outside.display().to_string();
    let mut words = |stream: &str, text: &str, holds: &[String], lacks: &[String]| {
        let word = |w: &String| w.replace("@OUTSIDE@", &outside_text);
        for w in holds
            .iter()
            .map(word)
            .filter(|w| !text.contains(w.as_str()))
        {
            fail(format!("{stream} lacks {w:?}"));
        }
        for w in lacks.iter().map(word).filter(|w| text.contains(w.as_str())) {
            fail(format!("{stream} holds {w:?}"));
        }
    };
    words("stderr", &stderr, &case.stderr, &case.stderr_lacks);
    words("stdout", &stdout, &case.stdout, &case.stdout_lacks);
    match status {
        None => fail(format!("ran past {LIMIT:?}")),
        Some(s) if s.code() != Some(case.status) => fail(format!(
            "exit status {:?}, expected {}",
            s.code(),
            case.status
        )),
        Some(_) => {}
    }
    if let Some(max) = case.max_stderr
        && stderr.len() > max
    {
        fail(format!("stderr is {} bytes, more than {max}", stderr.len()));
    }
    if case.unchanged && listing(&work) != work_before {
        fail("changed its work folder".into());
    }
    if !opened.is_empty() {
        fail(format!("read outside its folder: {opened:?}"));
    }
    if listing(&outside) != outside_before {
        fail("wrote outside its folder (outside/ changed)".into());
    }
    let top_after: Vec<PathBuf> = listing(temp.path())
        .into_keys()
        .filter(|p| !p.starts_with(&work))
        .collect();
    if top_after != top_before {
        fail("wrote beside its work folder".into());
    }
    if !failures.is_empty() {
        failures.insert(
            0,
            format!(
                "{} ({}): stallscope {}\n--- stderr:\n{}",
                dir.file_name().unwrap().to_string_lossy(),
                case.about,
                args.join(" "),
                stderr.chars().take(2000).collect::<String>()
            ),
        );
    }
    failures
}

#[test]
fn every_hostile_case_ends_in_its_message_within_its_folder() {
    let root = common::repo().join("tests/hostile");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.toml").is_file())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 25,
        "only {} cases in {}",
        cases.len(),
        root.display()
    );
    let failures: Vec<String> = cases.iter().flat_map(|c| run_case(c)).collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
