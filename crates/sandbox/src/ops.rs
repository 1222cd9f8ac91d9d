//! File operations on single entries: read, stat, list one directory, create directories,
//! remove a file, rename. Atomic writes are in `write.rs`, whole trees in `tree.rs` and
//! `walk.rs`. Every one goes through a zone's directory handle, so the kernel resolves the
//! path beneath it (cap-std; `openat2(RESOLVE_BENEATH)` on Linux); nothing here joins a host
//! path.

use std::ffi::OsStr;
use std::io::{self, Read};
use std::path::Path;

use cap_fs_ext::OpenOptionsSyncExt;
use cap_std::fs::{Dir, File, Metadata, OpenOptions};
use golem_protocol::{ToolError, ToolErrorCode};
use rustix::fs::RenameFlags;
use rustix::io::Errno;

use crate::entry::EntryInfo;
use crate::errors::{Op, io_error};
use crate::sandbox::{Sandbox, Zone};
use crate::undo::Touch;
use crate::write::sync_dir;
use crate::zone_path::ZonePath;

/// The largest file [`Sandbox::read`] reads whole (1 GiB); larger ones are read in part with
/// [`Sandbox::read_prefix`].
pub const MAX_READ_BYTES: u64 = 1 << 30;

impl Sandbox {
    /// Reads a whole regular file (at most [`MAX_READ_BYTES`]).
    pub fn read(&self, p: &ZonePath) -> Result<Vec<u8>, ToolError> {
        let (file, meta) = self.open_regular(p)?;
        if meta.len() > MAX_READ_BYTES {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{} is too large to read whole ({} bytes, at most {MAX_READ_BYTES}); read part of it",
                    p.virtual_path(),
                    meta.len()
                ),
            ));
        }
        // One byte more than the limit tells a file that grew meanwhile.
        let (bytes, _) = read_up_to(file, meta.len(), MAX_READ_BYTES + 1, p)?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{} grew past {MAX_READ_BYTES} bytes while being read",
                    p.virtual_path()
                ),
            ));
        }
        Ok(bytes)
    }

    /// Reads at most `max_bytes` of a regular file; also returns the file's size when opened.
    pub fn read_prefix(&self, p: &ZonePath, max_bytes: u64) -> Result<(Vec<u8>, u64), ToolError> {
        let (file, meta) = self.open_regular(p)?;
        read_up_to(file, meta.len(), max_bytes, p)
    }

    /// Metadata of the entry itself (a symbolic link is reported, not followed).
    pub fn metadata(&self, p: &ZonePath) -> Result<EntryInfo, ToolError> {
        let Some(zone) = self.zone_of(p)? else {
            return Ok(EntryInfo::virtual_dir());
        };
        let meta = stat(zone, p)?;
        Ok(EntryInfo::from_metadata(&meta))
    }

    /// Whether the entry exists (a symbolic link exists even when its target does not). A path
    /// that leads outside its zone is still an error.
    pub fn exists(&self, p: &ZonePath) -> Result<bool, ToolError> {
        let Some(zone) = self.zone_of(p)? else {
            return Ok(true);
        };
        match zone.dir().symlink_metadata(p.rel_or_dot()) {
            Ok(_) => Ok(true),
            Err(err) => match err.raw_os_error().map(Errno::from_raw_os_error) {
                Some(Errno::NOENT | Errno::NOTDIR) => Ok(false),
                Some(_) | None => Err(io_error(&err, Op::Stat, &p.virtual_path())),
            },
        }
    }

    /// The entries of one directory, sorted by name (`/` lists the zones). Symbolic links are
    /// listed as links; the directory itself may be reached through a link inside its zone.
    pub fn read_dir(&self, p: &ZonePath) -> Result<Vec<(String, EntryInfo)>, ToolError> {
        let Some(zone) = self.zone_of(p)? else {
            return Ok(self.zone_entries());
        };
        let vpath = p.virtual_path();
        let dir = open_dir(zone, p.relative(), &vpath, Op::List)?;
        let mut out = Vec::new();
        let entries = dir
            .entries()
            .map_err(|err| io_error(&err, Op::List, &vpath))?;
        for entry in entries {
            let entry = entry.map_err(|err| io_error(&err, Op::List, &vpath))?;
            match entry.metadata() {
                Ok(meta) => out.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    EntryInfo::from_metadata(&meta),
                )),
                // Removed between listing and stat: it no longer exists.
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => return Err(io_error(&err, Op::List, &vpath)),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Creates a directory and its missing parents (an existing directory is fine).
    pub fn create_dir_all(&self, p: &ZonePath) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || self.create_dir_all_now(p))
    }

    fn create_dir_all_now(&self, p: &ZonePath) -> Result<(), ToolError> {
        self.check_writable(p)?;
        let zone = self.zone_for(p, "create")?;
        if p.is_zone_root() {
            return Ok(());
        }
        self.protection(p).check()?;
        zone.dir()
            .create_dir_all(p.relative())
            .map_err(|err| io_error(&err, Op::CreateDir, &p.virtual_path()))
    }

    /// Removes a file or a symbolic link (never its target). A directory is refused.
    pub fn remove_file(&self, p: &ZonePath) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || self.remove_file_now(p))
    }

    fn remove_file_now(&self, p: &ZonePath) -> Result<(), ToolError> {
        self.check_writable(p)?;
        let zone = self.zone_for(p, "delete")?;
        let vpath = p.virtual_path();
        let (parent_rel, name) = split(p, "delete")?;
        self.removal_protection(p).check()?;
        let parent = open_parent(zone, p, parent_rel, "")?;
        self.check_opened(p, &parent, name)?;
        let meta = parent
            .symlink_metadata(name)
            .map_err(|err| io_error(&err, Op::Delete, &vpath))?;
        if meta.is_dir() {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!(
                    "cannot delete {vpath} as a file: it is a directory; delete it recursively"
                ),
            ));
        }
        parent
            .remove_file(name)
            .map_err(|err| io_error(&err, Op::Delete, &vpath))
    }

    /// Moves `from` to `to` (files, directories and symbolic links, across zones too). Without
    /// `overwrite` an existing destination is refused atomically (`RENAME_NOREPLACE`). Across
    /// file systems the entry is copied, then the source removed.
    pub fn rename(&self, from: &ZonePath, to: &ZonePath, overwrite: bool) -> Result<(), ToolError> {
        self.recorded(&[Touch::Move(from, to)], || {
            self.rename_now(from, to, overwrite)
        })
    }

    fn rename_now(&self, from: &ZonePath, to: &ZonePath, overwrite: bool) -> Result<(), ToolError> {
        self.check_writable(from)?;
        self.check_writable(to)?;
        let from_zone = self.zone_for(from, "move")?;
        let to_zone = self.zone_for(to, "move to")?;
        let (from_vpath, to_vpath) = (from.virtual_path(), to.virtual_path());
        let (from_parent_rel, from_name) = split(from, "move")?;
        let (to_parent_rel, to_name) = split(to, "replace")?;
        if from == to {
            return Ok(());
        }
        if from.zone_name() == to.zone_name() && to.relative().starts_with(from.relative()) {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!("cannot move {from_vpath} into itself ({to_vpath})"),
            ));
        }
        self.move_protection(from, to).check()?;
        let from_parent = open_parent(from_zone, from, from_parent_rel, "")?;
        let to_parent = open_parent(to_zone, to, to_parent_rel, " (create it first)")?;
        self.check_opened(from, &from_parent, from_name)?;
        self.check_opened(to, &to_parent, to_name)?;
        from_parent
            .symlink_metadata(from_name)
            .map_err(|err| io_error(&err, Op::Move, &from_vpath))?;
        let exists_error = || {
            ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "cannot move {from_vpath} to {to_vpath}: {to_vpath} already exists; \
                     pass overwrite: true to replace it"
                ),
            )
        };
        let flags = if overwrite {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        let mut result =
            rustix::fs::renameat_with(&from_parent, from_name, &to_parent, to_name, flags);
        if result == Err(Errno::INVAL) && !overwrite {
            // The file system may not support RENAME_NOREPLACE: check, then rename.
            if to_parent.symlink_metadata(to_name).is_ok() {
                return Err(exists_error());
            }
            result = rustix::fs::renameat(&from_parent, from_name, &to_parent, to_name);
        }
        match result {
            Ok(()) => {
                sync_dir(&to_parent);
                Ok(())
            }
            Err(Errno::EXIST) if !overwrite => Err(exists_error()),
            Err(Errno::XDEV) => self.move_across(
                (&from_parent, from_name, &from_vpath),
                (&to_parent, to_name, &to_vpath),
                overwrite,
            ),
            Err(Errno::INVAL) => Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!(
                    "cannot move {from_vpath} to {to_vpath}: a directory cannot move into itself"
                ),
            )),
            Err(errno) => Err(io_error(&io::Error::from(errno), Op::Move, &from_vpath)),
        }
    }

    /// Opens a regular file for reading; anything else is refused before it is opened (opening
    /// a FIFO blocks, opening a device can have effects of its own). The type is checked again
    /// on the open file, which is opened non-blocking, in case the entry was replaced between.
    fn open_regular(&self, p: &ZonePath) -> Result<(File, Metadata), ToolError> {
        let zone = self.zone_for(p, "read")?;
        let vpath = p.virtual_path();
        let before = zone
            .dir()
            .metadata(p.rel_or_dot())
            .map_err(|err| io_error(&err, Op::Read, &vpath))?;
        check_regular(&before, &vpath)?;
        let mut options = OpenOptions::new();
        options.read(true).nonblock(true);
        let file = zone
            .dir()
            .open_with(p.rel_or_dot(), &options)
            .map_err(|err| io_error(&err, Op::Read, &vpath))?;
        let meta = file
            .metadata()
            .map_err(|err| io_error(&err, Op::Read, &vpath))?;
        check_regular(&meta, &vpath)?;
        Ok((file, meta))
    }

    /// `/` as a directory listing: one directory per zone.
    fn zone_entries(&self) -> Vec<(String, EntryInfo)> {
        self.zones()
            .iter()
            .map(|zone| {
                let info = zone
                    .dir()
                    .dir_metadata()
                    .map(|meta| EntryInfo::from_metadata(&meta))
                    .unwrap_or_else(|_| EntryInfo::virtual_dir());
                (zone.name().to_owned(), info)
            })
            .collect()
    }
}

