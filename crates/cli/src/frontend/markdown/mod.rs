//! Streaming markdown for the assistant's text in the terminal chat: deltas go in as they arrive
//! from the model, and what comes out is written to the terminal at once. It never reads the
//! terminal or the environment; the caller decides colour (off for `NO_COLOR` or when stdout is
//! not a terminal) and width.
//!
//! # How text reaches the screen
//!
//! A word must show as soon as it arrives, yet a line can only be styled once it is known
//! (`**` may close later, `---` is a rule only at the newline). So each line is drawn twice:
//!
//! - **With colour**, the characters of the current line are written plain the moment they
//!   arrive. When the line ends, it is redrawn styled over itself: `\r`, erase line
//!   (`\x1b[2K`), the styled text. That only works while the plain text has stayed on one
//!   terminal row, so the stream never lets a paragraph line run past the width: when a
//!   character would cross it, the row is cut at its last space (a word longer than the row is
//!   cut where it is), redrawn styled, and the rest goes on a new row behind the line's
//!   continuation indent (list items indented under their text, quotes behind `│`). Rows are
//!   laid out on the source text, markers included; styling only hides markers and maps each
//!   other character to one of the same width, so a styled row is never wider than the plain
//!   one it replaces. A row cut before its line ends is styled with what has arrived: an open
//!   `**`, `*` or backtick is taken as closed later (see `inline`). The newline that ends a row
//!   is written only when the next row gets text, so a space landing at a row's end does not
//!   leave an empty row.
//!
//!   Code-block lines (and fence lines) are never wrapped. One that stays within the width is
//!   redrawn highlighted at its newline; one that runs past it has been wrapped by the
//!   terminal, where `\r` would only reach its last row, so it is left plain.
//! - **Without colour** there is no cursor control at all (the output may be a pipe): text is
//!   the source as written (markers kept, controls neutralised), paragraph lines wrapped at the
//!   width with the same rows as with colour (quote continuations start with `>`). As a word
//!   already written cannot move to the next row, a word is written once it is known to stay
//!   on its row: when the space after it arrives, when it is the row's first word, or when the
//!   line ends. With `width: usize::MAX` nothing is wrapped and every character is written as
//!   it arrives.
//!
//! The stream assumes it owns the cursor's row: output must start at the beginning of a row,
//! and nothing else may be written until [`MarkdownStream::finish`]. Output uses `\n` (the
//! terminal must translate it, as it does with output processing on). A row may fill the last
//! column: terminals with the usual delayed wrap (xterm and its kin) keep the cursor on that
//! row until more text comes, so `\r` still reaches it. Columns are counted with
//! `unicode-width`; a terminal that draws a character wider (some emoji) may wrap a row early,
//! and the redraw then replaces only the row's last part.
//!
//! # What is styled
//!
//! Line by line, without a document tree: `#` headings (bold, coloured, level 1 underlined;
//! the `#`s hidden), `-`/`*`/`+` items as `•` and numbered items, any indentation kept, `>`
//! quotes (nested too) as a dim bar, fenced code blocks (```` ``` ```` or `~~~`, highlighted by
//! their language with syntect, fences dimmed), thematic breaks as a dim rule, and inline
//! `**strong**`, `*em*`, `_em_`, `~~strike~~`, `` `code` ``, `[text](url)` (text underlined,
//! URL dimmed after it) and backslash escapes. Not handled: setext headings (`---` under text
//! is a rule), tables (shown as written), indented code blocks, HTML, reference links.
//!
//! # Safety
//!
//! Model text cannot drive the terminal: C0 controls (but `\n` and `\t`), `DEL`, C1 controls
//! and bidirectional overrides are replaced by visible stand-ins by `frontend::clean` (`ESC` is
//! `␛`, the C1 CSI is `\u{9b}`), tabs by spaces, `\r\n` and a lone `\r` end a line.

// The chat front end is the caller; some helpers are only used by tests.
#![cfg_attr(not(test), allow(dead_code))]

mod block;
mod highlight;
mod inline;
mod style;

#[cfg(test)]
mod tests;

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use block::{FenceOpen, Kind, Prefix};

use crate::frontend::clean::{Cleaned, clean_char, escape_code};
use highlight::CodeHighlighter;
use style::{Painter, Style};

/// The narrowest width laid out; smaller widths are treated as this.
const MIN_WIDTH: usize = 20;
/// The width of a thematic break.
const RULE_WIDTH: usize = 40;
/// Back to the start of the row and erase it.
const REDRAW: &str = "\r\x1b[2K";

/// How to draw: decided by the caller from the terminal and the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkdownStyle {
    /// Styles, colours and redraws; off for `NO_COLOR` or output that is not a terminal (then
    /// the output holds no escape sequence and no `\r`).
    pub color: bool,
    /// The terminal width in columns; `usize::MAX` never wraps. Widths under 20 count as 20.
    pub width: usize,
}

