//! The kernel recipe (`kernels/<ladder>/recipe.toml`): per version its source,
//! entry point and launch recipe (grid, block, dynamic shared memory as expressions of
//! the shape; the TMA tensor maps it takes), and the ladder's FLOP formula. Pure data:
//! nothing here touches CUDA.

use crate::model::manifest::{Manifest, VersionEntry};
use crate::model::{Shape, store::Store};
use anyhow::{Context, Result, anyhow, bail};
use evalexpr::{
    ContextWithMutableFunctions, ContextWithMutableVariables, Function, HashMapContext,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "recipe.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelRecipe {
    /// The profiles ladder (folder under profiles/) results are written to.
    pub ladder: String,
    pub title: String,
    /// FLOP of one non-causal launch, an expression of B, H, S, D (causal counts half).
    pub flops: String,
    /// Relative L2 error a version may have against the reference.
    pub tolerance: f64,
    /// Largest absolute error of one element a version may have.
    #[serde(default = "default_max_abs")]
    pub max_abs_tolerance: f64,
    pub reference_shape: String,
    /// The fp32 reference kernel every version is checked against.
    pub reference: KernelRef,
    /// The softmax kernel of the built-in unfused cuBLAS baseline.
    #[serde(default)]
    pub unfused_softmax: Option<KernelRef>,
    /// The PyTorch SDPA baseline script.
    #[serde(default = "default_sdpa")]
    pub sdpa_script: String,
    #[serde(rename = "version")]
    pub versions: Vec<KernelVersion>,
    /// Where the manifest was read from (set on load).
    #[serde(skip)]
    pub dir: PathBuf,
    #[serde(skip)]
    pub store: Option<Store>,
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

fn default_sdpa() -> String {
    "baselines/sdpa.py".into()
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
fn yes() -> bool {
    true
}
fn d128() -> Vec<u32> {
    vec![128]
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
    /// TMA tensor maps passed after the common arguments, in this order.
    #[serde(default)]
    pub tensor_maps: Vec<TensorMapSpec>,
    /// Whether the version implements the causal mask.
    #[serde(default = "yes")]
    pub causal: bool,
    /// Head dimensions the version supports.
    #[serde(default = "d128")]
    pub head_dims: Vec<u32>,
    /// Sequence lengths must be a multiple of this.
    #[serde(default = "one")]
    pub seq_multiple: u32,
    /// Relative L2 error allowed, where it differs from the ladder's.
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// Largest absolute error allowed, where it differs from the ladder's.
    #[serde(default)]
    pub max_abs_tolerance: Option<f64>,
    /// Passed to NVRTC after the defaults.
    #[serde(default)]
    pub options: Vec<String>,
}

fn one() -> u32 {
    1
}

/// A 2-D tensor map over one of Q, K, V, O seen as a [B·H·S, D] matrix.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TensorMapSpec {
    /// Q, K, V or O.
    pub tensor: String,
    /// Box: rows × columns (columns are elements of D).
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
        let mut l: KernelRecipe = toml::from_str(&text)
            .map_err(|e| anyhow!("{}: {}", store.describe(&path), e.message()))?;
        l.dir = dir.to_path_buf();
        l.store = Some(store.clone());
        l.validate()
            .with_context(|| format!("in {}", store.describe(&path)))?;
        Ok(l)
    }

    fn validate(&self) -> Result<()> {
        self.reference_shape
            .parse::<Shape>()
            .map_err(|e| anyhow!("reference_shape: {e}"))?;
        let shape = Shape::REFERENCE;
        self.flops_for(&shape, false)?;
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
            if v.head_dims.contains(&shape.d) {
                v.launch(&shape)
                    .with_context(|| format!("version {}", v.id))?;
            }
            for m in &v.tensor_maps {
                if !["Q", "K", "V", "O"].contains(&m.tensor.as_str()) {
                    bail!(
                        "version {}: tensor map of {:?} (Q, K, V or O)",
                        v.id,
                        m.tensor
                    );
                }
                if ![0, 32, 64, 128].contains(&m.swizzle) {
                    bail!("version {}: swizzle {} (0, 32, 64 or 128)", v.id, m.swizzle);
                }
            }
        }
        Ok(())
    }

    pub fn reference_shape(&self) -> Shape {
        self.reference_shape.parse().expect("validated on load")
    }

    pub fn version(&self, id: &str) -> Option<&KernelVersion> {
        self.versions.iter().find(|v| v.id == id)
    }

    pub fn flops_for(&self, shape: &Shape, causal: bool) -> Result<f64> {
        let f = eval(&self.flops, shape).context("flops")? as f64;
        Ok(if causal { f / 2.0 } else { f })
    }

    /// The path of a file named in the manifest.
    pub fn path_of(&self, rel: &str) -> PathBuf {
        crate::files::normalize(&self.dir.join(rel))
    }

    pub fn read(&self, rel: &str) -> Result<String> {
        self.store
            .as_ref()
            .unwrap_or(&Store::Disk)
            .read_text(&self.path_of(rel))
    }

    /// The profiles manifest a new ladder fed by this recipe starts from.
    pub fn manifest_defaults(&self) -> Manifest {
        Manifest {
            title: self.title.clone(),
            flops: self.flops_for(&self.reference_shape(), false).ok(),
            reference_shape: Some(self.reference_shape.clone()),
            ..Manifest::default()
        }
    }

    /// Manifest entries for the ids of a run or a profile, in the recipe's order then the
    /// baselines': versions with their title, technique, notes and source (relative to
    /// `ladder_dir`), other ids as baselines.
    pub fn manifest_entries(&self, ids: &[&str], ladder_dir: &Path) -> Vec<VersionEntry> {
        let rel = |f: &str| {
            crate::files::relative_path(&self.dir.join(f), ladder_dir)
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
            let title = super::sdpa::BACKENDS
                .iter()
                .find(|(b, _)| b == id)
                .map(|(_, t)| *t)
                .or((*id == super::worker::UNFUSED)
                    .then_some("unfused: cuBLAS Q·Kᵀ, softmax kernel, cuBLAS P·V"))
                .unwrap_or(id);
            entries.push(VersionEntry {
                id: id.to_string(),
                title: title.to_string(),
                baseline: true,
                ..VersionEntry::default()
            });
        }
        entries
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

impl KernelVersion {
    /// The launch at a shape on a GPU of `DEFAULT_SMS` multiprocessors.
    pub fn launch(&self, shape: &Shape) -> Result<Launch> {
        self.launch_on(shape, DEFAULT_SMS)
    }

    /// The launch at a shape on a GPU with `sms` multiprocessors (persistent kernels
    /// size their grid with `SMS`).
    pub fn launch_on(&self, shape: &Shape, sms: u32) -> Result<Launch> {
        Ok(Launch {
            grid: dims_on(&self.grid, shape, sms).context("grid")?,
            block: dims_on(&self.block, shape, sms).context("block")?,
            shared_bytes: eval_on(&self.shared, shape, sms).context("shared")? as u32,
        })
    }

    /// The relative and absolute error this version may have.
    pub fn tolerances(&self, recipe: &KernelRecipe) -> (f64, f64) {
        (
            self.tolerance.unwrap_or(recipe.tolerance),
            self.max_abs_tolerance.unwrap_or(recipe.max_abs_tolerance),
        )
    }

    /// Why this version cannot run a shape, if it cannot.
    pub fn unsupported(&self, shape: &Shape, causal: bool) -> Option<String> {
        if !self.head_dims.contains(&shape.d) {
            return Some(format!(
                "head dim {} not supported (only {:?})",
                shape.d, self.head_dims
            ));
        }
        if !shape.s.is_multiple_of(self.seq_multiple) {
            return Some(format!("S must be a multiple of {}", self.seq_multiple));
        }
        if causal && !self.causal {
            return Some("no causal variant".into());
        }
        None
    }
}

impl KernelRef {
    pub fn launch(&self, shape: &Shape) -> Result<Launch> {
        Ok(Launch {
            grid: dims(&self.grid, shape).context("grid")?,
            block: dims(&self.block, shape).context("block")?,
            shared_bytes: eval(&self.shared, shape).context("shared")? as u32,
        })
    }
}

fn dims(exprs: &[String], shape: &Shape) -> Result<(u32, u32, u32)> {
    dims_on(exprs, shape, DEFAULT_SMS)
}

fn dims_on(exprs: &[String], shape: &Shape, sms: u32) -> Result<(u32, u32, u32)> {
    if exprs.is_empty() || exprs.len() > 3 {
        bail!("needs 1 to 3 dimensions, has {}", exprs.len());
    }
    let mut d = [1u32; 3];
    for (slot, e) in d.iter_mut().zip(exprs) {
        let v = eval_on(e, shape, sms)?;
        if v < 1 || v > u32::MAX as i64 {
            bail!("{e:?} = {v} at shape {shape}: a launch dimension must be at least 1");
        }
        *slot = v as u32;
    }
    Ok((d[0], d[1], d[2]))
}

/// Evaluates an integer expression of B, H, S, D (and SMS, the multiprocessor count)
/// with `cdiv(a, b)`, `min(a, b)`, `max(a, b)`.
pub fn eval(expr: &str, shape: &Shape) -> Result<i64> {
    eval_on(expr, shape, DEFAULT_SMS)
}

pub fn eval_on(expr: &str, shape: &Shape, sms: u32) -> Result<i64> {
    let mut ctx = HashMapContext::<evalexpr::DefaultNumericTypes>::new();
    for (name, v) in [
        ("B", shape.b),
        ("H", shape.h),
        ("S", shape.s),
        ("D", shape.d),
        ("SMS", sms),
    ] {
        ctx.set_value(name.into(), evalexpr::Value::Int(v as i64))
            .expect("a fresh context takes variables");
    }
    ctx.set_function(
        "cdiv".into(),
        Function::new(|arg| {
            let t = arg.as_fixed_len_tuple(2)?;
            let (a, b) = (t[0].as_int()?, t[1].as_int()?);
            if b == 0 {
                return Err(evalexpr::EvalexprError::CustomMessage(
                    "cdiv by zero".into(),
                ));
            }
            Ok(evalexpr::Value::Int((a + b - 1) / b))
        }),
    )
    .expect("a fresh context takes functions");
    evalexpr::eval_int_with_context(expr, &ctx).map_err(|e| anyhow!("expression {expr:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_of_the_shape() {
        let s = Shape::REFERENCE;
        assert_eq!(eval("cdiv(S, 128)", &s).unwrap(), 8);
        assert_eq!(eval("cdiv(S, 96)", &s).unwrap(), 11);
        assert_eq!(eval("B*H", &s).unwrap(), 64);
        assert_eq!(eval("4*B*H*S*S*D", &s).unwrap(), 34_359_738_368);
        assert_eq!(eval("min(S, 64) * 2", &s).unwrap(), 128);
        assert!(eval("S / 0", &s).is_err());
        assert!(eval("Q + 1", &s).is_err());
    }

    #[test]
    fn launch_dimensions_must_be_positive() {
        let s = Shape::REFERENCE;
        assert_eq!(
            dims(&["cdiv(S,64)".into(), "H".into()], &s).unwrap(),
            (16, 64, 1)
        );
        assert!(dims(&["S - 1024".into()], &s).is_err());
        assert!(dims(&[], &s).is_err());
    }
}
