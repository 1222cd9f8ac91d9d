//! Undo: every change a session makes to its zones keeps a before-image, so a turn's file
//! changes can be put back. The session's journal lives in
//! `<program root>/.golem-forge/undo/<session id>/`: `journal.jsonl` (which zones, each path's
//! image before a turn first changed it and after each change, turns that cannot be undone,
//! undos begun and finished) and `objects/<sha256>` (kept file contents, each once, up to a
//! size cap per session). A [`Sandbox`](crate::Sandbox) given the journal
//! ([`Sandbox::with_undo`](crate::Sandbox::with_undo)) records every changing operation
//! (`record.rs`); the file tools, changesets and the git tools' working-tree changes all go
//! through it. [`UndoJournal::undo`] puts turns back (`restore.rs`), refusing when a path
//! changed outside the session since.

mod image;
mod journal;
mod log;
mod record;
mod restore;
#[cfg(test)]
mod tests;

pub use image::Image;
pub(crate) use image::hash_copy;
pub use journal::{DEFAULT_UNDO_CAP, UndoJournal, UndoNotices};
pub use record::ExternalChange;
pub(crate) use record::Touch;
pub use restore::{UndoConflict, UndoError, UndoReport, UndoScope, turn_list};
