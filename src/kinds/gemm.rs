//! The fp16 GEMM kind, host side: C = A·B with fp16 inputs, fp32 accumulation and fp16
//! output, A `[M, K]` row-major and B stored column-major, that is as Bt `[N, K]`
//! row-major (how a linear layer keeps its weight). Every kernel of the kind takes
//! `(A, Bt, C, M, N, K)` (kernels/gemm/README.md).
//!
//! What is here: the shape and its FLOP and byte counts, the seeded inputs of each
//! input kind, the fp64 CPU recomputation of an output row, the rows a check samples,
//! the check cases and the baselines. The cuBLAS baseline's device code is in
//! `gpu::worker::baselines::cublas_gemm`.

use super::{Baseline, BaselineRun, Dim, ProblemKind, Scalar, Shape, Tensor};
use crate::seeded::Rng;
use half::f16;
use std::fmt;
use std::str::FromStr;

/// A GEMM problem shape: C is `[M, N]`, the reduction runs over K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GemmShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl GemmShape {
    /// The timed shape of the GEMM ladder: 8192³.
    pub const REFERENCE: GemmShape = GemmShape::cube(8192);

    /// The other shapes the ladder is measured at: 4096³, and 4000³, a multiple of no
    /// tile, so every edge tile is partial.
    pub const OTHER_SHAPES: [GemmShape; 2] = [GemmShape::cube(4096), GemmShape::cube(4000)];

    const fn cube(s: u32) -> GemmShape {
        GemmShape { m: s, n: s, k: s }
    }

    /// FLOP of one product: 2·M·N·K (a multiply and an add per term).
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// Bytes one product must move at the least: 2·(M·K + N·K + M·N), both fp16
    /// operands read once and the fp16 output written once.
    pub fn bytes(&self) -> f64 {
        let (m, n, k) = (self.m as f64, self.n as f64, self.k as f64);
        2.0 * (m * k + n * k + m * n)
    }

    /// Elements of A, `[M, K]`.
    pub fn a_len(&self) -> usize {
        self.m as usize * self.k as usize
    }

    /// Elements of Bt, `[N, K]`.
    pub fn bt_len(&self) -> usize {
        self.n as usize * self.k as usize
    }

    /// Elements of C, `[M, N]`.
    pub fn c_len(&self) -> usize {
        self.m as usize * self.n as usize
    }
}

impl fmt::Display for GemmShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.m, self.n, self.k)
    }
}

impl FromStr for GemmShape {
    type Err = String;
    /// `M,N,K`: three positive integers.
    fn from_str(s: &str) -> Result<GemmShape, String> {
        let bad =
            || format!("shape {s:?} is not M,N,K (three positive integers, e.g. 8192,8192,8192)");
        let n: Vec<u32> = s
            .split(',')
            .map(|p| p.trim().parse::<u32>().ok().filter(|&v| v > 0))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        match n[..] {
            [m, n, k] => Ok(GemmShape { m, n, k }),
            _ => Err(bad()),
        }
    }
}

/// What the inputs of a check look like: each kind is built to catch one way a GEMM
/// kernel can be wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A and Bt uniform in [-1, 1): the timed runs' inputs.
    Uniform,
    /// Every product of a row of A and a row of Bt near +256 over the first half of K
    /// and near −256 over the second, with small random parts: an output element's
    /// running sum climbs past fp16's largest finite value (65504) halfway through K,
    /// for K of 584 or more, and comes back down to a value that fits in fp16 for every
    /// K. A kernel that accumulates in fp16 overflows; fp32 accumulation passes.
    LargeMagnitudes,
    /// A all zero, Bt uniform: C must be exactly zero, which catches an accumulator not
    /// initialised and garbage read from shared memory.
    ZeroA,
}

/// A and Bt of one problem, fp16, both row-major with K contiguous.
pub struct Inputs {
    pub shape: GemmShape,
    /// `[M, K]`.
    pub a: Vec<f16>,
    /// `[N, K]`: B stored column-major.
    pub bt: Vec<f16>,
}

