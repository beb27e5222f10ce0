//! The kernel recipe (`kernels/<ladder>/recipe.toml`): the problem kind its kernels
//! solve, and per version its source, entry point and launch recipe (grid, block,
//! dynamic shared memory as expressions of the shape's dimensions; the TMA tensor maps
//! it takes; the workspace buffer it takes last, if any; the shapes it supports; other
//! kernels of its source that take the launch where a condition of the shape holds). Pure
//! data: nothing here touches CUDA, and nothing here knows how a recipe is run.

pub mod baselines;
pub mod folders;
pub mod launch_expr;

use crate::kinds::{Kind, Shape};
use crate::model::manifest::{Manifest, VersionEntry};
use crate::model::store::Store;
use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "recipe.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelRecipe {
    /// The problem kind (`attention`, `gemm`): its shape, arguments, inputs, check and
    /// baselines ([`crate::kinds`]).
    #[serde(deserialize_with = "kind")]
    pub kind: Kind,
    /// The profiles ladder (folder under profiles/) results are written to.
    pub ladder: String,
    pub title: String,
    /// Relative L2 error a version may have against the reference.
    pub tolerance: f64,
    /// Largest absolute error of one element a version may have.
    #[serde(default = "default_max_abs")]
    pub max_abs_tolerance: f64,
    /// The shape runs and profiles default to [default: the kind's].
    #[serde(default)]
    pub reference_shape: Option<String>,
    /// The reference kernel every version is checked against: the kind's argument
    /// list with an fp32 output.
    pub reference: KernelRef,
    /// Kernels the kind's built-in baselines use, by the name the baseline asks for
    /// (`[helpers.softmax]`).
    #[serde(default)]
    pub helpers: BTreeMap<String, KernelRef>,
    /// The script that runs the kind's script baselines (one `--backend` each), relative
    /// to the recipe.
    #[serde(default)]
    pub baseline_script: Option<String>,
    /// What every version supports unless it says otherwise: `dims = { D = [128] }`,
    /// `multiple_of = { K = 8 }` (merged into each version on load).
    #[serde(default)]
    pub dims: BTreeMap<String, Vec<u32>>,
    #[serde(default)]
    pub multiple_of: BTreeMap<String, u32>,
    /// The names of the roles and stages that versions with pipeline markers
    /// (`kernels/stallscope_trace.h`) number, unless a version names its own.
    #[serde(default)]
    pub trace_roles: Vec<String>,
    #[serde(default)]
    pub trace_stages: Vec<String>,
    #[serde(rename = "version")]
    pub versions: Vec<KernelVersion>,
    /// Where the manifest was read from (set on load).
    #[serde(skip)]
    pub dir: PathBuf,
    #[serde(skip)]
    pub store: Option<Store>,
}

fn kind<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Kind, D::Error> {
    let name = String::deserialize(de)?;
    Kind::named(&name).map_err(serde::de::Error::custom)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelRef {
    pub source: String,
    pub entry: String,
    #[serde(default = "default_grid")]
    pub grid: Vec<String>,
    #[serde(default = "default_block")]
    pub block: Vec<String>,
    #[serde(default = "zero")]
    pub shared: String,
}

fn default_max_abs() -> f64 {
    2e-2
}

fn default_grid() -> Vec<String> {
    vec!["1".into()]
}
fn default_block() -> Vec<String> {
    vec!["128".into()]
}
fn zero() -> String {
    "0".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelVersion {
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub technique: Option<String>,
    pub source: String,
    pub entry: String,
    #[serde(default)]
    pub notes: Option<String>,
    /// The version this one was built on, where it is not the previous one.
    #[serde(default)]
    pub parent: Option<String>,
    pub grid: Vec<String>,
    pub block: Vec<String>,
    /// Dynamic shared memory in bytes.
    #[serde(default = "zero")]
    pub shared: String,
    /// TMA tensor maps passed after the kind's arguments, in this order.
    #[serde(default)]
    pub tensor_maps: Vec<TensorMapSpec>,
    /// Bytes of a device buffer of the version's own (an expression, like `shared`),
    /// passed as the kernel's last argument, after the tensor maps. The worker allocates
    /// and zero-fills it once per prepared launch, and every launch of it reuses it: a
    /// kernel that keeps state there (a persistent schedule's counters) leaves it zeroed
    /// at its end; two launches that may run at once need a buffer each.
    #[serde(default)]
    pub workspace: Option<String>,
    /// The kind's flags the version implements [default: every one].
    #[serde(default)]
    pub flags: Option<Vec<String>>,
    /// Dimensions the version supports only some values of: `{ D = [128] }`.
    #[serde(default)]
    pub dims: BTreeMap<String, Vec<u32>>,
    /// Dimensions that must be a multiple of a number: `{ S = 64 }`.
    #[serde(default)]
    pub multiple_of: BTreeMap<String, u32>,
    /// Relative L2 error allowed, where it differs from the ladder's.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Largest absolute error allowed, where it differs from the ladder's.
    #[serde(default)]
    pub max_abs_tolerance: Option<f64>,
    /// Passed to NVRTC after the defaults.
    #[serde(default)]
    pub options: Vec<String>,
    /// Its source carries pipeline markers (`kernels/stallscope_trace.h`): `stallscope
    /// trace` can trace it.
    #[serde(default)]
    pub marked: bool,
    /// Other kernels of the same source, each taking the launch where its condition of
    /// the shape holds (`[[version.path]]`, the first that holds; none: `entry` and the
    /// launch above): a small-problem path, as a library chooses among engines.
    #[serde(default, rename = "path")]
    pub paths: Vec<KernelPath>,
    /// The roles its markers number (role 0 first, at most `model::trace::LANES_PER_BLOCK`) [default:
    /// the recipe's `trace_roles`].
    #[serde(default)]
    pub trace_roles: Vec<String>,
    /// The stages its markers number [default: the recipe's `trace_stages`].
    #[serde(default)]
    pub trace_stages: Vec<String>,
}

/// A kernel of a version's source that runs in its place where `when` holds.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelPath {
    /// A condition of the shape and the GPU (`cdiv(S, 128) * B * H < SMS`;
    /// [`launch_expr`]'s grammar, two expressions compared).
    pub when: String,
    /// What the path is, in a few words, for the recipe's reader.
    pub title: String,
    pub entry: String,
    pub grid: Vec<String>,
    pub block: Vec<String>,
    #[serde(default = "zero")]
    pub shared: String,
    /// Its tensor maps [default: the version's].
    #[serde(default)]
    pub tensor_maps: Option<Vec<TensorMapSpec>>,
}

/// The kernel a version runs at one shape: its own, or the path whose condition holds
/// there.
#[derive(Debug, Clone, Copy)]
pub struct Engine<'a> {
    pub entry: &'a str,
    pub grid: &'a [String],
    pub block: &'a [String],
    pub shared: &'a str,
    pub tensor_maps: &'a [TensorMapSpec],
    /// The path taken, none for the version's own kernel.
    pub path: Option<&'a KernelPath>,
}

