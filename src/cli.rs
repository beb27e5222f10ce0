//! The command line: every subcommand, its arguments and its help, declared only. Each
//! subcommand's arguments are one `Args` struct; its defaults are the constants of the
//! module that does the work, so the explorer's jobs start from the same ones. What the
//! arguments resolve to on this machine (the recipe on disk, the GPUs, the requests) is
//! `commands::options`'s.

use crate::gpu::host::{profile, protocol, runner};
use crate::kinds::ShapeText;
use crate::model::runs::Regime;
use crate::report::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// stallscope: see where a kernel's bottleneck was at each step of its optimization,
/// and where it moved next.
///
/// With no arguments it opens the explorer on the bundled profiles: the ladders of
/// ./profiles when it exists, then those built into the binary that it does not hold by
/// name (marked "built in"); else the built-in copy. Given ncu CSV exports, it opens them
/// as a ladder in the order given.
#[derive(Debug, Parser)]
#[command(name = "stallscope", version, long_about)]
#[command(subcommand_precedence_over_arg = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// ncu CSV exports (raw, details, source …; .csv or .csv.gz) to open as a ladder.
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub loose: LooseArgs,

    #[command(flatten)]
    pub common: Common,
}

/// Options every subcommand takes, before or after its name.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Folder of ladders, read alone [default: ./profiles if present, its ladders first
    /// and the built-in ones it does not hold after them; else the built-in copy].
    #[arg(long, global = true, env = "STALLSCOPE_PROFILES", value_name = "DIR")]
    pub profiles: Option<PathBuf>,

    /// Where the kernel recipes are, for run, profile, build and the explorer's r and p:
    /// a recipe folder (holding recipe.toml) or a folder of them [default: ./kernels if
    /// present, else the built-in copy]. (Which kernels ncu profiles is profile -k.)
    #[arg(long, global = true, env = "STALLSCOPE_KERNELS", value_name = "DIR")]
    pub kernels: Option<PathBuf>,

    /// Read every file given even when some fail; list the failures at the end.
    #[arg(long, global = true)]
    pub keep_going: bool,

    /// Refuse an export that ends in the middle of a launch, instead of reading its
    /// complete launches with a warning.
    #[arg(long, global = true)]
    pub strict: bool,

    /// The most one file may hold (bytes, or a size such as 512MiB, 4GiB, 100MB): a
    /// larger one is refused, naming this limit.
    #[arg(
        long,
        global = true,
        env = crate::files::limits::MAX_FILE_SIZE_VAR,
        value_name = "SIZE",
        value_parser = crate::files::limits::parse_size,
        default_value = crate::files::limits::default_max_file_size_text()
    )]
    pub max_file_size: u64,

    /// The most a gzip export may inflate to (bytes, or a size such as 8GiB): a larger
    /// one is refused before it takes memory.
    #[arg(
        long,
        global = true,
        env = crate::files::limits::MAX_DECOMPRESSED_VAR,
        value_name = "SIZE",
        value_parser = crate::files::limits::parse_size,
        default_value = crate::files::limits::default_max_decompressed_text()
    )]
    pub max_decompressed: u64,
}

/// The command line as parsed and documented (help, man page, completions): clap's
/// declaration above, with what depends on data said once, here: the ladder run by
/// default, and per problem kind its `--shape` syntax and its baselines.
pub fn command() -> clap::Command {
    let ladder = format!("[default: {}]", crate::recipe::folders::DEFAULT_LADDER);
    let shapes = shape_help();
    let baselines = baseline_help();
    let mut cmd = <Cli as clap::CommandFactory>::command();
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in subs {
        cmd = cmd.mut_subcommand(name, |mut sub| {
            let args: Vec<String> = sub
                .get_arguments()
                .map(|a| a.get_id().to_string())
                .collect();
            let recipe = sub.get_name() != "report" && sub.get_name() != "compare";
            for id in args {
                let extra = match id.as_str() {
                    "ladder" if recipe => &ladder,
                    "shape" => &shapes,
                    "baselines" => &baselines,
                    _ => continue,
                };
                sub = sub.mut_arg(id, |a| with_help(a, extra));
            }
            sub
        });
    }
    cmd
}