/// Reads at most `max_bytes` from `file` (of size `len` when opened); returns the bytes and
/// `len`. Memory is reserved for what the size announces, up to a bound, never blindly (a
/// sparse file may claim terabytes).
fn read_up_to(
    file: File,
    len: u64,
    max_bytes: u64,
    p: &ZonePath,
) -> Result<(Vec<u8>, u64), ToolError> {
    const MAX_RESERVE: u64 = 64 << 20;
    let reserve = usize::try_from(len.min(max_bytes).min(MAX_RESERVE)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(reserve);
    file.take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|err| io_error(&err, Op::Read, &p.virtual_path()))?;
    Ok((bytes, len))
}

/// `lstat` beneath the zone.
pub(crate) fn stat(zone: &Zone, p: &ZonePath) -> Result<Metadata, ToolError> {
    zone.dir()
        .symlink_metadata(p.rel_or_dot())
        .map_err(|err| io_error(&err, Op::Stat, &p.virtual_path()))
}

/// Opens a directory beneath the zone (following links that stay inside it).
pub(crate) fn open_dir(zone: &Zone, rel: &Path, vpath: &str, op: Op) -> Result<Dir, ToolError> {
    let rel = if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    };
    zone.dir()
        .open_dir(rel)
        .map_err(|err| io_error(&err, op, vpath))
}

