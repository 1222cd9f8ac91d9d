//! A loaded transcript and a session's one-line summary: reading a file into them, its
//! status, and the conversation to resume with.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::entry::{EntryKind, SessionMeta, SessionStatus, StatusTracker, TranscriptEntry};
use super::error::SessionError;
use super::parse::{Line, UnknownLine, read_lines, unknown_lines_warning};
use golem_llm::{Message, ToolResultMessage};
use golem_protocol::SessionEndReason;

/// How many characters of the first input a summary keeps.
pub const FIRST_INPUT_CHARS: usize = 60;

/// A session read back from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    /// The session's id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// What it runs (the first line).
    pub meta: SessionMeta,
    /// When the meta line was written, in Unix milliseconds (`None` for a transcript written
    /// before lines carried their time).
    pub meta_at: Option<u64>,
    /// Every entry after the meta line, in order.
    pub entries: Vec<TranscriptEntry>,
    /// When each of `entries` was written (the same index), in Unix milliseconds: `None` for
    /// a line written before lines carried their time. Always as long as `entries`. Times are
    /// the wall clock of the process that wrote each line, so they need not increase.
    pub times: Vec<Option<u64>>,
    /// The last line was cut mid-write (a killed process) and is not in `entries`.
    pub partial_tail: bool,
    /// Line numbers of entries that were cut mid-write and skipped (the partial tail included).
    pub skipped_lines: Vec<usize>,
    /// Lines of kinds (or event types) this version does not know, skipped: a newer version
    /// wrote them. They stay in the file.
    pub unknown_lines: Vec<UnknownLine>,
}

impl Transcript {
    /// Reads the transcript of session `id` from `path`: every entry decoded, lines of kinds
    /// this version does not know skipped (in `unknown_lines`), a corrupt line an error.
    pub(crate) fn read(id: &str, path: &Path) -> Result<Self, SessionError> {
        let bytes = std::fs::read(path).map_err(|e| SessionError::io("read", path, e))?;
        Self::parse(id, path, &bytes)
    }

    /// [`Transcript::read`] of bytes already in memory (a parked session carried between
    /// machines, read before it is written anywhere); `path` only names it in errors.
    pub fn parse(id: &str, path: &Path, bytes: &[u8]) -> Result<Self, SessionError> {
        let mut meta = None;
        let mut entries = Vec::new();
        let mut times = Vec::new();
        let skipped = read_lines(
            path,
            bytes,
            |_| true,
            |line, read| {
                let (entry, at) = match read {
                    Line::Entry(entry, at) => (*entry, at),
                    Line::Corrupt(err) => return Err(err),
                    // Every kind is decoded here.
                    Line::Skimmed(_) => return Ok(()),
                };
                match (&meta, entry) {
                    (None, TranscriptEntry::Meta(m)) => meta = Some((m, at)),
                    (None, other) => return Err(not_meta(path, line, other.kind())),
                    (Some(_), entry) => {
                        entries.push(entry);
                        times.push(at);
                    }
                }
                Ok(())
            },
        )?;
        let (meta, meta_at) = meta.ok_or_else(|| no_meta(path, skipped.partial_tail))?;
        Ok(Self {
            id: id.to_owned(),
            path: path.to_owned(),
            meta,
            meta_at,
            entries,
            times,
            partial_tail: skipped.partial_tail,
            skipped_lines: skipped.lines,
            unknown_lines: skipped.unknown,
        })
    }

    /// The warning about the lines skipped as unknown, if any (see
    /// [`unknown_lines_warning`]).
    pub fn unknown_lines_warning(&self) -> Option<String> {
        let file = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        unknown_lines_warning(&file, &self.unknown_lines)
    }

    /// How the session ended, as far as the transcript tells.
    pub fn status(&self) -> SessionStatus {
        let mut tracker = StatusTracker::default();
        self.entries.iter().for_each(|e| tracker.entry(e));
        tracker.status()
    }

    /// What the user sent, in order.
    pub fn inputs(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter_map(|e| match e {
            TranscriptEntry::Input { content } => Some(content.as_str()),
            TranscriptEntry::Meta(_)
            | TranscriptEntry::Event { .. }
            | TranscriptEntry::Message { .. }
            | TranscriptEntry::ToolCall(_)
            | TranscriptEntry::Compacted { .. }
            | TranscriptEntry::Cleared
            | TranscriptEntry::Ended { .. } => None,
        })
    }

