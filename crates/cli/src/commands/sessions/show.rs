//! `golem-forge sessions show`: a transcript as text a person reads — a header, then blocks
//! for user inputs, assistant messages, tool calls (status, who decided, the proposed,
//! approved and executed arguments, the result), what happened besides (a turn the user
//! interrupted, an undo and the files it put back), the trace id of each run of the root
//! worker, and the end. The text is the transcript's as
//! it is: the caller cleans it before it reaches a terminal.

use std::collections::HashMap;
use std::fmt::Write;

use golem_core::text::fold;
use golem_llm::Message;
use golem_protocol::{DisplayEvent, InvokedBy, SessionAction, StatusLevel, TurnStatus};
use golem_runtime::runner::INTERRUPTED_RESPONSE;
use golem_session::{SessionStatus, ToolCallRecord, Transcript, TranscriptEntry};
use serde_json::Value;

/// How many characters of arguments and results a line shows.
const VALUE_CHARS: usize = 200;

/// The transcript as text.
pub fn render(transcript: &Transcript) -> String {
    let meta = &transcript.meta;
    let mut out = String::new();
    let _ = writeln!(out, "Session {}", transcript.id);
    let _ = writeln!(
        out,
        "  worker   {} ({})",
        meta.worker,
        meta.worker_path.display()
    );
    let _ = writeln!(out, "  model    {}", meta.model);
    let _ = writeln!(out, "  mode     {}", meta.mode);
    let _ = writeln!(out, "  started  {}", display_time_utc(&meta.started));
    let _ = writeln!(out, "  status   {}", transcript.status());
    if let Some(cost) = cost(transcript) {
        let _ = writeln!(
            out,
            "  cost     {}",
            crate::frontend::render::human_cost(cost)
        );
    }

    let results = tool_results(transcript);
    let mut last_text = "";
    for entry in &transcript.entries {
        match entry {
            TranscriptEntry::Input { content } => block(&mut out, "user", content),
            TranscriptEntry::Message {
                message: Message::Assistant { text, .. },
            } if !text.trim().is_empty() => {
                block(&mut out, "assistant", text);
                last_text = text;
            }
            TranscriptEntry::ToolCall(call) => tool_block(
                &mut out,
                call,
                results.get(call.tool_call_id.as_str()).copied(),
            ),
            TranscriptEntry::Event {
                event: DisplayEvent::Status { level, message },
            } => match level {
                StatusLevel::Warning => block(&mut out, "warning", message),
                StatusLevel::Error => block(&mut out, "error", message),
                StatusLevel::Info => {}
            },
            // Each run of the root worker names its trace (protocol 1.16): what to look up in
            // a tracing backend.
            TranscriptEntry::Event {
                event:
                    DisplayEvent::WorkerStarted {
                        depth: 0,
                        trace_context: Some(context),
                        ..
                    },
            } => {
                if let Some(trace) = context.split('-').nth(1) {
                    block(&mut out, &format!("trace {trace}"), "");
                }
            }
            TranscriptEntry::Event { event } => {
                if let Some((title, body)) = happened(event, last_text) {
                    block(&mut out, title, &body);
                }
            }
            TranscriptEntry::Ended { reason, message } => {
                // The final answer was just shown as the assistant's message.
                let message = message.as_deref().filter(|m| *m != last_text);
                let status = SessionStatus::from(*reason);
                block(&mut out, &format!("ended: {status}"), message.unwrap_or(""));
            }
            TranscriptEntry::Compacted { .. } | TranscriptEntry::Cleared => {
                if let Some((title, text)) = entry.context_change() {
                    block(&mut out, &title, text);
                }
            }
            TranscriptEntry::Meta(_) | TranscriptEntry::Message { .. } => {}
        }
    }
    notes(&mut out, transcript);
    out
}

