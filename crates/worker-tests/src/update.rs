//! `golem-forge test --update`: what a model replied in a run, read back from the run's
//! recording as the test file's `model:` replies, and written into the case's `model:` block
//! of the file. The file is edited as text, not re-serialised, so that comments, quoting and
//! layout outside the block stay byte for byte: the case is found by its place in the
//! `cases:` list (block style), its `model:` key by indentation, and the new block is written
//! at that key's column (inserted at the end of the case when it has none). The result is
//! parsed again before it is written (a temporary file beside it, then renamed).

use std::io::Write;
use std::path::Path;

use golem_llm::ResponseAssembler;
use golem_llm::record::Exchange;
use serde_json::Value;

use crate::error::TestError;
use crate::file::{Reply, ReplyCall, parse_test_file};

/// Why a run's recording does not give the test file's replies.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The recording cannot be read.
    #[error("cannot read the run's recording: {0}")]
    Read(#[from] std::io::Error),
    /// A line of it is not an exchange.
    #[error("cannot read the run's recording: {0}")]
    Parse(#[from] serde_json::Error),
    /// A reply cannot be written as a scripted call.
    #[error("the model called {tool} with arguments that are not a JSON object: {arguments}")]
    NotAnObject {
        /// The tool called.
        tool: String,
        /// The arguments as the model sent them.
        arguments: String,
    },
}

/// The replies of the recording at `path` (a header line, then one exchange a line), one per
/// complete model response, in order.
pub fn recorded_replies(path: &Path) -> Result<Vec<Reply>, RecordingError> {
    let text = std::fs::read_to_string(path)?;
    let mut replies = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let exchange: Exchange = serde_json::from_str(line)?;
        let mut assembler = ResponseAssembler::new();
        for event in &exchange.events {
            assembler.push(event);
        }
        let response = assembler.finish();
        let mut tool_calls = Vec::new();
        for call in &response.tool_calls {
            let args = match call.parsed_arguments() {
                Ok(args @ Value::Object(_)) => args,
                Ok(_) | Err(_) => {
                    return Err(RecordingError::NotAnObject {
                        tool: call.name.clone(),
                        arguments: call.arguments.clone(),
                    });
                }
            };
            tool_calls.push(ReplyCall {
                name: call.name.clone(),
                args,
            });
        }
        let text = (!response.text.is_empty() || tool_calls.is_empty()).then_some(response.text);
        replies.push(Reply { text, tool_calls });
    }
    Ok(replies)
}

/// Why a case's `model:` block cannot be rewritten.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpdateError {
    /// The file has no block-style `cases:` list with that many items.
    #[error(
        "case {index} is not an item of a block-style `cases:` list (write the cases one per `- name:` item)"
    )]
    NoCase {
        /// The case's index.
        index: usize,
    },
    /// The case is written in flow style (`- { name: … }`).
    #[error(
        "case {index} is written as a flow mapping; write it as a block (`- name: …`) to update it"
    )]
    FlowCase {
        /// The case's index.
        index: usize,
    },
}

/// One physical line of the file: where it starts and ends (its terminator excluded).
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    end: usize,
}

fn lines_of(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let body = piece.strip_suffix('\n').unwrap_or(piece);
        let body = body.strip_suffix('\r').unwrap_or(body);
        lines.push(Line {
            start,
            end: start + body.len(),
        });
        start += piece.len();
    }
    lines
}

/// The column of a line's first character that is not a space (None for blank and comment
/// lines, which belong to no block by themselves).
fn content_column(body: &str) -> Option<usize> {
    let trimmed = body.trim_start_matches(' ');
    if trimmed.is_empty() || trimmed.starts_with('#') {
        None
    } else {
        Some(body.len() - trimmed.len())
    }
}