    /// How many user turns the session has (its `input` entries).
    pub fn turns(&self) -> usize {
        self.inputs().count()
    }

    /// The entries of user turns 1 to `turn` (a turn is its `input` entry and everything up to
    /// the next one), to start a fork with; `None` when there is no such turn. When later
    /// turns followed, the copy ends with a `completed` end (unless it has one already), so
    /// the fork reads as a finished session until it is resumed.
    pub fn entries_through_turn(&self, turn: usize) -> Option<Vec<TranscriptEntry>> {
        self.entries_through_turn_with_times(turn)
            .map(|entries| entries.into_iter().map(|(entry, _)| entry).collect())
    }

    /// [`entries_through_turn`](Self::entries_through_turn), each entry with the time it was
    /// written at (from [`times`](Self::times)), so that a copy keeps them; the end added to
    /// close the copy has none (it is written when the copy is).
    pub fn entries_through_turn_with_times(
        &self,
        turn: usize,
    ) -> Option<Vec<(TranscriptEntry, Option<u64>)>> {
        let mut starts = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| matches!(e, TranscriptEntry::Input { .. }))
            .map(|(index, _)| index);
        if turn == 0 {
            return None;
        }
        starts.nth(turn - 1)?;
        let end = starts.next().unwrap_or(self.entries.len());
        let mut entries: Vec<(TranscriptEntry, Option<u64>)> = self.entries[..end]
            .iter()
            .enumerate()
            .map(|(index, entry)| (entry.clone(), self.times.get(index).copied().flatten()))
            .collect();
        if end < self.entries.len() {
            let mut tracker = StatusTracker::default();
            entries.iter().for_each(|(e, _)| tracker.entry(e));
            if tracker.status() == SessionStatus::Unfinished {
                entries.push((
                    TranscriptEntry::Ended {
                        reason: SessionEndReason::Completed,
                        message: None,
                    },
                    None,
                ));
            }
        }
        Some(entries)
    }

    /// The conversation to resume with: the `message` entries in order, made whole where a
    /// killed process cut it: tool calls of an assistant message that got no result get an
    /// `INTERRUPTED` error result, so every provider accepts the history. A compaction
    /// replaces what came before it by its summary; a clear drops it.
    pub fn messages(&self) -> Vec<Message> {
        conversation(&self.entries, true)
    }
}

/// The conversation `entries` hold (see [`Transcript::messages`]); the calls of the last
/// assistant message are answered as interrupted only when `close_end`.
pub(crate) fn conversation(entries: &[TranscriptEntry], close_end: bool) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    let mut pending: Vec<(String, String)> = Vec::new();
    for entry in entries {
        let message = match entry {
            TranscriptEntry::Message { message } => message,
            TranscriptEntry::Compacted { summary, kept, .. } => {
                close_pending(&mut out, &mut pending);
                let kept = out.split_off(out.len().saturating_sub(*kept));
                out = std::iter::once(summary.clone()).chain(kept).collect();
                continue;
            }
            TranscriptEntry::Cleared => {
                out.clear();
                pending.clear();
                continue;
            }
            TranscriptEntry::Meta(_)
            | TranscriptEntry::Event { .. }
            | TranscriptEntry::ToolCall(_)
            | TranscriptEntry::Input { .. }
            | TranscriptEntry::Ended { .. } => continue,
        };
        match message {
            Message::Tool { results } => {
                let answered: HashSet<&str> =
                    results.iter().map(|r| r.tool_call_id.as_str()).collect();
                let mut results = results.clone();
                results.extend(
                    pending
                        .drain(..)
                        .filter(|(id, _)| !answered.contains(id.as_str()))
                        .map(|(id, name)| interrupted_result(id, name)),
                );
                out.push(Message::Tool { results });
            }
            Message::User { .. } | Message::Assistant { .. } => {
                close_pending(&mut out, &mut pending);
                if let Message::Assistant { tool_calls, .. } = message {
                    pending = tool_calls
                        .iter()
                        .map(|c| (c.id.clone(), c.name.clone()))
                        .collect();
                }
                out.push(message.clone());
            }
        }
    }
    if close_end {
        close_pending(&mut out, &mut pending);
    }
    out
}

