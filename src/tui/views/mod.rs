//! The views. Each view's module holds its state (`TimelineState`, `SourceState`, …;
//! the views that only scroll share `scroll::Scrolled`), its `act` for the actions that
//! concern it (called by `App::update` alone, through
//! `App::act`), and its drawing, a pure function of its state and of the [`Scene`] the
//! explorer hands it (the ladder shown, the version selected). The frame around the
//! view shown is `tui/frame.rs`'s, above the views: no view names the explorer's state.

pub mod bottleneck;
pub mod compare;
pub mod inspect;
pub mod notes;
pub mod pipeline;
pub mod roofline;
pub mod scene;
pub(super) mod scroll;
pub mod source;
mod stall_bar;
pub(super) mod text;
pub mod timeline;

pub use scene::Scene;
