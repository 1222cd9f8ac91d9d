//! Where a resumed session picks up. Normally that is the conversation as recorded
//! ([`Transcript::messages`]). When the process was killed while an approval was waiting, the
//! calls of that last turn that never got past the gate are asked again instead of being
//! marked interrupted: the history stops at the assistant message that made them, the calls
//! settled before the kill keep their recorded results, and the rest run through the gate
//! again before the new input. A call that was already running when the process died is never
//! re-run (it may have done part of its work); it is marked interrupted as before. A session
//! that ended parked (approval mode `defer`) resumes the same way: its parked calls are the
//! ones waiting at the gate.

use std::collections::HashSet;

use golem_llm::{Message, ModelToolCall, ToolResultMessage};
use golem_protocol::{DisplayEvent, ToolStatus};

use super::entry::{ToolCallRecord, TranscriptEntry};
use super::transcript::{Transcript, conversation};

/// What a resumed session starts from.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumePoint {
    /// The conversation to continue.
    pub history: Vec<Message>,
    /// Calls of the last assistant message to ask again (in order), with the results of the
    /// ones settled before the kill; empty when nothing was waiting.
    pub pending: PendingCalls,
}

/// Calls of the last turn that never got past the gate, and the results of its settled ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PendingCalls {
    /// The calls to run through the gate again.
    pub calls: Vec<ModelToolCall>,
    /// The results of the calls of the same message that were settled.
    pub settled: Vec<ToolResultMessage>,
}

impl PendingCalls {
    /// Whether there is nothing to ask again.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

impl Transcript {
    /// Where a resumed session picks up (see the module header). Lines skipped as unknown
    /// (a newer version wrote them) are logged as one warning: the session resumes without
    /// them.
    pub fn resume_point(&self) -> ResumePoint {
        if let Some(warning) = self.unknown_lines_warning() {
            tracing::warn!("{warning}");
        }
        match self.waiting_calls() {
            Some((last_assistant, pending)) => ResumePoint {
                history: self.messages_through(last_assistant),
                pending,
            },
            None => ResumePoint {
                history: self.messages(),
                pending: PendingCalls::default(),
            },
        }
    }

    /// The index of the last assistant message and its calls to ask again, when it got no
    /// results and one of its calls was waiting for an approval.
    fn waiting_calls(&self) -> Option<(usize, PendingCalls)> {
        let (index, calls) = self
            .entries
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, e)| match e {
                TranscriptEntry::Message {
                    message: Message::Assistant { tool_calls, .. },
                } => Some((i, tool_calls)),
                TranscriptEntry::Message {
                    message: Message::Tool { .. } | Message::User { .. },
                } => Some((usize::MAX, &EMPTY)),
                _ => None,
            })?;
        if index == usize::MAX || calls.is_empty() {
            return None;
        }
        let after = &self.entries[index + 1..];
        let records: Vec<&ToolCallRecord> = after
            .iter()
            .filter_map(|e| match e {
                TranscriptEntry::ToolCall(record) => Some(record),
                _ => None,
            })
            .collect();
        let settled_ids: HashSet<&str> = records.iter().map(|r| r.tool_call_id.as_str()).collect();
        let asked: HashSet<&str> = after.iter().filter_map(asked_call).collect();
        let resolved: HashSet<&str> = after.iter().filter_map(resolved_call).collect();
        let unsettled: Vec<&ModelToolCall> = calls
            .iter()
            .filter(|c| !settled_ids.contains(c.id.as_str()))
            .collect();
        // Only a call left waiting at the gate makes the turn worth asking again; a call that
        // got past it (resolved, so perhaps running) may have done part of its work.
        let waiting = unsettled
            .iter()
            .any(|c| asked.contains(c.id.as_str()) && !resolved.contains(c.id.as_str()));
        let started = unsettled.iter().any(|c| resolved.contains(c.id.as_str()));
        if !waiting || started {
            return None;
        }
        let settled = calls
            .iter()
            .filter_map(|c| records.iter().find(|r| r.tool_call_id == c.id))
            .map(|record| recorded_result(record))
            .collect();
        Some((
            index,
            PendingCalls {
                calls: unsettled.into_iter().cloned().collect(),
                settled,
            },
        ))
    }

    /// The conversation up to and including the entry at `last` (whose calls stay open).
    fn messages_through(&self, last: usize) -> Vec<Message> {
        conversation(&self.entries[..=last], false)
    }
}

static EMPTY: Vec<ModelToolCall> = Vec::new();

/// The call an `approvalRequired` event asks about, or an `approvalDeferred` event parked.
fn asked_call(entry: &TranscriptEntry) -> Option<&str> {
    match entry {
        TranscriptEntry::Event {
            event:
                DisplayEvent::ApprovalRequired(request) | DisplayEvent::ApprovalDeferred { request, .. },
        } if request.worker.is_none() => Some(&request.tool_call_id),
        _ => None,
    }
}

/// The call an `approvalResolved` event settles.
fn resolved_call(entry: &TranscriptEntry) -> Option<&str> {
    match entry {
        TranscriptEntry::Event {
            event: DisplayEvent::ApprovalResolved(resolved),
        } if resolved.worker.is_none() => Some(&resolved.tool_call_id),
        _ => None,
    }
}

/// What the model was (or would have been) told about a settled call.
fn recorded_result(record: &ToolCallRecord) -> ToolResultMessage {
    let content = match (&record.error, &record.value) {
        (Some(error), _) if record.status == ToolStatus::Denied => {
            format!("[DENIED] {}", error.message)
        }
        (Some(error), _) => format!("Error [{}]: {}", error.code, error.message),
        (None, Some(value)) => value.to_model_text(),
        (None, None) => String::new(),
    };
    ToolResultMessage {
        tool_call_id: record.tool_call_id.clone(),
        tool_name: record.tool_name.clone(),
        content,
        is_error: record.status != ToolStatus::Success,
    }
}
