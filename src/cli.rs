//! The command line: every subcommand, its arguments and its help.

use crate::model::Shape;
use crate::report::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// stallscope: see where a kernel's bottleneck was at each step of its optimization,
/// and where it moved next.
///
/// With no arguments it opens the explorer on the bundled profiles (./profiles when it
/// exists, else the copy built into the binary). Given ncu CSV exports, it opens them as
/// a ladder in the order given.
#[derive(Debug, Parser)]
#[command(name = "stallscope", version, long_about)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// ncu CSV exports (raw, details, source …; .csv or .csv.gz) to open as a ladder.
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Clone, Args, Default)]
pub struct Common {
    /// Folder of ladders [default: ./profiles if present, else the built-in copy].
    #[arg(long, global = true, env = "STALLSCOPE_PROFILES", value_name = "DIR")]
    pub profiles: Option<PathBuf>,

    /// Read every file given even when some fail; list the failures at the end.
    #[arg(long, global = true)]
    pub keep_going: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the explorer on a folder: a profiles folder, one ladder, or a folder of exports.
    Open {
        /// The folder to open.
        dir: PathBuf,
    },
    /// Print the ladder timeline (versions as columns, metrics as rows, the trail on top), or a page or a chart of it.
    Report {
        /// Exports, ladder folders or profiles folders [default: the bundled profiles].
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, short, value_enum, default_value = "table")]
        format: Format,
        /// Only this ladder (its folder name).
        #[arg(long)]
        ladder: Option<String>,
        /// The chart that `--format svg` draws.
        #[arg(long, value_enum, required_if_eq("format", "svg"))]
        chart: Option<crate::report::svg::Chart>,
        /// Write to this file instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Print the metric deltas between two versions (ids of one ladder) or two files.
    Compare {
        /// A version id (`v1`, or `LADDER:v1`) or an export file.
        a: String,
        /// A version id or an export file.
        b: String,
        /// The ladder holding both versions [default: the first one that does].
        #[arg(long)]
        ladder: Option<String>,
        #[arg(long, short, value_enum, default_value = "table")]
        format: Format,
        /// Write to this file instead of standard output.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Add ncu exports to a ladder under the profiles folder, as one version.
    Import {
        /// The exports of one report (raw, details, source pages).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The version they belong to (e.g. v07).
        #[arg(long = "version", value_name = "ID")]
        version_id: String,
        /// The ladder folder to add to [default: the only ladder, or `imported`].
        #[arg(long)]
        ladder: Option<String>,
        /// The version's title [default: the kernel's short name].
        #[arg(long)]
        title: Option<String>,
        /// Which kernel of the exports, where they hold several (part of its name).
        #[arg(long)]
        kernel: Option<String>,
        /// Mark the version as a baseline (a reference beside the ladder).
        #[arg(long)]
        baseline: bool,
        /// Replace the version's existing exports.
        #[arg(long)]
        force: bool,
    },
    /// On a GPU: compile, launch, check and time versions of a kernel ladder.
    ///
    /// Each version runs in its own process on fresh random inputs (seeded; the seed is
    /// printed), its output poisoned with NaN before the launch and compared with an fp32
    /// GPU reference and fp64 CPU rows. Results go to the profiles ladder's runs.json.
    Run {
        /// Version ids, or `all` [default: all].
        versions: Vec<String>,
        /// Problem shape B,H,S,D [default: the ladder's reference shape].
        #[arg(long)]
        shape: Option<Shape>,
        /// Causal masking.
        #[arg(long)]
        causal: bool,
        /// Also run the baselines: unfused cuBLAS, and PyTorch SDPA's backends.
        #[arg(long)]
        baselines: bool,
        /// Print the results as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Seed of the random inputs, to replay a run [default: fresh].
        #[arg(long)]
        seed: Option<u64>,
        /// Timed repetitions per version (the median is reported).
        #[arg(long, default_value_t = 15)]
        reps: usize,
        /// Seconds a version may take before it is stopped.
        #[arg(long, default_value_t = 180)]
        timeout: u64,
        /// The kernel ladder folder.
        #[arg(long, default_value = crate::gpu::DEFAULT_KERNELS)]
        kernels: std::path::PathBuf,
        /// Do not store the results.
        #[arg(long)]
        no_save: bool,
    },
    /// On a GPU with Nsight Compute: profile versions with ncu and import the exports.
    Profile {
        /// Version ids, or `all` [default: all].
        versions: Vec<String>,
        #[arg(long)]
        shape: Option<Shape>,
        #[arg(long)]
        causal: bool,
        /// ncu section set.
        #[arg(long, default_value = "full")]
        set: String,
        /// Seconds one version's profile may take.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        #[arg(long, default_value = crate::gpu::DEFAULT_KERNELS)]
        kernels: std::path::PathBuf,
    },
    /// Compile versions with NVRTC (no GPU needed) and print their registers and spills.
    Build {
        /// Version ids, or `all` [default: all].
        versions: Vec<String>,
        /// Target architecture.
        #[arg(long, default_value = "sm_90a")]
        arch: String,
        /// Head dimension (HEAD_DIM).
        #[arg(long, default_value_t = 128)]
        head_dim: u32,
        #[arg(long, default_value = crate::gpu::DEFAULT_KERNELS)]
        kernels: std::path::PathBuf,
    },
    /// Print a shell completion script, e.g. `stallscope completions bash > ~/.local/share/bash-completion/completions/stallscope`.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or with `--dir` write it and one page per subcommand.
    ///
    /// `stallscope man --dir ~/.local/share/man/man1` installs them for `man stallscope`.
    Man {
        /// Write stallscope.1 and stallscope-SUBCOMMAND.1 into this folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Internal: runs one version in a child process.
    #[command(name = "__child", hide = true)]
    Child(crate::gpu::child::ChildArgs),
}

/// Writes the completion script of `shell`, generated from these definitions.
pub fn write_completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cmd, "stallscope", out);
}

/// The command as the man pages describe it: named by the package description, without
/// the `help` subcommand (the pages are the help).
fn man_command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
        .about(env!("CARGO_PKG_DESCRIPTION"))
        .disable_help_subcommand(true)
}

/// Writes the man page, generated from these definitions: the command, its options and
/// the subcommands, each named as `stallscope-NAME(1)`.
pub fn write_man_page(out: &mut dyn std::io::Write) -> std::io::Result<()> {
    clap_mangen::Man::new(man_command()).render(out)
}

/// Writes `stallscope.1` and a page per visible subcommand into `dir`.
pub fn write_man_pages(dir: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    clap_mangen::generate_to(man_command(), dir)
}
