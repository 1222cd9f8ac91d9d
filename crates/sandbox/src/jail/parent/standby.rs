//! A jail built ahead of its run. Everything but the program is fixed by the toolset (zones,
//! network, limits), and building it costs more than most programs take to run: moving a
//! process into a cgroup (10–20 ms on cgroup v1: the kernel waits for an RCU grace period
//! while it holds a lock that every `fork` and `exit` on the machine takes), new namespaces
//! (~1 ms, the network namespace most), a second helper process and the new root (~3 ms). So a
//! [`Standby`] is a private run directory with the jail spec, the run's cgroups, and the
//! helper (`<binary> __jail --standby DIR PROCS…`) already inside them with its namespaces and
//! view built, waiting on a pipe. A run takes the jail's standby (or starts one on the spot),
//! writes its run spec and script into the directory and says `go`; what is left is dropping
//! privileges, Landlock, seccomp and `exec`. After each run (and when the jail is first
//! checked) the jail starts the next standby in the background, after the run rather than
//! during it so that its cgroup move never stalls the run's own `fork`s.
//!
//! Every helper also gets the read end of a pipe as its fd [`STDIN_FD`], which it hands down to
//! stage 2: an interactive program ([`crate::jail::Jail::spawn`]) gets it as its stdin, and the
//! parent keeps the write end; for [`crate::jail::Jail::run`] the parent closes it and the
//! program gets `/dev/null`. A standby's pipes belong to the tokio runtime it was started on,
//! so a standby is only taken on that runtime (another one starts its own).
//!
//! A standby is built for one kind of run ([`ZoneWrites`]): for changeset runs the parent also
//! makes, outside the run directory, a private directory holding an upper and a work directory
//! per `rw` zone (`Layers`), which stage 2 mounts the zone's overlay with; the layers leave
//! the standby with the run's changeset, so they outlive it.
//!
//! Dropping a standby reaps everything its helper started: a helper that never ran is ended
//! by closing its pipe (it then reaps stage 2 itself); a run that was killed ([`GroupKiller`])
//! lost its helper before stage 2, which this process, a child subreaper from the first
//! helper on, adopts and reaps.
//!
//! Runs in the golem-forge process; the helper's side of the standby is `inside/stage1.rs`.

use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fd::OwnedFd;
use tokio::process::{Child, Command};

use super::cgroup::{Controller, RunCgroups};
use crate::changeset::Layers;
use crate::jail::spec::{
    GO, HELPER_ARG, JAIL_SPEC_FILE, JailSpec, NetRoutes, ReportLine, STANDBY_ARG, STDIN_FD,
    SpecLimits, SpecOverlay, SpecZone, human_mib, read_report,
};
use crate::jail::{Jail, JailError, JailMode, ZoneWrites};

/// How to install the network stack.
pub(crate) const NO_STACK_INSTALL: &str = "apt-get install slirp4netns";

/// Why a jail with the network on cannot keep its programs from the host's own services.
pub(crate) const NO_STACK: &str = "with the network on, the jail needs slirp4netns (`apt-get \
     install slirp4netns`) to give its programs a network of their own: without it they would \
     share the host's, reaching its loopback and local services";

/// A helper waiting for its run.
#[derive(Debug)]
pub(crate) struct Standby {
    /// The private run directory (specs, report, script), held so that it is removed on drop.
    _dir: tempfile::TempDir,
    /// The jail the helper builds (its zones, and the run directory's layout).
    pub spec: JailSpec,
    /// The run's cgroups, which the helper joins first.
    pub cgroups: RunCgroups,
    /// Limits that could not be applied (no cgroup), one sentence each.
    pub weakened: Vec<String>,
    /// The helper, in a process group of its own.
    pub child: Child,
    /// That group's id (the helper's pid), kept for reaping what is left of the group after
    /// the helper itself is reaped.
    group: Option<rustix::process::Pid>,
    /// Whether the run was killed, and stage 2's handle taken then: what drop reaps.
    killed: Arc<Mutex<Killed>>,
    /// The write end of the helper's stdin: `go` starts the run, closing it ends the helper.
    go: Option<OwnedFd>,
    /// The write end of the program's stdin pipe (see the module's header).
    stdin: Option<OwnedFd>,
    /// The runtime the helper's pipes are registered with (`None`: started outside one).
    pub runtime: Option<tokio::runtime::Id>,
    /// The kind of run the helper was built for.
    pub writes: ZoneWrites,
    /// The copy-on-write layers of the `rw` zones (changeset runs only), taken by the run.
    pub layers: Option<Layers>,
}

