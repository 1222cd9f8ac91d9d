//! `golem-forge sessions export`: a transcript as a Markdown report (a header, then each user
//! input, assistant answer, tool call with its status, who decided, its arguments and its
//! result's summary, a turn the user interrupted, an undo with the files it put back, and the
//! end) or as one JSON document (`{id, status, meta, entries}`) whose
//! `meta` and `entries` read back into the same transcript entries (its spans as OTLP/JSON are
//! `otlp.rs`). The Markdown is the
//! transcript's text as it is: the caller cleans it before it reaches a terminal.

use std::fmt::Write;

use golem_core::text::fold;
use golem_llm::Message;
use golem_protocol::{DisplayEvent, InvokedBy, StatusLevel};
use golem_session::{SessionMeta, SessionStatus, ToolCallRecord, Transcript, TranscriptEntry};
use serde::Serialize;
use serde_json::Value;

use super::show::{arg_stages, cost, display_time_utc, happened, json_name, tool_results};

/// How many characters of a tool result the report keeps.
const RESULT_CHARS: usize = 1000;

/// How many lines of a tool result the report keeps.
const RESULT_LINES: usize = 20;

/// What `sessions export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A report to read (Markdown)
    Markdown,
    /// One JSON document: the session's meta and its entries, as stored
    Json,
    /// The session's spans as OTLP/JSON (an `ExportTraceServiceRequest`), as tracing would
    /// have exported them
    OtlpJson,
}

/// The JSON export: the transcript's meta and entries as stored, with its id and status.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExportDocument<'a> {
    /// The session's id.
    id: &'a str,
    /// How it ended, as far as the transcript tells.
    status: SessionStatus,
    /// The first line of the transcript.
    meta: &'a SessionMeta,
    /// Every entry after it, in order.
    entries: &'a [TranscriptEntry],
}

/// The transcript as one pretty-printed JSON document, ending in a newline. U+2028, U+2029 and
/// U+0085 are escaped like in every JSON the program writes.
pub fn json(transcript: &Transcript) -> Result<String, serde_json::Error> {
    let document = ExportDocument {
        id: &transcript.id,
        status: transcript.status(),
        meta: &transcript.meta,
        entries: &transcript.entries,
    };
    let text = serde_json::to_string_pretty(&document)?;
    Ok(format!("{}\n", golem_protocol::escape_line_breaks(text)))
}

/// The transcript as a Markdown report.
pub fn markdown(transcript: &Transcript) -> String {
    let meta = &transcript.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# Session {}\n", transcript.id);
    let _ = writeln!(
        out,
        "- **Worker:** {} ({})",
        meta.worker,
        code(&meta.worker_path.display().to_string())
    );
    let _ = writeln!(out, "- **Model:** {}", code(&meta.model));
    let _ = writeln!(out, "- **Mode:** {}", meta.mode);
    let _ = writeln!(out, "- **Started:** {}", display_time_utc(&meta.started));
    let _ = writeln!(out, "- **Status:** {}", transcript.status());
    if let Some(cost) = cost(transcript) {
        let _ = writeln!(
            out,
            "- **Cost:** {}",
            crate::frontend::render::human_cost(cost)
        );
    }

    let results = tool_results(transcript);
    let mut last_text = "";
    let mut turn = 0;
    for entry in &transcript.entries {
        match entry {
            TranscriptEntry::Input { content } => {
                turn += 1;
                let _ = writeln!(out, "\n## Turn {turn}: user\n");
                quote(&mut out, content);
            }
            TranscriptEntry::Message {
                message: Message::Assistant { text, .. },
            } if !text.trim().is_empty() => {
                let _ = writeln!(out, "\n### Assistant\n\n{}", text.trim_end());
                last_text = text;
            }
            TranscriptEntry::ToolCall(call) => tool_call(
                &mut out,
                call,
                results.get(call.tool_call_id.as_str()).copied(),
            ),
            TranscriptEntry::Event {
                event: DisplayEvent::Status { level, message },
            } => match level {
                StatusLevel::Warning => {
                    let _ = writeln!(out, "\n> **Warning:** {}", one_line(message));
                }
                StatusLevel::Error => {
                    let _ = writeln!(out, "\n> **Error:** {}", one_line(message));
                }
                StatusLevel::Info => {}
            },
            TranscriptEntry::Event { event } => {
                if let Some((title, body)) = happened(event, last_text) {
                    let title = title[..1].to_uppercase() + &title[1..];
                    let _ = writeln!(out, "\n### {title}");
                    if !body.is_empty() {
                        out.push('\n');
                        quote(&mut out, &body);
                    }
                }
            }
            TranscriptEntry::Ended { reason, message } => {
                let status = SessionStatus::from(*reason);
                let _ = writeln!(out, "\n## Ended: {status}");
                // The final answer was just shown as the assistant's message.
                if let Some(message) = message.as_deref().filter(|m| *m != last_text) {
                    out.push('\n');
                    quote(&mut out, message);
                }
            }
            TranscriptEntry::Compacted { .. } | TranscriptEntry::Cleared => {
                if let Some((title, text)) = entry.context_change() {
                    let _ = writeln!(out, "\n### Context {title}\n");
                    quote(&mut out, text);
                }
            }
            TranscriptEntry::Meta(_) | TranscriptEntry::Message { .. } => {}
        }
    }
    notes(&mut out, transcript);
    out
}