/// `text` with the `model:` block of case `index` (its place in `cases:`) replaced by
/// `replies`, or one inserted at the end of the case when it has none.
pub fn replace_model_block(
    text: &str,
    index: usize,
    replies: &[Reply],
) -> Result<String, UpdateError> {
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let lines = lines_of(text);
    let body = |line: &Line| {
        let body = &text[line.start..line.end];
        // A byte order mark is not indentation.
        if line.start == 0 {
            body.strip_prefix('\u{feff}').unwrap_or(body)
        } else {
            body
        }
    };
    let cases_at = lines
        .iter()
        .position(|line| {
            let b = body(line);
            content_column(b) == Some(0)
                && b.strip_prefix("cases:")
                    .is_some_and(|rest| rest.trim().is_empty() || rest.trim().starts_with('#'))
        })
        .ok_or(UpdateError::NoCase { index })?;
    // The items of the list: lines whose first content is `-` at the list's column.
    let mut item_column = None;
    let mut items = Vec::new();
    for (at, line) in lines.iter().enumerate().skip(cases_at + 1) {
        let b = body(line);
        let Some(column) = content_column(b) else {
            continue;
        };
        let is_item = b[column..].starts_with("- ") || &b[column..] == "-";
        // The next top-level key ends the list (whose items may be at column 0 too).
        if column == 0 && !is_item {
            break;
        }
        match item_column {
            None if is_item => {
                item_column = Some(column);
                items.push(at);
            }
            Some(c) if column == c && is_item => items.push(at),
            Some(c) if column < c => break,
            _ => {}
        }
    }
    let first = *items.get(index).ok_or(UpdateError::NoCase { index })?;
    let item_column = item_column.ok_or(UpdateError::NoCase { index })?;
    // The case runs to the line before the next item (or the list's end); its last content
    // line ends it, so that comments and blank lines after it stay where they are.
    let mut last = first;
    for (at, line) in lines.iter().enumerate().skip(first + 1) {
        match content_column(body(line)) {
            None => {}
            Some(column) if column <= item_column => break,
            Some(_) => last = at,
        }
    }
    let item_body = body(&lines[first]);
    let after_dash = &item_body[item_column + 1..];
    let key_column =
        item_column + 1 + (after_dash.len() - after_dash.trim_start_matches(' ').len());
    if item_body[key_column..].starts_with('{') {
        return Err(UpdateError::FlowCase { index });
    }
    let is_model_key = |b: &str| {
        b.get(key_column..)
            .and_then(|rest| rest.strip_prefix("model:"))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '#']))
    };
    let key_line = (first..=last).find(|&at| {
        let b = body(&lines[at]);
        let at_key = at == first || content_column(b) == Some(key_column);
        at_key && is_model_key(b)
    });
    let block = render_block(replies, key_column, newline);
    Ok(match key_line {
        Some(at) => {
            // The block: the key's line and the lines below it indented deeper, to its last
            // content line.
            let mut end = at;
            for (n, line) in lines.iter().enumerate().take(last + 1).skip(at + 1) {
                match content_column(body(line)) {
                    None => {}
                    Some(column) if column <= key_column => break,
                    Some(_) => end = n,
                }
            }
            // On the item's own line the `- ` before the key stays.
            let from = lines[at].end - body(&lines[at]).len() + key_column;
            let to = lines[end].end;
            let block = block.trim_start_matches(' ').trim_end_matches(newline);
            format!("{}{block}{}", &text[..from], &text[to..])
        }
        None => {
            let to = lines[last].end;
            let block = block.trim_end_matches(newline);
            format!("{}{newline}{block}{}", &text[..to], &text[to..])
        }
    })
}

/// `model:` at `column` and the replies below it, each line ending in `newline`. Texts and
/// arguments are written as JSON, which YAML reads as the same values.
fn render_block(replies: &[Reply], column: usize, newline: &str) -> String {
    let pad = " ".repeat(column);
    let json = |value: &Value| serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    if replies.is_empty() {
        return format!("{pad}model: []{newline}");
    }
    let mut out = format!("{pad}model:{newline}");
    for reply in replies {
        let mut lead = format!("{pad}  - ");
        if let Some(text) = &reply.text {
            out.push_str(&format!(
                "{lead}text: {}{newline}",
                json(&Value::String(text.clone()))
            ));
            lead = format!("{pad}    ");
        }
        if !reply.tool_calls.is_empty() {
            out.push_str(&format!("{lead}tool_calls:{newline}"));
            for call in &reply.tool_calls {
                out.push_str(&format!(
                    "{pad}      - name: {}{newline}{pad}        args: {}{newline}",
                    json(&Value::String(call.name.clone())),
                    json(&call.args)
                ));
            }
        }
    }
    out
}

