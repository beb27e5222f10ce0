//! The SASS listing of the selected version with its stall samples per instruction,
//! heat-coloured and sortable, beside the per-opcode aggregate; under it, what the line
//! under the cursor means.

use super::scene::Scene;
use super::scroll::{clamp_scroll, moved};
use super::text::{fit, printable};
use crate::analysis::catalogue::{explained_cell, opcode_help};
use crate::model::Version;
use crate::ncu::{SassLine, SourceListing, StallReason};
use crate::report::format;
use crate::text_width;
use crate::tui::action::{Action, Said};
use crate::tui::listing::{self, ListRow, SourceSort, rows, with_offsets};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

/// The source view's state: the cursor (a position in the sorted listing) and the sort.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceState {
    pub cursor: usize,
    pub sort: SourceSort,
    /// The search of the listing (`/`), kept after Enter until Esc clears it.
    pub search: String,
    /// Whether the search is being typed.
    pub searching: bool,
}

/// A version's SASS listing, where its profile has a source page (an error says why it
/// cannot be read).
type Listing<'a> = Option<Result<&'a SourceListing, &'a str>>;

impl SourceState {
    /// The source view's own actions on the selected `version`'s listing: the moves take
    /// its cursor through it, `o` sorts it, `]` and `[` go from hot spot to hot spot, and
    /// `/` starts a search, typed (the cursor on the first match), kept (Enter) or cleared
    /// (Esc), whose matches `n` and `N` go through.
    pub(crate) fn act(&mut self, action: Action, version: Option<&Version>, page: usize) -> Said {
        use Action::*;
        // Read (the first time) only by the actions that need the listing.
        let sass = || version.and_then(Version::listing);
        match action {
            SearchStart => {
                self.searching = true;
                self.search.clear();
            }
            FilterInput(c) => {
                self.search.push(c);
                return self.find_match(sass(), true, true);
            }
            FilterBackspace => {
                self.search.pop();
            }
            FilterEnd => self.searching = false,
            FilterCancel => {
                self.search.clear();
                self.searching = false;
            }
            NextMatch => return self.find_match(sass(), true, false),
            PrevMatch => return self.find_match(sass(), false, false),
            ToggleSort => self.next_sort(sass()),
            NextHot | PrevHot => return self.next_hot(sass(), action == NextHot),
            _ => {
                if let Some(at) = moved(self.cursor, action, page) {
                    self.cursor = at;
                }
            }
        }
        Said::Nothing
    }

    /// q or Esc in the view: clears a kept search; whether there was one to clear.
    pub(crate) fn close(&mut self) -> bool {
        if self.search.is_empty() {
            return false;
        }
        self.search.clear();
        true
    }

    /// The listing's next order (those the page holds, in turn), from the top.
    fn next_sort(&mut self, sass: Listing) {
        let sorts = sass
            .and_then(Result::ok)
            .map(listing::sorts)
            .unwrap_or_default();
        let at = sorts.iter().position(|s| *s == self.sort);
        self.sort = at
            .and_then(|i| sorts.get((i + 1) % sorts.len()))
            .copied()
            .unwrap_or(SourceSort::Samples);
        self.cursor = 0;
    }

    /// Moves the cursor to the next (`forward`) or previous hot spot; where there is
    /// none, says so.
    fn next_hot(&mut self, sass: Listing, forward: bool) -> Said {
        let hot = sass
            .and_then(Result::ok)
            .map(|s| listing::hot_positions(s, &listing::rows(s, self.sort)))
            .unwrap_or_default();
        let cur = self.cursor;
        let next = if forward {
            hot.iter().copied().find(|&p| p > cur)
        } else {
            hot.iter().rev().copied().find(|&p| p < cur)
        };
        match next {
            Some(p) => {
                self.cursor = p;
                Said::Nothing
            }
            None => Said::OfView("no further hot spot".into()),
        }
    }

    /// Moves the cursor to the next (or previous) instruction matching the search, from
    /// the top again past the end; `here`: the cursor's own line counts (a search being
    /// typed stays on a line that still matches). Says which match it is, or why there
    /// is none.
    fn find_match(&mut self, sass: Listing, forward: bool, here: bool) -> Said {
        let hits = match sass {
            None => Err("this version has no SASS listing to search".to_string()),
            Some(Err(why)) => Err(format!("the SASS listing cannot be read: {why}")),
            Some(Ok(s)) => {
                let rows = listing::rows(s, self.sort);
                let hits = listing::matches(s, &rows, &self.search);
                if hits.is_empty() {
                    Err(format!("no instruction matches {:?}", self.search))
                } else {
                    Ok(hits)
                }
            }
        };
        let hits = match hits {
            Ok(h) => h,
            Err(why) => return Said::OfSearch(why),
        };
        let cur = self.cursor;
        let next = if forward {
            hits.iter()
                .copied()
                .find(|&p| p > cur || (here && p == cur))
                .or_else(|| hits.first().copied())
        } else {
            hits.iter()
                .rev()
                .copied()
                .find(|&p| p < cur)
                .or_else(|| hits.last().copied())
        };
        let Some(p) = next else {
            return Said::Nothing;
        };
        let n = hits.iter().position(|&h| h == p).unwrap_or(0) + 1;
        self.cursor = p;
        Said::OfSearch(format!("{:?}: match {n} of {}", self.search, hits.len()))
    }
}