/// A 2-D tensor map over one of the kind's tensors, seen as its `[rows, cols]` matrix
/// ([`crate::kinds::Tensor`]).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TensorMapSpec {
    /// The tensor's name in the kind's argument list (Q, K, V, O; A, Bt, C).
    pub tensor: String,
    /// Box: rows × columns.
    pub box_rows: u32,
    pub box_cols: u32,
    /// 0 (none), 32, 64 or 128 bytes.
    #[serde(default)]
    pub swizzle: u32,
}

/// A launch configuration evaluated for one shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
}

impl KernelRecipe {
    /// Reads `dir/recipe.toml` from disk or from the built-in copy.
    pub fn load(store: &Store, dir: &Path) -> Result<KernelRecipe> {
        let path = dir.join(FILE_NAME);
        let text = store.read_text(&path)?;
        let mut l = KernelRecipe::parse(&text, &store.describe(&path))?;
        l.dir = dir.to_path_buf();
        l.store = Some(store.clone());
        Ok(l)
    }

    /// Reads and validates a manifest's text; `name` says where it came from in errors.
    pub fn parse(text: &str, name: &str) -> Result<KernelRecipe> {
        let mut l: KernelRecipe =
            toml::from_str(text).map_err(|e| crate::model::manifest::toml_error(name, text, &e))?;
        for v in &mut l.versions {
            for (d, values) in &l.dims {
                v.dims.entry(d.clone()).or_insert_with(|| values.clone());
            }
            for (d, m) in &l.multiple_of {
                v.multiple_of.entry(d.clone()).or_insert(*m);
            }
            if v.marked && v.trace_roles.is_empty() {
                v.trace_roles = l.trace_roles.clone();
            }
            if v.marked && v.trace_stages.is_empty() {
                v.trace_stages = l.trace_stages.clone();
            }
        }
        l.validate().with_context(|| format!("in {name}"))?;
        Ok(l)
    }

    fn validate(&self) -> Result<()> {
        // It names the folder under profiles/ results are saved in.
        crate::files::names::check_folder_name("ladder", &self.ladder)?;
        let kind = self.kind;
        let shape = match &self.reference_shape {
            Some(s) => Shape::parse(kind, s).map_err(|e| anyhow!("reference_shape: {e}"))?,
            None => kind.reference(),
        };
        self.reference.launch(&shape).context("reference")?;
        for (name, h) in &self.helpers {
            h.launch(&shape)
                .with_context(|| format!("helpers.{name}"))?;
        }
        let tensors: Vec<&str> = kind.tensors(&shape).iter().map(|t| t.name).collect();
        let dims: Vec<&str> = kind.dims().iter().map(|d| d.name).collect();
        let mut ids: Vec<&str> = Vec::new();
        for v in &self.versions {
            if ids.contains(&v.id.as_str()) {
                bail!("version {} is listed twice", v.id);
            }
            if let Some(p) = v.parent.as_deref().filter(|p| !ids.contains(p)) {
                bail!(
                    "version {}: parent {p:?} is not a version listed before it",
                    v.id
                );
            }
            ids.push(&v.id);
            for f in v.flags.iter().flatten() {
                shape
                    .with_flag(f, true)
                    .map_err(|e| anyhow!("version {}: flags: {e}", v.id))?;
            }
            let named = (v.dims.keys().map(|d| (d, "dims")))
                .chain(v.multiple_of.keys().map(|d| (d, "multiple_of")));
            for (d, n) in named {
                if !dims.contains(&d.as_str()) {
                    bail!(
                        "version {}: {n} names {d:?}, not a dimension of {kind} ({})",
                        v.id,
                        dims.join(", ")
                    );
                }
            }
            if v.multiple_of.values().any(|&m| m == 0) {
                bail!("version {}: multiple_of 0", v.id);
            }
            // A condition chooses the kernel, so it cannot ask what only a compiled one
            // answers.
            if let Some(p) = v.paths.iter().find(|p| names_clusters(&p.when)) {
                bail!(
                    "version {}: path {:?}: when names CLUSTERS, which only the compiled \
                     kernel answers (the path chooses the kernel)",
                    v.id,
                    p.entry
                );
            }
            if let Some(p) = v.paths.iter().find(|p| p.entry == v.entry) {
                bail!(
                    "version {}: a path's entry {:?} is the version's own",
                    v.id,
                    p.entry
                );
            }
            if v.unsupported(&shape.unflagged()).is_none() {
                // Its own launch, and every path's condition and launch, whichever holds
                // at this shape.
                v.own_engine()
                    .launch_on(&shape, GpuVars::DEFAULT)
                    .with_context(|| format!("version {}", v.id))?;
                v.workspace_on(&shape, GpuVars::DEFAULT)?;
                for p in &v.paths {
                    condition_on(&p.when, &shape, GpuVars::DEFAULT)
                        .with_context(|| format!("version {}: path {:?}: when", v.id, p.entry))?;
                    v.path_engine(p)
                        .launch_on(&shape, GpuVars::DEFAULT)
                        .with_context(|| format!("version {}: path {:?}", v.id, p.entry))?;
                }
            }
            if v.trace_roles.len() > crate::model::trace::LANES_PER_BLOCK {
                bail!(
                    "version {}: {} trace roles (at most {})",
                    v.id,
                    v.trace_roles.len(),
                    crate::model::trace::LANES_PER_BLOCK
                );
            }
            if v.marked && (v.trace_roles.is_empty() || v.trace_stages.is_empty()) {
                bail!(
                    "version {}: marked, but no trace_roles or trace_stages name its marks (give them in the version or the recipe)",
                    v.id
                );
            }
            if !v.marked && (!v.trace_roles.is_empty() || !v.trace_stages.is_empty()) {
                bail!(
                    "version {}: trace_roles and trace_stages are for a marked version (marked = true)",
                    v.id
                );
            }
            let path_maps = v.paths.iter().flat_map(|p| p.tensor_maps.iter().flatten());
            for m in v.tensor_maps.iter().chain(path_maps) {
                if !tensors.contains(&m.tensor.as_str()) {
                    bail!(
                        "version {}: tensor map of {:?} ({kind} has {})",
                        v.id,
                        m.tensor,
                        tensors.join(", ")
                    );
                }
                if ![0, 32, 64, 128].contains(&m.swizzle) {
                    bail!("version {}: swizzle {} (0, 32, 64 or 128)", v.id, m.swizzle);
                }
            }
        }
        Ok(())
    }

