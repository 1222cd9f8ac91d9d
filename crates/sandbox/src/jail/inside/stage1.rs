//! Stage 1 of the helper: the standby mode `<binary> __jail --standby DIR PROCS…`, which the
//! parent starts ahead of the run (`parent/standby.rs`). It moves itself into the run's
//! cgroups (the parent made them and passes their `cgroup.procs` files), reads the jail spec
//! `DIR/jail.json`, starts the network stack if the jail has a network of its own
//! (`net_stack.rs`), enters new user, mount, PID, IPC, UTS and (unless the jail shares the
//! host's network) network namespaces with the caller's ids mapped to root inside, and starts
//! `<binary> __jail --stage2 DIR MODE` (stage 2, PID 1 of the new PID namespace, `stage2.rs`),
//! which builds the filesystem view and waits. Stage 1 waits for `go` on its stdin and passes
//! it on to stage 2, waits for stage 2 to end and writes how it ended into the report. The
//! read end of the program's stdin pipe travels down both stages as
//! [`STDIN_FD`](crate::jail::spec::STDIN_FD). Runs in the helper's first process.

use std::fs::File;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::jail::spec::{
    GO, HELPER_ARG, JailSpec, REPORT_FILE, ReportLine, ReportedExit, SETUP_FAILED, append,
};

use super::helper::{
    claim_stdin_fd, map_ids, open_report, read_jail_spec, setup_failed, unshare, wait_for_go,
};
use super::net_stack;
use super::stage2::STAGE2_ARG;

/// The standby mode of the helper: join the cgroups, then be stage 1 for the jail spec in
/// `dir` (which builds the jail and waits for `go`).
pub(super) fn wait_then_run(dir: &Path, procs: &[String]) -> i32 {
    let mut report = open_report(&dir.join(REPORT_FILE));
    for procs in procs {
        if let Err(err) = join_cgroup(Path::new(procs)) {
            return setup_failed(
                &mut report,
                format!("joining the run's cgroup {procs}: {err}"),
            );
        }
    }
    stage1(dir, report)
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `procs`.
fn join_cgroup(procs: &Path) -> std::io::Result<()> {
    std::fs::write(procs, "0")
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
fn stage1(dir: &Path, mut report: Option<File>) -> i32 {
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
        Some(routes) => match net_stack::Stack::spawn(&exe, &routes.stack) {
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
        .arg(STAGE2_ARG)
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
    // parent that kills this helper first adopts stage 2 and reaps it (`parent/standby.rs`).
    // Written before `go` is passed on, so it is there before anything of the program runs.
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
