//! A terminal's output: one writer for everything a front end prints there, so streamed text,
//! tool lines, the spinner and prompts never overwrite each other. A screen has a target —
//! stdout for the chat, stderr for `run` (whose stdout keeps only the answer) — and decides
//! colour, width and whether it is a terminal from that target. The spinner is drawn only on an
//! empty line and only on a terminal, and is erased before anything else is written.
//!
//! Text from outside (the model, a tool, a file, a worker's config) reaches the terminal
//! cleaned (`frontend::clean`): [`Screen::paint`], [`Screen::dim`] and the spinner clean the
//! text they are given before styling it; [`Screen::write`] and [`Screen::line`] write as they
//! are given, so their callers pass our own text, cleaned text or the result of `paint`/`dim`.

use std::io::{IsTerminal, Write};

use crossterm::style::{ContentStyle, Stylize};

use crate::frontend::clean::clean_text;

/// The few text styles the front ends use.
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

/// Where a screen writes.
#[derive(Debug, Clone)]
pub enum Target {
    /// Standard output (the chat).
    Stdout,
    /// Standard error (`run`, whose stdout is the answer).
    Stderr,
    /// A buffer, for tests: never a terminal.
    #[cfg(test)]
    Memory(std::sync::Arc<std::sync::Mutex<Vec<u8>>>),
}

impl Target {
    /// Whether the target is a terminal.
    pub fn is_terminal(&self) -> bool {
        match self {
            Target::Stdout => std::io::stdout().is_terminal(),
            Target::Stderr => std::io::stderr().is_terminal(),
            #[cfg(test)]
            Target::Memory(_) => false,
        }
    }

    /// Whether output to the target may be coloured: it is a terminal and `NO_COLOR` is unset
    /// or empty.
    pub fn use_color(&self) -> bool {
        self.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
    }

    /// Writes `bytes` and flushes (errors are ignored: there is nowhere else to tell).
    fn write_all(&self, bytes: &[u8]) {
        match self {
            Target::Stdout => {
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(bytes);
                let _ = out.flush();
            }
            Target::Stderr => {
                let mut out = std::io::stderr().lock();
                let _ = out.write_all(bytes);
                let _ = out.flush();
            }
            #[cfg(test)]
            Target::Memory(buffer) => buffer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend_from_slice(bytes),
        }
    }
}

/// Whether output on stdout may be coloured (what a line editor, which paints on stdout, is
/// told): stdout is a terminal and `NO_COLOR` is unset or empty.
pub fn use_color() -> bool {
    Target::Stdout.use_color()
}

/// The terminal a front end writes to.
#[derive(Debug)]
pub struct Screen {
    target: Target,
    color: bool,
    tty: bool,
    width: usize,
    at_line_start: bool,
    spinner: Option<Spinner>,
    /// What the user has typed while a turn runs, shown after the spinner.
    typed: String,
}

impl Screen {
    /// A screen on stdout: colour unless `NO_COLOR` is set or stdout is not a terminal.
    pub fn stdout() -> Screen {
        Screen::on(Target::Stdout)
    }

    /// A screen on stderr: colour unless `NO_COLOR` is set or stderr is not a terminal.
    pub fn stderr() -> Screen {
        Screen::on(Target::Stderr)
    }

    /// A screen on `target`, sized like the terminal when it is one (80 columns otherwise).
    pub fn on(target: Target) -> Screen {
        let tty = target.is_terminal();
        let width = if tty {
            crossterm::terminal::size()
                .map(|(w, _)| usize::from(w))
                .unwrap_or(80)
        } else {
            80
        }
        .max(20);
        Screen {
            color: target.use_color(),
            tty,
            width,
            at_line_start: true,
            spinner: None,
            typed: String::new(),
            target,
        }
    }

    /// A screen writing into `buffer`, `width` columns wide, without colour: for tests.
    #[cfg(test)]
    pub fn memory(buffer: std::sync::Arc<std::sync::Mutex<Vec<u8>>>, width: usize) -> Screen {
        Screen {
            width,
            ..Screen::on(Target::Memory(buffer))
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
        self.target.write_all(text.as_bytes());
        self.at_line_start = text.ends_with('\n');
    }

    /// Notes that the user ended a line the terminal echoed (an answer typed after a prompt
    /// written with [`Screen::write`]): the next output starts on that fresh line.
    pub fn input_ended(&mut self) {
        self.at_line_start = true;
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

    /// Changes what a spinner that is showing says (nothing when none is).
    pub fn relabel(&mut self, label: &str) {
        if let Some(spinner) = &mut self.spinner {
            spinner.label = clean_text(label).into_owned();
        }
    }

    /// Shows `typed` (what the user types while a turn runs) after the spinner.
    pub fn set_typed(&mut self, typed: &str) {
        self.typed = clean_text(typed).into_owned();
        if self.spinner.is_some() {
            self.tick();
        }
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
        let mut text = if color {
            Tone::Dim.style().apply(text).to_string()
        } else {
            text
        };
        if !self.typed.is_empty() {
            text.push_str(&format!("  › {}", self.typed));
        }
        self.target.write_all(format!("\r\x1b[2K{text}").as_bytes());
        spinner.drawn = true;
    }

    fn erase_spinner(&mut self) {
        if let Some(spinner) = &mut self.spinner
            && spinner.drawn
        {
            spinner.drawn = false;
            self.target.write_all(b"\r\x1b[2K");
        }
    }
}