/// A tool call: its title with the status, who decided, the arguments of each stage that
/// changed them, and the result's summary or the error.
fn tool_call(out: &mut String, call: &ToolCallRecord, result: Option<&str>) {
    let _ = writeln!(
        out,
        "\n#### Tool {}: {}\n",
        code(&call.tool_name),
        json_name(&call.status)
    );
    let decided = match call.decided_by {
        Some(decided_by) => json_name(&decided_by).replace('_', " "),
        None => "nobody (it did not reach the approval gate)".to_owned(),
    };
    let _ = write!(out, "- **Decided by:** {decided}");
    if call.invoked_by == InvokedBy::User {
        out.push_str("\n- **Invoked by:** the user");
    }
    let _ = writeln!(out, "\n- **Took:** {} ms", call.duration_ms);
    let stages = arg_stages(call);
    for (label, args) in &stages {
        let title = match (stages.len(), *label) {
            (1, _) => "Arguments",
            (_, "approved") => "Approved arguments",
            (_, "executed") => "Executed arguments",
            _ => "Proposed arguments",
        };
        let _ = writeln!(out, "\n{title}:\n");
        fence(out, "json", &pretty(args));
    }
    let summary = call
        .value
        .as_ref()
        .and_then(|value| value.summary.as_deref());
    match (&call.error, summary, result) {
        (Some(error), _, _) => {
            let _ = writeln!(out, "\nError {}:\n", code(&error.code.to_string()));
            fence(out, "text", &error.message);
        }
        (None, Some(text), _) | (None, None, Some(text)) => {
            let _ = writeln!(out, "\nResult:\n");
            fence(out, "text", &shorten(text));
        }
        (None, None, None) => {}
    }
}

/// Arguments as indented JSON (compact when they cannot be printed).
fn pretty(args: &Value) -> String {
    serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string())
}

/// At most [`RESULT_LINES`] lines and [`RESULT_CHARS`] characters of `text`.
fn shorten(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = lines
        .iter()
        .take(RESULT_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("\n");
    if lines.len() > RESULT_LINES {
        let _ = write!(kept, "\n… ({} more lines)", lines.len() - RESULT_LINES);
    }
    fold(&kept, RESULT_CHARS)
}

/// `text` on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` as a block quote (an empty line stays part of the quote).
fn quote(out: &mut String, text: &str) {
    for line in text.trim_end().lines() {
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            let _ = writeln!(out, "> {line}");
        }
    }
}

/// `text` as inline code, with enough backticks around it that none inside ends it.
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

/// `text` in a fenced code block of `lang`, fenced with more backticks than it holds in a row.
fn fence(out: &mut String, lang: &str, text: &str) {
    let ticks = "`".repeat((longest_backtick_run(text) + 1).max(3));
    let _ = writeln!(
        out,
        "{ticks}{lang}\n{}\n{ticks}",
        text.trim_end_matches('\n')
    );
}

fn longest_backtick_run(text: &str) -> usize {
    let (mut longest, mut run) = (0, 0);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// What the reader should know about damage or a missing end.
fn notes(out: &mut String, transcript: &Transcript) {
    if !transcript.skipped_lines.is_empty() {
        let lines: Vec<String> = transcript
            .skipped_lines
            .iter()
            .map(ToString::to_string)
            .collect();
        let _ = writeln!(
            out,
            "\n_Entries cut off by a killed process were skipped (line {})._",
            lines.join(", ")
        );
    }
    if transcript.status() == SessionStatus::Unfinished {
        let _ = writeln!(
            out,
            "\n_No end recorded: the process was killed or is still running._"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{code, fence};

    #[test]
    fn code_and_fences_outlast_the_backticks_inside() {
        assert_eq!(code("a"), "`a`");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`a"), "`` `a ``");
        let mut out = String::new();
        fence(&mut out, "text", "x ```` y");
        assert_eq!(out, "`````text\nx ```` y\n`````\n");
    }
}