    /// The shape runs and profiles default to.
    pub fn reference_shape(&self) -> Shape {
        match &self.reference_shape {
            Some(s) => Shape::parse(self.kind, s).expect("validated on load"),
            None => self.kind.reference(),
        }
    }

    /// The shape `text` names in this recipe's kind, with `flags` set besides its own;
    /// none: the reference shape with `flags`.
    pub fn shape(&self, text: Option<&crate::kinds::ShapeText>, flags: &[String]) -> Result<Shape> {
        let mut shape = match text {
            Some(t) => t.resolve(self.kind).map_err(|e| anyhow!("--shape: {e}"))?,
            None => self.reference_shape(),
        };
        for f in flags {
            shape = shape
                .with_flag(f, true)
                .map_err(|e| anyhow!("--flag: {e}"))?;
        }
        Ok(shape)
    }

    pub fn version(&self, id: &str) -> Option<&KernelVersion> {
        self.versions.iter().find(|v| v.id == id)
    }

    /// The path of a file named in the manifest.
    pub fn path_of(&self, rel: &str) -> PathBuf {
        crate::files::paths::normalize(&self.dir.join(rel))
    }

    /// Reads a file the recipe names: relative, and inside the kernels folder that
    /// holds the recipe's folder (its sources may be shared with a sibling recipe).
    pub fn read(&self, rel: &str) -> Result<String> {
        let kernels = self.dir.parent().unwrap_or(Path::new("")).to_path_buf();
        // A recipe parsed from its text alone (not loaded from a folder: the fuzz target,
        // tests) has no store: its files are on disk, read within the default limits.
        let parsed_alone = Store::disk(crate::files::limits::SizeLimits::DEFAULT);
        let store = self.store.as_ref().unwrap_or(&parsed_alone);
        let (_, text) = store
            .read_confined_text(&self.dir, rel, &[kernels])
            .with_context(|| format!("in {}", store.describe(&self.dir.join(FILE_NAME))))?;
        Ok(text)
    }

    /// The profiles manifest a new ladder fed by this recipe starts from.
    pub fn manifest_defaults(&self) -> Manifest {
        let shape = self.reference_shape();
        Manifest {
            title: self.title.clone(),
            kind: Some(self.kind.name().to_string()),
            flops: Some(shape.flops()),
            reference_shape: Some(shape.to_string()),
            ..Manifest::default()
        }
    }

    /// Manifest entries for the ids of a run or a profile, in the recipe's order then the
    /// baselines': versions with their title, technique, notes and source (relative to
    /// `ladder_dir`), other ids as baselines.
    pub fn manifest_entries(&self, ids: &[&str], ladder_dir: &Path) -> Vec<VersionEntry> {
        let rel = |f: &str| {
            crate::files::paths::relative_path(&self.dir.join(f), ladder_dir)
                .to_string_lossy()
                .into_owned()
        };
        let mut entries: Vec<VersionEntry> = self
            .versions
            .iter()
            .filter(|v| ids.contains(&v.id.as_str()))
            .map(|v| VersionEntry {
                id: v.id.clone(),
                title: v.title.clone(),
                technique: v.technique.clone(),
                notes: v.notes.as_deref().map(rel),
                source: Some(rel(&v.source)),
                parent: v.parent.clone(),
                ..VersionEntry::default()
            })
            .collect();
        for id in ids.iter().filter(|id| self.version(id).is_none()) {
            let title = self.kind.baseline(id).map_or(*id, |b| b.title);
            entries.push(VersionEntry {
                id: id.to_string(),
                title: title.to_string(),
                baseline: true,
                ..VersionEntry::default()
            });
        }
        entries
    }

    /// The order a profiles manifest lists this recipe's versions in.
    pub fn manifest_order(&self) -> Vec<&str> {
        self.versions.iter().map(|v| v.id.as_str()).collect()
    }

    /// Picks versions by id (`all` or nothing means every one).
    pub fn select(&self, ids: &[String]) -> Result<Vec<&KernelVersion>> {
        if ids.is_empty() || ids.iter().any(|i| i == "all") {
            return Ok(self.versions.iter().collect());
        }
        ids.iter()
            .map(|id| {
                self.version(id).ok_or_else(|| {
                    anyhow!(
                        "no version {id:?} in {}; it has {}",
                        self.dir.display(),
                        self.versions
                            .iter()
                            .map(|v| v.id.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                })
            })
            .collect()
    }
}

/// SM count assumed where no device is at hand (an H100/H200 SXM).
pub const DEFAULT_SMS: u32 = 132;

/// What a launch expression may ask of the GPU it runs on, beside the shape:
/// `SMS`, the multiprocessor count, and `CLUSTERS`, the most clusters of the kernel's
/// compiled cluster shape (`__cluster_dims__`) that the GPU holds at once with its block
/// and shared memory (`cuOccupancyMaxActiveClusters`). Fewer than SMS / cluster size
/// can fit, since a cluster's blocks must share one GPC: a persistent cluster kernel
/// sized by SMS alone would leave its last clusters waiting for a second wave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuVars {
    pub sms: u32,
    pub clusters: u32,
}

impl GpuVars {
    /// Where no device is at hand: [`DEFAULT_SMS`], and as many clusters as there are
    /// pairs of them (the most an H200 could hold of clusters of two).
    pub const DEFAULT: GpuVars = GpuVars {
        sms: DEFAULT_SMS,
        clusters: DEFAULT_SMS / 2,
    };

