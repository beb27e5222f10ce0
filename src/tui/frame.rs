//! The explorer's frame: the tab bar, the headline of the selected version, the view
//! shown, a status line and the footer; the popups on top.

use super::views::scroll::clamp_scroll;
use super::views::text::{fit, printable, split_width, wrap};
use super::views::{bottleneck, compare, inspect, notes, pipeline, roofline, source, timeline};
use crate::analysis::catalogue::{HEADLINE, Headline};
use crate::report::format;
use crate::text_width;
use crate::tui::action::{Action, View};
use crate::tui::keymap::{self, KEYMAP};
use crate::tui::state::{App, Status, job_name};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// The parts of the screen, computed the same way for drawing and for mouse hits.
pub struct Areas {
    pub tabs: Rect,
    pub headline: Rect,
    pub body: Rect,
    pub status: Rect,
    pub footer: Rect,
}

pub fn areas(area: Rect) -> Areas {
    let [tabs, headline, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        tabs,
        headline,
        body,
        status,
        footer,
    }
}

pub fn draw(frame: &mut Frame, app: &App) {
    let area = frame.area();
    if area.width < 20 || area.height < 6 {
        frame.render_widget(Paragraph::new("stallscope: enlarge the terminal"), area);
        return;
    }
    let a = areas(area);
    let width = area.width as usize;
    frame.render_widget(
        Paragraph::new(fit(printable(tab_line(app, a.tabs.width)), width)),
        a.tabs,
    );
    frame.render_widget(
        Paragraph::new(fit(printable(headline(app, width)), width)),
        a.headline,
    );
    let status = status_line(app, width);
    if app.version_index().is_none() {
        frame.render_widget(Paragraph::new(status), a.status);
        frame.render_widget(Paragraph::new(footer_line(app, a.footer.width)), a.footer);
        if app.message {
            draw_message(frame, app, area);
        }
        if app.help {
            draw_help(frame, app, area);
        }
        return;
    }
    let scene = app.scene();
    match app.view {
        View::Timeline => timeline::draw(frame, &scene, &app.timeline, a.body),
        View::Compare => compare::draw(frame, &scene, &app.compare, a.body),
        View::Roofline => roofline::draw(frame, &scene, &app.roofline, a.body),
        View::Pipeline => pipeline::draw(frame, &scene, &app.pipeline, a.body),
        View::Inspect => inspect::draw(frame, &scene, &app.inspect, a.body),
        View::Source => source::draw(frame, &scene, &app.source, a.body),
        View::Bottleneck => bottleneck::draw(frame, &scene, &app.bottleneck, a.body),
        View::Notes => notes::draw(frame, &scene, &app.notes, a.body),
    }
    frame.render_widget(Paragraph::new(status), a.status);
    frame.render_widget(Paragraph::new(footer_line(app, a.footer.width)), a.footer);
    if app.kernel_popup {
        draw_kernel_names(frame, app, area);
    }
    if app.message {
        draw_message(frame, app, area);
    }
    if app.help {
        draw_help(frame, app, area);
    }
}

/// The full kernel names of the version shown (in compare, of both), wrapped, with
/// their short forms: the names the views shorten are one key (K) away.
fn draw_kernel_names(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let ls = app.ladder();
    let shown: Vec<usize> = match (app.view, app.compare_pair()) {
        (View::Compare, Some((a, b))) => vec![a, b],
        _ => app.version_index().into_iter().collect(),
    };
    let w = area.width.saturating_sub(4).min(100);
    let text_w = (w as usize).saturating_sub(4);
    let mut lines: Vec<Line> = Vec::new();
    for i in shown {
        let v = &ls.ladder.versions[i];
        // The title and the short name cut with an ellipsis where the popup ends.
        let inner = (w as usize).saturating_sub(2);
        lines.push(fit(
            Line::styled(format!("{} {}", v.id, v.title), t.title()),
            inner,
        ));
        match &v.profile {
            Some(p) => {
                lines.push(fit(
                    Line::from(vec![
                        Span::styled("short ", t.dim()),
                        Span::raw(p.short_name()),
                    ]),
                    inner,
                ));
                lines.push(Line::styled("full", t.dim()));
                // A C++ signature has no spaces to break at everywhere: it is cut into
                // pieces of the popup's width.
                let chars: Vec<char> = p.kernel.chars().collect();
                for piece in chars.chunks(text_w.max(1)) {
                    lines.push(Line::raw(format!("  {}", piece.iter().collect::<String>())));
                }
            }
            None => lines.push(Line::styled("no profile", t.dim())),
        }
    }
    let h = area.height.saturating_sub(2).min(lines.len() as u16 + 2);
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    let lines: Vec<Line> = lines.into_iter().map(printable).collect();
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" kernel names (K or Esc closes) "),
        ),
        popup,
    );
}

