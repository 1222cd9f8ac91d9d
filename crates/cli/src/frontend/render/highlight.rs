//! Syntax highlighting with syntect (the data shared with the markdown renderer is in
//! `frontend::syntax`): a line-by-line highlighter with a budget so a huge file or a minified line cannot
//! stall the terminal (past the budget, lines are shown plain).

use crossterm::style::{Attribute, Color, ContentStyle};
use syntect::easy::HighlightLines;
use syntect::highlighting::FontStyle;
use syntect::parsing::SyntaxReference;

use super::canvas::{Line, palette};
use crate::frontend::clean::clean_line as clean;
use crate::frontend::syntax;

/// Lines longer than this (in bytes) are shown plain and not parsed.
const MAX_LINE_BYTES: usize = 2_000;
/// Lines highlighted per render; the rest are shown plain.
const MAX_LINES: usize = 500;

/// Highlights a file or a code block line by line, in order.
pub(super) struct Highlighter {
    state: Option<HighlightLines<'static>>,
    syntax: Option<&'static SyntaxReference>,
    budget: usize,
}

impl Highlighter {
    /// A highlighter for code in `language` (a name or extension), else guessed from `path`
    /// and `first_line`; it draws plain text when `color` is off or no syntax matches.
    pub fn new(language: Option<&str>, path: Option<&str>, first_line: &str, color: bool) -> Self {
        let syntax = syntax::find(language, path, first_line);
        Self {
            state: Self::start(syntax, color),
            syntax,
            budget: MAX_LINES,
        }
    }

    fn start(
        syntax: Option<&'static SyntaxReference>,
        color: bool,
    ) -> Option<HighlightLines<'static>> {
        match (color, syntax, syntax::theme()) {
            (true, Some(syntax), Some(theme)) => Some(HighlightLines::new(syntax, theme)),
            _ => None,
        }
    }

    /// A highlighter that draws plain text.
    pub fn none() -> Self {
        Self {
            state: None,
            syntax: None,
            budget: 0,
        }
    }

    /// The same highlighter from a fresh parse state (for lines after a gap), keeping what is
    /// left of the budget.
    pub fn restarted(self) -> Self {
        let color = self.state.is_some();
        Self {
            state: Self::start(self.syntax, color),
            ..self
        }
    }

    /// The name of the detected language (`Rust`), if any.
    pub fn language(&self) -> Option<&'static str> {
        self.syntax.map(|s| s.name.as_str())
    }

    /// One source line (without its newline), highlighted.
    pub fn line(&mut self, text: &str) -> Line {
        let text = clean(text);
        let Some(state) = self.state.as_mut() else {
            return Line::plain(&text);
        };
        if self.budget == 0 || text.len() > MAX_LINE_BYTES {
            return Line::plain(&text);
        }
        self.budget -= 1;
        let with_newline = format!("{text}\n");
        match state.highlight_line(&with_newline, syntax::syntaxes()) {
            Ok(pieces) => {
                let mut line = Line::new();
                for (style, piece) in pieces {
                    let piece = piece.strip_suffix('\n').unwrap_or(piece);
                    line.push(to_content_style(style, default_foreground()), piece);
                }
                line
            }
            Err(_) => {
                self.state = None;
                Line::plain(&text)
            }
        }
    }
}

/// The theme's text colour, which is drawn in the terminal's own colour instead (so plain code
/// stays readable on light backgrounds too).
fn default_foreground() -> Option<syntect::highlighting::Color> {
    syntax::theme().and_then(|t| t.settings.foreground)
}

fn to_content_style(
    style: syntect::highlighting::Style,
    default: Option<syntect::highlighting::Color>,
) -> ContentStyle {
    let mut out = palette::plain();
    let c = style.foreground;
    if Some(c) != default {
        out.foreground_color = Some(Color::Rgb {
            r: c.r,
            g: c.g,
            b: c.b,
        });
    }
    if style.font_style.contains(FontStyle::BOLD) {
        out.attributes.set(Attribute::Bold);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out.attributes.set(Attribute::Italic);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out.attributes.set(Attribute::Underlined);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_syntaxes_by_language_extension_and_first_line() {
        let name = |l, p, f| syntax::find(l, p, f).map(|s| s.name.as_str());
        assert_eq!(name(Some("rust"), None, ""), Some("Rust"));
        assert_eq!(name(Some("Python"), None, ""), Some("Python"));
        assert_eq!(name(Some("ts"), None, ""), Some("JavaScript"));
        assert_eq!(name(None, Some("/src/main.rs"), ""), Some("Rust"));
        assert_eq!(name(None, Some("/a.b/Makefile"), ""), Some("Makefile"));
        assert_eq!(name(None, Some("/a.b/README"), ""), None);
        assert_eq!(
            name(None, Some("/run"), "#!/bin/bash"),
            Some("Bourne Again Shell (bash)")
        );
        assert_eq!(name(Some("no-such-language"), Some("/x.txt"), ""), None);
    }

    #[test]
    fn colour_off_or_unknown_language_is_plain() {
        let mut off = Highlighter::new(Some("rust"), None, "", false);
        assert_eq!(off.line("fn main() {}").spans.len(), 1);
        let mut unknown = Highlighter::new(None, Some("/notes"), "hello", true);
        assert_eq!(unknown.line("fn main() {}").spans.len(), 1);
    }

    #[test]
    fn highlighted_lines_keep_their_text_and_clean_controls() {
        let mut h = Highlighter::new(Some("rust"), None, "", true);
        let line = h.line("let s = \"\x1b[2J\";\t// x");
        assert!(line.spans.len() > 1);
        assert_eq!(line.text(), "let s = \"\u{241b}[2J\"; // x");
        let long = "x".repeat(MAX_LINE_BYTES + 1);
        assert_eq!(h.line(&long).spans.len(), 1);
    }
}
