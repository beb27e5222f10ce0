//! Where a child runs: on which GPU of this host (`CUDA_VISIBLE_DEVICES`), and through
//! which cluster launcher (`--launcher 'srun --gres=gpu:1 --ntasks=1'`), so that users on
//! a cluster use the scheduler they already have rather than one of stallscope's.

use anyhow::{Result, bail};
use std::process::Command;

/// How many children run at once, and where.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slots {
    /// GPU indices of this host, one child each at a time; empty: the launcher (or the
    /// default device) decides.
    pub gpus: Vec<u32>,
    /// Children at once when no GPUs are listed (a launcher's parallelism).
    pub jobs: usize,
    /// The launcher's command prefix, split into words.
    pub launcher: Vec<String>,
}

impl Slots {
    /// The placements children take, one per slot.
    pub fn placements(&self) -> Vec<Placement> {
        if self.gpus.is_empty() {
            (0..self.jobs.max(1))
                .map(|_| Placement {
                    gpu: None,
                    launcher: self.launcher.clone(),
                })
                .collect()
        } else {
            self.gpus
                .iter()
                .map(|&g| Placement {
                    gpu: Some(g),
                    launcher: self.launcher.clone(),
                })
                .collect()
        }
    }
}

/// Where one child runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    pub gpu: Option<u32>,
    pub launcher: Vec<String>,
}

impl Placement {
    /// `cmd` as it runs here: behind the launcher's prefix, its environment kept, on
    /// the placement's GPU.
    pub fn wrap(&self, cmd: Command) -> Command {
        let mut out = match self.launcher.split_first() {
            None => cmd,
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(cmd.get_program()).args(cmd.get_args());
                for (k, v) in cmd.get_envs() {
                    match v {
                        Some(v) => c.env(k, v),
                        None => c.env_remove(k),
                    };
                }
                if let Some(dir) = cmd.get_current_dir() {
                    c.current_dir(dir);
                }
                c
            }
        };
        if let Some(g) = self.gpu {
            out.env("CUDA_VISIBLE_DEVICES", g.to_string());
        }
        out
    }

    /// "GPU 3", or the launcher's name, for progress lines.
    pub fn describe(&self) -> String {
        match (self.gpu, self.launcher.first()) {
            (Some(g), _) => format!("GPU {g}"),
            (None, Some(l)) => l.clone(),
            (None, None) => "GPU".into(),
        }
    }
}

/// `--gpus`: `all` (every GPU the driver sees) or a list such as `0,2,3`.
pub fn parse_gpus(spec: &str, count: impl FnOnce() -> Result<u32>) -> Result<Vec<u32>> {
    if spec.trim() == "all" {
        let n = count()?;
        if n == 0 {
            bail!("--gpus all: the driver sees no GPU");
        }
        return Ok((0..n).collect());
    }
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let g: u32 = part.parse().map_err(|_| {
            anyhow::anyhow!(
                "--gpus {spec:?}: {part:?} is not a GPU index (give `all` or a list such as 0,2,3)"
            )
        })?;
        if out.contains(&g) {
            bail!("--gpus {spec:?} lists GPU {g} twice");
        }
        out.push(g);
    }
    if out.is_empty() {
        bail!("--gpus {spec:?} lists no GPU");
    }
    Ok(out)
}

/// `--launcher`: the prefix split into words as a shell would (quotes kept together).
pub fn parse_launcher(prefix: &str) -> Result<Vec<String>> {
    let words =
        shell_words::split(prefix).map_err(|e| anyhow::anyhow!("--launcher {prefix:?}: {e}"))?;
    if words.is_empty() {
        bail!("--launcher is empty");
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_lists_parse() {
        assert_eq!(parse_gpus("0,2, 3", || Ok(8)).unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_gpus("all", || Ok(4)).unwrap(), vec![0, 1, 2, 3]);
        assert!(parse_gpus("0,0", || Ok(8)).is_err());
        assert!(parse_gpus("x", || Ok(8)).is_err());
        assert!(parse_gpus("all", || Ok(0)).is_err());
    }

    #[test]
    fn a_launcher_prefixes_the_child_and_keeps_its_environment() {
        let p = Placement {
            gpu: Some(3),
            launcher: parse_launcher("srun --gres=gpu:1 --ntasks=1 --job-name 'stall scope'")
                .unwrap(),
        };
        let mut child = Command::new("stallscope");
        child
            .args(["__worker", "--mode", "run"])
            .env("STALLSCOPE_CACHE", "/c");
        let c = p.wrap(child);
        assert_eq!(c.get_program(), "srun");
        let args: Vec<_> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "--gres=gpu:1",
                "--ntasks=1",
                "--job-name",
                "stall scope",
                "stallscope",
                "__worker",
                "--mode",
                "run"
            ]
        );
        let envs: Vec<_> = c
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())))
            .collect();
        assert!(envs.contains(&("STALLSCOPE_CACHE".into(), Some("/c".into()))));
        assert!(envs.contains(&("CUDA_VISIBLE_DEVICES".into(), Some("3".into()))));
    }
}
