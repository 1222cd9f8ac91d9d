//! Semantic tool results (docs/tools.md, Result kinds): `ToolResultValue` with a kind, structured
//! data, a summary and display hints, plus typed constructors for the well-known kinds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a tool returns: typed data that each front end renders as well as it can.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultValue {
    /// The result type: a well-known kind (`diff`, `table`, …) or a namespaced custom one
    /// (`git.status`); see [`crate::kind::is_valid_kind`].
    pub kind: String,
    /// The data; its shape depends on `kind`.
    pub data: Value,
    /// A one-line human summary that every UI can show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// A content-type hint such as `text/markdown` or `image/png`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Rendering hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<DisplayHints>,
}

/// How a result would like to be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PreferredView {
    /// Plain text, whitespace preserved.
    Text,
    /// Rendered markdown.
    Markdown,
    /// Syntax-highlighted code.
    Code,
    /// A unified or side-by-side diff.
    Diff,
    /// Columns and rows.
    Table,
    /// A nested, collapsible structure.
    Tree,
    /// An image.
    Image,
    /// A raw JSON dump.
    Raw,
    /// Not shown (internal results).
    Hidden,
}

/// Rendering hints attached to a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DisplayHints {
    /// The suggested view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_view: Option<PreferredView>,
    /// The language for code highlighting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Whether to start collapsed (summary only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<bool>,
    /// The height after which the view folds (lines in a terminal, pixels in a browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_height: Option<u32>,
    /// Display priority; higher is more prominent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
}

/// `data` of a `text` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TextData {
    /// The text.
    pub content: String,
}

/// One hunk of a structured diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffHunk {
    /// First line of the hunk in the original (1-based).
    pub old_start: u32,
    /// Number of original lines in the hunk.
    pub old_lines: u32,
    /// First line of the hunk in the modified text (1-based).
    pub new_start: u32,
    /// Number of modified lines in the hunk.
    pub new_lines: u32,
    /// The hunk's lines, each prefixed with ` `, `+` or `-`.
    pub lines: Vec<String>,
}

/// `data` of a `diff` result: a file change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffData {
    /// The (virtual) path of the file.
    pub path: String,
    /// The content before; absent for a new file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original: Option<String>,
    /// The content after.
    pub modified: String,
    /// Whether the file did not exist before.
    pub is_new: bool,
    /// Bytes written, when the change was applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_written: Option<u64>,
    /// A structured form of the diff, when the producer computed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunks: Option<Vec<DiffHunk>>,
}

/// `data` of a `file_content` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileContentData {
    /// The (virtual) path of the file.
    pub path: String,
    /// The content (text, or base64 when `encoding` says so).
    pub content: String,
    /// The file's size in bytes.
    pub size: u64,
    /// `utf-8` or `base64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// The type of a directory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileEntryType {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A named pipe (FIFO): listed, never read.
    Fifo,
    /// A UNIX domain socket: listed, never read.
    Socket,
    /// A character or block device node: listed, never read.
    Device,
}

/// One entry of a `file_list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// The entry's name (a path relative to the listed directory in recursive listings).
    pub name: String,
    /// What the entry is.
    #[serde(rename = "type")]
    pub entry_type: FileEntryType,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Last modification, ISO 8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
}

/// `data` of a `file_list` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileListData {
    /// The (virtual) path that was listed.
    pub path: String,
    /// The entries.
    pub entries: Vec<FileEntry>,
    /// Whether the listing was cut short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// The value type of a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ColumnType {
    /// Text.
    String,
    /// A number.
    Number,
    /// A yes/no value.
    Boolean,
    /// A date or timestamp.
    Date,
}

/// Horizontal alignment of a table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ColumnAlign {
    /// Left-aligned.
    Left,
    /// Centred.
    Center,
    /// Right-aligned.
    Right,
}

/// A table column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ColumnDef {
    /// The key of the column's value in each row.
    pub key: String,
    /// The header; the key when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The value type.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub column_type: Option<ColumnType>,
    /// The alignment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<ColumnAlign>,
}

