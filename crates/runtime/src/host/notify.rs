//! The nudge when an approval waits (`notify:` in the program config): once an approval request
//! has gone unanswered for `after_seconds`, the configured command runs once for it, outside the
//! jail (it is the user's own program), with the tool, the description and the risk in its
//! environment. An answer in time means no command; a command that cannot start is a `status`
//! warning, never a failed call.

use std::process::Stdio;
use std::time::Duration;

use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, DisplayEvent, Risk, StatusLevel};

use crate::config::NotifySettings;

/// Runs the notify command for requests that wait too long.
#[derive(Clone)]
pub(crate) struct ApprovalNotifier {
    settings: NotifySettings,
    ui: RuntimeUI,
}

/// Stops the pending nudge of one request when dropped (the request was answered).
pub(crate) struct PendingNudge(tokio::task::JoinHandle<()>);

impl Drop for PendingNudge {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl ApprovalNotifier {
    /// A notifier running `settings.command`, reporting failures on `ui`.
    pub(crate) fn new(settings: NotifySettings, ui: RuntimeUI) -> Self {
        Self { settings, ui }
    }

    /// Starts the clock for `request`; keep the result until the request is answered.
    pub(crate) fn watch(&self, request: &ApprovalRequest) -> PendingNudge {
        let wait = Duration::from_secs(self.settings.after_seconds);
        let command = self.settings.command.clone();
        let ui = self.ui.clone();
        let risk = match request.risk {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        };
        let env = [
            ("GOLEM_FORGE_TOOL", request.tool_name.clone()),
            ("GOLEM_FORGE_DESCRIPTION", request.description.clone()),
            ("GOLEM_FORGE_RISK", risk.to_owned()),
        ];
        PendingNudge(tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let Some((program, args)) = command.split_first() else {
                return;
            };
            let started = tokio::process::Command::new(program)
                .args(args)
                .envs(env)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .kill_on_drop(false)
                .spawn();
            match started {
                // Reaped in the background; the approval keeps waiting meanwhile.
                Ok(mut child) => {
                    tokio::spawn(async move {
                        let _ = child.wait().await;
                    });
                }
                Err(e) => ui.emit(DisplayEvent::Status {
                    level: StatusLevel::Warning,
                    message: format!("the notify command `{program}` could not start: {e}"),
                }),
            }
        }))
    }
}
