//! Text styles of the streamed markdown as ANSI SGR codes, written by hand so the output does not
//! depend on the environment (crossterm's own formatting reads `NO_COLOR`; the caller decides
//! colour once, in `MarkdownStyle`). Every styled run is closed with a reset, so a row never
//! leaks its style into the next one.

use std::fmt::Write as _;

/// A foreground colour: one of the 16 ANSI colours (its SGR code) or 24-bit RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fg {
    /// An SGR colour code (`36` cyan, `90` bright black).
    Ansi(u8),
    /// A true colour, from the code theme.
    Rgb(u8, u8, u8),
}

/// The attributes of a run of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Style {
    pub bold: bool,
    pub italic: bool,
    pub underline: bool,
    pub strike: bool,
    pub fg: Option<Fg>,
}

impl Style {
    /// No attributes.
    pub const PLAIN: Style = Style {
        bold: false,
        italic: false,
        underline: false,
        strike: false,
        fg: None,
    };
    /// Secondary text: fences, quote bars, rules, link targets.
    pub const DIM: Style = Style::fg(90);
    /// List bullets and numbers.
    pub const MARKER: Style = Style::fg(33);
    /// `inline code`.
    pub const CODE: Style = Style::fg(36);
    /// Headings (level 1 is also underlined).
    pub const HEADING: Style = Style {
        bold: true,
        ..Style::fg(35)
    };

    /// Just a foreground colour.
    pub const fn fg(code: u8) -> Style {
        Style {
            fg: Some(Fg::Ansi(code)),
            ..Style::PLAIN
        }
    }

    /// The SGR parameters (`1;35`), empty for plain text.
    fn codes(&self) -> String {
        let mut codes = String::new();
        let mut add = |code: &str| {
            if !codes.is_empty() {
                codes.push(';');
            }
            codes.push_str(code);
        };
        if self.bold {
            add("1");
        }
        if self.italic {
            add("3");
        }
        if self.underline {
            add("4");
        }
        if self.strike {
            add("9");
        }
        match self.fg {
            Some(Fg::Ansi(n)) => add(&n.to_string()),
            Some(Fg::Rgb(r, g, b)) => add(&format!("38;2;{r};{g};{b}")),
            None => {}
        }
        codes
    }
}

/// Collects styled runs into one string, merging neighbours of the same style.
#[derive(Debug, Default)]
pub(super) struct Painter {
    out: String,
    run: String,
    style: Style,
}

impl Painter {
    /// Appends `text` in `style`.
    pub fn push(&mut self, style: Style, text: &str) {
        if text.is_empty() {
            return;
        }
        if style != self.style {
            self.flush();
            self.style = style;
        }
        self.run.push_str(text);
    }

    /// Appends one character in `style`.
    pub fn push_char(&mut self, style: Style, c: char) {
        let mut buf = [0; 4];
        self.push(style, c.encode_utf8(&mut buf));
    }

    fn flush(&mut self) {
        if self.run.is_empty() {
            return;
        }
        let codes = self.style.codes();
        if codes.is_empty() {
            self.out.push_str(&self.run);
        } else {
            let _ = write!(self.out, "\x1b[{codes}m{}\x1b[0m", self.run);
        }
        self.run.clear();
    }

    /// The text painted so far.
    pub fn finish(mut self) -> String {
        self.flush();
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_merged_and_reset() {
        let mut p = Painter::default();
        p.push(Style::PLAIN, "a");
        p.push(Style::CODE, "b");
        p.push_char(Style::CODE, 'c');
        p.push(Style::HEADING, "");
        p.push(Style::PLAIN, "d");
        let rgb = Style {
            italic: true,
            fg: Some(Fg::Rgb(1, 2, 3)),
            ..Style::PLAIN
        };
        p.push(rgb, "e");
        assert_eq!(p.finish(), "a\x1b[36mbc\x1b[0md\x1b[3;38;2;1;2;3me\x1b[0m");
    }
}
