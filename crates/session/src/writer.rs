//! Appending entries to one transcript: each entry is one JSON line (U+2028 and U+2029
//! escaped, `golem_protocol::to_jsonl_line`) handed to the kernel in a single write, so a killed
//! process loses at most the entry being written. A writer holds its transcript's lock, so no
//! two processes append to one session.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

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

    /// Writes `entry` as one line and hands it to the operating system before returning.
    pub fn append(&mut self, entry: &TranscriptEntry) -> Result<(), SessionError> {
        let json = golem_protocol::to_jsonl_line(entry).map_err(|source| SessionError::Encode {
            kind: entry.kind(),
            source,
        })?;
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
