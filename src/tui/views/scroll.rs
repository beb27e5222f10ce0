//! A view's position: moved by a key, kept so that the last page stays full, and a
//! document drawn from it.

use super::text::{fit, printable};
use crate::tui::action::Action;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

/// Where a move takes a view's position (its scroll, or its cursor): ↑ ↓ a row, PgUp
/// PgDn a page of `page` rows (less one, kept in view), Home End the top and the bottom;
/// `None` for an action that is no move. The views clamp the position as they draw.
pub fn moved(at: usize, action: Action, page: usize) -> Option<usize> {
    let page = page.max(2) as isize - 1;
    Some(match action {
        Action::Up => at.saturating_add_signed(-1),
        Action::Down => at.saturating_add_signed(1),
        Action::PageUp => at.saturating_add_signed(-page),
        Action::PageDown => at.saturating_add_signed(page),
        Action::Top => 0,
        Action::Bottom => usize::MAX / 2,
        _ => return None,
    })
}

/// The state of a view that only scrolls (the timeline, the pipeline, the notes): how far
/// it is scrolled.
#[derive(Debug, Default)]
pub struct Scrolled {
    pub scroll: usize,
}

impl Scrolled {
    /// The view's own actions: the moves scroll it.
    pub(crate) fn act(&mut self, action: Action, page: usize) {
        if let Some(at) = moved(self.scroll, action, page) {
            self.scroll = at;
        }
    }
}

/// Clamps a scroll offset so that the last page stays full.
pub fn clamp_scroll(offset: usize, total: usize, visible: usize) -> usize {
    offset.min(total.saturating_sub(visible))
}

/// Draws a view's document, one line a row, from its scroll offset.
pub fn draw_document(frame: &mut Frame, lines: Vec<Line<'static>>, scroll: usize, body: Rect) {
    let visible = body.height as usize;
    let offset = clamp_scroll(scroll, lines.len(), visible);
    let page: Vec<Line> = lines
        .into_iter()
        .skip(offset)
        .take(visible)
        .map(|l| fit(printable(l), body.width as usize))
        .collect();
    frame.render_widget(Paragraph::new(page), body);
}
