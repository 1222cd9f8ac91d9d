//! `golem-forge sessions undo`: puts back the zone files a recorded session's turns changed,
//! from its undo journal (`.golem-forge/undo/<id>/`), while the session is not running (its
//! transcript's lock is taken for the time), and notes in its transcript, so that a resumed
//! session's model is told and `sessions show` lists what was put back. A file changed
//! outside the session since is a conflict: nothing is changed unless `--force`.

use std::process::ExitCode;

use clap::Args;
use golem_llm::Message;
use golem_protocol::{ActionResult, DisplayEvent, SessionAction};
use golem_sandbox::undo::{DEFAULT_UNDO_CAP, UndoError, UndoJournal, UndoScope};
use golem_session::{SessionStore, TranscriptEntry};

use super::{failed, print, session_error};
use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

/// Put back the files a session's turns changed
///
/// Without --to, the last turn that changed files (and is not undone yet) is undone. A file
/// changed outside the session since is listed and nothing is changed, unless --force.
#[derive(Debug, Args)]
pub struct UndoArgs {
    /// The session id, or enough of its start to name one session
    pub id: String,
    /// Undo every turn from TURN on (1 is the first input)
    #[arg(long, value_name = "TURN", value_parser = clap::value_parser!(u32).range(1..))]
    pub to: Option<u32>,
    /// Overwrite files changed outside the session since
    #[arg(long)]
    pub force: bool,
}

/// Runs `golem-forge sessions undo` against `store`.
pub fn cmd_undo(store: &SessionStore, args: UndoArgs) -> Result<ExitCode, CommandError> {
    let id = store.resolve(&args.id).map_err(session_error)?;
    // Held until the end: a running session cannot change what is being put back.
    let mut writer = store.reopen(&id).map_err(session_error)?;
    let dir = store.undo_dir(&id);
    if !dir.exists() {
        return Err(CommandError::usage(format!(
            "nothing to undo: session `{id}` changed no files"
        )));
    }
    let journal = UndoJournal::open(&dir, DEFAULT_UNDO_CAP).map_err(|e| {
        failed(format!(
            "the undo journal in {} cannot be read: {e}",
            dir.display()
        ))
    })?;
    let scope = match args.to {
        Some(turn) => UndoScope::From(turn),
        None => UndoScope::Last(1),
    };
    let report = journal.undo(scope, args.force).map_err(|err| match err {
        UndoError::Conflicts { .. } => failed(err.to_string()).with_hint(format!(
            "Look at those files; to put the session's turns back over them: golem-forge \
             sessions undo {id}{} --force",
            args.to.map(|t| format!(" --to {t}")).unwrap_or_default()
        )),
        UndoError::Nothing(_) | UndoError::NotUndoable { .. } => {
            CommandError::usage(err.to_string())
        }
        UndoError::Journal(_) | UndoError::Stopped { .. } => failed(err.to_string()),
    })?;
    // The model's note, then the same `actionResult` a chat's `/undo` records, which `sessions
    // show` and `export` display where the undo happened.
    let note = TranscriptEntry::Message {
        message: Message::user(report.model_note()),
    };
    let done = TranscriptEntry::Event {
        event: DisplayEvent::ActionResult(ActionResult {
            request_id: None,
            action: SessionAction::Undo,
            ok: true,
            message: report.summary(),
        }),
    };
    writer
        .append(&note)
        .and_then(|()| writer.append(&done))
        .and_then(|()| writer.finish())
        .map_err(|e| {
            failed(format!(
                "the files are back, but the transcript could not note it: {e}"
            ))
        })?;
    print(&clean_text(&format!("{}\n", report.summary())))
}