/// `arg`'s help and long help with `extra` after them.
fn with_help(arg: clap::Arg, extra: &str) -> clap::Arg {
    let join = |h: &clap::builder::StyledStr| format!("{h} {extra}");
    let long = arg.get_long_help().map(join);
    let short = arg
        .get_help()
        .map(join)
        .unwrap_or_else(|| extra.to_string());
    let arg = arg.help(short);
    match long {
        Some(l) => arg.long_help(l),
        None => arg,
    }
}

/// Every problem kind's `--shape` syntax with its reference shape, as
/// `KIND: DIMS[:FLAG], e.g. SHAPE` for each.
fn shape_help() -> String {
    let kinds: Vec<String> = crate::kinds::KINDS
        .iter()
        .map(|k| {
            let kind = crate::kinds::Kind::of(*k);
            format!(
                "{}: {}, e.g. {}",
                k.name(),
                kind.shape_usage(),
                k.reference_shape()
            )
        })
        .collect();
    format!("(by kind: {})", kinds.join("; "))
}

/// Every problem kind's built-in baselines by id.
fn baseline_help() -> String {
    let kinds: Vec<String> = crate::kinds::KINDS
        .iter()
        .map(|k| {
            let ids: Vec<&str> = k.baselines().iter().map(|b| b.id).collect();
            format!("{}: {}", k.name(), ids.join(", "))
        })
        .collect();
    format!("(by kind: {})", kinds.join("; "))
}

impl Cli {
    /// The command line of this process, parsed by [`command`] (clap exits with its
    /// help or error where it does not parse).
    pub fn from_env() -> Cli {
        use clap::FromArgMatches;
        Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit())
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the explorer on a folder: a profiles folder, one ladder, or a folder of exports.
    Open(OpenArgs),
    /// Print the ladder timeline (versions as columns, metrics as rows, the trail on top), or a page or a chart of it.
    ///
    /// Every row names where its figures come from: `(ncu)` the profiled launch, `(run
    /// at SHAPE)` stallscope's timed runs at that shape (`--shape`), never both in one
    /// row ("% of ladder ceiling (ncu)" is of TFLOPS (ncu), "% of ladder ceiling (run …)" of TFLOPS
    /// (run …)); CSV gives the shape of a run figure in its `run_shape` column.
    Report(ReportArgs),
    /// Print the metric deltas between two versions (ids of one ladder) or two files.
    ///
    /// A delta is the difference of the two values as they are shown (1970 → 1978 MHz
    /// reads +8 MHz). Rows name their source as `report` does: `(ncu)` or `(run at
    /// SHAPE)`.
    Compare(CompareArgs),
    /// Add ncu exports to a ladder under the profiles folder, as one version.
    ///
    /// Without --profiles it writes into ./profiles, which it makes when missing and says
    /// so: commands run from that folder then show its ladders first and the built-in
    /// ones after them, and a new ladder named like a built-in one stands in for it there.
    Import(ImportArgs),
    /// On a GPU: compile, launch, check and time versions of a kernel ladder.
    ///
    /// Every candidate runs in a worker process of its own on fresh random inputs
    /// (seeded; the seed is printed). Each version is first checked on the input cases
    /// (large logits, the row maximum in the last key tile, tied scores, partial tiles,
    /// small and odd shapes) at its first and a later launch, its output poisoned with
    /// NaN before each, against an fp32 GPU reference checked by fp64 CPU rows. Then
    /// every candidate is timed under one protocol (CUDA-graph replays; the regime's
    /// warm-up and window) in interleaved rounds, with the SM clock, power and energy
    /// recorded through NVML, and its last launch is checked again. Results go to the
    /// profiles ladder's runs.json.
    Run(RunArgs),
    /// On a GPU with Nsight Compute: profile versions with ncu and import the exports.
    ///
    /// `stallscope profile v28 v29` profiles versions of a kernel recipe;
    /// `stallscope profile --ladder L --version V [-k FILTER] -- CMD ARGS…` profiles any
    /// program (a PyTorch script, a CUDA binary …) and imports what ncu measured as
    /// version V of ladder L, the command stored with it.
    Profile(ProfileArgs),
    /// On a GPU: take the in-kernel pipeline timeline of marked versions.
    ///
    /// Each version's trace build (its pipeline markers, `kernels/stallscope_trace.h`,
    /// stamping the SM's cycle counter and %globaltimer from one leader per role) is
    /// timed against the plain build under the one protocol (what tracing costs), then
    /// launched once after a warm-up, checked like any run (a trace of a wrong result
    /// is refused), and its timeline stored beside the version's profiles.
    Trace(TraceArgs),
    /// Compile versions with NVRTC (no GPU needed) and print their registers and spills.
    Build(BuildArgs),
    /// Verify a profiles folder without changing it (--profiles DIR, else ./profiles when
    /// it exists, else the built-in copy): every manifest parses and names each version
    /// once, every file it names exists, stays inside the ladder's folders and parses, and
    /// nothing is left of an interrupted import. One line per problem; exits non-zero
    /// when there is any.
    Check,
    /// Say what this machine can do and what to fix: the GPU and its driver, NVRTC,
    /// Nsight Compute and its access to the performance counters, NVML, Python with
    /// PyTorch. Exits non-zero when `run` or `profile` could not work here.
    Doctor,
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
    /// Internal: one candidate's worker process.
    #[command(name = "__worker", hide = true)]
    Worker(crate::gpu::wire::WorkerArgs),
}

