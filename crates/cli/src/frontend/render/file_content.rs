//! The `file_content` view (and the generic `code` view): a header with the path, size and
//! language, then the lines numbered and syntax highlighted by `display.language` or the
//! path's extension, folded past the height limit to head, `… N more lines` and tail.

use golem_protocol::result::FileContentData;
use serde::Deserialize;
use serde_json::Value;

use super::canvas::{Line, palette};
use super::highlight::Highlighter;
use super::layout::{fold_drawn, human_size, split_lines, truncate, wrap};
use super::{Ctx, text, text_of};

/// A `file_content` result, or `None` when `data` is not file content.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let file = FileContentData::deserialize(data).ok()?;
    let binary = file
        .encoding
        .as_deref()
        .is_some_and(|e| e.eq_ignore_ascii_case("base64"));
    let first = file.content.lines().next().unwrap_or("");
    let highlighter = Highlighter::new(ctx.language, Some(&file.path), first, ctx.color);
    let mut header = Line::styled(palette::bold(), &file.path);
    header
        .push(palette::dim(), " · ")
        .push(palette::dim(), &human_size(file.size));
    if let (Some(language), false) = (highlighter.language(), binary) {
        header
            .push(palette::dim(), " · ")
            .push(palette::dim(), language);
    }
    let mut out = wrap(&header, ctx.width);
    if binary {
        out.push(Line::styled(palette::dim(), "(binary content not shown)"));
    } else {
        out.extend(code_lines(&file.content, highlighter, ctx));
    }
    Some(out)
}

/// Text-like data as highlighted code (`display.preferredView: code`), the language from
/// `display.language` or a `path` in the data.
pub(super) fn render_code(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let code = text_of(data)?;
    let path = data.get("path").and_then(Value::as_str);
    let first = code.lines().next().unwrap_or("");
    let highlighter = Highlighter::new(ctx.language, path, first, ctx.color);
    Some(code_lines(code, highlighter, ctx))
}

/// Numbered, highlighted, folded and wrapped lines of `code`. The tail after a fold is
/// highlighted from a fresh state (a construct spanning the fold may be coloured wrongly).
fn code_lines(code: &str, mut highlighter: Highlighter, ctx: &Ctx) -> Vec<Line> {
    let lines = split_lines(code);
    if lines.is_empty() {
        return vec![text::empty()];
    }
    let digits = lines.len().ilog10() as usize + 1;
    let mut next = 0;
    fold_drawn(&lines, ctx.max_height, "line", |index, line, rows| {
        if index != next {
            highlighter = std::mem::replace(&mut highlighter, Highlighter::none()).restarted();
        }
        next = index + 1;
        let body = highlighter.line(line);
        numbered(index + 1, digits, body, ctx.width, rows);
    })
}

/// `body` behind a line-number gutter, wrapped to `width` (continuation rows get an empty
/// gutter).
fn numbered(number: usize, digits: usize, body: Line, width: usize, out: &mut Vec<Line>) {
    let gutter_width = digits + 3;
    for (i, row) in wrap(&body, width.saturating_sub(gutter_width).max(1))
        .into_iter()
        .enumerate()
    {
        let gutter = if i == 0 {
            format!("{number:>digits$} │ ")
        } else {
            format!("{:digits$} │ ", "")
        };
        let mut line = Line::styled(palette::dim(), &gutter);
        line.append(row);
        out.push(truncate(&line, width));
    }
}