/// How the tab line is laid out at a width: whether it starts with the program's name
/// and the views' tabs whole, or the view shown whole and the others by their key
/// letter (to leave room for the ladder and the run shape), and what it says of the
/// ladder.
pub struct TabLine {
    pub brand: bool,
    pub compact: bool,
    pub ladder: Option<String>,
}

const BRAND: &str = "stallscope │ ";

/// A tab's text: ` timeline `, or in a compact line the key that shows the view (` c `,
/// ` w ` for the pipeline) for a view not shown.
fn tab_title(v: View, shown: View, compact: bool) -> String {
    if compact && v != shown {
        format!(
            " {} ",
            keymap::first_key(keymap::Context::Global, Action::Show(v))
        )
    } else {
        format!(" {} ", v.title())
    }
}

/// The tab titles with their x ranges in a tab line `width` columns wide, for drawing
/// and for clicks.
pub fn tab_spans(app: &App, width: u16) -> Vec<(View, u16, u16)> {
    let layout = tab_layout(app, width);
    tab_ranges(app.view, layout.brand, layout.compact)
}

fn tab_ranges(shown: View, brand: bool, compact: bool) -> Vec<(View, u16, u16)> {
    let mut x = if brand {
        text_width::width(BRAND) as u16
    } else {
        0
    };
    View::ALL
        .iter()
        .map(|&v| {
            let w = text_width::width(&tab_title(v, shown, compact)) as u16;
            let span = (v, x, x + w);
            x += w + 1;
            span
        })
        .collect()
}

/// What the tab line says of the ladder, most first: its name, its place among the
/// ladders and the key to the next, and the shape whose run results the views show
/// (with the key to the next where it was measured at several); the last of them, the
/// shape alone, where there is a shape.
fn ladder_texts(app: &App) -> (Vec<String>, bool) {
    let (l, shown) = (&app.ladder().ladder, app.ladder().shown);
    // A built-in ladder beside a local store's is marked so.
    let built_in = l.store.is_embedded() && app.ladders.iter().any(|s| s.ladder.store.is_disk());
    let name = if built_in {
        format!("{} (built in)", l.name)
    } else {
        l.name.clone()
    };
    let several = app.ladders.len() > 1;
    let place = |hint: bool| match (several, hint) {
        (true, true) => format!(" ({}/{}, L: next)", app.current + 1, app.ladders.len()),
        (true, false) => format!(" ({}/{})", app.current + 1, app.ladders.len()),
        (false, _) => String::new(),
    };
    let measured = l.measured_shapes();
    let Some(s) = shown.shape(l).filter(|_| !measured.is_empty()) else {
        let texts = vec![
            format!("│ {}{}", name, place(true)),
            format!("│ {}{}", name, place(false)),
            format!("│ {}", name),
        ];
        return (texts, false);
    };
    let next = if measured.len() > 1 { " (S)" } else { "" };
    let texts = vec![
        format!("│ {}{} · runs at {s}{next}", name, place(true)),
        format!("│ {}{} · runs at {s}{next}", name, place(false)),
        format!("│ {} · runs at {s}{next}", name),
        format!("│ {} · runs at {s}", name),
        format!("│ runs at {s}"),
    ];
    (texts, true)
}

/// The tab line that fits `width`: the tabs whole with the brand and the ladder's name
/// (and the run shape) where they fit, then without the brand, else the compact tabs
/// with as much of the ladder's text as fits; the run shape is given up last.
pub fn tab_layout(app: &App, width: u16) -> TabLine {
    let width = width as usize;
    let (texts, shape) = ladder_texts(app);
    let tabs_w = |brand: bool, compact: bool| -> usize {
        tab_ranges(app.view, brand, compact)
            .last()
            .map_or(0, |&(_, _, end)| end as usize + 1)
    };
    let full = tabs_w(true, false);
    // With the tabs whole: the ladder's name, and its run shape where it has one.
    let whole = if shape {
        &texts[..texts.len() - 1]
    } else {
        &texts[..]
    };
    // Brand and whole tabs, whole tabs alone, then compact tabs with any of the texts.
    for (brand, compact, candidates) in [
        (true, false, whole),
        (false, false, whole),
        (false, true, &texts[..]),
    ] {
        let tabs = tabs_w(brand, compact);
        if let Some(t) = candidates
            .iter()
            .find(|t| tabs + text_width::width(t) <= width)
        {
            return TabLine {
                brand,
                compact,
                ladder: Some(t.clone()),
            };
        }
    }
    TabLine {
        brand: full <= width,
        compact: full > width,
        ladder: None,
    }
}

