//! Which run shape's results are shown: the caller's choice, passed to what reads them.
//! The model holds every version's run results at every shape it was run at; a command
//! passes the shape its user chose (`--shape`, else the default), the explorer the one
//! it keeps in its own state (`S`). A command may also choose the timing regime
//! (`--regime`).

use crate::model::runs::{Regime, RunResult, Shape};
use crate::model::{Ladder, Trace, TraceFile, Version};

/// The run shape whose results are shown, as the caller chose it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shown {
    /// The shape chosen; `None`: the default, a ladder's reference shape without flags
    /// (a ladder without one shows each version's latest result).
    pub chosen: Option<Shape>,
    /// The timing regime chosen; `None`: the sustained regime's result before a burst's.
    pub regime: Option<Regime>,
}

impl Shown {
    /// The default rule: the reference shape, without flags.
    pub const DEFAULT: Shown = Shown {
        chosen: None,
        regime: None,
    };

    /// The run results at `shape`.
    pub fn at(shape: Shape) -> Shown {
        Shown {
            chosen: Some(shape),
            regime: None,
        }
    }

    /// The same shape, the results of `regime` alone (`None`: the default rule).
    pub fn in_regime(self, regime: Option<Regime>) -> Shown {
        Shown { regime, ..self }
    }

    /// The shape shown of `ladder`: the one chosen, else its reference shape without
    /// flags; `None` where neither is known.
    pub fn shape(self, ladder: &Ladder) -> Option<Shape> {
        self.chosen.or(ladder.reference_run_shape())
    }

    /// The shape shown where it is another than `ladder`'s reference (a report says so,
    /// since its problem line tells the reference).
    pub fn other_shape(self, ladder: &Ladder) -> Option<Shape> {
        self.chosen
            .filter(|s| Some(*s) != ladder.reference_run_shape())
    }

    /// Where the run results shown are at another shape than `ladder`'s profiles: the
    /// profiles' shape, as the ncu rows are then labelled (`ncu at 1,64,1024,128`), or
    /// "the reference shape" where the ladder does not name it. `None` where the two
    /// are one shape, or no run results are shown.
    pub fn profiled_at(self, ladder: &Ladder) -> Option<String> {
        let shown = self.shape(ladder)?;
        match ladder.profile_shape {
            Some(p) if p.unflagged() == shown => None,
            Some(p) => Some(p.to_string()),
            None => self
                .other_shape(ladder)
                .map(|_| "the reference shape".to_string()),
        }
    }

