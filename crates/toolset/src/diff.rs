//! File diffs for `write_file`, `edit_file` and what a jailed program changed
//! (`process::changes`): the `diff` result value (original, modified, isNew, bytesWritten,
//! unified hunks) and its exact `+N −M lines` summary, computed with `similar`. Used both for
//! results and for approval previews. Pure: no I/O.
//!
//! Big changes stay bounded: each side's text is cut after [`DiffLimits::max_text_bytes`], the
//! hunks after [`DiffLimits::max_hunk_lines`] lines (then `data.truncated` is `true`), and the
//! line diff gives up looking for the shortest script after [`DiffLimits::timeout`] (the counts
//! then describe a valid, not necessarily minimal, edit).

use std::time::Duration;

use golem_protocol::result::{DiffData, DiffHunk};
use golem_protocol::{DisplayHints, PreferredView, ToolResultValue};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::text::{as_text, cut_at_char_boundary};

/// Bounds on the size of a diff result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffLimits {
    /// Bytes of `original` and of `modified` kept in the result, each.
    pub max_text_bytes: usize,
    /// Lines kept across all hunks.
    pub max_hunk_lines: usize,
    /// How long the line diff may search for a minimal edit script.
    pub timeout: Duration,
}

impl Default for DiffLimits {
    fn default() -> Self {
        Self {
            max_text_bytes: 256 * 1024,
            max_hunk_lines: 5_000,
            timeout: Duration::from_secs(1),
        }
    }
}

/// Lines of context around each change in a hunk (as `diff -u`).
const CONTEXT_LINES: usize = 3;

/// Added and removed line counts of a text change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineCounts {
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}

impl LineCounts {
    /// `+N −M lines` (with a real minus sign, as the protocol's summaries).
    pub fn summary(self) -> String {
        format!("+{} \u{2212}{} lines", self.added, self.removed)
    }
}

/// The `diff` result for a change of the file at `path` from `original` (`None`: a new file)
/// to `modified`; `bytes_written` is set once the change has been applied.
pub fn diff_result(
    path: &str,
    original: Option<&[u8]>,
    modified: &[u8],
    bytes_written: Option<u64>,
    limits: &DiffLimits,
) -> ToolResultValue {
    let old_text = original.map(as_text);
    let new_text = as_text(modified);
    let is_new = original.is_none();
    let (data, summary, truncated) = match (old_text, new_text) {
        (None | Some(Some(_)), Some(new)) => {
            let old = old_text.flatten().unwrap_or("");
            let diff = text_diff(old, new, limits);
            let (original_shown, cut_old) = match original {
                Some(_) => {
                    let (text, cut) = shown(old, limits.max_text_bytes);
                    (Some(text), cut)
                }
                None => (None, false),
            };
            let (modified_shown, cut_new) = shown(new, limits.max_text_bytes);
            let data = DiffData {
                path: path.to_owned(),
                original: original_shown,
                modified: modified_shown,
                is_new,
                bytes_written,
                hunks: Some(diff.hunks),
            };
            let truncated = cut_old || cut_new || diff.hunks_truncated;
            (data, diff.counts.summary(), truncated)
        }
        _ => {
            let old_len = original.map(<[u8]>::len);
            let data = DiffData {
                path: path.to_owned(),
                original: old_len.map(binary_placeholder),
                modified: binary_placeholder(modified.len()),
                is_new,
                bytes_written,
                hunks: None,
            };
            let summary = match old_len {
                Some(old) => format!("binary file: {old} \u{2192} {} bytes", modified.len()),
                None => format!("binary file: {} bytes", modified.len()),
            };
            (data, summary, false)
        }
    };
    let mut value = serde_json::to_value(&data).unwrap_or(Value::Null);
    if truncated && let Value::Object(map) = &mut value {
        map.insert("truncated".to_owned(), Value::Bool(true));
    }
    ToolResultValue::new("diff", value)
        .with_summary(summary)
        .with_display(DisplayHints {
            preferred_view: Some(PreferredView::Diff),
            ..DisplayHints::default()
        })
}

