//! Renders each view of the explorer on the bundled profiles into an SVG "screenshot"
//! in assets/, the way a dark terminal shows it. Run: `cargo run --example screenshots`.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use stallscope::files::limits::SizeLimits;
use stallscope::model::{self, LoadReport, Store};
use stallscope::tui::action::{Action, View};
use stallscope::tui::frame;
use stallscope::tui::ladder_state::LadderState;
use stallscope::tui::state::App;
use stallscope::tui::theme::Theme;
use std::fmt::Write;

const W: u16 = 140;
const H: u16 = 44;
const CW: f64 = 8.4; // cell width, px
const CH: f64 = 17.0; // cell height, px
const BG: &str = "#1d1f21";
const FG: &str = "#d0d0d0";

fn hex(c: Color, default: &str) -> String {
    match c {
        Color::Reset => default.into(),
        Color::Black => "#1d1f21".into(),
        Color::Red => "#e06c75".into(),
        Color::Green => "#98c379".into(),
        Color::Yellow => "#e5c07b".into(),
        Color::Blue => "#61afef".into(),
        Color::Magenta => "#c678dd".into(),
        Color::Cyan => "#56b6c2".into(),
        Color::Gray => "#a0a0a0".into(),
        Color::DarkGray => "#5c6370".into(),
        Color::LightRed => "#ff8b94".into(),
        Color::LightGreen => "#b5e890".into(),
        Color::LightYellow => "#f5dc9b".into(),
        Color::LightBlue => "#8cc8ff".into(),
        Color::LightMagenta => "#e0a0f0".into(),
        Color::LightCyan => "#8de0ea".into(),
        Color::White => "#ffffff".into(),
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        _ => default.into(),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn svg(buf: &Buffer) -> String {
    let (w, h) = (buf.area.width, buf.area.height);
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="14"><rect width="100%" height="100%" fill="{BG}" rx="6"/>"#,
        w as f64 * CW + 16.0,
        h as f64 * CH + 16.0
    );
    for y in 0..h {
        let mut x = 0;
        while x < w {
            let cell = &buf[(x, y)];
            let style = (cell.fg, cell.bg, cell.modifier);
            let mut text = String::new();
            let x0 = x;
            while x < w && (buf[(x, y)].fg, buf[(x, y)].bg, buf[(x, y)].modifier) == style {
                text.push_str(buf[(x, y)].symbol());
                x += 1;
            }
            let (mut fg, mut bg) = (hex(style.0, FG), hex(style.1, BG));
            if style.2.contains(Modifier::REVERSED) {
                std::mem::swap(&mut fg, &mut bg);
            }
            let px = 8.0 + x0 as f64 * CW;
            let py = 8.0 + y as f64 * CH;
            if bg != BG {
                let _ = write!(
                    out,
                    r#"<rect x="{px}" y="{py}" width="{}" height="{CH}" fill="{bg}"/>"#,
                    (x - x0) as f64 * CW
                );
            }
            if text.trim().is_empty() {
                continue;
            }
            let weight = if style.2.contains(Modifier::BOLD) {
                r#" font-weight="bold""#
            } else {
                ""
            };
            let opacity = if style.2.contains(Modifier::DIM) {
                r#" fill-opacity="0.6""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r#"<text x="{px}" y="{}" fill="{fg}"{weight}{opacity} xml:space="preserve" textLength="{}" lengthAdjust="spacingAndGlyphs">{}</text>"#,
                py + CH * 0.78,
                (x - x0) as f64 * CW,
                esc(&text)
            );
        }
    }
    out.push_str("</svg>\n");
    out
}

fn main() {
    let ladders = model::load_ladders(
        &Store::disk(SizeLimits::DEFAULT),
        std::path::Path::new("profiles"),
        &mut LoadReport::default(),
    )
    .expect("run from the repository root");
    let mut app = App::new(
        ladders.into_iter().map(LadderState::new).collect(),
        Theme { color: true },
    );
    let pos = app
        .ladder()
        .order
        .iter()
        .position(|&i| app.ladder().ladder.versions[i].id == "v28")
        .unwrap_or(0);
    app.update(Action::SelectVersion(pos));
    std::fs::create_dir_all("assets").unwrap();
    for view in View::ALL {
        app.update(Action::Show(view));
        if view == View::Inspect {
            for c in "throughput".chars() {
                app.update(Action::FilterInput(c));
            }
        }
        let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
        term.draw(|f| frame::draw(f, &app)).unwrap();
        let path = format!("assets/{}.svg", view.title());
        std::fs::write(&path, svg(term.backend().buffer())).unwrap();
        println!("wrote {path}");
    }
}