    /// The run result shown for a version of `ladder`: at the shown shape (without one,
    /// the latest result), the sustained regime's before a burst's, the latest of them;
    /// with a regime chosen, the latest of that regime's alone (a result that recorded no
    /// protocol counts as sustained).
    pub fn run<'a>(self, ladder: &Ladder, v: &'a Version) -> Option<&'a RunResult> {
        let at: Vec<&RunResult> = match self.shape(ladder) {
            Some(w) => v.runs.iter().filter(|r| r.shape == w).collect(),
            None => v.runs.iter().collect(),
        };
        if let Some(regime) = self.regime {
            let burst = regime == Regime::Burst;
            return at
                .iter()
                .rev()
                .find(|r| (r.regime() == Some(Regime::Burst)) == burst)
                .copied();
        }
        at.iter()
            .rev()
            .find(|r| r.regime() != Some(Regime::Burst))
            .or(at.last())
            .copied()
    }

    /// The pipeline trace shown for a version of `ladder`: the one at the shown shape
    /// (without one, its last), where it was read ([`Ladder::read_traces`]).
    pub fn trace<'a>(self, ladder: &Ladder, v: &'a Version) -> Option<&'a Trace> {
        self.trace_file(ladder, v)?.trace()
    }

    /// The trace file shown for a version of `ladder`, read or not (or not readable).
    pub fn trace_file<'a>(self, ladder: &Ladder, v: &'a Version) -> Option<&'a TraceFile> {
        v.trace_at(self.shape(ladder))
    }

    /// Reads the traces shown of `ladder` not read yet ([`Ladder::read_traces`]).
    pub fn read_traces(self, ladder: &mut Ladder) -> crate::model::TracesRead {
        let at = self.shape(ladder);
        ladder.read_traces(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::limits::SizeLimits;
    use crate::kinds::attention::shape;
    use crate::model::Store;
    use crate::model::runs::RunStatus;

    fn reference() -> Shape {
        shape(1, 64, 1024, 128, false)
    }

    fn long() -> Shape {
        shape(1, 16, 8192, 128, false)
    }

    fn run(shape: Shape, median_us: f64) -> RunResult {
        let mut r = RunResult::new("v1", shape, RunStatus::Ok);
        r.median_us = Some(median_us);
        r
    }

    fn ladder(reference_shape: Option<Shape>) -> Ladder {
        Ladder {
            name: "toy".into(),
            title: "toy".into(),
            problem: None,
            flops: None,
            peak_tflops: None,
            kind: Some(crate::kinds::legacy()),
            reference_shape,
            profile_shape: None,
            versions: vec![Version {
                id: "v1".into(),
                runs: vec![
                    run(reference(), 10.0),
                    run(reference().with_flag("causal", true).unwrap(), 6.0),
                    run(long(), 90.0),
                    run(reference(), 11.0),
                ],
                ..Version::default()
            }],
            dir: None,
            store: Store::disk(SizeLimits::DEFAULT),
        }
    }

    fn median(shown: Shown, l: &Ladder) -> Option<f64> {
        shown.run(l, &l.versions[0]).and_then(|r| r.median_us)
    }

    #[test]
    fn by_default_the_reference_shape_is_shown_without_the_mask() {
        let l = ladder(Some(reference()));
        assert_eq!(Shown::DEFAULT.shape(&l), Some(reference()));
        assert_eq!(Shown::DEFAULT.other_shape(&l), None);
        // The latest result at that shape.
        assert_eq!(median(Shown::DEFAULT, &l), Some(11.0));
    }

    #[test]
    fn a_chosen_shape_is_shown_and_said_where_it_is_not_the_reference() {
        let l = ladder(Some(reference()));
        let long = long();
        assert_eq!(median(Shown::at(long), &l), Some(90.0));
        assert_eq!(Shown::at(long).other_shape(&l), Some(long));
        let causal = reference().with_flag("causal", true).unwrap();
        assert_eq!(median(Shown::at(causal), &l), Some(6.0));
        assert_eq!(Shown::at(reference()).other_shape(&l), None);
    }

    #[test]
    fn a_chosen_regime_shows_its_results_alone() {
        use crate::model::runs::Protocol;
        let burst = |median_us: f64| {
            let mut r = run(reference(), median_us);
            r.protocol = Some(Protocol {
                regime: Regime::Burst,
                mechanism: "cuda_graph".into(),
                launches_per_rep: 1,
                reps: 1,
                rounds: 1,
                window_ms: 1.0,
                warmup_ms: 0.0,
                settled: None,
                idle_ms: Some(100.0),
                min_window_ms: None,
                convergence: None,
            });
            r
        };
        let mut l = ladder(Some(reference()));
        l.versions[0].runs.push(burst(8.0));
        // By default the sustained (here: no protocol) result before the later burst one.
        assert_eq!(median(Shown::DEFAULT, &l), Some(11.0));
        let b = Shown::DEFAULT.in_regime(Some(Regime::Burst));
        assert_eq!(median(b, &l), Some(8.0));
        let s = Shown::DEFAULT.in_regime(Some(Regime::Sustained));
        assert_eq!(median(s, &l), Some(11.0));
        // A shape with no burst result shows none under --regime burst.
        assert_eq!(
            median(Shown::at(long()).in_regime(Some(Regime::Burst)), &l),
            None
        );
    }

    #[test]
    fn without_a_reference_shape_the_latest_result_is_shown() {
        let l = ladder(None);
        assert_eq!(Shown::DEFAULT.shape(&l), None);
        assert_eq!(median(Shown::DEFAULT, &l), Some(11.0));
    }
}