impl Inputs {
    /// The inputs of `kind` at `shape`: the same seed gives the same inputs.
    pub fn of_kind(shape: GemmShape, kind: InputKind, seed: u64) -> Inputs {
        let mut rng = Rng::new(seed);
        let mut uniform = |n: usize, scale: f32| -> Vec<f16> {
            (0..n)
                .map(|_| f16::from_f32(rng.next_signed() * scale))
                .collect()
        };
        let (a, bt) = match kind {
            InputKind::Uniform => (uniform(shape.a_len(), 1.0), uniform(shape.bt_len(), 1.0)),
            InputKind::ZeroA => (vec![f16::ZERO; shape.a_len()], uniform(shape.bt_len(), 1.0)),
            InputKind::LargeMagnitudes => {
                // A = 16 + r and Bt = ±16 + r', |r|, |r'| < ρ: each product is ±256 plus
                // at most 33ρ. The ±256 cancel between the halves of K, so the final
                // value is within 33ρ·K + 256 (the 256 for an odd K) of zero; ρ
                // shrinks for K over 1024 to keep that under 34 048. The running sum
                // at K/2 is at least (16 − ρ)²·⌊K/2⌋ ≥ 225·⌊K/2⌋.
                let k = shape.k as usize;
                let rho = (1024.0 / k as f32).min(1.0);
                let a = uniform(shape.a_len(), rho)
                    .into_iter()
                    .map(|r| f16::from_f32(16.0 + r.to_f32()))
                    .collect();
                let bt = uniform(shape.bt_len(), rho)
                    .into_iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let sign = if i % k < k / 2 { 1.0 } else { -1.0 };
                        f16::from_f32(sign * 16.0 + r.to_f32())
                    })
                    .collect();
                (a, bt)
            }
        };
        Inputs { shape, a, bt }
    }

    /// Row `m` of A.
    #[cfg(test)]
    fn a_row(&self, m: usize) -> &[f16] {
        let k = self.shape.k as usize;
        &self.a[m * k..][..k]
    }

    /// Row `n` of Bt, that is column `n` of B.
    #[cfg(test)]
    fn bt_row(&self, n: usize) -> &[f16] {
        let k = self.shape.k as usize;
        &self.bt[n * k..][..k]
    }

    /// Row `m` of C computed in fp64 from the fp16 inputs: what a kernel's output row is
    /// checked against.
    pub fn reference_row(&self, m: usize) -> Vec<f64> {
        reference_row(&self.shape, &self.a, &self.bt, m)
    }
}

/// Row `m` of C = A·B in fp64 from A `[M, K]` and Bt `[N, K]`.
fn reference_row(shape: &GemmShape, a: &[f16], bt: &[f16], m: usize) -> Vec<f64> {
    let k = shape.k as usize;
    let a = &a[m * k..][..k];
    (0..shape.n as usize)
        .map(|n| {
            a.iter()
                .zip(&bt[n * k..][..k])
                .map(|(x, y)| x.to_f64() * y.to_f64())
                .sum()
        })
        .collect()
}

/// Rows of C to recompute on the CPU: `count` distinct rows in order (all M of them
/// when M is not larger), always with the first and the last row, where partial tiles
/// live, so never fewer than those two. The same seed gives the same rows.
pub fn sample_rows(shape: &GemmShape, count: usize, seed: u64) -> Vec<usize> {
    super::sample_distinct_rows(shape.m as usize, count, seed)
}

/// One check case of the GEMM kind, before it becomes a [`super::Case`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Case {
    pub name: &'static str,
    pub shape: GemmShape,
    pub inputs: InputKind,
    /// What wrong GEMM it catches, in one line, for a failure message.
    pub catches: &'static str,
}

const fn shape(m: u32, n: u32, k: u32) -> GemmShape {
    GemmShape { m, n, k }
}

