//! Stage 2 of the helper: PID 1 of the jail's PID namespace. Before its run is known it builds
//! the filesystem view (`mounts.rs`), the Landlock ruleset and the seccomp filters, and waits
//! for `go` on its stdin (a pipe from stage 1).
//! Then it reads the run spec and the script through a handle on the run directory opened
//! before the new root hid it, drops to an unprivileged user of a nested user namespace,
//! applies `no_new_privs`, Landlock, the rlimits and seccomp, starts the program and reaps
//! every orphan until the program ends. The program's stdin is `/dev/null`, or for an
//! interactive run the pipe the parent passed down as fd 3 (`parent/standby.rs`), or for a run
//! with a private channel that pipe relayed over a socket (`channel.rs`). Stage 2 makes itself
//! non-dumpable before the program starts, so nothing in the jail can open its descriptors.
//! Runs in the helper's second process, inside the jail's namespaces.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::path::Path;
use std::process::{Command, Stdio};

use rustix::fd::OwnedFd;
use rustix::fs::{Mode, OFlags};
use rustix::process::Signal;

use crate::jail::spec::{
    ProgramStdio, RUN_SPEC_FILE, ReportLine, ReportedExit, RunSpec, SCRIPT_DIR, SETUP_FAILED,
    SpecFileError, append, read_json,
};

use super::channel::{CHANNEL_FD_VAR, Channel};
use super::helper::{
    claim_stdin_fd, map_ids, open_report, read_jail_spec, setup_failed, unshare, wait_for_go,
};
use super::mounts::{self, View};
use super::{landlock_rules, limits, seccomp};

/// The helper's mode (after [`HELPER_ARG`](crate::jail::spec::HELPER_ARG)) that is stage 2:
/// `--stage2 DIR MODE`, `MODE` being `ns` when stage 1 made the namespaces.
pub(super) const STAGE2_ARG: &str = "--stage2";

/// The id the program runs as inside the jail (an unprivileged user of a nested user
/// namespace, mapped to the caller's own id outside).
const JAIL_UID: u32 = 1000;

/// Whether stage 1 is gone: the write end of the pipe on our stdin is closed (a `go` already
/// waiting there is left for [`wait_for_go`]).
fn parent_gone() -> bool {
    use rustix::event::{PollFd, PollFlags, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let now = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&now)) {
        Ok(_) => fds[0].revents().contains(PollFlags::HUP),
        Err(_) => true,
    }
}

/// Opens `name` beneath the run directory `dir` for reading.
fn open_beneath(dir: &OwnedFd, name: &str) -> std::io::Result<File> {
    let fd = rustix::fs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
}

