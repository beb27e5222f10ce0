//! Every metric and rule finding of the selected version's profile, grouped by ncu
//! section (raw-page metrics by hardware unit), filtered by `/`.

use super::App;
use crate::ncu::Value;
use crate::report::format;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::BTreeMap;

/// One line of the listing, with the text the filter searches.
pub struct Entry {
    pub line: Line<'static>,
    pub key: String,
    /// Section headers stay when one of their entries matches.
    pub header: bool,
}

pub fn draw(frame: &mut Frame, app: &App, body: Rect) {
    let lines = filtered(app, body.width as usize);
    // An active filter heads the view, with how to change and clear it: it stays when
    // another version is selected, and a status message never hides it.
    let body = match filter_line(app) {
        Some(line) => {
            let [top, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
            frame.render_widget(Paragraph::new(line), top);
            rest
        }
        None => body,
    };
    super::draw_document(frame, lines, app.scroll_of(super::View::Inspect), body);
}

/// The filter being typed or kept, and the keys for it; `None` without one.
pub fn filter_line(app: &App) -> Option<Line<'static>> {
    let t = &app.theme;
    let f = &app.inspect;
    if f.editing {
        return Some(Line::from(vec![
            Span::styled("filter: ", t.key()),
            Span::raw(f.filter.clone()),
            Span::styled("▏", t.key()),
            Span::styled("  Enter keeps it · Esc clears it", t.dim()),
        ]));
    }
    if f.filter.is_empty() {
        return None;
    }
    Some(Line::from(vec![
        Span::styled("filter: ", t.key()),
        Span::raw(f.filter.clone()),
        Span::styled("  / changes it · Esc clears it", t.dim()),
    ]))
}

pub fn filtered(app: &App, width: usize) -> Vec<Line<'static>> {
    let entries = entries(app, width);
    if app.inspect.filter.is_empty() {
        return entries.into_iter().map(|e| e.line).collect();
    }
    let needle = app.inspect.filter.to_lowercase();
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
            format!("nothing matches {:?}", app.inspect.filter),
            app.theme.dim(),
        ));
    }
    out
}

pub fn entries(app: &App, width: usize) -> Vec<Entry> {
    let t = &app.theme;
    let Some(i) = app.version_index() else {
        return Vec::new();
    };
    let v = &app.ladder().ladder.versions[i];
    let Some(p) = &v.profile else {
        return vec![Entry {
            line: Line::styled(
                format!("{} has no profile: import its ncu exports", v.id),
                t.dim(),
            ),
            key: String::new(),
            header: false,
        }];
    };
    let mut out = Vec::new();
    let header = |text: String| Entry {
        line: Line::styled(text.clone(), t.title()),
        key: text.to_lowercase(),
        header: true,
    };
    let name_w = (width / 2).clamp(20, 70);
    let metric = |section: &str, name: &str, value: String| Entry {
        line: Line::from(vec![
            Span::raw(format!("  {:<name_w$}", name)),
            Span::raw(value.clone()),
        ]),
        key: format!("{section} {name} {value}").to_lowercase(),
        header: false,
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
        .map(|(k, f)| format!("{} ({})", super::ladder_path(app, f), k.name()))
        .collect();
    out.push(Entry {
        line: Line::styled(format!("pages  {}", files.join(", ")), t.dim()),
        key: String::new(),
        header: false,
    });

    let mut sections: Vec<(&str, Vec<&crate::ncu::DetailMetric>)> = Vec::new();
    for m in &p.details {
        match sections.iter_mut().find(|(s, _)| *s == &*m.section) {
            Some((_, list)) => list.push(m),
            None => sections.push((&m.section, vec![m])),
        }
    }
    for (section, metrics) in sections {
        out.push(header(section.to_string()));
        for m in metrics {
            out.push(metric(section, &m.name, quantity(&m.value, &m.unit)));
        }
    }
    if !p.rules.is_empty() {
        out.push(header("rule findings".into()));
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
            let key = format!("rule {} {} {} {}", r.section, r.rule, r.kind, r.description)
                .to_lowercase();
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
    }
    if let Some(raw) = &p.raw {
        let mut units: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
        for (col, value) in raw.iter() {
            if value.is_empty() {
                continue;
            }
            let unit = col.metric.split("__").next().unwrap_or("");
            units
                .entry(unit)
                .or_default()
                .push((col.name.to_string(), quantity(&value, &col.unit.base)));
        }
        for (unit, metrics) in units {
            out.push(header(format!(
                "raw page: {unit}__ ({} metrics)",
                metrics.len()
            )));
            for (name, value) in metrics {
                out.push(metric(unit, &name, value));
            }
        }
    }
    out
}

/// A value in its internal unit, readable: ns as µs or ms, bytes as KiB/MiB, Hz as GHz.
pub fn quantity(v: &Value, unit: &str) -> String {
    match v {
        Value::Empty => format::UNKNOWN.to_string(),
        Value::Text(t) => t.to_string(),
        Value::Num(x) => {
            let x = *x;
            match unit {
                "ns" if x >= 1e6 => format!("{:.3} ms", x / 1e6),
                "ns" if x >= 1e3 => format!("{:.2} µs", x / 1e3),
                "byte" | "byte/block" if x >= 1024.0 => {
                    format!("{}{}", format::bytes(x), &unit[4..])
                }
                "Hz" if x >= 1e9 => format!("{:.2} GHz", x / 1e9),
                "Hz" if x >= 1e6 => format!("{:.1} MHz", x / 1e6),
                "byte/s" if x >= 1e9 => format!("{:.1} GB/s", x / 1e9),
                "" => format::thousands(x),
                u => format!("{} {u}", format::thousands(x)),
            }
        }
    }
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty()
            && crate::report::format::width(&cur) + 1 + crate::report::format::width(word) > width
        {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}
