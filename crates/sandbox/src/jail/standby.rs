//! A helper started ahead of its run. Moving a process into a cgroup is slow on cgroup v1
//! (10–20 ms here: the kernel waits for an RCU grace period while it holds a lock that every
//! `fork` and `exit` on the machine takes), and it must happen before the helper starts the
//! program, so it is done ahead of time: a [`Standby`] is a private run directory, the run's
//! cgroups, and the helper (`<binary> __jail --standby DIR PROCS…`) already inside them,
//! waiting on a pipe. A run takes the jail's standby (or starts one on the spot), writes its
//! spec into the directory and says `go`; stage 1 then carries on exactly as a fresh one would.
//! After each run (and when the jail is first checked) the jail starts the next standby in
//! the background, after the run rather than during it so that its cgroup move never stalls
//! the run's own `fork`s.

use std::path::Path;
use std::process::Stdio;

use rustix::fd::OwnedFd;
use tokio::process::{Child, Command};

use super::cgroup::{Controller, RunCgroups};
use super::spec::human_mib;
use super::{HELPER_ARG, Jail, JailError, JailMode};

/// The helper's argument for the standby mode.
pub(crate) const STANDBY_ARG: &str = "--standby";

/// A helper waiting for its run.
#[derive(Debug)]
pub(crate) struct Standby {
    /// The private run directory (spec, report, script).
    pub dir: tempfile::TempDir,
    /// The run's cgroups, which the helper joins first.
    pub cgroups: RunCgroups,
    /// Limits that could not be applied (no cgroup), one sentence each.
    pub weakened: Vec<String>,
    /// The helper, in a process group of its own.
    pub child: Child,
    /// The write end of the helper's stdin: `go` starts the run, closing it ends the helper.
    go: Option<OwnedFd>,
}

impl Standby {
    /// Starts a helper for `jail`. Fails in strict mode when the process limit cannot be
    /// enforced (see [`process_limit_note`]).
    pub fn start(jail: &Jail) -> Result<Standby, JailError> {
        let io = |source| JailError::Io {
            helper: jail.helper.clone(),
            source,
        };
        let dir = tempfile::Builder::new()
            .prefix("golem-jail-")
            .tempdir()
            .map_err(io)?;
        let limits = &jail.policy.limits;
        let (cgroups, missing) = RunCgroups::create(&[
            (Controller::Pids, limits.processes),
            (Controller::Memory, limits.run_memory_bytes),
        ]);
        let mut weakened = Vec::new();
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
        let child = Command::new(&jail.helper)
            .arg(HELPER_ARG)
            .arg(STANDBY_ARG)
            .arg(dir.path())
            .args(cgroups.procs_files())
            .env_clear()
            .stdin(Stdio::from(go_read))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(io)?;
        Ok(Standby {
            dir,
            cgroups,
            weakened,
            child,
            go: Some(go_write),
        })
    }

    /// The run directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Tells the helper to read its spec and start the run.
    pub fn go(&mut self) -> std::io::Result<()> {
        let Some(go) = self.go.take() else {
            return Err(std::io::Error::other("the helper was already started"));
        };
        rustix::io::write(&go, b"go\n")?;
        Ok(())
    }
}

impl Drop for Standby {
    /// Ends a helper that never ran (closing its pipe ends it; the kill makes sure) and
    /// removes the cgroups, once the helper is gone from them.
    fn drop(&mut self) {
        if self.go.take().is_some() {
            let _ = self.child.start_kill();
        }
        for _ in 0..200 {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(std::time::Duration::from_millis(1)),
                Ok(Some(_)) | Err(_) => break,
            }
        }
        drop(std::mem::take(&mut self.cgroups));
    }
}

/// Why the process limit cannot be enforced without a pids cgroup, or `None` when it can:
/// `RLIMIT_NPROC` holds for every user but `root`.
fn process_limit_note(why: &str) -> Option<String> {
    rustix::process::getuid().is_root().then(|| {
        format!(
            "the process limit cannot be enforced: golem-forge runs as root, whom the kernel \
             exempts from RLIMIT_NPROC, and no pids cgroup could be made ({why})"
        )
    })
}

/// The standby mode of the helper: join the cgroups, wait for `go` on stdin, then run stage 1
/// with the spec in `dir`. Anything but `go` (stdin closed: the parent dropped the standby)
/// ends it quietly.
pub(crate) fn wait_then_run(dir: &Path, procs: &[String]) -> i32 {
    let mut report = super::helper::open_report(&dir.join(super::spec::REPORT_FILE));
    for procs in procs {
        if let Err(err) = super::cgroup::join(Path::new(procs)) {
            return super::helper::setup_failed(
                &mut report,
                format!("joining the run's cgroup {procs}: {err}"),
            );
        }
    }
    let mut line = String::new();
    match std::io::stdin().read_line(&mut line) {
        Ok(_) if line == "go\n" => super::helper::stage1(&dir.join(super::spec::SPEC_FILE), report),
        _ => 0,
    }
}
