//! The sessions directory `<program root>/.golem-forge/sessions/`: one `<id>.jsonl` file per
//! session (and `../undo/<id>/`, its undo journal). Creating, listing, finding by id or unique
//! prefix, loading and reopening.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::clock::time_sortable_id;
use super::entry::{EntryKind, SessionMeta, TranscriptEntry};
use super::error::SessionError;
use super::parse::{Line, read_lines, unknown_lines_warning};
use super::transcript::{SessionSummary, Transcript};
use super::writer::{SessionWriter, encode_line};

/// The file extension of transcripts.
const EXTENSION: &str = "jsonl";
/// How many fresh ids `create` tries when ids collide (same second, same random suffix).
const CREATE_ATTEMPTS: usize = 32;
/// The longest accepted session id.
const MAX_ID_LEN: usize = 64;
/// How many ids a not-found error suggests.
const SUGGESTED_IDS: usize = 5;

/// The transcripts of one program.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// A directory scan: the sessions that could be read, newest first, and the files skipped.
#[derive(Debug, Default)]
pub struct SessionScan {
    /// Readable sessions, newest first.
    pub sessions: Vec<SessionSummary>,
    /// Files in the directory that are not readable sessions, by file name, with why.
    pub skipped: Vec<SkippedFile>,
}

impl SessionScan {
    /// What a user should be told about the sessions listed, in order: lines of kinds this
    /// version does not know that were skipped (one warning per file), and corrupt lines (the
    /// session is listed as far as it could be read; loading it fails).
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        for session in &self.sessions {
            let file = format!("{}.{EXTENSION}", session.id);
            warnings.extend(unknown_lines_warning(&file, &session.unknown_lines));
            if let Some(corrupt) = &session.corrupt {
                warnings.push(format!(
                    "{corrupt} (session {} is listed as far as it can be read; `sessions show \
                     {} --json` prints its lines)",
                    session.id, session.id
                ));
            }
        }
        warnings
    }
}

/// A file `list` passed over.
#[derive(Debug)]
pub struct SkippedFile {
    /// The file's name in the sessions directory.
    pub name: String,
    /// Why it was skipped.
    pub reason: String,
}

impl SessionStore {
    /// The store of the program at `program_root` (the directory is created on first write).
    pub fn new(program_root: &Path) -> Self {
        Self {
            dir: program_root.join(".golem-forge").join("sessions"),
        }
    }

