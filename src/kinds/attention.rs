//! The attention forward kind: O = softmax(Q·Kᵀ·scale)·V per batch and head, with an
//! optional causal mask. Q, K, V and O are `[B, H, S, D]` fp16 contiguous; every kernel
//! of the kind takes `(Q, K, V, O, B, H, S, scale, causal)` and is compiled with
//! `HEAD_DIM` defined. The check's inputs, its fp64 CPU rows and its cases are here; the
//! unfused cuBLAS baseline's device code is in `gpu::worker::baselines::unfused`.

use super::{Baseline, BaselineRun, Case, Dim, Flag, ProblemKind, Scalar, Shape, Tensor};
use crate::seeded::Rng;
use half::f16;

pub struct Attention;

const DIMS: &[Dim] = &[
    Dim {
        name: "B",
        what: "batch",
    },
    Dim {
        name: "H",
        what: "heads",
    },
    Dim {
        name: "S",
        what: "sequence length (queries and keys)",
    },
    Dim {
        name: "D",
        what: "head dimension",
    },
];

const FLAGS: &[Flag] = &[Flag {
    name: "causal",
    what: "the causal mask: query i attends to keys 0..=i",
}];

const BASELINES: &[Baseline] = &[
    Baseline {
        id: "unfused",
        title: "unfused: cuBLAS Q·Kᵀ, softmax kernel, cuBLAS P·V",
        runs: BaselineRun::Builtin,
    },
    Baseline {
        id: "cudnn",
        title: "cuDNN (PyTorch SDPA cuDNN backend)",
        runs: BaselineRun::Script,
    },
    Baseline {
        id: "fa2",
        title: "FlashAttention-2 (PyTorch SDPA flash backend)",
        runs: BaselineRun::Script,
    },
    Baseline {
        id: "mem-efficient",
        title: "memory-efficient attention (PyTorch SDPA)",
        runs: BaselineRun::Script,
    },
];

/// The dimensions of an attention shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    pub b: usize,
    pub h: usize,
    pub s: usize,
    pub d: usize,
    pub causal: bool,
}

impl Dims {
    pub fn of(shape: &Shape) -> Dims {
        let d = shape.dims();
        Dims {
            b: d[0] as usize,
            h: d[1] as usize,
            s: d[2] as usize,
            d: d[3] as usize,
            causal: shape.flag("causal"),
        }
    }

    fn elements(&self) -> usize {
        self.b * self.h * self.s * self.d
    }

    /// The softmax scale, 1/√D.
    pub fn scale(&self) -> f64 {
        1.0 / (self.d as f64).sqrt()
    }
}

/// An attention shape from its dimensions.
pub fn shape(b: u32, h: u32, s: u32, d: u32, causal: bool) -> Shape {
    Shape::new(super::Kind::of(&Attention), &[b, h, s, d])
        .and_then(|s| s.with_flag("causal", causal))
        .expect("positive dimensions")
}

