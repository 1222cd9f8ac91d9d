//! Text layout for the renderers: display widths, wrapping and truncating styled lines to a
//! width, folding long outputs, padding and human sizes. (Control characters are neutralised
//! by `frontend::clean` as text enters a line.)

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::canvas::{Line, palette};

/// The display width of `text` in terminal columns.
pub(crate) fn width(text: &str) -> usize {
    text.width()
}

/// The lines of `text`, splitting on `\n` and dropping a `\r` before it; a final newline does
/// not start another line. Empty text has no lines.
pub(super) fn split_lines(text: &str) -> Vec<&str> {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// `line` cut into rows of at most `width` columns (at least one row; a character wider than
/// the whole width still gets a row of its own).
pub(super) fn wrap(line: &Line, width: usize) -> Vec<Line> {
    let width = width.max(1);
    if line.width() <= width {
        return vec![line.clone()];
    }
    let mut rows = vec![Line::new()];
    let mut used = 0;
    for span in &line.spans {
        let mut start = 0;
        for (i, c) in span.text.char_indices() {
            let w = c.width().unwrap_or(0);
            if used + w > width && used > 0 {
                if let Some(row) = rows.last_mut() {
                    row.push(span.style, &span.text[start..i]);
                }
                rows.push(Line::new());
                start = i;
                used = 0;
            }
            used += w;
        }
        if let Some(row) = rows.last_mut() {
            row.push(span.style, &span.text[start..]);
        }
    }
    rows
}

/// Plain `text` broken into rows of at most `width` columns at spaces; a word wider than a
/// row is cut by [`wrap`].
pub(super) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let needed = if row.is_empty() { 0 } else { row.width() + 1 };
        if !row.is_empty() && needed + word.width() > width {
            rows.push(std::mem::take(&mut row));
        }
        if row.is_empty() && word.width() > width {
            let mut pieces = wrap(&Line::plain(word), width);
            let last = pieces.pop().map(|l| l.text()).unwrap_or_default();
            rows.extend(pieces.iter().map(Line::text));
            row = last;
            continue;
        }
        if !row.is_empty() {
            row.push(' ');
        }
        row.push_str(word);
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(row);
    }
    rows
}

/// `line` cut to `width` columns, ending in `…` when something was cut.
pub(super) fn truncate(line: &Line, width: usize) -> Line {
    if line.width() <= width {
        return line.clone();
    }
    let budget = width.saturating_sub(1);
    let mut out = Line::new();
    let mut used = 0;
    'spans: for span in &line.spans {
        for (i, c) in span.text.char_indices() {
            let w = c.width().unwrap_or(0);
            if used + w > budget {
                out.push(span.style, &span.text[..i]);
                break 'spans;
            }
            used += w;
        }
        out.push(span.style, &span.text);
    }
    out.push(palette::dim(), "…");
    out
}

/// `text` cut to `width` columns, ending in `…` when something was cut.
pub(crate) fn truncate_str(text: &str, width: usize) -> String {
    truncate(&Line::plain(text), width).text()
}

/// The spaces `(before, after)` that bring `text` to `width` columns, aligned as `align` says.
pub(super) fn padding(text: &str, width: usize, align: Align) -> (usize, usize) {
    let gap = width.saturating_sub(self::width(text));
    match align {
        Align::Left => (0, gap),
        Align::Right => (gap, 0),
        Align::Center => (gap / 2, gap - gap / 2),
    }
}

/// Horizontal alignment in a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Align {
    /// Padding after.
    Left,
    /// Padding before.
    Right,
    /// Padding on both sides.
    Center,
}

/// What a fold keeps of `total` items shown in at most `max` rows (one of which says what
/// was left out): `(head, tail)` counts, or `None` when everything fits.
pub(super) fn fold_plan(total: usize, max: Option<usize>) -> Option<(usize, usize)> {
    let max = max?;
    if total <= max {
        return None;
    }
    let keep = max.saturating_sub(1).max(1);
    let tail = keep / 3;
    Some((keep - tail, tail))
}

/// `items` folded to at most `max` rows: `(head, hidden, tail)`; `hidden` is 0 when
/// everything fits (then `tail` is empty).
pub(super) fn fold_slice<T>(items: &[T], max: Option<usize>) -> (&[T], usize, &[T]) {
    match fold_plan(items.len(), max) {
        None => (items, 0, &[]),
        Some((head, tail)) => (
            &items[..head],
            items.len() - head - tail,
            &items[items.len() - tail..],
        ),
    }
}

