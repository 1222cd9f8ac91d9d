//! The [`Sandbox`] operations a changeset needs beyond the public ones: put a file in place
//! (with its mode, replacing the entry or only creating it), set an entry's mode, put a
//! symbolic link in place, remove an empty directory. Like every sandbox operation they check
//! that the zone is `rw` and that the path is not protected, open the parent directory beneath
//! the zone's handle, and check the directory actually opened; none follows a final link.
//! Files and links are made under a temporary name beside the target and renamed into place,
//! so the entry is the old one or the new one, never something in between.

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::path::Path;

use cap_std::fs::{Dir, OpenOptions, Permissions, PermissionsExt};
use golem_protocol::{ToolError, ToolErrorCode};
use rustix::fs::{AtFlags, RenameFlags};
use rustix::io::Errno;

use crate::errors::{Op, io_error};
use crate::ops::{open_parent, split};
use crate::sandbox::Sandbox;
use crate::undo::Touch;
use crate::write::{sync_dir, temp_name};
use crate::zone_path::ZonePath;

impl Sandbox {
    /// The parent directory of `p`, opened beneath its zone, and `p`'s name in it, after the
    /// checks every change passes: `rw` zone, not protected (for a removal, nothing in the
    /// tree), and the directory actually opened not protected either.
    fn open_for_change<'a>(
        &self,
        p: &'a ZonePath,
        what: &str,
        removal: bool,
    ) -> Result<(Dir, &'a OsStr), ToolError> {
        self.check_writable(p)?;
        let zone = self.zone_for(p, what)?;
        let protection = if removal {
            self.removal_protection(p)
        } else {
            self.protection(p)
        };
        protection.check()?;
        let (parent_rel, name) = split(p, what)?;
        let parent = open_parent(zone, p, parent_rel, "")?;
        self.check_opened(p, &parent, name)?;
        Ok((parent, name))
    }

    /// Puts a regular file with `content` and exactly `mode` at `p`: replacing the entry there
    /// (a file, a link — never written through —, a special file) when `replace`, else only
    /// where nothing is (`EXECUTION_ERROR` otherwise, nothing changed). A directory is never
    /// replaced.
    pub(crate) fn put_file(
        &self,
        p: &ZonePath,
        content: &mut dyn Read,
        mode: u32,
        replace: bool,
    ) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || {
            self.put_file_now(p, content, mode, replace)
        })
    }

    fn put_file_now(
        &self,
        p: &ZonePath,
        content: &mut dyn Read,
        mode: u32,
        replace: bool,
    ) -> Result<(), ToolError> {
        let (parent, name) = self.open_for_change(p, "write", false)?;
        let vpath = p.virtual_path();
        check_target(&parent, name, &vpath, replace)?;
        let temp = temp_name();
        let result = write_temp(&parent, &temp, content, mode)
            .and_then(|()| rename_into(&parent, &temp, name, replace));
        if result.is_err() {
            let _ = parent.remove_file(&temp);
        }
        result.map_err(|err| rename_error(&err, &vpath, replace))?;
        sync_dir(&parent);
        Ok(())
    }

    /// Puts a symbolic link to `target` at `p` (replacing a non-directory entry when
    /// `replace`). The target is stored as given and never followed here.
    pub(crate) fn put_symlink(
        &self,
        p: &ZonePath,
        target: &Path,
        replace: bool,
    ) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || {
            self.put_symlink_now(p, target, replace)
        })
    }

    fn put_symlink_now(&self, p: &ZonePath, target: &Path, replace: bool) -> Result<(), ToolError> {
        let (parent, name) = self.open_for_change(p, "link", false)?;
        let vpath = p.virtual_path();
        check_target(&parent, name, &vpath, replace)?;
        let temp = temp_name();
        let result = rustix::fs::symlinkat(target, &parent, temp.as_str())
            .map_err(io::Error::from)
            .and_then(|()| rename_into(&parent, &temp, name, replace));
        if result.is_err() {
            let _ = parent.remove_file(&temp);
        }
        result.map_err(|err| rename_error(&err, &vpath, replace))?;
        sync_dir(&parent);
        Ok(())
    }

    /// Sets the mode of the file or directory at `p` (a symbolic link is refused: links have
    /// no mode of their own).
    pub(crate) fn set_mode(&self, p: &ZonePath, mode: u32) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || self.set_mode_now(p, mode))
    }

    fn set_mode_now(&self, p: &ZonePath, mode: u32) -> Result<(), ToolError> {
        let (parent, name) = self.open_for_change(p, "change the mode of", false)?;
        let vpath = p.virtual_path();
        let meta = parent
            .symlink_metadata(name)
            .map_err(|err| io_error(&err, Op::Write, &vpath))?;
        if meta.is_symlink() {
            return Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!("cannot change the mode of {vpath}: it is a symbolic link"),
            ));
        }
        parent
            .set_permissions(name, Permissions::from_mode(mode))
            .map_err(|err| io_error(&err, Op::Write, &vpath))
    }

    /// Removes the empty directory at `p`; one that is not empty is refused (nothing is
    /// removed).
    pub(crate) fn remove_empty_dir(&self, p: &ZonePath) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || self.remove_empty_dir_now(p))
    }

    fn remove_empty_dir_now(&self, p: &ZonePath) -> Result<(), ToolError> {
        let (parent, name) = self.open_for_change(p, "delete", true)?;
        parent
            .remove_dir(name)
            .map_err(|err| io_error(&err, Op::Delete, &p.virtual_path()))?;
        sync_dir(&parent);
        Ok(())
    }
}

