//! The helper: our own binary in its jail mode. The parent starts `<binary> __jail --standby
//! DIR PROCS…` ahead of the run (`standby.rs`), which joins the run's cgroups and waits; on
//! `go` it reads `DIR/spec.json` and is stage 1, which enters new namespaces and starts
//! `<binary> __jail --stage2 SPEC MODE`
//! (stage 2, PID 1 of the new PID namespace), which builds the filesystem view, applies every
//! restriction and starts the program. `<binary> __jail --probe` reports what the kernel
//! supports (see `support.rs`). Stage 2 then stays as the namespace's init, reaping orphans
//! until the program ends. Each stage is a fresh process, so the setup may allocate freely:
//! nothing runs between `fork` and `exec` but the standard library's own spawning code.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rustix::process::Signal;

use super::landlock_rules;
use super::limits;
use super::mounts::{self, View};
use super::seccomp;
use super::spec::{ReportLine, ReportedExit, Spec, append};
use super::standby::{self, STANDBY_ARG};
use super::support;

/// The first argument that puts the binary in jail-helper mode.
pub const HELPER_ARG: &str = "__jail";

/// Exit code of the helper when the jail could not be built (the report says why).
pub(crate) const SETUP_FAILED: i32 = 125;

/// The id the program runs as inside the jail (an unprivileged user of a nested user
/// namespace, mapped to the caller's own id outside).
const JAIL_UID: u32 = 1000;

/// Runs the helper with the arguments that follow [`HELPER_ARG`] and returns the process exit
/// code. Call it first thing in `main`, before any thread or runtime starts.
pub fn helper_main(args: Vec<OsString>) -> i32 {
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
        ["--stage2", spec, mode] => stage2(Path::new(spec), *mode == "ns"),
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

/// The spec, or `None` after saying why on stderr (there is no report to write to yet).
fn read_spec(path: &Path) -> Option<Spec> {
    Spec::read(path)
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

fn namespace_flags(network: bool) -> rustix::thread::UnshareFlags {
    use rustix::thread::UnshareFlags as F;
    let flags = F::NEWUSER | F::NEWNS | F::NEWPID | F::NEWIPC | F::NEWUTS;
    if network { flags } else { flags | F::NEWNET }
}

/// Stage 1 (already in the run's cgroups): namespaces, then stage 2, then its exit status.
pub(crate) fn stage1(spec_path: &Path, mut report: Option<File>) -> i32 {
    let Some(spec) = read_spec(spec_path) else {
        return setup_failed(
            &mut report,
            format!("the spec {} cannot be read", spec_path.display()),
        );
    };
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    let namespaced =
        match unshare(namespace_flags(spec.network)).and_then(|()| map_ids(0, uid, gid)) {
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
    // Stage 2 learns that we died from the write end of this pipe closing.
    let (alive_read, alive_write) = match rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
    {
        Ok(pair) => pair,
        Err(err) => return setup_failed(&mut report, format!("creating a pipe: {err}")),
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe"));
    let child = Command::new(exe)
        .arg(HELPER_ARG)
        .arg("--stage2")
        .arg(spec_path)
        .arg(if namespaced { "ns" } else { "bare" })
        .env_clear()
        .stdin(Stdio::from(alive_read))
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) => return setup_failed(&mut report, format!("starting stage 2: {err}")),
    };
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

/// Whether stage 1 is gone: the write end of the pipe on our stdin is closed.
fn parent_gone() -> bool {
    let stdin = std::io::stdin();
    if rustix::fs::fcntl_setfl(&stdin, rustix::fs::OFlags::NONBLOCK).is_err() {
        return true;
    }
    let mut byte = [0u8; 1];
    !matches!(
        rustix::io::read(&stdin, &mut byte),
        Err(rustix::io::Errno::AGAIN)
    )
}

fn stage2(spec_path: &Path, namespaced: bool) -> i32 {
    // Die with stage 1; then, as PID 1, take every process of the namespace down with us.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    if parent_gone() {
        return SETUP_FAILED;
    }
    let Some(spec) = read_spec(spec_path) else {
        return SETUP_FAILED;
    };
    let mut report = open_report(&spec.report);
    let mut weakened = Vec::new();
    let view = if namespaced {
        // A new session: no controlling terminal to reach (and inject keystrokes into).
        let _ = rustix::process::setsid();
        match mounts::build(&spec) {
            Ok((view, notes)) => {
                weakened.extend(notes);
                view
            }
            Err(message) => return setup_failed(&mut report, message),
        }
    } else {
        View::host(&spec)
    };
    if namespaced {
        // Drop to an unprivileged user of a nested namespace: the program holds no
        // capability, not even over the mounts it sees.
        use rustix::thread::UnshareFlags as F;
        if let Err(err) = unshare(F::NEWUSER).and_then(|()| map_ids(JAIL_UID, 0, 0)) {
            return setup_failed(&mut report, format!("dropping privileges: {err}"));
        }
    }
    if let Err(err) = rustix::thread::set_no_new_privs(true) {
        return setup_failed(&mut report, format!("setting no_new_privs: {err}"));
    }
    match landlock_rules::apply(&view, spec.network) {
        Ok(notes) => weakened.extend(notes),
        Err(message) if spec.best_effort => weakened.push(message),
        Err(message) => return setup_failed(&mut report, message),
    }
    if let Err(message) = limits::apply(&spec.limits) {
        return setup_failed(&mut report, message);
    }
    match seccomp::apply(spec.network) {
        Ok(()) => {}
        Err(message) if spec.best_effort => weakened.push(message),
        Err(message) => return setup_failed(&mut report, message),
    }
    if let Some(report) = &mut report {
        for note in &weakened {
            append(report, &ReportLine::Weakened(note.clone()));
        }
    }
    let mut command = Command::new(&spec.program);
    if let Some(script) = &spec.script {
        command.arg(view.tmp.join(script));
    }
    command
        .args(&spec.args)
        .env_clear()
        .envs(view.base_env())
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&view.cwd)
        .stdin(Stdio::null());
    let child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            let (code, message) = match err.raw_os_error() {
                Some(errno) if errno == rustix::io::Errno::NOENT.raw_os_error() => {
                    (127, format!("{}: command not found", spec.program))
                }
                _ => (126, format!("{}: cannot run: {err}", spec.program)),
            };
            let _ = writeln!(std::io::stderr(), "{message}");
            if let Some(report) = &mut report {
                append(report, &ReportLine::ExecError(message));
                append(report, &ReportLine::Exit(ReportedExit::Code(code)));
            }
            return code;
        }
    };
    let exit = reap_until(child.id());
    if let Some(report) = &mut report {
        append(report, &ReportLine::Exit(exit));
    }
    match exit {
        ReportedExit::Code(code) => code,
        ReportedExit::Signal(signal) => 128 + signal,
    }
}

/// As PID 1 of the namespace: reaps every orphan until the program itself ends, and returns
/// how it ended. (The program is not PID 1 itself, so signals and `RLIMIT_CPU` act on it as
/// they would anywhere.)
fn reap_until(program: u32) -> ReportedExit {
    use rustix::process::{WaitOptions, wait};
    loop {
        match wait(WaitOptions::empty()) {
            Ok(Some((pid, status))) if pid.as_raw_nonzero().get() as u32 == program => {
                return match (status.exit_status(), status.terminating_signal()) {
                    (Some(code), _) => ReportedExit::Code(code),
                    (None, Some(signal)) => ReportedExit::Signal(signal),
                    (None, None) => ReportedExit::Code(SETUP_FAILED),
                };
            }
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(_) => return ReportedExit::Code(SETUP_FAILED),
        }
    }
}
