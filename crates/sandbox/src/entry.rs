//! What the sandbox reports about a directory entry: its kind, size and modification time,
//! with `symlink_metadata` semantics (a symbolic link is reported as itself, never followed).

use std::time::SystemTime;

use cap_std::fs::{FileType, FileTypeExt, Metadata};

/// The kind of a directory entry. Only [`EntryKind::File`] is ever opened for reading; the
/// special kinds are reported from their metadata alone (opening a FIFO would block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A symbolic link (not followed).
    Symlink,
    /// A named pipe (FIFO).
    Fifo,
    /// A UNIX domain socket.
    Socket,
    /// A character or block device node (and, never on Linux, a file type the kernel does
    /// not name: it is special, so it is treated like a device).
    Device,
}

impl EntryKind {
    /// `file`, `directory`, `symlink`, `fifo`, `socket` or `device`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Directory => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Fifo => "fifo",
            EntryKind::Socket => "socket",
            EntryKind::Device => "device",
        }
    }

    pub(crate) fn from_file_type(file_type: FileType) -> EntryKind {
        if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_dir() {
            EntryKind::Directory
        } else if file_type.is_file() {
            EntryKind::File
        } else if file_type.is_fifo() {
            EntryKind::Fifo
        } else if file_type.is_socket() {
            EntryKind::Socket
        } else {
            // Character and block devices, and the type cap-std calls unknown.
            EntryKind::Device
        }
    }
}

/// Metadata of one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryInfo {
    /// File, directory, symlink, FIFO, socket or device.
    pub kind: EntryKind,
    /// Size in bytes (for a symlink, the length of its target).
    pub size: u64,
    /// Last modification, when the file system records it.
    pub modified: Option<SystemTime>,
}

impl EntryInfo {
    pub(crate) fn from_metadata(meta: &Metadata) -> EntryInfo {
        EntryInfo {
            kind: EntryKind::from_file_type(meta.file_type()),
            size: meta.len(),
            modified: meta.modified().ok().map(|time| time.into_std()),
        }
    }

    /// The entry of a directory with no metadata of its own (`/`).
    pub(crate) fn virtual_dir() -> EntryInfo {
        EntryInfo {
            kind: EntryKind::Directory,
            size: 0,
            modified: None,
        }
    }
}
