//! One attention problem on the GPU: fresh seeded inputs, the fp32 reference output
//! (itself checked against fp64 CPU rows), poisoned outputs, the common argument list,
//! checking and timing.

use super::check::{InputKind, Inputs, sample_rows};
use super::device::{Buffer, Device, Kernel, TensorMap, tensor_map_2d};
use crate::gpu::recipe::{KernelRecipe, KernelVersion, Launch};
use crate::gpu::wire::ErrorStats;
use crate::model::Shape;
use anyhow::{Context, Result, bail};
use half::f16;
use std::ffi::c_void;

/// fp16 NaN: outputs are filled with it before a launch, so unwritten elements show.
pub const POISON: u16 = 0x7E00;
/// Rows recomputed on the CPU in fp64.
const CPU_ROWS: usize = 24;

pub struct Problem<'d> {
    dev: &'d Device,
    pub shape: Shape,
    pub causal: bool,
    pub scale: f32,
    pub seed: u64,
    pub inputs: Inputs,
    pub q: Buffer,
    pub k: Buffer,
    pub v: Buffer,
    pub o: Buffer,
    reference: Option<Vec<f32>>,
    cpu_rows: Vec<((usize, usize, usize), Vec<f64>)>,
}

/// The argument list every ladder kernel takes: Q, K, V, O, B, H, S, the softmax
/// scale, the causal flag, then its tensor maps.
struct Args {
    q: u64,
    k: u64,
    v: u64,
    o: u64,
    b: i32,
    h: i32,
    s: i32,
    scale: f32,
    causal: i32,
    maps: Vec<TensorMap>,
}

impl Args {
    fn pointers(&mut self) -> Vec<*mut c_void> {
        let mut p: Vec<*mut c_void> = vec![
            &mut self.q as *mut u64 as *mut c_void,
            &mut self.k as *mut u64 as *mut c_void,
            &mut self.v as *mut u64 as *mut c_void,
            &mut self.o as *mut u64 as *mut c_void,
            &mut self.b as *mut i32 as *mut c_void,
            &mut self.h as *mut i32 as *mut c_void,
            &mut self.s as *mut i32 as *mut c_void,
            &mut self.scale as *mut f32 as *mut c_void,
            &mut self.causal as *mut i32 as *mut c_void,
        ];
        for m in self.maps.iter_mut() {
            p.push(m as *mut TensorMap as *mut c_void);
        }
        p
    }
}

/// A compiled version ready to launch on a problem.
pub struct Prepared {
    pub kernel: Kernel,
    pub launch: Launch,
    /// Boxed: `pointers` point into it, so it must not move.
    _args: Box<Args>,
    pointers: Vec<*mut c_void>,
}

impl<'d> Problem<'d> {
    /// A problem on the timed runs' inputs ([`InputKind::Uniform`]).
    pub fn new(dev: &'d Device, shape: Shape, causal: bool, seed: u64) -> Result<Problem<'d>> {
        Problem::with_inputs(dev, shape, causal, seed, InputKind::Uniform)
    }

    pub fn with_inputs(
        dev: &'d Device,
        shape: Shape,
        causal: bool,
        seed: u64,
        kind: InputKind,
    ) -> Result<Problem<'d>> {
        let inputs = Inputs::of_kind(shape, kind, seed);
        let q = dev.upload(&inputs.q)?;
        let k = dev.upload(&inputs.k)?;
        let v = dev.upload(&inputs.v)?;
        let o = dev.alloc(shape.elements() * 2)?;
        Ok(Problem {
            dev,
            shape,
            causal,
            scale: 1.0 / (shape.d as f32).sqrt(),
            seed,
            inputs,
            q,
            k,
            v,
            o,
            reference: None,
            cpu_rows: Vec::new(),
        })
    }

    fn args(&self, out: u64, maps: Vec<TensorMap>) -> Args {
        Args {
            q: self.q.ptr,
            k: self.k.ptr,
            v: self.v.ptr,
            o: out,
            b: self.shape.b as i32,
            h: self.shape.h as i32,
            s: self.shape.s as i32,
            scale: self.scale,
            causal: self.causal as i32,
            maps,
        }
    }

