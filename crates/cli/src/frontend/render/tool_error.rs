//! The `tool_error` view (how failed calls reach UIs): `✗ CODE: message` in red, further
//! message lines below, and the details, if any, as one dim line of JSON.

use serde::Deserialize;
use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{split_lines, truncate, wrap};

/// The `data` of a `tool_error`; the code is kept as text so unknown codes still render.
#[derive(Debug, Deserialize)]
struct ErrorData {
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default)]
    details: Option<Value>,
}

/// `CODE: message` (first line), or `None` when `data` is not an error.
pub(super) fn summary(data: &Value) -> Option<String> {
    let error = ErrorData::deserialize(data).ok()?;
    let first = error.message.lines().next().unwrap_or("");
    Some(format!("{}: {first}", error.code))
}

/// A `tool_error`, or `None` when `data` does not have its shape.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let error = ErrorData::deserialize(data).ok()?;
    let lines = split_lines(&error.message);
    let mut header = Line::styled(palette::error(), "✗ ");
    header.push(palette::error(), &error.code);
    if let Some(first) = lines.first() {
        header
            .push(palette::error(), ": ")
            .push(palette::plain(), first);
    }
    let mut out = wrap(&header, ctx.width);
    for line in lines.iter().skip(1) {
        let mut row = Line::plain("  ");
        row.push(palette::plain(), line);
        out.extend(wrap(&row, ctx.width));
    }
    if let Some(details) = error.details.filter(|d| !d.is_null()) {
        let mut row = Line::plain("  ");
        row.push(palette::dim(), &details.to_string());
        out.push(truncate(&row, ctx.width));
    }
    Some(out)
}
