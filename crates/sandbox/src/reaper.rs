//! The reaper: what keeps a program started outside the jail (a stdio MCP server, the notify
//! command) together with everything it starts, so that all of it ends with the program or
//! with the session. A process group is not enough: a daemon (double fork and `setsid`)
//! leaves it. The reaper is our own binary in a helper mode, `<binary> __jail --reap PATH
//! ARGV0 ARGS…` ([`command`]): it becomes a *child subreaper* (`PR_SET_CHILD_SUBREAPER`), so
//! that every orphan among its descendants, however deep and whatever its session or group,
//! is reparented to it rather than to init; it starts the program with its own standard
//! streams, environment and working directory (nothing relayed; it lets go of its own stdin
//! and stdout, so that the program's closing them is seen), and waits.
//!
//! When the program ends, when the reaper is asked to stop (`SIGTERM`, [`Stop`]), or when its
//! parent dies (a parent-death signal, and its parent pid changed), it kills every
//! descendant: `SIGKILL` to each of its children, reaping them, again until none is left (an
//! orphan of a killed child is reparented to it first). Then it ends as the program did: its
//! exit code, or the same signal raised on itself, so that a caller reporting "killed by
//! signal N" sees the program's end.
//!
//! Its caller must give it that chance: `SIGKILL` to the reaper (or to a group holding it)
//! leaves the daemons to init. [`resolve`] finds the program as `execvp` would, so that a
//! program that cannot be found is still reported by the caller before anything starts.

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use rustix::process::{Pid, Signal, WaitOptions};

use crate::jail::HELPER_ARG;

/// The argument after [`HELPER_ARG`] that puts the helper in reaper mode.
pub const REAP_ARG: &str = "--reap";

/// Exit code of the reaper when it cannot do its job (its stderr says why).
const REAPER_FAILED: i32 = 125;

/// The command that runs `program` (already resolved, see [`resolve`]) with `argv0` and `args`
/// under the reaper of `helper` (our binary). The caller adds the environment, the working
/// directory and the standard streams, which the program inherits.
pub fn command<I, A>(helper: &Path, program: &Path, argv0: &OsStr, args: I) -> Command
where
    I: IntoIterator<Item = A>,
    A: AsRef<OsStr>,
{
    let mut command = Command::new(helper);
    command
        .arg(HELPER_ARG)
        .arg(REAP_ARG)
        .arg(program)
        .arg(argv0)
        .args(args);
    command
}

/// Where `program` is, as `execvp` finds it: a name with a `/` relative to `cwd`, any other
/// name in the directories of `path` (the program's `PATH`; none: not found). An error of
/// kind `NotFound` or `PermissionDenied` when there is no executable file of that name.
pub fn resolve(program: &str, cwd: &Path, path: Option<&str>) -> std::io::Result<PathBuf> {
    if program.is_empty() {
        return Err(not_found());
    }
    if program.contains('/') {
        let candidate = cwd.join(program);
        return executable(&candidate).map(|()| candidate);
    }
    let mut denied = None;
    for dir in path.unwrap_or_default().split(':') {
        // An empty entry is the working directory, as for `execvp`.
        let candidate = cwd.join(dir).join(program);
        match executable(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => denied = Some(err),
            Err(_) => {}
        }
    }
    Err(denied.unwrap_or_else(not_found))
}

/// What `execvp` says of a program it cannot find.
fn not_found() -> std::io::Error {
    std::io::Error::from_raw_os_error(libc::ENOENT)
}

/// Whether `path` is a file someone may execute.
fn executable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() || meta.permissions().mode() & 0o111 == 0 {
        return Err(std::io::Error::from_raw_os_error(libc::EACCES));
    }
    Ok(())
}

/// A started reaper, to be asked to stop: a pidfd, so that the request can never reach another
/// process that got its pid later.
#[derive(Debug)]
pub struct Stop(Option<OwnedFd>);

impl Stop {
    /// The reaper of pid `pid`, a child of ours not reaped yet. Without pidfds (Linux before
    /// 5.3) it cannot be asked; it still ends with its parent.
    pub fn new(pid: u32) -> Stop {
        let pidfd = i32::try_from(pid)
            .ok()
            .and_then(Pid::from_raw)
            .and_then(|pid| {
                rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
            });
        Stop(pidfd)
    }

    /// Asks the reaper to end the program and everything it started (`SIGTERM`); whether it
    /// was asked (not when it is gone already, nor without a pidfd).
    pub fn stop(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|pidfd| rustix::process::pidfd_send_signal(pidfd, Signal::TERM).is_ok())
    }
}