/// What kills a helper's run: its whole process group (the helper, and without a PID
/// namespace the program with it), after taking a handle on stage 2, which left the group
/// (`setsid`) and dies when the helper does (its parent-death signal). As the helper's
/// adopted orphan, stage 2 is then reaped when the standby is dropped. Only to be called while
/// the helper is not yet reaped, so that the group id cannot belong to a stranger.
#[derive(Debug, Clone)]
pub(crate) struct GroupKiller {
    group: Option<rustix::process::Pid>,
    report: std::path::PathBuf,
    killed: Arc<Mutex<Killed>>,
}

/// What a [`GroupKiller`] leaves for the standby's drop to reap.
#[derive(Debug, Default)]
struct Killed {
    /// Whether the group was killed at all (nothing to reap otherwise).
    group: bool,
    /// Stage 2, when it was still the helper's child at the first kill.
    stage2: Option<OwnedFd>,
}

impl GroupKiller {
    /// Kills the group, holding stage 2 first.
    pub fn kill(&self) {
        let Some(group) = self.group else {
            return;
        };
        let mut killed = self.killed.lock().unwrap_or_else(PoisonError::into_inner);
        if !killed.group {
            killed.group = true;
            killed.stage2 = stage2_of(group, &self.report);
        }
        drop(killed);
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    }
}

/// A pidfd of the helper `helper`'s stage 2, as its report names it, if that process is still
/// the helper's child (checked after the pidfd is open, so the handle is of that very
/// process).
fn stage2_of(helper: rustix::process::Pid, report: &Path) -> Option<OwnedFd> {
    let pid = read_report(report).iter().find_map(|line| match line {
        ReportLine::Stage2(pid) => i32::try_from(*pid).ok(),
        _ => None,
    })?;
    let pid = rustix::process::Pid::from_raw(pid)?;
    let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()?;
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    // `pid (name) state ppid …`: the name may hold spaces and parentheses.
    let parent = stat.rsplit_once(") ")?.1.split(' ').nth(1)?;
    (parent == helper.as_raw_nonzero().to_string()).then_some(fd)
}