/// The cases every GEMM version is to be checked on beside the timed shape: each is
/// built to catch one way a GEMM kernel goes wrong while passing gentle inputs.
pub fn cases() -> Vec<Case> {
    use InputKind::*;
    let c = |name, shape, inputs, catches| Case {
        name,
        shape,
        inputs,
        catches,
    };
    vec![
        c(
            "k-not-multiple-64",
            shape(256, 256, 1000),
            Uniform,
            "a last K tile that is partial (K = 1000, a multiple of 8 but not of 64), read past or dropped",
        ),
        c(
            "k-not-multiple-8",
            shape(256, 256, 1001),
            Uniform,
            "an odd K (1001), whose rows do not hold 16-byte vectors whole: the element-load fallback",
        ),
        c(
            "partial-tiles",
            shape(1000, 777, 512),
            Uniform,
            "M and N multiples of no tile: edge tiles loaded or stored without bounds checks",
        ),
        c(
            "large-magnitudes",
            shape(256, 256, 1024),
            LargeMagnitudes,
            "running sums past 65504 whose result fits in fp16: accumulation in fp16 instead of fp32",
        ),
        c(
            "zero-a",
            shape(1000, 777, 512),
            ZeroA,
            "A all zero, so C must be exactly zero: an accumulator not initialised, garbage from shared memory",
        ),
        c(
            "small",
            shape(7, 5, 16),
            Uniform,
            "a problem smaller than one tile in every dimension",
        ),
        c(
            "one-element",
            shape(1, 1, 1),
            Uniform,
            "a 1×1 output over K = 1: loops that assume at least one whole tile or vector",
        ),
    ]
}

/// A seed of its own for each case, derived from the run's ([`crate::seeded::case_seed`]).
#[cfg(test)]
fn case_seed(run_seed: u64, case: &Case) -> u64 {
    crate::seeded::case_seed(run_seed, case.name)
}

/// The GEMM kind, as the generic code sees it.
pub struct Gemm;

const DIMS: &[Dim] = &[
    Dim {
        name: "M",
        what: "rows of A and C",
    },
    Dim {
        name: "N",
        what: "columns of B and C (rows of Bt)",
    },
    Dim {
        name: "K",
        what: "the reduction: columns of A, rows of B",
    },
];

const BASELINES: &[Baseline] = &[
    Baseline {
        id: "cublas",
        title: "cuBLAS (cublasGemmStridedBatchedEx, one batch: fp16 in, fp32 accumulation)",
        runs: BaselineRun::Builtin,
    },
    Baseline {
        id: "torch-matmul",
        title: "PyTorch torch.matmul (cuBLAS through PyTorch)",
        runs: BaselineRun::Script,
    },
];

impl GemmShape {
    /// The dimensions of a GEMM [`Shape`].
    pub fn of(s: &Shape) -> GemmShape {
        let d = s.dims();
        GemmShape {
            m: d[0],
            n: d[1],
            k: d[2],
        }
    }
}

impl InputKind {
    const NAMES: [(&'static str, InputKind); 3] = [
        ("uniform", InputKind::Uniform),
        ("large-magnitudes", InputKind::LargeMagnitudes),
        ("zero-a", InputKind::ZeroA),
    ];

    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("uniform", |(n, _)| n)
    }

    fn named(name: &str) -> InputKind {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(InputKind::Uniform, |(_, k)| *k)
    }
}

/// A GEMM shape from M, N and K.
pub fn gemm_shape(m: u32, n: u32, k: u32) -> Shape {
    Shape::new(super::Kind::of(&Gemm), &[m, n, k]).expect("positive dimensions")
}

