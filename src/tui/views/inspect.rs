//! Every metric and rule finding of the selected version's profile, grouped by ncu
//! section (raw-page metrics by hardware unit), filtered by `/`.

use super::scene::Scene;
use super::scroll::{draw_document, moved};
use super::text::wrap;
use crate::model::RunResult;
use crate::report::format::{self, Scale};
use crate::report::runs;
use crate::tui::action::Action;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::BTreeMap;

/// The inspect view's state: its scroll offset and the filter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InspectState {
    pub scroll: usize,
    pub filter: String,
    /// The filter is being typed.
    pub editing: bool,
}

impl InspectState {
    /// The inspect view's own actions: the moves scroll it; `/` starts the filter, which
    /// is then typed (its matches shown from the top), kept (Enter) or cleared (Esc).
    pub(crate) fn act(&mut self, action: Action, page: usize) {
        match action {
            Action::FilterStart => self.editing = true,
            Action::FilterInput(c) => {
                self.filter.push(c);
                self.scroll = 0;
            }
            Action::FilterBackspace => {
                self.filter.pop();
                self.scroll = 0;
            }
            Action::FilterEnd => self.editing = false,
            Action::FilterCancel => *self = InspectState::default(),
            _ => {
                if let Some(at) = moved(self.scroll, action, page) {
                    self.scroll = at;
                }
            }
        }
    }

    /// q or Esc in the view: clears a kept filter; whether there was one to clear.
    pub(crate) fn close(&mut self) -> bool {
        if self.filter.is_empty() {
            return false;
        }
        *self = InspectState::default();
        true
    }
}

/// One line of the listing, with the text the filter searches.
pub struct Entry {
    pub line: Line<'static>,
    pub key: String,
    /// Section headers stay when one of their entries matches.
    pub header: bool,
}

pub fn draw(frame: &mut Frame, scene: &Scene, state: &InspectState, body: Rect) {
    let lines = filtered(scene, state, body.width as usize);
    // An active filter heads the view, with how to change and clear it: it stays when
    // another version is selected, and a status message never hides it.
    let body = match filter_line(scene, state) {
        Some(line) => {
            let [top, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
            frame.render_widget(Paragraph::new(line), top);
            rest
        }
        None => body,
    };
    draw_document(frame, lines, state.scroll, body);
}

/// The filter being typed or kept, and the keys for it; `None` without one.
pub fn filter_line(scene: &Scene, state: &InspectState) -> Option<Line<'static>> {
    let t = &scene.theme;
    if state.editing {
        return Some(Line::from(vec![
            Span::styled("filter: ", t.key()),
            Span::raw(state.filter.clone()),
            Span::styled("▏", t.key()),
            Span::styled("  Enter keeps it · Esc clears it", t.dim()),
        ]));
    }
    if state.filter.is_empty() {
        return None;
    }
    Some(Line::from(vec![
        Span::styled("filter: ", t.key()),
        Span::raw(state.filter.clone()),
        Span::styled("  / changes it · Esc clears it", t.dim()),
    ]))
}

pub fn filtered(scene: &Scene, state: &InspectState, width: usize) -> Vec<Line<'static>> {
    let entries = entries(scene, width);
    if state.filter.is_empty() {
        return entries.into_iter().map(|e| e.line).collect();
    }
    let needle = state.filter.to_lowercase();
    let mut out: Vec<Line> = Vec::new();
    let mut pending_header: Option<Line> = None;
    for e in entries {
        if e.header {
            pending_header = Some(e.line);
        } else if e.key.contains(&needle) {
            if let Some(h) = pending_header.take() {
                out.push(h);
            }
            out.push(e.line);
        }
    }
    if out.is_empty() {
        out.push(Line::styled(
            format!("nothing matches {:?}", state.filter),
            scene.theme.dim(),
        ));
    }
    out
}

/// What stallscope measured of a version, every shape it ran at: time and spread over
/// rounds, throughput, clock, power, energy, errors, checks, seed and protocol.
fn run_entries(scene: &Scene, v: &crate::model::Version, width: usize) -> Vec<Entry> {
    let t = &scene.theme;
    let name_w = (width / 2).clamp(20, 70);
    let mut out = Vec::new();
    let ladder = &scene.ladder().ladder;
    for shape in ladder.measured_shapes() {
        for r in v.runs.iter().filter(|r| r.shape == shape) {
            let title = format!(
                "run at {shape}{}",
                r.regime().map(|g| format!(" ({g})")).unwrap_or_default()
            );
            out.push(Entry {
                line: Line::styled(title.clone(), t.title()),
                key: title.to_lowercase(),
                header: true,
            });
            for (name, value) in run_fields(r).into_iter().filter(|(_, v)| !v.is_empty()) {
                out.push(Entry {
                    line: Line::from(vec![
                        Span::raw(format!("  {}", format::left(name, name_w))),
                        Span::raw(value.clone()),
                    ]),
                    key: format!("run {name} {value}").to_lowercase(),
                    header: false,
                });
            }
        }
    }
    out
}