/// Answers tool calls left without results.
fn close_pending(out: &mut Vec<Message>, pending: &mut Vec<(String, String)>) {
    if !pending.is_empty() {
        let results = pending
            .drain(..)
            .map(|(id, name)| interrupted_result(id, name))
            .collect();
        out.push(Message::Tool { results });
    }
}

fn interrupted_result(tool_call_id: String, tool_name: String) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id,
        tool_name,
        content: "Error [INTERRUPTED]: the session ended before this call finished".to_owned(),
        is_error: true,
    }
}

fn not_meta(path: &Path, line: usize, kind: &str) -> SessionError {
    SessionError::NotATranscript {
        path: path.to_owned(),
        reason: format!("line {line} is an entry of kind `{kind}`, not the session's meta"),
    }
}

fn no_meta(path: &Path, partial_tail: bool) -> SessionError {
    let reason = if partial_tail {
        "its first line was cut off (the process was killed while creating it)"
    } else {
        "it is empty"
    };
    SessionError::NotATranscript {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// One session in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session's id.
    pub id: String,
    /// Its file.
    pub path: PathBuf,
    /// The root worker's name.
    pub worker: String,
    /// The model, as `provider:model`.
    pub model: String,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// How it ended.
    pub status: SessionStatus,
    /// How many inputs the user sent.
    pub inputs: usize,
    /// The first input on one line, at most [`FIRST_INPUT_CHARS`] characters.
    pub first_input: Option<String>,
    /// Lines of kinds this version does not know, skipped (see [`Transcript::unknown_lines`]).
    pub unknown_lines: Vec<UnknownLine>,
    /// The first line after the meta that is not a transcript entry, if any (the error that
    /// loading the session gives): the session is listed as far as it can be read.
    pub corrupt: Option<String>,
}

impl SessionSummary {
    /// Summarises session `id` from `path` with the reader of [`Transcript::read`], decoding
    /// only the meta, inputs and ends. A corrupt line after the meta does not hide the session:
    /// it is noted in `corrupt`.
    pub(crate) fn read(id: &str, path: &Path) -> Result<Self, SessionError> {
        let bytes = std::fs::read(path).map_err(|e| SessionError::io("read", path, e))?;
        let mut meta = None;
        let mut tracker = StatusTracker::default();
        let mut corrupt = None;
        let summarised =
            |kind| matches!(kind, EntryKind::Meta | EntryKind::Input | EntryKind::Ended);
        let skipped = read_lines(path, &bytes, summarised, |line, read| {
            let entry = match (&meta, read) {
                (_, Line::Entry(entry, _)) => *entry,
                (None, Line::Corrupt(err)) => return Err(err),
                (Some(_), Line::Corrupt(err)) => {
                    corrupt.get_or_insert_with(|| err.to_string());
                    return Ok(());
                }
                (None, Line::Skimmed(kind)) => return Err(not_meta(path, line, kind.as_str())),
                (Some(_), Line::Skimmed(_)) => return Ok(()),
            };
            match (&meta, entry) {
                (None, TranscriptEntry::Meta(m)) => meta = Some(m),
                (None, other) => return Err(not_meta(path, line, other.kind())),
                (Some(_), entry) => tracker.entry(&entry),
            }
            Ok(())
        })?;
        let meta = meta.ok_or_else(|| no_meta(path, skipped.partial_tail))?;
        let status = tracker.status();
        let inputs = tracker.inputs();
        Ok(Self {
            id: id.to_owned(),
            path: path.to_owned(),
            worker: meta.worker,
            model: meta.model,
            started: meta.started,
            status,
            inputs,
            first_input: tracker.into_first_input().map(|s| one_line(&s)),
            unknown_lines: skipped.unknown,
            corrupt,
        })
    }
}

/// `text` with runs of whitespace folded to one space, cut to [`FIRST_INPUT_CHARS`].
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    golem_core::text::fold(&joined, FIRST_INPUT_CHARS)
}