/// For an event that changed the session outside the conversation, a title and the text under
/// it: a turn the user interrupted (its answer so far is the assistant message before it), and
/// an undo with the files it put back. `last_text` is the assistant's last message shown.
pub(super) fn happened(event: &DisplayEvent, last_text: &str) -> Option<(&'static str, String)> {
    match event {
        DisplayEvent::TurnEnded {
            status, response, ..
        } => match status {
            TurnStatus::Interrupted => {
                let body = match response.as_deref() {
                    Some(summary) if !summary.trim().is_empty() && summary == last_text => {
                        "The answer above is the model's summary of what was done.".to_owned()
                    }
                    Some(text) if !text.trim().is_empty() && text != INTERRUPTED_RESPONSE => {
                        text.to_owned()
                    }
                    Some(_) | None => String::new(),
                };
                Some(("interrupted by the user", body))
            }
            TurnStatus::Completed
            | TurnStatus::Failed
            | TurnStatus::BudgetExceeded
            | TurnStatus::WaitingApproval => None,
        },
        DisplayEvent::ActionResult(result) => match result.action {
            SessionAction::Undo if result.ok => Some(("undo", result.message.clone())),
            SessionAction::Undo
            | SessionAction::SetModel
            | SessionAction::SetApprovalMode
            | SessionAction::NewSession
            | SessionAction::ClearHistory
            | SessionAction::Compact
            | SessionAction::ForgetApprovals
            | SessionAction::Refused => None,
        },
        // The conversation, the calls and the context changes have entries of their own;
        // statuses are shown by the callers (an info one not at all, and an elision is what
        // was an info status before protocol 1.15); the rest is live state.
        DisplayEvent::SessionStarted { .. }
        | DisplayEvent::Message { .. }
        | DisplayEvent::Streaming { .. }
        | DisplayEvent::ToolStarted { .. }
        | DisplayEvent::ToolResult { .. }
        | DisplayEvent::ApprovalRequired(_)
        | DisplayEvent::ApprovalResolved(_)
        | DisplayEvent::ApprovalDeferred { .. }
        | DisplayEvent::InputRequired { .. }
        | DisplayEvent::InputResolved { .. }
        | DisplayEvent::Status { .. }
        | DisplayEvent::ManualToolsAvailable { .. }
        | DisplayEvent::WorkerStarted { .. }
        | DisplayEvent::WorkerProgress(_)
        | DisplayEvent::WorkerFinished { .. }
        | DisplayEvent::Usage { .. }
        | DisplayEvent::ContextCompacted { .. }
        | DisplayEvent::ContextElided { .. }
        | DisplayEvent::SessionStatus(_)
        | DisplayEvent::ApprovalsRemembered { .. }
        | DisplayEvent::SessionEnded { .. } => None,
    }
}

/// `2026-11-22T02:45:12Z` (or with fractions of a second) as `2026-11-22 02:45:12`; anything
/// else as it is.
pub fn display_time(rfc3339: &str) -> String {
    utc_time(rfc3339).unwrap_or_else(|| rfc3339.to_owned())
}

/// `2026-11-22T02:45:12Z` as `2026-11-22 02:45:12 UTC`; anything else as it is.
pub(super) fn display_time_utc(rfc3339: &str) -> String {
    match utc_time(rfc3339) {
        Some(time) => format!("{time} UTC"),
        None => rfc3339.to_owned(),
    }
}

fn utc_time(rfc3339: &str) -> Option<String> {
    let head = rfc3339.get(..19)?;
    let shaped = rfc3339.ends_with('Z')
        && head.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            _ => b.is_ascii_digit(),
        });
    shaped.then(|| format!("{} {}", &head[..10], &head[11..]))
}

/// What the session's model calls with a known price cost (from its `usage` events).
pub(super) fn cost(transcript: &Transcript) -> Option<f64> {
    transcript
        .entries
        .iter()
        .filter_map(|entry| match entry {
            TranscriptEntry::Event {
                event: DisplayEvent::Usage { cost, .. },
            } => *cost,
            _ => None,
        })
        .reduce(|a, b| a + b)
}

