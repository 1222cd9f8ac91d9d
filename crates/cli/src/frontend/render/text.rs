//! The `text` view: the content as it is, whitespace kept, wrapped to the width and folded past
//! the height limit.

use crossterm::style::ContentStyle;
use serde_json::Value;

use super::canvas::{Line, palette};
use super::layout::{fold_drawn, split_lines, wrap};
use super::{Ctx, text_of};

/// A `text` result, or any text-like data (a string, or an object with `content`/`text`).
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let text = text_of(data)?;
    let lines = text_lines(text, ctx, palette::plain());
    Some(if lines.is_empty() {
        vec![empty()]
    } else {
        lines
    })
}

/// The line shown for empty content.
pub(super) fn empty() -> Line {
    Line::styled(palette::dim(), "(empty)")
}

/// The rows of `text` drawn in `style`, each line wrapped to the width, folded to the height
/// limit (head, `… N more lines`, tail).
pub(super) fn text_lines(text: &str, ctx: &Ctx, style: ContentStyle) -> Vec<Line> {
    let lines = split_lines(text);
    fold_drawn(&lines, ctx.max_height, "line", |_, line, rows| {
        rows.extend(wrap(&Line::styled(style, line), ctx.width));
    })
}
