//! Reading a changeset out of the upper directories of a run's copy-on-write layers (see the
//! parent module for what the overlay leaves there and what is refused). The walk goes over
//! the upper directory with a stack of open directory handles (never recursion, never
//! following a link); the zone is looked at only where the upper directory has something,
//! through the zone's own handle (resolved beneath it).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{
    Dir, FileTypeExt, Metadata, MetadataExt, OpenOptions, Permissions, PermissionsExt,
};

use super::{Change, ChangeKind, Changeset, ChangesetError, Layers};
use crate::protected::{Protection, Verdict};
use crate::sandbox::{Sandbox, Zone};
use crate::zone_path::ZonePath;

/// The extended attribute that marks an opaque directory of an unprivileged overlay.
const OPAQUE_XATTR: &str = "user.overlay.opaque";

/// How many links a target may pass through before it counts as a loop (the kernel's limit).
const MAX_LINKS: usize = 40;

const SET_UID: u32 = 0o4000;
const SET_GID: u32 = 0o2000;
const STICKY: u32 = 0o1000;
const SPECIAL_BITS: u32 = SET_UID | SET_GID | STICKY;

/// Reads the changes of every layer; one refused change refuses them all.
pub(crate) fn scan(sandbox: &Sandbox, layers: Layers) -> Result<Changeset, ChangesetError> {
    let mut changes = Vec::new();
    let mut uppers = Vec::new();
    for (name, upper_path) in layers.uppers() {
        let zone = sandbox.zone(name).ok_or_else(|| {
            ChangesetError::Scan(format!("the zone {name} is not in the sandbox"))
        })?;
        let fail = |e: io::Error| failed(&format!("/{name}"), &e);
        // The layer's root shows as the zone's root, whose mode the run may have changed.
        open_up(upper_path).map_err(fail)?;
        let upper =
            Dir::open_ambient_dir(upper_path, cap_std::ambient_authority()).map_err(fail)?;
        let root = sandbox
            .resolve(&format!("/{name}"))
            .map_err(|e| ChangesetError::Scan(e.message))?;
        ZoneScan {
            sandbox,
            zone,
            root,
            upper: &upper,
            changes: &mut changes,
            links: Vec::new(),
        }
        .run()?;
        uppers.push((name.to_owned(), upper));
    }
    super::git_dirs::refuse_new_git_dirs(sandbox, &changes)?;
    Ok(Changeset {
        changes,
        uppers,
        layers,
    })
}

/// Makes the directory `path` (a layer's root) readable, writable and searchable by its owner.
fn open_up(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::symlink_metadata(path)?.permissions().mode();
    if mode & 0o700 != 0o700 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode | 0o700))?;
    }
    Ok(())
}

fn failed(path: &str, err: &io::Error) -> ChangesetError {
    ChangesetError::Scan(format!("reading the change of {path}: {err}"))
}

fn refused(path: &str, reason: impl Into<String>) -> ChangesetError {
    ChangesetError::Refused {
        path: path.to_owned(),
        reason: reason.into(),
    }
}

/// Whether an upper entry is a whiteout (the overlay's mark of a deletion).
fn is_whiteout(meta: &Metadata) -> bool {
    meta.file_type().is_char_device() && meta.rdev() == 0
}

/// Whether an upper directory is opaque (it hides everything the zone has there).
fn is_opaque(dir: &Dir) -> bool {
    use rustix::fs::{Mode, OFlags};
    // The handle may be an `O_PATH` one, which has no extended attributes to read.
    let Ok(opened) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let mut value = [0u8; 4];
    matches!(rustix::fs::fgetxattr(&opened, OPAQUE_XATTR, &mut value), Ok(1) if value[0] == b'y')
}

/// A symbolic link's target, read without following anything but the directories on the way
/// (beneath `dir`).
pub(super) fn read_link(dir: &Dir, rel: &Path) -> io::Result<PathBuf> {
    let (parent, name) = match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => {
            (Some(dir.open_dir(parent)?), name)
        }
        (_, Some(name)) => (None, name),
        (_, None) => return Err(io::Error::from(io::ErrorKind::InvalidInput)),
    };
    let target = rustix::fs::readlinkat(parent.as_ref().unwrap_or(dir), name, Vec::new())?;
    Ok(PathBuf::from(OsString::from_vec(target.into_bytes())))
}

/// Opens a regular file for reading, never following a link.
pub(super) fn open_file(dir: &Dir, rel: &Path) -> io::Result<cap_std::fs::File> {
    let mut options = OpenOptions::new();
    options.read(true).follow(FollowSymlinks::No);
    dir.open_with(rel, &options)
}