impl Standby {
    /// Starts a helper for `jail`. Fails in strict mode when the process limit cannot be
    /// enforced (see [`process_limit_note`]).
    pub fn start(jail: &Jail, writes: ZoneWrites) -> Result<Standby, JailError> {
        let io = |source| JailError::Io {
            helper: jail.helper.clone(),
            source,
        };
        let mut zones = super::run::zones(jail)?;
        let layers = match writes {
            ZoneWrites::Direct => None,
            ZoneWrites::Changeset => Some(make_layers(&mut zones).map_err(io)?),
        };
        let dir = tempfile::Builder::new()
            .prefix("golem-jail-")
            .tempdir()
            .map_err(io)?;
        let limits = &jail.policy.limits;
        let mut weakened = Vec::new();
        let net = match (jail.policy.network, super::net::find_stack()) {
            (false, _) => None,
            (true, Some(stack)) => Some(NetRoutes::new(&jail.policy.allow_private, stack)),
            (true, None) => {
                let note = NO_STACK.to_owned();
                match jail.policy.mode {
                    JailMode::Strict => return Err(JailError::Unsupported(note)),
                    JailMode::BestEffort => weakened.push(note),
                }
                None
            }
        };
        let spec = JailSpec {
            dir: dir.path().to_path_buf(),
            zones,
            network: jail.policy.network,
            net,
            best_effort: jail.policy.mode == JailMode::BestEffort,
            limits: SpecLimits {
                cpu_secs: limits.cpu_secs,
                memory_bytes: limits.memory_bytes,
                processes: limits.processes,
                open_files: limits.open_files,
                file_size_bytes: limits.file_size_bytes,
                tmp_bytes: limits.tmp_bytes,
                tmp_files: limits.tmp_files,
            },
        };
        std::fs::create_dir(spec.script_dir()).map_err(io)?;
        std::fs::create_dir(spec.root()).map_err(io)?;
        let json = serde_json::to_vec(&spec).map_err(|e| io(std::io::Error::other(e)))?;
        std::fs::write(dir.path().join(JAIL_SPEC_FILE), json).map_err(io)?;
        let (cgroups, missing) = RunCgroups::create(&[
            (Controller::Pids, limits.processes),
            (Controller::Memory, limits.run_memory_bytes),
        ]);
        for (controller, why) in missing {
            match controller {
                Controller::Pids => {
                    if let Some(note) = process_limit_note(&why) {
                        match jail.policy.mode {
                            JailMode::Strict => return Err(JailError::Unsupported(note)),
                            JailMode::BestEffort => weakened.push(note),
                        }
                    }
                }
                Controller::Memory => weakened.push(format!(
                    "no memory limit for the run as a whole ({why}): each process may use {}, \
                     but together they are not limited",
                    human_mib(limits.memory_bytes)
                )),
            }
        }
        let (go_read, go_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| io(e.into()))?;
        let (stdin_read, stdin_write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| io(e.into()))?;
        let mut command = Command::new(&jail.helper);
        command
            .arg(HELPER_ARG)
            .arg(STANDBY_ARG)
            .arg(dir.path())
            .args(cgroups.procs_files())
            .env_clear()
            .stdin(Stdio::from(go_read))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        pass_as_stdin_fd(&mut command, stdin_read.as_raw_fd());
        // A helper killed before stage 2 leaves stage 2 (and, without a PID namespace, the
        // program) orphaned: as a subreaper this process adopts them, and `Drop` reaps them,
        // rather than leaving them to an init that may never reap (a container's).
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))
            .map_err(|e| io(e.into()))?;
        let child = command.spawn().map_err(io)?;
        let group = child
            .id()
            .and_then(|pid| rustix::process::Pid::from_raw(pid as i32));
        // The helper has its copy; ours would keep the pipe open for nothing.
        drop(stdin_read);
        Ok(Standby {
            _dir: dir,
            spec,
            cgroups,
            weakened,
            child,
            group,
            killed: Arc::default(),
            go: Some(go_write),
            stdin: Some(stdin_write),
            runtime: tokio::runtime::Handle::try_current()
                .ok()
                .map(|handle| handle.id()),
            writes,
            layers,
        })
    }

    /// The write end of the program's stdin pipe (once; `None` after).
    pub fn take_stdin(&mut self) -> Option<OwnedFd> {
        self.stdin.take()
    }

    /// Whether this standby can be used on the current runtime (its pipes are registered with
    /// the one it was started on).
    pub fn fits_current_runtime(&self) -> bool {
        let current = tokio::runtime::Handle::try_current()
            .ok()
            .map(|handle| handle.id());
        current == self.runtime
    }

    /// Tells the helper to read its spec and start the run.
    pub fn go(&mut self) -> std::io::Result<()> {
        let Some(go) = self.go.take() else {
            return Err(std::io::Error::other("the helper was already started"));
        };
        rustix::io::write(&go, GO)?;
        Ok(())
    }
}

impl Drop for Standby {
    /// Ends the helper and waits for it, so that no process it started is left unreaped, and
    /// removes the cgroups once it is gone from them.
    ///
    /// A helper that never ran ends by itself once its `go` pipe closes: it closes stage 2's
    /// pipe, waits for stage 2 and exits, so stage 2 is reaped by its own parent. Killing the
    /// helper first would orphan stage 2, handing it to whatever reaps orphans (in a container
    /// without an init, nothing). Only a helper that does not end within
    /// [`STANDBY_END_GRACE`] (or one still running a program when its owner was dropped with
    /// its runtime) is killed with its whole group.
    fn drop(&mut self) {
        let never_ran = self.go.take().is_some();
        if !never_ran || !self.wait_for_exit(STANDBY_END_GRACE) {
            if matches!(self.child.try_wait(), Ok(None)) {
                self.group_killer().kill();
            }
            self.wait_for_exit(STANDBY_END_GRACE);
        }
        self.reap_orphans();
        drop(std::mem::take(&mut self.cgroups));
    }
}

/// How long dropping a standby waits for its helper to end, first by itself, then after the
/// kill. It ends within a few milliseconds; the bound only keeps a wedged helper from holding
/// up an exit.
const STANDBY_END_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long dropping a standby waits for the adopted members of its group (killed with it) to
/// end. They were sent `SIGKILL`; the bound only keeps one stuck in the kernel from holding up
/// an exit.
const ORPHAN_REAP_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

impl Standby {
    /// What kills this helper's run (see [`GroupKiller`]).
    pub fn group_killer(&self) -> GroupKiller {
        GroupKiller {
            group: self.group,
            report: self.spec.report(),
            killed: Arc::clone(&self.killed),
        }
    }