impl ProblemKind for Attention {
    fn name(&self) -> &'static str {
        "attention"
    }

    fn what(&self) -> &'static str {
        "attention forward: O = softmax(Q·Kᵀ/√D)·V, fp16 [B, H, S, D]"
    }

    fn dims(&self) -> &'static [Dim] {
        DIMS
    }

    fn flags(&self) -> &'static [Flag] {
        FLAGS
    }

    fn reference_shape(&self) -> &'static str {
        "1,64,1024,128"
    }

    /// 4·B·H·S²·D, half of it when causal.
    fn flops(&self, s: &Shape) -> f64 {
        let x = Dims::of(s);
        let f = 4.0 * x.b as f64 * x.h as f64 * (x.s as f64).powi(2) * x.d as f64;
        if x.causal { f / 2.0 } else { f }
    }

    /// Q, K and V read and O written once: 4 tensors of B·H·S·D fp16.
    fn bytes(&self, s: &Shape) -> f64 {
        4.0 * 2.0 * Dims::of(s).elements() as f64
    }

    fn tensors(&self, s: &Shape) -> Vec<Tensor> {
        let x = Dims::of(s);
        let (rows, cols) = ((x.b * x.h * x.s) as u64, x.d as u64);
        ["Q", "K", "V", "O"]
            .into_iter()
            .map(|name| Tensor {
                name,
                rows,
                cols,
                output: name == "O",
            })
            .collect()
    }

    fn scalars(&self, s: &Shape) -> Vec<Scalar> {
        let x = Dims::of(s);
        vec![
            Scalar::I32(x.b as i32),
            Scalar::I32(x.h as i32),
            Scalar::I32(x.s as i32),
            Scalar::F32(x.scale() as f32),
            Scalar::I32(x.causal as i32),
        ]
    }

    fn defines(&self, s: &Shape) -> Vec<String> {
        vec![format!("-DHEAD_DIM={}", Dims::of(s).d)]
    }

    fn input_names(&self) -> &'static [&'static str] {
        &[
            "uniform",
            "large-logits",
            "max-in-last-tile",
            "equal-scores",
        ]
    }

    fn inputs(&self, s: &Shape, inputs: &str, seed: u64) -> Vec<Vec<f16>> {
        let x = Inputs::of_kind(Dims::of(s), InputKind::named(inputs), seed);
        vec![x.q, x.k, x.v]
    }

    fn output_rows(&self, s: &Shape, inputs: &[Vec<f16>], rows: &[usize]) -> Vec<Vec<f64>> {
        let x = Dims::of(s);
        let view = InputsRef {
            dims: x,
            q: &inputs[0],
            k: &inputs[1],
            v: &inputs[2],
        };
        rows.iter()
            .map(|&r| view.reference_row(r / (x.h * x.s), (r / x.s) % x.h, r % x.s))
            .collect()
    }

    fn sample_rows(&self, s: &Shape, count: usize, seed: u64) -> Vec<usize> {
        let x = Dims::of(s);
        super::sample_distinct_rows(x.b * x.h * x.s, count, seed)
    }

    fn cases(&self, timed: &Shape) -> Vec<Case> {
        cases(Dims::of(timed).d as u32)
    }

    fn baselines(&self) -> &'static [Baseline] {
        BASELINES
    }

    fn reference_baselines(&self) -> &'static [&'static str] {
        &["fa2", "cudnn"]
    }
}

/// What the inputs of a check look like: each is built to catch one way a kernel can be
/// wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InputKind {
    /// K and V uniform in [-1, 1), Q in [-2, 2): scores spread over a useful range.
    Uniform,
    /// Q and K uniform in [-8, 8): scores with a standard deviation near 21 that reach
    /// ±100, so that a softmax which does not subtract the row maximum overflows.
    LargeLogits,
    /// Q positive, and the last key of every head far more aligned with it than the
    /// others: each row's maximum sits in the last key tile, found after the rest.
    MaxInLastTile,
    /// Every key of a head equal: all scores of a row tie and the output is V's mean.
    EqualScores,
}

impl InputKind {
    fn named(name: &str) -> InputKind {
        match name {
            "large-logits" => InputKind::LargeLogits,
            "max-in-last-tile" => InputKind::MaxInLastTile,
            "equal-scores" => InputKind::EqualScores,
            _ => InputKind::Uniform,
        }
    }
}

/// Q, K and V of one problem, [B, H, S, D] contiguous, fp16.
struct Inputs {
    q: Vec<f16>,
    k: Vec<f16>,
    v: Vec<f16>,
}

impl Inputs {
    fn of_kind(dims: Dims, kind: InputKind, seed: u64) -> Inputs {
        let n = dims.elements();
        let mut rng = Rng::new(seed);
        let mut fill = |lo: f32, hi: f32| -> Vec<f16> {
            (0..n)
                .map(|_| {
                    let u = (rng.next_signed() + 1.0) / 2.0;
                    f16::from_f32(lo + u * (hi - lo))
                })
                .collect()
        };
        let (q, mut k, v) = match kind {
            InputKind::Uniform => (fill(-2.0, 2.0), fill(-1.0, 1.0), fill(-1.0, 1.0)),
            InputKind::LargeLogits => (fill(-8.0, 8.0), fill(-8.0, 8.0), fill(-1.0, 1.0)),
            InputKind::MaxInLastTile | InputKind::EqualScores => {
                (fill(0.0, 1.0), fill(-1.0, 1.0), fill(-1.0, 1.0))
            }
        };
        let (d, s) = (dims.d, dims.s);
        for head in 0..dims.b * dims.h {
            let keys = &mut k[head * s * d..(head + 1) * s * d];
            match kind {
                InputKind::MaxInLastTile => keys[(s - 1) * d..].fill(f16::from_f32(2.0)),
                InputKind::EqualScores => {
                    let (first, rest) = keys.split_at_mut(d);
                    for row in rest.chunks_mut(d) {
                        row.copy_from_slice(first);
                    }
                }
                _ => {}
            }
        }
        Inputs { q, k, v }
    }