/// Refuses to put an entry over a directory, or over anything without `replace`.
fn check_target(parent: &Dir, name: &OsStr, vpath: &str, replace: bool) -> Result<(), ToolError> {
    match parent.symlink_metadata(name) {
        Ok(meta) if meta.is_dir() => Err(ToolError::new(
            ToolErrorCode::InvalidPath,
            format!("cannot write {vpath}: it is a directory"),
        )),
        Ok(_) if !replace => Err(exists_error(vpath)),
        Ok(_) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(io_error(&err, Op::Write, vpath)),
    }
}

fn exists_error(vpath: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!("cannot create {vpath}: it already exists (it may have just been created)"),
    )
}

fn rename_error(err: &io::Error, vpath: &str, replace: bool) -> ToolError {
    if !replace && err.raw_os_error() == Some(Errno::EXIST.raw_os_error()) {
        exists_error(vpath)
    } else {
        io_error(err, Op::Write, vpath)
    }
}

/// Creates `name` exclusively in `parent` with `content`, sets exactly `mode` (whatever the
/// umask), and syncs it.
fn write_temp(parent: &Dir, name: &str, content: &mut dyn Read, mode: u32) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = parent.open_with(name, &options)?;
    file.set_permissions(Permissions::from_mode(0o600))?;
    io::copy(content, &mut file)?;
    file.flush()?;
    file.set_permissions(Permissions::from_mode(mode))?;
    file.sync_all()
}

/// Renames `temp` to `name` in `dir`: over whatever non-directory entry is there when
/// `replace`, else only when nothing is (`EEXIST`), atomically either way.
fn rename_into(dir: &Dir, temp: &str, name: &OsStr, replace: bool) -> io::Result<()> {
    if replace {
        return rustix::fs::renameat(dir, temp, dir, name).map_err(io::Error::from);
    }
    match rustix::fs::renameat_with(dir, temp, dir, name, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        // The file system has no RENAME_NOREPLACE: a hard link is just as exclusive.
        Err(Errno::INVAL) => {
            rustix::fs::linkat(dir, temp, dir, name, AtFlags::empty())?;
            let _ = dir.remove_file(temp);
            Ok(())
        }
        Err(errno) => Err(errno.into()),
    }
}