/// `data` of a `table` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TableData {
    /// The columns, in display order.
    pub columns: Vec<ColumnDef>,
    /// The rows, each an object keyed by column key.
    pub rows: Vec<serde_json::Map<String, Value>>,
}

/// `data` of an `image` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageData {
    /// A URL or data URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Base64-encoded image bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base64: Option<String>,
    /// Alternative text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt: Option<String>,
    /// A sandbox path of the image, when it is a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Width in pixels, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// Height in pixels, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
}

/// `data` of a `code_result` result: one process run by `run_code` or `shell`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeResultData {
    /// What ran, e.g. `python3 main.py` or `git status`.
    pub command: String,
    /// Standard output (cut at a size limit, with a marker line saying so).
    pub stdout: String,
    /// Standard error (cut likewise).
    pub stderr: String,
    /// The exit code; absent when a signal ended the process.
    pub exit_code: Option<i32>,
    /// The signal that ended the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// Wall-clock time of the run in milliseconds.
    pub duration_ms: u64,
    /// Whether the wall-clock limit ended the run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// Jail layers that could not be applied (best-effort mode), each with the reason.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weakened: Vec<String>,
    /// What the run changed in the zones and what became of it once it passed the gate: a
    /// `diff` value whose `files` hold one entry per changed path (each with its `change`
    /// line, e.g. `create /work/a.txt (file, 0644, 12 bytes)`). Absent when nothing changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Box<ToolResultValue>>,
    /// What the jail held the run to. Absent in results written before it was recorded, and
    /// in `code_result` data a tool built itself rather than got from a jailed run. Not part
    /// of what the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<RunLimits>,
}

/// The limits one jailed run was started under, as configured: a layer the kernel lacked in
/// best-effort mode is listed in [`CodeResultData::weakened`], not removed from here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunLimits {
    /// The wall-clock limit of the command, in milliseconds.
    pub wall_ms: u64,
    /// CPU seconds per process (`RLIMIT_CPU`).
    pub cpu_secs: u64,
    /// Address space per process, in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Memory of all the run's processes together, in bytes (a memory cgroup, where the host
    /// lets one be made).
    pub run_memory_bytes: u64,
    /// Processes and threads the run's user may have (`RLIMIT_NPROC`).
    pub processes: u64,
    /// The largest file a process may write, in bytes (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// The most bytes kept of stdout, and again of stderr.
    pub output_bytes: u64,
    /// The network the run had: `none` (no network), `internet` (the jail's own network: the
    /// internet, but not the host's services nor private ranges) or `internet_private` (the
    /// same, with some private networks or hosts reachable too). Read it as an open set: a
    /// later version may name another.
    pub network: String,
}

/// A duration for summaries: `41 ms` below a second, else seconds with one decimal (`2.0 s`).
fn format_duration_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{}.{} s", ms / 1000, (ms % 1000) / 100)
    }
}

impl CodeResultData {
    /// How the run ended, with its duration: `exit 0 in 41 ms`, `killed by signal 9 in 2.0 s`,
    /// `timed out after 5.0 s`.
    pub fn status_line(&self) -> String {
        let took = format_duration_ms(self.duration_ms);
        if self.timed_out {
            return format!("timed out after {took}");
        }
        match (self.exit_code, self.signal) {
            (_, Some(signal)) => format!("killed by signal {signal} in {took}"),
            (Some(code), None) => format!("exit {code} in {took}"),
            (None, None) => format!("ended without an exit status in {took}"),
        }
    }
}

fn to_data<T: Serialize>(data: &T) -> Value {
    // Invariant: the data types above serialize to JSON infallibly (string keys, no non-finite
    // floats are produced by our constructors); fall back to null rather than panic.
    serde_json::to_value(data).unwrap_or(Value::Null)
}

impl ToolResultValue {
    /// A result of any kind with no summary or hints.
    pub fn new(kind: impl Into<String>, data: Value) -> Self {
        Self {
            kind: kind.into(),
            data,
            summary: None,
            mime_type: None,
            display: None,
        }
    }

    /// A `text` result.
    pub fn text(content: impl Into<String>) -> Self {
        Self::new(
            "text",
            to_data(&TextData {
                content: content.into(),
            }),
        )
    }

