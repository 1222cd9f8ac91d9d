//! The recursive listing behind `list_files`, built for speed: one `openat` and one `getdents`
//! stream per directory and one `fstatat` per entry, all relative to the parent directory's
//! descriptor (rustix, no unsafe), with subtrees spread over threads (`walk_par.rs`).
//!
//! Safe by construction: every name comes from `getdents` (one component, never `.` or `..`),
//! directories are opened with `O_NOFOLLOW | O_DIRECTORY` relative to their parent's descriptor
//! and entries are stat'ed with `AT_SYMLINK_NOFOLLOW`, so a symbolic link is listed and never
//! entered; only the start directory is resolved, beneath its zone, by cap-std. An explicit
//! stack keeps deep trees off the call stack.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use golem_protocol::ToolError;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags, Stat};

use crate::entry::{EntryInfo, EntryKind};
use crate::errors::{Op, io_error};
use crate::ops::open_dir;
use crate::sandbox::Sandbox;
use crate::walk_par::walk_tree;
use crate::zone_path::ZonePath;

/// A listed entry: its name (raw bytes) and metadata.
pub(crate) type RawEntry = (Vec<u8>, EntryInfo);

/// One directory being walked: its entries still to visit (sorted, reversed so `pop` yields
/// them in order), the stream whose descriptor opens them, and its path relative to the start.
struct Frame {
    dir: Dir,
    prefix: String,
    entries: Vec<RawEntry>,
}

impl Sandbox {
    /// Lists `p` recursively in depth-first, name-sorted order, without following symbolic
    /// links; names are relative to `p` (`/` walks every zone, each prefixed by its name).
    /// Hidden entries (and everything under a hidden directory) are skipped unless
    /// `include_hidden`. Stops after `limit` entries and says whether it was truncated. An
    /// unreadable subdirectory is listed but not entered.
    pub fn walk(
        &self,
        p: &ZonePath,
        include_hidden: bool,
        limit: usize,
    ) -> Result<(Vec<(String, EntryInfo)>, bool), ToolError> {
        let mut out = Vec::new();
        let starts: Vec<_> = match self.zone_of(p)? {
            Some(zone) => vec![(zone, p.relative(), String::new(), p.virtual_path())],
            None => self
                .zones()
                .iter()
                .map(|zone| {
                    let name = zone.name();
                    (
                        zone,
                        std::path::Path::new(""),
                        format!("{name}/"),
                        format!("/{name}"),
                    )
                })
                .collect(),
        };
        for (zone, rel, prefix, vpath) in starts {
            if p.is_root() {
                if out.len() >= limit {
                    return Ok((out, true));
                }
                let info = zone
                    .dir()
                    .dir_metadata()
                    .map(|meta| EntryInfo::from_metadata(&meta))
                    .unwrap_or_else(|_| EntryInfo::virtual_dir());
                out.push((zone.name().to_owned(), info));
            }
            let start = open_dir(zone, rel, &vpath, Op::List)?;
            let fd = rustix::fs::openat(&start, ".", read_dir_flags(), Mode::empty())
                .map_err(|errno| io_error(&io::Error::from(errno), Op::List, &vpath))?;
            let truncated = walk_tree(fd, prefix, include_hidden, limit, &mut out)
                .map_err(|err| io_error(&err, Op::List, &vpath))?;
            if truncated {
                return Ok((out, true));
            }
        }
        Ok((out, false))
    }
}

/// Flags for opening a directory to read it.
pub(crate) fn read_dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// `prefix` followed by `name` (lossy UTF-8).
pub(crate) fn join(prefix: &str, name: &[u8]) -> String {
    let name = OsStr::from_bytes(name).to_string_lossy();
    let mut path = String::with_capacity(prefix.len() + name.len());
    path.push_str(prefix);
    path.push_str(&name);
    path
}

/// Walks an open directory whose entries are already read into `out`, sequentially; returns
/// whether `limit` (on the length of `out`) cut it short.
pub(crate) fn walk_dir(
    dir: Dir,
    entries: Vec<RawEntry>,
    prefix: String,
    include_hidden: bool,
    limit: usize,
    out: &mut Vec<(String, EntryInfo)>,
) -> bool {
    let mut stack = vec![Frame {
        dir,
        prefix,
        entries,
    }];
    while let Some(frame) = stack.last_mut() {
        let Some((name, info)) = frame.entries.pop() else {
            stack.pop();
            continue;
        };
        if out.len() >= limit {
            return true;
        }
        let path = join(&frame.prefix, &name);
        let child = match info.kind {
            EntryKind::Directory => frame
                .dir
                .fd()
                .ok()
                .and_then(|fd| open_child(fd, &name, include_hidden)),
            EntryKind::File
            | EntryKind::Symlink
            | EntryKind::Fifo
            | EntryKind::Socket
            | EntryKind::Device => None,
        };
        if let Some((dir, entries)) = child {
            let mut prefix = path.clone();
            prefix.push('/');
            stack.push(Frame {
                dir,
                prefix,
                entries,
            });
        }
        out.push((path, info));
    }
    false
}

