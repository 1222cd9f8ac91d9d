//! Atomic writes: the new content goes to a temporary file beside the target (exclusive
//! create, write, `fsync`), which is then renamed over the target and the directory synced, so
//! a crash leaves the old content or the new, never a mix. Renaming replaces the directory
//! entry: a hard link is replaced, never written through, and a symbolic link is followed only
//! to a file inside the zone.

use std::ffi::OsStr;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions, Permissions};
use golem_protocol::{ToolError, ToolErrorCode};
use rustix::fs::{AtFlags, RenameFlags};
use rustix::io::Errno;

use crate::errors::{Op, escape_error, io_error, is_escape};
use crate::ops::{open_parent, split};
use crate::sandbox::{Sandbox, Zone};
use crate::undo::Touch;
use crate::zone_path::ZonePath;

/// Makes temporary file names unique within this process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Sandbox {
    /// Writes `bytes` to a file atomically (see the module docs); an existing file keeps its
    /// permissions. A symbolic link is written through only when its target is a file inside
    /// the zone. `create_dirs` creates missing parent directories.
    pub fn write_atomic(
        &self,
        p: &ZonePath,
        bytes: &[u8],
        create_dirs: bool,
    ) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || {
            self.write_file(p, bytes, create_dirs, true)
        })
    }

    /// Like [`Sandbox::write_atomic`], but only creates: if anything exists at `p` when the
    /// file is put in place, it fails with `EXECUTION_ERROR` and changes nothing
    /// (`RENAME_NOREPLACE`), so a file created meanwhile by someone else is never overwritten.
    pub fn write_new(
        &self,
        p: &ZonePath,
        bytes: &[u8],
        create_dirs: bool,
    ) -> Result<(), ToolError> {
        self.recorded(&[Touch::Entry(p)], || {
            self.write_file(p, bytes, create_dirs, false)
        })
    }

    fn write_file(
        &self,
        p: &ZonePath,
        bytes: &[u8],
        create_dirs: bool,
        replace: bool,
    ) -> Result<(), ToolError> {
        self.check_writable(p)?;
        let zone = self.zone_for(p, "write")?;
        self.protection(p).check()?;
        let vpath = p.virtual_path();
        let (parent_rel, name) = split(p, "write")?;
        if create_dirs && !parent_rel.as_os_str().is_empty() {
            let parent_vpath = p.parent().map(|parent| parent.virtual_path());
            zone.dir().create_dir_all(parent_rel).map_err(|err| {
                io_error(&err, Op::CreateDir, parent_vpath.as_deref().unwrap_or(""))
            })?;
        }
        let parent = open_parent(zone, p, parent_rel, " (pass createDirs: true to create it)")?;
        self.check_opened(p, &parent, name)?;
        let permissions = match parent.symlink_metadata(name) {
            Ok(_) if !replace => return Err(exists_error(&vpath)),
            Ok(meta) if meta.is_symlink() => return write_through_link(self, zone, p, bytes),
            Ok(meta) if meta.is_dir() => {
                return Err(ToolError::new(
                    ToolErrorCode::InvalidPath,
                    format!("cannot write {vpath}: it is a directory"),
                ));
            }
            Ok(meta) => Some(meta.permissions()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(io_error(&err, Op::Write, &vpath)),
        };
        commit(&parent, name, bytes, permissions, replace).map_err(|err| {
            if !replace && err.raw_os_error() == Some(Errno::EXIST.raw_os_error()) {
                exists_error(&vpath)
            } else {
                io_error(&err, Op::Write, &vpath)
            }
        })
    }
}

fn exists_error(vpath: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!("cannot create {vpath}: it already exists (it may have just been created)"),
    )
}

/// Writes through a symbolic link whose target resolves to a file inside the zone (and is not
/// protected in `sandbox`).
fn write_through_link(
    sandbox: &Sandbox,
    zone: &Zone,
    p: &ZonePath,
    bytes: &[u8],
) -> Result<(), ToolError> {
    let vpath = p.virtual_path();
    let target = zone.dir().canonicalize(p.relative()).map_err(|err| {
        if is_escape(&err) {
            escape_error(&vpath)
        } else if err.kind() == io::ErrorKind::NotFound {
            ToolError::new(
                ToolErrorCode::InvalidPath,
                format!("cannot write {vpath}: it is a symbolic link to a missing file"),
            )
        } else {
            io_error(&err, Op::Write, &vpath)
        }
    })?;
    let target_path = p.with_relative(target);
    let (parent_rel, name) = split(&target_path, "write")?;
    let parent = open_parent(zone, &target_path, parent_rel, "")?;
    sandbox.check_opened(&target_path, &parent, name)?;
    let meta = parent
        .symlink_metadata(name)
        .map_err(|err| io_error(&err, Op::Write, &vpath))?;
    if !meta.is_file() {
        return Err(ToolError::new(
            ToolErrorCode::InvalidPath,
            format!("cannot write {vpath}: it is a symbolic link to something other than a file"),
        ));
    }
    sandbox.recorded(&[Touch::Entry(&target_path)], || {
        commit(&parent, name, bytes, Some(meta.permissions()), true)
            .map_err(|err| io_error(&err, Op::Write, &vpath))
    })
}

/// Writes a temporary file in `parent` and renames it to `name` (replacing it or not).
fn commit(
    parent: &Dir,
    name: &OsStr,
    bytes: &[u8],
    permissions: Option<Permissions>,
    replace: bool,
) -> io::Result<()> {
    let temp = temp_name();
    let result = write_temp(parent, &temp, bytes, permissions).and_then(|()| {
        if replace {
            parent.rename(&temp, parent, name)
        } else {
            rename_no_replace(parent, &temp, name)
        }
    });
    if result.is_err() {
        let _ = parent.remove_file(&temp);
    }
    result?;
    sync_dir(parent);
    Ok(())
}

/// Renames `from` to `to` in `dir` unless `to` exists (`EEXIST`), atomically.
fn rename_no_replace(dir: &Dir, from: &str, to: &OsStr) -> io::Result<()> {
    match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        // The file system has no RENAME_NOREPLACE: a hard link is just as exclusive.
        Err(Errno::INVAL) => {
            rustix::fs::linkat(dir, from, dir, to, AtFlags::empty())?;
            let _ = dir.remove_file(from);
            Ok(())
        }
        Err(errno) => Err(errno.into()),
    }
}

/// A fresh temporary file name (short, so it fits any directory whatever the target's name;
/// hidden, so listings skip it).
pub(crate) fn temp_name() -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".golem-{}-{n}.tmp", std::process::id())
}

/// Creates `name` exclusively in `parent`, writes, applies `permissions`, and syncs.
fn write_temp(
    parent: &Dir,
    name: &str,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let mut file = parent.open_with(name, &options)?;
    file.write_all(bytes)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()
}

/// Best-effort `fsync` of a directory so a rename survives a crash.
pub(crate) fn sync_dir(dir: &Dir) {
    let mut options = OpenOptions::new();
    options.read(true);
    if let Ok(file) = dir.open_with(".", &options) {
        let _ = file.sync_all();
    }
}