fn tab_line(app: &App, width: u16) -> Line<'static> {
    let t = &app.theme;
    let layout = tab_layout(app, width);
    let mut spans = Vec::new();
    if layout.brand {
        spans.extend([Span::styled("stallscope", t.title()), Span::raw(" │ ")]);
    }
    for &v in &View::ALL {
        let style = if v == app.view {
            t.selected()
        } else {
            Style::new()
        };
        spans.push(Span::styled(tab_title(v, app.view, layout.compact), style));
        spans.push(Span::raw(" "));
    }
    if let Some(ladder) = layout.ladder {
        spans.push(Span::styled(ladder, t.dim()));
    }
    Line::from(spans)
}

/// The selected version with its bottleneck and the three headline signals, kept in
/// view everywhere.
/// The selected version's id, title and bottleneck, then the headline signals that fit
/// `width` whole (a signal's value is never cut: one that does not fit is left out).
pub fn headline(app: &App, width: usize) -> Line<'static> {
    let t = &app.theme;
    let ls = app.ladder();
    let Some(i) = app.version_index() else {
        return Line::styled(
            format!(
                "{}: no versions yet (R runs its kernel ladder, or import exports)",
                ls.ladder.name
            ),
            t.dim(),
        );
    };
    let v = &ls.ladder.versions[i];
    let a = &ls.analysis.versions[i];
    let mut spans = vec![
        Span::styled(format!("{} ", v.id), t.title()),
        Span::raw(v.title.clone()),
    ];
    let sep = || Span::styled(" · ", Style::new());
    spans.push(sep());
    spans.push(Span::styled(
        crate::report::label_text(a.bottleneck.as_ref(), a.no_label),
        t.moved(),
    ));
    // Pages of two ncu runs: said in short in every view (the status line and its
    // message popup hold the whole warning).
    if let Some(m) = crate::report::warning_marker(v) {
        spans.push(sep());
        spans.push(Span::styled(m, t.error()));
    }

    for h in HEADLINE {
        let (Headline::Stall(_, name) | Headline::Metric(_, name)) = *h;
        let value = a.headline(h);
        let signal = [
            sep(),
            Span::styled(format!("{name} "), t.dim()),
            Span::raw(match value {
                Some(x) => format!("{x:.1}%"),
                None => format::UNKNOWN.to_string(),
            }),
        ];
        let used: usize = spans.iter().map(|s| text_width::width(&s.content)).sum();
        let more: usize = signal.iter().map(|s| text_width::width(&s.content)).sum();
        if used + more > width {
            spans.extend([sep(), Span::styled("…", t.dim())]);
            break;
        }
        spans.extend(signal);
    }
    Line::from(spans)
}

/// The status line in `width` columns: a job's progress, else the status message, else
/// the first loading warning (and how many more). A message that does not fit is cut
/// and ends with the key that shows it whole.
fn status_line(app: &App, width: usize) -> Line<'static> {
    let t = &app.theme;
    if let Some(j) = &app.job {
        // A gauge of the versions done, then what is running now.
        let gauge = 20usize;
        let filled = (j.done * gauge)
            .checked_div(j.total)
            .unwrap_or(0)
            .min(gauge);
        let progress = if j.total > 0 {
            format!(" {}/{} ", j.done, j.total)
        } else {
            " starting ".into()
        };
        return fit(
            printable(Line::from(vec![
                Span::styled(format!("{} ", job_name(j.kind)), t.key()),
                Span::styled("█".repeat(filled), t.ok()),
                Span::styled("░".repeat(gauge - filled), t.dim()),
                Span::raw(format!("{progress}{} ", j.current)),
                Span::styled("(x stops)", t.dim()),
            ])),
            width,
        );
    }
    let key = keymap::first_key(keymap::Context::Global, Action::ToggleMessage);
    let (text, style) = match &app.status {
        Some(Status::Info(m)) => (m.clone(), t.ok()),
        Some(Status::Error(m)) => (m.clone(), t.error()),
        None => match app.load_warnings.as_slice() {
            [] => return Line::default(),
            [one] => (one.clone(), t.error()),
            [first, rest @ ..] => (
                format!("{first} (and {} more: {key} lists them)", rest.len()),
                t.error(),
            ),
        },
    };
    let text = format::printable(&text).into_owned();
    if text_width::width(&text) <= width {
        return Line::styled(text, style);
    }
    let hint = format!(" ({key}: all of it)");
    let room = width.saturating_sub(text_width::width(&hint));
    Line::from(vec![
        Span::styled(text_width::cut(&text, room), style),
        Span::styled(hint, t.dim()),
    ])
}

