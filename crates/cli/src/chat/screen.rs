//! The chat's output: one writer for everything the session prints, so streamed text, tool
//! lines, the spinner and prompts never overwrite each other. The spinner is drawn only on an
//! empty line and only on a terminal, and is erased before anything else is written.
//!
//! Text from outside (the model, a tool, a file, a worker's config) reaches the terminal
//! cleaned (`frontend::clean`): [`Screen::paint`], [`Screen::dim`] and the spinner clean the
//! text they are given before styling it; [`Screen::write`] and [`Screen::line`] write as they
//! are given, so their callers pass our own text, cleaned text or the result of `paint`/`dim`.

use std::io::{IsTerminal, Write};

use crossterm::style::{ContentStyle, Stylize};

use crate::frontend::clean::clean_text;

/// The few text styles the chat uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Names and titles.
    Bold,
    /// Secondary information.
    Dim,
    /// Errors.
    Red,
    /// Warnings.
    Yellow,
}

impl Tone {
    fn style(self) -> ContentStyle {
        let style = ContentStyle::new();
        match self {
            Tone::Bold => style.bold(),
            Tone::Dim => style.dim(),
            Tone::Red => style.red(),
            Tone::Yellow => style.yellow(),
        }
    }
}

/// Spinner frames (braille dots).
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// What the spinner says and where it is.
#[derive(Debug)]
struct Spinner {
    label: String,
    frame: usize,
    drawn: bool,
}

/// Whether output may be coloured: stdout is a terminal and `NO_COLOR` is unset or empty.
pub fn use_color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The terminal the chat writes to.
#[derive(Debug)]
pub struct Screen {
    color: bool,
    tty: bool,
    width: usize,
    at_line_start: bool,
    spinner: Option<Spinner>,
}

impl Screen {
    /// A screen on stdout: colour unless `NO_COLOR` is set or stdout is not a terminal.
    pub fn stdout() -> Screen {
        let tty = std::io::stdout().is_terminal();
        let width = crossterm::terminal::size()
            .map(|(w, _)| usize::from(w))
            .unwrap_or(80)
            .max(20);
        Screen {
            color: use_color(),
            tty,
            width,
            at_line_start: true,
            spinner: None,
        }
    }

    /// Whether colour is on.
    pub fn color(&self) -> bool {
        self.color
    }

    /// The width in columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// `text` cleaned of control characters, in `tone` when colour is on.
    pub fn paint(&self, tone: Tone, text: &str) -> String {
        let text = clean_text(text);
        if self.color {
            tone.style().apply(text).to_string()
        } else {
            text.into_owned()
        }
    }

    /// `text` cleaned of control characters, dimmed when colour is on.
    pub fn dim(&self, text: &str) -> String {
        self.paint(Tone::Dim, text)
    }

    /// Writes `text` as it is (streamed text; may end mid-line): our own text, cleaned text or
    /// what [`Screen::paint`] made.
    pub fn write(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.erase_spinner();
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        self.at_line_start = text.ends_with('\n');
    }

    /// Writes `text` as whole lines, starting on a fresh line.
    pub fn line(&mut self, text: &str) {
        let mut block = String::new();
        if !self.at_line_start {
            block.push('\n');
        }
        block.push_str(text);
        if !text.ends_with('\n') {
            block.push('\n');
        }
        self.write(&block);
    }

    /// Makes sure the next output starts on a fresh line.
    pub fn end_line(&mut self) {
        if !self.at_line_start {
            self.write("\n");
        }
    }

    /// Shows the spinner with `label` (on a terminal; cleaned of control characters).
    pub fn spin(&mut self, label: &str) {
        if !self.tty {
            return;
        }
        let label = clean_text(label).into_owned();
        match &mut self.spinner {
            Some(spinner) => spinner.label = label,
            None => {
                self.spinner = Some(Spinner {
                    label,
                    frame: 0,
                    drawn: false,
                });
            }
        }
        self.tick();
    }

    /// Removes the spinner.
    pub fn stop_spin(&mut self) {
        self.erase_spinner();
        self.spinner = None;
    }

    /// Advances the spinner one frame (called on a timer).
    pub fn tick(&mut self) {
        if !self.at_line_start {
            return;
        }
        let color = self.color;
        let Some(spinner) = &mut self.spinner else {
            return;
        };
        spinner.frame = (spinner.frame + 1) % FRAMES.len();
        let text = format!("{} {}…", FRAMES[spinner.frame], spinner.label);
        let text = if color {
            Tone::Dim.style().apply(text).to_string()
        } else {
            text
        };
        let mut out = std::io::stdout().lock();
        let _ = write!(out, "\r\x1b[2K{text}");
        let _ = out.flush();
        spinner.drawn = true;
    }

    fn erase_spinner(&mut self) {
        if let Some(spinner) = &mut self.spinner
            && spinner.drawn
        {
            let mut out = std::io::stdout().lock();
            let _ = write!(out, "\r\x1b[2K");
            let _ = out.flush();
            spinner.drawn = false;
        }
    }
}