    /// Reaps what was handed to this process when a kill ended the helper before the rest of
    /// its run: stage 2 (held by the kill) and the group's other members (the program, without
    /// a PID namespace). Only after a kill, only this process's own children of that group,
    /// and only once the helper itself is reaped, so no other child's exit is taken from its
    /// owner.
    fn reap_orphans(&mut self) {
        use rustix::process::{WaitId, WaitIdOptions, waitid};
        let killed =
            std::mem::take(&mut *self.killed.lock().unwrap_or_else(PoisonError::into_inner));
        let Some(group) = self.group.filter(|_| killed.group) else {
            return;
        };
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let stage2 = killed.stage2;
        let start = std::time::Instant::now();
        if let Some(stage2) = &stage2 {
            use std::os::fd::AsFd as _;
            loop {
                match waitid(
                    WaitId::PidFd(stage2.as_fd()),
                    WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
                ) {
                    Ok(None) if start.elapsed() < ORPHAN_REAP_GRACE => {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    // Reaped; not ours (`ECHILD`: reaped by the helper, or adopted by another
                    // reaper); or stuck past the grace.
                    Ok(_) | Err(_) => break,
                }
            }
        }
        loop {
            match waitid(
                WaitId::Pgid(Some(group)),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
            ) {
                // One reaped: look for the next at once.
                Ok(Some(_)) => {}
                // Members of the group that are still alive.
                Ok(None) if start.elapsed() < ORPHAN_REAP_GRACE => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                // None left (`ECHILD`), or they outlived the grace.
                Ok(None) | Err(_) => return,
            }
        }
    }

    /// Polls until the helper has ended and is reaped (true), or `limit` has passed.
    fn wait_for_exit(&mut self, limit: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(None) if start.elapsed() < limit => {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Ok(None) => return false,
                Ok(Some(_)) | Err(_) => return true,
            }
        }
    }
}

/// Makes the copy-on-write layer of each `rw` zone of `zones` (an upper and a work directory,
/// in one private directory made for the run) and records it in the zone's spec. The upper
/// directory takes the zone directory's permissions: the merged view's root shows them.
fn make_layers(zones: &mut [SpecZone]) -> std::io::Result<Layers> {
    let dir = tempfile::Builder::new()
        .prefix("golem-changes-")
        .tempdir()?;
    let mut uppers = Vec::new();
    for (index, zone) in zones.iter_mut().enumerate() {
        if !zone.writable {
            continue;
        }
        let base = dir.path().join(format!("zone{index}"));
        let (upper, work) = (base.join("upper"), base.join("work"));
        std::fs::create_dir(&base)?;
        std::fs::create_dir(&upper)?;
        std::fs::create_dir(&work)?;
        std::fs::set_permissions(&upper, std::fs::metadata(&zone.host)?.permissions())?;
        uppers.push((zone.name.clone(), upper.clone()));
        zone.overlay = Some(SpecOverlay { upper, work });
    }
    Ok(Layers::new(dir, uppers))
}

/// Makes `fd` (close-on-exec in the parent) the helper's [`STDIN_FD`], open across its `exec`.
#[allow(unsafe_code)]
fn pass_as_stdin_fd(command: &mut Command, fd: std::os::fd::RawFd) {
    let hook = move || {
        // SAFETY (of what runs here): between `fork` and `exec` this only makes system calls
        // that are async-signal-safe (`dup2`, `fcntl`) on descriptors the child inherited,
        // and allocates nothing. `dup2` onto a different number clears close-on-exec on the
        // copy; when the pipe already is that number, the flag is cleared in place.
        let result = if fd == STDIN_FD {
            // SAFETY: `fcntl(F_SETFD)` on an open descriptor of this process.
            unsafe { libc::fcntl(STDIN_FD, libc::F_SETFD, 0) }
        } else {
            // SAFETY: `dup2` of an open descriptor onto a number this process reserves for it.
            unsafe { libc::dup2(fd, STDIN_FD) }
        };
        if result == -1 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(())
        }
    };
    // SAFETY: the hook only makes async-signal-safe system calls (see above).
    unsafe {
        command.pre_exec(hook);
    }
}

/// Why the process limit cannot be enforced without a pids cgroup, or `None` when it can:
/// `RLIMIT_NPROC` holds for every user but `root`.
fn process_limit_note(why: &impl std::fmt::Display) -> Option<String> {
    rustix::process::getuid().is_root().then(|| {
        format!(
            "the process limit cannot be enforced: golem-forge runs as root, whom the kernel \
             exempts from RLIMIT_NPROC, and no pids cgroup could be made ({why})"
        )
    })
}
