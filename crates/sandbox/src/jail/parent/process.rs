//! An interactive jailed process ([`crate::jail::Jail::spawn`]): the same jail as a run (the
//! helper, its namespaces, new root, Landlock, seccomp, rlimits, cgroups, environment allow-list
//! and the zones' write cap), but the caller writes the program's stdin and reads its stdout, line
//! by line, for as long as it lives; the last [`crate::jail::JailLimits::output_bytes`] of its
//! stderr are kept.
//!
//! A monitor task owns the helper: it waits for it to end by itself, for a kill (asked for with
//! [`JailProcess::kill`], or the [`JailProcess`] dropped) or for the zones' write cap, kills the
//! whole process group (which takes PID 1 of the jail's namespace, and with it everything
//! inside, down) only while the helper is not yet reaped (so the group id cannot belong to a
//! stranger), reads the report and hands the exit to [`JailProcess::wait`]. There is no
//! wall-clock limit: the caller kills when it has waited long enough.
//!
//! A jail prepared for [`crate::jail::ZoneWrites::Changeset`] shows the process its `rw` zones
//! through copy-on-write layers, as for a changeset run: what it writes stays in the layers
//! ([`JailProcess::has_changes`] says whether there is any), and
//! [`JailProcess::end_with_changes`] ends it (with everything it started) and reads them as a
//! changeset for the caller to gate. A layer cannot be emptied under a live mount, so a caller
//! that wants the changes of each request ends the process after a request that made some and
//! starts a new one. Dropped, the process is killed and its layers removed once it is gone.
//!
//! Runs in the golem-forge process; the program itself runs in stage 2 (`inside/stage2.rs`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};

use std::os::fd::OwnedFd;
use std::path::PathBuf;

use super::output::{CapturedOutput, human_bytes};
use super::standby::Standby;
use super::zone_watch::ZoneWatch;
use crate::changeset::{Changeset, ChangesetError, Layers};
use crate::jail::spec::{ProgramStdio, human_mib, read_report};
use crate::jail::{Jail, JailCommand, JailError, JailExit};

/// How long stderr may keep flowing after the helper ended before the group is killed.
const DRAIN_GRACE: Duration = Duration::from_millis(200);

/// The kept end of a stream: its last `cap` bytes, and how many it produced in all.
#[derive(Debug, Default)]
struct Tail {
    kept: VecDeque<u8>,
    total: u64,
    cap: usize,
}

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let bytes = &bytes[bytes.len().saturating_sub(self.cap)..];
        let overflow = (self.kept.len() + bytes.len()).saturating_sub(self.cap);
        self.kept.drain(..overflow);
        self.kept.extend(bytes);
    }

    /// The kept bytes produced after the first `mark` bytes.
    fn since(&self, mark: u64) -> Vec<u8> {
        let first_kept = self.total - self.kept.len() as u64;
        let skip = usize::try_from(mark.saturating_sub(first_kept)).unwrap_or(usize::MAX);
        self.kept.iter().skip(skip).copied().collect()
    }
}

/// How the process ended, as the monitor hands it over.
type Ended = Result<JailExit, JailError>;

/// A program running in the jail, talked to over its stdin and stdout. Dropping it kills it
/// and everything it started.
#[derive(Debug)]
pub struct JailProcess {
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
    stderr: Arc<Mutex<Tail>>,
    /// The longest line [`JailProcess::read_line`] accepts.
    line_cap: usize,
    kill: mpsc::UnboundedSender<JailExit>,
    ended: Option<oneshot::Receiver<Ended>>,
    /// The end, once [`JailProcess::wait`] has seen it.
    exit: Option<Result<JailExit, String>>,
    exited: Arc<AtomicBool>,
    weakened: Arc<Mutex<Vec<String>>>,
    /// The copy-on-write layers of the `rw` zones, when the jail shows them so.
    layered: Option<LayeredZones>,
}

/// What a process with layered zones leaves for the scan.
#[derive(Debug)]
struct LayeredZones {
    layers: Layers,
    /// Each layer's upper directory, where the process's changes land.
    uppers: Vec<PathBuf>,
    /// Stage 2, whose end comes after every other process of the jail's PID namespace.
    stage2: Option<OwnedFd>,
    sandbox: crate::Sandbox,
}

impl LayeredZones {
    /// Waits (blocking) until every process of the jail is gone, then reads the changes.
    fn scan(self) -> Result<Changeset, ChangesetError> {
        if let Some(stage2) = &self.stage2 {
            super::run::wait_for_end(stage2)?;
        }
        Changeset::scan(&self.sandbox, self.layers)
    }