/// Writes `replies` (by case index) into the test file at `path`, checked by parsing the new
/// text with the worker's `zones` first; written through a temporary file and a rename.
pub fn write_replies(
    path: &Path,
    zones: &[String],
    replies: &[(usize, Vec<Reply>)],
) -> Result<(), TestError> {
    let invalid = |message: String| TestError::invalid(path, 1, None, message);
    let read = |source| TestError::Read {
        path: path.to_owned(),
        source,
    };
    let mut text = std::fs::read_to_string(path).map_err(read)?;
    for (index, case_replies) in replies {
        text = replace_model_block(&text, *index, case_replies)
            .map_err(|e| invalid(format!("cannot update its `model:` replies: {e}")))?;
    }
    let file = parse_test_file(&text, path, zones).map_err(|e| {
        invalid(format!(
            "the updated file would not read back ({e}); it was left as it was"
        ))
    })?;
    for (index, case_replies) in replies {
        let written = file.cases.get(*index).map(|case| &case.model);
        if written != Some(case_replies) {
            return Err(invalid(format!(
                "the updated replies of case {index} would not read back as written; the file \
                 was left as it was"
            )));
        }
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(read)?;
    temp.write_all(text.as_bytes()).map_err(read)?;
    temp.as_file().sync_all().map_err(read)?;
    temp.persist(path).map_err(|e| read(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn replies() -> Vec<Reply> {
        vec![
            Reply {
                text: None,
                tool_calls: vec![ReplyCall {
                    name: "write_file".into(),
                    args: json!({"path": "/notes/a.md", "content": "x \"q\"\n"}),
                }],
            },
            Reply {
                text: Some("Done: #1 'ok'".into()),
                tool_calls: Vec::new(),
            },
        ]
    }

    fn reread(text: &str) -> Vec<Vec<Reply>> {
        parse_test_file(text, Path::new("t.yaml"), &["notes".to_owned()])
            .unwrap()
            .cases
            .into_iter()
            .map(|c| c.model)
            .collect()
    }

    #[test]
    fn replaces_only_the_block_of_the_case() {
        let text = "# top\ncases:\n  # first\n  - name: a\n    model:   # old\n      - text: old\n\n      # inside\n      - text: older\n    # after\n    expect: { answer: { contains: x } }\n  -   name: b\n      model: [{ text: keep }]\n";
        let out = replace_model_block(text, 0, &replies()).unwrap();
        assert!(out.starts_with("# top\ncases:\n  # first\n  - name: a\n    model:\n"));
        assert!(out.ends_with("    # after\n    expect: { answer: { contains: x } }\n  -   name: b\n      model: [{ text: keep }]\n"), "{out}");
        assert_eq!(reread(&out)[0], replies());
        let out = replace_model_block(text, 1, &replies()).unwrap();
        assert!(out.starts_with(&text[..text.find("  -   name: b").unwrap()]));
        assert!(
            out.contains("  -   name: b\n      model:\n        - tool_calls:"),
            "{out}"
        );
        assert_eq!(reread(&out)[1], replies());
    }

    #[test]
    fn inserts_a_block_and_keeps_crlf_and_a_first_key_model() {
        let text = "cases:\r\n- name: a\r\n  input: hi\r\n\r\n# end\r\n";
        let out = replace_model_block(text, 0, &replies()).unwrap();
        assert!(
            out.starts_with("cases:\r\n- name: a\r\n  input: hi\r\n  model:\r\n"),
            "{out}"
        );
        assert!(out.ends_with("\r\n\r\n# end\r\n"), "{out}");
        assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
        assert_eq!(reread(&out)[0], replies());
        let text = "cases:\n  - model:\n      - text: old\n    name: a\n";
        let out = replace_model_block(text, 0, &replies()).unwrap();
        assert!(
            out.starts_with("cases:\n  - model:\n      - tool_calls:"),
            "{out}"
        );
        assert!(out.ends_with("    name: a\n"), "{out}");
        assert_eq!(reread(&out)[0], replies());
    }

    #[test]
    fn flow_cases_and_missing_cases_are_errors() {
        assert_eq!(
            replace_model_block("cases:\n  - { name: a }\n", 0, &[]),
            Err(UpdateError::FlowCase { index: 0 })
        );
        assert_eq!(
            replace_model_block("cases:\n  - name: a\n", 1, &[]),
            Err(UpdateError::NoCase { index: 1 })
        );
        assert_eq!(
            replace_model_block("cases: [{ name: a }]\n", 0, &[]),
            Err(UpdateError::NoCase { index: 0 })
        );
    }
}