/// Whether two readers give the same bytes.
fn same_content(mut a: impl Read, mut b: impl Read) -> io::Result<bool> {
    let mut left = vec![0u8; 64 << 10];
    let mut right = vec![0u8; 64 << 10];
    loop {
        let n = read_full(&mut a, &mut left)?;
        let m = read_full(&mut b, &mut right)?;
        if n != m || left[..n] != right[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fills `buf` as far as the reader goes.
fn read_full(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Puts the components of `target` in front of `pending` (`..` as itself); false for an
/// absolute target.
fn push_front(pending: &mut VecDeque<OsString>, target: &Path) -> bool {
    let mut parts = Vec::new();
    for part in target.components() {
        match part {
            Component::Normal(name) => parts.push(name.to_owned()),
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    for part in parts.into_iter().rev() {
        pending.push_front(part);
    }
    true
}

/// One directory of the upper layer being walked.
struct Frame {
    /// Its path in the zone.
    rel: PathBuf,
    /// Its upper directory.
    upper: Dir,
    /// Whether the zone has a directory here.
    lower: bool,
    /// Whether it hides the zone's entries (it, or a directory above it, is opaque).
    hides: bool,
    /// Whether it ends up set-group-ID (new directories in it inherit the bit).
    set_gid: bool,
    /// The upper entries still to look at, by name.
    names: std::vec::IntoIter<OsString>,
}

/// The scan of one zone.
struct ZoneScan<'a> {
    sandbox: &'a Sandbox,
    zone: &'a Zone,
    /// `/<zone>`.
    root: ZonePath,
    /// The upper directory's root.
    upper: &'a Dir,
    changes: &'a mut Vec<Change>,
    /// The new links with relative targets: the directory each is in, its target, and its
    /// path as shown.
    links: Vec<(PathBuf, PathBuf, String)>,
}

impl ZoneScan<'_> {
    fn run(&mut self) -> Result<(), ChangesetError> {
        let root = self.root.virtual_path();
        let upper = self.upper.try_clone().map_err(|e| failed(&root, &e))?;
        let lower_mode = self
            .zone
            .dir()
            .dir_metadata()
            .map_err(|e| failed(&root, &e))?
            .mode();
        let hides = is_opaque(&upper);
        let mut stack = vec![self.enter(PathBuf::new(), upper, true, hides, lower_mode)?];
        while let Some(frame) = stack.last_mut() {
            match frame.names.next() {
                Some(name) => {
                    if let Some(child) = self.entry(frame, &name)? {
                        stack.push(child);
                    }
                }
                None => {
                    stack.pop();
                }
            }
        }
        for (dir, target, shown) in std::mem::take(&mut self.links) {
            if self.escapes(&dir, &target)? {
                return Err(refused(
                    &shown,
                    format!(
                        "is a symbolic link to {}, which leads outside the zone",
                        target.display()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The virtual path of `rel`; a name that cannot be one refuses the changeset.
    fn path(&self, rel: &Path) -> Result<ZonePath, ChangesetError> {
        let shown = format!("{}/{}", self.root.virtual_path(), rel.to_string_lossy());
        let Some(text) = rel.to_str() else {
            return Err(refused(
                &shown,
                "has a name that is not valid UTF-8, which a changeset cannot name",
            ));
        };
        let path = self
            .sandbox
            .resolve(&format!("{}/{text}", self.root.virtual_path()))
            .map_err(|e| refused(&shown, format!("cannot be named: {}", e.message)))?;
        if path.relative() != rel {
            return Err(refused(&shown, "cannot be named as a virtual path"));
        }
        Ok(path)
    }

    /// Refuses a change of `path` when it is protected. Every path of a changeset is where it
    /// really is (the directories above it are directories of the zone, or new ones), so its
    /// name is judged as it stands, without the resolving `Sandbox::protection` does for paths
    /// that may go through links (applying checks again, in full).
    fn check_protection(&self, path: &ZonePath) -> Result<(), ChangesetError> {
        let guard = path
            .zone_ref()
            .and_then(|(index, _)| self.sandbox.guards().get(index));
        match guard.map(|guard| guard.verdict(path.relative())) {
            Some(Verdict::Protected) => {
                let path = path.virtual_path();
                let reason = Protection::Protected { path: path.clone() }
                    .reason()
                    .unwrap_or_default();
                Err(refused(&path, reason))
            }
            Some(Verdict::Open | Verdict::Unprotected) | None => Ok(()),
        }
    }

    /// Adds a change that is not a removal, unless its path is protected.
    fn push(&mut self, rel: &Path, kind: ChangeKind) -> Result<(), ChangesetError> {
        let path = self.path(rel)?;
        self.check_protection(&path)?;
        self.changes.push(Change { path, kind });
        Ok(())
    }

    /// The zone's entry at `rel` (not following a final link), if there is one.
    fn lower(&self, rel: &Path) -> Result<Option<Metadata>, ChangesetError> {
        match self.zone.dir().symlink_metadata(rel) {
            Ok(meta) => Ok(Some(meta)),
            Err(err)
                if err.kind() == io::ErrorKind::NotFound
                    || err.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) =>
            {
                Ok(None)
            }
            Err(err) => Err(failed(&self.shown(rel), &err)),
        }
    }

    fn shown(&self, rel: &Path) -> String {
        format!("{}/{}", self.root.virtual_path(), rel.to_string_lossy())
    }

    /// The entries of the zone's directory `rel`, by name, with whether each is a directory.
    fn lower_entries(&self, rel: &Path) -> Result<Vec<(OsString, bool)>, ChangesetError> {
        let dir = if rel.as_os_str().is_empty() {
            Path::new(".")
        } else {
            rel
        };
        let fail = |e: io::Error| failed(&self.shown(rel), &e);
        let mut entries = Vec::new();
        for entry in self.zone.dir().read_dir(dir).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let is_dir = entry.file_type().map_err(fail)?.is_dir();
            entries.push((entry.file_name(), is_dir));
        }
        entries.sort();
        Ok(entries)
    }

    /// Starts on the upper directory `upper` at `rel`: its entries, and when it hides the
    /// zone's directory there, the deletion of what the zone has there and it does not.
    fn enter(
        &mut self,
        rel: PathBuf,
        upper: Dir,
        lower: bool,
        hides: bool,
        mode: u32,
    ) -> Result<Frame, ChangesetError> {
        let fail = |e: io::Error| failed(&self.shown(&rel), &e);
        let mut names = Vec::new();
        for entry in upper.entries().map_err(fail)? {
            names.push(entry.map_err(fail)?.file_name());
        }
        names.sort();
        if lower && hides {
            for (name, is_dir) in self.lower_entries(&rel)? {
                if names.binary_search(&name).is_err() {
                    self.delete_tree(&rel.join(&name), is_dir)?;
                }
            }
        }
        Ok(Frame {
            rel,
            upper,
            lower,
            hides,
            set_gid: mode & SET_GID != 0,
            names: names.into_iter(),
        })
    }

    /// The deletion of the zone's entry at `rel` and, for a directory, of everything in it
    /// (entries before their directory).
    fn delete_tree(&mut self, rel: &Path, is_dir: bool) -> Result<(), ChangesetError> {
        let path = self.path(rel)?;
        if !is_dir {
            self.check_protection(&path)?;
            self.changes.push(Change {
                path,
                kind: ChangeKind::Delete { dir: false },
            });
            return Ok(());
        }
        // A directory is judged with everything in it (removing a repository's `.git` is
        // refused as a whole).
        if let Some(reason) = self.sandbox.removal_protection(&path).reason() {
            return Err(refused(&path.virtual_path(), reason));
        }
        let mut stack = vec![(path, self.lower_entries(rel)?.into_iter())];
        while let Some((dir, entries)) = stack.last_mut() {
            match entries.next() {
                Some((name, true)) => {
                    let child = self.path(&dir.relative().join(&name))?;
                    let entries = self.lower_entries(child.relative())?;
                    stack.push((child, entries.into_iter()));
                }
                Some((name, false)) => {
                    let path = self.path(&dir.relative().join(&name))?;
                    self.changes.push(Change {
                        path,
                        kind: ChangeKind::Delete { dir: false },
                    });
                }
                None => {
                    if let Some((path, _)) = stack.pop() {
                        self.changes.push(Change {
                            path,
                            kind: ChangeKind::Delete { dir: true },
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Refuses special bits the change adds: `mode` where the zone had `old` (0 for a new
    /// entry); a new directory may take set-group-ID from its parent.
    fn check_bits(
        &self,
        rel: &Path,
        mode: u32,
        old: u32,
        inherits_gid: bool,
    ) -> Result<(), ChangesetError> {
        let mut added = mode & SPECIAL_BITS & !old;
        if inherits_gid {
            added &= !SET_GID;
        }
        let bit = if added & SET_UID != 0 {
            "set-user-ID"
        } else if added & SET_GID != 0 {
            "set-group-ID"
        } else if added & STICKY != 0 {
            "sticky"
        } else {
            return Ok(());
        };
        Err(refused(
            &self.shown(rel),
            format!("would get the {bit} bit (mode {mode:04o}), which changes may not set"),
        ))
    }

    /// Looks at one entry of the upper directory `frame`; returns the frame of a directory to
    /// walk next.
    fn entry(&mut self, frame: &Frame, name: &OsStr) -> Result<Option<Frame>, ChangesetError> {
        let rel = frame.rel.join(name);
        let meta = frame
            .upper
            .symlink_metadata(name)
            .map_err(|e| failed(&self.shown(&rel), &e))?;
        let lower = if frame.lower { self.lower(&rel)? } else { None };
        let file_type = meta.file_type();
        if is_whiteout(&meta) {
            if let Some(lower) = lower {
                self.delete_tree(&rel, lower.is_dir())?;
            }
            return Ok(None);
        }
        let mode = meta.mode() & 0o7777;
        // What the run made unreadable to its owner is opened up in the layer (the change
        // keeps the mode it had), so that this scan, the preview and the apply can read it.
        let open_up = if file_type.is_dir() {
            0o700
        } else if file_type.is_file() {
            0o400
        } else {
            0
        };
        if mode & open_up != open_up {
            frame
                .upper
                .set_permissions(name, Permissions::from_mode(mode | open_up))
                .map_err(|e| failed(&self.shown(&rel), &e))?;
        }
        if file_type.is_dir() {
            return self.directory(frame, &rel, name, mode, lower).map(Some);
        }
        if file_type.is_file() {
            self.file(frame, &rel, name, &meta, lower)?;
            return Ok(None);
        }
        if file_type.is_symlink() {
            self.symlink(frame, &rel, name, lower)?;
            return Ok(None);
        }
        let what = if file_type.is_fifo() {
            "is a FIFO (named pipe)"
        } else if file_type.is_socket() {
            "is a socket"
        } else {
            "is a device node"
        };
        Err(refused(
            &self.shown(&rel),
            format!("{what}: a changeset holds only files, directories and symbolic links"),
        ))
    }

    fn directory(
        &mut self,
        frame: &Frame,
        rel: &Path,
        name: &OsStr,
        mode: u32,
        lower: Option<Metadata>,
    ) -> Result<Frame, ChangesetError> {
        let old = lower
            .as_ref()
            .filter(|lower| lower.is_dir())
            .map(|lower| lower.mode() & 0o7777);
        match (&lower, old) {
            (_, Some(old)) => {
                // Only the permission bits count: copying a directory up may drop a
                // set-group-ID bit whose group the jail does not map.
                if mode & 0o777 != old & 0o777 || mode & SPECIAL_BITS & !old != 0 {
                    self.check_bits(rel, mode, old, false)?;
                    let mode = (mode & 0o777) | (old & SPECIAL_BITS) | (mode & SPECIAL_BITS);
                    self.push(rel, ChangeKind::SetMode { mode, dir: true })?;
                }
            }
            (Some(_), None) => {
                self.delete_tree(rel, false)?;
                self.check_bits(rel, mode, 0, frame.set_gid)?;
                self.push(rel, ChangeKind::CreateDir { mode })?;
            }
            (None, _) => {
                self.check_bits(rel, mode, 0, frame.set_gid)?;
                self.push(rel, ChangeKind::CreateDir { mode })?;
            }
        }
        let upper = frame
            .upper
            .open_dir_nofollow(name)
            .map_err(|e| failed(&self.shown(rel), &e))?;
        let hides = frame.hides || is_opaque(&upper);
        self.enter(rel.to_path_buf(), upper, old.is_some(), hides, mode)
    }

    fn file(
        &mut self,
        frame: &Frame,
        rel: &Path,
        name: &OsStr,
        meta: &Metadata,
        lower: Option<Metadata>,
    ) -> Result<(), ChangesetError> {
        let mode = meta.mode() & 0o7777;
        let size = meta.len();
        let old = lower
            .as_ref()
            .filter(|lower| lower.is_file())
            .map_or(0, |lower| lower.mode() & 0o7777);
        self.check_bits(rel, mode, old, false)?;
        match lower {
            None => self.push(rel, ChangeKind::CreateFile { mode, size }),
            Some(lower) if lower.is_dir() => {
                self.delete_tree(rel, true)?;
                self.push(rel, ChangeKind::CreateFile { mode, size })
            }
            Some(lower) if lower.is_file() => {
                let same = lower.len() == size && {
                    let fail = |e: io::Error| failed(&self.shown(rel), &e);
                    let ours = open_file(&frame.upper, Path::new(name)).map_err(fail)?;
                    let theirs = open_file(self.zone.dir(), rel).map_err(fail)?;
                    same_content(ours, theirs).map_err(fail)?
                };
                if !same {
                    self.push(rel, ChangeKind::WriteFile { mode, size })
                } else if mode != old {
                    self.push(rel, ChangeKind::SetMode { mode, dir: false })
                } else {
                    Ok(())
                }
            }
            Some(_) => self.push(rel, ChangeKind::WriteFile { mode, size }),
        }
    }

    fn symlink(
        &mut self,
        frame: &Frame,
        rel: &Path,
        name: &OsStr,
        lower: Option<Metadata>,
    ) -> Result<(), ChangesetError> {
        let shown = self.shown(rel);
        let target = read_link(&frame.upper, Path::new(name)).map_err(|e| failed(&shown, &e))?;
        if target.is_absolute() {
            return Err(refused(
                &shown,
                format!(
                    "is a symbolic link to an absolute path ({}), which leads outside the zone",
                    target.display()
                ),
            ));
        }
        // Where a relative target leads is judged once the whole layer has been walked (and
        // every directory of it opened up).
        self.links
            .push((frame.rel.clone(), target.clone(), shown.clone()));
        match lower {
            None => self.push(
                rel,
                ChangeKind::Symlink {
                    target,
                    replaces: false,
                },
            ),
            Some(lower) if lower.is_dir() => {
                self.delete_tree(rel, true)?;
                self.push(
                    rel,
                    ChangeKind::Symlink {
                        target,
                        replaces: false,
                    },
                )
            }
            Some(lower) => {
                if lower.is_symlink()
                    && read_link(self.zone.dir(), rel).map_err(|e| failed(&shown, &e))? == target
                {
                    return Ok(());
                }
                self.push(
                    rel,
                    ChangeKind::Symlink {
                        target,
                        replaces: true,
                    },
                )
            }
        }
    }

    /// Whether the relative `target` of a link in the directory `dir` leads outside the zone,
    /// resolved over the zone as it is after the changes: each link met on the way is followed
    /// (a loop resolves nowhere, so it leads nowhere outside either).
    fn escapes(&self, dir: &Path, target: &Path) -> Result<bool, ChangesetError> {
        let mut at: Vec<OsString> = dir
            .components()
            .map(|part| part.as_os_str().to_owned())
            .collect();
        let mut pending: VecDeque<OsString> = VecDeque::new();
        if !push_front(&mut pending, target) {
            return Ok(true);
        }
        let mut links = 0;
        while let Some(part) = pending.pop_front() {
            if part == ".." {
                if at.pop().is_none() {
                    return Ok(true);
                }
                continue;
            }
            at.push(part);
            if let Some(link) = self.merged_link(&at)? {
                links += 1;
                if links > MAX_LINKS {
                    return Ok(false);
                }
                at.pop();
                if !push_front(&mut pending, &link) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// The target of the link at `parts` in the zone as it is after the changes (the upper
    /// layer over the zone), or `None` when there is no link there.
    fn merged_link(&self, parts: &[OsString]) -> Result<Option<PathBuf>, ChangesetError> {
        let rel: PathBuf = parts.iter().collect();
        let fail = |e: io::Error| failed(&self.shown(&rel), &e);
        let mut hidden = false;
        for depth in 1..=parts.len() {
            let prefix: PathBuf = parts[..depth].iter().collect();
            let Ok(meta) = self.upper.symlink_metadata(&prefix) else {
                break;
            };
            if is_whiteout(&meta) {
                return Ok(None);
            }
            if depth == parts.len() {
                return if meta.is_symlink() {
                    read_link(self.upper, &prefix).map(Some).map_err(fail)
                } else {
                    Ok(None)
                };
            }
            if !meta.is_dir() {
                return Ok(None);
            }
            if !hidden {
                let dir = self.upper.open_dir_nofollow(&prefix).map_err(fail)?;
                hidden = is_opaque(&dir);
            }
        }
        if hidden {
            return Ok(None);
        }
        match self.lower(&rel)? {
            Some(meta) if meta.is_symlink() => {
                read_link(self.zone.dir(), &rel).map(Some).map_err(fail)
            }
            Some(_) | None => Ok(None),
        }
    }
}
