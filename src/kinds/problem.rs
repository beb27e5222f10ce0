//! What every problem kind is made of, and what the generic code holds of a problem:
//! the [`ProblemKind`] trait a kind's module implements, [`Kind`] (a kind, compared by
//! name), [`Shape`] (a kind's dimensions and flags) and [`ShapeText`] (a shape as typed,
//! before its kind is known). Names no kind.

use half::f16;
use serde::Serialize;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The most dimensions a kind's shape has.
pub const MAX_DIMS: usize = 6;

/// One dimension of a kind's shape: its name as launch expressions and `--shape` spell
/// it (upper case), and what it counts.
#[derive(Debug, Clone, Copy)]
pub struct Dim {
    pub name: &'static str,
    pub what: &'static str,
}

/// A yes/no property of a problem beyond its dimensions, written `:name` after them.
#[derive(Debug, Clone, Copy)]
pub struct Flag {
    pub name: &'static str,
    pub what: &'static str,
}

/// One tensor a kernel of the kind takes by pointer, in argument order, seen as a
/// row-major `[rows, cols]` fp16 matrix (columns contiguous; what TMA tensor maps and
/// the check's sampled rows address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tensor {
    pub name: &'static str,
    pub rows: u64,
    pub cols: u64,
    /// The one output; every other tensor is an input.
    pub output: bool,
}

impl Tensor {
    pub fn elements(&self) -> usize {
        (self.rows * self.cols) as usize
    }
}

/// A scalar argument, after the tensors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    I32(i32),
    F32(f32),
}

/// One check case: a shape and inputs built to catch one way a kernel goes wrong while
/// passing gentle inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Case {
    pub name: &'static str,
    pub shape: Shape,
    /// The kind's name for the inputs ([`ProblemKind::inputs`]).
    pub inputs: &'static str,
    /// What it catches, for a failure message.
    pub catches: &'static str,
}

/// How a baseline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineRun {
    /// Built into the worker (`gpu::worker::baselines`), launched like a version.
    Builtin,
    /// A backend of the recipe's baseline script (`baseline_script`).
    Script,
}

/// A baseline a run can time beside a ladder's versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Baseline {
    /// Its id in runs and profiles manifests.
    pub id: &'static str,
    pub title: &'static str,
    pub runs: BaselineRun,
}

/// What a problem kind tells the generic code. Host side only: its kernels, reference
/// kernel and built-in baselines' device code live with the recipe and the worker.
pub trait ProblemKind: Sync {
    /// The name recipes, run files and manifests use (`kind = "…"`).
    fn name(&self) -> &'static str;
    /// What it computes, in one line.
    fn what(&self) -> &'static str;
    fn dims(&self) -> &'static [Dim];
    fn flags(&self) -> &'static [Flag] {
        &[]
    }
    /// The shape a ladder of the kind is timed at unless its recipe says otherwise.
    fn reference_shape(&self) -> &'static str;
    /// FLOP of one launch.
    fn flops(&self, s: &Shape) -> f64;
    /// Bytes one launch must move at the least (every input read and the output
    /// written once).
    fn bytes(&self, s: &Shape) -> f64;
    /// The tensors of the argument list, inputs and the output, in argument order.
    fn tensors(&self, s: &Shape) -> Vec<Tensor>;
    /// The scalar arguments after the tensors, in order.
    fn scalars(&self, s: &Shape) -> Vec<Scalar>;
    /// Preprocessor definitions every kernel of the kind is compiled with.
    fn defines(&self, _s: &Shape) -> Vec<String> {
        Vec::new()
    }
    /// The inputs' names ([`Case::inputs`]), the timed runs' first.
    fn input_names(&self) -> &'static [&'static str];
    /// The input tensors' values, in [`ProblemKind::tensors`] order: the same seed gives
    /// the same inputs.
    fn inputs(&self, s: &Shape, inputs: &str, seed: u64) -> Vec<Vec<f16>>;
    /// Rows of the output matrix computed in fp64 from the inputs.
    fn output_rows(&self, s: &Shape, inputs: &[Vec<f16>], rows: &[usize]) -> Vec<Vec<f64>>;
    /// How many output rows the check recomputes on the CPU.
    fn cpu_rows(&self) -> usize {
        24
    }
    /// Output rows to recompute on the CPU, with the edges: the same seed gives the same
    /// rows.
    fn sample_rows(&self, s: &Shape, count: usize, seed: u64) -> Vec<usize>;
    /// The check cases beside the timed shape `timed`.
    fn cases(&self, timed: &Shape) -> Vec<Case>;
    fn baselines(&self) -> &'static [Baseline];
    /// The baselines a run table states its versions against, in order of preference
    /// (the last present is named).
    fn reference_baselines(&self) -> &'static [&'static str];
}