/// Why the run could not be read or its script not put in place.
#[derive(Debug, thiserror::Error)]
enum RunSpecError {
    #[error("reading the run spec: {0}")]
    Open(#[source] std::io::Error),
    #[error(transparent)]
    Parse(#[from] SpecFileError),
    #[error("reading the script {script}: {source}")]
    ReadScript {
        script: String,
        source: std::io::Error,
    },
    #[error("writing the script to {}: {source}", path.display())]
    WriteScript {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Reads the run spec, and with namespaces copies the script into the jail's own `/tmp`.
fn prepare_run(dir: &OwnedFd, view: &View, namespaced: bool) -> Result<RunSpec, RunSpecError> {
    let what = Path::new(RUN_SPEC_FILE);
    let file = open_beneath(dir, RUN_SPEC_FILE).map_err(RunSpecError::Open)?;
    let spec: RunSpec = read_json(file, what)?;
    if let (Some(script), true) = (&spec.script, namespaced) {
        let mut contents = Vec::new();
        open_beneath(dir, &format!("{SCRIPT_DIR}/{script}"))
            .and_then(|mut file| file.read_to_end(&mut contents))
            .map_err(|source| RunSpecError::ReadScript {
                script: script.clone(),
                source,
            })?;
        let path = view.tmp.join(script);
        if let Err(source) = std::fs::write(&path, contents) {
            return Err(RunSpecError::WriteScript { path, source });
        }
    }
    Ok(spec)
}

/// Stage 2 for the run directory `dir`, with or without the namespaces stage 1 made.
pub(crate) fn stage2(dir: &Path, namespaced: bool) -> i32 {
    // Die with stage 1; then, as PID 1, take every process of the namespace down with us.
    let _ = rustix::process::set_parent_process_death_signal(Some(Signal::KILL));
    // The program's stdin pipe, kept out of every process but the program (as its stdin).
    let stdin_pipe = claim_stdin_fd()
        .filter(|fd| rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC).is_ok());
    if parent_gone() {
        return SETUP_FAILED;
    }
    let Some(jail) = read_jail_spec(dir) else {
        return SETUP_FAILED;
    };
    let mut report = open_report(&jail.report());
    // The run directory stays reachable through this handle after the new root hides it.
    let run_dir = match rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) => return setup_failed(&mut report, format!("opening {}: {e}", dir.display())),
    };
    let mut weakened = Vec::new();
    let view = if namespaced {
        // A new session: no controlling terminal to reach (and inject keystrokes into).
        let _ = rustix::process::setsid();
        match mounts::build(&jail) {
            Ok((view, notes)) => {
                weakened.extend(notes);
                view
            }
            Err(message) => return setup_failed(&mut report, message),
        }
    } else if jail.zones.iter().any(|zone| zone.overlay.is_some()) {
        // Without a mount namespace the zones cannot be layered: the program would change
        // them directly, which a changeset run must never do (even in best-effort mode).
        return setup_failed(
            &mut report,
            "the zones cannot be given copy-on-write layers without mount namespaces, so this \
             run's changes could not be held back for review"
                .to_owned(),
        );
    } else {
        View::host(&jail)
    };
    // What does not depend on the run is prepared now, before it is known.
    let ruleset = landlock_rules::prepare(&view, jail.network);
    let filters = seccomp::compile_filters(jail.network);
    if !wait_for_go() {
        return 0;
    }
    let run = match prepare_run(&run_dir, &view, namespaced) {
        Ok(run) => run,
        Err(message) => return setup_failed(&mut report, message),
    };
    drop(run_dir);
    // Made before seccomp, which refuses `connect` with the network off.
    let channel = match run.stdio {
        ProgramStdio::Channel => match Channel::open() {
            Ok(channel) => Some(channel),
            Err(err) => {
                return setup_failed(&mut report, format!("opening the private channel: {err}"));
            }
        },
        ProgramStdio::Captured | ProgramStdio::Pipes => None,
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
    match ruleset.and_then(landlock_rules::restrict) {
        Ok(notes) => weakened.extend(notes),
        Err(message) if jail.best_effort => weakened.push(message.to_string()),
        Err(message) => return setup_failed(&mut report, message),
    }
    if let Err(message) = limits::apply(&jail.limits) {
        return setup_failed(&mut report, message);
    }
    match filters.and_then(|filters| seccomp::install(&filters)) {
        Ok(()) => {}
        Err(message) if jail.best_effort => weakened.push(message.to_string()),
        Err(message) => return setup_failed(&mut report, message),
    }
    if let Some(report) = &mut report {
        for note in &weakened {
            append(report, &ReportLine::Weakened(note.clone()));
        }
    }
    // From here on nothing in the jail may open our descriptors (the parent's pipes).
    if let Err(err) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        return setup_failed(&mut report, format!("closing stage 2 to inspection: {err}"));
    }
    let io = match (run.stdio, stdin_pipe, channel) {
        (ProgramStdio::Captured, pipe, _) => {
            drop(pipe);
            ProgramIo::Null
        }
        (ProgramStdio::Pipes, Some(pipe), _) => ProgramIo::Pipe(pipe),
        (ProgramStdio::Channel, Some(pipe), Some(channel)) => ProgramIo::Channel(pipe, channel),
        (ProgramStdio::Pipes | ProgramStdio::Channel, _, _) => {
            return setup_failed(&mut report, "no stdin pipe for the program".to_owned());
        }
    };
    let exit = run_program(&run, &view, io, &mut report);
    if let Some(report) = &mut report {
        append(report, &ReportLine::Exit(exit));
    }
    match exit {
        ReportedExit::Code(code) => code,
        ReportedExit::Signal(signal) => 128 + signal,
    }
}

/// What the program's stdin and stdout are.
enum ProgramIo {
    /// `/dev/null`; stdout is stage 2's (captured by the parent).
    Null,
    /// The parent's pipe; stdout is stage 2's.
    Pipe(OwnedFd),
    /// The parent's pipe, relayed over the channel; stdin `/dev/null`, stdout to stderr.
    Channel(OwnedFd, Channel),
}

/// Starts the program and reaps until it ends (see [`cannot_start`] for one that cannot be).
fn run_program(
    run: &RunSpec,
    view: &View,
    io: ProgramIo,
    report: &mut Option<File>,
) -> ReportedExit {
    let mut command = Command::new(&run.program);
    if let Some(script) = &run.script {
        command.arg(view.tmp.join(script));
    }
    command
        .args(&run.args)
        .env_clear()
        .envs(view.base_env())
        .envs(run.env.iter().map(|(k, v)| (k, v)))
        .current_dir(view.cwd(run.cwd_zone.as_deref()));
    let channel = match io {
        ProgramIo::Null => {
            command.stdin(Stdio::null());
            None
        }
        ProgramIo::Pipe(pipe) => {
            command.stdin(pipe);
            None
        }
        ProgramIo::Channel(pipe, channel) => {
            let stderr = match std::io::stderr().as_fd().try_clone_to_owned() {
                Ok(stderr) => stderr,
                Err(err) => return cannot_start(run, &err, report),
            };
            command
                .stdin(Stdio::null())
                .stdout(stderr)
                .env(CHANNEL_FD_VAR, channel.listener_fd().to_string());
            Some((pipe, channel))
        }
    };
    match command.spawn() {
        Ok(child) => match channel.map(|(pipe, channel)| channel.relay(pipe)) {
            None => reap_until(child.id()),
            Some(Ok(relay)) => {
                let exit = reap_until(child.id());
                relay.drain();
                exit
            }
            Some(Err(err)) => {
                let _ = writeln!(std::io::stderr(), "relaying the private channel: {err}");
                let _ = rustix::process::kill_process(
                    rustix::process::Pid::from_child(&child),
                    Signal::KILL,
                );
                reap_until(child.id())
            }
        },
        Err(err) => cannot_start(run, &err, report),
    }
}

/// Reports that the program could not be started: exit 127 (not found) or 126, as a shell
/// would say.
fn cannot_start(run: &RunSpec, err: &std::io::Error, report: &mut Option<File>) -> ReportedExit {
    let (code, message) = match err.raw_os_error() {
        Some(errno) if errno == rustix::io::Errno::NOENT.raw_os_error() => {
            (127, format!("{}: command not found", run.program))
        }
        _ => (126, format!("{}: cannot run: {err}", run.program)),
    };
    let _ = writeln!(std::io::stderr(), "{message}");
    if let Some(report) = report {
        append(report, &ReportLine::ExecError(message));
    }
    ReportedExit::Code(code)
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
