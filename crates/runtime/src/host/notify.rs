//! The nudge when an approval waits (`notify:` in the program config): once an approval request
//! has gone unanswered for `after_seconds`, the configured command runs once for it, outside the
//! jail (it is the user's own program), with the tool, the description and the risk in its
//! environment. An answer in time means no command; a command that cannot start is a `status`
//! warning, never a failed call. It runs under our reaper (`golem_sandbox::reaper`, the jail's
//! helper binary), so that whatever it leaves running, daemons included, ends when it ends,
//! when the notifier is dropped with the session, or when golem-forge dies; without a helper
//! binary it runs alone, and what it leaves behind outlives the session (logged as a warning).
//! A call parked in the approval inbox (the `defer` mode) has nobody waiting at a terminal: the
//! command runs at once for it, with the entry's number in `GOLEM_FORGE_INBOX_ID`, and the
//! session waits for it (at most [`PARKED_WAIT`]) before it ends.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, DisplayEvent, Risk, StatusLevel};
use tokio::task::JoinHandle;

use crate::config::NotifySettings;

/// Runs the notify command for requests that wait too long.
#[derive(Clone)]
pub(crate) struct ApprovalNotifier {
    settings: NotifySettings,
    ui: RuntimeUI,
    /// Our binary, whose reaper runs the command (`None`: it runs alone).
    reaper: Option<PathBuf>,
    /// The reapers of the commands still running, asked to stop when the last clone goes.
    running: Arc<Running>,
    /// The commands run for parked calls, which the session waits for before it ends.
    parked: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

/// How long a session that ends waits for the notify commands of its parked calls.
pub(crate) const PARKED_WAIT: Duration = Duration::from_secs(10);

/// The reapers of running notify commands, by a number of their own.
#[derive(Default)]
struct Running(Mutex<Vec<(u64, golem_sandbox::reaper::Stop)>>);

impl Drop for Running {
    fn drop(&mut self) {
        let running = self.0.get_mut().unwrap_or_else(PoisonError::into_inner);
        for (_, reaper) in running.drain(..) {
            let _asked = reaper.stop();
        }
    }
}

impl Running {
    /// Keeps `reaper` until [`Running::forget`] with the number returned.
    fn keep(&self, reaper: golem_sandbox::reaper::Stop) -> u64 {
        let mut running = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let number = running.last().map_or(0, |(n, _)| n + 1);
        running.push((number, reaper));
        number
    }

    /// Forgets the reaper kept as `number` (it has ended).
    fn forget(&self, number: u64) {
        let mut running = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        running.retain(|(n, _)| *n != number);
    }
}

/// Stops the pending nudge of one request when dropped (the request was answered).
pub(crate) struct PendingNudge(tokio::task::JoinHandle<()>);

impl Drop for PendingNudge {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl ApprovalNotifier {
    /// A notifier running `settings.command` under the reaper of `reaper` (our binary),
    /// reporting failures on `ui`.
    pub(crate) fn new(settings: NotifySettings, ui: RuntimeUI, reaper: Option<PathBuf>) -> Self {
        Self {
            settings,
            ui,
            reaper,
            running: Arc::default(),
            parked: Arc::default(),
        }
    }

    /// Runs the command at once for `request`, parked in the inbox as entry `inbox_id`.
    pub(crate) fn parked(&self, request: &ApprovalRequest, inbox_id: u64) {
        let mut env = command_env(request);
        env.push(("GOLEM_FORGE_INBOX_ID", inbox_id.to_string()));
        let run = self.run(env, Duration::ZERO, true);
        self.parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(tokio::spawn(run));
    }

    /// Waits (at most [`PARKED_WAIT`] in all) for the commands run for parked calls.
    pub(crate) async fn finish_parked(&self) {
        let handles: Vec<JoinHandle<()>> =
            std::mem::take(&mut *self.parked.lock().unwrap_or_else(PoisonError::into_inner));
        let all = futures::future::join_all(handles);
        if tokio::time::timeout(PARKED_WAIT, all).await.is_err() {
            tracing::warn!("a notify command for a parked approval is still running");
        }
    }

    /// Starts the clock for `request`; keep the result until the request is answered.
    pub(crate) fn watch(&self, request: &ApprovalRequest) -> PendingNudge {
        let wait = Duration::from_secs(self.settings.after_seconds);
        PendingNudge(tokio::spawn(self.run(command_env(request), wait, false)))
    }

    /// After `wait`, runs the command with `env`; with `to_end`, until it ends (else it is
    /// reaped in the background).
    fn run(
        &self,
        env: Vec<(&'static str, String)>,
        wait: Duration,
        to_end: bool,
    ) -> impl Future<Output = ()> + Send + 'static {
        let command = self.settings.command.clone();
        let ui = self.ui.clone();
        let reaper = self.reaper.clone();
        let running = Arc::downgrade(&self.running);
        async move {
            tokio::time::sleep(wait).await;
            let Some((program, args)) = command.split_first() else {
                return;
            };
            let started = start(program, args, reaper.as_deref()).and_then(|mut command| {
                command
                    .envs(env)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .kill_on_drop(false)
                    .spawn()
            });
            match started {
                // Reaped in the background; the approval keeps waiting meanwhile.
                Ok(mut child) => {
                    let kept = match (reaper.is_some(), child.id(), running.upgrade()) {
                        (true, Some(pid), Some(running)) => {
                            Some(running.keep(golem_sandbox::reaper::Stop::new(pid)))
                        }
                        _ => None,
                    };
                    let reaped = async move {
                        let _ = child.wait().await;
                        if let (Some(number), Some(running)) = (kept, running.upgrade()) {
                            running.forget(number);
                        }
                    };
                    if to_end {
                        reaped.await;
                    } else {
                        tokio::spawn(reaped);
                    }
                }
                Err(e) => ui.emit(DisplayEvent::Status {
                    level: StatusLevel::Warning,
                    message: format!("the notify command `{program}` could not start: {e}"),
                }),
            }
        }
    }
}

/// What the command is told of `request`, in its environment.
fn command_env(request: &ApprovalRequest) -> Vec<(&'static str, String)> {
    let risk = match request.risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
    };
    vec![
        ("GOLEM_FORGE_TOOL", request.tool_name.clone()),
        ("GOLEM_FORGE_DESCRIPTION", request.description.clone()),
        ("GOLEM_FORGE_RISK", risk.to_owned()),
    ]
}

/// The command that runs `program` with `args`: under the reaper of `reaper` (found on our
/// `PATH` first, so that a missing program is reported as such), or alone without one.
fn start(
    program: &str,
    args: &[String],
    reaper: Option<&std::path::Path>,
) -> std::io::Result<tokio::process::Command> {
    let Some(helper) = reaper else {
        tracing::warn!(
            "no reaper: what the notify command `{program}` leaves running outlives the session"
        );
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        return Ok(command);
    };
    let cwd = std::env::current_dir()?;
    let path = std::env::var("PATH").ok();
    let found = golem_sandbox::reaper::resolve(program, &cwd, path.as_deref())?;
    Ok(tokio::process::Command::from(
        golem_sandbox::reaper::command(helper, &found, program.as_ref(), args),
    ))
}
