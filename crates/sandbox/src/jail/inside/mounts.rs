//! The filesystem a jailed process sees. With namespaces (stage 2 as root of its user
//! namespace): a fresh tmpfs root holding the system directories interpreters need, every zone
//! at its virtual path `/<zone>`, the private `/tmp`, a new `/proc` and a few device nodes, then
//! `pivot_root` into it — nothing else of the host exists there. Without namespaces (best
//! effort): the host's tree, with the same paths listed for Landlock.
//!
//! Every mount of the view is `nosuid`, and every one but the device nodes `nodev` (a device
//! node cannot be opened on a `nodev` mount). System paths, `ro` zones and the device nodes are
//! read-only mounts, so the kernel answers `EROFS` to any change of their contents *or*
//! metadata (`chmod`, `chown`, times, attributes, inode flags), which Landlock does not cover;
//! Landlock still limits what may be opened. The attributes are added with `mount_setattr(2)`
//! (recursively, and only ever adding restrictions, so the source mount's locked flags never
//! need repeating). `/tmp` and `/dev/shm` are fresh tmpfs mounts limited in size and inodes.
//!
//! A run whose writes become a changeset sees each `rw` zone through an overlay instead of a
//! bind mount (`mount_overlay`): the zone is the lower layer, and everything the run changes
//! lands in an upper directory the parent made outside the run directory, which the program
//! never sees by any path of its own.
//!
//! Runs in stage 2, inside the jail's mount namespace, before the run is known.

use std::ffi::{CString, NulError};
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};

use crate::jail::spec::{JailSpec, SpecOverlay};

use super::net_stack::NAMESERVER;

/// System directories and files made visible read-only (those that exist on the host).
/// Directories under `/etc` are listed one by one: `/etc` as a whole holds secrets.
pub(crate) const SYSTEM_PATHS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/alternatives",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/resolv.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/protocols",
    "/etc/mime.types",
];

/// Device nodes made visible (read and write).
pub(crate) const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The paths a jailed process sees, as it sees them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct View {
    /// Readable (and executable): system paths and read-only zones.
    pub read_only: Vec<PathBuf>,
    /// Readable and writable: read-write zones, `/tmp`.
    pub read_write: Vec<PathBuf>,
    /// Device nodes.
    pub devices: Vec<PathBuf>,
    /// Directories that may be listed, nothing more (the jail's own root).
    pub list_only: Vec<PathBuf>,
    /// The private temporary directory.
    pub tmp: PathBuf,
    /// Each zone's name and where the program sees it.
    pub zones: Vec<(String, PathBuf)>,
}

impl View {
    /// The view without namespaces: host paths.
    pub fn host(spec: &JailSpec) -> View {
        let mut read_only: Vec<PathBuf> = existing_system_paths().collect();
        let mut read_write = vec![spec.script_dir()];
        for zone in &spec.zones {
            if zone.writable {
                read_write.push(zone.host.clone());
            } else {
                read_only.push(zone.host.clone());
            }
        }
        View {
            read_only,
            read_write,
            devices: DEVICES.iter().map(PathBuf::from).collect(),
            list_only: Vec::new(),
            tmp: spec.script_dir(),
            zones: spec
                .zones
                .iter()
                .map(|zone| (zone.name.clone(), zone.host.clone()))
                .collect(),
        }
    }

    /// The working directory: the zone `cwd_zone` where the program sees it, else `/tmp`.
    pub fn cwd(&self, cwd_zone: Option<&str>) -> &Path {
        cwd_zone
            .and_then(|name| self.zones.iter().find(|(zone, _)| zone == name))
            .map_or(self.tmp.as_path(), |(_, path)| path.as_path())
    }

    /// The fixed part of the environment (the call's own variables are added after it).
    pub fn base_env(&self) -> Vec<(String, String)> {
        let tmp = self.tmp.to_string_lossy().into_owned();
        vec![
            (
                "PATH".into(),
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            ),
            ("HOME".into(), tmp.clone()),
            ("TMPDIR".into(), tmp),
            ("LANG".into(), "C.UTF-8".into()),
            ("TERM".into(), "dumb".into()),
            // Unbuffered, so the output before a timeout is not lost in a buffer.
            ("PYTHONUNBUFFERED".into(), "1".into()),
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
        ]
    }
}

fn existing_system_paths() -> impl Iterator<Item = PathBuf> {
    SYSTEM_PATHS
        .iter()
        .map(PathBuf::from)
        .filter(|path| fs::symlink_metadata(path).is_ok())
}