/// The text sent back to the model for each tool call, by call id.
pub(super) fn tool_results(transcript: &Transcript) -> HashMap<&str, &str> {
    let mut results = HashMap::new();
    for entry in &transcript.entries {
        if let TranscriptEntry::Message {
            message: Message::Tool { results: batch },
        } = entry
        {
            for result in batch {
                results.insert(result.tool_call_id.as_str(), result.content.as_str());
            }
        }
    }
    results
}

/// A blank line, a title, and `body` indented.
fn block(out: &mut String, title: &str, body: &str) {
    let _ = writeln!(out, "\n{title}");
    for line in body.lines() {
        let _ = writeln!(out, "  {line}");
    }
}

fn tool_block(out: &mut String, call: &ToolCallRecord, result: Option<&str>) {
    let mut title = format!("tool {}: {}", call.tool_name, json_name(&call.status));
    if let Some(decided_by) = call.decided_by {
        let _ = write!(
            title,
            ", decided by {}",
            json_name(&decided_by).replace('_', " ")
        );
    }
    if call.invoked_by == InvokedBy::User {
        title.push_str(", invoked by the user");
    }
    let _ = writeln!(out, "\n{title}");
    let stages = arg_stages(call);
    if let [(_, args)] = stages.as_slice() {
        line(out, "args", &args.to_string());
    } else {
        for (label, args) in stages {
            line(out, label, &args.to_string());
        }
    }
    match (&call.error, result) {
        (Some(error), _) => line(out, "error", &format!("{}: {}", error.code, error.message)),
        (None, Some(result)) => line(out, "result", result),
        (None, None) => {}
    }
}

/// The call's arguments as proposed, then each later stage (`approved`, `executed`) that
/// changed them: one stage when they never changed.
pub(super) fn arg_stages(call: &ToolCallRecord) -> Vec<(&'static str, &Value)> {
    let mut stages = vec![("proposed", &call.proposed_args)];
    for (label, args) in [
        ("approved", call.approved_args.as_ref()),
        ("executed", call.executed_args.as_ref()),
    ] {
        if let Some(args) = args
            && stages.last().is_none_or(|(_, last)| *last != args)
        {
            stages.push((label, args));
        }
    }
    stages
}

/// A serde enum's wire name (`session_memory`, `success`, …).
pub(super) fn json_name(value: &impl serde::Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(name)) => name,
        Ok(other) => other.to_string(),
        Err(_) => "?".to_owned(),
    }
}

/// One labelled line, folded to one line of at most [`VALUE_CHARS`] characters.
fn line(out: &mut String, label: &str, value: &str) {
    let flat = value.split_whitespace().collect::<Vec<_>>().join(" ");
    let _ = writeln!(out, "  {label:<9} {}", fold(&flat, VALUE_CHARS));
}

/// What the reader should know about damage or a missing end.
fn notes(out: &mut String, transcript: &Transcript) {
    let cut: Vec<String> = transcript
        .skipped_lines
        .iter()
        .map(|n| n.to_string())
        .collect();
    if transcript.partial_tail {
        let _ = writeln!(
            out,
            "\n(the last entry was cut off mid-write: the process was killed)"
        );
    }
    let middle = if transcript.partial_tail {
        cut.len().saturating_sub(1)
    } else {
        cut.len()
    };
    if middle > 0 {
        let _ = writeln!(
            out,
            "\n(skipped entries cut off by a killed process at line {})",
            cut[..middle].join(", ")
        );
    }
    if transcript.status() == SessionStatus::Unfinished {
        let _ = writeln!(
            out,
            "\n(no end recorded: the process was killed or is still running)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::display_time;

    #[test]
    fn times_are_shown_without_the_t_and_z() {
        assert_eq!(display_time("2026-11-22T02:45:12Z"), "2026-11-22 02:45:12");
        assert_eq!(
            display_time("2026-11-22T02:45:12.123Z"),
            "2026-11-22 02:45:12"
        );
        for other in [
            "",
            "yesterday",
            "2026-11-22T02:45:12+01:00",
            "2026-11-22 02:45:12Z",
            "ééééééééééééééééééééZ",
        ] {
            assert_eq!(display_time(other), other);
        }
    }
}