impl ProblemKind for Gemm {
    fn name(&self) -> &'static str {
        "gemm"
    }

    fn what(&self) -> &'static str {
        "fp16 GEMM: C = A·B, A [M, K] row-major, B column-major as Bt [N, K], fp32 accumulation"
    }

    fn dims(&self) -> &'static [Dim] {
        DIMS
    }

    fn reference_shape(&self) -> &'static str {
        "8192,8192,8192"
    }

    fn flops(&self, s: &Shape) -> f64 {
        GemmShape::of(s).flops()
    }

    fn bytes(&self, s: &Shape) -> f64 {
        GemmShape::of(s).bytes()
    }

    fn tensors(&self, s: &Shape) -> Vec<Tensor> {
        let g = GemmShape::of(s);
        let t = |name, rows: u32, cols: u32, output| Tensor {
            name,
            rows: rows.into(),
            cols: cols.into(),
            output,
        };
        vec![
            t("A", g.m, g.k, false),
            t("Bt", g.n, g.k, false),
            t("C", g.m, g.n, true),
        ]
    }

    fn scalars(&self, s: &Shape) -> Vec<Scalar> {
        let g = GemmShape::of(s);
        vec![
            Scalar::I32(g.m as i32),
            Scalar::I32(g.n as i32),
            Scalar::I32(g.k as i32),
        ]
    }

    fn input_names(&self) -> &'static [&'static str] {
        &["uniform", "large-magnitudes", "zero-a"]
    }

    fn inputs(&self, s: &Shape, inputs: &str, seed: u64) -> Vec<Vec<f16>> {
        let x = Inputs::of_kind(GemmShape::of(s), InputKind::named(inputs), seed);
        vec![x.a, x.bt]
    }

    fn output_rows(&self, s: &Shape, inputs: &[Vec<f16>], rows: &[usize]) -> Vec<Vec<f64>> {
        let g = GemmShape::of(s);
        rows.iter()
            .map(|&m| reference_row(&g, &inputs[0], &inputs[1], m))
            .collect()
    }

    /// 16 rows of 8192 columns over K = 8192 are 1.1·10⁹ products in fp64.
    fn cpu_rows(&self) -> usize {
        16
    }

    fn sample_rows(&self, s: &Shape, count: usize, seed: u64) -> Vec<usize> {
        sample_rows(&GemmShape::of(s), count, seed)
    }

    fn cases(&self, _timed: &Shape) -> Vec<super::Case> {
        cases()
            .into_iter()
            .map(|c| super::Case {
                name: c.name,
                shape: gemm_shape(c.shape.m, c.shape.n, c.shape.k),
                inputs: c.inputs.name(),
                catches: c.catches,
            })
            .collect()
    }

    fn baselines(&self) -> &'static [Baseline] {
        BASELINES
    }

    fn reference_baselines(&self) -> &'static [&'static str] {
        &["torch-matmul", "cublas"]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str) -> Case {
        cases().into_iter().find(|c| c.name == name).unwrap()
    }

    fn inputs(c: &Case) -> Inputs {
        Inputs::of_kind(c.shape, c.inputs, case_seed(1, c))
    }

    #[test]
    fn shapes_parse_as_m_n_k() {
        let s: GemmShape = "8192,8192,8192".parse().unwrap();
        assert_eq!(s, GemmShape::REFERENCE);
        assert_eq!(
            " 1000, 777 ,512".parse::<GemmShape>(),
            Ok(shape(1000, 777, 512))
        );
        assert_eq!(shape(1000, 777, 512).to_string(), "1000,777,512");
        let back: GemmShape = GemmShape::OTHER_SHAPES[1].to_string().parse().unwrap();
        assert_eq!(back, shape(4000, 4000, 4000));
        for bad in [
            "",
            "8192",
            "8192,8192",
            "1,2,3,4",
            "0,8,8",
            "8,-1,8",
            "8,x,8",
            "8,8,",
        ] {
            let err = bad.parse::<GemmShape>().unwrap_err();
            assert!(err.contains("M,N,K"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn flops_and_bytes_of_the_reference_shape() {
        let s = GemmShape::REFERENCE;
        assert_eq!(s.flops(), 2.0 * 8192f64.powi(3));
        assert!((s.flops() - 1.0995e12).abs() < 0.0001e12);
        assert_eq!(s.bytes(), 6.0 * 8192f64.powi(2));
        let t = shape(2, 3, 5);
        assert_eq!(t.flops(), 60.0);
        assert_eq!(t.bytes(), 2.0 * (10.0 + 15.0 + 6.0));
        assert_eq!(GemmShape::OTHER_SHAPES[0], shape(4096, 4096, 4096));
        let odd = GemmShape::OTHER_SHAPES[1].k;
        assert!(odd.is_multiple_of(8) && !odd.is_multiple_of(64));
    }

    #[test]
    fn inputs_are_seeded_per_kind() {
        let s = shape(33, 17, 40);
        for kind in [InputKind::Uniform, InputKind::LargeMagnitudes] {
            let x = Inputs::of_kind(s, kind, 7);
            let y = Inputs::of_kind(s, kind, 7);
            let z = Inputs::of_kind(s, kind, 8);
            assert_eq!((x.a.len(), x.bt.len()), (33 * 40, 17 * 40));
            assert_eq!((&x.a, &x.bt), (&y.a, &y.bt), "{kind:?}");
            assert!(x.a != z.a && x.bt != z.bt, "{kind:?}");
        }
        let x = Inputs::of_kind(s, InputKind::Uniform, 7);
        let zeros = x.a.iter().filter(|v| v.to_f32() == 0.0).count();
        assert!(zeros < x.a.len() / 10);
        let max = x.bt.iter().map(|v| v.to_f32().abs()).fold(0.0, f32::max);
        assert!(max > 0.5 && max <= 1.0);
    }

    /// Element (m, n) of C summed term by term in fp64: the running sums and the last.
    fn running_sums(x: &Inputs, m: usize, n: usize) -> Vec<f64> {
        x.a_row(m)
            .iter()
            .zip(x.bt_row(n))
            .scan(0.0, |acc, (a, b)| {
                *acc += a.to_f64() * b.to_f64();
                Some(*acc)
            })
            .collect()
    }

    #[test]
    fn large_magnitudes_overflow_an_fp16_accumulator_but_not_the_result() {
        let c = case("large-magnitudes");
        let x = inputs(&c);
        let (m_last, n_last) = (c.shape.m as usize - 1, c.shape.n as usize - 1);
        for (m, n) in [(0, 0), (3, 200), (m_last, n_last), (m_last, 0)] {
            let sums = running_sums(&x, m, n);
            let exact = *sums.last().unwrap();
            let peak = sums.iter().fold(0.0f64, |p, s| p.max(s.abs()));
            assert!(peak > 65504.0, "({m}, {n}): peak {peak}");
            assert!(exact.abs() <= 65504.0, "({m}, {n}): result {exact}");
            assert!(exact != 0.0);
            assert!((exact - x.reference_row(m)[n]).abs() < 1e-9);
            // fp16 accumulation: each product rounded to fp16, then added in fp16.
            let acc = x
                .a_row(m)
                .iter()
                .zip(x.bt_row(n))
                .fold(f16::ZERO, |acc, (a, b)| acc + *a * *b);
            let err = (acc.to_f64() - exact).abs();
            let rounding = exact.abs() * f16::EPSILON.to_f64() + 1.0;
            assert!(
                err.is_nan() || err > 100.0 * rounding,
                "({m}, {n}): fp16 {acc} vs {exact}"
            );
        }
        // Every element of a sampled row fits in fp16.
        for m in sample_rows(&c.shape, 8, 2) {
            assert!(x.reference_row(m).iter().all(|v| v.abs() <= 65504.0));
        }
    }

    #[test]
    fn large_magnitudes_fit_at_a_long_k_too() {
        let x = Inputs::of_kind(shape(2, 3, 8193), InputKind::LargeMagnitudes, 5);
        for m in 0..2 {
            let row = x.reference_row(m);
            assert!(row.iter().all(|v| v.abs() <= 65504.0), "{row:?}");
            let peak = running_sums(&x, m, 1).iter().fold(0.0f64, |p, s| p.max(*s));
            assert!(peak > 65504.0);
        }
    }

    #[test]
    fn zero_a_gives_rows_of_exact_zeros() {
        let c = case("zero-a");
        let x = inputs(&c);
        assert!(x.a.iter().all(|v| v.to_f32() == 0.0));
        assert!(x.bt.iter().any(|v| v.to_f32() != 0.0));
        for m in [0, 500, c.shape.m as usize - 1] {
            let row = x.reference_row(m);
            assert_eq!(row.len(), c.shape.n as usize);
            assert!(row.iter().all(|v| *v == 0.0));
        }
    }

    #[test]
    fn reference_row_matches_closed_forms() {
        // All ones: every element is K.
        let s = shape(3, 4, 1001);
        let mut x = Inputs::of_kind(s, InputKind::Uniform, 1);
        x.a.fill(f16::ONE);
        x.bt.fill(f16::ONE);
        assert_eq!(x.reference_row(2), vec![1001.0; 4]);
        // A's row m all m + 1, Bt's row n holding 0, 1, …, K − 1 times n: element
        // (m, n) is (m + 1)·n·K(K − 1)/2, which tells the layout of both operands.
        let s = shape(3, 4, 10);
        let (k, n_cols) = (10usize, 4usize);
        let x = Inputs {
            shape: s,
            a: (0..3 * k)
                .map(|i| f16::from_f32((i / k + 1) as f32))
                .collect(),
            bt: (0..n_cols * k)
                .map(|i| f16::from_f32(((i / k) * (i % k)) as f32))
                .collect(),
        };
        for m in 0..3 {
            let want: Vec<f64> = (0..n_cols)
                .map(|n| ((m + 1) * n * k * (k - 1) / 2) as f64)
                .collect();
            assert_eq!(x.reference_row(m), want, "row {m}");
        }
    }

    #[test]
    fn sampled_rows_are_distinct_in_range_with_the_edges() {
        let s = shape(1000, 777, 512);
        let rows = sample_rows(&s, 16, 3);
        assert_eq!(rows.len(), 16);
        assert!(rows.contains(&0) && rows.contains(&999));
        assert!(rows.iter().all(|&r| r < 1000));
        assert!(rows.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(rows, sample_rows(&s, 16, 3));
        assert_ne!(rows, sample_rows(&s, 16, 4));
        assert_eq!(
            sample_rows(&shape(7, 5, 16), 16, 3),
            (0..7).collect::<Vec<_>>()
        );
        assert_eq!(sample_rows(&shape(1, 1, 1), 16, 3), vec![0]);
        assert_eq!(sample_rows(&s, 1, 3), vec![0, 999]);
    }

    #[test]
    fn every_case_has_its_own_seed() {
        let mut seeds: Vec<u64> = cases().iter().map(|c| case_seed(9, c)).collect();
        seeds.sort();
        seeds.dedup();
        assert_eq!(seeds.len(), cases().len());
        let mut names: Vec<&str> = cases().iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), cases().len());
    }

    #[test]
    fn the_cases_stress_what_their_names_say() {
        let k64 = case("k-not-multiple-64").shape.k;
        assert!(
            !k64.is_multiple_of(64) && k64.is_multiple_of(8),
            "K = {k64}"
        );
        let k8 = case("k-not-multiple-8").shape.k;
        assert!(!k8.is_multiple_of(8), "K = {k8}");
        let p = case("partial-tiles").shape;
        assert!(
            [128, 256]
                .iter()
                .all(|&t| !p.m.is_multiple_of(t) && !p.n.is_multiple_of(t))
        );
        let small = case("small").shape;
        assert!(small.m < 16 && small.n < 16 && small.k <= 16);
        assert_eq!(case("zero-a").inputs, InputKind::ZeroA);
        assert!(cases().iter().all(|c| !c.catches.is_empty()));
    }
}
