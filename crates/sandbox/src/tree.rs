//! Operations on whole trees: recursive removal, and moving an entry across file systems (copy,
//! then remove). Both descend with `O_NOFOLLOW` opens relative to the parent's handle, so a
//! symbolic link is removed or copied as a link, never followed. They use explicit stacks, not recursion, so a deep tree cannot overflow the
//! stack.

use std::ffi::{OsStr, OsString};
use std::io;

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use golem_protocol::{ToolError, ToolErrorCode};
use rustix::fs::RenameFlags;

use crate::errors::{Op, io_error};
use crate::ops::split;
use crate::sandbox::Sandbox;
use crate::undo::Touch;
use crate::write::{sync_dir, temp_name};
use crate::zone_path::ZonePath;

/// An entry of a source directory being moved across file systems.
type Named<'a> = (&'a Dir, &'a OsStr, &'a str);

impl Sandbox {
    /// Removes `p` and, for a directory, everything under it, never following a symbolic link
    /// (a link is removed, its target survives). Returns the virtual paths removed, children
    /// before their directory. The zone root itself is refused.
    pub fn remove_dir_all(&self, p: &ZonePath) -> Result<Vec<String>, ToolError> {
        self.recorded(&[Touch::Tree(p)], || self.remove_dir_all_now(p))
    }

    fn remove_dir_all_now(&self, p: &ZonePath) -> Result<Vec<String>, ToolError> {
        self.check_writable(p)?;
        let zone = self.zone_for(p, "delete")?;
        let vpath = p.virtual_path();
        let (parent_rel, name) = split(p, "delete")?;
        self.removal_protection(p).check()?;
        let parent = crate::ops::open_parent(zone, p, parent_rel, "")?;
        self.check_opened(p, &parent, name)?;
        let meta = parent
            .symlink_metadata(name)
            .map_err(|err| io_error(&err, Op::Delete, &vpath))?;
        if !meta.is_dir() {
            parent
                .remove_file(name)
                .map_err(|err| io_error(&err, Op::Delete, &vpath))?;
            return Ok(vec![vpath]);
        }
        let mut removed = Vec::new();
        remove_tree(&parent, name, &vpath, &mut removed)?;
        Ok(removed)
    }

    /// Moves an entry to another file system: copies it beside the destination, then removes
    /// the source. A failed copy leaves the source untouched and removes what it copied.
    pub(crate) fn move_across(
        &self,
        from: Named<'_>,
        to: Named<'_>,
        overwrite: bool,
    ) -> Result<(), ToolError> {
        let (from_dir, from_name, from_vpath) = from;
        let (to_dir, to_name, to_vpath) = to;
        let meta = from_dir
            .symlink_metadata(from_name)
            .map_err(|err| io_error(&err, Op::Move, from_vpath))?;
        let existing = to_dir.symlink_metadata(to_name).ok();
        match &existing {
            Some(_) if !overwrite => {
                return Err(ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!(
                        "cannot move {from_vpath} to {to_vpath}: {to_vpath} already exists; \
                         pass overwrite: true to replace it"
                    ),
                ));
            }
            Some(dest) if dest.is_dir() => {
                return Err(ToolError::new(
                    ToolErrorCode::InvalidPath,
                    format!("cannot move {from_vpath} to {to_vpath}: {to_vpath} is a directory"),
                ));
            }
            Some(_) | None => {}
        }
        if meta.is_dir() {
            // The destination does not exist here (checked above).
            if let Err(err) = copy_tree(from_dir, from_name, to_dir, to_name) {
                let mut ignored = Vec::new();
                let _ = remove_tree(to_dir, to_name, to_vpath, &mut ignored);
                return Err(io_error(&err, Op::Move, from_vpath));
            }
            let mut removed = Vec::new();
            return remove_tree(from_dir, from_name, from_vpath, &mut removed)
                .map_err(|err| half_moved(err, from_vpath, to_vpath));
        }
        let temp = temp_name();
        let copied = copy_entry(from_dir, from_name, to_dir, OsStr::new(&temp)).and_then(|()| {
            let flags = if overwrite {
                RenameFlags::empty()
            } else {
                RenameFlags::NOREPLACE
            };
            rustix::fs::renameat_with(to_dir, temp.as_str(), to_dir, to_name, flags)
                .map_err(io::Error::from)
        });
        if let Err(err) = copied {
            let _ = to_dir.remove_file(&temp);
            return Err(io_error(&err, Op::Move, from_vpath));
        }
        sync_dir(to_dir);
        from_dir
            .remove_file(from_name)
            .map_err(|err| half_moved(io_error(&err, Op::Move, from_vpath), from_vpath, to_vpath))
    }
}