/// A run result's fields, named, in the order inspect lists them (an empty one is left
/// out): the figures as the run table writes them.
fn run_fields(r: &RunResult) -> Vec<(&'static str, String)> {
    let f = runs::fields(r);
    let known = |x: Option<String>| x.unwrap_or_else(|| format::UNKNOWN.to_string());
    let checks = match f.checks {
        None => String::new(),
        Some(c) if f.failed.is_empty() => c,
        Some(c) => format!("{c} (failed: {})", f.failed.join(", ")),
    };
    vec![
        ("status", format!("{:?}", r.status).to_lowercase()),
        ("message", r.message.clone().unwrap_or_default()),
        ("median (µs)", known(f.median)),
        ("spread over rounds", known(f.spread)),
        (
            "rounds (µs)",
            r.rounds
                .iter()
                .map(|x| format::micros(x.us))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        ("fastest – slowest (µs)", known(f.range)),
        ("TFLOPS", known(f.tflops)),
        ("SM clock (MHz)", known(f.clock)),
        ("board power (W)", known(f.power)),
        ("energy / launch (mJ)", known(f.energy)),
        ("TFLOPS / W", known(f.efficiency)),
        ("throttle", known(f.throttle)),
        ("relative error", known(f.rel_err)),
        ("largest absolute error", known(f.max_abs_err)),
        ("checks", checks),
        ("seed", r.seed.map(|s| s.to_string()).unwrap_or_default()),
        ("GPU", r.gpu.clone().unwrap_or_default()),
        ("when", r.when.clone().unwrap_or_default()),
        (
            "protocol",
            r.protocol
                .as_ref()
                .map(runs::protocol_words)
                .unwrap_or_else(|| "not recorded (measured before stallscope recorded it)".into()),
        ),
    ]
}

/// Every line inspect lists of the selected version: its runs, then its profile's
/// kernel and pages, its metrics by section, the rule findings and the raw page.
pub fn entries(scene: &Scene, width: usize) -> Vec<Entry> {
    let t = &scene.theme;
    let Some(i) = scene.version_index() else {
        return Vec::new();
    };
    let v = &scene.ladder().ladder.versions[i];
    let mut out = run_entries(scene, v, width);
    let Some(p) = &v.profile else {
        out.push(Entry {
            line: Line::styled(
                format!("{} has no profile: import its ncu exports", v.id),
                t.dim(),
            ),
            key: String::new(),
            header: false,
        });
        return out;
    };
    out.push(Entry {
        line: Line::from(vec![
            Span::styled("kernel ", t.dim()),
            Span::raw(p.kernel.clone()),
        ]),
        key: p.kernel.to_lowercase(),
        header: false,
    });
    let files: Vec<String> = p
        .pages
        .iter()
        .map(|(k, f)| format!("{} ({})", scene.ladder_path(f), k.name()))
        .collect();
    out.push(Entry {
        line: Line::styled(format!("pages  {}", files.join(", ")), t.dim()),
        key: String::new(),
        header: false,
    });
    let name_w = (width / 2).clamp(20, 70);
    out.extend(section_entries(scene, p, name_w));
    out.extend(rule_entries(scene, p, width));
    out.extend(raw_entries(scene, p, name_w));
    out
}

/// A section's heading (kept while the filter matches one of its lines).
fn header_entry(scene: &Scene, text: String) -> Entry {
    Entry {
        line: Line::styled(text.clone(), scene.theme.title()),
        key: text.to_lowercase(),
        header: true,
    }
}

/// A metric's line, its name in `name_w` columns; the filter searches its section too.
fn metric_entry(section: &str, name: &str, value: String, name_w: usize) -> Entry {
    Entry {
        line: Line::from(vec![
            Span::raw(format!("  {}", format::left(name, name_w))),
            Span::raw(value.clone()),
        ]),
        key: format!("{section} {name} {value}").to_lowercase(),
        header: false,
    }
}

/// The profile's metrics by ncu section, in the order the details page has them.
fn section_entries(scene: &Scene, p: &crate::model::Profile, name_w: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut sections: Vec<(&str, Vec<&crate::ncu::DetailMetric>)> = Vec::new();
    for m in &p.details {
        match sections.iter_mut().find(|(s, _)| *s == &*m.section) {
            Some((_, list)) => list.push(m),
            None => sections.push((&m.section, vec![m])),
        }
    }
    for (section, metrics) in sections {
        out.push(header_entry(scene, section.to_string()));
        // A section's values of one unit are scaled alike.
        let most = largest(
            metrics
                .iter()
                .map(|m| ("", &*m.unit, m.value.num().unwrap_or(0.0))),
        );
        for m in metrics {
            let scale = Scale::of(&m.unit, most.get(&("", &*m.unit)).copied().unwrap_or(0.0));
            out.push(metric_entry(section, &m.name, scale.show(&m.value), name_w));
        }
    }
    out
}

/// ncu's rule findings, each with its estimated speed-up and its description wrapped.
fn rule_entries(scene: &Scene, p: &crate::model::Profile, width: usize) -> Vec<Entry> {
    let t = &scene.theme;
    let mut out = Vec::new();
    if p.rules.is_empty() {
        return out;
    }
    out.push(header_entry(scene, "rule findings".into()));
    for r in &p.rules {
        let speedup = r
            .speedup_pct
            .map(|s| {
                format!(
                    " — est. speedup {s:.1}% ({})",
                    r.speedup_type.as_deref().unwrap_or("")
                )
            })
            .unwrap_or_default();
        let key =
            format!("rule {} {} {} {}", r.section, r.rule, r.kind, r.description).to_lowercase();
        out.push(Entry {
            line: Line::from(vec![
                Span::styled(format!("  [{}] ", r.kind), t.key()),
                Span::styled(r.rule.clone(), t.title()),
                Span::raw(format!(" ({}){speedup}", r.section)),
            ]),
            key: key.clone(),
            header: false,
        });
        for chunk in wrap(&r.description, width.saturating_sub(6).max(20)) {
            out.push(Entry {
                line: Line::styled(format!("      {chunk}"), t.dim()),
                key: key.clone(),
                header: false,
            });
        }
    }
    out
}

/// The raw page's metrics, by hardware unit (the metric name's prefix).
fn raw_entries(scene: &Scene, p: &crate::model::Profile, name_w: usize) -> Vec<Entry> {
    let mut out = Vec::new();
    let Some(raw) = &p.raw else {
        return out;
    };
    // One quantity is a metric's rollups (`.min`, `.max`, `.sum` …) in one unit: they
    // are scaled alike.
    let stem = |metric: &str| metric.split('.').next().unwrap_or("").to_string();
    let cells: Vec<_> = raw.iter().filter(|(_, v)| !v.is_empty()).collect();
    let stems: Vec<String> = cells.iter().map(|(col, _)| stem(&col.metric)).collect();
    let most = largest(
        cells
            .iter()
            .zip(&stems)
            .map(|((col, v), s)| (s.as_str(), &*col.unit.base, v.num().unwrap_or(0.0))),
    );
    let mut units: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    for ((col, value), s) in cells.iter().zip(&stems) {
        let unit = col.metric.split("__").next().unwrap_or("");
        let base = &*col.unit.base;
        let scale = Scale::of(base, most.get(&(s.as_str(), base)).copied().unwrap_or(0.0));
        units
            .entry(unit)
            .or_default()
            .push((col.name.to_string(), scale.show(value)));
    }
    for (unit, metrics) in units {
        out.push(header_entry(
            scene,
            format!("raw page: {unit}__ ({} metrics)", metrics.len()),
        ));
        for (name, value) in metrics {
            out.push(metric_entry(unit, &name, value, name_w));
        }
    }
    out
}

/// The largest value of each quantity among `rows` (a key and a value each), for
/// [`Scale::of`].
fn largest<'k>(
    rows: impl Iterator<Item = (&'k str, &'k str, f64)>,
) -> BTreeMap<(&'k str, &'k str), f64> {
    let mut out: BTreeMap<(&str, &str), f64> = BTreeMap::new();
    for (key, unit, v) in rows {
        let m = out.entry((key, unit)).or_insert(0.0);
        if v.is_finite() {
            *m = m.max(v.abs());
        }
    }
    out
}