/// Source `items` (lines) drawn as rows by `draw` and folded to at most `max` rows: the head,
/// one `… N more lines` marker, the tail. Items folded away are never drawn; when wrapped
/// items still make too many rows, rows are dropped around the marker too, and N counts every
/// item with a row not shown. `draw(index, item, rows)` sees the items in order, with a jump
/// in `index` where the fold is.
pub(super) fn fold_drawn<T>(
    items: &[T],
    max: Option<usize>,
    noun: &str,
    mut draw: impl FnMut(usize, &T, &mut Vec<Line>),
) -> Vec<Line> {
    let (head, gap, tail) = fold_slice(items, max);
    let tail_start = items.len() - tail.len();
    let mut rows: Vec<(usize, Line)> = Vec::with_capacity(head.len() + tail.len());
    let mut buffer = Vec::new();
    let shown = head.iter().enumerate();
    let shown = shown.chain(tail.iter().enumerate().map(|(j, t)| (tail_start + j, t)));
    for (index, item) in shown {
        draw(index, item, &mut buffer);
        rows.extend(buffer.drain(..).map(|line| (index, line)));
    }
    // Rows before the fold (rows are in item order).
    let split = rows.partition_point(|(index, _)| *index < head.len());
    let total = rows.len() + usize::from(gap > 0);
    let (keep_head, keep_tail) = match fold_plan(total, max) {
        None if gap == 0 => return rows.into_iter().map(|(_, line)| line).collect(),
        None => (split, rows.len() - split),
        // One marker only: with a fold already there, rows are dropped on its sides.
        Some((h, t)) if gap > 0 => (h.min(split), t.min(rows.len() - split)),
        Some((h, t)) => (h.min(rows.len()), t.min(rows.len().saturating_sub(h))),
    };
    let cut = rows.len() - keep_tail;
    let mut hidden = gap;
    let mut last_counted = None;
    for (position, (index, _)) in rows.iter().enumerate() {
        if (keep_head..cut).contains(&position) && last_counted != Some(*index) {
            hidden += 1;
            last_counted = Some(*index);
        }
    }
    let mut out = Vec::with_capacity(keep_head + keep_tail + 1);
    let mut rows = rows.into_iter().map(|(_, line)| line);
    out.extend(rows.by_ref().take(keep_head));
    if hidden > 0 {
        out.push(fold_marker(hidden, noun));
    }
    out.extend(rows.skip(cut - keep_head));
    out
}

/// The line that stands for `hidden` folded-away lines.
pub(super) fn fold_marker(hidden: usize, noun: &str) -> Line {
    Line::styled(
        palette::dim(),
        &format!("… {hidden} more {}", plural(hidden, noun)),
    )
}

/// `noun` for a count of `n`: `line`/`lines`, `entry`/`entries`.
pub(super) fn plural(n: usize, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => noun.to_owned(),
        (_, Some(stem)) => format!("{stem}ies"),
        (_, None) => format!("{noun}s"),
    }
}

/// `lines` folded to at most `max` rows: head, marker, tail.
pub(super) fn fold_lines(lines: Vec<Line>, max: Option<usize>) -> Vec<Line> {
    match fold_plan(lines.len(), max) {
        None => lines,
        Some((head, tail)) => {
            let hidden = lines.len() - head - tail;
            let mut out: Vec<Line> = Vec::with_capacity(head + tail + 1);
            let mut lines = lines.into_iter();
            out.extend(lines.by_ref().take(head));
            out.push(fold_marker(hidden, "line"));
            out.extend(lines.skip(hidden));
            out
        }
    }
}

