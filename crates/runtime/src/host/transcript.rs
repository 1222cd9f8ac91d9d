//! The session's transcript as the host writes it: one writer (swapped on `newSession`), fed
//! by the root worker's observer (input, conversation, each settled tool call with its
//! result, token counts) and by a recorder of display events. Each tool call is written once,
//! as its `toolCall` record: the recorder leaves out `toolStarted` and `toolResult`, whose
//! content the record holds.

use std::sync::{Arc, Mutex, PoisonError};

use golem_core::bus::DisplaySubscription;
use golem_core::orchestrator::CallOutcome;
use golem_llm::Message;
use golem_protocol::{
    CompactionReason, ContextFill, DisplayEvent, Role, SessionEndReason, TokenUsage,
};

use crate::inbox::SessionInbox;
use crate::runner::RunObserver;
use golem_session::{SessionWriter, TranscriptEntry};

/// The open transcript, if any: shared by the observer, the recorder and the host.
#[derive(Clone, Default)]
pub(crate) struct TranscriptSlot {
    writer: Arc<Mutex<Option<SessionWriter>>>,
}

impl TranscriptSlot {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<SessionWriter>> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends `entry` to the open transcript (nothing once it is closed).
    pub(crate) fn append(&self, entry: &TranscriptEntry) {
        if let Some(writer) = self.lock().as_mut()
            && let Err(e) = writer.append(entry)
        {
            tracing::error!(error = %e, "cannot append to the session transcript");
        }
    }

    /// Puts `writer` in place and returns the one it replaces.
    pub(crate) fn replace(&self, writer: SessionWriter) -> Option<SessionWriter> {
        self.lock().replace(writer)
    }

    /// Writes the `ended` line and closes the transcript (synced to disk).
    pub(crate) fn close(&self, reason: SessionEndReason, message: Option<String>) {
        let writer = self.lock().take();
        if let Some(writer) = writer {
            close_writer(writer, reason, message);
        }
    }
}

/// Writes the `ended` line to `writer` and syncs it.
pub(crate) fn close_writer(
    mut writer: SessionWriter,
    reason: SessionEndReason,
    message: Option<String>,
) {
    if let Err(e) = writer.append(&TranscriptEntry::Ended { reason, message }) {
        tracing::error!(error = %e, "cannot close the session transcript");
    }
    if let Err(e) = writer.finish() {
        tracing::error!(error = %e, "cannot sync the session transcript");
    }
}

/// Token counts and costs of the session and of the turn in progress, every worker's.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct UsageCounts {
    /// Since the session (or the last `newSession`) started.
    pub session: TokenUsage,
    /// Since the current turn started.
    pub turn: TokenUsage,
    /// The session's cost in US dollars, of the calls whose price is known.
    pub session_cost: Option<f64>,
    /// The turn's cost, likewise.
    pub turn_cost: Option<f64>,
}

impl UsageCounts {
    /// Starts counting a new turn.
    pub fn start_turn(&mut self) {
        self.turn = TokenUsage::default();
        self.turn_cost = None;
    }
}

/// `total` plus `cost`, where either is known.
fn add_cost(total: Option<f64>, cost: Option<f64>) -> Option<f64> {
    match (total, cost) {
        (Some(total), Some(cost)) => Some(total + cost),
        (total, None) => total,
        (None, cost) => cost,
    }
}

/// What every worker's runtime reports to the host: the transcript lines and token counts.
pub(crate) struct HostObserver {
    pub transcript: TranscriptSlot,
    pub usage: Arc<Mutex<UsageCounts>>,
    pub messages: Arc<std::sync::atomic::AtomicU64>,
    /// How full the root worker's context is (for `sessionStatus`).
    pub context: Arc<Mutex<Option<ContextFill>>>,
    /// Where a settled call's inbox entry, if it had one, is removed.
    pub inbox: Arc<SessionInbox>,
}

impl RunObserver for HostObserver {
    fn input(&self, content: &str) {
        self.transcript.append(&TranscriptEntry::Input {
            content: content.to_owned(),
        });
    }
    fn message(&self, message: &Message) {
        self.messages
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.transcript.append(&TranscriptEntry::Message {
            message: message.clone(),
        });
    }
    fn tool_call(&self, outcome: &CallOutcome) {
        self.transcript.append(&outcome.into());
        self.inbox.settled(&outcome.tool_call_id);
    }
    fn usage(&self, usage: &TokenUsage, cost: Option<f64>) {
        let mut counts = self.usage.lock().unwrap_or_else(PoisonError::into_inner);
        counts.session.add(usage);
        counts.turn.add(usage);
        counts.session_cost = add_cost(counts.session_cost, cost);
        counts.turn_cost = add_cost(counts.turn_cost, cost);
    }
    fn compacted(&self, summary: &Message, kept: usize, reason: CompactionReason) {
        self.messages
            .store(kept as u64 + 1, std::sync::atomic::Ordering::Relaxed);
        self.transcript.append(&TranscriptEntry::Compacted {
            reason,
            summary: summary.clone(),
            kept,
        });
    }
    fn context(&self, fill: ContextFill) {
        *self.context.lock().unwrap_or_else(PoisonError::into_inner) = Some(fill);
    }
}

/// Whether the recorder writes `event`: one exhaustive decision per kind, so a new event
/// kind cannot be added without saying whether transcripts keep it. Not written: a tool
/// call's start and result (they are in the call's own record), `workerProgress` (a live view
/// whose totals `workerFinished` keeps) and the echo of the user's input (its `input`
/// entry).
fn recorded(event: &DisplayEvent) -> bool {
    match event {
        DisplayEvent::ToolStarted { .. }
        | DisplayEvent::ToolResult { .. }
        | DisplayEvent::WorkerProgress(_) => false,
        DisplayEvent::Message { message, .. } => match message.role {
            Role::User => false,
            Role::Assistant | Role::System => true,
        },
        DisplayEvent::SessionStarted { .. }
        | DisplayEvent::Streaming { .. }
        | DisplayEvent::ApprovalRequired(_)
        | DisplayEvent::ApprovalResolved(_)
        | DisplayEvent::ApprovalDeferred { .. }
        | DisplayEvent::InputRequired { .. }
        | DisplayEvent::InputResolved { .. }
        | DisplayEvent::Status { .. }
        | DisplayEvent::ManualToolsAvailable { .. }
        | DisplayEvent::WorkerStarted { .. }
        | DisplayEvent::WorkerFinished { .. }
        | DisplayEvent::Usage { .. }
        | DisplayEvent::ContextCompacted { .. }
        | DisplayEvent::ContextElided { .. }
        | DisplayEvent::TurnEnded { .. }
        | DisplayEvent::ActionResult(_)
        | DisplayEvent::SessionStatus(_)
        | DisplayEvent::ApprovalsRemembered { .. }
        | DisplayEvent::SessionEnded { .. } => true,
    }
}

/// Writes display events to the transcript, in order, until `sessionEnded` (included).
pub(crate) async fn record(mut events: DisplaySubscription, transcript: TranscriptSlot) {
    while let Some(event) = events.recv().await {
        let last = matches!(event, DisplayEvent::SessionEnded { .. });
        if recorded(&event) {
            transcript.append(&TranscriptEntry::Event { event });
        }
        if last {
            return;
        }
    }
}
