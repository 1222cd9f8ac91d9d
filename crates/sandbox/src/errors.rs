//! Errors: [`SandboxError`] for configuration time (opening and narrowing zones), and the
//! mapping of I/O errors from zone operations to [`ToolError`] codes (docs/tools.md, Errors).
//!
//! Messages name the virtual path only: a host path never reaches the model.

use std::io;
use std::path::PathBuf;

use golem_protocol::{ToolError, ToolErrorCode};
use rustix::io::Errno;

/// A sandbox that cannot be built from its configuration.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum SandboxError {
    /// A zone name outside `[a-z][a-z0-9_]*`.
    #[error("{message}")]
    InvalidZoneName {
        /// The offending name.
        name: String,
        /// The full message.
        message: String,
    },
    /// Two zones with the same name.
    #[error("zone `{zone}` is configured twice")]
    DuplicateZone { zone: String },
    /// A read-only zone whose directory does not exist.
    #[error("zone `{zone}` is read-only but its directory {} does not exist", path.display())]
    MissingZoneDir {
        zone: String,
        /// The host directory.
        path: PathBuf,
    },
    /// The zone's path exists but is not a directory.
    #[error("zone `{zone}`: {} is not a directory", path.display())]
    NotADirectory {
        zone: String,
        /// The host path.
        path: PathBuf,
    },
    /// Creating or opening the zone directory failed.
    #[error("zone `{zone}`: cannot open directory {}: {source}", path.display())]
    Open {
        zone: String,
        /// The host directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A read-only zone inside a read-write one (it could be changed through the other).
    #[error(
        "zone `{ro_zone}` is read-only but lies inside read-write zone `{rw_zone}`, \
         so it could be changed through /{rw_zone}; make `{ro_zone}` rw, or point the zones at \
         separate directories"
    )]
    ReadOnlyInsideWritable {
        /// The read-only zone.
        ro_zone: String,
        /// The read-write zone containing it.
        rw_zone: String,
    },
    /// A read-write zone inside a read-only one (the read-only zone could be changed through
    /// it).
    #[error(
        "zone `{rw_zone}` is read-write but lies inside read-only zone `{ro_zone}`, \
         so /{ro_zone} could be changed through /{rw_zone}; make `{ro_zone}` rw or `{rw_zone}` ro, \
         or point the zones at separate directories"
    )]
    WritableInsideReadOnly {
        /// The read-write zone.
        rw_zone: String,
        /// The read-only zone containing it.
        ro_zone: String,
    },
    /// A sub-worker asked for a zone its parent does not have.
    #[error("zone `{zone}` is not available to a sub-worker: the parent has {known}")]
    UnknownZone {
        /// The zone asked for.
        zone: String,
        /// The parent's zones, listed for the message.
        known: String,
    },
    /// A sub-worker asked for write access to a zone the parent has read-only.
    #[error("zone `{zone}` is read-only for the parent worker; a sub-worker cannot make it rw")]
    Widening { zone: String },
}

/// What was being done, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Stat,
    List,
    Write,
    CreateDir,
    Delete,
    Move,
}

impl Op {
    fn verb(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Stat => "inspect",
            Op::List => "list",
            Op::Write => "write",
            Op::CreateDir => "create directory",
            Op::Delete => "delete",
            Op::Move => "move",
        }
    }
}

/// Whether `err` is cap-std's refusal of a path that leads outside the directory handle (a
/// `PermissionDenied` that did not come from the operating system).
pub(crate) fn is_escape(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::PermissionDenied && err.raw_os_error().is_none()
}

/// The `INVALID_PATH` error for a path that leads outside its zone.
pub(crate) fn escape_error(vpath: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::InvalidPath,
        format!(
            "{vpath} leads outside its zone (through `..`, an absolute path or a symbolic link); \
             paths must stay inside their zone"
        ),
    )
}

/// Maps an I/O error from `op` on `vpath` to a tool error a model can act on.
pub(crate) fn io_error(err: &io::Error, op: Op, vpath: &str) -> ToolError {
    use ToolErrorCode as C;
    if is_escape(err) {
        return escape_error(vpath);
    }
    let verb = op.verb();
    let (code, message) = match err.raw_os_error().map(Errno::from_raw_os_error) {
        Some(Errno::NOENT) => (
            C::FileNotFound,
            format!("{vpath} does not exist (or a parent directory is missing)"),
        ),
        Some(Errno::ACCESS | Errno::PERM) => (
            C::PermissionDenied,
            format!("the system denied permission to {verb} {vpath}"),
        ),
        Some(Errno::ROFS) => (
            C::PermissionDenied,
            format!("cannot {verb} {vpath}: the file system is read-only"),
        ),
        Some(Errno::ISDIR) => (
            C::InvalidPath,
            format!("cannot {verb} {vpath}: it is a directory"),
        ),
        Some(Errno::NOTDIR) => (
            C::InvalidPath,
            format!("cannot {verb} {vpath}: it, or one of its parents, is not a directory"),
        ),
        Some(Errno::LOOP) => (
            C::InvalidPath,
            format!("cannot {verb} {vpath}: a symbolic link is in the way (or links loop)"),
        ),
        Some(Errno::NAMETOOLONG) => (C::InvalidPath, format!("{vpath} is too long")),
        Some(Errno::EXIST) => (
            C::ExecutionError,
            format!("cannot {verb} {vpath}: it already exists"),
        ),
        Some(Errno::NOTEMPTY) => (
            C::ExecutionError,
            format!("cannot {verb} {vpath}: the directory is not empty"),
        ),
        Some(Errno::NOSPC | Errno::DQUOT) => (
            C::ExecutionError,
            format!("cannot {verb} {vpath}: no space left on the device"),
        ),
        Some(_) | None => (
            C::ExecutionError,
            format!("cannot {verb} {vpath}: {}", os_message(err)),
        ),
    };
    ToolError::new(code, message)
}

/// The error's text without any path (io errors from the OS carry none; cap-std's custom
/// errors are fixed strings).
fn os_message(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => Errno::from_raw_os_error(code).to_string(),
        None => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_codes() {
        let cases = [
            (Errno::NOENT, ToolErrorCode::FileNotFound),
            (Errno::ACCESS, ToolErrorCode::PermissionDenied),
            (Errno::ISDIR, ToolErrorCode::InvalidPath),
            (Errno::NOTDIR, ToolErrorCode::InvalidPath),
            (Errno::LOOP, ToolErrorCode::InvalidPath),
            (Errno::NAMETOOLONG, ToolErrorCode::InvalidPath),
            (Errno::EXIST, ToolErrorCode::ExecutionError),
            (Errno::IO, ToolErrorCode::ExecutionError),
        ];
        for (errno, code) in cases {
            let err = io::Error::from_raw_os_error(errno.raw_os_error());
            let mapped = io_error(&err, Op::Read, "/z/f");
            assert_eq!(mapped.code, code, "{errno:?}");
            assert!(mapped.message.contains("/z/f"), "{}", mapped.message);
        }
    }

    #[test]
    fn cap_std_escape_is_invalid_path() {
        let err = io::Error::new(
            io::ErrorKind::PermissionDenied,
            "a path led outside of the filesystem",
        );
        let mapped = io_error(&err, Op::Write, "/z/link/x");
        assert_eq!(mapped.code, ToolErrorCode::InvalidPath);
        assert!(mapped.message.contains("outside its zone"));
    }
}