/// The parent directory of `p`, opened beneath its zone; `hint` ends the message when it is
/// missing.
pub(crate) fn open_parent(
    zone: &Zone,
    p: &ZonePath,
    parent_rel: &Path,
    hint: &str,
) -> Result<Dir, ToolError> {
    let parent_vpath = p
        .parent()
        .map(|parent| parent.virtual_path())
        .unwrap_or_default();
    open_dir(zone, parent_rel, &parent_vpath, Op::Stat).map_err(|mut err| {
        if err.code == ToolErrorCode::FileNotFound {
            err.message = format!("the directory {parent_vpath} does not exist{hint}");
        }
        err
    })
}

/// Splits a path in a zone into its parent and last component; a zone root is refused.
pub(crate) fn split<'a>(p: &'a ZonePath, what: &str) -> Result<(&'a Path, &'a OsStr), ToolError> {
    match (p.relative().parent(), p.relative().file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        (None, _) | (_, None) => Err(ToolError::new(
            ToolErrorCode::PermissionDenied,
            format!(
                "cannot {what} {}: it is the root of its zone",
                p.virtual_path()
            ),
        )),
    }
}

/// Refuses anything but a regular file for reading.
fn check_regular(meta: &Metadata, vpath: &str) -> Result<(), ToolError> {
    if meta.is_dir() {
        return Err(ToolError::new(
            ToolErrorCode::InvalidPath,
            format!("cannot read {vpath}: it is a directory; list it instead"),
        ));
    }
    if !meta.is_file() {
        return Err(ToolError::new(
            ToolErrorCode::InvalidPath,
            format!("cannot read {vpath}: it is not a regular file (a FIFO, socket or device)"),
        ));
    }
    Ok(())
}