pub fn draw(frame: &mut Frame, scene: &Scene, state: &SourceState, body: Rect) {
    let Some(vi) = scene.version_index() else {
        return;
    };
    let s = match scene.listing() {
        Some(Ok(s)) => s,
        missing => {
            let v = &scene.ladder().ladder.versions[vi];
            let why = match missing {
                Some(Err(e)) => format!("{}'s source page cannot be read: {e}", v.id),
                _ => format!(
                    "{}: {}",
                    v.id,
                    scene.ladder().analysis.versions[vi].no_sass_reason()
                ),
            };
            let why = printable(Line::styled(why, scene.theme.dim()));
            frame.render_widget(Paragraph::new(why), body);
            return;
        }
    };
    let wide = body.width >= 110;
    let [main, meaning_area] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(1)]).areas(body);
    let [left, right] = Layout::horizontal([
        Constraint::Min(40),
        Constraint::Length(if wide { 44 } else { 0 }),
    ])
    .areas(main);
    let order = rows(s, state.sort);
    let cursor = state.cursor.min(order.len().saturating_sub(1));
    draw_listing(frame, scene, state, s, &order, cursor, left);
    if let Some(ListRow::Sass(i)) = order.get(cursor) {
        draw_meaning(frame, scene, &s.lines[*i], meaning_area);
    }
    if wide {
        draw_opcodes(frame, scene, vi, right);
    }
}

/// The listing's columns in a table `width` columns wide: the offset and the samples
/// as wide as their numbers; on a narrow terminal the top reason goes first, and the
/// instruction's text is cut on the right to the room left.
struct Columns {
    off_w: u16,
    stall_w: u16,
    /// 0 where the top reason is left out.
    reason_w: u16,
    text_w: usize,
}

impl Columns {
    fn of(sort: SourceSort, total: u64, width: u16) -> Columns {
        let off_w: u16 = if sort == SourceSort::CudaLine { 10 } else { 7 };
        let stall_w = text_width::width(&format::thousands(total as f64)).max(5) as u16;
        let reason_w: u16 = if width >= 60 { 18 } else { 0 };
        let columns = if reason_w > 0 { 4 } else { 3 };
        let text_w = width.saturating_sub(off_w + stall_w + 5 + reason_w + columns) as usize;
        Columns {
            off_w,
            stall_w,
            reason_w,
            text_w,
        }
    }

    /// The columns shown of five (offset, stall, %, top reason, instruction).
    fn shown<T>(&self, five: impl IntoIterator<Item = T>) -> impl Iterator<Item = T> {
        let reason = self.reason_w > 0;
        five.into_iter()
            .enumerate()
            .filter(move |&(i, _)| i != 3 || reason)
            .map(|(_, c)| c)
    }

    fn row(&self, cells: Vec<Cell<'static>>) -> Row<'static> {
        Row::new(self.shown(cells))
    }

    fn widths(&self) -> impl Iterator<Item = Constraint> {
        self.shown([
            Constraint::Length(self.off_w),
            Constraint::Length(self.stall_w),
            Constraint::Length(5),
            Constraint::Length(self.reason_w),
            Constraint::Fill(1),
        ])
    }
}

/// The listing in its order, the page around the cursor, under a title that says
/// where the cursor is, the search and the sort.
fn draw_listing(
    frame: &mut Frame,
    scene: &Scene,
    state: &SourceState,
    s: &SourceListing,
    order: &[ListRow],
    cursor: usize,
    area: Rect,
) {
    let t = &scene.theme;
    let total: u64 = s
        .lines
        .iter()
        .map(SassLine::stall_samples)
        .sum::<u64>()
        .max(1);
    let visible = area.height.saturating_sub(2) as usize;
    let offset = clamp_scroll(cursor.saturating_sub(visible / 2), order.len(), visible);
    let cols = Columns::of(state.sort, total, area.width);
    let bounds = listing::bounds(s);
    let header = cols
        .row(
            ["offset", "stall", "%", "top reason", "instruction"]
                .into_iter()
                .map(Cell::from)
                .collect(),
        )
        .style(t.title());
    let rows: Vec<Row> = order
        .iter()
        .enumerate()
        .skip(offset)
        .take(visible)
        .map(|(pos, &r)| {
            let row = listing_row(scene, state, s, r, &cols, total, bounds);
            if pos == cursor {
                row.style(t.selected())
            } else {
                row
            }
        })
        .collect();
    frame.render_widget(
        Table::new(rows, cols.widths()).header(header).block(
            Block::default()
                .borders(Borders::TOP)
                .title(text_width::cut(
                    // The position first: the title is cut on the right to the table's width.
                    &listing_title(state, s, order, cursor, total),
                    area.width as usize,
                )),
        ),
        area,
    );
}

/// A row of the listing: an instruction, heat-coloured by its share of the `total`
/// stall samples (under a CUDA line, indented; its offsets from the listing's `bounds`),
/// or a CUDA line with its instructions' samples.
fn listing_row(
    scene: &Scene,
    state: &SourceState,
    s: &SourceListing,
    r: ListRow,
    cols: &Columns,
    total: u64,
    (base, end): (u64, u64),
) -> Row<'static> {
    let t = &scene.theme;
    let i = match r {
        ListRow::Sass(i) => i,
        ListRow::Cuda(_, n) | ListRow::NoSourceLine(n) => {
            let (line, text) = match r {
                ListRow::Cuda(ci, _) => {
                    let c = &s.cuda_lines[ci];
                    (format!("line {}", c.line), c.text.trim().to_string())
                }
                _ => (
                    String::new(),
                    "(instructions of no source line)".to_string(),
                ),
            };
            let share = n as f64 / total as f64;
            return cols
                .row(vec![
                    Cell::from(line),
                    Cell::from(Line::from(format::thousands(n as f64)).right_aligned()),
                    Cell::from(Line::from(format!("{:.1}", share * 100.0)).right_aligned()),
                    Cell::from(""),
                    Cell::from(text_width::cut(&format::printable(&text), cols.text_w)),
                ])
                .style(t.title());
        }
    };
    let l = &s.lines[i];
    let st = l.stall_samples();
    let share = st as f64 / total as f64;
    let reason = top_reason(l).map(|r| r.metric_name()).unwrap_or("");
    let indent = if state.sort == SourceSort::CudaLine {
        "  "
    } else {
        ""
    };
    cols.row(vec![
        Cell::from(format!("{indent}{}", listing::offset(l, base))),
        Cell::from(Line::from(format::thousands(st as f64)).right_aligned()),
        Cell::from(Line::from(format!("{:.1}", share * 100.0)).right_aligned()),
        Cell::from(text_width::cut(reason, cols.reason_w as usize)),
        Cell::from(text_width::cut(
            &format::printable(&with_offsets(&l.text, base, end)),
            cols.text_w,
        )),
    ])
    .style(t.hot(share))
}

