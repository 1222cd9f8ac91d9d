//! How a parked item's session travels between machines. A session is files on the machine
//! that ran it; the queue carries two things so that any consumer can continue it: the
//! session's transcript (at most [`MAX_TRANSCRIPT`] bytes) and its parked calls, which go to
//! the queue's inbox. A consumer continuing the item writes the transcript into its own
//! program's sessions, files the answered calls in its own inbox with their answers, and
//! resumes the session with no new input, as `batch resume` does locally: the answered call
//! is decided by the answer and runs once, if the answer is bound to that very call
//! (`crate::consent`). What the session left on the first machine (its
//! undo snapshots, files in its zones) does not travel. Its trace context does: the
//! transcript records the span of each run (`workerStarted.traceContext`), so the continuing
//! run is a child of the parked one, and the parked item keeps the item's own trace context
//! (`crate::trace`).

use std::path::Path;

use golem_protocol::{InboxEntry, ItemResult};
use golem_runtime::inbox::{InboxStore, ParkedBy};
use golem_session::SessionStore;
use serde::{Deserialize, Serialize};

use crate::consent::QueueAnswer;
use crate::error::QueueError;
use crate::trace::ItemTrace;

/// The largest transcript a parked item may carry.
pub const MAX_TRANSCRIPT: usize = 8 * 1024 * 1024;

/// A parked item as the queue keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParkedItem {
    /// Its result so far (`waitingApproval`).
    pub result: ItemResult,
    /// The parked session.
    pub session: String,
    /// Its entries in the queue's inbox.
    pub entries: Vec<u64>,
    /// The trace context the item came with, for the run that continues it (none from an
    /// older consumer, or an untraced producer).
    #[serde(default, skip_serializing_if = "ItemTrace::is_empty")]
    pub trace: ItemTrace,
}

/// What a parked session takes with it.
#[derive(Debug, Clone)]
pub struct Luggage {
    /// The transcript's bytes.
    pub transcript: Vec<u8>,
    /// The session's parked calls, as this machine's inbox holds them.
    pub entries: Vec<InboxEntry>,
}

fn travel(session: &str, reason: impl std::fmt::Display) -> QueueError {
    QueueError::Travel {
        session: session.to_owned(),
        reason: reason.to_string(),
    }
}

/// Packs parked session `session` of the program at `root`.
pub fn pack(root: &Path, session: &str) -> Result<Luggage, QueueError> {
    let transcript = SessionStore::new(root)
        .export(session)
        .map_err(|e| travel(session, e))?;
    if transcript.len() > MAX_TRANSCRIPT {
        return Err(travel(
            session,
            format!(
                "its transcript is {} bytes, more than the {} a parked item may carry",
                transcript.len(),
                MAX_TRANSCRIPT
            ),
        ));
    }
    let entries = InboxStore::new(root)
        .of_session(session)
        .map_err(|e| travel(session, e))?;
    if entries.is_empty() {
        return Err(travel(session, "it waits for no call in the inbox"));
    }
    Ok(Luggage {
        transcript,
        entries,
    })
}

/// Removes the local inbox entries `luggage` was packed from (they wait in the queue now).
pub fn forget_local(root: &Path, luggage: &Luggage) {
    let store = InboxStore::new(root);
    for entry in &luggage.entries {
        if let Err(error) = store.remove(entry.id) {
            tracing::warn!(%error, "a parked call's local inbox entry was not removed");
        }
    }
}

/// Unpacks parked session `session` into the program at `root`, whose copy of the batch's
/// worker is `worker`: its transcript, and its calls filed in the local inbox with their
/// answers (checked before, `crate::consent::check_continuation`).
pub fn unpack(
    root: &Path,
    worker: &Path,
    session: &str,
    transcript: &[u8],
    entries: &[(InboxEntry, Option<QueueAnswer>)],
) -> Result<(), QueueError> {
    SessionStore::new(root)
        .import(session, transcript, worker)
        .map_err(|e| travel(session, e))?;
    let store = InboxStore::new(root);
    for (entry, answer) in entries {
        let by = ParkedBy {
            session: session.to_owned(),
            worker: entry.worker.clone(),
            batch: entry.batch.clone(),
        };
        let id = store
            .park(&by, &entry.request)
            .map_err(|e| travel(session, e))?;
        if let Some(QueueAnswer { answer, .. }) = answer {
            match store.answer(id, answer.approved, answer.remember, answer.note.clone()) {
                Ok(_) | Err(golem_runtime::inbox::InboxError::AlreadyAnswered { .. }) => {}
                Err(e) => return Err(travel(session, e)),
            }
        }
    }
    Ok(())
}
