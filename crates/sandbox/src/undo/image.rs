//! What one path held at one moment, as the undo journal keeps it: nothing, a file (its
//! content's SHA-256, size and mode), a symbolic link (its target), a directory (its mode), or
//! something the sandbox never makes (a FIFO, a socket, a device). Reading an image never
//! follows a final symbolic link; the path is resolved beneath the zone's handle.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, MetadataExt, OpenOptions};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The state of one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Image {
    /// Nothing was there.
    Absent,
    /// A regular file; its content is the object named by `sha256` (for a before-image).
    File {
        /// Lower-case hex SHA-256 of the content.
        sha256: String,
        /// Its size in bytes.
        size: u64,
        /// Its permission bits.
        mode: u32,
    },
    /// A symbolic link, never followed.
    Symlink {
        /// The link's target, as stored.
        target: PathBuf,
    },
    /// A directory.
    Dir {
        /// Its permission bits.
        mode: u32,
    },
    /// A FIFO, socket or device node: neither kept nor restored.
    Special,
}

impl Image {
    /// Whether `self` and `other` are the same state for a conflict check: files by content
    /// and mode, links by target, directories by kind only (their entries are judged one by
    /// one, and a mode change of a directory is not worth refusing an undo for).
    pub fn same_as(&self, other: &Image) -> bool {
        match (self, other) {
            (Image::Dir { .. }, Image::Dir { .. }) => true,
            (a, b) => a == b,
        }
    }

    /// A word for messages: `absent`, `a file of 12 bytes`, …
    pub fn describe(&self) -> String {
        match self {
            Image::Absent => "absent".to_owned(),
            Image::File { size, .. } => format!("a file of {size} bytes"),
            Image::Symlink { target } => format!("a link to {}", target.display()),
            Image::Dir { .. } => "a directory".to_owned(),
            Image::Special => "a special file".to_owned(),
        }
    }
}

/// Reads the image of `rel` beneath `dir`. A regular file's content is hashed; when `keep` is
/// given it is also copied into it while hashing (one read). `rel` empty is the directory
/// itself.
pub(crate) fn read_image(dir: &Dir, rel: &Path, keep: Option<&mut dyn Write>) -> io::Result<Image> {
    let target = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    let meta = match dir.symlink_metadata(target) {
        Ok(meta) => meta,
        Err(err) if is_absent(&err) => return Ok(Image::Absent),
        Err(err) => return Err(err),
    };
    let mode = meta.mode() & 0o7777;
    if meta.is_dir() {
        return Ok(Image::Dir { mode });
    }
    if meta.is_symlink() {
        let target = dir.read_link_contents(target)?;
        return Ok(Image::Symlink { target });
    }
    if !meta.is_file() {
        return Ok(Image::Special);
    }
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    let file = dir.open_with(target, &options)?;
    let (sha256, size) = hash_copy(file, keep)?;
    Ok(Image::File { sha256, size, mode })
}

/// Hashes everything `reader` gives, copying it into `keep` too; the hex digest and size.
pub(crate) fn hash_copy(
    mut reader: impl Read,
    mut keep: Option<&mut dyn Write>,
) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut size = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        hasher.update(&buf[..n]);
        if let Some(keep) = keep.as_deref_mut() {
            keep.write_all(&buf[..n])?;
        }
        size += n as u64;
    }
    let digest = hasher.finalize();
    let hex = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    Ok((hex, size))
}

/// Whether an error means nothing is at the path (or a parent is not a directory).
pub(crate) fn is_absent(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error().map(rustix::io::Errno::from_raw_os_error),
        Some(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR)
    )
}
