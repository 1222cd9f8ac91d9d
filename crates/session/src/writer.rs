//! Appending entries to one transcript: each entry is one JSON line (U+2028 and U+2029
//! escaped, `golem_protocol::to_jsonl_line`) handed to the kernel in a single write, so a killed
//! process loses at most the entry being written. A writer holds its transcript's lock, so no
//! two processes append to one session.
//!
//! This is the one place that decides a line's time: every line ends with `at`, the Unix
//! milliseconds it was written at (or, for an entry copied from another transcript, the time
//! its original was written at).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::clock::now_unix_ms;
use super::entry::TranscriptEntry;
use super::error::SessionError;
use super::lock::{HolderNote, lock};

/// Appends to one session's transcript. Errors are returned, never panics: the runtime logs
/// them and carries on.
#[derive(Debug)]
pub struct SessionWriter {
    id: String,
    path: PathBuf,
    file: File,
    /// A write failed part-way; the next entry starts on a fresh line.
    needs_newline: bool,
    /// The note naming this process as the holder of the file's lock (the lock itself lives
    /// as long as `file`).
    _holder: HolderNote,
}

impl SessionWriter {
    /// A writer over `file` (opened for appending, positioned after a complete line), once
    /// it holds the transcript's lock (see `lock.rs`; its note goes in `locks_dir`).
    pub(crate) fn new(
        id: String,
        path: PathBuf,
        file: File,
        locks_dir: &Path,
    ) -> Result<Self, SessionError> {
        let holder = lock(&file, &id, &path, locks_dir)?;
        Ok(Self {
            id,
            path,
            file,
            needs_newline: false,
            _holder: holder,
        })
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The transcript file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `entry` as one line stamped with the time now, and hands it to the operating
    /// system before returning.
    pub fn append(&mut self, entry: &TranscriptEntry) -> Result<(), SessionError> {
        self.append_at(entry, None)
    }

    /// [`append`](Self::append) with the line's time given: `at_ms` (Unix milliseconds) for an
    /// entry copied from another transcript with the time its original was written at, `None`
    /// for now. It is not checked against the lines before it: a copy keeps its times as they
    /// were.
    pub fn append_at(
        &mut self,
        entry: &TranscriptEntry,
        at_ms: Option<u64>,
    ) -> Result<(), SessionError> {
        let json = encode_line(entry, Some(at_ms.unwrap_or_else(now_unix_ms)))?;
        let mut line = String::with_capacity(json.len() + 2);
        if self.needs_newline {
            line.push('\n');
        }
        line.push_str(&json);
        line.push('\n');
        self.write(line.as_bytes())
    }

    /// Makes everything written so far durable (`fsync` of the data).
    pub fn sync(&mut self) -> Result<(), SessionError> {
        self.file
            .sync_data()
            .map_err(|e| SessionError::io("sync", &self.path, e))
    }

    /// Syncs and closes the transcript.
    pub fn finish(mut self) -> Result<(), SessionError> {
        self.sync()
    }

    /// Writes raw bytes (complete lines) to the end of the file.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        let written = self.file.write_all(bytes).and_then(|()| self.file.flush());
        self.needs_newline = written.is_err();
        written.map_err(|e| SessionError::io("write to", &self.path, e))
    }
}

/// An entry as a line holds it: the entry's own fields (`kind` first), then `at`.
///
/// The stamp is added by serializing this wrapper, not by splicing `,"at":N` into the entry's
/// text: the serializer writes it as one more field of the same object, so nothing here
/// depends on how the entry's JSON happens to end, and the line is neither re-parsed nor
/// copied. `flatten` costs only when deserializing (it buffers), and lines are never decoded
/// through this type: the reader takes the entry and the stamp apart (`parse.rs`). Every
/// variant of [`TranscriptEntry`] serializes as a JSON object (the enum is internally tagged:
/// struct, newtype-of-struct and unit variants alike), which `flatten` requires; the tests
/// write each one.
#[derive(Serialize)]
struct Stamped<'a> {
    #[serde(flatten)]
    entry: &'a TranscriptEntry,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<u64>,
}

/// `entry` as one transcript line, without its newline: escaped like every JSON line the
/// program writes (`golem_protocol::to_jsonl_line`), ending with `at` when it is given. Only an
/// imported line that had no time is written without one.
pub(crate) fn encode_line(
    entry: &TranscriptEntry,
    at: Option<u64>,
) -> Result<String, SessionError> {
    golem_protocol::to_jsonl_line(&Stamped { entry, at }).map_err(|source| SessionError::Encode {
        kind: entry.kind(),
        source,
    })
}
