//! The renderers' output model: lines of styled spans, the palette, and the conversion to
//! strings with or without ANSI SGR codes.
//!
//! Styles are crossterm `ContentStyle`s, but the escape codes are written here rather than by
//! crossterm's `Display` impls: those consult `NO_COLOR` through a process-wide switch, and the
//! renderers must do exactly what the caller's `color` flag says (and be deterministic in tests).
//! Every piece of text enters a [`Line`] through [`Line::push`], which cleans it with
//! [`clean`] (`frontend::clean::clean_line`), so nothing a tool returns can reach the terminal as a control sequence.

use std::fmt::Write as _;

use crossterm::style::{Attribute, Color, ContentStyle};
use unicode_width::UnicodeWidthStr;

use crate::frontend::clean::clean_line as clean;

/// A run of text drawn in one style. The text holds no control characters.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Span {
    /// How the text is drawn.
    pub style: ContentStyle,
    /// The (clean) text.
    pub text: String,
}

/// One line of output.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Line {
    /// The spans, left to right.
    pub spans: Vec<Span>,
    /// A terminal graphics sequence written as is before the spans (an inline image). Only
    /// `image::inline` sets it, from base64 it has checked character by character.
    pub graphic: Option<String>,
}

impl Line {
    /// An empty line.
    pub fn new() -> Self {
        Self::default()
    }

    /// A line of one span.
    pub fn styled(style: ContentStyle, text: &str) -> Self {
        let mut line = Self::new();
        line.push(style, text);
        line
    }

    /// A line of unstyled text.
    pub fn plain(text: &str) -> Self {
        Self::styled(ContentStyle::new(), text)
    }

    /// Appends `text` in `style`, cleaned of control characters; merges with the last span when
    /// the style is the same.
    pub fn push(&mut self, style: ContentStyle, text: &str) -> &mut Self {
        if text.is_empty() {
            return self;
        }
        let text = clean(text);
        match self.spans.last_mut() {
            Some(last) if last.style == style => last.text.push_str(&text),
            _ => self.spans.push(Span {
                style,
                text: text.into_owned(),
            }),
        }
        self
    }

    /// Appends the spans of `other` (not its graphic).
    pub fn append(&mut self, other: Line) -> &mut Self {
        for span in other.spans {
            self.push(span.style, &span.text);
        }
        self
    }

    /// Drops trailing spaces (and the spans they empty).
    pub fn trim_end(&mut self) {
        while let Some(last) = self.spans.last_mut() {
            let kept = last.text.trim_end_matches(' ').len();
            last.text.truncate(kept);
            if !last.text.is_empty() {
                break;
            }
            self.spans.pop();
        }
    }

    /// The display width in terminal columns.
    pub fn width(&self) -> usize {
        self.spans.iter().map(|s| s.text.width()).sum()
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }
}

/// The styles the renderers use, by role.
pub(super) mod palette {
    use crossterm::style::{Attribute, Color, ContentStyle};

    const fn fg(color: Color) -> ContentStyle {
        ContentStyle {
            foreground_color: Some(color),
            background_color: None,
            underline_color: None,
            attributes: crossterm::style::Attributes::none(),
        }
    }

    fn with(style: ContentStyle, attribute: Attribute) -> ContentStyle {
        let mut style = style;
        style.attributes.set(attribute);
        style
    }

    /// Unstyled text.
    pub fn plain() -> ContentStyle {
        ContentStyle::new()
    }
    /// Secondary text: gutters, counts, fold markers.
    pub fn dim() -> ContentStyle {
        fg(Color::DarkGrey)
    }
    /// Emphasis: headers, paths.
    pub fn bold() -> ContentStyle {
        with(ContentStyle::new(), Attribute::Bold)
    }
    /// Added lines and success.
    pub fn added() -> ContentStyle {
        fg(Color::DarkGreen)
    }
    /// Removed lines.
    pub fn removed() -> ContentStyle {
        fg(Color::DarkRed)
    }
    /// Hunk headers.
    pub fn hunk() -> ContentStyle {
        fg(Color::DarkCyan)
    }
    /// Errors.
    pub fn error() -> ContentStyle {
        with(fg(Color::DarkRed), Attribute::Bold)
    }
    /// Error output (stderr).
    pub fn stderr() -> ContentStyle {
        fg(Color::DarkRed)
    }
    /// Warnings.
    pub fn warning() -> ContentStyle {
        fg(Color::DarkYellow)
    }
    /// Object keys and directory names.
    pub fn key() -> ContentStyle {
        fg(Color::DarkBlue)
    }
    /// String values.
    pub fn string() -> ContentStyle {
        fg(Color::DarkGreen)
    }
    /// Numbers.
    pub fn number() -> ContentStyle {
        fg(Color::DarkYellow)
    }
    /// `true`, `false`, `null`.
    pub fn literal() -> ContentStyle {
        fg(Color::DarkMagenta)
    }
    /// Directory names in listings.
    pub fn directory() -> ContentStyle {
        with(fg(Color::DarkBlue), Attribute::Bold)
    }
    /// Symbolic links in listings.
    pub fn symlink() -> ContentStyle {
        fg(Color::DarkCyan)
    }
}

