//! Syntax highlighting of code-block lines with syntect, one complete line at a time (the parse
//! state carries over between the lines of a block). The syntaxes and theme are the ones the
//! result renderers use (`frontend::syntax`), loaded once, on first use or by `syntax::preload`.

use syntect::easy::HighlightLines;
use syntect::highlighting::{Color, FontStyle};

use super::style::{Fg, Painter, Style};
use crate::frontend::syntax;

/// Lines longer than this (in bytes) are shown plain and not parsed.
const MAX_LINE_BYTES: usize = 2_000;

/// Highlights the lines of one code block.
pub(super) struct CodeHighlighter {
    state: Option<HighlightLines<'static>>,
}

impl CodeHighlighter {
    /// A highlighter for `language` (a name or an extension); plain when no syntax matches.
    pub fn new(language: Option<&str>) -> Self {
        let syntax = language.and_then(syntax::by_language);
        let state = match (syntax, syntax::theme()) {
            (Some(syntax), Some(theme)) => Some(HighlightLines::new(syntax, theme)),
            _ => None,
        };
        Self { state }
    }

    /// One complete line (already cleaned of controls), painted.
    pub fn line(&mut self, text: &str) -> String {
        let mut painter = Painter::default();
        let Some(state) = self.state.as_mut().filter(|_| text.len() <= MAX_LINE_BYTES) else {
            painter.push(Style::PLAIN, text);
            return painter.finish();
        };
        let default = syntax::theme().and_then(|t| t.settings.foreground);
        match state.highlight_line(&format!("{text}\n"), syntax::syntaxes()) {
            Ok(pieces) => {
                for (style, piece) in pieces {
                    let piece = piece.strip_suffix('\n').unwrap_or(piece);
                    painter.push(to_style(style, default), piece);
                }
            }
            Err(_) => {
                self.state = None;
                painter.push(Style::PLAIN, text);
            }
        }
        painter.finish()
    }
}

/// The theme's style of a piece; the theme's own text colour is left to the terminal so plain
/// code stays readable on light backgrounds.
fn to_style(style: syntect::highlighting::Style, default: Option<Color>) -> Style {
    let c = style.foreground;
    Style {
        bold: style.font_style.contains(FontStyle::BOLD),
        italic: style.font_style.contains(FontStyle::ITALIC),
        underline: style.font_style.contains(FontStyle::UNDERLINE),
        strike: false,
        fg: (Some(c) != default).then_some(Fg::Rgb(c.r, c.g, c.b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_are_coloured_and_keep_their_text() {
        for language in ["rust", "rs", "Python", "ts", "sh"] {
            let mut h = CodeHighlighter::new(Some(language));
            let line = h.line("let x = \"s\"; // c");
            assert!(line.contains("\x1b[38;2;"), "{language}: {line:?}");
        }
        let mut h = CodeHighlighter::new(Some("rust"));
        let line = h.line("fn main() {}");
        let plain: String = strip(&line);
        assert_eq!(plain, "fn main() {}");
    }

    #[test]
    fn unknown_language_and_long_lines_are_plain() {
        assert_eq!(CodeHighlighter::new(Some("nope")).line("fn x"), "fn x");
        assert_eq!(CodeHighlighter::new(None).line("fn x"), "fn x");
        let long = "x".repeat(MAX_LINE_BYTES + 1);
        assert_eq!(CodeHighlighter::new(Some("rust")).line(&long), long);
    }

    #[test]
    fn state_carries_between_lines() {
        let mut h = CodeHighlighter::new(Some("rust"));
        let _ = h.line("/* a comment");
        let inside = h.line("fn still_comment() {}");
        let mut fresh = CodeHighlighter::new(Some("rust"));
        assert_ne!(inside, fresh.line("fn still_comment() {}"));
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for c in chars.by_ref() {
                    if c == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }
}