    /// Computes the fp32 GPU reference of the whole output, and checks it against fp64
    /// CPU rows: a reference that disagrees with the CPU is an error of its own.
    pub fn compute_reference(&mut self, ladder: &KernelRecipe) -> Result<()> {
        let r = &ladder.reference;
        let source = ladder.read(&r.source)?;
        let kernel = self
            .dev
            .kernel(
                &r.source,
                &source,
                &r.entry,
                &[format!("-DHEAD_DIM={}", self.shape.d)],
            )
            .context("the reference kernel")?;
        let out = self.dev.alloc(self.shape.elements() * 4)?;
        self.dev.fill_u16(&out, 0xFFFF)?;
        let mut args = self.args(out.ptr, Vec::new());
        let mut ptrs = args.pointers();
        self.dev
            .launch(&kernel, &r.launch(&self.shape)?, &mut ptrs)?;
        self.dev.sync().context("the reference kernel")?;
        let reference: Vec<f32> = self.dev.download(&out)?;

        self.cpu_rows = sample_rows(&self.shape, CPU_ROWS, self.seed)
            .into_iter()
            .map(|(b, h, i)| {
                let row = self
                    .inputs
                    .reference_row(b, h, i, self.causal, self.scale as f64);
                ((b, h, i), row)
            })
            .collect();
        let ref_rows = self.sampled(&reference, |x| x as f64);
        let e = ErrorStats::of(
            ref_rows,
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

    /// Values of `out` at the CPU-checked rows, in order.
    fn sampled<T: Copy>(&self, out: &[T], f: impl Fn(T) -> f64) -> Vec<f64> {
        let d = self.shape.d as usize;
        let sh = &self.shape;
        sample_rows(sh, CPU_ROWS, self.seed)
            .into_iter()
            .flat_map(|(b, h, i)| {
                let at = ((b * sh.h as usize + h) * sh.s as usize + i) * d;
                out[at..at + d].iter().map(|&x| f(x)).collect::<Vec<_>>()
            })
            .collect()
    }

    /// Compiles a version and binds its arguments (tensor maps included) to this problem.
    pub fn prepare(&self, ladder: &KernelRecipe, v: &KernelVersion) -> Result<Prepared> {
        let source = ladder.read(&v.source)?;
        let mut options = vec![format!("-DHEAD_DIM={}", self.shape.d)];
        options.extend(v.options.iter().cloned());
        let kernel = self.dev.kernel(&v.source, &source, &v.entry, &options)?;
        let launch = v.launch_on(&self.shape, self.dev.sm_count()? as u32)?;
        let rows = (self.shape.b * self.shape.h * self.shape.s) as u64;
        let maps = v
            .tensor_maps
            .iter()
            .map(|m| {
                let base = match m.tensor.as_str() {
                    "Q" => self.q.ptr,
                    "K" => self.k.ptr,
                    "V" => self.v.ptr,
                    _ => self.o.ptr,
                };
                tensor_map_2d(
                    base,
                    rows,
                    self.shape.d as u64,
                    m.box_rows,
                    m.box_cols,
                    m.swizzle,
                )
                .with_context(|| format!("tensor map of {}", m.tensor))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut args = Box::new(self.args(self.o.ptr, maps));
        let pointers = args.pointers();
        Ok(Prepared {
            kernel,
            launch,
            _args: args,
            pointers,
        })
    }

    pub fn run(&self, p: &mut Prepared) -> Result<()> {
        self.dev.launch(&p.kernel, &p.launch, &mut p.pointers)
    }

    /// Poisons the output, launches once, and measures the error against the GPU
    /// reference (every element) and the CPU rows.
    pub fn check(&self, p: &mut Prepared) -> Result<ErrorStats> {
        self.dev.fill_u16(&self.o, POISON)?;
        self.run(p)?;
        self.dev.sync()?;
        let out: Vec<f16> = self.dev.download(&self.o)?;
        self.check_output(&out)
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
        self.dev.fill_u16(&self.o, POISON)
    }

    /// Checks what the output holds now against the reference.
    pub fn check_current(&self) -> Result<ErrorStats> {
        self.dev.sync()?;
        let out: Vec<f16> = self.dev.download(&self.o)?;
        self.check_output(&out)
    }
}
