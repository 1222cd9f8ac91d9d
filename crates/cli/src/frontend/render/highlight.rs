//! Syntax highlighting with syntect: the default syntaxes and one theme, loaded once on first
//! use, and a line-by-line highlighter with a budget so a huge file or a minified line cannot
//! stall the terminal (past the budget, lines are shown plain).

use std::sync::LazyLock;

use crossterm::style::{Attribute, Color, ContentStyle};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

use super::canvas::{Line, palette};
use super::layout::clean;

/// The theme used for code (a dark base16 theme, as most terminals are dark).
const THEME: &str = "base16-ocean.dark";
/// Lines longer than this (in bytes) are shown plain and not parsed.
const MAX_LINE_BYTES: usize = 2_000;
/// Lines highlighted per render; the rest are shown plain.
const MAX_LINES: usize = 500;

struct Assets {
    syntaxes: SyntaxSet,
    theme: Option<Theme>,
}

static ASSETS: LazyLock<Assets> = LazyLock::new(|| Assets {
    syntaxes: SyntaxSet::load_defaults_newlines(),
    theme: ThemeSet::load_defaults().themes.remove(THEME),
});

/// Language names people write that the default syntaxes know under another token.
const ALIASES: &[(&str, &str)] = &[
    ("typescript", "js"),
    ("ts", "js"),
    ("tsx", "js"),
    ("jsx", "js"),
    ("jsonc", "json"),
    ("shell", "bash"),
    ("sh", "bash"),
    ("zsh", "bash"),
    ("console", "bash"),
    ("yml", "yaml"),
    ("golang", "go"),
    ("py", "python"),
    ("rs", "rust"),
];

/// The syntax for a language name (`rust`, `py`), else a path's extension, else a first line
/// (`#!/bin/sh`); `None` for plain text.
fn find_syntax(
    language: Option<&str>,
    path: Option<&str>,
    first_line: &str,
) -> Option<&'static SyntaxReference> {
    let set = &ASSETS.syntaxes;
    let by_token = |name: &str| {
        let lower = name.trim().to_ascii_lowercase();
        let name = ALIASES
            .iter()
            .find(|(alias, _)| *alias == lower)
            .map_or(lower.as_str(), |(_, token)| token);
        set.find_syntax_by_token(name)
    };
    let found = language
        .filter(|l| !l.trim().is_empty())
        .and_then(by_token)
        .or_else(|| {
            let name = path?.rsplit('/').next()?;
            match name.rsplit_once('.') {
                Some((_, extension)) => set
                    .find_syntax_by_extension(extension)
                    .or_else(|| by_token(extension)),
                None => set.find_syntax_by_extension(name),
            }
        })
        .or_else(|| set.find_syntax_by_first_line(first_line))?;
    (found.name != set.find_syntax_plain_text().name).then_some(found)
}

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
        let syntax = find_syntax(language, path, first_line);
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
        match (color, syntax, ASSETS.theme.as_ref()) {
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
        match state.highlight_line(&with_newline, &ASSETS.syntaxes) {
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
    ASSETS.theme.as_ref().and_then(|t| t.settings.foreground)
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
        let name = |l, p, f| find_syntax(l, p, f).map(|s| s.name.as_str());
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
