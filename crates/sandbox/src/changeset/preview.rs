//! What one change looks like before and after, for the approval's preview: text files whole
//! (up to [`MAX_TEXT_PREVIEW_BYTES`]), other files by size and SHA-256, directories and links
//! by what they are. "Before" is read from the zone through its handle, "after" from the
//! run's upper directory.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, MetadataExt};
use golem_protocol::ToolError;

use super::scan::{open_file, read_link};
use super::{Change, ChangeKind, Changeset};
use crate::errors::{Op, io_error};
use crate::sandbox::Sandbox;

/// The largest file a preview shows as text; larger ones (and any that is not UTF-8 or holds
/// a NUL byte) are shown by size and hash.
pub const MAX_TEXT_PREVIEW_BYTES: u64 = 1 << 20;

/// One side of a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Nothing is there.
    Absent,
    /// A directory.
    Directory {
        /// Its mode.
        mode: u32,
    },
    /// A text file.
    Text {
        /// Its content.
        text: String,
        /// Its mode.
        mode: u32,
    },
    /// Any other regular file.
    Binary {
        /// Its size in bytes.
        size: u64,
        /// The SHA-256 of its content, in lowercase hex.
        sha256: String,
        /// Its mode.
        mode: u32,
    },
    /// A symbolic link.
    Symlink {
        /// Its target.
        target: PathBuf,
    },
    /// A FIFO, socket or device node (only ever what the zone had).
    Special,
}

/// A change's two sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// What the zone has there now.
    pub before: Content,
    /// What it will have once the change is applied.
    pub after: Content,
}

impl Changeset {
    /// The two sides of `change` (one of this changeset's), read now: the zone through
    /// `sandbox`, the new content from the run's layer.
    pub fn preview(&self, sandbox: &Sandbox, change: &Change) -> Result<Preview, ToolError> {
        let vpath = change.virtual_path();
        let zone = sandbox.zone_for(change.path(), "preview")?;
        let rel = change.path().relative();
        let before = match zone.dir().symlink_metadata(rel) {
            Ok(meta) => {
                describe(zone.dir(), rel, &meta).map_err(|e| io_error(&e, Op::Read, &vpath))?
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => Content::Absent,
            Err(err) => return Err(io_error(&err, Op::Read, &vpath)),
        };
        let after = match change.kind() {
            ChangeKind::Delete { .. } => Content::Absent,
            ChangeKind::CreateDir { mode } | ChangeKind::SetMode { mode, dir: true } => {
                Content::Directory { mode: *mode }
            }
            ChangeKind::Symlink { target, .. } => Content::Symlink {
                target: target.clone(),
            },
            ChangeKind::CreateFile { mode, .. }
            | ChangeKind::WriteFile { mode, .. }
            | ChangeKind::SetMode { mode, dir: false } => {
                let upper = self.upper(change.path()).ok_or_else(|| {
                    io_error(&io::Error::from(io::ErrorKind::NotFound), Op::Read, &vpath)
                })?;
                file_content(upper, rel, *mode).map_err(|e| io_error(&e, Op::Read, &vpath))?
            }
        };
        Ok(Preview { before, after })
    }
}

/// What the entry at `rel` of `dir` is (`meta` is its `lstat`).
fn describe(dir: &Dir, rel: &Path, meta: &cap_std::fs::Metadata) -> io::Result<Content> {
    let mode = meta.mode() & 0o7777;
    if meta.is_dir() {
        Ok(Content::Directory { mode })
    } else if meta.is_symlink() {
        Ok(Content::Symlink {
            target: read_link(dir, rel)?,
        })
    } else if meta.is_file() {
        file_content(dir, rel, mode)
    } else {
        Ok(Content::Special)
    }
}

/// The regular file at `rel` of `dir`: its text when it is small UTF-8 text, else its size
/// and hash (streamed, never read whole).
fn file_content(dir: &Dir, rel: &Path, mode: u32) -> io::Result<Content> {
    let mut file = open_file(dir, rel)?;
    let mut head = Vec::new();
    (&mut file)
        .take(MAX_TEXT_PREVIEW_BYTES + 1)
        .read_to_end(&mut head)?;
    if head.len() as u64 <= MAX_TEXT_PREVIEW_BYTES
        && !head.contains(&0)
        && let Ok(text) = String::from_utf8(head.clone())
    {
        return Ok(Content::Text { text, mode });
    }
    let (sha256, size) = crate::undo::hash_copy(io::Cursor::new(head).chain(file), None)?;
    Ok(Content::Binary { size, sha256, mode })
}