/// What stands in for the text of a binary file.
fn binary_placeholder(len: usize) -> String {
    format!("[binary content, {len} bytes]")
}

/// `text` cut to `max` bytes with a marker, and whether it was cut.
fn shown(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let kept = cut_at_char_boundary(text, max);
    let rest = text.len() - kept.len();
    (format!("{kept}\n[… {rest} more bytes not shown]"), true)
}

/// A line diff: counts and hunks.
#[derive(Debug, Clone, PartialEq)]
pub struct TextChange {
    /// Added and removed lines, over the whole change.
    pub counts: LineCounts,
    /// Unified hunks with [`CONTEXT_LINES`] lines of context.
    pub hunks: Vec<DiffHunk>,
    /// Whether hunks were dropped or cut to stay within the limits.
    pub hunks_truncated: bool,
}

/// The line diff of `old` → `new`.
pub fn text_diff(old: &str, new: &str, limits: &DiffLimits) -> TextChange {
    let diff = TextDiff::configure()
        .timeout(limits.timeout)
        .diff_lines(old, new);
    let mut counts = LineCounts::default();
    let mut hunks = Vec::new();
    let mut budget = limits.max_hunk_lines;
    let mut hunks_truncated = false;
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let prefix = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => {
                        counts.removed += 1;
                        '-'
                    }
                    ChangeTag::Insert => {
                        counts.added += 1;
                        '+'
                    }
                };
                if budget > 0 {
                    let text = change.value();
                    let text = text.strip_suffix('\n').unwrap_or(text);
                    let text = text.strip_suffix('\r').unwrap_or(text);
                    lines.push(format!("{prefix}{text}"));
                    budget -= 1;
                } else {
                    hunks_truncated = true;
                }
            }
        }
        if !lines.is_empty() {
            hunks.push(DiffHunk {
                old_start: hunk_start(old_range.start, old_range.len()),
                old_lines: to_u32(old_range.len()),
                new_start: hunk_start(new_range.start, new_range.len()),
                new_lines: to_u32(new_range.len()),
                lines,
            });
        }
    }
    TextChange {
        counts,
        hunks,
        hunks_truncated,
    }
}

