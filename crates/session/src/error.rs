//! What can go wrong with session transcripts, in messages that name the file, the line or the
//! ids a user can pick from.

use std::path::PathBuf;

/// An error reading or writing session transcripts.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum SessionError {
    /// A file-system operation failed.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done (`create`, `write to`, `read`, …).
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// An entry could not be encoded as JSON (e.g. a path that is not UTF-8).
    #[error("cannot encode a `{kind}` transcript entry: {source}")]
    Encode {
        /// The entry's kind.
        kind: &'static str,
        /// The cause.
        source: serde_json::Error,
    },
    /// No session has this id or an id starting with it.
    #[error("no session `{id}` in {}{}", dir.display(), known_list(known))]
    NotFound {
        /// The id asked for.
        id: String,
        /// The sessions directory.
        dir: PathBuf,
        /// Some of the newest known ids.
        known: Vec<String>,
    },
    /// Several sessions start with this prefix.
    #[error(
        "session id `{prefix}` is ambiguous: it matches {}",
        id_list(candidates)
    )]
    Ambiguous {
        /// The prefix asked for.
        prefix: String,
        /// The ids it matches (newest first).
        candidates: Vec<String>,
    },
    /// A session id that cannot name a transcript file.
    #[error("`{id}` is not a valid session id: {reason}")]
    InvalidId {
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A session with this id exists already.
    #[error("a session `{id}` exists already")]
    Exists { id: String },
    /// A line in the middle of a transcript is not a valid entry.
    #[error("{} line {line}: {message}", path.display())]
    Corrupt {
        /// The transcript file.
        path: PathBuf,
        /// The line number (from 1).
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Another writer has the transcript (a second process resuming the same session).
    #[error("session {id} is in use by {holder}; wait until it ends (or end it), then try again")]
    Locked {
        /// The session.
        id: String,
        /// Who holds it, as its note says.
        holder: String,
    },
    /// The file does not start with a session's meta entry.
    #[error("{} is not a session transcript: {reason}", path.display())]
    NotATranscript {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// How many ids an error message names before it says "and N more".
const NAMED_IDS: usize = 5;

fn id_list(ids: &[String]) -> String {
    let named = ids
        .iter()
        .take(NAMED_IDS)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    match ids.len().saturating_sub(NAMED_IDS) {
        0 => named,
        more => format!("{named} and {more} more"),
    }
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        " (there are no sessions yet)".to_owned()
    } else {
        format!(" (newest: {})", id_list(known))
    }
}

impl SessionError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        SessionError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