/// Renders one message of streamed markdown (see the module documentation). After
/// [`finish`](Self::finish) it is ready for the next message.
pub struct MarkdownStream {
    color: bool,
    width: usize,
    /// The last delta ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    /// The current line so far, cleaned.
    line: String,
    /// Columns of `line` laid out flat (for tab stops).
    line_cols: usize,
    row: Row,
    /// The code block the current line is in.
    fence: Option<Fence>,
    /// Output of the current call.
    out: String,
}

/// The row of the current line being written.
#[derive(Debug, Clone, Copy, Default)]
struct Row {
    /// 0 for the line's first row, then 1, 2, … for continuation rows.
    index: usize,
    /// Where the row's text starts in the line.
    start: usize,
    /// Where the text on screen ends (from `start`; the continuation prefix is extra).
    written: usize,
    /// Columns the row takes (continuation prefix included).
    cols: usize,
    /// A continuation row's newline and prefix are on screen.
    started: bool,
    /// The row ran past the width (a code line): the terminal wrapped it, no redraw.
    overflowed: bool,
}

struct Fence {
    open: FenceOpen,
    highlighter: Option<CodeHighlighter>,
}

impl std::fmt::Debug for MarkdownStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkdownStream")
            .field("color", &self.color)
            .field("width", &self.width)
            .field("line", &self.line)
            .field("in_code_block", &self.fence.is_some())
            .finish_non_exhaustive()
    }
}

impl MarkdownStream {
    /// A stream drawing with `style`.
    pub fn new(style: MarkdownStyle) -> Self {
        Self {
            color: style.color,
            width: style.width.max(MIN_WIDTH),
            after_cr: false,
            line: String::new(),
            line_cols: 0,
            row: Row::default(),
            fence: None,
            out: String::new(),
        }
    }

    /// Feeds a delta; returns the bytes to write to the terminal now.
    pub fn push(&mut self, delta: &str) -> String {
        for c in delta.chars() {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match c {
                '\n' if after_cr => {}
                '\n' => self.end_line(),
                '\r' => {
                    self.end_line();
                    self.after_cr = true;
                }
                c => match clean_char(c, self.line_cols) {
                    Cleaned::Char(c) => self.add(c),
                    Cleaned::Spaces(n) => (0..n).for_each(|_| self.add(' ')),
                    Cleaned::Code(c) => escape_code(c).chars().for_each(|c| self.add(c)),
                },
            }
        }
        self.flush_row();
        std::mem::take(&mut self.out)
    }

    /// Ends the message: draws the unfinished line and ends it with a newline, and closes a
    /// code block left open. Returns the bytes to write.
    pub fn finish(&mut self) -> String {
        if !self.line.is_empty() {
            self.end_line();
        }
        self.fence = None;
        self.after_cr = false;
        std::mem::take(&mut self.out)
    }

    /// Adds one cleaned character to the line, cutting the row when it gets too wide.
    fn add(&mut self, c: char) {
        self.line_cols += c.width().unwrap_or(0);
        if c == ' ' && self.row.index > 0 && self.row.start == self.line.len() {
            // Spaces at the start of a continuation row are not drawn.
            self.line.push(c);
            self.row.start = self.line.len();
            self.row.written = self.row.start;
            return;
        }
        self.line.push(c);
        self.row.cols += c.width().unwrap_or(0);
        if self.row.cols > self.width {
            if self.is_code_line() {
                self.row.overflowed = true;
            } else {
                self.wrap();
            }
        }
    }

    /// Whether the current line is a code or fence line (never wrapped).
    fn is_code_line(&self) -> bool {
        self.fence.is_some() || (self.row.index == 0 && block::looks_like_fence(&self.line))
    }

    /// Cuts the row at its last space (or before the last character when it is one word) until
    /// what remains fits.
    fn wrap(&mut self) {
        while self.row.cols > self.width {
            let (end, next) = match self.break_point() {
                Some(cut) => cut,
                None => {
                    let last = self.line.char_indices().next_back().map_or(0, |(at, _)| at);
                    if last <= self.row.start {
                        // A single character wider than the room left: let it overflow.
                        self.row.overflowed = true;
                        return;
                    }
                    (last, last)
                }
            };
            self.commit_row(end, false);
            self.row = Row {
                index: self.row.index + 1,
                start: next,
                written: next,
                ..Row::default()
            };
            self.row.cols = self.continuation().width() + self.line[next..].width();
        }
    }

    /// Where the current row can be cut: the start and end of its last run of spaces after its
    /// first word (a first row's markers count as part of its first word).
    fn break_point(&self) -> Option<(usize, usize)> {
        let from = if self.row.index == 0 {
            Prefix::parse(&self.line).end.max(self.row.start)
        } else {
            self.row.start
        };
        let row = &self.line[from..];
        let lead = row.len() - row.trim_start_matches(' ').len();
        let first_word_end = lead + row[lead..].find(' ')?;
        let tail = &row[first_word_end..];
        let last_space = tail.rfind(' ')?;
        let run_start = tail[..=last_space].trim_end_matches(' ').len();
        let base = from + first_word_end;
        Some((base + run_start, base + last_space + 1))
    }

