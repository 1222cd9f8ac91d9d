//! The `structured`/`json` view and the raw JSON fallback. The tree shows objects as `key:
//! value` lines and arrays as `- item` lines, indented by nesting; terminal output is static,
//! so "collapsible" means folded: containers past a depth become `{…} N keys` / `[…] N items`,
//! long containers end in `… N more`, and the whole is folded past the height limit.

use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{fold_lines, fold_marker, truncate};
use super::text;

/// Nesting levels shown before containers are folded to a count.
const MAX_DEPTH: usize = 4;
/// Entries shown per object or array.
const MAX_ENTRIES: usize = 100;
/// Spaces per nesting level.
const INDENT: usize = 2;

/// One row before indentation.
struct Row {
    indent: usize,
    line: Line,
}

/// `data` as a folded tree.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Vec<Line> {
    let mut rows = Vec::new();
    match data {
        Value::Object(map) if !map.is_empty() => object_rows(map, 0, &mut rows),
        Value::Array(items) if !items.is_empty() => array_rows(items, 0, &mut rows),
        scalar => rows.push(Row {
            indent: 0,
            line: inline(scalar),
        }),
    }
    let lines = rows
        .into_iter()
        .map(|row| {
            let mut line = Line::plain(&" ".repeat(row.indent));
            line.append(row.line);
            truncate(&line, ctx.width)
        })
        .collect();
    fold_lines(lines, ctx.max_height)
}

/// `data` as pretty-printed JSON, wrapped and folded.
pub(super) fn raw(data: &Value, ctx: &Ctx) -> Vec<Line> {
    let pretty = serde_json::to_string_pretty(data).unwrap_or_else(|_| data.to_string());
    text::text_lines(&pretty, ctx, palette::plain())
}

/// A value on one line: a scalar, an empty container, or a container folded to its count.
fn inline(value: &Value) -> Line {
    let count =
        |n: usize, one: &str, many: &str| format!(" {n} {}", if n == 1 { one } else { many });
    match value {
        Value::Null => Line::styled(palette::literal(), "null"),
        Value::Bool(b) => Line::styled(palette::literal(), &b.to_string()),
        Value::Number(n) => Line::styled(palette::number(), &n.to_string()),
        Value::String(s) => {
            let quoted = serde_json::to_string(s).unwrap_or_default();
            Line::styled(palette::string(), &quoted)
        }
        Value::Object(map) if map.is_empty() => Line::styled(palette::dim(), "{}"),
        Value::Array(items) if items.is_empty() => Line::styled(palette::dim(), "[]"),
        Value::Object(map) => Line::styled(
            palette::dim(),
            &format!("{{…}}{}", count(map.len(), "key", "keys")),
        ),
        Value::Array(items) => Line::styled(
            palette::dim(),
            &format!("[…]{}", count(items.len(), "item", "items")),
        ),
    }
}

/// Whether `value` is drawn over several rows at `depth` (a non-empty container not yet folded).
fn opens(value: &Value, depth: usize) -> bool {
    depth < MAX_DEPTH
        && match value {
            Value::Object(map) => !map.is_empty(),
            Value::Array(items) => !items.is_empty(),
            _ => false,
        }
}

/// The rows of `value`'s entries, one level deeper than `depth`.
fn children(value: &Value, depth: usize, rows: &mut Vec<Row>) {
    match value {
        Value::Object(map) => object_rows(map, depth, rows),
        Value::Array(items) => array_rows(items, depth, rows),
        _ => {}
    }
}

fn object_rows(map: &serde_json::Map<String, Value>, depth: usize, rows: &mut Vec<Row>) {
    let indent = depth * INDENT;
    for (key, value) in map.iter().take(MAX_ENTRIES) {
        let mut line = Line::styled(palette::key(), key);
        line.push(palette::plain(), ":");
        if opens(value, depth + 1) {
            rows.push(Row { indent, line });
            children(value, depth + 1, rows);
        } else {
            line.push(palette::plain(), " ").append(inline(value));
            rows.push(Row { indent, line });
        }
    }
    more(map.len(), indent, "key", rows);
}

fn array_rows(items: &[Value], depth: usize, rows: &mut Vec<Row>) {
    let indent = depth * INDENT;
    for item in items.iter().take(MAX_ENTRIES) {
        let mut line = Line::styled(palette::dim(), "- ");
        if opens(item, depth + 1) {
            // The item's first row moves up onto the dash, YAML style.
            let start = rows.len();
            children(item, depth + 1, rows);
            if let Some(first) = rows.get_mut(start) {
                line.append(std::mem::take(&mut first.line));
                first.line = line;
                first.indent = indent;
            }
        } else {
            line.append(inline(item));
            rows.push(Row { indent, line });
        }
    }
    more(items.len(), indent, "item", rows);
}

fn more(total: usize, indent: usize, noun: &str, rows: &mut Vec<Row>) {
    if total > MAX_ENTRIES {
        rows.push(Row {
            indent,
            line: fold_marker(total - MAX_ENTRIES, noun),
        });
    }
}