    /// Waits (blocking) until every process of the jail is gone, then removes the layers.
    fn remove(self) {
        if let Some(stage2) = &self.stage2
            && let Err(why) = super::run::wait_for_end(stage2)
        {
            tracing::warn!("the layers of a jailed process are left behind: {why}");
            std::mem::forget(self.layers);
            return;
        }
        drop(self.layers);
    }
}

/// Starts `command` in `jail` with its stdin and stdout (or its private channel, as `stdio`
/// says) connected to the returned process.
pub(in crate::jail) async fn spawn(
    jail: &Jail,
    command: &JailCommand,
    stdio: ProgramStdio,
) -> Result<JailProcess, JailError> {
    let io = |source| JailError::Io {
        helper: jail.helper.clone(),
        source,
    };
    let (mut standby, weakened) =
        super::run::prepare_with(jail, command, stdio, jail.zone_writes())?;
    let stdin = standby
        .take_stdin()
        .ok_or_else(|| io(std::io::Error::other("no stdin pipe")))?;
    let stdin = ChildStdin::from_std(std::process::ChildStdin::from(stdin)).map_err(io)?;
    let limits = jail.policy.limits;
    let stage2 = super::run::stage2_of_layered(&mut standby).await?;
    let (watch, layered) = match standby.layers.take() {
        None => (ZoneWatch::start(&standby.spec.zones, &limits), None),
        Some(layers) => {
            // The zones do not change: what the process writes lands in the upper directories.
            let watch = ZoneWatch::start_on(layers.uppers(), &limits);
            let uppers = layers
                .uppers()
                .map(|(_, upper)| upper.to_path_buf())
                .collect();
            let layered = LayeredZones {
                layers,
                uppers,
                stage2,
                sandbox: jail.sandbox.clone(),
            };
            (watch, Some(layered))
        }
    };
    // A helper that already failed has closed the pipe: its report says why (see `wait`).
    let _ = standby.go();
    let stdout = standby
        .child
        .stdout
        .take()
        .ok_or_else(|| io(std::io::Error::other("no stdout pipe")))?;
    let stderr_pipe = standby
        .child
        .stderr
        .take()
        .ok_or_else(|| io(std::io::Error::other("no stderr pipe")))?;
    let stderr = Arc::new(Mutex::new(Tail {
        cap: limits.output_bytes,
        ..Tail::default()
    }));
    let stderr_task = tokio::spawn(keep_tail(stderr_pipe, stderr.clone()));
    let (kill, kill_rx) = mpsc::unbounded_channel();
    let (ended_tx, ended) = oneshot::channel();
    let exited = Arc::new(AtomicBool::new(false));
    let weakened = Arc::new(Mutex::new(weakened));
    tokio::spawn(monitor(Monitor {
        jail: jail.clone(),
        standby,
        watch,
        kill_rx,
        stderr_task,
        stderr: stderr.clone(),
        ended: ended_tx,
        exited: exited.clone(),
        weakened: weakened.clone(),
    }));
    Ok(JailProcess {
        stdin: Some(stdin),
        stdout: Some(BufReader::new(stdout)),
        stderr,
        line_cap: limits.output_bytes,
        kill,
        ended: Some(ended),
        exit: None,
        exited,
        weakened,
        layered,
    })
}

/// Reads `pipe` to its end into `tail`.
async fn keep_tail(mut pipe: tokio::process::ChildStderr, tail: Arc<Mutex<Tail>>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => tail
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(&buffer[..n]),
        }
    }
}

/// What the monitor task owns.
struct Monitor {
    jail: Jail,
    standby: Standby,
    watch: ZoneWatch,
    kill_rx: mpsc::UnboundedReceiver<JailExit>,
    stderr_task: tokio::task::JoinHandle<()>,
    stderr: Arc<Mutex<Tail>>,
    ended: oneshot::Sender<Ended>,
    exited: Arc<AtomicBool>,
    weakened: Arc<Mutex<Vec<String>>>,
}

