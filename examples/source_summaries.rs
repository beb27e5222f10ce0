//! Writes the source-page summaries (`<export>.summary.json`) of ladder folders made
//! before `import` wrote them, or whose exports were replaced by hand; the bundled
//! profiles keep theirs current this way (within the default size limits). Run:
//! `cargo run --example source_summaries -- profiles/*/`.

use stallscope::files::limits::SizeLimits;

fn main() -> anyhow::Result<()> {
    let dirs: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    if dirs.is_empty() {
        anyhow::bail!("give the ladder folders, e.g. profiles/*/");
    }
    for dir in &dirs {
        for path in stallscope::model::source::refresh_summaries(dir, SizeLimits::DEFAULT)? {
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}
