//! A tool's result as the markdown an editor shows in the call's content: a file's text in a
//! fenced block with its language, a listing as a list, a table as a table, a run as its status
//! with its output, an error as its message. What the model reads is not shown here; the whole
//! value stays the call's `rawOutput`.

use golem_protocol::ToolResultValue;
use golem_protocol::result::{
    CodeResultData, FileContentData, FileEntryType, FileListData, TableData,
};
use serde_json::Value;

/// The markdown of `value` (a `diff` is rendered by the caller as diff content); empty when
/// there is nothing to show.
pub fn markdown(value: &ToolResultValue) -> String {
    let rendered = match value.kind.as_str() {
        "text" => value
            .data
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned),
        "file_content" => value
            .data_as::<FileContentData>()
            .map(|data| file_content(value, &data)),
        "file_list" => value.data_as::<FileListData>().map(|data| file_list(&data)),
        "table" => value.data_as::<TableData>().map(|data| table(&data)),
        "code_result" => value.data_as::<CodeResultData>().map(|data| code(&data)),
        // A change the caller could not show as diff content (no whole texts): its hunks.
        "diff" if value.data.get("hunks").is_some() => Some(fenced("diff", &value.to_model_text())),
        "tool_error" => value
            .data
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned),
        _ => None,
    };
    rendered.unwrap_or_else(|| fallback(value))
}

/// A value of a kind without a view of its own (`structured`, a namespaced kind) or whose data
/// does not have its kind's shape: its summary, then its data as a JSON block.
fn fallback(value: &ToolResultValue) -> String {
    let data = match &value.data {
        Value::Null => String::new(),
        Value::String(text) => text.clone(),
        other => fenced(
            "json",
            &serde_json::to_string_pretty(other).unwrap_or_default(),
        ),
    };
    match (&value.summary, data.is_empty()) {
        (Some(summary), true) => summary.clone(),
        (Some(summary), false) => format!("{summary}\n\n{data}"),
        (None, _) => data,
    }
}

/// `text` in a fenced block with `info`; the fence is longer than any run of backticks in it.
pub fn fenced(info: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{info}\n{body}\n{fence}")
}

/// The info string of a file's block: the language the tool named, else the path's extension
/// (`txt`, `csv`, …), else `text`.
pub fn language(value: &ToolResultValue, path: &str) -> String {
    if let Some(language) = value.display.as_ref().and_then(|d| d.language.as_deref()) {
        return language.to_owned();
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext))
            if !stem.is_empty()
                && !ext.is_empty()
                && ext.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            ext.to_ascii_lowercase()
        }
        Some(_) | None => "text".to_owned(),
    }
}

/// A file's text in a block; a binary file (base64) by its summary only.
fn file_content(value: &ToolResultValue, data: &FileContentData) -> String {
    if data.encoding.as_deref() == Some("base64") {
        return value
            .summary
            .clone()
            .unwrap_or_else(|| format!("{} ({} bytes, binary)", data.path, data.size));
    }
    fenced(&language(value, &data.path), &data.content)
}

/// A listing as a markdown list: directories end with `/`, files show their size.
fn file_list(data: &FileListData) -> String {
    if data.entries.is_empty() {
        return format!("`{}` is empty.", data.path);
    }
    let mut lines: Vec<String> = data
        .entries
        .iter()
        .map(|entry| {
            let what = match entry.entry_type {
                FileEntryType::Directory => return format!("- `{}/`", entry.name),
                FileEntryType::File => None,
                FileEntryType::Symlink => Some("symlink"),
                FileEntryType::Fifo => Some("named pipe"),
                FileEntryType::Socket => Some("socket"),
                FileEntryType::Device => Some("device"),
            };
            let size = entry.size.map(|s| format!("{s} bytes"));
            let notes: Vec<String> = what.map(str::to_owned).into_iter().chain(size).collect();
            if notes.is_empty() {
                format!("- `{}`", entry.name)
            } else {
                format!("- `{}` ({})", entry.name, notes.join(", "))
            }
        })
        .collect();
    if data.truncated == Some(true) {
        lines.push("- … (the listing was cut short)".to_owned());
    }
    lines.join("\n")
}

