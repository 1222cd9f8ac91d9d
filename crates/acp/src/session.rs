//! One ACP session: a session of the worker on the session host, attached to as the front end
//! that answers its approvals and questions. A pump task reads its display events for as long
//! as it lives, sends them to the editor as `session/update`s, asks the editor for permission
//! when a call needs consent, and wakes the prompt waiting for the turn (or command) to end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, RequestPermissionOutcome, RequestPermissionRequest, SessionId,
    SessionNotification, SessionUpdate, StopReason, ToolCallUpdate, ToolCallUpdateFields,
};
use golem_core::bus::DisplaySubscription;
use golem_protocol::{
    ActionEvent, ApprovalMode, ApprovalRequest, FormField, InputAction, ManualToolInfo, TurnStatus,
};
use golem_runtime::host::{ActionSender, HostOptions, Presence, RunningSession, SessionHost};
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::permission;
use crate::prompt::PromptAction;
use crate::replay::{Recorded, replay};
use crate::tool_call::ZoneMap;
use crate::updates::{Step, Translator, message};

/// How long a session may take to close once the editor is gone.
const CLOSING: Duration = Duration::from_secs(15);

/// What a prompt waits for.
enum Waiter {
    /// The turn's end.
    Turn(oneshot::Sender<(TurnStatus, Option<String>)>),
    /// The answer to the command sent with this request id.
    Command {
        request_id: String,
        done: oneshot::Sender<()>,
    },
}

/// One session, shared by the handlers and its pump.
pub struct AcpSession {
    id: String,
    actions: ActionSender,
    /// The manual tools, offered as commands.
    tools: Vec<ManualToolInfo>,
    waiting: Mutex<Option<Waiter>>,
    running: Mutex<Option<RunningSession>>,
    /// Kept for as long as the session lives: the host asks us its approvals.
    _presence: Presence,
    next_request: AtomicU64,
}

/// A session just opened: the session, the updates that tell its history again (for a loaded
/// one), and the mode it starts in.
pub struct Opened {
    /// The session.
    pub session: Arc<AcpSession>,
    /// The recorded conversation as updates (empty for a new session).
    pub history: Vec<SessionUpdate>,
    /// The approval mode in force.
    pub mode: ApprovalMode,
}

impl AcpSession {
    /// Opens a session with `options` (off the async threads: it reads files and may start
    /// MCP servers) and starts its pump, which reports to `connection`.
    pub async fn open(
        options: HostOptions,
        connection: ConnectionTo<Client>,
    ) -> Result<Opened, String> {
        let resumed = match &options.worker {
            golem_runtime::host::HostWorker::Resume { program_root, .. } => {
                Some(program_root.clone())
            }
            golem_runtime::host::HostWorker::File(_) => None,
        };
        let (host, recorded) = tokio::task::spawn_blocking(move || {
            let host = SessionHost::open(options)?;
            // What the conversation does not keep: the calls' result values and the cost.
            let recorded = resumed.map(|root| {
                golem_session::SessionStore::new(&root)
                    .load(&host.session_id())
                    .map(|transcript| Recorded::from_entries(&transcript.entries))
                    .unwrap_or_else(|e| {
                        tracing::warn!(error = %e, "the transcript could not be read again");
                        Recorded::default()
                    })
            });
            Ok::<_, golem_runtime::host::HostError>((host, recorded))
        })
        .await
        .map_err(|e| format!("the session could not be opened: {e}"))?
        .map_err(|e| e.to_string())?;
        let definition = host.definition();
        let zones = ZoneMap::new(
            definition
                .zones
                .iter()
                .map(|zone| (zone.name.clone(), definition.zone_dir(zone))),
        );
        let history = match &recorded {
            Some(recorded) => {
                let registry = host.registry();
                replay(host.history(), recorded, &zones, |name| {
                    registry
                        .get(name)
                        .map_or(golem_protocol::ToolKind::Other, |tool| tool.kind())
                })
            }
            None => Vec::new(),
        };
        let cost_so_far = recorded.and_then(|r| r.cost);
        let tools = host.registry().manual_tool_infos();
        let mode = host.approval_mode();
        let id = host.session_id();
        let (events, actions, presence) = host.attach_interactive().into_parts();
        let running = host.start();
        let session = Arc::new(AcpSession {
            id,
            actions,
            tools,
            waiting: Mutex::new(None),
            running: Mutex::new(Some(running)),
            _presence: presence,
            next_request: AtomicU64::new(1),
        });
        tokio::spawn(pump(
            events,
            Translator::new(zones).with_cost(cost_so_far),
            Arc::downgrade(&session),
            connection,
        ));
        Ok(Opened {
            session,
            history,
            mode,
        })
    }

