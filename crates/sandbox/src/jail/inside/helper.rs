//! What the helper's processes (stage 1, stage 2 and the probe) do the same way: write the
//! report, read the jail spec, make a user namespace and map ids into it, wait for `go`, and
//! claim the program's stdin pipe from [`STDIN_FD`]. Each stage is a fresh process, so the
//! setup may allocate freely: nothing runs between `fork` and `exec` but the standard
//! library's own spawning code. Runs in the helper's processes.

use std::fs::{File, OpenOptions};
use std::path::Path;

use crate::jail::spec::{
    GO, HELPER_ARG, JAIL_SPEC_FILE, JailSpec, ReportLine, SETUP_FAILED, STDIN_FD, append, read_json,
};

/// The report file, opened for appending (`None` when it cannot be: the parent then falls back
/// to the helper's exit status).
pub(crate) fn open_report(path: &Path) -> Option<File> {
    OpenOptions::new().append(true).create(true).open(path).ok()
}

/// The jail spec in `dir`, or `None` after saying why on stderr (there may be no report to
/// write to yet).
pub(crate) fn read_jail_spec(dir: &Path) -> Option<JailSpec> {
    let path = dir.join(JAIL_SPEC_FILE);
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("golem-forge {HELPER_ARG}: reading {}: {e}", path.display());
            return None;
        }
    };
    read_json(file, &path)
        .map_err(|e| eprintln!("golem-forge {HELPER_ARG}: {e}"))
        .ok()
}

/// Reports that the jail could not be built (`message`: an error of a stage, or a sentence)
/// and returns the helper's exit code for that.
pub(crate) fn setup_failed(report: &mut Option<File>, message: impl std::fmt::Display) -> i32 {
    if let Some(report) = report {
        append(report, &ReportLine::SetupError(message.to_string()));
    }
    SETUP_FAILED
}

/// `unshare(2)` of the given namespaces for this single-threaded helper process.
#[allow(unsafe_code)]
pub(crate) fn unshare(flags: rustix::thread::UnshareFlags) -> std::io::Result<()> {
    // SAFETY: the helper is single-threaded at this point and never unshares the file
    // descriptor table (`CLONE_FILES`), the only flag with the aliasing hazard the function is
    // marked unsafe for.
    unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(std::io::Error::from)
}

/// Maps `inside` to `outside` for both ids of the calling process's new user namespace.
pub(crate) fn map_ids(inside: u32, outside_uid: u32, outside_gid: u32) -> std::io::Result<()> {
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{inside} {outside_uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{inside} {outside_gid} 1\n"))?;
    Ok(())
}

/// Blocks until stdin says `go` (true) or closes (false).
pub(crate) fn wait_for_go() -> bool {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).is_ok() && line.as_bytes() == GO
}

/// Takes ownership of the program's stdin pipe, which the parent passes as
/// [`STDIN_FD`] (`None` when that descriptor is not a pipe: nothing was passed). It
/// stays open across `exec` until the caller sets close-on-exec.
#[allow(unsafe_code)]
pub(crate) fn claim_stdin_fd() -> Option<rustix::fd::OwnedFd> {
    // SAFETY: borrowed only for the `fstat`, which fails harmlessly on a closed descriptor.
    let borrowed = unsafe { rustix::fd::BorrowedFd::borrow_raw(STDIN_FD) };
    let stat = rustix::fs::fstat(borrowed).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Fifo {
        return None;
    }
    // SAFETY: the descriptor is open (`fstat` succeeded) and nothing else in this process owns
    // it: the helper opens nothing before it claims the number the parent reserved for it, and
    // claims it once per process.
    Some(unsafe { <rustix::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(STDIN_FD) })
}
