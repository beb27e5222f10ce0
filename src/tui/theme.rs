//! Colours. Only the terminal's named colours (which follow its own palette, dark or
//! light) and modifiers; with `NO_COLOR` set, modifiers alone.

use crate::analysis::Better;
use crate::ncu::StallReason;
use crate::report::colour::{self, Heat, Hue};
use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to anything non-empty (no-color.org).
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub fn title(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    pub fn dim(&self) -> Style {
        Style::new().add_modifier(Modifier::DIM)
    }

    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    pub fn key(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub fn ok(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn moved(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    pub fn better(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn worse(&self) -> Style {
        self.fg(Color::Red)
    }

    pub fn added(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn removed(&self) -> Style {
        self.fg(Color::Red)
    }

    /// A cell coloured by how good its value is among the row's values: `rank` 0 is the
    /// worst, 1 the best. Neutral metrics stay plain.
    pub fn heat(&self, better: Better, rank: f64) -> Style {
        match colour::heat(better, rank) {
            Heat::Good => self.fg(Color::Green),
            Heat::Fair => self.fg(Color::Yellow),
            Heat::Poor => self.fg(Color::Red),
            Heat::Plain => Style::new(),
        }
    }

    /// Heat of a share of stall samples (a hot SASS line): more is hotter.
    pub fn hot(&self, share: f64) -> Style {
        match share {
            s if s >= 0.05 => self.fg(Color::Red).add_modifier(Modifier::BOLD),
            s if s >= 0.01 => self.fg(Color::Yellow),
            s if s > 0.0 => Style::new(),
            _ => self.dim(),
        }
    }

    /// One colour per stall reason, for stacked bars and their legend. Without colour,
    /// the bars use a different fill character per reason instead.
    pub fn reason(&self, r: StallReason) -> Style {
        self.fg(terminal_colour(colour::reason_hue(r)))
    }

    /// One colour per pipeline stage (by its index in the trace), as the HTML page
    /// colours it. Without colour, the lanes use a different fill character per stage.
    pub fn stage(&self, stage: u16) -> Style {
        self.fg(terminal_colour(colour::stage_hue(usize::from(stage))))
    }

    /// The character a pipeline lane's stage is drawn with.
    pub fn stage_fill(&self, stage: u16) -> char {
        const FILLS: [char; 10] = ['#', '=', '+', '%', '*', '@', '&', '$', '~', '^'];
        if self.color {
            '█'
        } else {
            FILLS[usize::from(stage) % FILLS.len()]
        }
    }

    /// The character a stacked-bar segment is drawn with.
    pub fn reason_fill(&self, r: StallReason) -> char {
        if self.color {
            return '█';
        }
        use StallReason::*;
        match r {
            Selected => '#',
            Wait => '=',
            ShortScoreboard => 's',
            LongScoreboard => 'L',
            Barrier => 'b',
            MioThrottle => 'm',
            MathPipeThrottle => '+',
            NotSelected => '-',
            _ => '.',
        }
    }
}

/// The terminal's named colour for a hue.
fn terminal_colour(h: Hue) -> Color {
    match h {
        Hue::Magenta => Color::Magenta,
        Hue::Cyan => Color::Cyan,
        Hue::Blue => Color::Blue,
        Hue::Yellow => Color::Yellow,
        Hue::LightCyan => Color::LightCyan,
        Hue::LightBlue => Color::LightBlue,
        Hue::LightYellow => Color::LightYellow,
        Hue::Green => Color::Green,
        Hue::LightGreen => Color::LightGreen,
        Hue::LightMagenta => Color::LightMagenta,
        Hue::Gray => Color::Gray,
    }
}