    /// The sessions directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where session `id` keeps what undoing its turns needs:
    /// `<program root>/.golem-forge/undo/<id>/` (beside the sessions directory, so that
    /// listing sessions never meets it).
    pub fn undo_dir(&self, id: &str) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).join("undo").join(id)
    }

    /// Starts a new session with a fresh time-sortable id (`20261122-024512-7f3a`: UTC time
    /// and 4 random hex digits) and writes `meta` as its first line.
    pub fn create(&self, meta: SessionMeta) -> Result<SessionWriter, SessionError> {
        self.ensure_dir()?;
        let mut last_err = None;
        for _ in 0..CREATE_ATTEMPTS {
            let id = time_sortable_id();
            match self.create_file(&id, &meta) {
                Err(SessionError::Exists { id }) => last_err = Some(SessionError::Exists { id }),
                other => return other,
            }
        }
        Err(last_err.unwrap_or(SessionError::Exists { id: String::new() }))
    }

    /// Removes session `id` if nothing but its first line was ever written to it (a session
    /// created and then abandoned before it started: it did nothing, and `sessions list` must
    /// not show it), with its undo directory. A session with anything more is kept; `Ok(false)`
    /// says so.
    pub fn discard_unused(&self, id: &str) -> Result<bool, SessionError> {
        validate_id(id)?;
        let path = self.file_of(id);
        let transcript = Transcript::read(id, &path)?;
        if !transcript.entries.is_empty() || transcript.partial_tail {
            return Ok(false);
        }
        std::fs::remove_file(&path).map_err(|e| SessionError::io("remove", &path, e))?;
        let undo = self.undo_dir(id);
        match std::fs::remove_dir_all(&undo) {
            Err(e) if e.kind() != ErrorKind::NotFound => {
                return Err(SessionError::io("remove", &undo, e));
            }
            Ok(()) | Err(_) => {}
        }
        Ok(true)
    }

    /// Starts a new session with a chosen id (letters, digits, `-` and `_`); fails if it
    /// exists. For imports and tests that need fixed ids.
    pub fn create_with_id(
        &self,
        id: &str,
        meta: SessionMeta,
    ) -> Result<SessionWriter, SessionError> {
        validate_id(id)?;
        self.ensure_dir()?;
        self.create_file(id, &meta)
    }

    /// Every readable session, newest first; unreadable or foreign files are skipped with a
    /// warning in the log. A missing directory means no sessions.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let scan = self.scan()?;
        for skipped in &scan.skipped {
            tracing::warn!(
                file = %skipped.name,
                reason = %skipped.reason,
                "skipped a file in the sessions directory"
            );
        }
        for warning in scan.warnings() {
            tracing::warn!("{warning}");
        }
        Ok(scan.sessions)
    }

    /// Like [`list`](Self::list), returning the skipped files instead of logging them.
    pub fn scan(&self) -> Result<SessionScan, SessionError> {
        let mut scan = SessionScan::default();
        for (name, id) in self.dir_entries()? {
            let Some(id) = id else {
                scan.skipped.push(SkippedFile {
                    reason: format!("not a session transcript (`<id>.{EXTENSION}`)"),
                    name,
                });
                continue;
            };
            match SessionSummary::read(&id, &self.dir.join(&name)) {
                Ok(summary) => scan.sessions.push(summary),
                Err(err) => scan.skipped.push(SkippedFile {
                    name,
                    reason: err.to_string(),
                }),
            }
        }
        // RFC 3339 UTC times sort as text; ids (time-sortable) break ties and odd times.
        scan.sessions
            .sort_by(|a, b| (&b.started, &b.id).cmp(&(&a.started, &a.id)));
        Ok(scan)
    }

    /// The full id of the session named by `id_or_prefix`: an exact id, or the start of
    /// exactly one.
    pub fn resolve(&self, id_or_prefix: &str) -> Result<String, SessionError> {
        if id_or_prefix.is_empty() {
            return Err(SessionError::InvalidId {
                id: String::new(),
                reason: "it is empty",
            });
        }
        let mut ids = self.ids()?;
        if ids.iter().any(|id| id == id_or_prefix) {
            return Ok(id_or_prefix.to_owned());
        }
        ids.sort_by(|a, b| b.cmp(a));
        let mut matches: Vec<String> = ids
            .iter()
            .filter(|id| id.starts_with(id_or_prefix))
            .cloned()
            .collect();
        match matches.len() {
            0 => Err(SessionError::NotFound {
                id: id_or_prefix.to_owned(),
                dir: self.dir.clone(),
                known: ids.into_iter().take(SUGGESTED_IDS).collect(),
            }),
            1 => Ok(matches.remove(0)),
            _ => Err(SessionError::Ambiguous {
                prefix: id_or_prefix.to_owned(),
                candidates: matches,
            }),
        }
    }

    /// The transcript file of the session named by `id_or_prefix`.
    pub fn path(&self, id_or_prefix: &str) -> Result<PathBuf, SessionError> {
        let id = self.resolve(id_or_prefix)?;
        Ok(self.file_of(&id))
    }

    /// Reads the session named by `id_or_prefix`.
    pub fn load(&self, id_or_prefix: &str) -> Result<Transcript, SessionError> {
        let id = self.resolve(id_or_prefix)?;
        Transcript::read(&id, &self.file_of(&id))
    }

    /// Appends to an existing session (to resume it). A last line cut off mid-write is first
    /// terminated so the entries written next stay readable.
    pub fn reopen(&self, id_or_prefix: &str) -> Result<SessionWriter, SessionError> {
        let id = self.resolve(id_or_prefix)?;
        let path = self.file_of(&id);
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|e| SessionError::io("open", &path, e))?;
        let cut =
            ends_without_newline(&mut file).map_err(|e| SessionError::io("read", &path, e))?;
        let mut writer = SessionWriter::new(id, path, file, &self.locks_dir())?;
        if cut {
            writer.write(b"\n")?;
        }
        Ok(writer)
    }

    /// Where writers note that they hold a transcript (beside the sessions, not among them).
    fn locks_dir(&self) -> PathBuf {
        self.dir
            .parent()
            .map(|root| root.join("locks"))
            .unwrap_or_else(|| self.dir.join("locks"))
    }

    /// The bytes of session `id`'s transcript, as written (to carry the session to another
    /// machine, which [`SessionStore::import`]s them).
    pub fn export(&self, id: &str) -> Result<Vec<u8>, SessionError> {
        // By the exact id, without listing the sessions: a consumer parks items in a directory
        // of thousands.
        validate_id(id)?;
        let path = self.file_of(id);
        std::fs::read(&path).map_err(|e| SessionError::io("read", &path, e))
    }

    /// Writes `transcript`, made on another machine, as session `id`'s (replacing a copy
    /// there, through a temporary file and a rename), its root worker now at `worker_path`
    /// (the meta line is rewritten: the other machine's path means nothing here), so that the
    /// session can be resumed here. The id is held to the rules of ids given here (it names a
    /// file).
    pub fn import(
        &self,
        id: &str,
        transcript: &[u8],
        worker_path: &Path,
    ) -> Result<(), SessionError> {
        validate_id(id)?;
        let path = self.file_of(id);
        let split = transcript
            .iter()
            .position(|&b| b == b'\n')
            .map_or(transcript.len(), |at| at + 1);
        let (first, rest) = transcript.split_at(split);
        // The meta line through the reader every command uses; the rest is kept as written
        // (lines this version does not know included: a newer one may read them, and every
        // line keeps its `at`).
        let mut meta = None;
        read_lines(
            &path,
            first,
            |kind| kind == EntryKind::Meta,
            |_, line| {
                if let Line::Entry(entry, at) = line
                    && let TranscriptEntry::Meta(found) = *entry
                {
                    meta = Some((found, at));
                }
                Ok(())
            },
        )?;
        let Some((mut meta, at)) = meta else {
            return Err(SessionError::io(
                "import",
                &path,
                std::io::Error::new(ErrorKind::InvalidData, "the transcript has no meta line"),
            ));
        };
        meta.worker_path = worker_path.to_owned();
        // The rewritten meta keeps the time its original was written at, and stays without
        // one when it had none (a transcript from before lines carried their time): the line
        // says when the session was started, not when it moved.
        let mut bytes = encode_line(&TranscriptEntry::Meta(meta), at)?.into_bytes();
        bytes.push(b'\n');
        bytes.extend_from_slice(rest);
        std::fs::create_dir_all(&self.dir).map_err(|e| SessionError::io("create", &self.dir, e))?;
        crate::replace_file(&path, &bytes).map_err(|e| SessionError::io("write", &path, e))
    }

    fn file_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.{EXTENSION}"))
    }

    fn create_file(&self, id: &str, meta: &SessionMeta) -> Result<SessionWriter, SessionError> {
        let path = self.file_of(id);
        let mut options = OpenOptions::new();
        options.append(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = match options.open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                return Err(SessionError::Exists { id: id.to_owned() });
            }
            Err(e) => return Err(SessionError::io("create", &path, e)),
        };
        let mut writer = SessionWriter::new(id.to_owned(), path, file, &self.locks_dir())?;
        writer.append(&TranscriptEntry::Meta(meta.clone()))?;
        Ok(writer)
    }

    fn ensure_dir(&self) -> Result<(), SessionError> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&self.dir)
            .map_err(|e| SessionError::io("create", &self.dir, e))
    }

    /// The directory's files by name, with the session id when the name is `<id>.jsonl`.
    fn dir_entries(&self) -> Result<Vec<(String, Option<String>)>, SessionError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(SessionError::io("read", &self.dir, e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| SessionError::io("read", &self.dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let is_file = entry.file_type().is_ok_and(|t| t.is_file());
            let id = name
                .strip_suffix(&format!(".{EXTENSION}"))
                .filter(|id| is_file && validate_id(id).is_ok())
                .map(str::to_owned);
            out.push((name, id));
        }
        out.sort();
        Ok(out)
    }

    fn ids(&self) -> Result<Vec<String>, SessionError> {
        Ok(self
            .dir_entries()?
            .into_iter()
            .filter_map(|(_, id)| id)
            .collect())
    }
}

/// Whether a non-empty file's last byte is not a newline.
fn ends_without_newline(file: &mut File) -> std::io::Result<bool> {
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Checks that `id` can name a transcript file and nothing else.
fn validate_id(id: &str) -> Result<(), SessionError> {
    let reason = if id.is_empty() {
        Some("it is empty")
    } else if id.len() > MAX_ID_LEN {
        Some("it is longer than 64 characters")
    } else if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Some("only letters, digits, `-` and `_` are allowed")
    } else if id.starts_with('-') {
        Some("it starts with `-`")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(SessionError::InvalidId {
            id: id.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}