/// Waits for the helper to end (or kills it), then reports how it ended.
async fn monitor(mut m: Monitor) {
    let killer = m.standby.group_killer();
    let kill_group = || killer.kill();
    let child = &mut m.standby.child;
    // Until `wait` below returns, the helper is not reaped, so its group id is still ours.
    let ended = tokio::select! {
        status = child.wait() => Ok(status),
        why = m.kill_rx.recv() => Err(why.unwrap_or(JailExit::Interrupted)),
        why = m.watch.exceeded() => Err(JailExit::LimitExceeded(why)),
    };
    let (status, killed) = match ended {
        Ok(status) => (Some(status), None),
        Err(killed) => {
            kill_group();
            (Some(child.wait().await), Some(killed))
        }
    };
    m.exited.store(true, Ordering::SeqCst);
    if tokio::time::timeout(DRAIN_GRACE, &mut m.stderr_task)
        .await
        .is_err()
    {
        // Something still holds the pipe, so the group still has members: kill them.
        kill_group();
        let _ = m.stderr_task.await;
    }
    m.watch.stop();
    let limits = &m.jail.policy.limits;
    let kills = m.standby.cgroups.memory_kills();
    if kills > 0 {
        let note = format!(
            "\n[golem-forge: the memory limit of the run ({}) was reached: the kernel killed {} \
             {}]\n",
            human_mib(limits.run_memory_bytes),
            kills,
            if kills == 1 { "process" } else { "processes" }
        );
        m.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(note.as_bytes());
    }
    let report = read_report(&m.standby.spec.report());
    let result = match status {
        Some(Err(source)) if killed.is_none() => Err(JailError::Io {
            helper: m.jail.helper.clone(),
            source,
        }),
        status => {
            let status = status.and_then(Result::ok);
            let mut weakened = m.weakened.lock().unwrap_or_else(PoisonError::into_inner);
            super::run::exit_from(report, killed, status.as_ref(), &mut weakened)
        }
    };
    let _ = m.ended.send(result);
    let standby = m.standby;
    tokio::task::spawn_blocking(move || drop(standby));
}

impl JailProcess {
    /// The program's stdin (`None` once taken or closed).
    pub fn stdin(&mut self) -> Option<&mut ChildStdin> {
        self.stdin.as_mut()
    }

    /// Takes the program's stdin (for a caller that drives it itself); dropping it closes it.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Takes the program's stdout (for a caller that reads it itself).
    pub fn take_stdout(&mut self) -> Option<BufReader<ChildStdout>> {
        self.stdout.take()
    }

