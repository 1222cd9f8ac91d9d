//! The lines of a transcript: one [`TranscriptEntry`] per line, tagged by `kind`, camelCase.
//! These are the on-disk format; changing a field's name breaks reading older sessions.

use std::path::PathBuf;

use golem_core::orchestrator::CallOutcome;
use golem_protocol::{
    CompactionReason, DecidedBy, DisplayEvent, InvokedBy, SessionEndReason, ToolError,
    ToolResultValue, ToolStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::clock::now_rfc3339;

/// What a session runs: the first line of every transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMeta {
    /// The root worker's name.
    pub worker: String,
    /// The root worker's file.
    pub worker_path: PathBuf,
    /// The model, as `provider:model`.
    pub model: String,
    /// The worker's mode (`single` or `chat`).
    pub mode: String,
    /// When the session started, RFC 3339 in UTC (`2026-11-22T02:45:12.345Z`; older transcripts
    /// have whole seconds).
    pub started: String,
    /// The session and user turn this one was forked from (`sessions fork`); absent in
    /// sessions started afresh and in transcripts written before forks existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
}

/// Where a forked session came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkedFrom {
    /// The original session's id.
    pub id: String,
    /// The user turn of the original (1 is its first input) whose exchange the fork ends with.
    pub turn: usize,
}

impl SessionMeta {
    /// Meta for a session starting now.
    pub fn new(
        worker: impl Into<String>,
        worker_path: impl Into<PathBuf>,
        model: impl Into<String>,
        mode: impl Into<String>,
    ) -> Self {
        Self {
            worker: worker.into(),
            worker_path: worker_path.into(),
            model: model.into(),
            mode: mode.into(),
            started: now_rfc3339(),
            forked_from: None,
        }
    }
}

/// One tool call as the gate settled it, with the proposed, approved (edited) and executed
/// arguments kept apart (docs/protocol.md, Transcripts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallRecord {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
    /// The outcome.
    pub status: ToolStatus,
    /// The arguments as proposed.
    pub proposed_args: Value,
    /// The arguments the user approved instead, when edited at approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_args: Option<Value>,
    /// The arguments the tool ran with, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executed_args: Option<Value>,
    /// Who decided at the gate, when the call reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
    /// Why the call did not succeed (a denial's note, a validation message, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
    /// From reaching the orchestrator to the end.
    #[serde(default)]
    pub duration_ms: u64,
    /// The result as front ends saw it (a `tool_error` value on failure). Older transcripts
    /// kept it in a separate `toolResult` event instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<ToolResultValue>,
}

impl From<&CallOutcome> for ToolCallRecord {
    fn from(outcome: &CallOutcome) -> Self {
        Self {
            tool_call_id: outcome.tool_call_id.clone(),
            tool_name: outcome.tool_name.clone(),
            invoked_by: outcome.invoked_by,
            status: outcome.status,
            proposed_args: outcome.proposed_args.clone(),
            approved_args: outcome.approved_args.clone(),
            executed_args: outcome.executed_args.clone(),
            decided_by: outcome.decided_by,
            error: outcome.error.clone(),
            duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
            value: Some(outcome.value.clone()),
        }
    }
}

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum TranscriptEntry {
    /// What the session runs; always the first line.
    Meta(SessionMeta),
    /// A display event, as front ends saw it.
    Event { event: DisplayEvent },
    /// A message of the root worker's conversation with the model (what resume replays).
    Message { message: golem_llm::Message },
    /// A settled tool call.
    ToolCall(ToolCallRecord),
    /// The root worker's conversation was compacted: from here on it is `summary` followed by
    /// the last `kept` messages before this line (what resume continues from).
    Compacted {
        /// What made it compact.
        reason: CompactionReason,
        /// The message that replaced the rest.
        summary: golem_llm::Message,
        /// Messages kept after the summary.
        kept: usize,
    },
    /// The user cleared the conversation: resume continues from the messages after this line.
    Cleared,
    /// What the user sent.
    Input {
        /// The text.
        content: String,
    },
    /// The session (or one run of a resumed session) ended.
    Ended {
        /// Why.
        reason: SessionEndReason,
        /// The final answer or the error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

impl TranscriptEntry {
    /// The `kind` tag of this entry, as written.
    pub fn kind(&self) -> &'static str {
        self.entry_kind().as_str()
    }

    /// Which kind of entry this is.
    pub fn entry_kind(&self) -> EntryKind {
        match self {
            TranscriptEntry::Meta(_) => EntryKind::Meta,
            TranscriptEntry::Event { .. } => EntryKind::Event,
            TranscriptEntry::Message { .. } => EntryKind::Message,
            TranscriptEntry::ToolCall(_) => EntryKind::ToolCall,
            TranscriptEntry::Compacted { .. } => EntryKind::Compacted,
            TranscriptEntry::Cleared => EntryKind::Cleared,
            TranscriptEntry::Input { .. } => EntryKind::Input,
            TranscriptEntry::Ended { .. } => EntryKind::Ended,
        }
    }
}

/// The kinds of [`TranscriptEntry`], one per variant (the exhaustive match of
/// [`TranscriptEntry::entry_kind`] keeps them in step): what the reader decodes from a line's
/// `kind` tag before anything else, so that a kind this version does not know is told apart
/// from a damaged line. Its serde names are the entry's tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EntryKind {
    /// `meta`.
    Meta,
    /// `event`.
    Event,
    /// `message`.
    Message,
    /// `toolCall`.
    ToolCall,
    /// `compacted`.
    Compacted,
    /// `cleared`.
    Cleared,
    /// `input`.
    Input,
    /// `ended`.
    Ended,
}

