//! A ladder as the explorer holds it: with its analysis at the run results shown and its
//! versions in display order.

use crate::analysis::estimates::{EstimatesTable, estimates_table};
use crate::analysis::roofline::{LadderRoofline, ladder_roofline};
use crate::analysis::{self, LadderAnalysis, Shown};
use crate::model::Ladder;
use crate::report::display_order;

/// A ladder and what the analysis makes of it at the run results shown.
pub struct LadderState {
    pub ladder: Ladder,
    pub analysis: LadderAnalysis,
    /// The run results the views show (`S` picks the next shape): the explorer's choice,
    /// the default until then.
    pub shown: Shown,
    /// Versions in display order (the ladder's own, then its baselines).
    pub order: Vec<usize>,
    /// Every version on the roofline (from the profiles alone: the run results shown
    /// do not move it).
    pub roofline: LadderRoofline,
    /// Every step's findings of ncu that it resolved and what it got, and their tally
    /// (at the reference shape's runs, whatever the run results shown).
    pub estimates: EstimatesTable,
}

impl LadderState {
    /// A ladder as the explorer opens it: at the default shape.
    pub fn new(ladder: Ladder) -> LadderState {
        LadderState {
            analysis: analysis::analyse_ladder(&ladder, Shown::DEFAULT),
            shown: Shown::DEFAULT,
            order: display_order(&ladder),
            roofline: ladder_roofline(&ladder),
            estimates: estimates_table(&ladder),
            ladder,
        }
    }
}
