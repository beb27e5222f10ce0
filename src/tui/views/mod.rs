//! The views. Each view's module holds its state (`TimelineState`, `SourceState`, …;
//! the views that only scroll share `scroll::Scrolled`), its `act` for the actions that
//! concern it (called by `App::update` alone, through
//! `App::act`), and its drawing, a pure function of its state and of the [`Scene`] the
//! explorer hands it (the ladder shown, the version selected). `frame.rs` draws the
//! frame around the view shown.

pub mod bottleneck;
pub mod compare;
mod frame;
pub mod inspect;
pub mod notes;
pub mod pipeline;
pub mod roofline;
pub mod scene;
mod scroll;
pub mod source;
mod stall_bar;
mod text;
pub mod timeline;

pub use frame::{Areas, TabLine, areas, draw, headline, tab_layout, tab_spans};
pub use scene::Scene;
