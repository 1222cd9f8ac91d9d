//! The project's approval inbox: calls parked by the `defer` approval mode, waiting for a
//! person (`golem-forge inbox`, the inbox page). Each entry is one JSON file,
//! `.golem-forge/inbox/<N>.json`, written through a temp file and a rename; `N` comes from a
//! counter kept beside them, so a number is given once and never reused. A lock file serialises
//! changes between processes (many batch items park at once). A worker cannot forge an answer:
//! `.golem-forge/` is protected from every worker and from jailed code.
//!
//! An entry lives while its call is parked: it is written when the call is parked (the same
//! call parked again keeps its entry), answered by a person, and removed once its session has
//! settled the call ([`SessionInbox`]).

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use golem_core::approval::{ApprovalInbox, ParkError};
use golem_protocol::{
    ApprovalRequest, ApprovalResponse, BatchItemRef, InboxAnswer, InboxEntry, RememberScope,
};

use golem_session::now_rfc3339;
use golem_session::replace_file;

/// Why the inbox could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    /// A file of the inbox could not be read or written.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An entry's file does not hold an entry.
    #[error("{} is not an inbox entry: {message}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// No entry has this number (never given, or settled and gone).
    #[error("no approval {0} waits in the inbox (see `golem-forge inbox`)")]
    NotFound(u64),
    /// The entry was answered before.
    #[error("approval {id} was already answered ({answer}); its session has not taken it yet")]
    AlreadyAnswered {
        /// The entry.
        id: u64,
        /// `approved` or `denied`.
        answer: &'static str,
    },
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InboxError {
    let path = path.to_owned();
    move |source| InboxError::Io {
        action,
        path,
        source,
    }
}

/// The inbox of the program at one root.
#[derive(Debug, Clone)]
pub struct InboxStore {
    dir: PathBuf,
}

/// Who parks a call: the session and what it runs.
#[derive(Debug, Clone)]
pub struct ParkedBy {
    /// The session's id.
    pub session: String,
    /// Its root worker.
    pub worker: String,
    /// The batch item it runs, if any.
    pub batch: Option<BatchItemRef>,
}

impl InboxStore {
    /// The inbox of the program whose root is `program_root`.
    pub fn new(program_root: &Path) -> InboxStore {
        InboxStore {
            dir: program_root.join(".golem-forge").join("inbox"),
        }
    }

    /// Every entry, oldest first. Files that are not entries are skipped with a warning.
    pub fn list(&self) -> Result<Vec<InboxEntry>, InboxError> {
        let read = match std::fs::read_dir(&self.dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io("read", &self.dir)(e)),
        };
        let mut entries = Vec::new();
        for file in read {
            let file = file.map_err(io("read", &self.dir))?;
            let name = file.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            match self.get(id) {
                Ok(entry) => entries.push(entry),
                // Settled by its session between listing and reading.
                Err(InboxError::NotFound(_)) => {}
                Err(error) => tracing::warn!(%error, "an inbox file was skipped"),
            }
        }
        entries.sort_by_key(|entry| entry.id);
        Ok(entries)
    }

    /// The entry numbered `id`.
    pub fn get(&self, id: u64) -> Result<InboxEntry, InboxError> {
        let path = self.entry_path(id);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(InboxError::NotFound(id));
            }
            Err(e) => return Err(io("read", &path)(e)),
        };
        serde_json::from_str(&text).map_err(|e| InboxError::Corrupt {
            path,
            message: e.to_string(),
        })
    }

    /// The entries of session `session`.
    pub fn of_session(&self, session: &str) -> Result<Vec<InboxEntry>, InboxError> {
        let mut entries = self.list()?;
        entries.retain(|entry| entry.session == session);
        Ok(entries)
    }

    /// Parks `request` for `by`: a new entry, or the one that already holds the same call of
    /// the same session (its request refreshed, its answer kept). Returns its number.
    pub fn park(&self, by: &ParkedBy, request: &ApprovalRequest) -> Result<u64, InboxError> {
        let _lock = self.lock()?;
        let entries = self.list()?;
        let highest = entries.iter().map(|e| e.id).max().unwrap_or(0);
        let existing = entries.into_iter().find(|entry| {
            entry.session == by.session && entry.request.tool_call_id == request.tool_call_id
        });
        let entry = match existing {
            Some(entry) => InboxEntry {
                request: request.clone(),
                ..entry
            },
            None => InboxEntry {
                id: self.next_id(highest)?,
                session: by.session.clone(),
                worker: by.worker.clone(),
                created: now_rfc3339(),
                batch: by.batch.clone(),
                request: request.clone(),
                answer: None,
            },
        };
        self.write(&entry)?;
        Ok(entry.id)
    }

    /// Answers entry `id` (once): its session takes the answer when it continues.
    pub fn answer(
        &self,
        id: u64,
        approved: bool,
        remember: RememberScope,
        note: Option<String>,
    ) -> Result<InboxEntry, InboxError> {
        let _lock = self.lock()?;
        let mut entry = self.get(id)?;
        if let Some(answer) = &entry.answer {
            return Err(InboxError::AlreadyAnswered {
                id,
                answer: if answer.approved {
                    "approved"
                } else {
                    "denied"
                },
            });
        }
        entry.answer = Some(InboxAnswer {
            approved,
            remember: if approved {
                remember
            } else {
                RememberScope::None
            },
            note,
            answered: now_rfc3339(),
        });
        self.write(&entry)?;
        Ok(entry)
    }

    /// Removes entry `id` (its call was settled); nothing when it is gone already.
    pub fn remove(&self, id: u64) -> Result<(), InboxError> {
        let _lock = self.lock()?;
        let path = self.entry_path(id);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("remove", &path)(e)),
        }
    }

    fn entry_path(&self, id: u64) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Holds the inbox's lock (between processes) while it lives.
    fn lock(&self) -> Result<File, InboxError> {
        std::fs::create_dir_all(&self.dir).map_err(io("create", &self.dir))?;
        let path = self.dir.join(".lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io("open", &path))?;
        file.lock().map_err(io("lock", &path))?;
        Ok(file)
    }

    /// The next number, counted in `next-id` (under the lock), above `highest`, the highest
    /// number of the entries there are.
    fn next_id(&self, highest: u64) -> Result<u64, InboxError> {
        let path = self.dir.join("next-id");
        let next = match std::fs::read_to_string(&path) {
            Ok(text) => text.trim().parse::<u64>().unwrap_or(1).max(1),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 1,
            Err(e) => return Err(io("read", &path)(e)),
        };
        // A counter file lost or reset must not hand out a number in use.
        let id = next.max(highest + 1);
        replace_file(&path, format!("{}\n", id + 1).as_bytes()).map_err(io("write", &path))?;
        Ok(id)
    }

    fn write(&self, entry: &InboxEntry) -> Result<(), InboxError> {
        let path = self.entry_path(entry.id);
        let mut text = serde_json::to_string_pretty(entry).map_err(|e| InboxError::Corrupt {
            path: path.clone(),
            message: e.to_string(),
        })?;
        text.push('\n');
        replace_file(&path, text.as_bytes()).map_err(io("write", &path))
    }
}

