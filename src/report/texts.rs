//! The texts every format writes alike: a trail step's name and verdict, a version's
//! label, the stall section's heading and cells, a comparison's verdict word, the unit of
//! stall shares, and text escaped for HTML and SVG.

use super::format;
use crate::analysis::{
    self, Bottleneck, NoLabel, StallSource, StepVerdict, TrailStep, VersionAnalysis,
};

/// Text made safe inside HTML and SVG, in element content and in quoted attributes.
/// Control characters from imported data are shown escaped as in the terminal
/// ([`format::printable_lines`]): a page holds none of them raw.
pub fn escape(s: &str) -> String {
    let s = format::printable_lines(s);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A step's name in the trail: its id, and where it branches the version it was built
/// on (`v17 ← v15`).
pub fn step_name(s: &TrailStep) -> String {
    match (&s.parent, s.branch) {
        (Some(p), true) => format!("{} ← {p}", s.id),
        _ => s.id.clone(),
    }
}

/// A lead in standard deviations: `0.2`, `11.3`, `352`.
pub fn z_text(z: f64) -> String {
    if z.abs() >= 10.0 {
        format!("{z:.0}")
    } else {
        format!("{z:.1}")
    }
}

/// What the noise rule says about a step: `moved (z 11.3)`, `near-tie (z 0.2)`,
/// `changed within noise of v17 (z 1.2)`; empty for a step that stayed.
pub fn verdict_text(s: &TrailStep, b: Option<&Bottleneck>) -> String {
    let mut parts = Vec::new();
    let z = |z: Option<f64>| z.map(|z| format!(" (z {})", z_text(z))).unwrap_or_default();
    match s.verdict {
        StepVerdict::Moved => parts.push(format!("moved{}", z(s.z))),
        StepVerdict::WithinNoise => parts.push(format!(
            "changed within noise of {}{}",
            s.judged_against().unwrap_or("its parent"),
            z(s.z)
        )),
        StepVerdict::Unweighed => parts.push(format!(
            "changed from {} ({}, no samples for the noise rule)",
            s.judged_against().unwrap_or("its parent"),
            b.map_or("reason only", |b| b.opcode().trim_matches(['(', ')']))
        )),
        StepVerdict::Start | StepVerdict::Same | StepVerdict::NoLabel => {}
    }
    if let Some(b) = b.filter(|b| b.near_tie) {
        parts.push(format!("near-tie{}", z(b.z)));
    }
    parts.join(", ")
}

/// The top reason beside a label whose cell is not of it: `top reason wait 23.0 %`.
pub fn top_reason_text(reason: crate::ncu::StallReason, share: f64) -> String {
    format!("top reason {reason} {} %", format::share(Some(share)))
}

/// A trail step's label as the explorer's trail writes it: the label, and where the
/// overall top reason is another, the cell's share and that reason with its share
/// (`barrier @ WARPGROUP 16.6 % · top reason wait 23.0 %`; a near-tie without the
/// share), so that the label reads as a place and not the whole story.
pub fn trail_label(s: &crate::analysis::TrailStep) -> Option<String> {
    let label = s.label.clone()?;
    // A near-tie's label is two cells: no one share stands beside it.
    let share = match s.near_tie {
        true => String::new(),
        false => format!(" {} %", format::share(s.share)),
    };
    Some(match s.top_reason {
        Some(t) => format!("{label}{share} · {}", top_reason_text(t.reason, t.share)),
        None => label,
    })
}

/// A version's label in full: the top cell, both cells of a near-tie
/// (`A ≈ B`), or why there is none.
pub fn label_text(b: Option<&Bottleneck>, why: Option<NoLabel>) -> String {
    match (b, why) {
        (Some(b), _) => b.label(),
        (None, Some(n)) => n.short(),
        (None, None) => format::UNKNOWN.to_string(),
    }
}

/// A version's label for a table cell: the top cell, or why there is none.
pub fn label_cell(v: &VersionAnalysis) -> String {
    match (&v.bottleneck, v.no_label) {
        (Some(b), _) => b.to_string(),
        (None, Some(n)) => n.short(),
        (None, None) => format::UNKNOWN.to_string(),
    }
}

/// The heading of a stall section: what the shares are of, by the versions' sources.
pub fn stall_heading(sources: impl IntoIterator<Item = Option<StallSource>>) -> String {
    let mut units: Vec<&str> = sources.into_iter().flatten().map(|s| s.unit()).collect();
    units.sort();
    units.dedup();
    match units.as_slice() {
        [one] => format!("stalls (% of {one})"),
        [] => "stalls".to_string(),
        _ => "stalls (% of PC samples, or of per-issue stall ratios: see the stall source row)"
            .to_string(),
    }
}

/// Where a version's stall shares come from, for a table cell (ten columns at most):
/// PC samples of the raw page, of the source page (`src page`), or per-issue ratios.
pub fn stall_source_cell(v: &VersionAnalysis) -> String {
    match &v.stalls {
        Some(s) => match s.source {
            StallSource::Sampling => "PC samples",
            StallSource::SourcePage => "src page",
            StallSource::PerIssueRatios => "ratios",
            StallSource::LaunchPercentages => "launch %",
        }
        .to_string(),
        None => format::UNKNOWN.to_string(),
    }
}

/// The PC samples behind a version's stall shares, for a table cell.
pub fn stall_samples_cell(v: &VersionAnalysis) -> String {
    samples_text(v.stalls.as_ref().and_then(|s| s.samples))
}

/// A count of stall samples as every view writes it: marked `(few)` below the noise
/// rule's floor ([`MIN_SAMPLES`](crate::analysis::noise::MIN_SAMPLES)), where the
/// shares they give are shown but carry no label and no verdict.
pub fn samples_text(n: Option<u64>) -> String {
    match n {
        Some(n) if n < crate::analysis::noise::MIN_SAMPLES => {
            format!("{} (few)", format::thousands(n as f64))
        }
        Some(n) => format::thousands(n as f64),
        None => format::UNKNOWN.to_string(),
    }
}

/// A verdict as machine-readable output writes it: the word compare's JSON gives it.
pub fn verdict_word(v: analysis::Verdict) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(w)) => w,
        _ => format!("{v:?}").to_lowercase(),
    }
}

