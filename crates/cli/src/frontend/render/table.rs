//! The `table` view: columns aligned as each `ColumnDef.align` says (numbers right by default),
//! a bold header over a rule, cells cut with `…` when the columns do not fit the width, rows
//! folded past the height limit. Also the grid that `file_list` and arrays of objects use.

use golem_protocol::result::{ColumnAlign, ColumnDef, ColumnType, TableData};
use serde::Deserialize;
use serde_json::Value;

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{Align, fold_marker, fold_slice, padding, truncate};
use super::text;

/// Columns between two cells.
const GAP: usize = 2;
/// The narrowest a column is squeezed to.
const MIN_COLUMN: usize = 3;
/// Columns inferred from an array of objects, at most.
const MAX_INFERRED_COLUMNS: usize = 12;

/// A `table` result, or `None` when `data` is not table data.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let table = TableData::deserialize(data).ok()?;
    Some(draw(&table.columns, &table.rows, ctx))
}

/// An array of objects as a table, the columns being the keys in order of first appearance;
/// `None` for anything else.
pub(super) fn render_rows(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let items = data.as_array()?;
    let mut rows = Vec::with_capacity(items.len());
    let mut columns: Vec<ColumnDef> = Vec::new();
    for item in items {
        let row = item.as_object()?;
        for (key, value) in row {
            if columns.len() < MAX_INFERRED_COLUMNS && !columns.iter().any(|c| &c.key == key) {
                columns.push(ColumnDef {
                    key: key.clone(),
                    label: None,
                    column_type: value.is_number().then_some(ColumnType::Number),
                    align: None,
                });
            }
        }
        rows.push(row.clone());
    }
    if columns.is_empty() {
        return None;
    }
    Some(draw(&columns, &rows, ctx))
}

fn draw(columns: &[ColumnDef], rows: &[serde_json::Map<String, Value>], ctx: &Ctx) -> Vec<Line> {
    if columns.is_empty() {
        return vec![text::empty()];
    }
    let header: Vec<(String, Align)> = columns
        .iter()
        .map(|c| {
            (
                c.label.clone().unwrap_or_else(|| c.key.clone()),
                align_of(c),
            )
        })
        .collect();
    let (head, hidden, tail) = fold_slice(rows, ctx.max_height);
    let cells = |row: &serde_json::Map<String, Value>| -> Vec<Line> {
        columns
            .iter()
            .map(|c| cell(row.get(&c.key).unwrap_or(&Value::Null)))
            .collect()
    };
    let body: Vec<Vec<Line>> = head.iter().chain(tail).map(cells).collect();
    let mut lines = grid(&header, body, ctx.width);
    if rows.is_empty() {
        lines.push(Line::styled(palette::dim(), "(no rows)"));
    } else if hidden > 0 {
        // The header and rule come first, then the head rows.
        lines.insert(2 + head.len(), fold_marker(hidden, "row"));
    }
    lines
}

fn align_of(column: &ColumnDef) -> Align {
    match (column.align, column.column_type) {
        (Some(ColumnAlign::Left), _) => Align::Left,
        (Some(ColumnAlign::Right), _) => Align::Right,
        (Some(ColumnAlign::Center), _) => Align::Center,
        (None, Some(ColumnType::Number)) => Align::Right,
        (None, _) => Align::Left,
    }
}

/// A JSON value as a one-line cell.
fn cell(value: &Value) -> Line {
    match value {
        Value::Null => Line::new(),
        Value::String(s) => Line::plain(&s.replace('\n', " ")),
        Value::Number(n) => Line::styled(palette::number(), &n.to_string()),
        Value::Bool(b) => Line::styled(palette::literal(), &b.to_string()),
        other => Line::styled(palette::dim(), &other.to_string()),
    }
}

/// A grid: a bold header row, a rule, then the rows, columns padded to their widest cell and
/// squeezed (widest first) until the whole fits in `width`.
pub(super) fn grid(header: &[(String, Align)], rows: Vec<Vec<Line>>, width: usize) -> Vec<Line> {
    let n = header.len();
    let mut widths: Vec<usize> = header
        .iter()
        .map(|(label, _)| super::layout::width(label))
        .collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.width());
        }
    }
    for w in &mut widths {
        *w = (*w).min(width);
    }
    let total = |widths: &[usize]| widths.iter().sum::<usize>() + GAP * n.saturating_sub(1);
    while total(&widths) > width {
        let Some((i, widest)) = widths.iter().copied().enumerate().max_by_key(|(_, w)| *w) else {
            break;
        };
        if widest <= MIN_COLUMN {
            break;
        }
        widths[i] = widest - 1;
    }
    let mut out = Vec::with_capacity(rows.len() + 2);
    let header_cells: Vec<Line> = header
        .iter()
        .map(|(label, _)| Line::styled(palette::bold(), label))
        .collect();
    out.push(join(header_cells, header, &widths));
    let rule: Vec<Line> = widths
        .iter()
        .map(|w| Line::styled(palette::dim(), &"─".repeat(*w)))
        .collect();
    out.push(join(rule, header, &widths));
    for row in rows {
        out.push(join(row, header, &widths));
    }
    out
}

fn join(cells: Vec<Line>, header: &[(String, Align)], widths: &[usize]) -> Line {
    let mut line = Line::new();
    let last = widths.len().saturating_sub(1);
    for (i, ((cell, (_, align)), width)) in cells.into_iter().zip(header).zip(widths).enumerate() {
        if i > 0 {
            line.push(palette::plain(), &" ".repeat(GAP));
        }
        let cell = truncate(&cell, *width);
        let (before, after) = padding(&cell.text(), *width, *align);
        line.push(palette::plain(), &" ".repeat(before));
        line.append(cell);
        if i < last {
            line.push(palette::plain(), &" ".repeat(after));
        }
    }
    line.trim_end();
    line
}