    #[cfg(test)]
    fn view(&self, dims: Dims) -> InputsRef<'_> {
        InputsRef {
            dims,
            q: &self.q,
            k: &self.k,
            v: &self.v,
        }
    }
}

/// Q, K and V borrowed, to recompute output rows from.
struct InputsRef<'a> {
    dims: Dims,
    q: &'a [f16],
    k: &'a [f16],
    v: &'a [f16],
}

impl InputsRef<'_> {
    fn row(&self, b: usize, h: usize, s: usize) -> usize {
        let x = &self.dims;
        ((b * x.h + h) * x.s + s) * x.d
    }

    /// Output row (b, h, i) computed in fp64 from the fp16 inputs.
    fn reference_row(&self, b: usize, h: usize, i: usize) -> Vec<f64> {
        let x = &self.dims;
        let d = x.d;
        let q = &self.q[self.row(b, h, i)..][..d];
        let keys = if x.causal { i + 1 } else { x.s };
        let scale = x.scale();
        let mut scores = Vec::with_capacity(keys);
        for j in 0..keys {
            let k = &self.k[self.row(b, h, j)..][..d];
            let dot: f64 = q.iter().zip(k).map(|(a, b)| a.to_f64() * b.to_f64()).sum();
            scores.push(dot * scale);
        }
        let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let mut sum = 0.0;
        for s in scores.iter_mut() {
            *s = (*s - max).exp();
            sum += *s;
        }
        let mut out = vec![0.0; d];
        for (j, p) in scores.iter().enumerate() {
            let v = &self.v[self.row(b, h, j)..][..d];
            for (o, x) in out.iter_mut().zip(v) {
                *o += p * x.to_f64();
            }
        }
        out.iter_mut().for_each(|o| *o /= sum);
        out
    }
}

