//! Child processes: version workers, the PyTorch baseline script, ncu and whatever they
//! start. Each child leads a process group of its own and is killed as a group on a
//! timeout, on cancel (the explorer's `x`), on an interrupt (Ctrl-C, SIGTERM or SIGHUP
//! reaching stallscope, forwarded to the group), and whenever its handle is dropped; so
//! no child outlives the call that started it. Output is read line by line as it comes.

use anyhow::{Context, Result, bail};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

/// Raised when SIGINT, SIGTERM or SIGHUP reached this process (after
/// [`handle_interrupts`]); every wait on a child watches it.
static INTERRUPTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Catches Ctrl-C, SIGTERM and SIGHUP so that the children can be stopped (and the
/// terminal restored) before stallscope exits; a second signal ends stallscope at once.
pub fn handle_interrupts() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::flag;
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // Registered first, so it sees the flag as the previous signal left it.
        flag::register_conditional_shutdown(sig, 130, INTERRUPTED.clone())
            .context("cannot install a signal handler")?;
        flag::register(sig, INTERRUPTED.clone()).context("cannot install a signal handler")?;
    }
    Ok(())
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Why a wait on a child ended without the child finishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    TimedOut(Duration),
    Cancelled,
    Interrupted,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stopped::TimedOut(d) => write!(f, "timed out after {} s", d.as_secs()),
            Stopped::Cancelled => write!(f, "stopped"),
            Stopped::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Stopped {}

/// What stops a wait: a deadline, and the caller's cancel flag.
#[derive(Clone, Copy)]
pub struct Limits<'a> {
    pub deadline: Instant,
    pub timeout: Duration,
    pub cancel: &'a AtomicBool,
}

impl<'a> Limits<'a> {
    pub fn new(timeout: Duration, cancel: &'a AtomicBool) -> Limits<'a> {
        Limits {
            deadline: Instant::now() + timeout,
            timeout,
            cancel,
        }
    }

    fn check(&self) -> Result<(), Stopped> {
        if interrupted() {
            Err(Stopped::Interrupted)
        } else if self.cancel.load(Ordering::Relaxed) {
            Err(Stopped::Cancelled)
        } else if Instant::now() >= self.deadline {
            Err(Stopped::TimedOut(self.timeout))
        } else {
            Ok(())
        }
    }
}

/// A line a child wrote, and on which stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Out(String),
    Err(String),
    /// The start of a line not finished yet (ncu's `0%....50%` progress dots), as far
    /// as it has come; the whole line follows as `Out` or `Err`.
    Partial(String),
}

/// How much of a child's stderr is kept for error messages.
const STDERR_TAIL: usize = 200;

/// A running child process, leader of its own process group.
pub struct Child {
    proc: std::process::Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    reaped: bool,
}

/// How often a start that finds its program busy is tried again, and how long apart.
const BUSY_RETRIES: u32 = 20;
const BUSY_PAUSE: Duration = Duration::from_millis(25);

/// `cmd.spawn()`, tried again while the program is "busy" (ETXTBSY): a script written
/// a moment ago is busy while any process forked during its writing still holds the
/// written file open, until that process execs. It is over within milliseconds.
fn spawn_retrying_busy(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        match cmd.spawn() {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < BUSY_RETRIES => {
                tries += 1;
                std::thread::sleep(BUSY_PAUSE);
            }
            other => return other,
        }
    }
}

