//! One problem on the GPU, of any kind: its seeded inputs uploaded, the fp32 reference
//! output (itself checked against fp64 CPU rows), the poisoned output, the kind's
//! argument list, checking and timing. What the problem is comes from its kind
//! ([`crate::kinds::ProblemKind`]): the tensors and scalars of the argument list, the
//! inputs, the CPU rows.

use super::device::{Buffer, Device, Kernel, TensorMap, tensor_map_2d};
use crate::gpu::wire::ErrorStats;
use crate::kinds::{Scalar, Shape, Tensor};
use crate::recipe::{Engine, GpuVars, KernelRecipe, KernelVersion, Launch};
use anyhow::{Context, Result, bail};
use cudarc::driver::CudaStream;
use half::f16;
use std::ffi::c_void;

/// fp16 NaN: outputs are filled with it before a launch, so unwritten elements show.
pub const POISON: u16 = 0x7E00;

/// The inputs the timed runs use: every kind's first ([`crate::kinds::ProblemKind::input_names`]).
fn timed_inputs(shape: &Shape) -> &'static str {
    shape.kind().input_names()[0]
}

pub struct Problem<'d> {
    dev: &'d Device,
    pub shape: Shape,
    pub seed: u64,
    /// The kind's tensors at this shape, in argument order, and their buffers.
    pub tensors: Vec<(Tensor, Buffer)>,
    /// The inputs' values on the host, for the CPU rows (let go once they are computed).
    inputs: Vec<Vec<f16>>,
    reference: Option<Vec<f32>>,
    /// Output rows recomputed on the CPU in fp64, by row.
    cpu_rows: Vec<(usize, Vec<f64>)>,
}

/// One argument's value, kept where the kernel's argument pointers point.
enum Slot {
    Ptr(u64),
    I32(i32),
    F32(f32),
    Map(TensorMap),
}

/// The values of an argument list: the kind's tensors, its scalars, the tensor maps,
/// then the workspace's pointer where the version has one.
/// Boxed by [`Prepared`]: the argument pointers point into it, so it must not move.
struct Args(Vec<Slot>);

impl Args {
    fn pointers(&mut self) -> Vec<*mut c_void> {
        self.0
            .iter_mut()
            .map(|s| match s {
                Slot::Ptr(p) => p as *mut u64 as *mut c_void,
                Slot::I32(v) => v as *mut i32 as *mut c_void,
                Slot::F32(v) => v as *mut f32 as *mut c_void,
                Slot::Map(m) => m as *mut TensorMap as *mut c_void,
            })
            .collect()
    }
}

/// A compiled version ready to launch on a problem.
pub struct Prepared {
    pub kernel: Kernel,
    /// Whether `kernel` is a path's (`[[version.path]]`), chosen at this shape instead
    /// of the version's own.
    on_path: bool,
    pub launch: Launch,
    /// The version's workspace (recipe `workspace`), zero-filled once and passed last:
    /// every launch of this preparation shares it, so two that may overlap need a
    /// preparation each.
    pub workspace: Option<Buffer>,
    _args: Box<Args>,
    pointers: Vec<*mut c_void>,
}

impl Prepared {
    /// The kernel's name where it is a path's, chosen at this shape instead of the
    /// version's own; none where it is the version's own.
    pub fn path(&self) -> Option<&str> {
        self.on_path.then_some(self.kernel.name.as_str())
    }
}

impl<'d> Problem<'d> {
    /// A problem on the timed runs' inputs.
    pub fn new(dev: &'d Device, shape: Shape, seed: u64) -> Result<Problem<'d>> {
        Problem::with_inputs(dev, shape, seed, timed_inputs(&shape))
    }

    /// A problem on the kind's inputs called `inputs`.
    pub fn with_inputs(
        dev: &'d Device,
        shape: Shape,
        seed: u64,
        inputs: &str,
    ) -> Result<Problem<'d>> {
        let kind = shape.kind();
        let values = kind.inputs(&shape, inputs, seed);
        let mut host = values.iter();
        let mut tensors = Vec::new();
        for t in kind.tensors(&shape) {
            let buf = if t.output {
                dev.alloc(t.elements() * 2)?
            } else {
                let v = host
                    .next()
                    .context("the kind gave fewer inputs than tensors")?;
                dev.upload(v)?
            };
            tensors.push((t, buf));
        }
        Ok(Problem {
            dev,
            shape,
            seed,
            tensors,
            inputs: values,
            reference: None,
            cpu_rows: Vec::new(),
        })
    }

    /// The tensor called `name` and its buffer.
    pub fn tensor(&self, name: &str) -> Result<&(Tensor, Buffer)> {
        self.tensors
            .iter()
            .find(|(t, _)| t.name == name)
            .with_context(|| format!("{} has no tensor {name}", self.shape.kind()))
    }