/// The cases at head dimension `d`.
fn cases(d: u32) -> Vec<Case> {
    let c = |name, shape, inputs, catches| Case {
        name,
        shape,
        inputs,
        catches,
    };
    vec![
        c(
            "large-logits",
            shape(1, 8, 512, d, false),
            "large-logits",
            "scores reaching ±100, which overflow a softmax that does not subtract the row maximum",
        ),
        c(
            "max-in-last-tile",
            shape(1, 8, 1024, d, false),
            "max-in-last-tile",
            "each row's maximum in the last key tile, where the running maximum must rescale late",
        ),
        c(
            "equal-scores",
            shape(1, 8, 512, d, false),
            "equal-scores",
            "rows whose scores all tie, whose output is the mean of V",
        ),
        c(
            "partial-tiles-1000",
            shape(1, 64, 1000, d, false),
            "uniform",
            "several work items per block with a partial last key tile",
        ),
        c(
            "partial-tiles-777",
            shape(4, 32, 777, d, false),
            "uniform",
            "several batches and work items per block, a partial key tile",
        ),
        c(
            "partial-tiles-777-causal",
            shape(4, 32, 777, d, true),
            "uniform",
            "the causal mask across partial tiles",
        ),
        c(
            "small-odd",
            shape(1, 80, 200, d, false),
            "uniform",
            "a small odd shape, fewer rows than one tile",
        ),
        c(
            "small-causal-odd",
            shape(2, 3, 333, d, true),
            "uniform",
            "the causal mask on a problem of fewer query tiles than SMs, partial tiles, \
             where a version may take a small-problem path",
        ),
        c(
            "causal-s1",
            shape(1, 4, 1, d, true),
            "uniform",
            "causal with one query and one key",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeded::case_seed;

    fn dims(b: usize, h: usize, s: usize, d: usize) -> Dims {
        Dims {
            b,
            h,
            s,
            d,
            causal: false,
        }
    }

    fn scores(dims: Dims, x: &Inputs, row: usize) -> Vec<f64> {
        let (d, s) = (dims.d, dims.s);
        let q = &x.q[row * d..][..d];
        (0..s)
            .map(|j| {
                let k = &x.k[j * d..][..d];
                q.iter()
                    .zip(k)
                    .map(|(a, b)| a.to_f64() * b.to_f64())
                    .sum::<f64>()
                    / (d as f64).sqrt()
            })
            .collect()
    }

    fn case(name: &str) -> (Dims, Inputs) {
        let c = cases(128).into_iter().find(|c| c.name == name).unwrap();
        let dims = Dims::of(&c.shape);
        let x = Inputs::of_kind(dims, InputKind::named(c.inputs), case_seed(1, c.name));
        (dims, x)
    }

    #[test]
    fn inputs_are_seeded_and_not_zero() {
        let shape = dims(1, 2, 16, 8);
        let a = Inputs::of_kind(shape, InputKind::Uniform, 7);
        let b = Inputs::of_kind(shape, InputKind::Uniform, 7);
        let c = Inputs::of_kind(shape, InputKind::Uniform, 8);
        assert_eq!(a.q, b.q);
        assert_ne!(a.q, c.q);
        assert!(a.q.iter().filter(|x| x.to_f32() == 0.0).count() < a.q.len() / 10);
        let m = a.k.iter().map(|x| x.to_f32().abs()).fold(0.0, f32::max);
        assert!(m > 0.5 && m <= 1.0);
    }

    #[test]
    fn reference_row_is_a_softmax_average_of_v() {
        let mut shape = dims(1, 1, 4, 2);
        let mut x = Inputs::of_kind(shape, InputKind::Uniform, 1);
        // All scores equal: the output is the mean of V's rows.
        x.q.iter_mut().for_each(|v| *v = f16::ZERO);
        let row = x.view(shape).reference_row(0, 0, 3);
        for (d, got) in row.iter().enumerate() {
            let mean: f64 = (0..4).map(|j| x.v[j * 2 + d].to_f64()).sum::<f64>() / 4.0;
            assert!((got - mean).abs() < 1e-12);
        }
        // Causal row 0 sees only key 0: the output is V's first row.
        shape.causal = true;
        let row = x.view(shape).reference_row(0, 0, 0);
        assert!((row[1] - x.v[1].to_f64()).abs() < 1e-12);
    }

    #[test]
    fn output_rows_address_batch_head_and_query() {
        let s = shape(2, 3, 5, 4, true);
        let k = super::super::Kind::of(&Attention);
        let inputs = k.inputs(&s, "uniform", 3);
        let x = Inputs::of_kind(Dims::of(&s), InputKind::Uniform, 3);
        // Row (b=1, h=2, i=4) is flat row (1·3 + 2)·5 + 4 = 29, the last.
        let got = k.output_rows(&s, &inputs, &[29, 0]);
        assert_eq!(got[0], x.view(Dims::of(&s)).reference_row(1, 2, 4));
        assert_eq!(got[1], x.view(Dims::of(&s)).reference_row(0, 0, 0));
        assert_eq!(k.sample_rows(&s, 8, 1).last(), Some(&29));
    }

    #[test]
    fn the_argument_list_is_q_k_v_o_then_b_h_s_scale_causal() {
        let k = super::super::Kind::of(&Attention);
        let s = shape(1, 64, 1024, 128, true);
        let names: Vec<&str> = k.tensors(&s).iter().map(|t| t.name).collect();
        assert_eq!(names, ["Q", "K", "V", "O"]);
        assert_eq!(s.output().rows, 64 * 1024);
        assert_eq!(
            k.scalars(&s),
            [
                Scalar::I32(1),
                Scalar::I32(64),
                Scalar::I32(1024),
                Scalar::F32(1.0 / 128f32.sqrt()),
                Scalar::I32(1)
            ]
        );
        assert_eq!(k.defines(&s), ["-DHEAD_DIM=128"]);
        assert_eq!(s.flops(), 34_359_738_368.0 / 2.0);
    }

    #[test]
    fn large_logits_reach_fifty_and_beyond() {
        let (d, x) = case("large-logits");
        let max = (0..16)
            .flat_map(|r| scores(d, &x, r))
            .fold(0.0f64, |m, s| m.max(s.abs()));
        assert!(max > 50.0, "largest |score| {max}");
    }

    #[test]
    fn the_row_maximum_is_the_last_key() {
        let (d, x) = case("max-in-last-tile");
        for r in [0, 7, 511, 1023] {
            let s = scores(d, &x, r);
            let arg = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap();
            assert_eq!(arg, s.len() - 1, "row {r}");
        }
    }

    #[test]
    fn equal_scores_tie_within_a_row() {
        let (d, x) = case("equal-scores");
        let s = scores(d, &x, 3);
        assert!(s.iter().all(|v| *v == s[0]), "{:?}", &s[..4]);
        assert!(x.v.iter().any(|v| v.to_f32() != x.v[0].to_f32()));
    }

    #[test]
    fn every_case_has_its_own_seed() {
        let mut seeds: Vec<u64> = cases(128).iter().map(|c| case_seed(9, c.name)).collect();
        seeds.sort();
        seeds.dedup();
        assert_eq!(seeds.len(), cases(128).len());
    }
}