/// A problem kind, compared by name.
#[derive(Clone, Copy)]
pub struct Kind(&'static dyn ProblemKind);

impl Kind {
    /// The kind `kind` is: for the module that defines it ([`crate::kinds::KINDS`]
    /// lists every one; [`Kind::named`] finds them by name).
    pub const fn of(kind: &'static dyn ProblemKind) -> Kind {
        Kind(kind)
    }

    /// The kind's dimension names joined, as a usage line spells them: `B,H,S,D`.
    pub fn dims_usage(self) -> String {
        self.dims()
            .iter()
            .map(|d| d.name)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// `B,H,S,D[:causal]`: the `--shape` syntax of this kind.
    pub fn shape_usage(self) -> String {
        let flags: String = self
            .flags()
            .iter()
            .map(|f| format!("[:{}]", f.name))
            .collect();
        format!("{}{flags}", self.dims_usage())
    }

    /// The kind's reference shape.
    pub fn reference(self) -> Shape {
        Shape::parse(self, self.reference_shape()).expect("a kind's reference shape parses")
    }

    /// The baseline called `id`, if the kind has one.
    pub fn baseline(self, id: &str) -> Option<&'static Baseline> {
        self.baselines().iter().find(|b| b.id == id)
    }
}

impl std::ops::Deref for Kind {
    type Target = dyn ProblemKind;
    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for Kind {
    fn eq(&self, other: &Kind) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Kind {}
impl Hash for Kind {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.name().hash(h)
    }
}
impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A problem: its kind, the value of each of the kind's dimensions, and its flags.
/// Written `1,64,1024,128:causal`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    kind: Kind,
    dims: [u32; MAX_DIMS],
    /// Bit i: the kind's flag i is set.
    flags: u8,
}

/// Numbers as words, for the shape error ("four positive integers").
const COUNTS: [&str; MAX_DIMS + 1] = ["no", "one", "two", "three", "four", "five", "six"];

impl Shape {
    /// A shape of `kind` from its dimensions, in the kind's order, without flags.
    pub fn new(kind: Kind, dims: &[u32]) -> Result<Shape, String> {
        let names = kind.dims();
        if dims.len() != names.len() || dims.contains(&0) {
            return Err(format!(
                "{} needs {} positive dimensions ({}), got {dims:?}",
                kind.name(),
                COUNTS[names.len()],
                kind.dims_usage()
            ));
        }
        let mut d = [0; MAX_DIMS];
        d[..dims.len()].copy_from_slice(dims);
        Ok(Shape {
            kind,
            dims: d,
            flags: 0,
        })
    }

    /// Parses `text` as a shape of `kind`: the dimensions comma-separated, then `:flag`
    /// for each flag set.
    pub fn parse(kind: Kind, text: &str) -> Result<Shape, String> {
        ShapeText::parse(text)?.resolve(kind)
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The dimensions' values, in the kind's order.
    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.kind.dims().len()]
    }

    /// The value of the dimension called `name` (upper case, as the kind names it).
    pub fn dim(&self, name: &str) -> Option<u32> {
        let i = self.kind.dims().iter().position(|d| d.name == name)?;
        Some(self.dims[i])
    }

    /// Whether the flag called `name` is set.
    pub fn flag(&self, name: &str) -> bool {
        self.kind
            .flags()
            .iter()
            .position(|f| f.name == name)
            .is_some_and(|i| self.flags & (1 << i) != 0)
    }

    /// The names of the flags set, in the kind's order.
    pub fn flags_set(&self) -> Vec<&'static str> {
        self.kind
            .flags()
            .iter()
            .enumerate()
            .filter(|(i, _)| self.flags & (1 << i) != 0)
            .map(|(_, f)| f.name)
            .collect()
    }

    /// This shape with the flag called `name` set or cleared (a name the kind does not
    /// have is an error).
    pub fn with_flag(mut self, name: &str, on: bool) -> Result<Shape, String> {
        let flags = self.kind.flags();
        let i = flags.iter().position(|f| f.name == name).ok_or_else(|| {
            format!(
                "{name:?} is not a flag of {} ({})",
                self.kind.name(),
                flag_list(flags)
            )
        })?;
        if on {
            self.flags |= 1 << i;
        } else {
            self.flags &= !(1 << i);
        }
        Ok(self)
    }

    /// The same dimensions without any flag.
    pub fn unflagged(mut self) -> Shape {
        self.flags = 0;
        self
    }

    /// The dimensions alone, `1,64,1024,128`.
    pub fn dims_text(&self) -> String {
        self.dims()
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The shape for a heading: `[B,H,S,D] = 1,16,8192,128, causal`.
    pub fn labelled(&self) -> String {
        let flags: String = self.flags_set().iter().map(|f| format!(", {f}")).collect();
        format!("[{}] = {}{flags}", self.kind.dims_usage(), self.dims_text())
    }

    /// The launch expressions' variables: each dimension by its name.
    pub fn vars(&self) -> Vec<(&'static str, i64)> {
        self.kind
            .dims()
            .iter()
            .zip(self.dims())
            .map(|(d, &v)| (d.name, i64::from(v)))
            .collect()
    }

    pub fn flops(&self) -> f64 {
        self.kind.flops(self)
    }

    pub fn bytes(&self) -> f64 {
        self.kind.bytes(self)
    }

    /// The output tensor.
    pub fn output(&self) -> Tensor {
        self.kind
            .tensors(self)
            .into_iter()
            .find(|t| t.output)
            .expect("every kind has an output tensor")
    }

    /// The order shapes are listed in: flags set last, then by FLOP, then dimensions.
    pub fn size_order(&self, other: &Shape) -> std::cmp::Ordering {
        (self.kind.name(), self.flags)
            .cmp(&(other.kind.name(), other.flags))
            .then(self.flops().total_cmp(&other.flops()))
            .then(self.dims().cmp(other.dims()))
    }
}