    /// The output tensor and its buffer.
    pub fn output(&self) -> &(Tensor, Buffer) {
        self.tensors
            .iter()
            .find(|(t, _)| t.output)
            .expect("every kind has an output")
    }

    /// The kind's argument list with `out` in the output's place, then `maps`.
    fn args(&self, out: u64, maps: Vec<TensorMap>) -> Args {
        let mut slots: Vec<Slot> = self
            .tensors
            .iter()
            .map(|(t, b)| Slot::Ptr(if t.output { out } else { b.ptr }))
            .collect();
        slots.extend(
            self.shape
                .kind()
                .scalars(&self.shape)
                .into_iter()
                .map(|s| match s {
                    Scalar::I32(v) => Slot::I32(v),
                    Scalar::F32(v) => Slot::F32(v),
                }),
        );
        slots.extend(maps.into_iter().map(Slot::Map));
        Args(slots)
    }

    /// Computes the fp32 GPU reference of the whole output, and checks it against fp64
    /// CPU rows: a reference that disagrees with the CPU is an error of its own.
    pub fn compute_reference(&mut self, recipe: &KernelRecipe) -> Result<()> {
        let r = &recipe.reference;
        let source = recipe.read(&r.source)?;
        let kind = self.shape.kind();
        let kernel = self
            .dev
            .kernel(&r.source, &source, &r.entry, &kind.defines(&self.shape))
            .context("the reference kernel")?;
        let out = self.dev.alloc(self.output().0.elements() * 4)?;
        self.dev.fill_u16(&out, 0xFFFF)?;
        let mut args = self.args(out.ptr, Vec::new());
        let mut ptrs = args.pointers();
        self.dev
            .launch(&kernel, &r.launch(&self.shape)?, &mut ptrs)?;
        self.dev.sync().context("the reference kernel")?;
        let reference: Vec<f32> = self.dev.download(&out)?;

        let rows = kind.sample_rows(&self.shape, kind.cpu_rows(), self.seed);
        // The host copies were kept for these rows alone (a GEMM's at 8192³ are 268 MB).
        let inputs = std::mem::take(&mut self.inputs);
        let values = cpu_rows(&self.shape, &inputs, &rows);
        self.cpu_rows = rows.into_iter().zip(values).collect();
        let e = ErrorStats::of(
            self.sampled(&reference, |x| x as f64),
            self.cpu_rows.iter().flat_map(|r| r.1.iter().copied()),
        );
        if e.non_finite > 0 || e.rel_l2 > 1e-4 {
            bail!(
                "the fp32 reference kernel disagrees with the fp64 CPU rows (rel. error {:.2e}, {} non-finite): the reference is wrong",
                e.rel_l2,
                e.non_finite
            );
        }
        self.reference = Some(reference);
        Ok(())
    }

    /// Values of `out` (the whole output) at the CPU-checked rows, in order.
    fn sampled<T: Copy>(&self, out: &[T], f: impl Fn(T) -> f64) -> Vec<f64> {
        let cols = self.output().0.cols as usize;
        self.cpu_rows
            .iter()
            .flat_map(|(r, _)| out[r * cols..][..cols].iter().map(|&x| f(x)))
            .collect()
    }

    /// Compiles a version and binds its arguments (tensor maps included) to this problem.
    pub fn prepare(&self, recipe: &KernelRecipe, v: &KernelVersion) -> Result<Prepared> {
        self.prepare_with(recipe, v, &[])
    }

    /// [`Problem::prepare`] with `extra` NVRTC options after the version's own (the
    /// trace build's definition).
    pub fn prepare_with(
        &self,
        recipe: &KernelRecipe,
        v: &KernelVersion,
        extra: &[String],
    ) -> Result<Prepared> {
        let source = recipe.read(&v.source)?;
        let mut options = self.shape.kind().defines(&self.shape);
        options.extend(v.options.iter().cloned());
        options.extend(extra.iter().cloned());
        let (engine, gpu) = self.engine(v)?;
        let kernel = self
            .dev
            .kernel(&v.source, &source, engine.entry, &options)?;
        self.bind(v, engine, gpu, kernel)
    }

    /// A preparation of `v` on this problem with the kernel of another preparation: the
    /// same loaded module, so the same module globals (and its own arguments and
    /// workspace). Two launches that run at once through one module are what a
    /// schedule kept in module globals gets wrong (tests/gpu.rs). The kernel must be the
    /// one `v` runs at this problem's shape.
    pub fn prepare_sharing(&self, v: &KernelVersion, with: &Prepared) -> Result<Prepared> {
        let (engine, gpu) = self.engine(v)?;
        if engine.entry != with.kernel.name {
            bail!(
                "version {} runs {} at shape {}, not the shared kernel {}",
                v.id,
                engine.entry,
                self.shape,
                with.kernel.name
            );
        }
        self.bind(v, engine, gpu, with.kernel.clone())
    }