/// The signals the reaper waits for (blocked, taken with `sigwaitinfo`).
const WATCHED: [i32; 4] = [libc::SIGCHLD, libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Why the reaper ends everything.
enum Ending {
    /// The program ended with this wait status.
    Program(rustix::process::WaitStatus),
    /// It was asked to stop, or its parent died, with this signal.
    Stopped(i32),
}

/// Runs the reaper with the arguments after [`REAP_ARG`] (`PATH ARGV0 ARGS…`) and returns
/// its exit code (when it does not end by the program's signal). Single-threaded: call it
/// first thing, before any thread starts.
pub fn reap_main(args: Vec<OsString>) -> i32 {
    let [program, argv0, rest @ ..] = args.as_slice() else {
        eprintln!("golem-forge {HELPER_ARG} {REAP_ARG}: internal helper; not for direct use");
        return 2;
    };
    let parent = rustix::process::getppid();
    let watched = match watched_set() {
        Ok(set) => set,
        Err(err) => return failed(&format!("making a signal set: {err}")),
    };
    if let Err(err) = signal_mask(libc::SIG_BLOCK) {
        return failed(&format!("blocking signals: {err}"));
    }
    if let Err(err) = rustix::process::set_child_subreaper(Some(rustix::process::getpid())) {
        return failed(&format!("cannot become a child subreaper: {err}"));
    }
    if let Err(err) = rustix::process::set_parent_process_death_signal(Some(Signal::HUP)) {
        return failed(&format!("cannot watch its parent: {err}"));
    }
    if rustix::process::getppid() != parent {
        // The parent died before the watch was set: nothing is started.
        return failed("its parent is gone");
    }
    let mut command = Command::new(program);
    command.arg0(argv0).args(rest);
    unblock_in_child(&mut command, watched);
    let started = command.spawn();
    let main = match started {
        Ok(child) => child.id(),
        Err(err) => {
            eprintln!("{}: {err}", Path::new(program).display());
            return match err.kind() {
                std::io::ErrorKind::NotFound => 127,
                _ => 126,
            };
        }
    };
    let main = i32::try_from(main).ok().and_then(Pid::from_raw);
    let_go_of_stdin_and_stdout();
    let ending = wait_for_the_end(main, parent);
    kill_every_descendant();
    match ending {
        Ending::Program(status) => match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => code,
            (None, Some(signal)) => end_by(signal),
            (None, None) => REAPER_FAILED,
        },
        Ending::Stopped(signal) => end_by(signal),
    }
}

/// Says why the reaper cannot work and returns its exit code for that.
fn failed(why: &str) -> i32 {
    eprintln!("golem-forge {HELPER_ARG} {REAP_ARG}: {why}");
    REAPER_FAILED
}

/// Waits until the program `main` ends (reaping whatever else ends meanwhile), the reaper is
/// asked to stop, or its `parent` is gone.
fn wait_for_the_end(main: Option<Pid>, parent: Option<Pid>) -> Ending {
    loop {
        let signal = match next_signal() {
            Ok(signal) => signal,
            Err(err) => {
                eprintln!("golem-forge {HELPER_ARG} {REAP_ARG}: waiting for signals: {err}");
                return Ending::Stopped(libc::SIGTERM);
            }
        };
        match signal {
            libc::SIGCHLD => {
                while let Ok(Some((pid, status))) = rustix::process::wait(WaitOptions::NOHANG) {
                    if Some(pid) == main {
                        return Ending::Program(status);
                    }
                }
            }
            // The parent-death signal also comes when only the thread that started us ended:
            // the parent is gone when our parent pid changed.
            libc::SIGHUP if rustix::process::getppid() == parent => {}
            other => return Ending::Stopped(other),
        }
    }
}

