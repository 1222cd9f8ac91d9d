//! A terminal's output: one writer for everything a front end prints there, so streamed text,
//! tool lines, the spinner and prompts never overwrite each other. A screen has a target —
//! stdout for the chat, stderr for `run` (whose stdout keeps only the answer) — and decides
//! colour, width and whether it is a terminal from that target. The spinner is drawn only on an
//! empty line and only on a terminal, and is erased before anything else is written.
//!
//! A row left open by [`Screen::write`] (the line an answer is still streaming, which the
//! markdown stream redraws styled over itself when it ends) stays the last row: whole lines
//! written meanwhile with [`Screen::line`] (`⏹ interrupting…`, a command typed during the turn)
//! go above it, and it is drawn again below them as it was. So the stream's later redraw lands
//! on its own row, and every line is drawn once. That takes cursor control, so only on a
//! terminal; elsewhere the lines start on a fresh row after the open one.
//!
//! Text from outside (the model, a tool, a file, a worker's config) reaches the terminal
//! cleaned (`frontend::clean`): [`Screen::paint`], [`Screen::dim`] and the spinner clean the
//! text they are given before styling it; [`Screen::write`] and [`Screen::line`] write as they
//! are given, so their callers pass our own text, cleaned text or the result of `paint`/`dim`.

use std::io::{IsTerminal, Write};

