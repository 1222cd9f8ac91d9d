//! Changesets: what a jailed run changed in the `rw` zones it saw through copy-on-write layers
//! ([`crate::jail::Jail::run_changeset`]), held back from the zones until the caller applies
//! it (after the gate) or discards it.
//!
//! **Reading it** (`scan.rs`). Each `rw` zone was an overlay: the zone itself the lower layer,
//! a private directory the upper one. The upper directory holds exactly what the run changed:
//! new and modified files (whole), copies of the directories on their way, whiteouts (a
//! character device 0/0) for what was deleted, and opaque directories (`user.overlay.opaque`:
//! a directory removed and made again, hiding everything the zone had there). The scan walks
//! the upper directory only, comparing each entry with the zone at the same place (through the
//! zone's handle), so it costs in proportion to the changes, not to the zone: a deleted
//! directory is listed in the zone (each entry below it is a deletion), a file whose content
//! and mode are unchanged (`touch`, a rewrite of the same bytes) is no change, and a file with
//! the same content but other permissions is a mode change. The zone root's own attributes
//! are not part of a changeset.
//!
//! **The order** is the order of application: per zone (in the sandbox's order), a walk of
//! the changed tree by name (bytewise), each directory before what is in it; whatever the zone
//! had at a path that changes kind (a file that became a directory, a directory removed) is
//! deleted first, a removed directory's entries before the directory itself; in an opaque
//! directory the zone's entries that are gone come before the new ones.
//!
//! **Refused** (the whole changeset, with the path and the reason; nothing is applied):
//! FIFOs, sockets and device nodes (other than whiteouts); a set-user-ID, set-group-ID or
//! sticky bit the change adds (a new directory may inherit set-group-ID from its parent);
//! symbolic links to absolute paths, or whose relative target, resolved over the zone as it
//! would be after the changes (following the links on the way), leaves the zone; names that
//! cannot be a virtual path (not UTF-8, control characters, backslashes); and protected paths
//! (`crate::Sandbox::protection`), including a directory the changes would turn into a git
//! directory (`git_dirs.rs`, judged against the zone as it would be after them). Hard links the run made between files are kept as separate
//! files (each file's content is applied on its own). A directory the run renamed does not
//! show as a rename: the overlay refuses to rename a directory of the zone (`EXDEV`), and
//! programs then copy and delete (`mv` does).
//!
//! **Applying** (`apply.rs`) goes through the [`crate::Sandbox`] (beneath its zone handles,
//! with its checks of `rw` and protection, `ops.rs`), change by change in the order above;
//! each file is written to a temporary file and renamed into place, so each file is either old
//! or new, never torn. Directories get their final modes last (deepest first), so that a
//! directory made read-only can still be filled first. [`Changeset::discard`] (or dropping
//! the changeset) removes the upper directories. Applying, previewing and discarding do
//! blocking file I/O: call them off the async threads (`spawn_blocking`).

mod apply;
mod git_dirs;
mod ops;
mod preview;
mod scan;
#[cfg(test)]
mod tests;

use std::fmt;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::zone::ZoneOperation;
use crate::zone_path::ZonePath;

pub use apply::ApplyError;
pub use preview::{Content, MAX_TEXT_PREVIEW_BYTES, Preview};

/// One change to a zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    path: ZonePath,
    kind: ChangeKind,
}

/// What a [`Change`] does. Modes are the permission bits (`0o7777`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    /// A new directory.
    CreateDir {
        /// Its mode.
        mode: u32,
    },
    /// A new regular file.
    CreateFile {
        /// Its mode.
        mode: u32,
        /// Its size in bytes.
        size: u64,
    },
    /// New content for an existing entry (a file, or a link or special file that becomes one).
    WriteFile {
        /// The file's mode afterwards.
        mode: u32,
        /// Its size in bytes afterwards.
        size: u64,
    },
    /// The same content (or directory) with other permissions.
    SetMode {
        /// The new mode.
        mode: u32,
        /// Whether the entry is a directory.
        dir: bool,
    },
    /// A symbolic link (its target is never followed when it is made).
    Symlink {
        /// What it points to: relative, inside the zone.
        target: PathBuf,
        /// Whether it replaces an entry (a link with another target, a file) rather than
        /// being new.
        replaces: bool,
    },
    /// The entry removed: a file, a link (never its target), or a directory whose entries are
    /// removed by the changes before it.
    Delete {
        /// Whether the entry is a directory.
        dir: bool,
    },
}

impl Change {
    /// Where the change happens.
    pub fn path(&self) -> &ZonePath {
        &self.path
    }

    /// The virtual path (`/<zone>/<path>`).
    pub fn virtual_path(&self) -> String {
        self.path.virtual_path()
    }

    /// What it does.
    pub fn kind(&self) -> &ChangeKind {
        &self.kind
    }

    /// The zone operation it is, for the zone's approval table: new entries are `create`,
    /// changed ones (content, mode, a replaced link) `write`, removals `delete`.
    pub fn operation(&self) -> ZoneOperation {
        match self.kind {
            ChangeKind::CreateDir { .. }
            | ChangeKind::CreateFile { .. }
            | ChangeKind::Symlink {
                replaces: false, ..
            } => ZoneOperation::Create,
            ChangeKind::WriteFile { .. }
            | ChangeKind::SetMode { .. }
            | ChangeKind::Symlink { replaces: true, .. } => ZoneOperation::Write,
            ChangeKind::Delete { .. } => ZoneOperation::Delete,
        }
    }
}