/// The 1-based first line of a hunk side, or, for an empty side, the line after which it sits
/// (`0` at the top), as in `diff -u`.
fn hunk_start(index: usize, len: usize) -> u32 {
    if len == 0 {
        to_u32(index)
    } else {
        to_u32(index + 1)
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(value: &ToolResultValue) -> DiffData {
        value.data_as::<DiffData>().unwrap()
    }

    #[test]
    fn new_file_counts_every_line_as_added() {
        let value = diff_result(
            "/s/a.txt",
            None,
            b"a\nb\nc\n",
            Some(6),
            &DiffLimits::default(),
        );
        assert_eq!(value.kind, "diff");
        assert_eq!(value.summary.as_deref(), Some("+3 \u{2212}0 lines"));
        let d = data(&value);
        assert!(d.is_new);
        assert_eq!(d.original, None);
        assert_eq!(d.bytes_written, Some(6));
        let hunks = d.hunks.unwrap();
        assert_eq!(hunks.len(), 1);
        assert_eq!((hunks[0].old_start, hunks[0].old_lines), (0, 0));
        assert_eq!((hunks[0].new_start, hunks[0].new_lines), (1, 3));
        assert_eq!(hunks[0].lines, vec!["+a", "+b", "+c"]);
        assert_eq!(value.data.get("truncated"), None);
    }

    #[test]
    fn counts_are_exact_where_a_multiset_count_is_not() {
        // Moving a line is one deletion and one insertion, even though the set of lines is
        // unchanged.
        let change = text_diff("a\nb\nc\n", "b\nc\na\n", &DiffLimits::default());
        assert_eq!(
            change.counts,
            LineCounts {
                added: 1,
                removed: 1
            }
        );
    }

    #[test]
    fn hunks_have_unified_coordinates_and_context() {
        let old: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 10\n", "line ten\n");
        let change = text_diff(&old, &new, &DiffLimits::default());
        assert_eq!(
            change.counts,
            LineCounts {
                added: 1,
                removed: 1
            }
        );
        assert_eq!(change.hunks.len(), 1);
        let h = &change.hunks[0];
        assert_eq!(
            (h.old_start, h.old_lines, h.new_start, h.new_lines),
            (7, 7, 7, 7)
        );
        assert_eq!(h.lines[3], "-line 10");
        assert_eq!(h.lines[4], "+line ten");
        assert_eq!(h.lines[0], " line 7");
    }

    #[test]
    fn distant_changes_make_separate_hunks() {
        let old: String = (1..=40).map(|i| format!("n{i}\n")).collect();
        let new = old
            .replace("n5\n", "five\n")
            .replace("n35\n", "thirty-five\n");
        let change = text_diff(&old, &new, &DiffLimits::default());
        assert_eq!(change.hunks.len(), 2);
        assert_eq!(
            change.counts,
            LineCounts {
                added: 2,
                removed: 2
            }
        );
    }

    #[test]
    fn identical_texts_have_no_hunks() {
        let value = diff_result("/s/a", Some(b"x\n"), b"x\n", None, &DiffLimits::default());
        assert_eq!(value.summary.as_deref(), Some("+0 \u{2212}0 lines"));
        assert_eq!(data(&value).hunks, Some(vec![]));
    }

    #[test]
    fn missing_final_newline_counts_as_a_changed_line() {
        let change = text_diff("a\nb", "a\nb\n", &DiffLimits::default());
        assert_eq!(
            change.counts,
            LineCounts {
                added: 1,
                removed: 1
            }
        );
    }

    #[test]
    fn crlf_lines_are_shown_without_carriage_returns() {
        let change = text_diff("a\r\n", "b\r\n", &DiffLimits::default());
        assert_eq!(change.hunks[0].lines, vec!["-a", "+b"]);
    }

    #[test]
    fn binary_content_gets_placeholders_and_a_byte_summary() {
        let value = diff_result(
            "/s/img.png",
            Some(&[0x89, 0x50, 0, 1]),
            &[0, 1, 2],
            Some(3),
            &DiffLimits::default(),
        );
        assert_eq!(
            value.summary.as_deref(),
            Some("binary file: 4 \u{2192} 3 bytes")
        );
        let d = data(&value);
        assert_eq!(d.original.as_deref(), Some("[binary content, 4 bytes]"));
        assert_eq!(d.modified, "[binary content, 3 bytes]");
        assert_eq!(d.hunks, None);
    }

    #[test]
    fn text_replacing_binary_is_still_a_binary_change() {
        let value = diff_result(
            "/s/f",
            Some(&[0, 0]),
            b"text\n",
            None,
            &DiffLimits::default(),
        );
        assert_eq!(
            value.summary.as_deref(),
            Some("binary file: 2 \u{2192} 5 bytes")
        );
    }

    #[test]
    fn big_texts_and_hunks_are_cut_and_flagged() {
        let limits = DiffLimits {
            max_text_bytes: 10,
            max_hunk_lines: 4,
            ..DiffLimits::default()
        };
        let new: String = (0..10).map(|i| format!("{i}\n")).collect();
        let value = diff_result("/s/big", None, new.as_bytes(), None, &limits);
        // The counts stay exact even though the shown parts are cut.
        assert_eq!(value.summary.as_deref(), Some("+10 \u{2212}0 lines"));
        assert_eq!(value.data["truncated"], Value::Bool(true));
        let d = data(&value);
        assert!(d.modified.starts_with("0\n1\n2\n3\n4\n"));
        assert!(d.modified.ends_with("[… 10 more bytes not shown]"));
        assert_eq!(d.hunks.unwrap()[0].lines.len(), 4);
    }

    #[test]
    fn cutting_respects_character_boundaries() {
        let (text, cut) = shown("ééé", 3);
        assert!(cut);
        assert!(text.starts_with("é\n"));
    }
}
