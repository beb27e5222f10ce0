//! The noise rule: when one count of PC samples leads another by more than sampling can
//! explain.
//!
//! ncu's PC sampler records, every few thousand cycles, the state of one warp of each SM
//! sub-partition. Over a launch those samples are one multinomial sample: each lands in
//! one (stall reason × instruction class) cell. For two cells of one sample of `n` with
//! counts `a` and `b`, the difference of their shares has the variance
//! `(p_a + p_b − (p_a − p_b)²) / n` (the two shares are drawn together, so they are not
//! independent), and the lead of `a` over `b` in standard deviations is
//!
//! ```text
//! z = (a − b) / √(a + b − (a − b)² / n)
//! ```
//!
//! A lead counts when `z ≥ 2` ([`Z_MIN`]): two cells that are truly equal show such a lead
//! in about 2 % of profiles. Below it the two cells are a **near-tie**. A closed form
//! on the page's own counts, rather than a bootstrap, because it gives the same verdict on
//! every machine and every run, and because the counts are large (thousands of samples a
//! kernel), where the normal approximation holds.
//!
//! The same z judges a step of the trail: a version's top cell is a **move** from its
//! parent's only when it changed and leads the parent's top cell by `z ≥ 2` in the new
//! version's own samples.
//!
//! With fewer than [`MIN_SAMPLES`] stall samples no label stands: two standard deviations
//! of a share are then up to ±10 points (`2·√(0.25 / 100)`), wider than the gaps between
//! the cells a label would choose between.

/// The lead, in standard deviations, that counts as more than noise.
pub const Z_MIN: f64 = 2.0;

/// Stall samples below which a launch gets no bottleneck label.
pub const MIN_SAMPLES: u64 = 100;

/// The lead of count `a` over count `b`, two cells of one sample of `n`, in standard
/// deviations (negative when `b` is larger). Infinite when the difference has no
/// variance (all `n` samples in `a`), zero when both are empty.
pub fn lead_z(a: u64, b: u64, n: u64) -> f64 {
    let (a, b, n) = (a as f64, b as f64, n.max(1) as f64);
    let d = a - b;
    let var = a + b - d * d / n;
    if d == 0.0 {
        0.0
    } else if var <= 0.0 {
        d.signum() * f64::INFINITY
    } else {
        d / var.sqrt()
    }
}

/// The change of a share from `a` of `na` samples to `b` of `nb` samples (two profiles,
/// so two independent samples), in standard deviations: the two-proportion z test with
/// the pooled share. Zero when either sample is empty or both shares are 0 or 1.
pub fn two_sample_z(a: u64, na: u64, b: u64, nb: u64) -> f64 {
    if na == 0 || nb == 0 {
        return 0.0;
    }
    let (pa, pb) = (a as f64 / na as f64, b as f64 / nb as f64);
    let pooled = (a + b) as f64 / (na + nb) as f64;
    let var = pooled * (1.0 - pooled) * (1.0 / na as f64 + 1.0 / nb as f64);
    if var <= 0.0 {
        0.0
    } else {
        (pb - pa) / var.sqrt()
    }
}

/// Whether `a` leads `b` by more than noise.
pub fn leads(a: u64, b: u64, n: u64) -> bool {
    lead_z(a, b, n) >= Z_MIN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_counts_are_no_lead() {
        assert_eq!(lead_z(500, 500, 10_000), 0.0);
    }

    #[test]
    fn a_lead_of_two_standard_deviations_counts() {
        // 1,000 samples: 300 against 200 → z = 100 / √(500 − 10) ≈ 4.5.
        assert!(leads(300, 200, 1000));
    }

    #[test]
    fn a_lead_within_two_standard_deviations_is_a_near_tie() {
        // 210 against 200 → z = 10 / √(410 − 0.1) ≈ 0.5.
        assert!(!leads(210, 200, 1000));
    }

    #[test]
    fn a_share_that_doubles_between_two_profiles_changed() {
        // 10 % of 1,000 samples, then 20 % of 1,000: z ≈ 6.3.
        assert!(two_sample_z(100, 1000, 200, 1000) >= Z_MIN);
    }

    #[test]
    fn a_cell_holding_every_sample_leads_without_variance() {
        assert_eq!(lead_z(50, 0, 50), f64::INFINITY);
        assert_eq!(lead_z(0, 50, 50), f64::NEG_INFINITY);
    }
}