/// The unit of stall shares in machine-readable output.
pub const STALL_UNIT: &str = "fraction";

/// A change in %, signed, one decimal, a minus sign: `−2.5 %`, `+0.4 %`.
pub fn pct(x: f64) -> String {
    let s = format!("{:+.1} %", x * 100.0);
    s.replacen('-', "−", 1)
}

/// The verdict of a speed-up `s` of the second over the first with the 95 % interval of
/// the second's change of time: `faster (−3.1 % to −1.9 %)`, `unclear: not converged
/// (−0.9 % to +2.8 %)`. Every view and format that judges a timed change writes it so.
pub fn verdict_and_interval(s: &crate::analysis::speed::Speedup) -> String {
    let verdict = match s.why {
        Some(why) => format!("unclear: {}", why.words()),
        None => s.verdict.word().to_string(),
    };
    format!(
        "{verdict} ({} to {})",
        pct(1.0 / s.high - 1.0),
        pct(1.0 / s.low - 1.0)
    )
}

/// What a version's figures cannot be trusted for, one line each, as every view and
/// format writes it: its profile's [`warnings`](crate::model::Profile::warnings) (pages
/// of two ncu runs merged into one launch), each `warning: …`. None for a version of
/// one run.
pub fn version_warnings(v: &crate::model::Version) -> Vec<String> {
    v.profile
        .iter()
        .flat_map(|p| &p.warnings)
        .map(|w| format!("warning: {w}"))
        .collect()
}

/// The same, where space is tight: `⚠ merged from 2 ncu runs`. Each warning is a page
/// of another run than the profile's first page, so the runs are at most one more than
/// the warnings. `None` for a version of one run.
pub fn warning_marker(v: &crate::model::Version) -> Option<String> {
    let n = v.profile.as_ref().map_or(0, |p| p.warnings.len());
    (n > 0).then(|| format!("⚠ merged from {} ncu runs", n + 1))
}
