//! The `diff` view: a header with the path and `+N −M`, then a unified diff with old and new
//! line numbers, removed lines red and added lines green. Drawn from the producer's hunks when
//! there are some, else computed from the two texts with `similar` (bounded by a timeout).
//! Lines are not syntax highlighted, so a 10,000-line diff stays fast. A change to several
//! files (`files`) is one such view per file; a file's `from` (renamed), `isDeleted` and
//! `binary` are said in its header.

use std::time::Duration;

use golem_protocol::result::{DiffData, DiffHunk};
use serde::Deserialize;
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use super::Ctx;
use super::canvas::{Line, palette};
use super::layout::{fold_drawn, truncate, wrap};

/// Lines of context around each change when the diff is computed here.
const CONTEXT_LINES: usize = 3;
/// How long the line diff may search for a minimal edit script.
const DIFF_TIMEOUT: Duration = Duration::from_millis(100);

/// One row of the diff body.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Row<'a> {
    /// `@@ -a,b +c,d @@`.
    Hunk([u32; 4]),
    /// A line; `tag` is ` `, `+`, `-` or `\` (a "no newline" note).
    Line {
        tag: char,
        old: Option<u32>,
        new: Option<u32>,
        text: &'a str,
    },
}

/// A `diff` result, or `None` when `data` is not diff data. A change to several files (`files`,
/// one diff each, as `git_diff` makes) is drawn file after file.
pub(super) fn render(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    if let Some(files) = data.get("files").and_then(Value::as_array)
        && files.len() > 1
    {
        let mut out = Vec::new();
        for file in files {
            out.extend(render_file(file, ctx)?);
        }
        if data.get("truncated").and_then(Value::as_bool) == Some(true) {
            out.push(Line::styled(
                palette::dim(),
                "… the rest of the change was cut",
            ));
        }
        return Some(out);
    }
    render_file(data, ctx)
}

/// One file's change: the header, then the rows (or what there is instead of them).
fn render_file(data: &Value, ctx: &Ctx) -> Option<Vec<Line>> {
    let diff = DiffData::deserialize(data).ok()?;
    let truncated = data.get("truncated").and_then(Value::as_bool) == Some(true);
    let computed;
    let rows = match &diff.hunks {
        Some(hunks) => rows_from_hunks(hunks),
        None => {
            let old = diff.original.as_deref().unwrap_or("");
            computed = TextDiff::configure()
                .timeout(DIFF_TIMEOUT)
                .diff_lines(old, diff.modified.as_str());
            rows_from_texts(&computed)
        }
    };
    let (added, removed) = rows.iter().fold((0, 0), |(a, r), row| match row {
        Row::Line { tag: '+', .. } => (a + 1, r),
        Row::Line { tag: '-', .. } => (a, r + 1),
        _ => (a, r),
    });

    let flag = |key: &str| data.get(key).and_then(Value::as_bool) == Some(true);
    let mut header = Line::styled(palette::bold(), &diff.path);
    if let Some(from) = data.get("from").and_then(Value::as_str) {
        header
            .push(palette::dim(), " ← ")
            .push(palette::plain(), from);
    }
    if diff.is_new {
        header.push(palette::dim(), " (new file)");
    }
    if flag("isDeleted") {
        header.push(palette::dim(), " (deleted)");
    }
    header
        .push(palette::plain(), " ")
        .push(palette::added(), &format!("+{added}"))
        .push(palette::plain(), " ")
        .push(palette::removed(), &format!("\u{2212}{removed}"));
    if truncated {
        header.push(palette::dim(), " (truncated)");
    }
    let mut out = wrap(&header, ctx.width);
    if rows.is_empty() && flag("binary") {
        out.push(Line::styled(palette::dim(), "(binary file)"));
        return Some(out);
    }
    if rows.is_empty() && data.get("from").is_some() {
        out.push(Line::styled(palette::dim(), "(renamed, same content)"));
        return Some(out);
    }
    if rows.is_empty() {
        out.push(Line::styled(palette::dim(), "(no changes)"));
        return Some(out);
    }

    let max_number = rows
        .iter()
        .filter_map(|row| match row {
            Row::Line { old, new, .. } => (*old).max(*new),
            Row::Hunk(_) => None,
        })
        .max()
        .unwrap_or(0u32);
    let digits = max_number.max(1).ilog10() as usize + 1;
    out.extend(fold_drawn(
        &rows,
        ctx.max_height,
        "line",
        |_, row, lines| {
            draw_row(row, digits, ctx.width, lines);
        },
    ));
    Some(out)
}

