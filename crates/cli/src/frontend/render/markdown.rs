//! The `markdown` view of a result, line by line (the streaming renderer for assistant text is
//! elsewhere): headings bold, bullets as `•`, quotes behind a bar, `inline code` and **bold**
//! marked, fenced code blocks highlighted by their language. Wrapped and folded like text.
//! Without colour, heading `#`s and inline markers stay, as they are all that marks them.

use serde_json::Value;

use super::canvas::{Line, palette};
use super::highlight::Highlighter;
use super::layout::{fold_lines, split_lines, wrap};
use super::{Ctx, text, text_of};

/// Markdown text-like data, or `None` when `data` holds no text.
pub(super) fn render_text(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let source = text_of(data)?;
    let mut out = Vec::new();
    let mut fence: Option<(String, Highlighter)> = None;
    for line in split_lines(source) {
        let trimmed = line.trim_start();
        if let Some((marker, mut highlighter)) = fence.take() {
            if closes(&marker, line) {
                out.push(Line::styled(palette::dim(), line));
            } else {
                let mut row = Line::styled(palette::dim(), "  ");
                row.append(highlighter.line(line));
                out.extend(wrap(&row, ctx.width));
                fence = Some((marker, highlighter));
            }
            continue;
        }
        if let Some(marker) = fence_marker(trimmed) {
            let language = trimmed[marker.len()..].split_whitespace().next();
            fence = Some((
                marker.to_owned(),
                Highlighter::new(language, None, "", ctx.color),
            ));
            out.push(Line::styled(palette::dim(), line));
            continue;
        }
        out.extend(wrap(&block_line(line, ctx.color), ctx.width));
    }
    if out.is_empty() {
        out.push(text::empty());
    }
    Some(fold_lines(out, ctx.max_height))
}

/// The opening fence of a code block (```` ``` ```` or `~~~`, possibly longer).
fn fence_marker(line: &str) -> Option<&str> {
    for c in ['`', '~'] {
        let n = line.chars().take_while(|x| *x == c).count();
        if n >= 3 {
            return Some(&line[..n]);
        }
    }
    None
}

/// Whether `line` closes a block opened by `marker`: the same character, at least as many.
fn closes(marker: &str, line: &str) -> bool {
    let line = line.trim();
    let mut chars = marker.chars();
    chars
        .next()
        .is_some_and(|c| line.len() >= marker.len() && line.chars().all(|x| x == c))
}

/// Whether `line` is a thematic break (`---`, `***`, `_ _ _`).
fn is_rule(line: &str) -> bool {
    let marks: Vec<char> = line.chars().filter(|c| *c != ' ').collect();
    marks.len() >= 3 && ['-', '*', '_'].iter().any(|m| marks.iter().all(|c| c == m))
}

/// A line outside code blocks.
fn block_line(line: &str, color: bool) -> Line {
    let indent_len = line.len() - line.trim_start().len();
    let (indent, rest) = line.split_at(indent_len);
    let level = rest.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&level) && rest[level..].starts_with(' ') {
        let mut style = palette::bold();
        if level == 1 {
            style
                .attributes
                .set(crossterm::style::Attribute::Underlined);
        }
        let heading = if color {
            rest[level..].trim()
        } else {
            rest.trim_end()
        };
        return Line::styled(style, heading);
    }
    if is_rule(rest) {
        return Line::styled(palette::dim(), &"─".repeat(40));
    }
    let mut out = Line::plain(indent);
    if let Some(quoted) = rest.strip_prefix('>') {
        out.push(palette::dim(), "│ ");
        out.append(inline(quoted.trim_start(), color));
        return out;
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(item) = rest.strip_prefix(bullet) {
            out.push(palette::dim(), "• ");
            out.append(inline(item, color));
            return out;
        }
    }
    out.append(inline(rest, color));
    out
}

/// Inline markup: `` `code` `` and `**bold**` (markers kept without colour); everything else
/// as written.
fn inline(text: &str, color: bool) -> Line {
    if !color {
        return Line::plain(text);
    }
    let mut out = Line::new();
    let mut rest = text;
    while !rest.is_empty() {
        let code = rest.find('`');
        let bold = rest.find("**");
        match (code, bold) {
            (Some(c), b) if b.is_none_or(|b| c < b) => {
                let after = &rest[c + 1..];
                match after.find('`') {
                    Some(end) => {
                        out.push(palette::plain(), &rest[..c]);
                        out.push(palette::hunk(), &after[..end]);
                        rest = &after[end + 1..];
                    }
                    None => {
                        out.push(palette::plain(), rest);
                        rest = "";
                    }
                }
            }
            (_, Some(b)) => {
                let after = &rest[b + 2..];
                match after.find("**") {
                    Some(end) if end > 0 => {
                        out.push(palette::plain(), &rest[..b]);
                        out.push(palette::bold(), &after[..end]);
                        rest = &after[end + 2..];
                    }
                    _ => {
                        out.push(palette::plain(), &rest[..b + 2]);
                        rest = after;
                    }
                }
            }
            _ => {
                out.push(palette::plain(), rest);
                rest = "";
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_markup() {
        let line = inline("a `b` **c** d ** e `f", true);
        let parts: Vec<&str> = line.spans.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(parts, vec!["a ", "b", " ", "c", " d ** e `f"]);
    }

    #[test]
    fn fences() {
        assert_eq!(fence_marker("```rust"), Some("```"));
        assert_eq!(fence_marker("~~~~"), Some("~~~~"));
        assert_eq!(fence_marker("``x"), None);
        assert!(closes("```", "  ````  "));
        assert!(!closes("````", "```"));
        assert!(!closes("```", "```rust"));
        assert!(is_rule("- - -"));
        assert!(!is_rule("-*-"));
        assert!(!is_rule("- item"));
    }
}
