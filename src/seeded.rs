//! Seeded randomness for the checks' inputs, shared by every problem kind: a small
//! generator whose sequence depends only on its seed, and the seed of a named check case
//! derived from a run's. Names nothing else of the crate.

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same inputs
/// on every machine, so a failure can be replayed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1).
    pub fn next_signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A seed of its own for the check case called `name`, derived from the run's seed
/// (an FNV-1a hash of the name over it): cases of one run get different inputs, and the
/// same run seed gives a case the same inputs again.
pub fn case_seed(run_seed: u64, name: &str) -> u64 {
    name.bytes().fold(run_seed ^ 0xC0FF_EE00_D15E_A5E5, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_depends_only_on_the_seed() {
        let draw = |seed| {
            let mut r = Rng::new(seed);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
        let mut r = Rng::new(1);
        assert!((0..1000).all(|_| (-1.0..1.0).contains(&r.next_signed())));
        assert!((0..1000).all(|_| r.below(7) < 7));
    }

    #[test]
    fn case_seeds_differ_by_name_and_by_run() {
        assert_eq!(case_seed(3, "a"), case_seed(3, "a"));
        assert_ne!(case_seed(3, "a"), case_seed(3, "b"));
        assert_ne!(case_seed(3, "a"), case_seed(4, "a"));
    }
}