/// Opens the subdirectory `name` of `parent` without following a link, and reads it; `None`
/// when it cannot be entered (swapped for a link, unreadable, gone).
pub(crate) fn open_child(
    parent: BorrowedFd<'_>,
    name: &[u8],
    include_hidden: bool,
) -> Option<(Dir, Vec<RawEntry>)> {
    let mut dir = Dir::new(open_subdir(parent, name).ok()?).ok()?;
    let entries = read_entries(&mut dir, include_hidden).ok()?;
    Some((dir, entries))
}

/// Opens the subdirectory `name` (one component from `getdents`) of `parent` for reading,
/// refusing a symbolic link.
pub(crate) fn open_subdir(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<OwnedFd> {
    let flags = read_dir_flags() | OFlags::NOFOLLOW;
    Ok(rustix::fs::openat(
        parent,
        OsStr::from_bytes(name),
        flags,
        Mode::empty(),
    )?)
}

/// The entries of a directory stream, each stat'ed without following links, sorted by name in
/// reverse (so popping yields them in order).
pub(crate) fn read_entries(dir: &mut Dir, include_hidden: bool) -> io::Result<Vec<RawEntry>> {
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." || (!include_hidden && bytes.first() == Some(&b'.')) {
            continue;
        }
        names.push(entry.file_name().to_owned());
    }
    let fd = dir.fd()?;
    let mut entries = Vec::with_capacity(names.len());
    for name in names {
        match rustix::fs::statat(fd, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => entries.push((name.into_bytes(), info_from_stat(&stat))),
            // Removed between listing and stat: it no longer exists.
            Err(rustix::io::Errno::NOENT) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
    entries.sort_unstable_by(|a, b| b.0.cmp(&a.0));
    Ok(entries)
}

fn info_from_stat(stat: &Stat) -> EntryInfo {
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => EntryKind::File,
        FileType::Directory => EntryKind::Directory,
        FileType::Symlink => EntryKind::Symlink,
        FileType::Fifo => EntryKind::Fifo,
        FileType::Socket => EntryKind::Socket,
        // `Unknown` never comes from Linux; it is special, so it is treated like a device.
        FileType::CharacterDevice | FileType::BlockDevice | FileType::Unknown => EntryKind::Device,
    };
    #[allow(
        clippy::useless_conversion,
        reason = "the field's type differs between targets"
    )]
    let secs = i64::from(stat.st_mtime);
    let nanos = u32::try_from(stat.st_mtime_nsec).unwrap_or(0);
    let modified = if secs >= 0 {
        UNIX_EPOCH.checked_add(Duration::new(secs.unsigned_abs(), nanos))
    } else {
        UNIX_EPOCH
            .checked_sub(Duration::from_secs(secs.unsigned_abs()))
            .and_then(|t: SystemTime| t.checked_add(Duration::from_nanos(u64::from(nanos))))
    };
    EntryInfo {
        kind,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        modified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zone::{ZoneConfig, ZoneMode};

    #[test]
    fn directories_whose_names_are_not_utf8_are_entered() {
        let tmp = tempfile::tempdir().unwrap();
        let odd = tmp.path().join("z").join(OsStr::from_bytes(b"d\xff"));
        std::fs::create_dir_all(odd.join("e")).unwrap();
        std::fs::write(odd.join("e/f.txt"), b"x").unwrap();
        let sandbox = Sandbox::open(tmp.path(), &[ZoneConfig::new("z", ZoneMode::Ro)]).unwrap();
        let start = sandbox.resolve("/z").unwrap();
        let (entries, truncated) = sandbox.walk(&start, false, usize::MAX).unwrap();
        let paths: Vec<_> = entries.into_iter().map(|(path, _)| path).collect();
        assert_eq!(paths, ["d\u{fffd}", "d\u{fffd}/e", "d\u{fffd}/e/f.txt"]);
        assert!(!truncated);
    }
}
