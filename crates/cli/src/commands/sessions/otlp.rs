//! `golem-forge sessions export --format otlp-json`: a recorded session as the spans tracing
//! would have exported had it been on, in the OTLP/JSON encoding. This file turns a transcript
//! back into the timed stream of display events the session showed (golem-telemetry builds
//! and encodes the spans): each recorded event at its line's time, each settled tool call's
//! record as the `toolResult` it stood for, each user input as its `message` echo.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, SystemTime};

use golem_protocol::{ChatMessage, DisplayEvent, Role, ToolKind, ToolResultValue, ToolStatus};
use golem_session::{ToolCallRecord, Transcript, TranscriptEntry, unix_ms_of};
use golem_telemetry::{TraceOrigin, otlp_json, spans_of_recording};

/// The `service.name` of the exported spans, as the live exporter's default names the program.
const SERVICE_NAME: &str = "golem-forge";

/// Why a transcript could not be exported as spans.
#[derive(Debug)]
pub enum OtlpExportError {
    /// Some lines carry no time and neither does anything before them, and the meta's start
    /// is not a time this reads.
    NoTime {
        /// The session.
        id: String,
        /// The meta's `started`.
        started: String,
    },
    /// The encoder failed.
    Encode(golem_telemetry::OtlpJsonError),
}