    /// The session's id (its transcript's name).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The manual tools.
    pub fn tools(&self) -> &[ManualToolInfo] {
        &self.tools
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Option<Waiter>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs a prompt to its end: the stop reason, or the error that failed the turn.
    pub async fn prompt(&self, action: PromptAction) -> Result<StopReason, PromptFailure> {
        let request_id = format!("acp-{}", self.next_request.fetch_add(1, Ordering::Relaxed));
        let command = match action {
            PromptAction::Turn(content) => {
                let (tx, rx) = oneshot::channel();
                self.wait(Waiter::Turn(tx))?;
                self.actions.send(ActionEvent::UserInput {
                    request_id: None,
                    content,
                });
                let (status, error) = rx.await.map_err(|_| PromptFailure::Closed)?;
                return turn_end(status, error);
            }
            PromptAction::Clear => ActionEvent::ClearHistory {
                request_id: Some(request_id.clone()),
            },
            PromptAction::Compact(focus) => ActionEvent::Compact {
                request_id: Some(request_id.clone()),
                focus,
            },
            PromptAction::Undo(turns) => ActionEvent::Undo {
                request_id: Some(request_id.clone()),
                turns: Some(turns),
                force: false,
            },
            PromptAction::Model(model) => ActionEvent::SetModel {
                request_id: Some(request_id.clone()),
                model,
            },
            PromptAction::Status => ActionEvent::GetStatus {
                request_id: Some(request_id.clone()),
            },
            PromptAction::Approvals => ActionEvent::ListApprovals {
                request_id: Some(request_id.clone()),
            },
            PromptAction::Tool { name, args } => ActionEvent::ManualToolInvoke {
                request_id: Some(request_id.clone()),
                tool_name: name,
                args,
            },
        };
        let (tx, rx) = oneshot::channel();
        self.wait(Waiter::Command {
            request_id,
            done: tx,
        })?;
        self.actions.send(command);
        rx.await.map_err(|_| PromptFailure::Closed)?;
        Ok(StopReason::EndTurn)
    }

    fn wait(&self, waiter: Waiter) -> Result<(), PromptFailure> {
        let mut waiting = self.waiting();
        if waiting.is_some() {
            return Err(PromptFailure::Busy);
        }
        *waiting = Some(waiter);
        Ok(())
    }

    /// `session/cancel`: interrupts the running turn, as Ctrl+C does.
    pub fn cancel(&self) {
        self.actions.send(ActionEvent::Interrupt {
            reason: Some("cancelled in the editor".to_owned()),
        });
    }

    /// `session/set_mode`.
    pub fn set_mode(&self, mode: ApprovalMode) {
        self.actions.send(ActionEvent::SetApprovalMode {
            request_id: None,
            mode,
        });
    }

    /// Ends the session and waits (a while) for its transcript to be closed.
    pub async fn end(&self) {
        self.actions.send(ActionEvent::EndSession { reason: None });
        let running = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(running) = running
            && tokio::time::timeout(CLOSING, running.closed())
                .await
                .is_err()
        {
            tracing::warn!(session = %self.id, "the session did not close in time");
        }
    }

    /// Takes the waiter of the prompt that waits for `step` (the turn's end, or the answer to
    /// its command), leaving any other waiter in place.
    fn waiter_for(&self, step: &Step) -> Option<Waiter> {
        let mut waiting = self.waiting();
        let wanted = match (step, waiting.as_ref()) {
            (Step::TurnEnded { .. }, Some(Waiter::Turn(_))) => true,
            (
                Step::Answer { request_id, .. },
                Some(Waiter::Command {
                    request_id: want, ..
                }),
            ) => request_id == want,
            _ => false,
        };
        if wanted { waiting.take() } else { None }
    }
}

/// Why a prompt did not end with a stop reason.
#[derive(Debug, thiserror::Error)]
pub enum PromptFailure {
    /// Another prompt of the session runs.
    #[error("a prompt is already running in this session; cancel it or wait for its end")]
    Busy,
    /// The session closed under it.
    #[error("the session ended")]
    Closed,
    /// The turn failed (a model error, for one).
    #[error("{0}")]
    Failed(String),
}

/// The stop reason of a turn that ended with `status`.
fn turn_end(status: TurnStatus, error: Option<String>) -> Result<StopReason, PromptFailure> {
    match status {
        TurnStatus::Completed | TurnStatus::WaitingApproval => Ok(StopReason::EndTurn),
        TurnStatus::Interrupted => Ok(StopReason::Cancelled),
        // The runner's limit on model requests per turn.
        TurnStatus::Failed
            if error
                .as_deref()
                .is_some_and(|e| e.contains("max_iterations")) =>
        {
            Ok(StopReason::MaxTurnRequests)
        }
        TurnStatus::BudgetExceeded => Ok(StopReason::MaxTurnRequests),
        TurnStatus::Failed => Err(PromptFailure::Failed(
            error.unwrap_or_else(|| "the turn failed".to_owned()),
        )),
    }
}

/// Reads the session's events until it ends.
async fn pump(
    mut events: DisplaySubscription,
    mut translator: Translator,
    session: std::sync::Weak<AcpSession>,
    connection: ConnectionTo<Client>,
) {
    while let Some(event) = events.recv().await {
        let Some(session) = session.upgrade() else {
            return;
        };
        let notify = |update: SessionUpdate| {
            if let Err(e) = connection.send_notification(SessionNotification::new(
                SessionId::new(session.id.clone()),
                update,
            )) {
                tracing::debug!(error = %e, "an update could not be sent");
            }
        };
        for step in translator.steps(&event) {
            match step {
                Step::Update(update) => notify(update),
                Step::Ask(request) => {
                    let asked = translator.asked_call(&request);
                    tokio::spawn(ask_permission(
                        connection.clone(),
                        session.clone(),
                        request,
                        asked,
                    ));
                }
                Step::Question {
                    request_id,
                    prompt,
                    source,
                    fields,
                } => match permission::question_choices(&fields) {
                    Some(choices) => {
                        tokio::spawn(ask_question(
                            connection.clone(),
                            session.clone(),
                            request_id,
                            prompt,
                            choices,
                        ));
                    }
                    None => {
                        decline(&session, request_id);
                        notify(message(declined_line(&prompt, source.as_deref(), &fields)));
                    }
                },
                Step::Answer { ref text, .. } => match session.waiter_for(&step) {
                    Some(Waiter::Command { done, .. }) => {
                        if !text.is_empty() {
                            notify(message(text.clone()));
                        }
                        let _ = done.send(());
                    }
                    Some(Waiter::Turn(_)) | None => {}
                },
                Step::TurnEnded { status, ref error } => {
                    if status == TurnStatus::BudgetExceeded {
                        notify(message(format!(
                            "\n\nStopped: the budget ran out{}.\n",
                            error
                                .as_deref()
                                .map(|e| format!(" ({e})"))
                                .unwrap_or_default()
                        )));
                    }
                    if let Some(Waiter::Turn(tx)) = session.waiter_for(&step) {
                        let _ = tx.send((status, error.clone()));
                    }
                }
            }
        }
    }
}

/// The line that says a tool's question was declined.
fn declined_line(prompt: &str, source: Option<&str>, fields: &[FormField]) -> String {
    let who = source.unwrap_or("a tool");
    let what = if fields.is_empty() { "text" } else { "a form" };
    format!(
        "\n\n> Declined a question from {who} (it asks for {what}, which the editor cannot \
         show): {prompt}\n\n"
    )
}

fn decline(session: &AcpSession, request_id: String) {
    session.actions.send(ActionEvent::InputResponse {
        request_id,
        action: InputAction::Decline,
        values: None,
    });
}

/// Asks the editor about `request` and sends the answer to the session.
async fn ask_permission(
    connection: ConnectionTo<Client>,
    session: Arc<AcpSession>,
    request: ApprovalRequest,
    asked: ToolCallUpdate,
) {
    let outcome = connection
        .send_request(RequestPermissionRequest::new(
            SessionId::new(session.id.clone()),
            asked,
            permission::options(&request),
        ))
        .block_task()
        .await
        .map(|response| response.outcome)
        .map_err(|e| e.to_string());
    session
        .actions
        .send(ActionEvent::ApprovalResponse(permission::answer(
            &request, outcome,
        )));
}

/// Asks a tool's question as a choice and sends the values of the option chosen.
async fn ask_question(
    connection: ConnectionTo<Client>,
    session: Arc<AcpSession>,
    request_id: String,
    prompt: String,
    choices: Vec<(PermissionOption, Map<String, Value>)>,
) {
    let question = ToolCallUpdate::new(
        format!("question-{request_id}"),
        ToolCallUpdateFields::new().title(prompt),
    );
    let options = choices.iter().map(|(option, _)| option.clone()).collect();
    let outcome = connection
        .send_request(RequestPermissionRequest::new(
            SessionId::new(session.id.clone()),
            question,
            options,
        ))
        .block_task()
        .await;
    let chosen = match outcome {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => choices
                .into_iter()
                .find(|(option, _)| option.option_id == selected.option_id),
            _ => None,
        },
        Err(e) => {
            tracing::debug!(error = %e, "a question could not be asked");
            None
        }
    };
    let action = match chosen {
        Some((option, values)) if option.option_id.0.as_ref() != "decline" => {
            ActionEvent::InputResponse {
                request_id,
                action: InputAction::Accept,
                values: Some(values),
            }
        }
        Some(_) | None => ActionEvent::InputResponse {
            request_id,
            action: InputAction::Decline,
            values: None,
        },
    };
    session.actions.send(action);
}