#[derive(Debug, Args)]
pub struct OpenArgs {
    /// The folder to open.
    pub dir: PathBuf,
    #[command(flatten)]
    pub loose: LooseArgs,
}

/// What to read of loose export files (a ladder named "files", one version per launch).
#[derive(Debug, Clone, Default, Args)]
pub struct LooseArgs {
    /// Of export files: only the launches of the kernels whose full or short demangled
    /// name holds NAME, or matches the regular expression after `regex:` (as ncu's -k).
    #[arg(long, value_name = "NAME|regex:RE")]
    pub kernel: Option<String>,
    /// Of export files: FLOP of one launch, for every launch's TFLOPS (ncu): a number
    /// (34359738368, 3.4e10) or an integer expression of numbers (2*4096*4096*4096).
    #[arg(long, value_name = "EXPR|NUMBER", value_parser = flop_count)]
    pub flops: Option<f64>,
}

impl LooseArgs {
    /// The options as the model takes them.
    pub fn options(&self) -> crate::model::LooseOptions {
        crate::model::LooseOptions {
            kernel: self.kernel.clone(),
            flops: self.flops,
        }
    }
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Exports, ladder folders or profiles folders [default: the bundled profiles].
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, short, value_enum, default_value = "table")]
    pub format: Format,
    /// Only this ladder (its folder name).
    #[arg(long)]
    pub ladder: Option<String>,
    /// Show the run results of this shape, in the dimensions of the ladder's problem
    /// kind with `:flag` after them [default: the ladder's reference shape].
    #[arg(long, value_name = "DIMS[:FLAG]")]
    pub shape: Option<ShapeText>,
    /// Show the run results of this timing regime alone (`run --regime`), a version
    /// without one showing none [default: a version's sustained result, else its burst
    /// one].
    #[arg(long, value_enum)]
    pub regime: Option<Regime>,
    /// A step between two versions of the ladder (`--versions v27,v28`): the
    /// before/after tables a version's notes carry, in Markdown: per shape both were run
    /// at, each one's time, the second's change against the first with stallscope's
    /// verdict and its 95 % interval, the change in cycles where the clocks are apart,
    /// SM clocks and energy per launch; then from their profiles the tensor pipe and the
    /// top cells of the stall table. With --format table or markdown.
    #[arg(long, value_name = "A,B", value_delimiter = ',')]
    pub versions: Vec<String>,
    /// Each ladder on the roofline instead of the timeline: the ceilings with where
    /// each came from (bandwidths from the export's peak metrics, compute from
    /// peak_tflops and the datasheet), and per version its arithmetic intensity against
    /// DRAM, L2 and L1/shared, its TFLOP/s, the nearer roof and its share, and the step
    /// from its parent. With --format table, markdown or json; the chart of it is
    /// `--format svg --chart roofline` (and on the HTML page).
    #[arg(long, conflicts_with_all = ["versions", "estimates"])]
    pub roofline: bool,
    /// What ncu estimated against what each step got, instead of the timeline: per step
    /// the parent's rule findings the child resolved (gone, or the estimate halved),
    /// ncu's largest estimate, the measured change in time (the runs at the reference
    /// shape, else the ncu durations) and whether it delivered. With --format table,
    /// markdown or json.
    #[arg(long, conflicts_with = "versions")]
    pub estimates: bool,
    /// The chart that `--format svg` draws.
    #[arg(long, value_enum, required_if_eq("format", "svg"))]
    pub chart: Option<crate::report::svg::Chart>,
    /// One line per metric however wide, as when the output is not a terminal (on a
    /// terminal too narrow for a column per version, the versions are rows, one table
    /// per section of metrics, in blocks of columns that fit its width).
    #[arg(long)]
    pub wide: bool,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub loose: LooseArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A version id (`v1`, or `LADDER:v1`) or an export file; given alone, a version
    /// compared with its parent (the version it was built on).
    pub a: String,
    /// A version id or an export file, compared with A.
    pub b: Option<String>,
    /// Which launch of file A (ncu's launch ID), where it holds several.
    #[arg(long, value_name = "ID")]
    pub launch_a: Option<u64>,
    /// Which launch of file B, where it holds several.
    #[arg(long, value_name = "ID")]
    pub launch_b: Option<u64>,
    /// The ladder holding both versions [default: the first one that does].
    #[arg(long)]
    pub ladder: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value = "table")]
    pub format: crate::report::CompareFormat,
    /// Compare the run results of this shape, in the dimensions of the ladder's problem
    /// kind with `:flag` after them [default: the ladder's reference shape].
    #[arg(long, value_name = "DIMS[:FLAG]")]
    pub shape: Option<ShapeText>,
    /// Compare the run results of this timing regime alone (`run --regime`) [default:
    /// a version's sustained result, else its burst one].
    #[arg(long, value_enum)]
    pub regime: Option<Regime>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub loose: LooseArgs,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The exports of one report (raw, details, source pages).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The version they belong to (e.g. v07).
    #[arg(long = "version", value_name = "ID")]
    pub version_id: String,
    /// The ladder folder to add to [default: the only ladder, or `imported`]: a plain
    /// folder name (no '/', no control character or bidirectional control such as
    /// U+202E, not starting with '.').
    #[arg(long)]
    pub ladder: Option<String>,
    /// The version's title [default: the kernel's short name, cut to 48 characters].
    #[arg(long)]
    pub title: Option<String>,
    /// Which kernel of the exports, where they hold several (part of its name).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Which launch (ncu's launch ID), where several match; without it such exports
    /// are listed and nothing is imported.
    #[arg(long, value_name = "ID")]
    pub launch: Option<u64>,
    /// FLOP of one launch of this version, for its TFLOPS: a number (34359738368,
    /// 3.4e10) or an integer expression of numbers (4*16*1024*1024*128).
    #[arg(long, value_name = "EXPR|NUMBER", value_parser = flop_count)]
    pub flops: Option<f64>,
    /// The whole ladder's practical ceiling in TFLOPS (its manifest's peak_tflops, not
    /// this version's): every version's "% of ladder ceiling" rows are measured against it.
    /// The import says what it changed, and warns of every figure past it (a wrong
    /// --flops or ceiling), as `report` does.
    #[arg(long, value_name = "TFLOPS")]
    pub peak_tflops: Option<f64>,
    /// Mark the version as a baseline (a reference beside the ladder).
    #[arg(long)]
    pub baseline: bool,
    /// Replace the version's existing exports, and with them everything the old import
    /// wrote: the kernel, the launch, the title, the FLOP count and the baseline mark
    /// (the new exports may be another kernel's). What is given again (`--title`,
    /// `--flops`, `--baseline`) or named in `--keep` is set; the notes, source,
    /// technique and parent, which an import never writes, stay. The import says what
    /// it changed.
    #[arg(long)]
    pub force: bool,
    /// With --force: keep these of the version's old entry (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        requires = "force",
        value_name = "KEY,..."
    )]
    pub keep: Vec<crate::model::import::Keep>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Version ids, or `all` [default: all].
    pub versions: Vec<String>,
    /// The ladder whose recipe to run, where the kernels folder holds several.
    #[arg(long)]
    pub ladder: Option<String>,
    /// Problem shape in the dimensions of the recipe's problem kind, `:flag` after them
    /// for each flag set; repeat it to run several comparisons (each on one GPU, spread
    /// over `--gpus`) [default: the recipe's reference shape].
    #[arg(long, value_name = "DIMS[:FLAG]")]
    pub shape: Vec<ShapeText>,
    /// Set this flag of the problem kind on every shape (`--flag causal`).
    #[arg(long = "flag", value_name = "FLAG")]
    pub flags: Vec<String>,
    #[command(flatten)]
    pub slots: SlotArgs,
    /// Also run the baselines of the recipe's problem kind.
    #[arg(long)]
    pub baselines: bool,
    /// Timing regime: `sustained` times a window of at least 200 ms after the SM clock
    /// has settled under the candidate's load; `burst` times a short window from an
    /// idle GPU at boost clock.
    #[arg(long, value_enum, default_value_t = Regime::Sustained)]
    pub regime: Regime,
    /// Rounds: every candidate is measured once a round, in alternation (A B C A B C
    /// …), until the 95 % interval of every candidate's ratio to the reference (the
    /// fastest version, or `--against`) is within ±`--target-noise` and says a verdict
    /// (one across 1 and an edge of the ±1 % band goes on), after at least
    /// `--min-rounds` and for at most `--max-time`; a candidate whose interval lies
    /// wholly beyond the band after the floor sits out the rounds after. `--rounds K`
    /// runs exactly K rounds instead (the intervals are still recorded).
    #[arg(long, value_name = "K")]
    pub rounds: Option<u32>,
    /// The stopping rule's floor of rounds.
    #[arg(long, value_name = "N", default_value_t = protocol::DEFAULT_MIN_ROUNDS, conflicts_with = "rounds")]
    pub min_rounds: u32,
    /// The stopping rule's target: each ratio's 95 % interval within ± PCT percent.
    #[arg(long, value_name = "PCT", default_value_t = protocol::DEFAULT_TARGET_NOISE_PCT, conflicts_with = "rounds")]
    pub target_noise: f64,
    /// The stopping rule's cap: seconds of rounds per comparison (setup and checks
    /// not counted); rounds that stop here say they did not converge.
    #[arg(long, value_name = "SECONDS", default_value_t = protocol::DEFAULT_MAX_TIME_S, conflicts_with = "rounds")]
    pub max_time: f64,
    /// Timed repetitions in each round's window, at least [default: 20 sustained, 15
    /// burst].
    #[arg(long)]
    pub reps: Option<u32>,
    /// Each round's window lasts at least MS milliseconds of measured replays
    /// [default: 200 sustained, 30 burst].
    #[arg(long, value_name = "MS")]
    pub min_window: Option<f64>,
    /// Print the results as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random inputs, to replay a run [default: fresh].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seconds a candidate may take to set up and check, or for one timing step.
    #[arg(long, default_value_t = runner::DEFAULT_TIMEOUT_S)]
    pub timeout: u64,
    /// Check only the timed shape, not the input cases (faster, less trustworthy).
    #[arg(long)]
    pub no_cases: bool,
    /// Exit non-zero when a version is slower than the `--against` candidate by more
    /// than PCT percent (and the verdict says slower).
    #[arg(long, value_name = "PCT", requires = "against")]
    pub fail_if_slower: Option<f64>,
    /// The candidate the stopping rule and `--fail-if-slower` take ratios against (a
    /// version id or a baseline such as cudnn) [default: the fastest version].
    #[arg(long, value_name = "ID")]
    pub against: Option<String>,
    /// Do not store the results.
    #[arg(long)]
    pub no_save: bool,
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Version ids of the recipe, or `all` [default: all].
    pub versions: Vec<String>,
    /// The program to profile and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
    /// With a command: the version the profile becomes.
    #[arg(long = "version", value_name = "ID", requires = "command")]
    pub version_id: Option<String>,
    /// With a command: which kernels ncu profiles (ncu's -k: a name, or `regex:…`)
    /// [default: the first kernel launched after --launch-skip].
    #[arg(
        short = 'k',
        long = "kernel",
        value_name = "FILTER",
        requires = "command"
    )]
    pub kernel: Option<String>,
    /// With a command: launches (of the filtered kernels) ncu lets pass first.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub launch_skip: u32,
    /// With a command: the version's title [default: the kernel's short name, cut to 48 characters].
    #[arg(long, requires = "command")]
    pub title: Option<String>,
    /// With a command: replace the version's existing exports (its title, FLOP count
    /// and baseline mark stay: the version is profiled again; `import --force` replaces
    /// them too).
    #[arg(long, requires = "command")]
    pub force: bool,
    /// The ladder whose recipe to profile, where the kernels folder holds several.
    #[arg(long)]
    pub ladder: Option<String>,
    /// Recipe versions: the problem shape they are launched at under ncu, in the
    /// dimensions of the recipe's problem kind with `:flag` after them [default: the
    /// recipe's reference shape]. A command (after --) runs at the shape it sets itself.
    #[arg(long, value_name = "DIMS[:FLAG]")]
    pub shape: Option<ShapeText>,
    /// Recipe versions: set this flag of the problem kind (`--flag causal`).
    #[arg(long = "flag", value_name = "FLAG")]
    pub flags: Vec<String>,
    #[command(flatten)]
    pub slots: SlotArgs,
    /// ncu section set (`ncu --set`): `full` gives every page stallscope shows.
    #[arg(long, default_value = profile::DEFAULT_SET)]
    pub set: String,
    /// Seconds one version's profile may take.
    #[arg(long, default_value_t = profile::DEFAULT_TIMEOUT_S)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Version ids, or `all` [default: every marked version].
    pub versions: Vec<String>,
    /// The ladder whose recipe to trace, where the kernels folder holds several.
    #[arg(long)]
    pub ladder: Option<String>,
    /// Problem shape in the dimensions of the recipe's problem kind, `:flag` after them
    /// [default: the recipe's reference shape].
    #[arg(long, value_name = "DIMS[:FLAG]")]
    pub shape: Option<ShapeText>,
    /// Set this flag of the problem kind on the shape (`--flag causal`).
    #[arg(long = "flag", value_name = "FLAG")]
    pub flags: Vec<String>,
    /// Marks one role of one block may record (fewer for grids of many blocks, so that
    /// the buffer stays within 1 GiB; the kernels keep at most SS_TRACE_RING on chip,
    /// 512 unless a version's recipe says less) [default: 512].
    #[arg(long, value_name = "N")]
    pub cap: Option<u32>,
    /// Do not time the trace build against the plain one (faster; the overhead is then
    /// unknown).
    #[arg(long, conflicts_with = "no_capture")]
    pub no_overhead: bool,
    /// Only time the trace builds against the plain ones and print what tracing costs;
    /// take no trace (for a trace build whose buffer is not meant to be read, such as
    /// the experiments recipes' variants of a mark).
    #[arg(long)]
    pub no_capture: bool,
    /// Timing regime of the overhead's run, as for `run`: `sustained` (windows of at
    /// least 200 ms after the clock settles) or `burst` (short windows from an idle
    /// GPU; quicker where many versions are traced).
    #[arg(long, value_enum, default_value_t = Regime::Sustained)]
    pub regime: Regime,
    /// Rounds of the overhead's run: exactly K, instead of the stopping rule's.
    #[arg(long, value_name = "K")]
    pub rounds: Option<u32>,
    /// Seed of the random inputs [default: fresh].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the traces, do not store them.
    #[arg(long)]
    pub no_save: bool,
    /// Seconds one version's trace may take.
    #[arg(long, default_value_t = crate::gpu::host::trace::DEFAULT_TIMEOUT_S)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Version ids, or `all` [default: all].
    pub versions: Vec<String>,
    /// The ladder whose recipe to build, where the kernels folder holds several.
    #[arg(long)]
    pub ladder: Option<String>,
    /// Target architecture.
    #[arg(long, default_value = "sm_90a")]
    pub arch: String,
    /// The shape whose compile-time definitions the kernels get, in the recipe's kind's
    /// dimensions [default: the recipe's reference shape].
    #[arg(long, value_name = "DIMS[:FLAG]")]
    pub shape: Option<ShapeText>,
    /// Build the trace builds instead (the pipeline marks of kernels/stallscope_trace.h
    /// on, as `trace` launches them): what the marks cost in registers and spills.
    #[arg(long)]
    pub trace: bool,
}

