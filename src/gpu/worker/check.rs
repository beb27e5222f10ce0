//! Checking a version's output: seeded random inputs and an fp64 CPU recomputation of a
//! random sample of rows (the error measures are [`crate::gpu::wire::ErrorStats`]). Pure
//! host code.

use crate::model::Shape;
use crate::seeded::Rng;
use half::f16;

/// Q, K and V of one problem, [B, H, S, D] contiguous, fp16.
pub struct Inputs {
    pub shape: Shape,
    pub q: Vec<f16>,
    pub k: Vec<f16>,
    pub v: Vec<f16>,
}

/// What the inputs of a check look like: each kind is built to catch one way a kernel
/// can be wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputKind {
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

impl Inputs {
    /// The inputs of the timed runs: [`InputKind::Uniform`].
    pub fn random(shape: Shape, seed: u64) -> Inputs {
        Inputs::of_kind(shape, InputKind::Uniform, seed)
    }

    pub fn of_kind(shape: Shape, kind: InputKind, seed: u64) -> Inputs {
        let n = shape.elements();
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
        let (d, s) = (shape.d as usize, shape.s as usize);
        for head in 0..(shape.b * shape.h) as usize {
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
        Inputs { shape, q, k, v }
    }

    fn row(&self, b: usize, h: usize, s: usize) -> usize {
        let sh = &self.shape;
        ((b * sh.h as usize + h) * sh.s as usize + s) * sh.d as usize
    }

    /// One output row computed in fp64 from the fp16 inputs.
    pub fn reference_row(
        &self,
        b: usize,
        h: usize,
        i: usize,
        causal: bool,
        scale: f64,
    ) -> Vec<f64> {
        let sh = &self.shape;
        let d = sh.d as usize;
        let q = &self.q[self.row(b, h, i)..][..d];
        let keys = if causal { i + 1 } else { sh.s as usize };
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

/// Rows (b, h, i) to recompute on the CPU: a random sample, always with the first and
/// last query row (the causal mask's edge cases).
pub fn sample_rows(shape: &Shape, count: usize, seed: u64) -> Vec<(usize, usize, usize)> {
    let mut rng = Rng::new(seed ^ 0x5EED_0FC0_FFEE);
    let (b, h, s) = (shape.b as u64, shape.h as u64, shape.s as u64);
    let mut rows = vec![
        (0, 0, 0),
        ((b - 1) as usize, (h - 1) as usize, (s - 1) as usize),
    ];
    while rows.len() < count {
        rows.push((
            rng.below(b) as usize,
            rng.below(h) as usize,
            rng.below(s) as usize,
        ));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_seeded_and_not_zero() {
        let shape = Shape {
            b: 1,
            h: 2,
            s: 16,
            d: 8,
        };
        let a = Inputs::random(shape, 7);
        let b = Inputs::random(shape, 7);
        let c = Inputs::random(shape, 8);
        assert_eq!(a.q, b.q);
        assert_ne!(a.q, c.q);
        assert!(a.q.iter().filter(|x| x.to_f32() == 0.0).count() < a.q.len() / 10);
        let m = a.k.iter().map(|x| x.to_f32().abs()).fold(0.0, f32::max);
        assert!(m > 0.5 && m <= 1.0);
    }

    #[test]
    fn reference_row_is_a_softmax_average_of_v() {
        let shape = Shape {
            b: 1,
            h: 1,
            s: 4,
            d: 2,
        };
        let mut x = Inputs::random(shape, 1);
        // All scores equal: the output is the mean of V's rows.
        x.q.iter_mut().for_each(|v| *v = f16::ZERO);
        let row = x.reference_row(0, 0, 3, false, 1.0);
        for (d, got) in row.iter().enumerate() {
            let mean: f64 = (0..4).map(|j| x.v[j * 2 + d].to_f64()).sum::<f64>() / 4.0;
            assert!((got - mean).abs() < 1e-12);
        }
        // Causal row 0 sees only key 0: the output is V's first row.
        let row = x.reference_row(0, 0, 0, true, 1.0);
        assert!((row[1] - x.v[1].to_f64()).abs() < 1e-12);
    }

    #[test]
    fn sampled_rows_include_the_edges() {
        let s = Shape::REFERENCE;
        let rows = sample_rows(&s, 16, 3);
        assert_eq!(rows.len(), 16);
        assert!(rows.contains(&(0, 0, 0)) && rows.contains(&(0, 63, 1023)));
        assert!(rows.iter().all(|&(b, h, i)| b < 1 && h < 64 && i < 1024));
    }
}
