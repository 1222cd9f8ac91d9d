//! Session transcripts: every run appends its entries (meta, display events, the model
//! conversation, settled tool calls, user inputs, the end) as JSON lines to
//! `<program root>/.golem-forge/sessions/<id>.jsonl`, one write per entry, so a killed process
//! loses at most the entry being written. The writer stamps each line with the time it was
//! written (`at`, Unix milliseconds; [`Transcript::times`] reads them back). Sessions are listed, loaded and reopened to resume;
//! one process at a time writes a transcript (`lock.rs`).
//!
//! Every command reads transcripts through one reader (`parse.rs`): a line of a kind this
//! version does not know is skipped with a warning, never hiding the session.
//!
//! This crate only stores and reads transcripts; it does not decide what a run records (the
//! worker runtime does), and it never prints: problems are returned or logged. It also holds
//! [`replace_file`], the whole-file replace the program's own state files are written with.

mod clock;
mod entry;
mod error;
mod lock;
mod parse;
mod replace;
mod resume;
mod store;
mod transcript;
mod writer;

#[cfg(test)]
mod tests;

pub use clock::{now_rfc3339, now_unix_ms, seconds_since, time_sortable_id, unix_ms_of};
pub use entry::{
    EntryKind, ForkedFrom, SessionMeta, SessionStatus, ToolCallRecord, TranscriptEntry,
};
pub use error::SessionError;
pub use parse::{UnknownLine, unknown_lines_warning};
pub use replace::replace_file;
pub use resume::{PendingCalls, ResumePoint};
pub use store::{SessionScan, SessionStore, SkippedFile};
pub use transcript::{FIRST_INPUT_CHARS, SessionSummary, Transcript};
pub use writer::SessionWriter;
