//! What every report is made from (a ladder analysed at the run results shown, two
//! versions compared) and the [`Exporter`] each output format is.

use super::comparison;
use crate::analysis::{self, Comparison, LadderAnalysis, Shown};
use crate::model::Ladder;

/// One output format.
pub trait Exporter {
    fn timeline(&self, ladders: &[Analysed]) -> String;
    fn compare(&self, input: &CompareInput) -> String;
}

/// A ladder with its analysis at the run results shown: what every report is made from.
pub struct Analysed<'a> {
    pub ladder: &'a Ladder,
    pub analysis: LadderAnalysis,
    /// The run results the analysis read (the command's `--shape`, else the default).
    pub shown: Shown,
}

impl<'a> Analysed<'a> {
    /// `ladder` analysed at the run results `shown`.
    pub fn new(ladder: &'a Ladder, shown: Shown) -> Self {
        Analysed {
            ladder,
            analysis: analysis::analyse_ladder(ladder, shown),
            shown,
        }
    }

    /// The shape of the run results shown, as the reports name it.
    pub fn run_shape(&self) -> Option<String> {
        self.shown.shape(self.ladder).map(|s| s.to_string())
    }

    /// The shape of the profiles, where the run results shown are of another: the ncu
    /// rows name it.
    pub fn profiled_at(&self) -> Option<String> {
        self.shown.profiled_at(self.ladder)
    }
}

/// Two versions being compared: their display labels (tables, pages), what
/// machine-readable output names them by, and the comparison.
pub struct CompareInput<'a> {
    pub a_name: String,
    pub b_name: String,
    pub a: CompareSide,
    pub b: CompareSide,
    pub comparison: &'a Comparison,
    /// The shape whose run results are compared (the reference, unless `--shape` chose
    /// another), as the report's JSON names it.
    pub run_shape: Option<String>,
    /// Whether that is another shape than the reference: then the text says so.
    pub other_shape: bool,
    /// The shape of the profiles, where the run results compared are of another.
    pub profiled_at: Option<String>,
    /// Why a side's SASS listing could not be read, where it could not.
    pub listing_error: Option<String>,
}

impl CompareInput<'_> {
    /// The comparison as the document every format renders.
    pub fn document(&self) -> comparison::Document<'_> {
        comparison::document(
            self.comparison,
            &comparison::Names {
                a: &self.a_name,
                b: &self.b_name,
                run_shape: self.run_shape.as_deref(),
                other_shape: self.other_shape,
                profiled_at: self.profiled_at.as_deref(),
                listing_error: self.listing_error.as_deref(),
                warnings: [&self.a.warnings, &self.b.warnings],
            },
        )
    }
}

/// One side of a comparison as the report's JSON names a version: id, title and the
/// full kernel name, and for an export file its path and launch; never cut.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CompareSide {
    pub id: String,
    pub title: String,
    pub kernel: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch: Option<u64>,
    /// What its figures cannot be trusted for ([`super::version_warnings`]): pages of
    /// two ncu runs merged into one launch. Left out where there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl CompareSide {
    /// Version `v`; `path`, the export file it was read from (its launch then named too).
    pub fn of(v: &crate::model::Version, path: Option<String>) -> CompareSide {
        let profile = v.profile.as_ref();
        CompareSide {
            id: v.id.clone(),
            title: v.title.clone(),
            kernel: profile.map(|p| p.kernel.clone()),
            launch: path.as_ref().and(profile.and_then(|p| p.launch_id)),
            path,
            warnings: super::version_warnings(v),
        }
    }

    /// How compare's CSV names this side: the version id, or the file's path with
    /// `#launch` where one was chosen.
    pub fn csv_name(&self) -> String {
        match (&self.path, self.launch) {
            (Some(p), Some(l)) => format!("{p}#{l}"),
            (Some(p), None) => p.clone(),
            (None, _) => self.id.clone(),
        }
    }
}

/// How a comparison's table columns name its two sides: as the report names them, but
/// an export file by the shortest end of its path that tells the two apart (`det.csv`,
/// `run2/det.csv`; the launch added where both are one file), not by its whole path.
pub fn column_names(input: &CompareInput) -> (String, String) {
    let (Some(pa), Some(pb)) = (&input.a.path, &input.b.path) else {
        return (input.a_name.clone(), input.b_name.clone());
    };
    let parts = |p: &str| -> Vec<String> {
        std::path::Path::new(p)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let (xa, xb) = (parts(pa), parts(pb));
    let tail = |x: &[String], k: usize| x[x.len().saturating_sub(k)..].join("/");
    let longest = xa.len().max(xb.len()).max(1);
    let (mut a, mut b) = (tail(&xa, 1), tail(&xb, 1));
    for k in 1..=longest {
        (a, b) = (tail(&xa, k), tail(&xb, k));
        if a != b {
            break;
        }
    }
    if a == b {
        // One file twice: its name, and its two launches.
        (a, b) = (tail(&xa, 1), tail(&xb, 1));
        if let (Some(la), Some(lb)) = (input.a.launch, input.b.launch) {
            a = format!("{a}#{la}");
            b = format!("{b}#{lb}");
        }
    }
    if a == b {
        a.push_str(" (a)");
        b.push_str(" (b)");
    }
    (a, b)
}