use crossterm::style::{ContentStyle, Stylize};
use unicode_width::UnicodeWidthChar;

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
    /// What the open row shows: the bytes written since the last newline, from the last `\r`
    /// on (a redraw starts with one). Empty at the start of a line.
    open_row: String,
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
            open_row: String::new(),
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
        match text.rfind('\n') {
            Some(at) => {
                self.open_row.clear();
                self.open_row.push_str(&text[at + 1..]);
            }
            None => self.open_row.push_str(text),
        }
        if let Some(at) = self.open_row.rfind('\r') {
            self.open_row.drain(..at);
        }
    }

    /// Notes that the user ended a line the terminal echoed (an answer typed after a prompt
    /// written with [`Screen::write`]): the next output starts on that fresh line.
    pub fn input_ended(&mut self) {
        self.at_line_start = true;
        self.open_row.clear();
    }

    /// Writes `text` as whole lines, starting on a fresh line. On a terminal, a row left open
    /// (see the module documentation) is taken off, and drawn again below `text`.
    pub fn line(&mut self, text: &str) {
        let mut block = String::new();
        let mut reopen = String::new();
        if !self.at_line_start {
            if self.tty {
                reopen = std::mem::take(&mut self.open_row);
                block.push_str(&erase_rows(rows_taken(&reopen, self.width)));
            } else {
                block.push('\n');
            }
        }
        block.push_str(text);
        if !text.ends_with('\n') {
            block.push('\n');
        }
        block.push_str(&reopen);
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

    /// What the open row shows (for tests).
    #[cfg(test)]
    fn open_row(&self) -> &str {
        &self.open_row
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

/// How many terminal rows `row` (bytes written after a newline, escape sequences included)
/// takes on a terminal `width` columns wide: at least one; a row that fills its last column
/// exactly takes no more, as terminals wrap only when the next character comes.
fn rows_taken(row: &str, width: usize) -> usize {
    let mut columns = 0;
    let mut chars = row.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => columns = 0,
            // A CSI sequence (`ESC [`, parameters, a final byte from `@` to `~`) or a
            // two-character escape: no columns.
            '\x1b' => {
                if chars.next_if_eq(&'[').is_some() {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            c => columns += c.width().unwrap_or(0),
        }
    }
    columns.div_ceil(width.max(1)).max(1)
}

/// Moves to the first of the last `rows` rows and erases from there to the end of the screen.
fn erase_rows(rows: usize) -> String {
    match rows {
        0 | 1 => "\r\x1b[J".to_owned(),
        n => format!("\r\x1b[{}A\x1b[J", n - 1),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A screen that takes itself for a terminal `width` columns wide, writing into a buffer.
    fn terminal(width: usize) -> (Screen, Arc<Mutex<Vec<u8>>>) {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let screen = Screen {
            tty: true,
            ..Screen::memory(buffer.clone(), width)
        };
        (screen, buffer)
    }

    /// What a terminal `width` columns wide shows after `bytes` (`\n` as a terminal with
    /// output processing gets it), trailing blank rows dropped.
    fn shown(bytes: &[u8], width: u16) -> Vec<String> {
        let mut parser = vt100::Parser::new(
            24.try_into().expect("rows"),
            width.try_into().expect("columns"),
            0,
        );
        parser.process(
            &String::from_utf8_lossy(bytes)
                .replace('\n', "\r\n")
                .into_bytes(),
        );
        let mut rows: Vec<String> = parser
            .screen()
            .rows(0, width)
            .map(|row| row.trim_end().to_owned())
            .collect();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        rows
    }

    #[test]
    fn a_line_written_while_a_row_is_open_goes_above_it_and_the_row_is_drawn_once() {
        let (mut screen, buffer) = terminal(40);
        screen.write("Once upon");
        screen.write(" a time");
        screen.line("⏹ interrupting…");
        assert_eq!(screen.open_row(), "Once upon a time");
        // The stream ends its line the way the markdown stream does: redrawn styled over itself.
        screen.write("\r\x1b[2K\x1b[1mOnce upon a time\x1b[0m\n");
        screen.line("⏹ interrupted");
        let bytes = buffer.lock().unwrap().clone();
        assert_eq!(
            shown(&bytes, 40),
            ["⏹ interrupting…", "Once upon a time", "⏹ interrupted"]
        );
    }

    #[test]
    fn a_redraw_is_what_the_open_row_shows_and_what_is_drawn_again() {
        let (mut screen, buffer) = terminal(40);
        screen.write("plain words \r\x1b[2K\x1b[1mstyled words\x1b[0m ");
        assert_eq!(screen.open_row(), "\r\x1b[2K\x1b[1mstyled words\x1b[0m ");
        screen.line("a note\nin two lines");
        screen.write("and more\n");
        let bytes = buffer.lock().unwrap().clone();
        assert_eq!(
            shown(&bytes, 40),
            ["a note", "in two lines", "styled words and more"]
        );
        assert_eq!(screen.open_row(), "");
    }

    #[test]
    fn an_open_row_the_terminal_wrapped_is_taken_off_whole() {
        let (mut screen, buffer) = terminal(20);
        // A code line of 30 columns: the terminal wraps it onto a second row.
        screen.write("let x = 1234567890123456789012;");
        screen.line("note");
        screen.write("\n");
        let bytes = buffer.lock().unwrap().clone();
        assert_eq!(
            shown(&bytes, 20),
            ["note", "let x = 123456789012", "3456789012;"]
        );
    }

    #[test]
    fn lines_between_whole_lines_are_written_in_order() {
        let (mut screen, buffer) = terminal(40);
        screen.write("first\n");
        screen.line("second");
        screen.line("third");
        let bytes = buffer.lock().unwrap().clone();
        assert_eq!(shown(&bytes, 40), ["first", "second", "third"]);
        assert!(
            !String::from_utf8_lossy(&bytes).contains('\x1b'),
            "no cursor control without an open row"
        );
    }

    #[test]
    fn off_a_terminal_a_line_starts_on_a_fresh_row_without_cursor_control() {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let mut screen = Screen::memory(buffer.clone(), 40);
        screen.write("Once upon");
        screen.line("note");
        screen.write(" a time\n");
        assert_eq!(
            String::from_utf8_lossy(&buffer.lock().unwrap()),
            "Once upon\nnote\n a time\n"
        );
    }

    #[test]
    fn rows_count_columns_not_escapes() {
        assert_eq!(rows_taken("", 20), 1);
        assert_eq!(rows_taken("\x1b[1mbold\x1b[0m", 4), 1);
        assert_eq!(rows_taken("12345", 4), 2);
        assert_eq!(
            rows_taken("12345678", 4),
            2,
            "a full last column wraps only later"
        );
        assert_eq!(
            rows_taken("世界", 3),
            2,
            "wide characters count two columns"
        );
        assert_eq!(rows_taken("old text\r\x1b[2Knew", 4), 1);
    }

    #[test]
    fn input_ended_closes_the_row() {
        let (mut screen, buffer) = terminal(40);
        screen.write("answer› ");
        screen.input_ended();
        screen.line("next");
        let text = String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned();
        assert_eq!(text, "answer› next\n");
    }
}