/// The error of a cross-file-system move whose copy is in place but whose source could not be
/// (entirely) removed.
fn half_moved(mut err: ToolError, from: &str, to: &str) -> ToolError {
    err.message = format!(
        "{to} now holds a copy of {from}, but {from} could not be removed: {}",
        err.message
    );
    err
}

/// One directory being removed: its handle, its name in the parent, its virtual path and the
/// entries still to remove.
struct RemoveFrame {
    dir: Dir,
    name: OsString,
    vpath: String,
    entries: Vec<(OsString, bool)>,
}

/// Removes the directory `name` in `parent` and everything under it, never following links.
fn remove_tree(
    parent: &Dir,
    name: &OsStr,
    vpath: &str,
    removed: &mut Vec<String>,
) -> Result<(), ToolError> {
    let open = |dir: &Dir, name: &OsStr, vpath: String| -> Result<RemoveFrame, ToolError> {
        let sub = dir
            .open_dir_nofollow(name)
            .map_err(|err| io_error(&err, Op::Delete, &vpath))?;
        let mut entries = Vec::new();
        for entry in sub
            .entries()
            .map_err(|err| io_error(&err, Op::Delete, &vpath))?
        {
            let entry = entry.map_err(|err| io_error(&err, Op::Delete, &vpath))?;
            let is_dir = entry
                .file_type()
                .map_err(|err| io_error(&err, Op::Delete, &vpath))?
                .is_dir();
            entries.push((entry.file_name(), is_dir));
        }
        entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
        Ok(RemoveFrame {
            dir: sub,
            name: name.to_owned(),
            vpath,
            entries,
        })
    };
    let mut stack = vec![open(parent, name, vpath.to_owned())?];
    while let Some(frame) = stack.last_mut() {
        match frame.entries.pop() {
            Some((child, true)) => {
                let child_vpath = format!("{}/{}", frame.vpath, child.to_string_lossy());
                let next = open(&frame.dir, &child, child_vpath)?;
                stack.push(next);
            }
            Some((child, false)) => {
                let child_vpath = format!("{}/{}", frame.vpath, child.to_string_lossy());
                frame
                    .dir
                    .remove_file(&child)
                    .map_err(|err| io_error(&err, Op::Delete, &child_vpath))?;
                removed.push(child_vpath);
            }
            None => {
                let Some(done) = stack.pop() else { break };
                let container = stack.last().map(|frame| &frame.dir).unwrap_or(parent);
                container
                    .remove_dir(&done.name)
                    .map_err(|err| io_error(&err, Op::Delete, &done.vpath))?;
                removed.push(done.vpath);
            }
        }
    }
    Ok(())
}

/// Copies a file or symbolic link `from_name` to `to_name` (which must not exist); a file keeps
/// its permissions and is synced.
fn copy_entry(from_dir: &Dir, from_name: &OsStr, to_dir: &Dir, to_name: &OsStr) -> io::Result<()> {
    let meta = from_dir.symlink_metadata(from_name)?;
    if meta.is_symlink() {
        let target = from_dir.read_link_contents(from_name)?;
        return rustix::fs::symlinkat(&target, to_dir, to_name).map_err(io::Error::from);
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "only files, directories and symbolic links can be moved",
        ));
    }
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    let mut source = from_dir.open_with(from_name, &options)?;
    let mut create = OpenOptions::new();
    create.write(true).create_new(true);
    let mut dest = to_dir.open_with(to_name, &create)?;
    io::copy(&mut source, &mut dest)?;
    dest.set_permissions(meta.permissions())?;
    dest.sync_all()
}

/// Copies the directory `from_name` to `to_name` (which must not exist), entries and all.
fn copy_tree(from_dir: &Dir, from_name: &OsStr, to_dir: &Dir, to_name: &OsStr) -> io::Result<()> {
    let make = |src_parent: &Dir, src: &OsStr, dst_parent: &Dir, dst: &OsStr| {
        let source = src_parent.open_dir_nofollow(src)?;
        let permissions = source.dir_metadata()?.permissions();
        dst_parent.create_dir(dst)?;
        let dest = dst_parent.open_dir_nofollow(dst)?;
        let mut names = Vec::new();
        for entry in source.entries()? {
            let entry = entry?;
            names.push((entry.file_name(), entry.file_type()?.is_dir()));
        }
        io::Result::Ok((source, dest, names, permissions))
    };
    let mut stack = vec![make(from_dir, from_name, to_dir, to_name)?];
    while let Some((source, dest, names, permissions)) = stack.last_mut() {
        match names.pop() {
            Some((name, true)) => {
                let next = make(source, &name, dest, &name)?;
                stack.push(next);
            }
            Some((name, false)) => copy_entry(source, &name, dest, &name)?,
            None => {
                // Last, so a read-only source directory can still be filled.
                dest.set_permissions(".", permissions.clone())?;
                sync_dir(dest);
                stack.pop();
            }
        }
    }
    Ok(())
}
