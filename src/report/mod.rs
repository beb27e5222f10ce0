//! Text reports of a ladder (the timeline) and of a comparison, in several formats.
//! Each format is one [`Exporter`]; the table and Markdown formats share one grid.

pub mod colour;
pub mod comparison;
mod csv_rows;
mod exporter;
pub mod format;
pub mod grid;
mod html;
mod json;
mod markdown;
mod order;
mod output_format;
pub mod perfetto;
pub mod pipeline;
pub mod roofline;
mod roofline_svg;
pub mod runs;
pub mod step;
pub mod svg;
mod svg_parts;
mod texts;
pub mod trace_cost;

pub use exporter::{Analysed, CompareInput, CompareSide, Exporter, column_names};
pub use grid::Grid;
pub use order::{display_order, stall_rows};
pub use output_format::{CompareFormat, Format, exporter, exporter_with_chart, table_exporter};
pub use texts::{
    STALL_UNIT, escape, label_cell, label_text, stall_heading, stall_samples_cell,
    stall_source_cell, step_name, top_reason_text, trail_label, verdict_text, verdict_word,
    version_warnings, warning_marker, z_text,
};