fn rows_from_hunks(hunks: &[DiffHunk]) -> Vec<Row<'_>> {
    let total: usize = hunks.iter().map(|h| h.lines.len() + 1).sum();
    let mut rows = Vec::with_capacity(total);
    for hunk in hunks {
        rows.push(Row::Hunk([
            hunk.old_start,
            hunk.old_lines,
            hunk.new_start,
            hunk.new_lines,
        ]));
        let (mut old, mut new) = (hunk.old_start, hunk.new_start);
        for line in &hunk.lines {
            let line = line.strip_suffix('\n').unwrap_or(line);
            let line = line.strip_suffix('\r').unwrap_or(line);
            let mut chars = line.chars();
            let tag = chars.next().unwrap_or(' ');
            let text = chars.as_str();
            let (o, n) = match tag {
                '+' => (None, Some(new)),
                '-' => (Some(old), None),
                '\\' => (None, None),
                _ => (Some(old), Some(new)),
            };
            old += u32::from(o.is_some());
            new += u32::from(n.is_some());
            let tag = if matches!(tag, '+' | '-' | '\\') {
                tag
            } else {
                ' '
            };
            // A context line without its leading space keeps its first character.
            let text = if tag == ' ' && !line.starts_with(' ') {
                line
            } else {
                text
            };
            rows.push(Row::Line {
                tag,
                old: o,
                new: n,
                text,
            });
        }
    }
    rows
}

fn rows_from_texts<'a>(diff: &'a TextDiff<'a, 'a, 'a, str>) -> Vec<Row<'a>> {
    let mut rows = Vec::new();
    let number = |index: Option<usize>| index.map(|i| u32::try_from(i + 1).unwrap_or(u32::MAX));
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old = first.old_range().start..last.old_range().end;
        let new = first.new_range().start..last.new_range().end;
        let start = |range: &std::ops::Range<usize>| {
            u32::try_from(range.start + usize::from(!range.is_empty())).unwrap_or(u32::MAX)
        };
        let len = |range: &std::ops::Range<usize>| u32::try_from(range.len()).unwrap_or(u32::MAX);
        rows.push(Row::Hunk([start(&old), len(&old), start(&new), len(&new)]));
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value();
                let text = text.strip_suffix('\n').unwrap_or(text);
                let text = text.strip_suffix('\r').unwrap_or(text);
                let tag = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                rows.push(Row::Line {
                    tag,
                    old: number(change.old_index()),
                    new: number(change.new_index()),
                    text,
                });
            }
        }
    }
    rows
}

fn draw_row(row: &Row, digits: usize, width: usize, out: &mut Vec<Line>) {
    match *row {
        Row::Hunk([a, b, c, d]) => {
            let header = Line::styled(palette::hunk(), &format!("@@ -{a},{b} +{c},{d} @@"));
            out.push(truncate(&header, width));
        }
        Row::Line {
            tag,
            old,
            new,
            text,
        } => {
            let number = |n: Option<u32>| match n {
                Some(n) => format!("{n:>digits$}"),
                None => " ".repeat(digits),
            };
            let gutter = format!("{} {} │", number(old), number(new));
            let style = match tag {
                '+' => palette::added(),
                '-' => palette::removed(),
                '\\' => palette::dim(),
                _ => palette::plain(),
            };
            let mut body = Line::new();
            body.push(style, &tag.to_string()).push(style, text);
            let gutter_width = digits * 2 + 3;
            let rows = wrap(&body, width.saturating_sub(gutter_width).max(1));
            for (i, part) in rows.into_iter().enumerate() {
                let mut line = if i == 0 {
                    Line::styled(palette::dim(), &gutter)
                } else {
                    Line::styled(
                        palette::dim(),
                        &format!("{:w$} │", "", w = gutter_width - 2),
                    )
                };
                line.append(part);
                out.push(truncate(&line, width));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old: (u32, u32), new: (u32, u32), lines: &[&str]) -> DiffHunk {
        DiffHunk {
            old_start: old.0,
            old_lines: old.1,
            new_start: new.0,
            new_lines: new.1,
            lines: lines.iter().map(|l| (*l).to_owned()).collect(),
        }
    }

    #[test]
    fn hunk_rows_number_each_side() {
        let hunks = [hunk(
            (3, 3),
            (3, 3),
            &[" a", "-b", "+B", " c", "\\ No newline"],
        )];
        let rows = rows_from_hunks(&hunks);
        let lines: Vec<(char, Option<u32>, Option<u32>)> = rows
            .iter()
            .filter_map(|r| match r {
                Row::Line { tag, old, new, .. } => Some((*tag, *old, *new)),
                Row::Hunk(_) => None,
            })
            .collect();
        assert_eq!(
            lines,
            vec![
                (' ', Some(3), Some(3)),
                ('-', Some(4), None),
                ('+', None, Some(4)),
                (' ', Some(5), Some(5)),
                ('\\', None, None),
            ]
        );
    }

    #[test]
    fn computed_rows_match_diff_u() {
        let diff = TextDiff::from_lines("a\nb\nc\n", "a\nB\nc\nd\n");
        let rows = rows_from_texts(&diff);
        assert_eq!(rows[0], Row::Hunk([1, 3, 1, 4]));
        assert_eq!(rows.len(), 1 + 5);
    }
}