/// Where children run: several GPUs of this host, or a cluster launcher.
#[derive(Debug, Args)]
pub struct SlotArgs {
    /// Spread the children over these GPUs of this host, one at a time on each: `all`
    /// or a list such as 0,2,3 (each child gets CUDA_VISIBLE_DEVICES).
    #[arg(long, value_name = "LIST|all")]
    pub gpus: Option<String>,
    /// Start every child through this command prefix, e.g. 'srun --gres=gpu:1
    /// --ntasks=1', so that a cluster's own scheduler places it.
    #[arg(long, value_name = "PREFIX")]
    pub launcher: Option<String>,
    /// With --launcher and no --gpus: children at once [default: 1].
    #[arg(long, value_name = "N", requires = "launcher")]
    pub jobs: Option<usize>,
}

/// A FLOP count as `import --flops` takes it: a positive number, or an integer
/// expression of numbers in the launch expressions' grammar (`+ - * / %`, parentheses,
/// `cdiv`, `min`, `max`; checked arithmetic).
pub fn flop_count(s: &str) -> Result<f64, String> {
    use crate::recipe::launch_expr::{ExprError, eval_constant};
    let n = match s.trim().parse::<f64>() {
        Ok(n) => n,
        Err(_) => match eval_constant(s) {
            Ok(n) => n as f64,
            Err(ExprError::UnknownName { at, name, .. }) => {
                return Err(format!(
                    "{name:?} at column {at}: a FLOP count is a number or an expression of \
                     numbers (such as 2*4096*4096*4096)"
                ));
            }
            Err(e) => return Err(e.to_string()),
        },
    };
    if n.is_finite() && n > 0.0 {
        Ok(n)
    } else {
        Err(format!("{s} is no FLOP count: give a positive number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Cli {
        Cli::try_parse_from(args).expect("the arguments parse")
    }

    #[test]
    fn the_size_limits_default_to_the_reading_side_constants() {
        let c = parse(&["stallscope", "check"]).common;
        assert_eq!(
            (c.max_file_size, c.max_decompressed),
            (
                crate::files::limits::DEFAULT_MAX_FILE_SIZE,
                crate::files::limits::DEFAULT_MAX_DECOMPRESSED
            )
        );
    }
}