/// The listing's title: the cursor's line, the search (while typed, a cursor after it;
/// kept, with its matches), the sort, and the listing's size.
fn listing_title(
    state: &SourceState,
    s: &SourceListing,
    order: &[ListRow],
    cursor: usize,
    total: u64,
) -> String {
    let search = if state.searching {
        format!(" · /{}▏", format::printable(&state.search))
    } else if !state.search.is_empty() {
        let n = listing::matches(s, order, &state.search).len();
        format!(
            " · /{}: {n} match{} (n/N)",
            format::printable(&state.search),
            if n == 1 { "" } else { "es" }
        )
    } else {
        String::new()
    };
    let sort = match state.sort {
        SourceSort::Samples => "by stall samples",
        SourceSort::Address => "by address",
        SourceSort::CudaLine => "under the hottest CUDA lines",
    };
    format!(
        " line {}/{}{search} · SASS {sort} · {} instructions · {} stall samples ",
        cursor + 1,
        order.len(),
        s.lines.len(),
        format::thousands(total as f64)
    )
}

/// What the instruction under the cursor means: its top stall reason at its opcode, or
/// the opcode alone.
fn draw_meaning(frame: &mut Frame, scene: &Scene, l: &SassLine, area: Rect) {
    let meaning = match top_reason(l) {
        Some(r) => explained_cell(r, &l.opcode),
        None => format!(
            "{}: {}",
            l.opcode,
            opcode_help(&l.opcode).unwrap_or_else(|| "no glossary entry".into())
        ),
    };
    frame.render_widget(
        Paragraph::new(fit(
            printable(Line::styled(meaning, scene.theme.dim())),
            area.width as usize,
        )),
        area,
    );
}

/// Beside the listing on a wide terminal: the version's stall samples per opcode.
fn draw_opcodes(frame: &mut Frame, scene: &Scene, vi: usize, area: Rect) {
    let t = &scene.theme;
    let ops = &scene.ladder().analysis.versions[vi].hot_ops;
    let op_total: u64 = ops.iter().map(|o| o.stall_samples).sum::<u64>().max(1);
    let lines: Vec<Line> = ops
        .iter()
        .take(area.height.saturating_sub(1) as usize)
        .map(|o| {
            let share = o.stall_samples as f64 / op_total as f64;
            let reason = o.top_stall_reason().map(|r| r.metric_name()).unwrap_or("");
            printable(Line::from(vec![
                Span::styled(format::left(&o.opcode, 11), t.hot(share)),
                Span::raw(format!("{:>5.1}%  ", share * 100.0)),
                Span::styled(reason.to_string(), t.dim()),
            ]))
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::default()
                .borders(Borders::TOP | Borders::LEFT)
                .title(" per opcode "),
        ),
        area,
    );
}

/// The stall reason a line's samples mostly are (`selected` is not a stall).
fn top_reason(l: &SassLine) -> Option<StallReason> {
    StallReason::ALL
        .iter()
        .copied()
        .filter(|r| r.is_stall())
        .max_by_key(|r| l.stall(*r))
        .filter(|r| l.stall(*r) > 0)
}