impl fmt::Display for Change {
    /// `create /work/a.txt (file, 0644, 12 bytes)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.virtual_path();
        match &self.kind {
            ChangeKind::CreateDir { mode } => write!(f, "create {path} (directory, {mode:04o})"),
            ChangeKind::CreateFile { mode, size } => {
                write!(f, "create {path} (file, {mode:04o}, {size} bytes)")
            }
            ChangeKind::WriteFile { mode, size } => {
                write!(f, "write {path} ({mode:04o}, {size} bytes)")
            }
            ChangeKind::SetMode { mode, .. } => write!(f, "chmod {path} ({mode:04o})"),
            ChangeKind::Symlink { target, .. } => {
                write!(f, "link {path} -> {}", target.display())
            }
            ChangeKind::Delete { dir: true } => write!(f, "delete {path} (directory)"),
            ChangeKind::Delete { dir: false } => write!(f, "delete {path}"),
        }
    }
}

/// Why a run's changes cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangesetError {
    /// One change is not allowed, so none is applied.
    #[error("the changes were refused: {path} {reason}")]
    Refused {
        /// The virtual path of the change.
        path: String,
        /// Why (it reads after the path: `is a FIFO …`, `protected: …`).
        reason: String,
    },
    /// The changes could not be read.
    #[error("the changes could not be read: {0}")]
    Scan(String),
}

/// What a jailed run changed in its `rw` zones, not yet applied. It holds the copy-on-write
/// layers the changes are read from until it is applied, discarded or dropped.
#[derive(Debug)]
pub struct Changeset {
    changes: Vec<Change>,
    /// The upper directory of each zone that has one, by zone name.
    uppers: Vec<(String, Dir)>,
    layers: Layers,
}

impl Changeset {
    /// Reads the changes out of a finished run's `layers` (every process of the run gone),
    /// judged against `sandbox` (the jail's).
    pub(crate) fn scan(
        sandbox: &crate::Sandbox,
        layers: Layers,
    ) -> Result<Changeset, ChangesetError> {
        scan::scan(sandbox, layers)
    }

    /// The changes, in the order they are applied.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Whether the run changed nothing.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The private directory on the host holding the run's layers (for diagnostics; never
    /// shown to the program, nor to a model).
    pub fn layers_dir(&self) -> Option<&Path> {
        self.layers.dir.as_ref().map(tempfile::TempDir::path)
    }

    /// Removes the layers without applying anything (the zones stay as they were).
    pub fn discard(mut self) -> std::io::Result<()> {
        self.uppers.clear();
        self.layers.remove()
    }

    /// The upper directory of `path`'s zone.
    fn upper(&self, path: &ZonePath) -> Option<&Dir> {
        let zone = path.zone_name()?;
        self.uppers
            .iter()
            .find(|(name, _)| name == zone)
            .map(|(_, dir)| dir)
    }
}

/// The private directory holding the copy-on-write layers of one run (an upper and a work
/// directory per `rw` zone), removed when dropped.
#[derive(Debug)]
pub(crate) struct Layers {
    dir: Option<tempfile::TempDir>,
    /// Each layered zone's name and upper directory.
    uppers: Vec<(String, PathBuf)>,
}

impl Layers {
    /// The layers in `dir`: `uppers` names each zone's upper directory.
    pub(crate) fn new(dir: tempfile::TempDir, uppers: Vec<(String, PathBuf)>) -> Layers {
        Layers {
            dir: Some(dir),
            uppers,
        }
    }

    /// Each layered zone's name and upper directory.
    pub(crate) fn uppers(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.uppers
            .iter()
            .map(|(name, path)| (name.as_str(), path.as_path()))
    }

    /// Removes the directory. What a run left there may be unreadable to its owner (the
    /// overlay's work directory is mode 0, and so may be a directory the program made so), so
    /// each directory is opened up before it is emptied.
    fn remove(&mut self) -> std::io::Result<()> {
        match self.dir.take() {
            Some(dir) => {
                let path = dir.keep();
                remove_tree(&path)
            }
            None => Ok(()),
        }
    }
}

impl Drop for Layers {
    fn drop(&mut self) {
        if let Err(err) = self.remove() {
            tracing::warn!(%err, "could not remove a run's copy-on-write layers");
        }
    }
}

/// Removes `root` and everything in it, never following a link, making each directory
/// accessible to its owner first. Uses a stack, not recursion (a run may nest deeply).
fn remove_tree(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![(root.to_path_buf(), false)];
    while let Some((path, listed)) = stack.pop() {
        if listed {
            std::fs::remove_dir(&path)?;
            continue;
        }
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err),
        };
        if !meta.is_dir() {
            std::fs::remove_file(&path)?;
            continue;
        }
        if meta.permissions().mode() & 0o700 != 0o700 {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700))?;
        }
        stack.push((path.clone(), true));
        for entry in std::fs::read_dir(&path)? {
            stack.push((entry?.path(), false));
        }
    }
    Ok(())
}