impl EntryKind {
    /// The kind named by a line's `kind` tag, if this version knows it.
    pub fn from_tag(tag: &str) -> Option<Self> {
        use serde::de::IntoDeserializer;
        let tag: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
            tag.into_deserializer();
        EntryKind::deserialize(tag).ok()
    }

    /// The tag, as written.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Meta => "meta",
            EntryKind::Event => "event",
            EntryKind::Message => "message",
            EntryKind::ToolCall => "toolCall",
            EntryKind::Compacted => "compacted",
            EntryKind::Cleared => "cleared",
            EntryKind::Input => "input",
            EntryKind::Ended => "ended",
        }
    }
}

impl TranscriptEntry {
    /// For an entry that changed what the model is sent (a compaction, a clear): a title and
    /// the text to show under it, for listings of the session.
    pub fn context_change(&self) -> Option<(String, &str)> {
        match self {
            TranscriptEntry::Compacted {
                reason,
                summary,
                kept,
            } => {
                let text = match summary {
                    golem_llm::Message::User { content } => content.as_str(),
                    golem_llm::Message::Assistant { text, .. } => text.as_str(),
                    golem_llm::Message::Tool { .. } => "",
                };
                let title = format!(
                    "compacted ({}): the conversation before its last {kept} message{} became \
                     this summary",
                    reason.as_str(),
                    if *kept == 1 { "" } else { "s" }
                );
                Some((title, text))
            }
            TranscriptEntry::Cleared => Some((
                "cleared".to_owned(),
                "The conversation was cleared: nothing before this point is sent again.",
            )),
            TranscriptEntry::Meta(_)
            | TranscriptEntry::Event { .. }
            | TranscriptEntry::Message { .. }
            | TranscriptEntry::ToolCall(_)
            | TranscriptEntry::Input { .. }
            | TranscriptEntry::Ended { .. } => None,
        }
    }
}

impl From<&CallOutcome> for TranscriptEntry {
    fn from(outcome: &CallOutcome) -> Self {
        TranscriptEntry::ToolCall(outcome.into())
    }
}

impl From<DisplayEvent> for TranscriptEntry {
    fn from(event: DisplayEvent) -> Self {
        TranscriptEntry::Event { event }
    }
}

impl From<golem_llm::Message> for TranscriptEntry {
    fn from(message: golem_llm::Message) -> Self {
        TranscriptEntry::Message { message }
    }
}

/// How a session ended, as far as its transcript tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SessionStatus {
    /// It finished with an answer, or the user left the chat.
    Completed,
    /// The run failed.
    Failed,
    /// An interrupt ended it.
    Interrupted,
    /// The root worker's budget ran out.
    BudgetExceeded,
    /// A call waits for an approval in the inbox; resuming continues it.
    WaitingApproval,
    /// No end was recorded: the process was killed, or it is still running.
    Unfinished,
}

impl SessionStatus {
    /// The status as shown to users (`completed`, …, `unfinished`).
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
            SessionStatus::Interrupted => "interrupted",
            SessionStatus::BudgetExceeded => "budget exceeded",
            SessionStatus::WaitingApproval => "waiting for approval",
            SessionStatus::Unfinished => "unfinished",
        }
    }
}

impl std::fmt::Display for SessionStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<SessionEndReason> for SessionStatus {
    fn from(reason: SessionEndReason) -> Self {
        match reason {
            SessionEndReason::Completed => SessionStatus::Completed,
            SessionEndReason::Failed => SessionStatus::Failed,
            SessionEndReason::Interrupted => SessionStatus::Interrupted,
            SessionEndReason::BudgetExceeded => SessionStatus::BudgetExceeded,
            SessionEndReason::WaitingApproval => SessionStatus::WaitingApproval,
        }
    }
}

/// Follows the entries of a transcript to its status and its user inputs. The status is the
/// last `ended` entry's, unless the user sent input after it (a resumed session that was then
/// cut off), which makes it unfinished again.
#[derive(Debug, Default)]
pub(crate) struct StatusTracker {
    last_end: Option<SessionEndReason>,
    input_after_end: bool,
    inputs: usize,
    first_input: Option<String>,
}

impl StatusTracker {
    /// Notes a user input.
    pub(crate) fn input(&mut self, content: &str) {
        self.inputs += 1;
        self.input_after_end = self.last_end.is_some();
        if self.first_input.is_none() {
            self.first_input = Some(content.to_owned());
        }
    }

    /// Notes an end.
    pub(crate) fn ended(&mut self, reason: SessionEndReason) {
        self.last_end = Some(reason);
        self.input_after_end = false;
    }

    /// Notes any entry.
    pub(crate) fn entry(&mut self, entry: &TranscriptEntry) {
        match entry {
            TranscriptEntry::Input { content } => self.input(content),
            TranscriptEntry::Ended { reason, .. } => self.ended(*reason),
            TranscriptEntry::Meta(_)
            | TranscriptEntry::Event { .. }
            | TranscriptEntry::Message { .. }
            | TranscriptEntry::ToolCall(_)
            | TranscriptEntry::Compacted { .. }
            | TranscriptEntry::Cleared => {}
        }
    }

    /// The status so far.
    pub(crate) fn status(&self) -> SessionStatus {
        match self.last_end {
            Some(reason) if !self.input_after_end => reason.into(),
            Some(_) | None => SessionStatus::Unfinished,
        }
    }

    /// How many inputs the user sent.
    pub(crate) fn inputs(&self) -> usize {
        self.inputs
    }

    /// The first input, if any.
    pub(crate) fn into_first_input(self) -> Option<String> {
        self.first_input
    }
}