/// The lines as strings: with SGR codes around every styled span when `color`, plain text
/// otherwise.
pub(super) fn finish(lines: &[Line], color: bool) -> Vec<String> {
    lines.iter().map(|line| finish_line(line, color)).collect()
}

fn finish_line(line: &Line, color: bool) -> String {
    let mut out = String::with_capacity(line.spans.iter().map(|s| s.text.len() + 12).sum());
    if let Some(graphic) = &line.graphic {
        out.push_str(graphic);
    }
    for span in &line.spans {
        let codes = if color { sgr(&span.style) } else { None };
        match codes {
            Some(codes) => {
                let _ = write!(out, "\x1b[{codes}m{}\x1b[0m", span.text);
            }
            None => out.push_str(&span.text),
        }
    }
    out
}

/// The SGR parameters of `style` (`1;32`), or `None` for an unstyled span.
fn sgr(style: &ContentStyle) -> Option<String> {
    let mut codes: Vec<String> = Vec::new();
    for attribute in Attribute::iterator() {
        if attribute != Attribute::Reset && style.attributes.has(attribute) {
            codes.push(attribute.sgr());
        }
    }
    if let Some(color) = style.foreground_color.and_then(|c| color_code(c, false)) {
        codes.push(color);
    }
    if let Some(color) = style.background_color.and_then(|c| color_code(c, true)) {
        codes.push(color);
    }
    (!codes.is_empty()).then(|| codes.join(";"))
}

fn color_code(color: Color, background: bool) -> Option<String> {
    let base = |n: u8| Some((if background { n + 10 } else { n }).to_string());
    let lead = if background { 48 } else { 38 };
    match color {
        Color::Reset => None,
        Color::Black => base(30),
        Color::DarkRed => base(31),
        Color::DarkGreen => base(32),
        Color::DarkYellow => base(33),
        Color::DarkBlue => base(34),
        Color::DarkMagenta => base(35),
        Color::DarkCyan => base(36),
        Color::Grey => base(37),
        Color::DarkGrey => base(90),
        Color::Red => base(91),
        Color::Green => base(92),
        Color::Yellow => base(93),
        Color::Blue => base(94),
        Color::Magenta => base(95),
        Color::Cyan => base(96),
        Color::White => base(97),
        Color::Rgb { r, g, b } => Some(format!("{lead};2;{r};{g};{b}")),
        Color::AnsiValue(n) => Some(format!("{lead};5;{n}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_output_has_no_escapes_and_colour_output_resets_each_span() {
        let mut line = Line::new();
        line.push(palette::added(), "+a")
            .push(palette::plain(), " b")
            .push(palette::bold(), "c");
        assert_eq!(finish(std::slice::from_ref(&line), false), vec!["+a bc"]);
        assert_eq!(
            finish(&[line], true),
            vec!["\x1b[32m+a\x1b[0m b\x1b[1mc\x1b[0m"]
        );
    }

    #[test]
    fn push_cleans_control_characters_and_merges_equal_styles() {
        let mut line = Line::new();
        line.push(palette::plain(), "a\x1b[31m")
            .push(palette::plain(), "b");
        assert_eq!(line.spans.len(), 1);
        assert_eq!(line.text(), "a\u{241b}[31mb");
    }

    #[test]
    fn rgb_and_indexed_colours() {
        let mut style = ContentStyle::new();
        style.foreground_color = Some(Color::Rgb { r: 1, g: 2, b: 3 });
        style.background_color = Some(Color::AnsiValue(7));
        assert_eq!(sgr(&style).as_deref(), Some("38;2;1;2;3;48;5;7"));
    }
}