impl std::fmt::Display for OtlpExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OtlpExportError::NoTime { id, started } => write!(
                f,
                "session `{id}` has lines without a time and its start `{started}` is not an \
                 RFC 3339 UTC time"
            ),
            OtlpExportError::Encode(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for OtlpExportError {}

impl From<golem_telemetry::OtlpJsonError> for OtlpExportError {
    fn from(error: golem_telemetry::OtlpJsonError) -> Self {
        OtlpExportError::Encode(error)
    }
}

/// The transcript's spans as one OTLP/JSON document (ending in a newline; U+2028, U+2029 and
/// U+0085 escaped like in every JSON the program writes). Content (inputs,
/// answers, arguments, results) is left out, as tracing leaves it out by default.
pub fn otlp(transcript: &Transcript) -> Result<String, OtlpExportError> {
    let events = timed_events(transcript)?;
    let spans = spans_of_recording(events, TraceOrigin::default(), false);
    Ok(golem_protocol::escape_line_breaks(otlp_json(
        spans,
        SERVICE_NAME,
    )?))
}

/// The display events the session showed, each with when it happened: the line's time; for
/// a line without one (a transcript older than line times), the time of the last line that had
/// one, else the meta line's, else the meta's `started`. A `sessionStarted` naming this
/// transcript comes first.
///
/// Display events reach the transcript through a subscriber, after the runtime's own lines: a
/// quick call's record can be written before its approval events, a delegation's before the
/// end of the run it started. So a record's `toolResult` is placed after the last event of
/// its turn that names the call (directly, or as the call that started a worker run).
pub fn timed_events(
    transcript: &Transcript,
) -> Result<Vec<(SystemTime, DisplayEvent)>, OtlpExportError> {
    let meta = &transcript.meta;
    let started = || {
        unix_ms_of(&meta.started).ok_or_else(|| OtlpExportError::NoTime {
            id: transcript.id.clone(),
            started: meta.started.clone(),
        })
    };
    let mut last = match transcript.meta_at {
        Some(at) => at,
        None => started()?,
    };
    // Calls an older transcript kept a `toolResult` event for: that event (it names the
    // worker) stands for the call, not its record.
    let reported: HashSet<&str> = transcript
        .entries
        .iter()
        .filter_map(|entry| match entry {
            TranscriptEntry::Event {
                event: DisplayEvent::ToolResult { tool_call_id, .. },
            } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut events = vec![(
        time(last),
        DisplayEvent::SessionStarted {
            protocol_version: golem_protocol::PROTOCOL_VERSION.to_owned(),
            session_id: transcript.id.clone(),
            worker: meta.worker.clone(),
            model: meta.model.clone(),
        },
    )];
    // Records waiting for a later line, by that line's index.
    let mut waiting: HashMap<usize, Vec<DisplayEvent>> = HashMap::new();
    for (index, (entry, at)) in transcript.entries.iter().zip(&transcript.times).enumerate() {
        if let Some(at) = at {
            last = *at;
        }
        let event = match entry {
            // A fork's copy of its original's start names the original: the spans are this
            // session's.
            TranscriptEntry::Event {
                event: DisplayEvent::SessionStarted { .. },
            } => None,
            TranscriptEntry::Event { event } => Some(event.clone()),
            TranscriptEntry::ToolCall(call) if reported.contains(call.tool_call_id.as_str()) => {
                None
            }
            TranscriptEntry::ToolCall(call) => match last_mention(&transcript.entries, index) {
                Some(later) => {
                    waiting.entry(later).or_default().push(tool_result(call));
                    None
                }
                None => Some(tool_result(call)),
            },
            TranscriptEntry::Input { content } => Some(DisplayEvent::Message {
                message: ChatMessage {
                    role: Role::User,
                    content: content.clone(),
                },
                worker: None,
            }),
            TranscriptEntry::Meta(_)
            | TranscriptEntry::Message { .. }
            | TranscriptEntry::Compacted { .. }
            | TranscriptEntry::Cleared
            | TranscriptEntry::Ended { .. } => None,
        };
        events.extend(event.map(|event| (time(last), event)));
        for event in waiting.remove(&index).unwrap_or_default() {
            events.push((time(last), event));
        }
    }
    Ok(events)
}

/// The index of the last event after the record at `index` that names its call: an approval
/// event of it, the start of a worker run it started or that run's end. It looks no further
/// than the next user input or the next record of the same call id (ids can repeat across
/// turns); `None` when nothing after the record names the call.
fn last_mention(entries: &[TranscriptEntry], index: usize) -> Option<usize> {
    let TranscriptEntry::ToolCall(record) = entries.get(index)? else {
        return None;
    };
    let id = record.tool_call_id.as_str();
    let mut started_by_call: HashSet<&str> = HashSet::new();
    let mut found = None;
    for (later, entry) in entries.iter().enumerate().skip(index + 1) {
        let names_call = match entry {
            TranscriptEntry::Input { .. } => break,
            TranscriptEntry::ToolCall(other) if other.tool_call_id == id => break,
            TranscriptEntry::Event { event } => match event {
                DisplayEvent::ApprovalRequired(request)
                | DisplayEvent::ApprovalDeferred { request, .. } => request.tool_call_id == id,
                DisplayEvent::ApprovalResolved(resolved) => resolved.tool_call_id == id,
                DisplayEvent::WorkerStarted {
                    worker_id,
                    parent_tool_call_id: Some(parent),
                    ..
                } if parent == id => {
                    started_by_call.insert(worker_id.as_str());
                    true
                }
                DisplayEvent::WorkerFinished { worker_id, .. } => {
                    started_by_call.contains(worker_id.as_str())
                }
                _ => false,
            },
            _ => false,
        };
        if names_call {
            found = Some(later);
        }
    }
    found
}

/// The `toolResult` a settled call's record stands for. The record does not say which worker
/// made the call: the tracer finds it from the call's approval events, which name it, else
/// puts the call under the root worker's run.
fn tool_result(call: &ToolCallRecord) -> DisplayEvent {
    let value = match (&call.value, &call.error) {
        (Some(value), _) => value.clone(),
        (None, Some(error)) => error.to_result_value(),
        (None, None) if call.status == ToolStatus::Success => ToolResultValue::text(""),
        (None, None) => ToolResultValue::new("tool_error", serde_json::json!({})),
    };
    DisplayEvent::ToolResult {
        tool_call_id: call.tool_call_id.clone(),
        tool_name: call.tool_name.clone(),
        tool_kind: ToolKind::default(),
        status: call.status,
        // The proposed arguments of a call that never ran, as the live event carries them.
        args: call
            .executed_args
            .is_none()
            .then(|| call.proposed_args.clone()),
        value,
        duration_ms: call.duration_ms,
        invoked_by: call.invoked_by,
        worker: None,
    }
}

fn time(unix_ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(unix_ms)
}