/// `SIGKILL` to every child, reaping them, until there is none: a killed child's orphans are
/// reparented to us before it can be reaped, so the next round finds them. Should the children
/// not be listed (no `/proc`), whatever ends is reaped for a few seconds, then it gives up.
fn kill_every_descendant() {
    let mut unlisted_rounds = 0;
    loop {
        let children = children();
        for child in &children {
            let _gone = rustix::process::kill_process(*child, Signal::KILL);
        }
        let options = if children.is_empty() {
            WaitOptions::NOHANG
        } else {
            WaitOptions::empty()
        };
        match rustix::process::wait(options) {
            Ok(Some(_)) | Err(rustix::io::Errno::INTR) => {}
            Ok(None) if unlisted_rounds < UNLISTED_ROUNDS => {
                unlisted_rounds += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Ok(None) | Err(_) => return,
        }
    }
}

/// How many times (20 ms apart) the reaper waits for children it cannot list.
const UNLISTED_ROUNDS: u32 = 250;

/// Our children: `/proc/self/task/<tid>/children` (the reaper has one thread), or, without
/// it, every process whose parent we are.
fn children() -> Vec<Pid> {
    let me = rustix::process::getpid();
    let listed = std::fs::read_to_string(format!("/proc/self/task/{}/children", me.as_raw_pid()));
    if let Ok(listed) = listed {
        return listed
            .split_whitespace()
            .filter_map(|pid| pid.parse().ok())
            .filter_map(Pid::from_raw)
            .collect();
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(me.as_raw_pid()))
        .filter_map(Pid::from_raw)
        .collect()
}

/// The parent pid of `pid` from `/proc/<pid>/stat` (the field after the state, which follows
/// the command name in parentheses).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// Ends the reaper by `signal` with its default action, as the program ended (no core dump);
/// returns `128 + signal` should it survive (a signal whose default is not to end).
#[allow(unsafe_code)]
fn end_by(signal: i32) -> i32 {
    let _ = rustix::process::setrlimit(
        rustix::process::Resource::Core,
        rustix::process::Rlimit {
            current: Some(0),
            maximum: Some(0),
        },
    );
    // SAFETY: restoring a signal's default action and raising it touch no memory of ours;
    // the reaper is single-threaded.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        let _ = signal_mask(libc::SIG_UNBLOCK);
        libc::raise(signal);
    }
    128 + signal
}

/// Blocks (`SIG_BLOCK`) or unblocks (`SIG_UNBLOCK`) the [`WATCHED`] signals.
#[allow(unsafe_code)]
fn signal_mask(how: i32) -> std::io::Result<()> {
    let set = watched_set()?;
    // SAFETY: `set` is an initialized signal set; the old mask is not asked for.
    let result = unsafe { libc::sigprocmask(how, &raw const set, std::ptr::null_mut()) };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Has the program start with the [`WATCHED`] signals unblocked (a signal mask is inherited,
/// and ours blocks them).
#[allow(unsafe_code)]
fn unblock_in_child(command: &mut Command, set: libc::sigset_t) {
    // SAFETY: the hook only calls `sigprocmask`, which is async-signal-safe, on a signal set
    // made before the fork; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::sigprocmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut()) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}

/// The next of the (blocked) [`WATCHED`] signals.
#[allow(unsafe_code)]
fn next_signal() -> std::io::Result<i32> {
    let set = watched_set()?;
    loop {
        // SAFETY: `set` is an initialized signal set; no `siginfo_t` is asked for.
        let signal = unsafe { libc::sigwaitinfo(&raw const set, std::ptr::null_mut()) };
        if signal >= 0 {
            return Ok(signal);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// The set of the [`WATCHED`] signals.
#[allow(unsafe_code)]
fn watched_set() -> std::io::Result<libc::sigset_t> {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: `sigemptyset` initializes the set it is given; `sigaddset` only adds valid
    // signal numbers to it.
    unsafe {
        if libc::sigemptyset(set.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        for signal in WATCHED {
            if libc::sigaddset(set.as_mut_ptr(), signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(set.assume_init())
    }
}

/// Points our stdin and stdout at `/dev/null`: the program holds the real ones, and a program
/// that closes its stdout must be seen to (its stderr stays ours, for our own last words).
fn let_go_of_stdin_and_stdout() {
    let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    else {
        return;
    };
    let null = OwnedFd::from(null);
    let _ = rustix::stdio::dup2_stdin(&null);
    let _ = rustix::stdio::dup2_stdout(&null);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_found_as_execvp_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let plain = bin.join("plain");
        std::fs::write(&plain, "data").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("/nonexistent:{}", bin.display());
        assert_eq!(resolve("tool", dir.path(), Some(&path)).unwrap(), tool);
        assert_eq!(
            resolve("bin/tool", dir.path(), None).unwrap(),
            dir.path().join("bin/tool")
        );
        let kind = |r: std::io::Result<PathBuf>| r.unwrap_err().kind();
        assert_eq!(
            kind(resolve("missing", dir.path(), Some(&path))),
            std::io::ErrorKind::NotFound
        );
        assert_eq!(
            kind(resolve("tool", dir.path(), None)),
            std::io::ErrorKind::NotFound
        );
        assert_eq!(
            kind(resolve("plain", dir.path(), Some(&path))),
            std::io::ErrorKind::PermissionDenied
        );
    }
}