    /// The kernel of `v` that runs at this problem's shape on this device (its own, or a
    /// path's: a path's condition may not ask CLUSTERS, which needs the compiled kernel),
    /// and the device's figures it was chosen by.
    fn engine<'v>(&self, v: &'v KernelVersion) -> Result<(Engine<'v>, GpuVars)> {
        let gpu = GpuVars::with_sms(self.dev.sm_count()? as u32);
        Ok((v.engine_on(&self.shape, gpu)?, gpu))
    }

    /// Binds the arguments of `v` on this problem (tensor maps, workspace) to its
    /// compiled kernel `kernel`, the one of `engine`.
    fn bind(
        &self,
        v: &KernelVersion,
        engine: Engine,
        mut gpu: GpuVars,
        kernel: Kernel,
    ) -> Result<Prepared> {
        let launch_at = |gpu| {
            engine
                .launch_on(&self.shape, gpu)
                .with_context(|| format!("version {}: kernel {}", v.id, engine.entry))
        };
        let mut launch = launch_at(gpu)?;
        if v.asks_clusters(&engine) {
            gpu.clusters = self.dev.max_active_clusters(&kernel, &launch)?;
            launch = launch_at(gpu)?;
        }
        let maps = engine
            .tensor_maps
            .iter()
            .map(|m| {
                let (t, buf) = self.tensor(&m.tensor)?;
                tensor_map_2d(buf.ptr, t.rows, t.cols, m.box_rows, m.box_cols, m.swizzle)
                    .with_context(|| format!("tensor map of {}", m.tensor))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut args = self.args(self.output().1.ptr, maps);
        let workspace = match v.workspace_on(&self.shape, gpu)? {
            Some(bytes) => {
                let buf = self.dev.alloc(bytes as usize)?;
                self.dev.zero(&buf)?;
                // Zero before any launch, on whichever stream that launch comes.
                self.dev.sync().context("zeroing the workspace")?;
                args.0.push(Slot::Ptr(buf.ptr));
                Some(buf)
            }
            None => None,
        };
        let mut args = Box::new(args);
        let pointers = args.pointers();
        Ok(Prepared {
            on_path: engine.path.is_some(),
            kernel,
            launch,
            workspace,
            _args: args,
            pointers,
        })
    }

    pub fn run(&self, p: &mut Prepared) -> Result<()> {
        self.dev.launch(&p.kernel, &p.launch, &mut p.pointers)
    }

    /// [`Problem::run`] on `stream` instead of the device's own: for launches that run
    /// at once (tests/gpu.rs runs two preparations side by side). The caller orders it
    /// against the device's stream ([`Device::sync`]).
    pub fn run_on(&self, p: &mut Prepared, stream: &CudaStream) -> Result<()> {
        self.dev
            .launch_on(&p.kernel, &p.launch, &mut p.pointers, stream)
    }

    /// Poisons the output, launches once, and measures the error against the GPU
    /// reference (every element) and the CPU rows.
    pub fn check(&self, p: &mut Prepared) -> Result<ErrorStats> {
        self.poison()?;
        self.run(p)?;
        self.check_current()
    }

    pub fn check_output(&self, out: &[f16]) -> Result<ErrorStats> {
        let reference = self
            .reference
            .as_ref()
            .context("the reference was not computed")?;
        let whole = ErrorStats::of(
            out.iter().map(|x| x.to_f64()),
            reference.iter().map(|&x| x as f64),
        );
        let rows = ErrorStats::of(
            self.sampled(out, |x: f16| x.to_f64()),
            self.cpu_rows.iter().flat_map(|r| r.1.iter().copied()),
        );
        Ok(whole.worst(rows))
    }

    pub fn device(&self) -> &Device {
        self.dev
    }

    /// Fills the output with the NaN poison.
    pub fn poison(&self) -> Result<()> {
        self.dev.fill_u16(&self.output().1, POISON)
    }

    /// Checks what the output holds now against the reference.
    pub fn check_current(&self) -> Result<ErrorStats> {
        self.dev.sync()?;
        let out: Vec<f16> = self.dev.download(&self.output().1)?;
        self.check_output(&out)
    }
}

/// The kind's fp64 output rows, computed on every core: a long reduction (a GEMM's K of
/// 8192 over 8192 columns) takes seconds a row on one.
fn cpu_rows(shape: &Shape, inputs: &[Vec<f16>], rows: &[usize]) -> Vec<Vec<f64>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = rows.len().div_ceil(threads.max(1)).max(1);
    std::thread::scope(|scope| {
        let parts: Vec<_> = rows
            .chunks(per)
            .map(|chunk| scope.spawn(move || shape.kind().output_rows(shape, inputs, chunk)))
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().expect("a CPU row thread panicked"))
            .collect()
    })
}