/// The inbox as one session sees it: parks its calls, hands back their answers, and removes
/// an entry once the session settled its call.
pub struct SessionInbox {
    store: InboxStore,
    /// The session's id (it changes on `newSession`) and what it runs.
    by: Mutex<ParkedBy>,
    /// The session's entries by call id.
    open: Mutex<HashMap<String, u64>>,
}

impl SessionInbox {
    /// A view of `store` for a session running `batch` (if it is a batch item), bound to its
    /// session by [`SessionInbox::bind`] before anything is parked.
    pub fn new(store: InboxStore, batch: Option<BatchItemRef>) -> Arc<SessionInbox> {
        Arc::new(SessionInbox {
            store,
            by: Mutex::new(ParkedBy {
                session: String::new(),
                worker: String::new(),
                batch,
            }),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// From now on the view is session `session`'s, of worker `worker` (at start, and again
    /// after a `newSession`), with the entries the session already has (a resumed one's).
    pub fn bind(&self, session: &str, worker: &str) {
        let open = match self.store.of_session(session) {
            Ok(entries) => entries
                .into_iter()
                .map(|entry| (entry.request.tool_call_id, entry.id))
                .collect(),
            Err(error) => {
                tracing::warn!(%error, "the session's inbox entries cannot be read");
                HashMap::new()
            }
        };
        {
            let mut by = self.by.lock().unwrap_or_else(PoisonError::into_inner);
            by.session = session.to_owned();
            by.worker = worker.to_owned();
        }
        *self.open.lock().unwrap_or_else(PoisonError::into_inner) = open;
    }

    /// The call `tool_call_id` was settled (decided at the gate, whatever the decision): its
    /// entry, if it had one, leaves the inbox.
    pub fn settled(&self, tool_call_id: &str) {
        let id = self
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(tool_call_id);
        if let Some(id) = id
            && let Err(error) = self.store.remove(id)
        {
            tracing::warn!(%error, "a settled call's inbox entry was not removed");
        }
    }

    fn entry_of(&self, tool_call_id: &str) -> Option<u64> {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tool_call_id)
            .copied()
    }
}

impl ApprovalInbox for SessionInbox {
    fn park(&self, request: &ApprovalRequest) -> Result<u64, ParkError> {
        let by = self
            .by
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let id = self
            .store
            .park(&by, request)
            .map_err(|e| ParkError::Unwritable(Box::new(e)))?;
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(request.tool_call_id.clone(), id);
        Ok(id)
    }

    fn answer(&self, tool_call_id: &str) -> Option<ApprovalResponse> {
        let id = self.entry_of(tool_call_id)?;
        let entry = match self.store.get(id) {
            Ok(entry) => entry,
            Err(error) => {
                tracing::warn!(%error, "an inbox entry cannot be read");
                return None;
            }
        };
        let answer = entry.answer?;
        Some(ApprovalResponse {
            request_id: entry.request.request_id,
            approved: answer.approved,
            remember: answer.remember,
            note: answer.note,
            modified_args: None,
        })
    }
}

#[cfg(test)]
mod tests;