    /// [`GpuVars::DEFAULT`] on a GPU of `sms` multiprocessors.
    pub fn with_sms(sms: u32) -> GpuVars {
        GpuVars {
            sms,
            clusters: sms / 2,
        }
    }
}

/// The largest grid a launch may have, per axis (x, y, z).
pub const MAX_GRID: [i64; 3] = [i32::MAX as i64, 65_535, 65_535];
/// The largest block a launch may have, per axis, and in threads all together.
pub const MAX_BLOCK: [i64; 3] = [1024, 1024, 64];
pub const MAX_BLOCK_THREADS: i64 = 1024;
/// The most dynamic shared memory one block can opt in to on Hopper (227 KiB).
pub const MAX_SHARED_BYTES: i64 = 232_448;
/// The largest workspace a version may ask for (1 GiB): counters and flags, not tensors.
pub const MAX_WORKSPACE_BYTES: i64 = 1 << 30;

impl KernelVersion {
    /// Why `stallscope trace` cannot trace it, if it cannot.
    pub fn untraceable(&self) -> Option<String> {
        (!self.marked).then(|| {
            format!(
                "version {} has no pipeline markers (marked = true in the recipe, with its \
                 source marking its stages through stallscope_trace.h)",
                self.id
            )
        })
    }

    /// Whether the launch of `engine` (its own kernel or a path's) or its workspace
    /// names `CLUSTERS`, which only that compiled kernel on a device answers.
    pub fn asks_clusters(&self, engine: &Engine) -> bool {
        engine.asks_clusters() || self.workspace.as_deref().is_some_and(names_clusters)
    }

    /// Its own kernel and launch, whatever the paths.
    fn own_engine(&self) -> Engine<'_> {
        Engine {
            entry: &self.entry,
            grid: &self.grid,
            block: &self.block,
            shared: &self.shared,
            tensor_maps: &self.tensor_maps,
            path: None,
        }
    }

    /// The kernel it runs at a shape on a GPU described by `gpu`: the first path whose
    /// condition holds there, else its own.
    pub fn engine_on(&self, shape: &Shape, gpu: GpuVars) -> Result<Engine<'_>> {
        for p in &self.paths {
            let holds = condition_on(&p.when, shape, gpu)
                .with_context(|| format!("version {}: path {:?}: when", self.id, p.entry))?;
            if holds {
                return Ok(self.path_engine(p));
            }
        }
        Ok(self.own_engine())
    }

    /// The kernel and launch of one of its paths.
    fn path_engine<'a>(&'a self, p: &'a KernelPath) -> Engine<'a> {
        Engine {
            entry: &p.entry,
            grid: &p.grid,
            block: &p.block,
            shared: &p.shared,
            tensor_maps: p.tensor_maps.as_deref().unwrap_or(&self.tensor_maps),
            path: Some(p),
        }
    }

    /// Every kernel it may run: its own entry, then its paths'.
    pub fn entries(&self) -> Vec<&str> {
        std::iter::once(self.entry.as_str())
            .chain(self.paths.iter().map(|p| p.entry.as_str()))
            .collect()
    }

    /// The launch at a shape where no device is at hand ([`GpuVars::DEFAULT`]).
    pub fn launch(&self, shape: &Shape) -> Result<Launch> {
        self.launch_on(shape, GpuVars::DEFAULT)
    }

    /// The launch at a shape on a GPU described by `gpu` (persistent kernels size their
    /// grid with `SMS` or `CLUSTERS`), of the kernel it runs there.
    pub fn launch_on(&self, shape: &Shape, gpu: GpuVars) -> Result<Launch> {
        let e = self.engine_on(shape, gpu)?;
        e.launch_on(shape, gpu).with_context(|| match e.path {
            Some(p) => format!("version {}: path {:?}", self.id, p.entry),
            None => format!("version {}", self.id),
        })
    }

    /// The bytes of its workspace at a shape on a GPU described by `gpu`: none where the
    /// recipe gives no `workspace`, else 1 to [`MAX_WORKSPACE_BYTES`].
    pub fn workspace_on(&self, shape: &Shape, gpu: GpuVars) -> Result<Option<u64>> {
        let Some(expr) = &self.workspace else {
            return Ok(None);
        };
        let bytes = eval_on(expr, shape, gpu)
            .context("workspace")
            .with_context(|| format!("version {}", self.id))?;
        if !(1..=MAX_WORKSPACE_BYTES).contains(&bytes) {
            bail!(
                "version {}: workspace is {bytes} bytes ({expr:?} at shape {shape}); it must \
                 be 1 to {MAX_WORKSPACE_BYTES} (leave the field out for none)",
                self.id
            );
        }
        Ok(Some(bytes as u64))
    }

    /// The relative and absolute error this version may have.
    pub fn tolerances(&self, recipe: &KernelRecipe) -> (f64, f64) {
        (
            self.tolerance.unwrap_or(recipe.tolerance),
            self.max_abs_tolerance.unwrap_or(recipe.max_abs_tolerance),
        )
    }

    /// Why this version cannot run a shape, if it cannot.
    pub fn unsupported(&self, shape: &Shape) -> Option<String> {
        for (name, values) in &self.dims {
            let v = shape.dim(name)?;
            if !values.contains(&v) {
                let only: Vec<String> = values.iter().map(u32::to_string).collect();
                return Some(format!(
                    "{name} = {v} not supported (only {})",
                    only.join(", ")
                ));
            }
        }
        for (name, &m) in &self.multiple_of {
            if !shape.dim(name)?.is_multiple_of(m) {
                return Some(format!("{name} must be a multiple of {m}"));
            }
        }
        if let Some(flags) = &self.flags
            && let Some(f) = shape
                .flags_set()
                .into_iter()
                .find(|f| !flags.iter().any(|g| g == f))
        {
            return Some(format!("no :{f} variant"));
        }
        None
    }
}

impl Engine<'_> {
    /// Whether its grid, block or shared memory names `CLUSTERS`.
    pub fn asks_clusters(&self) -> bool {
        std::iter::once(self.shared)
            .chain(self.grid.iter().map(String::as_str))
            .chain(self.block.iter().map(String::as_str))
            .any(names_clusters)
    }

    /// Its launch at a shape on a GPU described by `gpu`.
    pub fn launch_on(&self, shape: &Shape, gpu: GpuVars) -> Result<Launch> {
        launch_of(self.grid, self.block, self.shared, shape, gpu)
    }
}

