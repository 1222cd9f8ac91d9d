//! Result renderers for the terminal: a `ToolResultValue` of any kind as lines of text fitted to
//! a width, with or without ANSI colour. Pure functions of the value and a [`RenderStyle`]: no
//! terminal queries, no environment reads (the caller decides colour, width and image support).
//!
//! Well-known kinds have a view each (one file per kind), and so does the custom kind
//! `git.status` (`git_status.rs`). Unknown kinds follow the fallback chain of
//! docs/tools.md (Rendering results):
//! `display.preferredView`, then `mimeType`, then the data's shape (a string is text, an array
//! of objects a table), then pretty JSON. Data that does not match its kind's
//! shape is shown as JSON. Nothing a tool returns can drive the terminal: every piece of text
//! is cleaned of control characters on its way into a line (see `canvas`).

mod canvas;
mod code_result;
mod diff;
mod file_content;
mod file_list;
mod git_status;
mod highlight;
mod image;
mod layout;
mod markdown;
mod table;
mod text;
mod tool_error;
mod tree;

#[cfg(test)]
mod tests;

use golem_protocol::{PreferredView, ToolResultValue};
use serde_json::Value;

use canvas::{Line, palette};
pub use image::{ImageProtocol, detect_image_protocol};
pub(crate) use layout::{
    human_cost, human_count, human_duration, truncate_str as truncate_text, width as text_width,
};

/// The narrowest width the renderers lay out for; smaller widths are treated as this.
const MIN_WIDTH: usize = 20;

/// How to draw results: decided by the caller from the terminal and the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderStyle {
    /// Whether to emit ANSI colours (off for `NO_COLOR` or when output is not a terminal).
    pub color: bool,
    /// The width to fit, in terminal columns.
    pub width: usize,
    /// Fold outputs longer than this many lines, unless the result's `display.maxHeight` says
    /// otherwise; `None` never folds (unless the result asks to).
    pub max_height: Option<usize>,
    /// The inline image protocol the terminal speaks, if any (see [`detect_image_protocol`]).
    pub inline_images: Option<ImageProtocol>,
}

impl RenderStyle {
    /// No colour, no folding, no inline images, `width` columns.
    pub fn plain(width: usize) -> Self {
        Self {
            color: false,
            width,
            max_height: None,
            inline_images: None,
        }
    }
}

impl Default for RenderStyle {
    fn default() -> Self {
        Self::plain(80)
    }
}

/// What every view receives: the style, with the result's own hints applied.
#[derive(Debug, Clone, Copy)]
struct Ctx<'a> {
    color: bool,
    width: usize,
    max_height: Option<usize>,
    language: Option<&'a str>,
    mime_type: Option<&'a str>,
    inline_images: Option<ImageProtocol>,
}