/// A byte count for people: `512 B`, `1.5 KiB`, `12 MiB`.
pub(super) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// A duration for people: `41 ms`, `1.2 s`, `2 min 5 s`.
pub(crate) fn human_duration(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

/// A count for people, its thousands grouped: `190,000`.
pub(crate) use golem_core::text::thousands as human_count;

/// An amount of US dollars for people: `$1.23`, and four decimals below a cent (`$0.0042`).
pub(crate) fn human_cost(dollars: f64) -> String {
    if dollars >= 0.01 {
        format!("${dollars:.2}")
    } else {
        format!("${dollars:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_group_their_thousands() {
        assert_eq!(human_count(0), "0");
        assert_eq!(human_count(999), "999");
        assert_eq!(human_count(1000), "1,000");
        assert_eq!(human_count(190_000), "190,000");
        assert_eq!(human_count(12_345_678), "12,345,678");
    }

    #[test]
    fn costs_read_like_money() {
        assert_eq!(human_cost(1.234), "$1.23");
        assert_eq!(human_cost(0.0042), "$0.0042");
        assert_eq!(human_cost(0.0), "$0.0000");
    }

    #[test]
    fn split_lines_handles_crlf_and_final_newline() {
        assert_eq!(split_lines("a\r\nb\n"), vec!["a", "b"]);
        assert_eq!(split_lines("a\n\nb"), vec!["a", "", "b"]);
        assert!(split_lines("").is_empty());
        assert_eq!(split_lines("\n"), Vec::<&str>::new());
        assert_eq!(split_lines("\n\n"), vec!["", ""]);
    }

    #[test]
    fn wrap_respects_wide_characters() {
        let rows = wrap(&Line::plain("ab日本c"), 3);
        let texts: Vec<String> = rows.iter().map(Line::text).collect();
        assert_eq!(texts, vec!["ab", "日", "本c"]);
        for row in &rows {
            assert!(row.width() <= 3);
        }
        // A character wider than the width still gets a row, and wrapping terminates.
        assert_eq!(wrap(&Line::plain("日日"), 1).len(), 2);
        assert_eq!(wrap(&Line::plain("abc"), 0).len(), 3);
    }

    #[test]
    fn wrap_words_breaks_at_spaces() {
        assert_eq!(
            wrap_words("use --approval approve_all or auto_deny", 16),
            ["use --approval", "approve_all or", "auto_deny"]
        );
        assert_eq!(wrap_words("abcdefghij kl", 4), ["abcd", "efgh", "ij", "kl"]);
        assert_eq!(wrap_words("", 4), [""]);
    }

    #[test]
    fn truncate_marks_the_cut() {
        assert_eq!(truncate_str("abcdef", 4), "abc…");
        assert_eq!(truncate_str("abcd", 4), "abcd");
        assert_eq!(truncate_str("日本語", 4), "日…");
        assert_eq!(truncate_str("abc", 0), "…");
    }

    #[test]
    fn fold_keeps_head_and_tail_within_max() {
        assert_eq!(fold_plan(10, None), None);
        assert_eq!(fold_plan(10, Some(10)), None);
        assert_eq!(fold_plan(100, Some(10)), Some((6, 3)));
        assert_eq!(fold_plan(100, Some(1)), Some((1, 0)));
        assert_eq!(fold_plan(100, Some(0)), Some((1, 0)));
        let lines: Vec<Line> = (0..20).map(|i| Line::plain(&i.to_string())).collect();
        let folded: Vec<String> = fold_lines(lines, Some(5)).iter().map(Line::text).collect();
        assert_eq!(folded, vec!["0", "1", "2", "… 16 more lines", "19"]);
    }

    /// Draws each item as one row per character.
    fn drawn(items: &[&str], max: Option<usize>) -> Vec<String> {
        let rows = fold_drawn(items, max, "line", |_, item, rows| {
            rows.extend(item.chars().map(|c| Line::plain(&c.to_string())));
        });
        rows.iter().map(Line::text).collect()
    }

    #[test]
    fn fold_drawn_counts_rows_and_partly_hidden_items() {
        assert_eq!(drawn(&["ab", "c"], None), vec!["a", "b", "c"]);
        assert_eq!(drawn(&["ab", "c"], Some(3)), vec!["a", "b", "c"]);
        // One item of many rows: rows are dropped, and the item counts as hidden.
        assert_eq!(
            drawn(&["abcdefgh"], Some(4)),
            vec!["a", "b", "… 1 more line", "h"]
        );
        // Items folded away plus rows dropped beside the fold: one marker for both.
        let items = ["a", "bbbb", "c", "d", "e", "f", "g", "h"];
        assert_eq!(
            drawn(&items, Some(4)),
            vec!["a", "b", "… 6 more lines", "h"]
        );
        assert_eq!(drawn(&items, Some(5)).len(), 5);
    }

    #[test]
    fn human_units() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(20 * 1024 * 1024), "20 MiB");
        assert_eq!(human_size(u64::MAX), "16384 PiB");
        assert_eq!(human_duration(41), "41 ms");
        assert_eq!(human_duration(1234), "1.2 s");
        assert_eq!(human_duration(125_000), "2 min 5 s");
    }
}