/// `mount_setattr(2)` attribute bits (`linux/mount.h`).
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

/// What a mount of the view may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Read-only, no set-id programs, no device nodes.
    ReadOnly,
    /// Writable, no set-id programs, no device nodes.
    ReadWrite,
    /// A device node: usable, but its own metadata is read-only.
    Device,
}

impl Access {
    fn attributes(self) -> u64 {
        match self {
            Access::ReadOnly => MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            Access::ReadWrite => MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
            Access::Device => MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
        }
    }
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// What building the view was doing when it failed (on a path, which the error names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    Restrict,
    Create,
    MountTmpfs,
    Inspect,
    ReadLink,
    CreateLink,
    Mount,
    Open,
    MountOverlay,
    Write,
    Remove,
    Enter,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Step::Restrict => "restricting the mount",
            Step::Create => "creating",
            Step::MountTmpfs => "mounting a tmpfs on",
            Step::Inspect => "inspecting",
            Step::ReadLink => "reading link",
            Step::CreateLink => "creating link",
            Step::Mount => "mounting",
            Step::Open => "opening",
            Step::MountOverlay => "mounting the copy-on-write layer of",
            Step::Write => "writing",
            Step::Remove => "removing",
            Step::Enter => "entering",
        })
    }
}

/// Why the jail's filesystem view could not be built.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MountError {
    /// A step on `path` failed.
    #[error("{step} {}: {source}", path.display())]
    Io {
        step: Step,
        path: PathBuf,
        source: io::Error,
    },
    /// A path or mount option held a NUL byte, which no system call can take.
    #[error("{step} {}: {source}", path.display())]
    Nul {
        step: Step,
        path: PathBuf,
        source: NulError,
    },
    /// The jail's own resolver is shown over the host's file, which must be one.
    #[error("the host's /etc/resolv.conf is not a plain file")]
    ResolverNotAFile,
    #[error("making mounts private: {0}")]
    MakePrivate(#[source] rustix::io::Errno),
    #[error("pivot_root: {0}")]
    PivotRoot(#[source] rustix::io::Errno),
    #[error("detaching the old root: {0}")]
    DetachOldRoot(#[source] rustix::io::Errno),
    #[error("entering the new root: {0}")]
    EnterNewRoot(#[source] io::Error),
}

/// The error of `step` on `path` (an I/O error, or an errno).
fn failed<E: Into<io::Error>>(step: Step, path: &Path) -> impl FnOnce(E) -> MountError + '_ {
    move |source| MountError::Io {
        step,
        path: path.to_path_buf(),
        source: source.into(),
    }
}

/// The error of `step` on `path` whose path or options held a NUL byte.
fn nul(step: Step, path: &Path) -> impl FnOnce(NulError) -> MountError + '_ {
    move |source| MountError::Nul {
        step,
        path: path.to_path_buf(),
        source,
    }
}

/// Adds `attributes` to the mount at `path`, and with `recursive` to every mount below it.
#[allow(unsafe_code)]
fn restrict_mount(path: &Path, attributes: u64, recursive: bool) -> Result<(), MountError> {
    let c_path = CString::new(path.as_os_str().as_bytes()).map_err(nul(Step::Restrict, path))?;
    let attr = MountAttr {
        attr_set: attributes,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive {
        libc::AT_RECURSIVE | libc::AT_SYMLINK_NOFOLLOW
    } else {
        libc::AT_SYMLINK_NOFOLLOW
    };
    // SAFETY: `c_path` is a NUL-terminated string and `attr` a `struct mount_attr` laid out as
    // the kernel expects, both alive for the whole call; the kernel only reads them.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c_path.as_ptr(),
            flags as libc::c_uint,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(failed(Step::Restrict, path)(io::Error::last_os_error()))
    }
}

/// Mounts a tmpfs of at most `bytes` and `files` inodes on `target`.
fn mount_tmpfs(target: &Path, mode: &str, bytes: u64, files: u64) -> Result<(), MountError> {
    fs::create_dir_all(target).map_err(failed(Step::Create, target))?;
    let data = CString::new(format!("mode={mode},size={bytes},nr_inodes={files}"))
        .map_err(nul(Step::MountTmpfs, target))?;
    rustix::mount::mount(
        "tmpfs",
        target,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(data.as_c_str()),
    )
    .map_err(failed(Step::MountTmpfs, target))
}

/// `target` inside the new root.
fn under(root: &Path, target: &Path) -> PathBuf {
    root.join(target.strip_prefix("/").unwrap_or(target))
}

/// Makes `host` visible at `target` (same kind: directory, file or symbolic link), for `access`.
fn expose(root: &Path, host: &Path, target: &Path, access: Access) -> Result<(), MountError> {
    let inside = under(root, target);
    let meta = fs::symlink_metadata(host).map_err(failed(Step::Inspect, host))?;
    if let Some(parent) = inside.parent() {
        fs::create_dir_all(parent).map_err(failed(Step::Create, parent))?;
    }
    if meta.file_type().is_symlink() {
        let link = fs::read_link(host).map_err(failed(Step::ReadLink, host))?;
        return symlink(&link, &inside).map_err(failed(Step::CreateLink, &inside));
    }
    if meta.is_dir() {
        fs::create_dir_all(&inside).map_err(failed(Step::Create, &inside))?;
    } else {
        fs::File::create(&inside).map_err(failed(Step::Create, &inside))?;
    }
    rustix::mount::mount_bind_recursive(host, &inside).map_err(failed(Step::Mount, host))?;
    restrict_mount(&inside, access.attributes(), true)
}

/// Mounts an overlay of `lower` (the zone) with `layer`'s upper and work directories on
/// `target`, `nosuid` and `nodev`. Unprivileged overlays keep their own attributes in `user.*`
/// extended attributes (`userxattr`), which also means redirects are neither made nor followed
/// (renaming a directory that exists in the zone fails with `EXDEV`, and `mv` copies instead)
/// and metadata-only copy-up is off, so every changed file's content is in the upper
/// directory; `index=off` keeps the upper directory free of hard-link bookkeeping. The layer
/// is scratch (a crash loses the changeset with it), so it is `volatile`: neither the
/// program's `fsync`s nor the overlay going away at the end of the run sync the upper
/// directory's file system (which, when the namespace's last process exits, would hold up the
/// run's end until every dirty page of that whole file system is written). The three
/// directories are given as `/proc/self/fd/N` of handles opened here, so no path ever needs
/// escaping in the option string.
fn mount_overlay(
    root: &Path,
    lower: &Path,
    layer: &SpecOverlay,
    target: &Path,
) -> Result<(), MountError> {
    use std::os::fd::AsRawFd;
    let inside = under(root, target);
    fs::create_dir_all(&inside).map_err(failed(Step::Create, &inside))?;
    let open = |path: &Path| {
        rustix::fs::open(
            path,
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(failed(Step::Open, path))
    };
    let (lower_fd, upper_fd, work_fd) = (open(lower)?, open(&layer.upper)?, open(&layer.work)?);
    let data = CString::new(format!(
        "lowerdir=/proc/self/fd/{},upperdir=/proc/self/fd/{},workdir=/proc/self/fd/{},\
         userxattr,index=off,metacopy=off,redirect_dir=nofollow,volatile",
        lower_fd.as_raw_fd(),
        upper_fd.as_raw_fd(),
        work_fd.as_raw_fd()
    ))
    .map_err(nul(Step::MountOverlay, lower))?;
    rustix::mount::mount(
        "overlay",
        &inside,
        "overlay",
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(data.as_c_str()),
    )
    .map_err(failed(Step::MountOverlay, lower))
}

/// Shows the jail's own network's DNS forwarder as `/etc/resolv.conf` (the host's names servers
/// that are private or its own are out of reach).
fn private_resolver(root: &Path) -> Result<(), MountError> {
    let target = under(root, Path::new("/etc/resolv.conf"));
    if !fs::symlink_metadata(&target).is_ok_and(|meta| meta.is_file()) {
        return Err(MountError::ResolverNotAFile);
    }
    let source = root.join(".resolv.conf");
    fs::write(&source, format!("nameserver {}\n", NAMESERVER))
        .map_err(failed(Step::Write, &source))?;
    rustix::mount::mount_bind(&source, &target).map_err(failed(Step::Mount, &target))?;
    // The mount keeps the file; the root's own entry goes.
    fs::remove_file(&source).map_err(failed(Step::Remove, &source))?;
    restrict_mount(&target, Access::ReadOnly.attributes(), false)
}

/// Builds the new root on `spec.root` and moves into it. Returns the view and notes about
/// what is missing (a `/proc` that could not be mounted).
pub(crate) fn build(spec: &JailSpec) -> Result<(View, Vec<String>), MountError> {
    let mut notes = Vec::new();
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(MountError::MakePrivate)?;
    let root_dir = spec.root();
    let root = root_dir.as_path();
    rustix::mount::mount(
        "tmpfs",
        root,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(c"mode=0755,size=4m"),
    )
    .map_err(failed(Step::MountTmpfs, root))?;

    let mut read_only = Vec::new();
    for path in existing_system_paths() {
        expose(root, &path, &path, Access::ReadOnly)?;
        read_only.push(path);
    }
    if spec.net.is_some()
        && let Err(e) = private_resolver(root)
    {
        notes.push(format!("DNS may not work in the jail: {e}"));
    }
    let mut read_write = vec![PathBuf::from("/tmp")];
    let tmp = under(root, Path::new("/tmp"));
    let limits = &spec.limits;
    mount_tmpfs(&tmp, "1777", limits.tmp_bytes, limits.tmp_files)?;
    let mut zones = Vec::new();
    for zone in &spec.zones {
        let target = PathBuf::from("/").join(&zone.name);
        zones.push((zone.name.clone(), target.clone()));
        if zone.writable {
            match &zone.overlay {
                Some(layer) => mount_overlay(root, &zone.host, layer, &target)?,
                None => expose(root, &zone.host, &target, Access::ReadWrite)?,
            }
            read_write.push(target);
        } else {
            expose(root, &zone.host, &target, Access::ReadOnly)?;
            read_only.push(target);
        }
    }
    let mut devices = Vec::new();
    for device in DEVICES {
        let device = Path::new(device);
        if device.exists() {
            expose(root, device, device, Access::Device)?;
            devices.push(device.to_path_buf());
        }
    }
    let dev = under(root, Path::new("/dev"));
    fs::create_dir_all(&dev).map_err(failed(Step::Create, &dev))?;
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        let link = dev.join(name);
        symlink(target, &link).map_err(failed(Step::CreateLink, &link))?;
    }
    let shm = under(root, Path::new("/dev/shm"));
    match mount_tmpfs(&shm, "1777", limits.tmp_bytes, limits.tmp_files) {
        Ok(()) => read_write.push(PathBuf::from("/dev/shm")),
        Err(e) => notes.push(format!("no /dev/shm: {e}")),
    }
    let proc_dir = under(root, Path::new("/proc"));
    fs::create_dir_all(&proc_dir).map_err(failed(Step::Create, &proc_dir))?;
    match rustix::mount::mount(
        "proc",
        &proc_dir,
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    ) {
        Ok(()) => read_only.push(PathBuf::from("/proc")),
        Err(e) => notes.push(format!("no /proc in the jail: mounting it failed: {e}")),
    }

    std::env::set_current_dir(root).map_err(failed(Step::Enter, root))?;
    rustix::process::pivot_root(".", ".").map_err(MountError::PivotRoot)?;
    rustix::mount::unmount(".", UnmountFlags::DETACH).map_err(MountError::DetachOldRoot)?;
    std::env::set_current_dir("/").map_err(MountError::EnterNewRoot)?;
    // The root itself holds only mount points: make it read-only (not recursively: the mounts
    // on it keep their own access).
    restrict_mount(Path::new("/"), Access::ReadOnly.attributes(), false)?;

    Ok((
        View {
            read_only,
            read_write,
            devices,
            list_only: vec![PathBuf::from("/")],
            tmp: PathBuf::from("/tmp"),
            zones,
        },
        notes,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jail::spec::RESERVED_NAMES;

    #[test]
    fn every_top_level_name_of_the_jails_own_tree_is_reserved_from_zones() {
        let own = SYSTEM_PATHS
            .iter()
            .chain(DEVICES)
            .chain(&["/tmp", "/proc", "/dev/shm"]);
        for path in own {
            let top = path.trim_start_matches('/').split('/').next().unwrap();
            assert!(
                RESERVED_NAMES.contains(&top),
                "{path}: a zone named `{top}` would clash with the jail's own /{top}"
            );
        }
    }

    #[test]
    fn a_failed_step_names_its_path_and_keeps_the_io_error_as_its_source() {
        let missing = Path::new("/nonexistent/golem-forge-test");
        let err = expose(Path::new("/tmp"), missing, missing, Access::ReadOnly).unwrap_err();
        let MountError::Io { step, path, source } = &err else {
            panic!("not an I/O error: {err:?}");
        };
        assert_eq!((*step, path.as_path()), (Step::Inspect, missing));
        assert_eq!(source.kind(), io::ErrorKind::NotFound);
        assert!(
            err.to_string()
                .starts_with("inspecting /nonexistent/golem-forge-test: "),
            "{err}"
        );
        let shown = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(shown, Some(source.to_string()));
    }
}