/// `value` rendered for the terminal: one `\n`-terminated line per row; empty when the result
/// is hidden.
#[cfg(test)]
pub fn render_result(value: &ToolResultValue, style: &RenderStyle) -> String {
    let mut out = String::new();
    for line in render_lines(value, style) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `value` rendered for the terminal as rows without their newlines (for a caller that indents
/// or frames them); no rows when the result is hidden.
pub fn render_lines(value: &ToolResultValue, style: &RenderStyle) -> Vec<String> {
    let width = style.width.max(MIN_WIDTH);
    // The views fit their rows to the width already; this only guards against a slip.
    let lines: Vec<Line> = render(value, style)
        .into_iter()
        .map(|line| {
            if line.graphic.is_none() && line.width() > width {
                layout::truncate(&line, width)
            } else {
                line
            }
        })
        .collect();
    canvas::finish(&lines, style.color)
}

/// A one-line description of `value` at most `width` columns wide, without colour: its
/// `summary`, else one made from the data (`/src/a.rs +3 −1`, `12 entries`, `INVALID_PATH: …`).
pub fn summary_line(value: &ToolResultValue, width: usize) -> String {
    layout::truncate(&Line::plain(&summary_text(value)), width.max(1)).text()
}

/// The whole of [`summary_line`]'s line, wrapped into rows of at most `width` columns instead
/// of cut: for a failure, whose message may end with the hint that matters (`use --approval
/// approve_all or auto_deny`).
pub fn summary_rows(value: &ToolResultValue, width: usize) -> Vec<String> {
    layout::wrap_words(&summary_text(value), width)
}

fn summary_text(value: &ToolResultValue) -> String {
    value
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| first_line(s).to_owned())
        .unwrap_or_else(|| derived_summary(value))
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

fn derived_summary(value: &ToolResultValue) -> String {
    let data = &value.data;
    let str_of = |key: &str| data.get(key).and_then(Value::as_str);
    let len_of = |key: &str| data.get(key).and_then(Value::as_array).map(Vec::len);
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let derived = match value.kind.as_str() {
        "text" => text_of(data).map(|t| first_line(t).to_owned()),
        "diff" => str_of("path").map(|path| {
            let counts = golem_protocol::result::diff_summary(
                str_of("original").unwrap_or(""),
                str_of("modified").unwrap_or(""),
            );
            format!("{path} {}", counts.trim_end_matches(" lines"))
        }),
        "file_content" => str_of("path").map(str::to_owned),
        "file_list" => len_of("entries").map(|n| plural(n, "entry", "entries")),
        "table" => len_of("rows").map(|n| plural(n, "row", "rows")),
        "image" => Some(image::summary(data, value.mime_type.as_deref())),
        "code_result" => code_result::summary(data),
        "tool_error" => tool_error::summary(data),
        _ => None,
    };
    derived.unwrap_or_else(|| format!("{} result", value.kind))
}

fn render(value: &ToolResultValue, style: &RenderStyle) -> Vec<Line> {
    let hints = value.display.as_ref();
    let view = hints.and_then(|d| d.preferred_view);
    if view == Some(PreferredView::Hidden) {
        return Vec::new();
    }
    let width = style.width.max(MIN_WIDTH);
    if hints.and_then(|d| d.collapsed) == Some(true) {
        let mut line = Line::styled(palette::dim(), "▸ ");
        line.push(
            palette::plain(),
            &summary_line(value, width.saturating_sub(2)),
        );
        return vec![line];
    }
    let max_height = hints
        .and_then(|d| d.max_height)
        .map(|h| h as usize)
        .or(style.max_height);
    let ctx = Ctx {
        color: style.color,
        width,
        max_height,
        language: hints.and_then(|d| d.language.as_deref()),
        mime_type: value.mime_type.as_deref(),
        inline_images: style.inline_images,
    };
    let data = &value.data;
    let known = match value.kind.as_str() {
        "diff" => Some(diff::render(data, &ctx)),
        "file_content" => Some(file_content::render(data, &ctx)),
        "file_list" => Some(file_list::render(data, &ctx)),
        "table" => Some(table::render(data, &ctx)),
        "text" => Some(match view {
            Some(PreferredView::Markdown | PreferredView::Code) => render_view(view, data, &ctx),
            _ if is_markdown(ctx.mime_type) => markdown::render_text(data, &ctx),
            _ => text::render(data, &ctx),
        }),
        "image" => Some(image::render(data, &ctx)),
        "structured" | "json" => Some(match view {
            Some(PreferredView::Raw) => Some(tree::raw(data, &ctx)),
            _ => Some(tree::render(data, &ctx)),
        }),
        "code_result" => Some(code_result::render(data, &ctx)),
        "tool_error" => Some(tool_error::render(data, &ctx)),
        "git.status" => Some(git_status::render(data, &ctx)),
        _ => None,
    };
    match known {
        Some(Some(lines)) => lines,
        Some(None) => {
            let note = format!("(data does not match kind `{}`)", value.kind);
            let mut lines = vec![layout::truncate(
                &Line::styled(palette::dim(), &note),
                width,
            )];
            lines.extend(tree::raw(data, &ctx));
            lines
        }
        None => fallback(value, &ctx),
    }
}

/// The fallback chain (docs/tools.md, Rendering results) for a kind without a view of its own.
fn fallback(value: &ToolResultValue, ctx: &Ctx) -> Vec<Line> {
    let data = &value.data;
    let view = value.display.as_ref().and_then(|d| d.preferred_view);
    let body = render_view(view, data, ctx)
        .or_else(|| by_mime_type(ctx.mime_type, data, ctx))
        .or_else(|| by_shape(data, ctx))
        .unwrap_or_else(|| tree::raw(data, ctx));
    let mut lines = Vec::with_capacity(body.len() + 1);
    if let Some(summary) = value.summary.as_deref().filter(|s| !s.trim().is_empty()) {
        lines.push(layout::truncate(
            &Line::styled(palette::bold(), first_line(summary)),
            ctx.width,
        ));
    }
    lines.extend(body);
    lines
}

/// `data` in the generic view `view`, or `None` when there is no view or the data does not fit it.
fn render_view(view: Option<PreferredView>, data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    match view? {
        PreferredView::Text => text::render(data, ctx),
        PreferredView::Markdown => markdown::render_text(data, ctx),
        PreferredView::Code => file_content::render_code(data, ctx),
        PreferredView::Diff => diff::render(data, ctx),
        PreferredView::Table => table::render(data, ctx).or_else(|| table::render_rows(data, ctx)),
        PreferredView::Tree => Some(tree::render(data, ctx)),
        PreferredView::Image => image::render(data, ctx),
        PreferredView::Raw => Some(tree::raw(data, ctx)),
        PreferredView::Hidden => Some(Vec::new()),
    }
}

fn is_markdown(mime_type: Option<&str>) -> bool {
    mime_type.is_some_and(|m| m.eq_ignore_ascii_case("text/markdown"))
}

fn by_mime_type(mime_type: Option<&str>, data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let mime = mime_type?.trim().to_ascii_lowercase();
    if is_markdown(Some(&mime)) {
        markdown::render_text(data, ctx)
    } else if mime.starts_with("text/") {
        text::render(data, ctx)
    } else if mime == "application/json" || mime.ends_with("+json") {
        Some(tree::render(data, ctx))
    } else if mime.starts_with("image/") {
        image::render(data, ctx)
    } else {
        None
    }
}

fn by_shape(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    match data {
        Value::String(_) => text::render(data, ctx),
        Value::Array(_) => table::render_rows(data, ctx),
        _ => None,
    }
}

/// The text of text-like data: a string, or an object's `content` or `text` string.
fn text_of(data: &Value) -> Option<&str> {
    match data {
        Value::String(s) => Some(s),
        Value::Object(map) => map
            .get("content")
            .or_else(|| map.get("text"))
            .and_then(Value::as_str),
        _ => None,
    }
}