    /// Writes `line` and a newline to the program's stdin, and flushes.
    pub async fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the program's stdin is closed"))?;
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        stdin.write_all(&bytes).await?;
        stdin.flush().await
    }

    /// The next line of the program's stdout, without its newline; `None` at the end of the
    /// stream. A line longer than the output cap ([`crate::jail::JailLimits::output_bytes`]) is an
    /// `InvalidData` error (the rest of it is left unread), and so is one that is not UTF-8.
    pub async fn read_line(&mut self) -> std::io::Result<Option<String>> {
        let cap = self.line_cap;
        let stdout = self
            .stdout
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the program's stdout was taken"))?;
        let mut line = Vec::new();
        loop {
            let available = stdout.fill_buf().await?;
            if available.is_empty() {
                if line.is_empty() {
                    return Ok(None);
                }
                break;
            }
            let (take, done) = match available.iter().position(|b| *b == b'\n') {
                Some(at) => (at + 1, true),
                None => (available.len(), false),
            };
            if line.len() + take > cap.saturating_add(1) {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "the program printed a line longer than {}",
                        human_bytes(cap as u64)
                    ),
                ));
            }
            line.extend_from_slice(&available[..take]);
            stdout.consume(take);
            if done {
                break;
            }
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        String::from_utf8(line).map(Some).map_err(|_| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the program printed a line that is not UTF-8",
            )
        })
    }

    /// How many bytes of stderr the program has produced so far (a mark for
    /// [`JailProcess::stderr_since`]).
    pub fn stderr_mark(&self) -> u64 {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    /// What the program wrote to stderr after `mark`, as far as it is kept (UTF-8, invalid
    /// sequences replaced).
    pub fn stderr_since(&self, mark: u64) -> String {
        let bytes = self
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .since(mark);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// The kept end of stderr, with a marker line first when earlier bytes were dropped.
    pub fn stderr(&self) -> CapturedOutput {
        let tail = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        let kept: Vec<u8> = tail.kept.iter().copied().collect();
        let dropped = tail.total - kept.len() as u64;
        let mut text = String::new();
        if dropped > 0 {
            text.push_str(&format!(
                "[… {} earlier not shown, {} in all]\n",
                human_bytes(dropped),
                human_bytes(tail.total)
            ));
        }
        text.push_str(&String::from_utf8_lossy(&kept));
        CapturedOutput {
            text,
            total_bytes: tail.total,
            truncated: dropped > 0,
        }
    }

    /// Each layer of the jail that could not be applied (best effort only), as far as known:
    /// complete once the process has ended.
    pub fn weakened(&self) -> Vec<String> {
        self.weakened
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the program has ended (its helper is gone).
    pub fn has_exited(&self) -> bool {
        self.exited.load(Ordering::SeqCst)
    }

    /// Kills the program and everything it started (the whole PID namespace); its end is then
    /// [`JailExit::Interrupted`].
    pub fn kill(&self) {
        self.kill_as(JailExit::Interrupted);
    }

    /// Kills the program like [`JailProcess::kill`], with `exit` as its end (for example
    /// [`JailExit::TimedOut`] for a caller's own time limit).
    pub fn kill_as(&self, exit: JailExit) {
        let _ = self.kill.send(exit);
    }

    /// Whether the process has written anything into its zones' copy-on-write layers (always
    /// `false` for a process that writes its zones directly).
    pub fn has_changes(&self) -> bool {
        self.layered.as_ref().is_some_and(|layered| {
            layered.uppers.iter().any(|upper| {
                std::fs::read_dir(upper).map_or(true, |mut entries| entries.next().is_some())
            })
        })
    }

    /// Ends the process (killing it and everything it started, if it still runs) and reads
    /// what it changed in its zones as a changeset, not yet applied (see the module's header).
    /// A process that writes its zones directly has no changeset: that is a
    /// [`ChangesetError::Scan`].
    pub async fn end_with_changes(mut self) -> Result<Changeset, ChangesetError> {
        self.kill();
        let _ = self.wait().await;
        let Some(layered) = self.layered.take() else {
            return Err(ChangesetError::Scan(
                "the process wrote its zones directly".to_owned(),
            ));
        };
        tokio::task::spawn_blocking(move || layered.scan())
            .await
            .unwrap_or_else(|e| {
                Err(ChangesetError::Scan(format!(
                    "reading the process's changes failed: {e}"
                )))
            })
    }

    /// A handle that kills this process.
    pub fn killer(&self) -> JailKiller {
        JailKiller(self.kill.clone())
    }

    /// Waits for the program to end and says how it ended (after a kill: as killed). A jail
    /// that could not be set up is [`JailError::Setup`]. Closes its stdin first, so a program
    /// that reads to the end of its input ends.
    pub async fn wait(&mut self) -> Result<JailExit, JailError> {
        drop(self.stdin.take());
        if let Some(ended) = self.ended.take() {
            let result = ended.await.unwrap_or_else(|_| {
                Err(JailError::Setup(
                    "the jail's monitor ended without an answer".to_owned(),
                ))
            });
            self.exit = Some(
                result
                    .as_ref()
                    .map(Clone::clone)
                    .map_err(ToString::to_string),
            );
            return result;
        }
        match &self.exit {
            Some(Ok(exit)) => Ok(exit.clone()),
            Some(Err(message)) => Err(JailError::Setup(message.clone())),
            None => Err(JailError::Setup(
                "the process was already waited for".to_owned(),
            )),
        }
    }
}

/// A handle that kills a [`JailProcess`] from elsewhere (for example from a guard that
/// outlives a borrow of it). Holding one does not keep the process alive.
#[derive(Debug, Clone)]
pub struct JailKiller(mpsc::UnboundedSender<JailExit>);

impl JailKiller {
    /// Kills the process like [`JailProcess::kill_as`].
    pub fn kill_as(&self, exit: JailExit) {
        let _ = self.0.send(exit);
    }
}

impl Drop for JailProcess {
    /// Kills the program and everything it started (the monitor does, at once; without a
    /// runtime left to run it, dropping the helper kills it, and with it the namespace).
    fn drop(&mut self) {
        self.kill();
        if let Some(layered) = self.layered.take() {
            // Removed once every process that could still write there is gone.
            std::thread::spawn(move || layered.remove());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_and_finds_a_mark() {
        let mut tail = Tail {
            cap: 5,
            ..Tail::default()
        };
        tail.push(b"abc");
        let mark = tail.total;
        tail.push(b"defg");
        assert_eq!(tail.kept.iter().copied().collect::<Vec<_>>(), b"cdefg");
        assert_eq!(tail.since(mark), b"defg");
        assert_eq!(tail.since(0), b"cdefg");
        tail.push(b"0123456789");
        assert_eq!(tail.since(0), b"56789");
        assert_eq!(tail.total, 17);
    }
}