    /// A `text` result rendered as markdown.
    pub fn markdown(content: impl Into<String>) -> Self {
        Self::text(content)
            .with_mime_type("text/markdown")
            .with_display(DisplayHints {
                preferred_view: Some(PreferredView::Markdown),
                ..DisplayHints::default()
            })
    }

    /// A `diff` result; the summary counts added and removed lines (`+N −M lines`), exactly
    /// from the hunks when there are some, else by [`diff_summary`].
    pub fn diff(data: DiffData) -> Self {
        let summary = match &data.hunks {
            Some(hunks) => {
                let lines = hunks.iter().flat_map(|h| h.lines.iter());
                let (added, removed) =
                    lines.fold((0, 0), |(a, r), line| match line.chars().next() {
                        Some('+') => (a + 1, r),
                        Some('-') => (a, r + 1),
                        _ => (a, r),
                    });
                format!("+{added} \u{2212}{removed} lines")
            }
            None => diff_summary(data.original.as_deref().unwrap_or(""), &data.modified),
        };
        Self::new("diff", to_data(&data)).with_summary(summary)
    }

    /// A `file_content` result.
    pub fn file_content(data: FileContentData) -> Self {
        let summary = format!("{} ({} bytes)", data.path, data.size);
        Self::new("file_content", to_data(&data)).with_summary(summary)
    }

    /// A `file_list` result; the summary counts the entries.
    pub fn file_list(data: FileListData) -> Self {
        let n = data.entries.len();
        let noun = if n == 1 { "entry" } else { "entries" };
        let more = if data.truncated == Some(true) {
            " (truncated)"
        } else {
            ""
        };
        let summary = format!("{n} {noun}{more}");
        Self::new("file_list", to_data(&data)).with_summary(summary)
    }

    /// A `table` result; the summary counts the rows.
    pub fn table(data: TableData) -> Self {
        let n = data.rows.len();
        let summary = format!("{n} {}", if n == 1 { "row" } else { "rows" });
        Self::new("table", to_data(&data)).with_summary(summary)
    }

    /// An `image` result with its MIME type (`image/png`, …).
    pub fn image(data: ImageData, mime_type: impl Into<String>) -> Self {
        Self::new("image", to_data(&data)).with_mime_type(mime_type)
    }

    /// A `code_result` result; the summary says how the run ended ([`CodeResultData::status_line`]).
    pub fn code_result(data: CodeResultData) -> Self {
        let summary = data.status_line();
        Self::new("code_result", to_data(&data)).with_summary(summary)
    }

    /// A `structured` result: any JSON, shown as a tree.
    pub fn structured(data: Value) -> Self {
        Self::new("structured", data)
    }

    /// A `json` result (the legacy name of `structured`).
    pub fn json(data: Value) -> Self {
        Self::new("json", data)
    }

    /// Sets the summary.
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the display hints.
    pub fn with_display(mut self, display: DisplayHints) -> Self {
        self.display = Some(display);
        self
    }

    /// Whether `kind` follows the naming rule.
    pub fn has_valid_kind(&self) -> bool {
        crate::kind::is_valid_kind(&self.kind)
    }

    /// Decodes `data` as the typed data of a well-known kind, e.g. `value.data_as::<DiffData>()`.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.data.clone()).ok()
    }

    /// A plain-text rendering for the model: the text of a `text` result, the hunks of a `diff`,
    /// the status and output of a `code_result`, otherwise the summary followed by the data as
    /// JSON.
    pub fn to_model_text(&self) -> String {
        if self.kind == "text"
            && let Some(Value::String(content)) = self.data.get("content")
        {
            return content.clone();
        }
        if self.kind == "diff"
            && let Some(text) = self.diff_model_text()
        {
            return text;
        }
        if self.kind == "code_result"
            && let Some(data) = self.data_as::<CodeResultData>()
        {
            return code_model_text(&data);
        }
        let data = serde_json::to_string(&self.data).unwrap_or_default();
        match &self.summary {
            Some(summary) => format!("{summary}\n{data}"),
            None => data,
        }
    }
}