/// The whole status message and every loading warning, wrapped, in a popup that
/// scrolls.
fn draw_message(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let key = keymap::first_key(keymap::Context::Global, Action::ToggleMessage);
    let w = area.width.saturating_sub(4).min(100);
    let text_w = (w as usize).saturating_sub(2).max(10);
    let mut lines: Vec<Line> = Vec::new();
    let add = |text: &str, style: Style, lines: &mut Vec<Line>| {
        let text = format::printable_lines(text);
        for l in text.lines() {
            let pieces = wrap(l, text_w);
            for piece in pieces {
                for part in split_width(&piece, text_w) {
                    lines.push(Line::styled(part, style));
                }
            }
        }
    };
    match &app.status {
        Some(Status::Info(m)) => add(m, t.ok(), &mut lines),
        Some(Status::Error(m)) => add(m, t.error(), &mut lines),
        None => {}
    }
    if !app.load_warnings.is_empty() {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::styled(
            format!(
                "what loading could not read ({}; `stallscope check` lists the same)",
                app.load_warnings.len()
            ),
            t.title(),
        ));
        for warning in &app.load_warnings {
            add(warning, t.error(), &mut lines);
        }
    }
    let closes = format!("{key} or Esc closes");
    scrolling_popup(
        frame,
        area,
        w,
        lines,
        app.message_scroll,
        "message",
        &closes,
    );
}

/// A popup `w` wide in the middle of `area`, as tall as its lines where they fit, else
/// scrolled by `scroll` (the title then says so), titled by what it shows and the key
/// that closes it.
fn scrolling_popup(
    frame: &mut Frame,
    area: Rect,
    w: u16,
    lines: Vec<Line>,
    scroll: usize,
    what: &str,
    closes: &str,
) {
    let h = area.height.saturating_sub(2).min(lines.len() as u16 + 2);
    let inner = h.saturating_sub(2) as usize;
    let offset = clamp_scroll(scroll, lines.len(), inner);
    let more = lines.len() > inner;
    let lines: Vec<Line> = lines.into_iter().skip(offset).collect();
    let popup = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    };
    frame.render_widget(Clear, popup);
    let title = if more {
        format!(" {what} (↑↓ scroll, {closes}) ")
    } else {
        format!(" {what} ({closes}) ")
    };
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL).title(title)),
        popup,
    );
}

fn footer_line(app: &App, width: u16) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    let mut used = 0usize;
    for keymap::Footer {
        keys, text: help, ..
    } in keymap::footer(&app.key_contexts())
    {
        let w = text_width::width(keys) + text_width::width(help) + 3;
        if used + w > width as usize {
            break;
        }
        used += w;
        spans.push(Span::styled(keys, t.key()));
        spans.push(Span::raw(format!(" {help}  ")));
    }
    Line::from(spans)
}

fn draw_help(frame: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let w = area.width.saturating_sub(4).min(90);
    let mut lines: Vec<Line> = Vec::new();
    for ctx in keymap::help_order() {
        let bindings: Vec<_> = KEYMAP.iter().filter(|b| b.context == ctx).collect();
        if bindings.is_empty() {
            continue;
        }
        lines.push(Line::styled(ctx.name().to_string(), t.title()));
        for b in bindings {
            // A description wider than the popup wraps under itself, whole.
            let label = format!("  {:<14}", keymap::keys_label(b));
            let room = (w as usize)
                .saturating_sub(2 + text_width::width(&label))
                .max(10);
            for (n, part) in wrap(b.help, room).into_iter().enumerate() {
                let key = if n == 0 {
                    label.clone()
                } else {
                    " ".repeat(label.len())
                };
                lines.push(Line::from(vec![
                    Span::styled(key, t.key()),
                    Span::raw(part),
                ]));
            }
        }
    }
    lines.push(Line::styled(
        "mouse: wheel scrolls, a click on a tab or a version column selects it",
        t.dim(),
    ));
    lines.push(Line::styled("colours and marks", t.title()));
    for l in timeline::legend()
        .into_iter()
        .chain([compare::legend(), roofline::legend()])
    {
        for (n, part) in wrap(&l, (w as usize).saturating_sub(6))
            .into_iter()
            .enumerate()
        {
            let indent = if n == 0 { "  " } else { "    " };
            lines.push(Line::raw(format!("{indent}{part}")));
        }
    }
    let key = keymap::first_key(keymap::Context::Global, Action::ToggleHelp);
    let closes = format!("{key} or Esc closes");
    scrolling_popup(frame, area, w, lines, app.help_scroll, "keys", &closes);
}