impl Child {
    /// Starts `cmd` in a new process group with stdout and stderr piped (stdin too when
    /// `interactive`, else closed).
    pub fn spawn(mut cmd: Command, interactive: bool) -> Result<Child> {
        let program = cmd.get_program().to_string_lossy().into_owned();
        cmd.process_group(0)
            .stdin(if interactive {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut proc =
            spawn_retrying_busy(&mut cmd).with_context(|| format!("cannot start {program}"))?;
        let (tx, lines) = channel();
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(out) = proc.stdout.take() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                read_lines(out, |l, whole| {
                    tx.send(if whole {
                        Line::Out(l)
                    } else {
                        Line::Partial(l)
                    })
                    .is_ok()
                })
            });
        }
        if let Some(err) = proc.stderr.take() {
            let tail = stderr.clone();
            std::thread::spawn(move || {
                read_lines(err, |l, whole| {
                    if !whole {
                        return tx.send(Line::Partial(l)).is_ok();
                    }
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if t.len() == STDERR_TAIL {
                        t.pop_front();
                    }
                    t.push_back(l.clone());
                    tx.send(Line::Err(l)).is_ok()
                })
            });
        }
        Ok(Child {
            stdin: proc.stdin.take(),
            proc,
            lines,
            stderr,
            reaped: false,
        })
    }

    pub fn pid(&self) -> u32 {
        self.proc.id()
    }

    /// Writes one line to the child's stdin.
    pub fn send(&mut self, line: &str) -> Result<()> {
        let stdin = self.stdin.as_mut().context("the child has no stdin")?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.write_all(b"\n"))
            .and_then(|_| stdin.flush())
            .context("the child stopped reading its input")
    }

    /// The next line the child writes (stdout or stderr); `None` once both are closed.
    pub fn next_line(&mut self, limits: &Limits) -> Result<Option<Line>, Stopped> {
        loop {
            limits.check()?;
            match self.lines.recv_timeout(Duration::from_millis(20)) {
                Ok(l) => return Ok(Some(l)),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
    }

    /// The next line on stdout; stderr lines go to `on_err` meanwhile.
    pub fn next_stdout(
        &mut self,
        limits: &Limits,
        on_err: &mut dyn FnMut(&str),
    ) -> Result<Option<String>, Stopped> {
        loop {
            match self.next_line(limits)? {
                Some(Line::Out(l)) => return Ok(Some(l)),
                Some(Line::Err(l)) => on_err(&l),
                Some(Line::Partial(_)) => {}
                None => return Ok(None),
            }
        }
    }

    /// Waits for the child to exit (its output delivered through `on_line` meanwhile),
    /// then kills what is left of its group: a grandchild that still holds the pipes
    /// does not keep the wait going.
    pub fn wait(
        mut self,
        limits: &Limits,
        on_line: &mut dyn FnMut(Line),
    ) -> Result<ExitStatus, Stopped> {
        drop(self.stdin.take());
        let mut closed = false;
        loop {
            limits.check()?;
            if closed {
                std::thread::sleep(Duration::from_millis(10));
            } else {
                match self.lines.recv_timeout(Duration::from_millis(20)) {
                    Ok(l) => on_line(l),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => closed = true,
                }
            }
            if let Some(status) = exited(&self.proc) {
                // What the leader wrote before it exited is on its way: take it.
                let until = Instant::now() + Duration::from_millis(200);
                while !closed && Instant::now() < until {
                    match self.lines.recv_timeout(Duration::from_millis(10)) {
                        Ok(l) => on_line(l),
                        Err(RecvTimeoutError::Timeout) => {}
                        Err(RecvTimeoutError::Disconnected) => closed = true,
                    }
                }
                self.kill_group(libc::SIGKILL);
                let _ = self.proc.wait();
                self.reaped = true;
                return Ok(status);
            }
        }
    }

    /// The last lines the child wrote on stderr.
    pub fn stderr_tail(&self) -> Vec<String> {
        let t = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        t.iter().cloned().collect()
    }

    /// Sends a signal to every process of the child's group. Safe while the leader is
    /// not reaped: its pid, the group's id, cannot be reused before.
    fn kill_group(&self, signal: i32) {
        if !self.reaped {
            unsafe {
                libc::killpg(self.proc.id() as i32, signal);
            }
        }
    }

    /// Stops the group: `first` (SIGINT for an interrupt, forwarded as the terminal would
    /// have), a grace period, then SIGKILL.
    fn stop(&mut self, first: i32, grace: Duration) {
        if self.reaped {
            return;
        }
        if first != libc::SIGKILL {
            self.kill_group(first);
            let until = Instant::now() + grace;
            while Instant::now() < until && exited(&self.proc).is_none() {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        self.kill_group(libc::SIGKILL);
        let _ = self.proc.wait();
        self.reaped = true;
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if interrupted() {
            self.stop(libc::SIGINT, Duration::from_millis(500));
        } else {
            self.stop(libc::SIGKILL, Duration::ZERO);
        }
    }
}

/// The child's exit status if it has exited, without reaping it (so that its group id
/// stays reserved until the group has been killed).
fn exited(proc: &std::process::Child) -> Option<ExitStatus> {
    use std::os::unix::process::ExitStatusExt;
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            proc.id() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 || unsafe { info.si_pid() } == 0 {
        return None;
    }
    let status = unsafe { info.si_status() };
    Some(match info.si_code {
        libc::CLD_EXITED => ExitStatus::from_raw(status << 8),
        _ => ExitStatus::from_raw(status & 0x7f),
    })
}

/// Reads a pipe as it comes: each whole line (`true`), and the unfinished rest of a
/// chunk (`false`) so that progress written without a newline shows at once.
fn read_lines(mut pipe: impl Read, mut each: impl FnMut(String, bool) -> bool) {
    let mut pending: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&buf[..n]);
        while let Some(pos) = pending.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = pending.drain(..=pos).collect();
            while line.last().is_some_and(|&b| b == b'\n' || b == b'\r') {
                line.pop();
            }
            if !each(String::from_utf8_lossy(&line).into_owned(), true) {
                return;
            }
        }
        if !pending.is_empty() && !each(String::from_utf8_lossy(&pending).into_owned(), false) {
            return;
        }
    }
    if !pending.is_empty() {
        each(String::from_utf8_lossy(&pending).into_owned(), true);
    }
}

/// A finished one-shot child.
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// The last non-empty line of stderr (or of stdout), for an error message.
    pub fn last_words(&self) -> &str {
        [&self.stderr, &self.stdout]
            .iter()
            .find_map(|s| s.lines().rev().find(|l| !l.trim().is_empty()))
            .unwrap_or("no output")
    }
}

/// Runs a command to its end under `limits`, collecting its output; `on_line` sees each
/// line as it comes (for progress).
pub fn run(
    cmd: Command,
    limits: &Limits,
    on_line: &mut dyn FnMut(&Line),
) -> Result<Result<Finished, Stopped>> {
    let child = Child::spawn(cmd, false)?;
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let status = child.wait(limits, &mut |l| {
        on_line(&l);
        let (buf, text) = match &l {
            Line::Out(t) => (&mut stdout, t),
            Line::Err(t) => (&mut stderr, t),
            Line::Partial(_) => return,
        };
        buf.push_str(text);
        buf.push('\n');
    });
    Ok(status.map(|status| Finished {
        status,
        stdout,
        stderr,
    }))
}

/// Fails with the child's last words unless it exited successfully.
pub fn success(f: Finished, what: &str) -> Result<Finished> {
    if !f.status.success() {
        bail!("{what} ended ({}): {}", f.status, f.last_words());
    }
    Ok(f)
}