impl ToolResultValue {
    /// A change as the model needs it: the path, the summary and the changed lines (the hunks),
    /// not both whole texts again. A change to several files, given as `files` (one `DiffData`
    /// each, beside the whole change's fields; git's diff does this), is told file by file.
    /// `None` when the data has no hunks.
    fn diff_model_text(&self) -> Option<String> {
        let data: DiffData = self.data_as()?;
        let summary = self
            .summary
            .as_ref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let files: Vec<DiffData> = match self.data.get("files") {
            Some(files) => serde_json::from_value(files.clone()).unwrap_or_default(),
            None => Vec::new(),
        };
        if files.len() > 1 {
            let mut text = format!("Changes in {}{summary}", data.path);
            for file in files {
                text.push('\n');
                push_file_change(&mut text, &file.path, file.is_new, file.hunks?);
            }
            return Some(text);
        }
        let hunks = data.hunks?;
        let mut text = String::new();
        push_file_change(&mut text, &data.path, data.is_new, hunks);
        text.insert_str(text.find('\n').unwrap_or(text.len()), &summary);
        Some(text)
    }
}

/// `Changed <path>` (or `Created`) and the hunks, for the model.
fn push_file_change(text: &mut String, path: &str, is_new: bool, hunks: Vec<DiffHunk>) {
    text.push_str(if is_new { "Created " } else { "Changed " });
    text.push_str(path);
    for hunk in hunks {
        text.push_str(&format!(
            "\n@@ -{},{} +{},{} @@",
            hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines
        ));
        for line in hunk.lines {
            text.push('\n');
            text.push_str(line.trim_end_matches('\n'));
        }
    }
}

/// A run as the model needs it: the status line, then stdout and stderr, each only when there
/// is something in it.
fn code_model_text(data: &CodeResultData) -> String {
    let mut text = data.status_line();
    let sections = [("stdout", &data.stdout), ("stderr", &data.stderr)];
    if sections.iter().all(|(_, body)| body.is_empty()) {
        text.push_str(", no output");
    }
    for (name, body) in sections {
        if !body.is_empty() {
            text.push_str(&format!("\n--- {name} ---\n"));
            text.push_str(body.strip_suffix('\n').unwrap_or(body));
        }
    }
    if let Some(changes) = &data.changes {
        text.push_str("\n--- changes applied to the zones ---");
        let files = changes.data.get("files").and_then(Value::as_array);
        for line in files.into_iter().flatten().filter_map(|f| f.get("change")) {
            text.push('\n');
            text.push_str(line.as_str().unwrap_or_default());
        }
    }
    text
}

/// `+N −M lines` for a change from `original` to `modified`, counting lines by a simple
/// multiset comparison (exact counts come from the diff producer's hunks).
pub fn diff_summary(original: &str, modified: &str) -> String {
    use std::collections::HashMap;
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for line in original.lines() {
        *counts.entry(line).or_default() -= 1;
    }
    for line in modified.lines() {
        *counts.entry(line).or_default() += 1;
    }
    let added: i64 = counts.values().filter(|c| **c > 0).sum();
    let removed: i64 = -counts.values().filter(|c| **c < 0).sum::<i64>();
    format!("+{added} \u{2212}{removed} lines")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_change_to_several_files_reaches_the_model_file_by_file() {
        let hunk = |line: &str| {
            json!({"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 1,
                   "lines": [line]})
        };
        let value = ToolResultValue::new(
            "diff",
            json!({
                "path": "/repo", "modified": "", "isNew": false,
                "hunks": [hunk("+a"), hunk("+b")],
                "files": [
                    {"path": "/repo/a.txt", "modified": "", "isNew": false, "hunks": [hunk("+a")]},
                    {"path": "/repo/b.txt", "modified": "", "isNew": true, "hunks": [hunk("+b")]},
                ],
            }),
        )
        .with_summary("2 files, +2 \u{2212}0 lines");
        assert_eq!(
            value.to_model_text(),
            "Changes in /repo (2 files, +2 \u{2212}0 lines)\n\
             Changed /repo/a.txt\n@@ -1,0 +1,1 @@\n+a\n\
             Created /repo/b.txt\n@@ -1,0 +1,1 @@\n+b"
        );
    }
}
