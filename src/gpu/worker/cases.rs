//! The input cases every `run` checks each ladder version on, beside the timed shape:
//! each is built to catch one way an attention kernel goes wrong while passing gentle
//! inputs. Every case is checked at the first launch and again at a later one, the
//! output poisoned before each.

use super::check::InputKind;
use crate::model::Shape;
use crate::seeded;

/// One check case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Case {
    pub name: &'static str,
    pub shape: Shape,
    pub causal: bool,
    pub inputs: InputKind,
    /// What it catches, for a failure message.
    pub catches: &'static str,
}

const fn shape(b: u32, h: u32, s: u32, d: u32) -> Shape {
    Shape { b, h, s, d }
}

/// The cases at head dimension `d`.
pub fn cases(d: u32) -> Vec<Case> {
    use InputKind::*;
    let c = |name, shape, causal, inputs, catches| Case {
        name,
        shape,
        causal,
        inputs,
        catches,
    };
    vec![
        c(
            "large-logits",
            shape(1, 8, 512, d),
            false,
            LargeLogits,
            "scores reaching ±100, which overflow a softmax that does not subtract the row maximum",
        ),
        c(
            "max-in-last-tile",
            shape(1, 8, 1024, d),
            false,
            MaxInLastTile,
            "each row's maximum in the last key tile, where the running maximum must rescale late",
        ),
        c(
            "equal-scores",
            shape(1, 8, 512, d),
            false,
            EqualScores,
            "rows whose scores all tie, whose output is the mean of V",
        ),
        c(
            "partial-tiles-1000",
            shape(1, 64, 1000, d),
            false,
            Uniform,
            "several work items per block with a partial last key tile",
        ),
        c(
            "partial-tiles-777",
            shape(4, 32, 777, d),
            false,
            Uniform,
            "several batches and work items per block, a partial key tile",
        ),
        c(
            "partial-tiles-777-causal",
            shape(4, 32, 777, d),
            true,
            Uniform,
            "the causal mask across partial tiles",
        ),
        c(
            "small-odd",
            shape(1, 80, 200, d),
            false,
            Uniform,
            "a small odd shape, fewer rows than one tile",
        ),
        c(
            "causal-s1",
            shape(1, 4, 1, d),
            true,
            Uniform,
            "causal with one query and one key",
        ),
    ]
}

/// A seed of its own for each case, derived from the run's ([`seeded::case_seed`]).
pub fn case_seed(run_seed: u64, case: &Case) -> u64 {
    seeded::case_seed(run_seed, case.name)
}

#[cfg(test)]
mod tests {
    use super::super::check::Inputs;
    use super::*;

    fn scores(x: &Inputs, row: usize) -> Vec<f64> {
        let d = x.shape.d as usize;
        let s = x.shape.s as usize;
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

    fn case(name: &str) -> Case {
        cases(128).into_iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn large_logits_reach_fifty_and_beyond() {
        let c = case("large-logits");
        let x = Inputs::of_kind(c.shape, c.inputs, case_seed(1, &c));
        let max = (0..16)
            .flat_map(|r| scores(&x, r))
            .fold(0.0f64, |m, s| m.max(s.abs()));
        assert!(max > 50.0, "largest |score| {max}");
    }

    #[test]
    fn the_row_maximum_is_the_last_key() {
        let c = case("max-in-last-tile");
        let x = Inputs::of_kind(c.shape, c.inputs, case_seed(1, &c));
        for r in [0, 7, 511, 1023] {
            let s = scores(&x, r);
            let arg = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b])).unwrap();
            assert_eq!(arg, s.len() - 1, "row {r}");
        }
    }

    #[test]
    fn equal_scores_tie_within_a_row() {
        let c = case("equal-scores");
        let x = Inputs::of_kind(c.shape, c.inputs, case_seed(1, &c));
        let s = scores(&x, 3);
        assert!(s.iter().all(|v| *v == s[0]), "{:?}", &s[..4]);
        assert!(x.v.iter().any(|v| v.to_f32() != x.v[0].to_f32()));
    }

    #[test]
    fn every_case_has_its_own_seed() {
        let mut seeds: Vec<u64> = cases(128).iter().map(|c| case_seed(9, c)).collect();
        seeds.sort();
        seeds.dedup();
        assert_eq!(seeds.len(), cases(128).len());
    }
}
