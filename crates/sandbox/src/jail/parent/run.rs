//! The parent side of a jailed run: check the request, take the jail's waiting helper (or
//! start one: `standby.rs`), write the spec and the script into its private run directory and
//! let it go, capture its output with caps, watch what it writes into the zones
//! (`zone_watch.rs`), and end it — by itself, at the wall-clock timeout, on interrupt, or past
//! the zones' write cap — by killing the whole group.
//!
//! A changeset run ([`run_changeset`]) is the same run on a helper whose `rw` zones are
//! copy-on-write layers (`standby.rs`, `inside/mounts.rs`). Before `go` the parent takes a pidfd of
//! stage 2, PID 1 of the jail's namespace (stage 1 reports its id, and neither reaps it nor
//! passes `go` on before then, so the id is still stage 2's); after the run it kills stage 2
//! (a no-op when it already ended) and waits for it, which the kernel lets happen only once
//! every other process of the namespace is gone. Only then are the upper directories read
//! (`crate::changeset`): nothing of the run can still be writing to them.
//!
//! Runs in the golem-forge process.

use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fd::OwnedFd;

use tokio_util::sync::CancellationToken;

use super::output::capture;
use super::standby::Standby;
use super::zone_watch::ZoneWatch;
use crate::ZoneMode;
use crate::changeset::{Changeset, ChangesetError, Layers};
use crate::jail::spec::{
    ProgramStdio, RESERVED_NAMES, RUN_SPEC_FILE, ReportLine, ReportedExit, RunSpec, SETUP_FAILED,
    SpecZone, human_mib, read_report,
};
use crate::jail::{ChangesetRun, Jail, JailCommand, JailError, JailExit, JailOutput, ZoneWrites};

/// Variables passed through from the caller's environment (nothing secret).
const PASSED_THROUGH: &[&str] = &["LANG", "LC_ALL", "LC_CTYPE", "TZ"];

/// How long output may keep flowing after the helper exited (a process outside any PID
/// namespace may hold the pipes open) before the group is killed.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// How long a changeset run waits for the helper to report its stage 2 (which a freshly
/// started helper does once it has joined its cgroups and made its namespaces).
const STAGE2_START: Duration = Duration::from_secs(10);

/// How long a changeset run waits, after killing it, for the jail's PID 1 (and with it every
/// process of the jail) to be gone.
const STAGE2_END: Duration = Duration::from_secs(10);

fn invalid(message: impl Into<String>) -> JailError {
    JailError::Invalid(message.into())
}

fn io_error(jail: &Jail) -> impl Fn(std::io::Error) -> JailError + '_ {
    move |source| JailError::Io {
        helper: jail.helper.clone(),
        source,
    }
}

/// The zones as the helper mounts them; refuses names that clash with the jail's own tree.
pub(in crate::jail) fn zones(jail: &Jail) -> Result<Vec<SpecZone>, JailError> {
    jail.sandbox
        .zones()
        .iter()
        .map(|zone| {
            if RESERVED_NAMES.contains(&zone.name()) {
                return Err(invalid(format!(
                    "zone `{}` cannot be shown to programs at /{}: that path is part of the \
                     jail's own file tree (rename the zone)",
                    zone.name(),
                    zone.name()
                )));
            }
            let host = zone.host_path().canonicalize().map_err(|e| {
                invalid(format!(
                    "zone `{}` ({}) cannot be opened: {e}",
                    zone.name(),
                    zone.host_path().display()
                ))
            })?;
            Ok(SpecZone {
                name: zone.name().to_owned(),
                host,
                writable: zone.mode() == ZoneMode::Rw,
                overlay: None,
            })
        })
        .collect()
}