fn flag_list(flags: &[Flag]) -> String {
    if flags.is_empty() {
        return "it has no flags".into();
    }
    let names: Vec<String> = flags.iter().map(|f| format!(":{}", f.name)).collect();
    format!("it has {}", names.join(", "))
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dims_text())?;
        for flag in self.flags_set() {
            write!(f, ":{flag}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({self})", self.kind.name())
    }
}

/// A shape as a user wrote it (`--shape 1,64,1024,128:causal`), checked for its syntax
/// (positive integers, then `:name` flags) before the kind that gives it meaning is
/// known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeText {
    text: String,
    dims: Vec<u32>,
    flags: Vec<String>,
}

impl ShapeText {
    pub fn parse(text: &str) -> Result<ShapeText, String> {
        let mut parts = text.trim().split(':');
        let dims_part = parts.next().unwrap_or("");
        let flags: Vec<String> = parts.map(|f| f.trim().to_string()).collect();
        let dims: Option<Vec<u32>> = dims_part
            .split(',')
            .map(|p| p.trim().parse::<u32>().ok().filter(|&v| v > 0))
            .collect();
        let bad = || {
            format!(
                "shape {text:?} is not a list of positive integers (e.g. 1,64,1024,128 or \
                 8192,8192,8192), with :flag after them where the kind has flags"
            )
        };
        let dims = dims.ok_or_else(bad)?;
        if dims.len() > MAX_DIMS || flags.iter().any(String::is_empty) {
            return Err(bad());
        }
        Ok(ShapeText {
            text: text.trim().to_string(),
            dims,
            flags,
        })
    }

    /// The shape of `kind` this text names.
    pub fn resolve(&self, kind: Kind) -> Result<Shape, String> {
        let names = kind.dims();
        if self.dims.len() != names.len() {
            let example = kind.reference().dims_text();
            return Err(format!(
                "shape {:?} is not {} ({} positive integers, e.g. {example})",
                self.text,
                kind.dims_usage(),
                COUNTS[names.len()]
            ));
        }
        let mut shape = Shape::new(kind, &self.dims)?;
        for f in &self.flags {
            shape = shape
                .with_flag(f, true)
                .map_err(|e| format!("shape {:?}: {e}", self.text))?;
        }
        Ok(shape)
    }
}

/// A shape's own text, as a worker's command line carries it.
impl From<Shape> for ShapeText {
    fn from(s: Shape) -> ShapeText {
        ShapeText::parse(&s.to_string()).expect("a shape's text parses")
    }
}

impl std::str::FromStr for ShapeText {
    type Err = String;
    fn from_str(s: &str) -> Result<ShapeText, String> {
        ShapeText::parse(s)
    }
}

impl fmt::Display for ShapeText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// In JSON a shape is an object: `kind`, each dimension by its lower-case name, each
/// flag as a boolean: `{"kind": "attention", "b": 1, "h": 64, "s": 1024, "d": 128,
/// "causal": false}`.
impl Serialize for Shape {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let kind = self.kind;
        let mut m = ser.serialize_map(Some(1 + kind.dims().len() + kind.flags().len()))?;
        m.serialize_entry("kind", kind.name())?;
        for (d, v) in kind.dims().iter().zip(self.dims()) {
            m.serialize_entry(&d.name.to_lowercase(), v)?;
        }
        for f in kind.flags() {
            m.serialize_entry(f.name, &self.flag(f.name))?;
        }
        m.end()
    }
}

/// Rows to recompute on the CPU out of `rows` output rows: `count` distinct rows in order
/// (all of them when there are no more), always with the first and the last, so never
/// fewer than those two. The same seed gives the same rows.
pub fn sample_distinct_rows(rows: usize, count: usize, seed: u64) -> Vec<usize> {
    if count >= rows {
        return (0..rows).collect();
    }
    let mut rng = crate::seeded::Rng::new(seed ^ 0x5EED_0FC0_FFEE);
    let mut picked = std::collections::BTreeSet::from([0, rows - 1]);
    while picked.len() < count {
        picked.insert(rng.below(rows as u64) as usize);
    }
    picked.into_iter().collect()
}