/// A table cell: a string as is, anything else as JSON; pipes escaped, lines joined.
fn cell(value: Option<&Value>) -> String {
    let text = match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A table as a markdown table, its columns in order.
fn table(data: &TableData) -> String {
    use golem_protocol::result::ColumnAlign;
    if data.columns.is_empty() {
        return format!("{} rows", data.rows.len());
    }
    let header: Vec<String> = data
        .columns
        .iter()
        .map(|c| {
            cell(Some(&Value::String(
                c.label.clone().unwrap_or_else(|| c.key.clone()),
            )))
        })
        .collect();
    let rule: Vec<&str> = data
        .columns
        .iter()
        .map(|c| match c.align {
            Some(ColumnAlign::Left) => ":---",
            Some(ColumnAlign::Center) => ":---:",
            Some(ColumnAlign::Right) => "---:",
            None => "---",
        })
        .collect();
    let mut lines = vec![
        format!("| {} |", header.join(" | ")),
        format!("| {} |", rule.join(" | ")),
    ];
    for row in &data.rows {
        let cells: Vec<String> = data.columns.iter().map(|c| cell(row.get(&c.key))).collect();
        lines.push(format!("| {} |", cells.join(" | ")));
    }
    lines.join("\n")
}

/// A run: what ran and how it ended, then its output and errors in blocks.
fn code(data: &CodeResultData) -> String {
    let mut text = format!("`{}`: {}", data.command, data.status_line());
    for (name, body) in [("output", &data.stdout), ("errors", &data.stderr)] {
        if !body.is_empty() {
            text.push_str(&format!("\n\n{name}:\n{}", fenced("text", body)));
        }
    }
    if data.stdout.is_empty() && data.stderr.is_empty() {
        text.push_str(", no output");
    }
    text
}

#[cfg(test)]
mod tests {
    use golem_protocol::result::{ColumnDef, FileEntry};
    use golem_protocol::{DisplayHints, ToolError, ToolErrorCode};
    use serde_json::json;

    use super::*;

    #[test]
    fn a_file_is_its_text_in_a_block_with_its_language_and_no_json() {
        let value = ToolResultValue::file_content(FileContentData {
            path: "/input/about.txt".into(),
            content: "one\ntwo\n".into(),
            size: 8,
            encoding: Some("utf-8".into()),
        })
        .with_summary("/input/about.txt (8 bytes, 2 lines)");
        assert_eq!(markdown(&value), "```txt\none\ntwo\n```");
        let rust = ToolResultValue::file_content(FileContentData {
            path: "/src/main.rs".into(),
            content: "fn main() {}".into(),
            size: 12,
            encoding: None,
        })
        .with_display(DisplayHints {
            language: Some("rust".into()),
            ..DisplayHints::default()
        });
        assert_eq!(markdown(&rust), "```rust\nfn main() {}\n```");
        // A file that holds a fence gets a longer one; a name without extension is `text`.
        let fences = ToolResultValue::file_content(FileContentData {
            path: "/notes/README".into(),
            content: "```sh\nls\n```\n".into(),
            size: 13,
            encoding: None,
        });
        assert_eq!(markdown(&fences), "````text\n```sh\nls\n```\n````");
    }

    #[test]
    fn listings_and_tables_are_markdown() {
        let list = ToolResultValue::file_list(FileListData {
            path: "/out".into(),
            entries: vec![
                FileEntry {
                    name: "docs".into(),
                    entry_type: FileEntryType::Directory,
                    size: None,
                    modified: None,
                },
                FileEntry {
                    name: "a.txt".into(),
                    entry_type: FileEntryType::File,
                    size: Some(3),
                    modified: None,
                },
            ],
            truncated: Some(true),
        });
        assert_eq!(
            markdown(&list),
            "- `docs/`\n- `a.txt` (3 bytes)\n- … (the listing was cut short)"
        );
        let table = ToolResultValue::table(TableData {
            columns: vec![
                ColumnDef {
                    key: "name".into(),
                    label: Some("Name".into()),
                    column_type: None,
                    align: None,
                },
                ColumnDef {
                    key: "n".into(),
                    label: None,
                    column_type: None,
                    align: Some(golem_protocol::result::ColumnAlign::Right),
                },
            ],
            rows: vec![
                json!({"name": "a|b", "n": 1}).as_object().unwrap().clone(),
                json!({"name": "c"}).as_object().unwrap().clone(),
            ],
        });
        assert_eq!(
            markdown(&table),
            "| Name | n |\n| --- | ---: |\n| a\\|b | 1 |\n| c |  |"
        );
    }

    #[test]
    fn an_error_is_its_sentence_and_a_run_its_status_and_output() {
        let error = ToolError::new(
            ToolErrorCode::Denied,
            "The user denied write_file: rejected in the editor",
        )
        .to_result_value();
        assert_eq!(
            markdown(&error),
            "The user denied write_file: rejected in the editor"
        );
        let run = ToolResultValue::code_result(CodeResultData {
            command: "python3 main.py".into(),
            stdout: "hi\n".into(),
            stderr: String::new(),
            exit_code: Some(0),
            signal: None,
            duration_ms: 41,
            timed_out: false,
            weakened: Vec::new(),
            changes: None,
            limits: None,
        });
        assert_eq!(
            markdown(&run),
            "`python3 main.py`: exit 0 in 41 ms\n\noutput:\n```text\nhi\n```"
        );
        // A kind with no view: its summary and its data as a JSON block.
        let custom =
            ToolResultValue::new("git.status", json!({"clean": true})).with_summary("clean");
        assert_eq!(
            markdown(&custom),
            "clean\n\n```json\n{\n  \"clean\": true\n}\n```"
        );
    }
}