    /// Whether anything of the current row is on screen.
    fn on_screen(&self) -> bool {
        if self.row.index == 0 {
            self.row.written > self.row.start
        } else {
            self.row.started
        }
    }

    /// Writes the newline and continuation prefix a continuation row starts with.
    fn start_row(&mut self) {
        if self.row.index > 0 && !self.row.started {
            self.out.push('\n');
            let cont = self.continuation();
            if self.color {
                let mut painter = Painter::default();
                cont.paint(&mut painter);
                self.out.push_str(&painter.finish());
            } else {
                self.out.push_str(&cont.plain());
            }
            self.row.started = true;
        }
    }

    /// Writes what has arrived of the current row and is sure to stay on it, plain.
    fn flush_row(&mut self) {
        let target = if self.color || self.width == usize::MAX || self.is_code_line() {
            self.line.len()
        } else {
            self.break_point().map_or(self.line.len(), |(end, _)| end)
        };
        if target <= self.row.written {
            return;
        }
        self.start_row();
        self.out.push_str(&self.line[self.row.written..target]);
        self.row.written = target;
    }

    /// Draws the current row's final form up to `end` (`last`: the line ends there), without
    /// the newline after it.
    fn commit_row(&mut self, end: usize, last: bool) {
        if self.color && !self.row.overflowed {
            if self.on_screen() {
                self.out.push_str(REDRAW);
            } else if self.row.index > 0 {
                self.out.push('\n');
            }
            let painted = self.paint_row(end, last);
            self.out.push_str(&painted);
        } else {
            if end > self.row.written {
                self.start_row();
            }
            let from = self.row.written.min(end);
            self.out.push_str(&self.line[from..end]);
        }
    }

    /// The current row up to `end`, styled.
    fn paint_row(&self, end: usize, last: bool) -> String {
        let line = &self.line;
        let start = self.row.start;
        let mut painter = Painter::default();
        if last && self.row.index == 0 && block::is_rule(line) {
            painter.push(Style::DIM, &"─".repeat(RULE_WIDTH.min(self.width)));
            return painter.finish();
        }
        let prefix = Prefix::parse(line);
        if self.row.index == 0 {
            if end < prefix.end {
                painter.push(Style::PLAIN, &line[..end]);
                return painter.finish();
            }
            prefix.paint_first(line, &mut painter);
        } else {
            self.continuation().paint(&mut painter);
            if start < prefix.end {
                painter.push(Style::PLAIN, &line[start..prefix.end.min(end)]);
            }
        }
        let from = start.max(prefix.end);
        if from < end {
            let base = match prefix.kind {
                Kind::Heading(1) => Style {
                    underline: true,
                    ..Style::HEADING
                },
                Kind::Heading(_) => Style::HEADING,
                Kind::Text | Kind::Item => Style::PLAIN,
            };
            let text = &line[prefix.end..end];
            let visible = text.trim_end_matches(' ').len().max(from - prefix.end);
            inline::scan(text, last).paint(text, from - prefix.end..visible, base, &mut painter);
        }
        painter.finish()
    }

    /// The prefix of the current line's continuation rows.
    fn continuation(&self) -> block::Continuation {
        Prefix::parse(&self.line).continuation(self.color, self.width / 2)
    }

    /// The line is complete: draws its final form and starts the next one.
    fn end_line(&mut self) {
        let closes = self
            .fence
            .as_ref()
            .map(|fence| block::fence_closes(&fence.open, &self.line));
        match closes {
            Some(true) => {
                self.whole_line(false);
                self.fence = None;
            }
            Some(false) => self.whole_line(true),
            None => match block::fence_open(&self.line).filter(|_| self.row.index == 0) {
                Some(open) => {
                    self.whole_line(false);
                    let highlighter = self
                        .color
                        .then(|| CodeHighlighter::new(open.language.as_deref()));
                    self.fence = Some(Fence { open, highlighter });
                }
                // A line that ended in spaces cut off at a row's end: nothing left to draw.
                None if self.row.index > 0 && self.row.start == self.line.len() => {}
                None => self.commit_row(self.line.len(), true),
            },
        }
        self.out.push('\n');
        self.line.clear();
        self.line_cols = 0;
        self.row = Row::default();
    }

    /// Draws a complete code line (`code`, highlighted) or fence line (dimmed), never wrapped.
    fn whole_line(&mut self, code: bool) {
        let painted = match (code, self.fence.as_mut()) {
            _ if !self.color => None,
            (
                true,
                Some(Fence {
                    highlighter: Some(h),
                    ..
                }),
            ) => Some(h.line(&self.line)),
            (true, _) => None,
            (false, _) => {
                let mut painter = Painter::default();
                painter.push(Style::DIM, &self.line);
                Some(painter.finish())
            }
        };
        match painted {
            // Highlighting still runs on an overflowed line, to keep the parse state right.
            Some(painted) if !self.row.overflowed => {
                if self.on_screen() {
                    self.out.push_str(REDRAW);
                }
                self.out.push_str(&painted);
            }
            _ => {
                let from = self.row.written.min(self.line.len());
                self.out.push_str(&self.line[from..]);
            }
        }
    }
}