impl KernelRef {
    pub fn launch(&self, shape: &Shape) -> Result<Launch> {
        launch_of(
            &self.grid,
            &self.block,
            &self.shared,
            shape,
            GpuVars::DEFAULT,
        )
        .with_context(|| format!("kernel {}", self.entry))
    }
}

/// Whether an expression names `CLUSTERS`.
fn names_clusters(expr: &str) -> bool {
    expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|name| name == "CLUSTERS")
}

/// Evaluates a launch and checks every value against what the driver accepts, before
/// any of them becomes a u32.
fn launch_of(
    grid: &[String],
    block: &[String],
    shared: &str,
    shape: &Shape,
    gpu: GpuVars,
) -> Result<Launch> {
    let bytes = eval_on(shared, shape, gpu).context("shared")?;
    if !(0..=MAX_SHARED_BYTES).contains(&bytes) {
        bail!(
            "shared is {bytes} bytes ({shared:?} at shape {shape}); it must be 0 to \
             {MAX_SHARED_BYTES} (227 KiB, the most a block can have on Hopper)"
        );
    }
    Ok(Launch {
        grid: dims_on(Dims::Grid, grid, shape, gpu)?,
        block: dims_on(Dims::Block, block, shape, gpu)?,
        shared_bytes: bytes as u32,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dims {
    Grid,
    Block,
}

impl Dims {
    fn name(self) -> &'static str {
        match self {
            Dims::Grid => "grid",
            Dims::Block => "block",
        }
    }

    fn max(self) -> [i64; 3] {
        match self {
            Dims::Grid => MAX_GRID,
            Dims::Block => MAX_BLOCK,
        }
    }
}

fn dims_on(kind: Dims, exprs: &[String], shape: &Shape, gpu: GpuVars) -> Result<(u32, u32, u32)> {
    let name = kind.name();
    if exprs.is_empty() || exprs.len() > 3 {
        bail!("{name} needs 1 to 3 dimensions, has {}", exprs.len());
    }
    let mut d = [1u32; 3];
    for (i, e) in exprs.iter().enumerate() {
        let axis = ["x", "y", "z"][i];
        let v = eval_on(e, shape, gpu).with_context(|| format!("{name} {axis}"))?;
        let max = kind.max()[i];
        if !(1..=max).contains(&v) {
            bail!("{name} {axis} is {v} ({e:?} at shape {shape}); it must be 1 to {max}");
        }
        d[i] = v as u32;
    }
    let threads: i64 = d.iter().map(|&x| i64::from(x)).product();
    if kind == Dims::Block && threads > MAX_BLOCK_THREADS {
        bail!(
            "block is {}×{}×{} = {threads} threads at shape {shape}; a block has at most \
             {MAX_BLOCK_THREADS}",
            d[0],
            d[1],
            d[2]
        );
    }
    Ok((d[0], d[1], d[2]))
}

/// Evaluates an integer expression of the shape's dimensions (and SMS and CLUSTERS,
/// [`GpuVars`]) with `cdiv(a, b)`, `min(a, b)`, `max(a, b)`.
pub fn eval(expr: &str, shape: &Shape) -> Result<i64> {
    eval_on(expr, shape, GpuVars::DEFAULT)
}

pub fn eval_on(expr: &str, shape: &Shape, gpu: GpuVars) -> Result<i64> {
    with_names(expr, shape, gpu, launch_expr::eval)
}

/// Whether a condition (two expressions compared, a path's `when`) holds at a shape on a
/// GPU described by `gpu`.
pub fn condition_on(cond: &str, shape: &Shape, gpu: GpuVars) -> Result<bool> {
    with_names(cond, shape, gpu, launch_expr::eval_condition)
}

/// `eval` of `text` with the shape's names, SMS and CLUSTERS bound.
fn with_names<T>(
    text: &str,
    shape: &Shape,
    gpu: GpuVars,
    eval: impl Fn(&str, &launch_expr::Vars) -> Result<T, launch_expr::ExprError>,
) -> Result<T> {
    let mut names = shape.vars();
    names.push(("SMS", gpu.sms.into()));
    names.push(("CLUSTERS", gpu.clusters.into()));
    // A long expression is quoted by its start: the error stays one readable line.
    eval(text, &launch_expr::Vars(&names)).map_err(|e| {
        let quoted: String = text.chars().take(80).collect();
        let more = if quoted.len() < text.len() { "…" } else { "" };
        anyhow!("expression {quoted:?}{more}: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An attention shape, as `--shape` spells it.
    fn att(s: &str) -> Shape {
        Shape::parse(Kind::named("attention").unwrap(), s).unwrap()
    }

    fn reference() -> Shape {
        att("1,64,1024,128")
    }

    /// A version with the given launch fields, as a recipe would spell them.
    fn version(grid: &[&str], block: &[&str], shared: &str) -> KernelVersion {
        let list = |xs: &[&str]| {
            xs.iter()
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        toml::from_str(&format!(
            "id = \"v07\"\ntitle = \"t\"\nsource = \"k.cu\"\nentry = \"k\"\n\
             grid = [{}]\nblock = [{}]\nshared = {shared:?}\n",
            list(grid),
            list(block)
        ))
        .expect("a well-formed version")
    }

    fn launch_error(grid: &[&str], block: &[&str], shared: &str) -> String {
        let e = version(grid, block, shared)
            .launch(&reference())
            .expect_err("an invalid launch");
        format!("{e:#}")
    }

    fn flash_attention() -> KernelRecipe {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/flash-attention");
        KernelRecipe::load(
            &Store::disk(crate::files::limits::SizeLimits::DEFAULT),
            &dir,
        )
        .expect("the bundled recipe loads")
    }

    /// Every launch expression of kernels/flash-attention/recipe.toml (and the FLOP
    /// count's) with its value at the reference shape (B=1 H=64 S=1024 D=128, 132 SMs), worked out by hand.
    const FLASH_ATTENTION: &[(&str, i64)] = &[
        ("4*B*H*S*S*D", 34_359_738_368),
        ("cdiv(S, 16)", 64),
        ("cdiv(S, 64)", 16),
        ("cdiv(S, 128)", 8),
        ("B*H", 64),
        ("min(SMS, cdiv(S, 128) * B * H)", 132),
        ("1", 1),
        ("0", 0),
        ("8", 8),
        ("128", 128),
        ("256", 256),
        ("384", 384),
        ("(128*64 + 128*32 + 32*128 + 64*33 + 3*64) * 4", 74_752),
        ("3 * 64 * 128 * 2", 49_152),
        ("(128 + 4 * 64) * 128 * 2", 98_304),
        ("(64 * 128 + 4 * 64 * 128 + 64 * 64) * 2 + 1024", 91_136),
        (
            "(64 * 128 + 4 * 64 * 128 + 64 * 64) * 2 + 64 + 1024",
            91_200,
        ),
        ("(64 * 128 + 4 * 64 * 128) * 2 + 64 + 1024", 83_008),
        ("(128 * 128 + 4 * 64 * 128) * 2 + 128 + 1024", 99_456),
        ("(128 * 128 + 4 * 128 * 128) * 2 + 256 + 1024", 165_120),
        ("(2 * 128 * 128 + 4 * 128 * 128) * 2 + 256 + 1024", 197_888),
    ];

    #[test]
    fn the_flash_attention_expressions_take_their_values() {
        let s = reference();
        let got: Vec<(&str, i64)> = FLASH_ATTENTION
            .iter()
            .map(|&(e, _)| (e, eval(e, &s).unwrap_or(-1)))
            .collect();
        assert_eq!(got, FLASH_ATTENTION);
    }

    #[test]
    fn the_table_holds_every_expression_of_the_flash_attention_recipe() {
        let l = flash_attention();
        let refs = std::iter::once(&l.reference).chain(l.helpers.values());
        let mut exprs: Vec<&str> = vec!["4*B*H*S*S*D"];
        for r in refs {
            exprs.extend(r.grid.iter().chain(&r.block).map(String::as_str));
            exprs.push(&r.shared);
        }
        for v in &l.versions {
            exprs.extend(v.grid.iter().chain(&v.block).map(String::as_str));
            exprs.push(&v.shared);
            exprs.extend(v.workspace.as_deref());
            for p in &v.paths {
                exprs.extend(p.grid.iter().chain(&p.block).map(String::as_str));
                exprs.push(&p.shared);
            }
        }
        let missing: Vec<&str> = exprs
            .into_iter()
            .filter(|e| !FLASH_ATTENTION.iter().any(|(t, _)| t == e))
            .collect();
        assert_eq!(missing, Vec::<&str>::new());
    }

    #[test]
    fn every_flash_attention_version_launches_at_the_long_shape() {
        let l = flash_attention();
        let long = att("2,16,8192,128");
        let failed: Vec<String> = l
            .versions
            .iter()
            .filter_map(|v| {
                v.launch_on(&long, GpuVars::DEFAULT)
                    .err()
                    .map(|e| format!("{e:#}"))
            })
            .collect();
        assert_eq!(failed, Vec::<String>::new());
    }

    #[test]
    fn the_persistent_grid_is_capped_by_the_multiprocessors() {
        let v = version(&["min(SMS, cdiv(S, 128) * B * H)"], &["384"], "0");
        assert_eq!(
            v.launch_on(&reference(), GpuVars::with_sms(78))
                .unwrap()
                .grid,
            (78, 1, 1)
        );
    }

    #[test]
    fn a_cluster_grid_is_sized_by_the_clusters_the_gpu_holds() {
        let v = version(&["2 * min(CLUSTERS, cdiv(S, 128) * B * H)"], &["384"], "0");
        let gpu = GpuVars {
            sms: 132,
            clusters: 62,
        };
        assert_eq!(v.launch_on(&reference(), gpu).unwrap().grid, (124, 1, 1));
        assert_eq!(v.launch(&reference()).unwrap().grid, (132, 1, 1));
    }

    #[test]
    fn a_launch_of_two_axes_fills_the_third_with_one() {
        let v = version(&["cdiv(S, 64)", "B*H"], &["128"], "3 * 64 * 128 * 2");
        assert_eq!(
            v.launch(&reference()).unwrap(),
            Launch {
                grid: (16, 64, 1),
                block: (128, 1, 1),
                shared_bytes: 49_152
            }
        );
    }

    #[test]
    fn a_zero_grid_names_the_version_the_field_and_the_value() {
        assert_eq!(
            launch_error(&["S - 1024"], &["128"], "0"),
            "version v07: grid x is 0 (\"S - 1024\" at shape 1,64,1024,128); it must be 1 \
             to 2147483647"
        );
    }

    #[test]
    fn a_grid_x_past_two_to_the_31_is_refused() {
        assert!(launch_error(&["2147483648"], &["128"], "0").contains("grid x is 2147483648"));
    }

    #[test]
    fn a_grid_x_at_the_limit_is_accepted() {
        let v = version(&["2147483647"], &["128"], "0");
        assert_eq!(v.launch(&reference()).unwrap().grid.0, 2_147_483_647);
    }

    #[test]
    fn a_grid_y_past_65535_is_refused() {
        assert!(launch_error(&["1", "H * 1024 + 1"], &["128"], "0").contains("grid y is 65537"));
    }

    #[test]
    fn a_grid_z_past_65535_is_refused() {
        assert!(launch_error(&["1", "1", "65536"], &["128"], "0").contains("grid z is 65536"));
    }

    #[test]
    fn a_negative_block_is_refused() {
        assert!(launch_error(&["1"], &["-128"], "0").contains("block x is -128"));
    }

    #[test]
    fn a_block_x_past_1024_is_refused() {
        assert!(launch_error(&["1"], &["1025"], "0").contains("block x is 1025"));
    }

    #[test]
    fn a_block_z_past_64_is_refused() {
        assert!(launch_error(&["1"], &["1", "1", "65"], "0").contains("block z is 65"));
    }

    #[test]
    fn a_block_of_more_than_1024_threads_is_refused() {
        assert!(
            launch_error(&["1"], &["64", "32"], "0").contains("block is 64×32×1 = 2048 threads")
        );
    }

    #[test]
    fn a_grid_of_no_axes_is_refused() {
        assert!(launch_error(&[], &["128"], "0").contains("grid needs 1 to 3 dimensions, has 0"));
    }

    #[test]
    fn a_block_of_four_axes_is_refused() {
        assert!(
            launch_error(&["1"], &["1", "1", "1", "1"], "0")
                .contains("block needs 1 to 3 dimensions, has 4")
        );
    }

    #[test]
    fn negative_shared_memory_is_refused() {
        assert!(launch_error(&["1"], &["128"], "-1").contains("shared is -1 bytes"));
    }

    #[test]
    fn shared_memory_past_32_bits_is_refused() {
        assert!(
            launch_error(&["1"], &["128"], "4294967296").contains("shared is 4294967296 bytes")
        );
    }

    #[test]
    fn shared_memory_past_the_hopper_limit_is_refused() {
        assert!(launch_error(&["1"], &["128"], "232449").contains("it must be 0 to 232448"));
    }

    #[test]
    fn shared_memory_at_the_hopper_limit_is_accepted() {
        let v = version(&["1"], &["128"], "227 * 1024");
        assert_eq!(v.launch(&reference()).unwrap().shared_bytes, 232_448);
    }

    #[test]
    fn an_expression_error_names_the_version_and_the_field() {
        assert_eq!(
            launch_error(&["cdiv(S, 0)"], &["128"], "0"),
            "version v07: grid x: expression \"cdiv(S, 0)\": division by zero at column 1"
        );
    }

    #[test]
    fn a_cdiv_of_large_operands_is_range_checked_not_wrapped() {
        assert!(
            launch_error(&["cdiv(9223372036854775807, 2)"], &["128"], "0")
                .contains("grid x is 4611686018427387904")
        );
    }

    #[test]
    fn an_overflowing_product_is_an_error_not_a_wrapped_value() {
        assert!(launch_error(&["1"], &["128"], "9223372036854775807 * S").contains("overflows"));
    }

    #[test]
    fn a_reference_kernel_error_names_its_entry() {
        let r = KernelRef {
            source: "r.cu".into(),
            entry: "attn_reference".into(),
            grid: vec!["0".into()],
            block: default_block(),
            shared: zero(),
        };
        let e = format!("{:#}", r.launch(&reference()).unwrap_err());
        assert!(e.starts_with("kernel attn_reference: grid x is 0"), "{e}");
    }

    /// A version with `workspace` (a TOML value, as written after `workspace = `).
    fn with_workspace(value: &str) -> KernelVersion {
        toml::from_str(&format!(
            "id = \"v30\"\ntitle = \"t\"\nsource = \"k.cu\"\nentry = \"k\"\n\
             grid = [\"1\"]\nblock = [\"128\"]\nworkspace = {value}\n"
        ))
        .expect("a well-formed version")
    }

    #[test]
    fn a_workspace_is_an_expression_of_the_shape_in_bytes() {
        let v = with_workspace("\"8\"");
        assert_eq!(v.workspace.as_deref(), Some("8"));
        assert_eq!(
            v.workspace_on(&reference(), GpuVars::DEFAULT).unwrap(),
            Some(8)
        );
        let per_block = with_workspace("\"4 * min(SMS, cdiv(S, 128) * B * H)\"");
        assert_eq!(
            per_block
                .workspace_on(&reference(), GpuVars::with_sms(78))
                .unwrap(),
            Some(4 * 78)
        );
        let own = |v: &KernelVersion| v.asks_clusters(&v.own_engine());
        assert!(!own(&per_block));
        assert!(own(&with_workspace("\"CLUSTERS\"")));
        // None where the field is left out.
        assert_eq!(
            version(&["1"], &["128"], "0")
                .workspace_on(&reference(), GpuVars::DEFAULT)
                .unwrap(),
            None
        );
    }

    #[test]
    fn a_workspace_of_no_bytes_or_too_many_or_not_text_is_refused() {
        let error = |value: &str| {
            format!(
                "{:#}",
                with_workspace(value)
                    .workspace_on(&reference(), GpuVars::DEFAULT)
                    .unwrap_err()
            )
        };
        assert_eq!(
            error("\"S - 1024\""),
            "version v30: workspace is 0 bytes (\"S - 1024\" at shape 1,64,1024,128); it must \
             be 1 to 1073741824 (leave the field out for none)"
        );
        assert!(error("\"2 * 1073741824\"").contains("workspace is 2147483648 bytes"));
        assert_eq!(
            error("\"cdiv(S, 0)\""),
            "version v30: workspace: expression \"cdiv(S, 0)\": division by zero at column 1"
        );
        // A number, not an expression's text: TOML refuses it as the field's type.
        let typed = toml::from_str::<KernelVersion>(
            "id = \"v30\"\ntitle = \"t\"\nsource = \"k.cu\"\nentry = \"k\"\n\
             grid = [\"1\"]\nblock = [\"128\"]\nworkspace = 8\n",
        );
        assert!(typed.is_err());
    }

    #[test]
    fn a_recipe_whose_workspace_is_refused_at_its_reference_shape_does_not_load() {
        let text = "kind = \"attention\"\nladder = \"l\"\ntitle = \"t\"\ntolerance = 2e-3\n\
                    [reference]\nsource = \"r.cu\"\nentry = \"r\"\n\
                    [[version]]\nid = \"v01\"\ntitle = \"t\"\nsource = \"k.cu\"\nentry = \"k\"\n\
                    grid = [\"1\"]\nblock = [\"128\"]\nworkspace = \"0\"\n";
        let e = format!(
            "{:#}",
            KernelRecipe::parse(text, "recipe.toml").unwrap_err()
        );
        assert!(e.contains("version v01: workspace is 0 bytes"), "{e}");
    }

    /// A recipe of one version with a small-problem path, `path` its fields after `when`.
    fn with_path(when: &str, path: &str) -> Result<KernelRecipe> {
        KernelRecipe::parse(&with_path_text(when, path), "recipe.toml")
    }

    fn with_path_text(when: &str, path: &str) -> String {
        format!(
            "kind = \"attention\"\nladder = \"l\"\ntitle = \"t\"\ntolerance = 2e-3\n\
             [reference]\nsource = \"r.cu\"\nentry = \"r\"\n\
             [[version]]\nid = \"v31\"\ntitle = \"t\"\nsource = \"k.cu\"\nentry = \"big\"\n\
             grid = [\"min(SMS, cdiv(S, 128) * B * H)\"]\nblock = [\"384\"]\nshared = \"1024\"\n\
             tensor_maps = [{{ tensor = \"Q\", box_rows = 64, box_cols = 64, swizzle = 128 }}]\n\
             [[version.path]]\nwhen = {when:?}\ntitle = \"small\"\n{path}\n"
        )
    }

    const SMALL: &str = "entry = \"small\"\ngrid = [\"cdiv(S, 64)\", \"B*H\"]\nblock = [\"128\"]\n\
                         shared = \"2048\"";

    #[test]
    fn a_path_takes_the_launch_where_its_condition_holds() {
        let l = with_path("cdiv(S, 128) * B * H < SMS", SMALL).unwrap();
        let v = &l.versions[0];
        assert_eq!(v.entries(), ["big", "small"]);
        // 1,16,512: 64 tiles of 128 rows, fewer than 132 SMs: the path.
        let small = att("1,16,512,128");
        let e = v.engine_on(&small, GpuVars::DEFAULT).unwrap();
        assert_eq!(
            (e.entry, e.path.map(|p| p.title.as_str())),
            ("small", Some("small"))
        );
        assert_eq!(
            v.launch(&small).unwrap(),
            Launch {
                grid: (8, 16, 1),
                block: (128, 1, 1),
                shared_bytes: 2048
            }
        );
        // The path's tensor maps are the version's unless it gives its own.
        assert_eq!(e.tensor_maps, v.tensor_maps.as_slice());
        // The reference shape (512 tiles): the version's own kernel and launch.
        let e = v.engine_on(&reference(), GpuVars::DEFAULT).unwrap();
        assert_eq!((e.entry, e.path.is_none()), ("big", true));
        assert_eq!(v.launch(&reference()).unwrap().grid, (132, 1, 1));
        // The same shape on a GPU of 600 SMs takes the path.
        assert_eq!(
            v.engine_on(&reference(), GpuVars::with_sms(600))
                .unwrap()
                .entry,
            "small"
        );
    }

    /// Only the kernel that runs asks the device for clusters: a cluster kernel's path
    /// of plain blocks does not, nor the reverse.
    #[test]
    fn clusters_are_asked_of_the_kernel_that_runs() {
        let l = with_path(
            "cdiv(S, 128) * B * H < SMS",
            "entry = \"small\"\ngrid = [\"CLUSTERS * 2\"]\nblock = [\"128\"]",
        )
        .unwrap();
        let v = &l.versions[0];
        let small = v.engine_on(&att("1,16,512,128"), GpuVars::DEFAULT).unwrap();
        let big = v.engine_on(&reference(), GpuVars::DEFAULT).unwrap();
        assert_eq!((small.entry, big.entry), ("small", "big"));
        assert!(v.asks_clusters(&small));
        assert!(!v.asks_clusters(&big));
    }

    #[test]
    fn a_path_with_a_bad_condition_or_launch_does_not_load() {
        let e = |when: &str, path: &str| format!("{:#}", with_path(when, path).unwrap_err());
        let bad_when = e("S + 1", SMALL);
        assert!(
            bad_when.contains("version v31: path \"small\": when")
                && bad_when.contains("comparison"),
            "{bad_when}"
        );
        let clusters = e("CLUSTERS < 4", SMALL);
        assert!(clusters.contains("when names CLUSTERS"), "{clusters}");
        // A launch that is wrong where the condition does not hold is refused too.
        let block = e(
            "S < 0",
            "entry = \"small\"\ngrid = [\"1\"]\nblock = [\"2048\"]",
        );
        assert!(
            block.contains("version v31: path \"small\": block x is 2048"),
            "{block}"
        );
        // The version's own launch is checked where a path holds at the reference shape.
        let own = format!(
            "{:#}",
            KernelRecipe::parse(
                &with_path_text("S > 0", SMALL).replace("block = [\"384\"]", "block = [\"2048\"]"),
                "recipe.toml"
            )
            .unwrap_err()
        );
        assert!(own.contains("version v31: block x is 2048"), "{own}");
        let same = e(
            "S < 0",
            "entry = \"big\"\ngrid = [\"1\"]\nblock = [\"128\"]",
        );
        assert!(
            same.contains("entry \"big\" is the version's own"),
            "{same}"
        );
        let map = e(
            "S < 0",
            &format!("{SMALL}\ntensor_maps = [{{ tensor = \"X\", box_rows = 64, box_cols = 64 }}]"),
        );
        assert!(map.contains("tensor map of \"X\""), "{map}");
    }

    /// The checks of a version with paths (its input cases and the timed reference
    /// shape) run every one of its kernels, on a GPU of 132 SMs as on one of 78 (a
    /// path's condition names SMS).
    #[test]
    fn the_checks_of_a_version_with_paths_run_each_of_its_kernels() {
        let l = flash_attention();
        let timed = l.reference_shape();
        let shapes: Vec<Shape> = std::iter::once(timed)
            .chain(l.kind.cases(&timed).into_iter().map(|c| c.shape))
            .collect();
        let with_paths: Vec<&KernelVersion> =
            l.versions.iter().filter(|v| !v.paths.is_empty()).collect();
        assert!(
            with_paths.iter().any(|v| v.id == "v31"),
            "v31 chooses its kernel by shape"
        );
        for v in with_paths {
            for gpu in [GpuVars::DEFAULT, GpuVars::with_sms(78)] {
                let ran: std::collections::BTreeSet<&str> = shapes
                    .iter()
                    .filter(|s| v.unsupported(s).is_none())
                    .map(|s| v.engine_on(s, gpu).unwrap().entry)
                    .collect();
                let all: std::collections::BTreeSet<&str> = v.entries().into_iter().collect();
                assert_eq!(ran, all, "{} on {} SMs", v.id, gpu.sms);
            }
        }
    }

    #[test]
    fn the_flash_attention_v30_takes_a_workspace_of_two_counters() {
        let l = flash_attention();
        let v30 = l.version("v30").expect("v30 in the recipe");
        assert_eq!(
            v30.workspace_on(&reference(), GpuVars::DEFAULT).unwrap(),
            Some(8)
        );
        // v29 keeps its counters in module globals, as it was measured.
        assert_eq!(l.version("v29").unwrap().workspace, None);
    }

    #[test]
    fn flops_past_64_bits_is_an_error() {
        let big = att("65535,65535,65535,128");
        assert!(eval("4*B*H*S*S*D", &big).is_err());
    }
}