fn check_command(jail: &Jail, command: &JailCommand) -> Result<(), JailError> {
    if command.program.is_empty() {
        return Err(invalid("no program to run"));
    }
    if let Some(script) = &command.script {
        let name = script.file_name.as_str();
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return Err(invalid(format!("bad script file name `{name}`")));
        }
    }
    if let Some(zone) = &command.cwd_zone
        && jail.sandbox.zone(zone).is_none()
    {
        return Err(invalid(format!(
            "the working directory zone `{zone}` is not one of the worker's zones"
        )));
    }
    Ok(())
}

fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, contents)
}

/// A helper with `command`'s run spec and script written, ready for `go`, its zones shown as
/// `writes` says, and the layers the standby already knows to be weakened.
pub(super) fn prepare_with(
    jail: &Jail,
    command: &JailCommand,
    stdio: ProgramStdio,
    writes: ZoneWrites,
) -> Result<(Standby, Vec<String>), JailError> {
    check_command(jail, command)?;
    jail.check_support()?;
    let io = io_error(jail);
    let mut standby = match jail.take_standby(writes) {
        Some(standby) => standby,
        None => Standby::start(jail, writes)?,
    };
    if let Some(script) = &command.script {
        write_private(
            &standby.spec.script_dir().join(&script.file_name),
            &script.contents,
        )
        .map_err(&io)?;
    }
    let weakened = std::mem::take(&mut standby.weakened);
    let mut env: Vec<(String, String)> = PASSED_THROUGH
        .iter()
        .filter_map(|name| std::env::var(name).ok().map(|v| ((*name).to_owned(), v)))
        .collect();
    env.extend(command.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    let spec = RunSpec {
        program: command.program.clone(),
        script: command.script.as_ref().map(|s| s.file_name.clone()),
        args: command.args.clone(),
        env,
        cwd_zone: command.cwd_zone.clone(),
        stdio,
    };
    let spec_json = serde_json::to_vec(&spec).map_err(|e| io(std::io::Error::other(e)))?;
    write_private(&standby.spec.dir.join(RUN_SPEC_FILE), &spec_json).map_err(&io)?;
    Ok((standby, weakened))
}

pub(in crate::jail) async fn run(
    jail: &Jail,
    command: &JailCommand,
    cancel: &CancellationToken,
) -> Result<JailOutput, JailError> {
    let (output, _) = run_with(jail, command, cancel, ZoneWrites::Direct).await?;
    Ok(output)
}

/// What a changeset run leaves for the scan: the layers, and stage 2 to wait for first.
struct Layered {
    layers: Layers,
    stage2: Option<OwnedFd>,
}

pub(in crate::jail) async fn run_changeset(
    jail: &Jail,
    command: &JailCommand,
    cancel: &CancellationToken,
) -> Result<ChangesetRun, JailError> {
    let (output, layered) = run_with(jail, command, cancel, ZoneWrites::Changeset).await?;
    let Some(Layered { layers, stage2 }) = layered else {
        return Err(JailError::Setup(
            "the run had no copy-on-write layers".to_owned(),
        ));
    };
    let sandbox = jail.sandbox.clone();
    let changeset = tokio::task::spawn_blocking(move || {
        if let Some(stage2) = stage2 {
            wait_for_end(&stage2)?;
        }
        Changeset::scan(&sandbox, layers)
    })
    .await
    .unwrap_or_else(|e| {
        Err(ChangesetError::Scan(format!(
            "reading the run's changes failed: {e}"
        )))
    });
    Ok(ChangesetRun { output, changeset })
}

/// Stage 2's pidfd when the helper's zones are layered (see [`stage2_handle`]); `None` when
/// none is: without an `rw` zone there is no overlay and nothing to wait for before a scan.
pub(super) async fn stage2_of_layered(standby: &mut Standby) -> Result<Option<OwnedFd>, JailError> {
    match standby.layers.as_ref() {
        Some(layers) if layers.uppers().next().is_some() => stage2_handle(standby).await,
        Some(_) | None => Ok(None),
    }
}

/// Stage 2's pidfd (see the module's header), or `None` when the helper ended, or failed to
/// set up, before starting it. Only for helpers whose zones are layered.
async fn stage2_handle(standby: &mut Standby) -> Result<Option<OwnedFd>, JailError> {
    let report = standby.spec.report();
    let deadline = Instant::now() + STAGE2_START;
    loop {
        let lines = read_report(&report);
        let reported = lines.iter().find_map(|line| match line {
            ReportLine::Stage2(pid) => Some(*pid),
            _ => None,
        });
        if let Some(pid) = reported {
            let pid = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
                .ok_or_else(|| JailError::Setup(format!("stage 2 reported a bad id {pid}")))?;
            return rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty())
                .map(Some)
                .map_err(|e| JailError::Setup(format!("watching the jail's stage 2: {e}")));
        }
        if lines
            .iter()
            .any(|line| matches!(line, ReportLine::SetupError(_)))
            || !matches!(standby.child.try_wait(), Ok(None))
        {
            return Ok(None);
        }
        if Instant::now() > deadline {
            return Err(JailError::Setup(
                "the jail's helper did not start its stage 2 in time".to_owned(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Kills stage 2 (nothing happens when it has already ended) and waits until it is gone: its
/// end comes after the end of every other process of its PID namespace.
pub(super) fn wait_for_end(stage2: &OwnedFd) -> Result<(), StillRunning> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let _ = rustix::process::pidfd_send_signal(stage2, rustix::process::Signal::KILL);
    let deadline = Instant::now() + STAGE2_END;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = Timespec {
            tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds = [PollFd::new(stage2, PollFlags::IN)];
        match poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Err(StillRunning::TimedOut(STAGE2_END)),
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(StillRunning::Wait(e)),
        }
    }
}

/// Why the end of a run's processes is not known (see [`wait_for_end`]).
#[derive(Debug, thiserror::Error)]
pub(super) enum StillRunning {
    /// They did not end within this long of being killed.
    #[error(
        "the run's processes did not end within {} s of being killed, so its changes cannot \
         be read safely",
        .0.as_secs()
    )]
    TimedOut(Duration),
    /// Waiting on stage 2's pidfd failed.
    #[error("waiting for the run's processes to end: {0}")]
    Wait(#[source] rustix::io::Errno),
}

impl From<StillRunning> for ChangesetError {
    fn from(still: StillRunning) -> ChangesetError {
        ChangesetError::Scan(still.to_string())
    }
}

/// One run, its zones shown as `writes` says. A changeset run also returns its layers.
async fn run_with(
    jail: &Jail,
    command: &JailCommand,
    cancel: &CancellationToken,
    writes: ZoneWrites,
) -> Result<(JailOutput, Option<Layered>), JailError> {
    let io = io_error(jail);
    let (mut standby, mut weakened) = prepare_with(jail, command, ProgramStdio::Captured, writes)?;
    // The program's stdin is `/dev/null`: the pipe's write end is not needed.
    drop(standby.take_stdin());
    let limits = &jail.policy.limits;
    let (mut watch, stage2) = match standby.layers.as_ref() {
        None => (ZoneWatch::start(&standby.spec.zones, limits), None),
        Some(layers) => {
            // The zones do not change: what the run writes lands in the upper directories.
            let watch = ZoneWatch::start_on(layers.uppers(), limits);
            (watch, stage2_of_layered(&mut standby).await?)
        }
    };
    let started = Instant::now();
    // A helper that already failed (it could not join its cgroups) has closed the pipe: its
    // report says why, so a failed `go` is not an error of its own.
    let _ = standby.go();
    let killer = standby.group_killer();
    let kill_group = || killer.kill();
    let child = &mut standby.child;
    let cap = limits.output_bytes;
    let mut stdout = tokio::spawn(capture(
        child
            .stdout
            .take()
            .ok_or_else(|| io(std::io::Error::other("no stdout pipe")))?,
        cap,
    ));
    let mut stderr = tokio::spawn(capture(
        child
            .stderr
            .take()
            .ok_or_else(|| io(std::io::Error::other("no stderr pipe")))?,
        cap,
    ));

    let ended = tokio::select! {
        status = child.wait() => Ok(status.map_err(&io)?),
        () = tokio::time::sleep(command.timeout) => Err(JailExit::TimedOut),
        () = cancel.cancelled() => Err(JailExit::Interrupted),
        why = watch.exceeded() => Err(JailExit::LimitExceeded(why)),
    };
    let (status, killed) = match ended {
        Ok(status) => (Some(status), None),
        Err(killed) => {
            kill_group();
            let _ = child.wait().await;
            (None, Some(killed))
        }
    };
    // Collect the output; anything still holding the pipes after a grace period is killed.
    let (out, mut err) = match tokio::time::timeout(DRAIN_GRACE, async {
        (
            (&mut stdout).await.unwrap_or_default(),
            (&mut stderr).await.unwrap_or_default(),
        )
    })
    .await
    {
        Ok(pair) => pair,
        Err(_) => {
            // Something still holds the pipes, so the group still has members: kill them.
            kill_group();
            (
                stdout.await.unwrap_or_default(),
                stderr.await.unwrap_or_default(),
            )
        }
    };
    // (No last kill here: once the group is empty its id may be reused by a stranger.)
    let duration = started.elapsed();
    watch.stop();

    let kills = standby.cgroups.memory_kills();
    if kills > 0 {
        err.push_note(&format!(
            "[golem-forge: the memory limit of the run ({}) was reached: the kernel killed {} \
             {}]",
            human_mib(limits.run_memory_bytes),
            kills,
            if kills == 1 { "process" } else { "processes" }
        ));
    }
    let report = read_report(&standby.spec.report());
    let layered = standby
        .layers
        .take()
        .map(|layers| Layered { layers, stage2 });
    // The cgroups are removed (which may wait a little for the namespace's last processes to
    // go) and the next helper is started in the background, off this run's path.
    tokio::task::spawn_blocking(move || drop(standby));
    jail.refill_standby();
    let exit = exit_from(report, killed, status.as_ref(), &mut weakened)?;
    Ok((
        JailOutput {
            exit,
            stdout: out,
            stderr: err,
            duration,
            weakened,
        },
        layered,
    ))
}

/// How the program ended: `killed` when the parent killed it, else as the report says, else
/// the helper's own exit `status`. The report's weakened layers are added to `weakened`; a
/// setup error in it is the error.
pub(super) fn exit_from(
    report: Vec<ReportLine>,
    killed: Option<JailExit>,
    status: Option<&std::process::ExitStatus>,
    weakened: &mut Vec<String>,
) -> Result<JailExit, JailError> {
    let mut reported_exit = None;
    for line in report {
        match line {
            ReportLine::Weakened(note) => weakened.push(note),
            ReportLine::SetupError(message) => return Err(JailError::Setup(message)),
            ReportLine::ExecError(_) | ReportLine::Stage2(_) => {}
            // Stage 2 reports the program's own end first; stage 1's line follows.
            ReportLine::Exit(exit) => {
                reported_exit.get_or_insert(exit);
            }
        }
    }
    Ok(match (killed, reported_exit, status.map(exit_of)) {
        (Some(killed), _, _) => killed,
        (None, Some(ReportedExit::Code(code)), _) => JailExit::Code(code),
        (None, Some(ReportedExit::Signal(signal)), _) => JailExit::Signal(signal),
        (None, None, Some(exit)) => exit,
        (None, None, None) => JailExit::Code(SETUP_FAILED),
    })
}

/// The helper's own exit status (used when its report has no exit line).
fn exit_of(status: &std::process::ExitStatus) -> JailExit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => JailExit::Code(code),
        (None, Some(signal)) => JailExit::Signal(signal),
        (None, None) => JailExit::Code(SETUP_FAILED),
    }
}
