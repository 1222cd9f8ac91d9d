//! One writer per transcript: a writer holds an exclusive lock on its transcript file (`flock`,
//! released by the kernel when the file is closed, so a killed process never leaves a stale
//! lock), and notes who holds it in `.golem-forge/locks/<id>.lock` so that a second process is
//! told which one has the session.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use super::clock::now_rfc3339;
use super::error::SessionError;

/// The note naming the holder of a transcript's lock; removed when the writer is dropped.
#[derive(Debug)]
pub(crate) struct HolderNote {
    path: PathBuf,
}

impl Drop for HolderNote {
    fn drop(&mut self) {
        // Best effort: a note left behind names a holder only while its lock is held.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Who this process is, for the note.
fn holder() -> String {
    let program = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "golem-forge".to_owned());
    format!(
        "process {} ({program}), since {}",
        std::process::id(),
        now_rfc3339()
    )
}

/// Takes the lock on the transcript `file` of session `id` (at `path`), noting the holder in
/// `locks_dir`. Another writer's lock is [`SessionError::Locked`], naming it.
pub(crate) fn lock(
    file: &File,
    id: &str,
    path: &Path,
    locks_dir: &Path,
) -> Result<HolderNote, SessionError> {
    let note = locks_dir.join(format!("{id}.lock"));
    match file.try_lock() {
        Ok(()) => {
            // The note is for messages only; failing to write it never stops the session.
            if std::fs::create_dir_all(locks_dir).is_ok() {
                let _ = std::fs::write(&note, holder());
            }
            Ok(HolderNote { path: note })
        }
        Err(TryLockError::WouldBlock) => Err(SessionError::Locked {
            id: id.to_owned(),
            holder: std::fs::read_to_string(&note)
                .ok()
                .map(|text| text.trim().to_owned())
                .filter(|text| !text.is_empty())
                .unwrap_or_else(|| "another process".to_owned()),
        }),
        Err(TryLockError::Error(e)) => Err(SessionError::io("lock", path, e)),
    }
}
