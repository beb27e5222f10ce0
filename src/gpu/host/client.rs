//! The runner's end of a worker: start it, hear its hello, ask it commands and read its
//! replies ([`crate::gpu::wire`]) under a time limit, and say why a worker could not be
//! used.

use crate::gpu::wire::{Command, ErrorStats, Hello, Ready, Reply};
use crate::process::{Child, Limits, Stopped};
use anyhow::Result;
use std::time::Duration;

/// A worker process holding one candidate.
pub struct Worker {
    pub id: String,
    child: Child,
    pub ready: Ready,
    /// Launches per repetition and the replay's length, once calibrated.
    calibrated: Option<(u32, f64)>,
    /// Seconds one command may take.
    pub timeout: Duration,
}

/// Why a worker could not be used.
#[derive(Debug)]
pub enum WorkerError {
    /// The worker said so (a wrong result, a compile error …).
    Failed(String),
    /// The worker cannot run here (no PyTorch, a backend missing).
    Skipped(String),
    Stopped(Stopped),
    /// It died or said something that is not the protocol.
    Broken(String),
}

impl std::fmt::Display for WorkerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkerError::Failed(m) | WorkerError::Skipped(m) | WorkerError::Broken(m) => {
                f.write_str(m)
            }
            WorkerError::Stopped(s) => write!(f, "{s}"),
        }
    }
}

/// A worker started and not yet heard from.
pub struct Starting {
    id: String,
    child: Child,
}

impl Starting {
    pub fn spawn(id: &str, cmd: std::process::Command) -> Result<Starting, WorkerError> {
        let child = Child::spawn(cmd, true).map_err(|e| WorkerError::Broken(format!("{e:#}")))?;
        Ok(Starting {
            id: id.to_string(),
            child,
        })
    }

    /// Waits for the worker's first line (setup and checks); `timeout` counts from
    /// now, not from the spawn: workers set up side by side, and one whose kernel hangs
    /// holds the GPU (and so the others) until it is killed, which must not use up
    /// the others' time.
    pub fn ready(
        self,
        timeout: Duration,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Worker, WorkerError> {
        match self.hello(timeout, cancel)? {
            (id, child, Hello::Ready(ready)) => Ok(Worker {
                id,
                child,
                ready,
                calibrated: None,
                timeout,
            }),
            _ => Err(WorkerError::Broken(
                "the worker took a trace where it was to serve the timing protocol".into(),
            )),
        }
    }

    /// Waits for a trace worker's one line ([`Hello::Traced`]); the worker ends after it.
    pub fn traced(
        self,
        timeout: Duration,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<crate::gpu::wire::Traced, WorkerError> {
        match self.hello(timeout, cancel)? {
            (_, _, Hello::Traced(t)) => Ok(t),
            _ => Err(WorkerError::Broken(
                "the worker served the timing protocol where it was to take a trace".into(),
            )),
        }
    }

    /// The worker's first line, a failure said there as the error.
    fn hello(
        self,
        timeout: Duration,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<(String, Child, Hello), WorkerError> {
        let Starting { id, mut child } = self;
        let limits = Limits::new(timeout, cancel);
        let line = next_json_line(&mut child, &limits)?;
        match serde_json::from_str::<Hello>(&line) {
            Ok(Hello::Failed { message, skipped }) => Err(if skipped {
                WorkerError::Skipped(message)
            } else {
                WorkerError::Failed(message)
            }),
            Ok(hello) => Ok((id, child, hello)),
            Err(e) => Err(WorkerError::Broken(format!(
                "the worker said something unexpected ({e}): {line}"
            ))),
        }
    }
}

impl Worker {
    /// Sends a command and reads its reply.
    pub fn ask(
        &mut self,
        cmd: &Command,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Reply, WorkerError> {
        let line = serde_json::to_string(cmd).expect("commands serialize");
        self.child
            .send(&line)
            .map_err(|e| WorkerError::Broken(format!("{e:#}: {}", self.last_words())))?;
        let limits = Limits::new(self.timeout, cancel);
        let line = next_json_line(&mut self.child, &limits)?;
        match serde_json::from_str::<Reply>(&line) {
            Ok(Reply::Error { message }) => Err(WorkerError::Failed(message)),
            Ok(r) => Ok(r),
            Err(e) => Err(WorkerError::Broken(format!(
                "the worker said something unexpected ({e}): {line}"
            ))),
        }
    }

    fn last_words(&self) -> String {
        self.child
            .stderr_tail()
            .into_iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_else(|| "no message".into())
    }

    pub fn calibrate(
        &mut self,
        rep_ms: f64,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<(u32, f64), WorkerError> {
        if let Some(c) = self.calibrated {
            return Ok(c);
        }
        match self.ask(&Command::Calibrate { rep_ms }, cancel)? {
            Reply::Calibrated {
                launches,
                launch_ms,
            } if launches > 0 => {
                let c = (launches, launch_ms * launches as f64);
                self.calibrated = Some(c);
                Ok(c)
            }
            other => Err(WorkerError::Broken(format!(
                "unexpected reply to calibrate: {other:?}"
            ))),
        }
    }

    pub(super) fn reps(
        &mut self,
        count: u32,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<Vec<f64>, WorkerError> {
        match self.ask(&Command::Reps { count }, cancel)? {
            Reply::Times { ms } if ms.len() == count as usize => Ok(ms),
            other => Err(WorkerError::Broken(format!(
                "unexpected reply to reps: {other:?}"
            ))),
        }
    }

    pub fn check_last(
        &mut self,
        cancel: &std::sync::atomic::AtomicBool,
    ) -> Result<ErrorStats, WorkerError> {
        match self.ask(&Command::CheckLast, cancel)? {
            Reply::Checked { error } => Ok(error),
            other => Err(WorkerError::Broken(format!(
                "unexpected reply to check_last: {other:?}"
            ))),
        }
    }

    /// Asks the worker to end; dropping it kills what is left of its process group.
    pub fn quit(mut self) {
        let _ = self
            .child
            .send(&serde_json::to_string(&Command::Quit).expect("commands serialize"));
    }
}

fn next_json_line(child: &mut Child, limits: &Limits) -> Result<String, WorkerError> {
    let mut err_tail: Vec<String> = Vec::new();
    loop {
        match child.next_stdout(limits, &mut |l| err_tail.push(l.to_string())) {
            Err(s) => return Err(WorkerError::Stopped(s)),
            Ok(None) => {
                let tail = err_tail
                    .iter()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .cloned()
                    .unwrap_or_else(|| "no message".into());
                return Err(WorkerError::Broken(format!(
                    "the worker process ended: {tail}"
                )));
            }
            Ok(Some(l)) if l.trim_start().starts_with('{') => return Ok(l),
            Ok(Some(_)) => {}
        }
    }
}
