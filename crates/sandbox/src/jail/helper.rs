//! The helper: our own binary in its jail mode. The parent starts `<binary> __jail --standby
//! DIR PROCS…` ahead of the run (`standby.rs`), which joins the run's cgroups and is stage 1:
//! it reads the jail spec `DIR/jail.json`, enters new namespaces and starts `<binary> __jail
//! --stage2 DIR MODE` (stage 2, PID 1 of the new PID namespace, `stage2.rs`), which builds the
//! filesystem view and waits. Stage 1 waits for `go` on its stdin and passes it on to stage 2,
//! which reads the run spec, applies every restriction and starts the program, then stays as
//! the namespace's init, reaping orphans until the program ends. The read end of the
//! program's stdin pipe travels down both stages as fd 3 (`standby.rs`). `<binary> __jail --probe`
//! reports what the kernel supports (see `support.rs`); `<binary> __jail --reap …` is the
//! reaper of programs outside the jail (`crate::reaper`). Each stage is a fresh process, so the
//! setup may allocate freely: nothing runs between `fork` and `exec` but the standard
//! library's own spawning code.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::spec::{JAIL_SPEC_FILE, JailSpec, ReportLine, ReportedExit, append, read_json};
use super::standby::{self, STANDBY_ARG};
use super::{net, stage2, support};

/// The first argument that puts the binary in jail-helper mode.
pub const HELPER_ARG: &str = "__jail";

/// Exit code of the helper when the jail could not be built (the report says why).
pub(crate) const SETUP_FAILED: i32 = 125;

/// Runs the helper with the arguments that follow [`HELPER_ARG`] and returns the process exit
/// code. Call it first thing in `main`, before any thread or runtime starts. `--reap` is the
/// reaper of programs started outside the jail (`crate::reaper`), which every helper binary
/// thus has too.
pub fn helper_main(args: Vec<OsString>) -> i32 {
    if let Some((first, rest)) = args.split_first()
        && first == crate::reaper::REAP_ARG
    {
        return crate::reaper::reap_main(rest.to_vec());
    }
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["--probe"] => support::probe(),
        ["--stage2", dir, mode] => stage2::stage2(Path::new(dir), *mode == "ns"),
        [net::NET_ARG, rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|a| (*a).to_owned()).collect();
            net::stack_main(&rest)
        }
        [STANDBY_ARG, dir, procs @ ..] => {
            let procs: Vec<String> = procs.iter().map(|p| (*p).to_owned()).collect();
            standby::wait_then_run(Path::new(dir), &procs)
        }
        _ => {
            eprintln!("golem-forge {HELPER_ARG}: internal helper; not for direct use");
            2
        }
    }
}

/// The report file, opened for appending (`None` when it cannot be: the parent then falls back
/// to the helper's exit status).
pub(crate) fn open_report(path: &Path) -> Option<File> {
    OpenOptions::new().append(true).create(true).open(path).ok()
}

/// The jail spec in `dir`, or `None` after saying why on stderr (there may be no report to
/// write to yet).
pub(crate) fn read_jail_spec(dir: &Path) -> Option<JailSpec> {
    let path = dir.join(JAIL_SPEC_FILE);
    std::fs::File::open(&path)
        .map_err(|e| format!("reading {}: {e}", path.display()))
        .and_then(|file| read_json(file, &path))
        .map_err(|message| eprintln!("golem-forge {HELPER_ARG}: {message}"))
        .ok()
}

/// Reports that the jail could not be built and returns the helper's exit code for that.
pub(crate) fn setup_failed(report: &mut Option<File>, message: String) -> i32 {
    if let Some(report) = report {
        append(report, &ReportLine::SetupError(message));
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

/// The namespaces of stage 1: a network namespace of its own unless the jail shares the host's
/// network (the network on without `slirp4netns`, best effort).
fn namespace_flags(spec: &JailSpec) -> rustix::thread::UnshareFlags {
    use rustix::thread::UnshareFlags as F;
    let flags = F::NEWUSER | F::NEWNS | F::NEWPID | F::NEWIPC | F::NEWUTS;
    if spec.network && spec.net.is_none() {
        flags
    } else {
        flags | F::NEWNET
    }
}

/// Stage 1 (already in the run's cgroups): namespaces, then stage 2; then it passes `go` on
/// and returns how stage 2 ended. Without `go` (the parent dropped the standby) it ends stage 2
/// and returns 0.
pub(crate) fn stage1(dir: &Path, mut report: Option<File>) -> i32 {
    let Some(spec) = read_jail_spec(dir) else {
        return setup_failed(
            &mut report,
            format!("the jail spec in {} cannot be read", dir.display()),
        );
    };
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    // The network stack starts in the host's network, before the namespaces are made.
    let stack = match &spec.net {
        Some(routes) => match net::Stack::spawn(&exe, &routes.stack) {
            Ok(stack) => Some((stack, routes)),
            Err(err) => {
                return setup_failed(&mut report, format!("starting slirp4netns: {err}"));
            }
        },
        None => None,
    };
    let namespaced = match unshare(namespace_flags(&spec)).and_then(|()| map_ids(0, uid, gid)) {
        Ok(()) => true,
        Err(err) if spec.best_effort => {
            if let Some(report) = &mut report {
                append(
                    report,
                    &ReportLine::Weakened(format!(
                        "no user, mount, PID or network namespaces ({err}): the program sees \
                         the host's file tree (Landlock still limits what it may open, but not \
                         the metadata of read-only zones: no read-only mounts), /tmp is a host \
                         directory without a size limit, background processes that leave the \
                         process group outlive it, and the network is cut only by seccomp"
                    )),
                );
            }
            false
        }
        Err(err) => {
            return setup_failed(
                &mut report,
                format!("user namespaces are not available: {err}"),
            );
        }
    };
    // Held until stage 1 ends, which ends the stack.
    let _stack = match (stack, namespaced) {
        (Some((stack, routes)), true) => match stack.start(routes) {
            Ok(stack) => Some(stack),
            Err(message) => return setup_failed(&mut report, message),
        },
        // Without namespaces the stack is not started (its start pipe closes).
        (Some(_), false) | (None, _) => None,
    };
    let overlays = spec.zones.iter().any(|zone| zone.overlay.is_some());
    if overlays && report.is_none() {
        // The parent could not tell when the run's processes are gone (see below).
        return SETUP_FAILED;
    }
    // The program's stdin pipe: stage 2 inherits it at the same number; ours is closed once
    // stage 2 has started.
    let stdin_pipe = claim_stdin_fd();
    // Stage 2 reads `go` from this pipe, and learns that we died from its write end closing.
    let (alive_read, alive_write) = match rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
    {
        Ok(pair) => pair,
        Err(err) => return setup_failed(&mut report, format!("creating a pipe: {err}")),
    };
    let child = Command::new(exe)
        .arg(HELPER_ARG)
        .arg("--stage2")
        .arg(dir)
        .arg(if namespaced { "ns" } else { "bare" })
        .env_clear()
        .stdin(Stdio::from(alive_read))
        .spawn();
    drop(stdin_pipe);
    let mut child = match child {
        Ok(child) => child,
        Err(err) => return setup_failed(&mut report, format!("starting stage 2: {err}")),
    };
    // With copy-on-write zones the parent reads what the run changed once every process of the
    // jail is gone; stage 2 (PID 1 of the namespace) ends last, so the parent watches it. A
    // parent that kills this helper first adopts stage 2 and reaps it (`standby.rs`). Written
    // before `go` is passed on, so it is there before anything of the program runs.
    if let Some(report) = &mut report {
        append(report, &ReportLine::Stage2(child.id()));
    }
    if !wait_for_go() {
        drop(alive_write);
        let _ = child.wait();
        return 0;
    }
    // A stage 2 that already failed has closed its end; its report line says why.
    let _ = rustix::io::write(&alive_write, GO);
    let status = child.wait();
    drop(alive_write);
    let exit = match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => ReportedExit::Code(code),
            (None, Some(signal)) => ReportedExit::Signal(signal),
            (None, None) => ReportedExit::Code(SETUP_FAILED),
        },
        Err(err) => return setup_failed(&mut report, format!("waiting for stage 2: {err}")),
    };
    if let Some(report) = &mut report {
        append(report, &ReportLine::Exit(exit));
    }
    match exit {
        ReportedExit::Code(code) => code,
        ReportedExit::Signal(signal) => 128 + signal,
    }
}

/// What starts a run, on the helper's stdin.
pub(crate) const GO: &[u8] = b"go\n";

/// Blocks until stdin says `go` (true) or closes (false).
pub(crate) fn wait_for_go() -> bool {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).is_ok() && line.as_bytes() == GO
}

/// Takes ownership of the program's stdin pipe, which the parent passes as
/// [`standby::STDIN_FD`] (`None` when that descriptor is not a pipe: nothing was passed). It
/// stays open across `exec` until the caller sets close-on-exec.
#[allow(unsafe_code)]
pub(crate) fn claim_stdin_fd() -> Option<rustix::fd::OwnedFd> {
    // SAFETY: borrowed only for the `fstat`, which fails harmlessly on a closed descriptor.
    let borrowed = unsafe { rustix::fd::BorrowedFd::borrow_raw(standby::STDIN_FD) };
    let stat = rustix::fs::fstat(borrowed).ok()?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::Fifo {
        return None;
    }
    // SAFETY: the descriptor is open (`fstat` succeeded) and nothing else in this process owns
    // it: the helper opens nothing before it claims the number the parent reserved for it, and
    // claims it once per process.
    Some(unsafe { <rustix::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(standby::STDIN_FD) })
}
