//! The host at work. A dispatcher takes every action as it arrives: an interrupt fires at
//! once, questions (`getStatus`, `listManualTools`, `listApprovals`, `forgetApprovals`) are
//! answered at once even while a turn runs, and work that changes the conversation or the
//! zones (`userInput`, `manualToolInvoke`, `setModel`, `newSession`, `clearHistory`, `compact`,
//! `undo`) is queued for the worker, which does one job at a time in the order they came.
//! `endSession` drops the queued work and ends the session after the running job (interrupted
//! first); with reason `interrupted` it ends at once, without waiting for the job to wind down.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use golem_core::bus::ActionSubscription;
use golem_core::interrupt::InterruptSignal;
use golem_core::ui::RuntimeUI;
use golem_protocol::{
    ActionEvent, ActionResult, ChatMessage, DisplayEvent, Role, SessionAction, SessionEndReason,
    TurnStatus,
};
use golem_sandbox::undo::UndoScope;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::transcript::{TranscriptSlot, close_writer, record};
use super::{SessionHost, SharedState, answers, ending};
use crate::inbox::SessionInbox;
use crate::launch::SessionEnv;
use crate::runner::{RunStatus, WorkerRuntime};
use crate::worker::WorkerDefinition;
use golem_session::{SessionMeta, SessionStore, TranscriptEntry};

/// How the last turn ended, for `sessionEnded`.
#[derive(Debug, Clone)]
pub(crate) struct TurnRecord {
    pub reason: SessionEndReason,
    pub message: Option<String>,
}

/// Work for the worker, in order.
enum Job {
    Turn(String),
    /// Continue the turn left waiting for an approval.
    Continue,
    Manual {
        id: Option<String>,
        tool: String,
        args: Value,
    },
    SetModel {
        request_id: Option<String>,
        model: String,
    },
    NewSession {
        request_id: Option<String>,
    },
    ClearHistory {
        request_id: Option<String>,
    },
    Compact {
        request_id: Option<String>,
        focus: Option<String>,
    },
    Undo {
        request_id: Option<String>,
        turns: u32,
        force: bool,
    },
}

/// What the worker needs besides its runtime.
struct Worker {
    runtime: WorkerRuntime,
    ui: RuntimeUI,
    interrupt: InterruptSignal,
    shared: Arc<SharedState>,
    transcript: TranscriptSlot,
    env: Arc<SessionEnv>,
    definition: Arc<WorkerDefinition>,
    last: watch::Sender<Option<TurnRecord>>,
    inbox: Arc<SessionInbox>,
}

/// Runs the session until it ends.
pub(crate) async fn serve(host: SessionHost) {
    let SessionHost {
        bus: _,
        ui,
        interrupt,
        answerers: _,
        unattended: _,
        actions,
        recorder,
        runtime,
        transcript,
        shared,
        env,
        definition,
        worker_name: _,
        undo_notice: _,
        inbox,
        notifier,
        traces,
        unused: _,
    } = host;
    let recorder = tokio::spawn(record(recorder, transcript.clone()));
    let traces = traces.map(|traces| tokio::spawn(traces.run()));
    let (jobs, queue) = mpsc::unbounded_channel();
    let (last, last_seen) = watch::channel(None);
    let registry = runtime.registry().clone();
    let controller = runtime.controller().clone();
    let budget = runtime.tree_slot().budget;
    let tree = env.tree.clone();
    let worker = tokio::spawn(
        Worker {
            runtime,
            ui: ui.clone(),
            interrupt: interrupt.clone(),
            shared: shared.clone(),
            transcript: transcript.clone(),
            env,
            definition: definition.clone(),
            last,
            inbox,
        }
        .work(queue),
    );
    let context = answers::Context {
        ui: &ui,
        shared: &shared,
        registry: &registry,
        controller: &controller,
        definition: &definition,
        tree: &tree,
        budget,
    };
    let requested = dispatch(actions, &jobs, &interrupt, &context).await;
    drop(jobs);
    let immediate =
        requested == Some(SessionEndReason::Interrupted) && shared.busy.load(Ordering::SeqCst);
    if immediate {
        interrupt.interrupt();
    } else if let Err(e) = worker.await {
        tracing::error!(error = %e, "the session's worker stopped unexpectedly");
    }
    let (reason, message) = ending(requested, last_seen.borrow().as_ref());
    let counts = shared.usage();
    ui.emit(DisplayEvent::SessionEnded {
        reason,
        message: message.clone(),
        usage: Some(counts.session),
        cost: counts.session_cost,
    });
    if let Err(e) = recorder.await {
        tracing::error!(error = %e, "the transcript recorder stopped unexpectedly");
    }
    if let Some(traces) = traces
        && let Err(e) = traces.await
    {
        tracing::error!(error = %e, "the session's tracer stopped unexpectedly");
    }
    transcript.close(reason, message);
    if let Some(notifier) = notifier {
        notifier.finish_parked().await;
    }
}

/// Takes actions until `endSession`; returns its reason (`None`: the last turn decides).
async fn dispatch(
    mut actions: ActionSubscription,
    jobs: &mpsc::UnboundedSender<Job>,
    interrupt: &InterruptSignal,
    context: &answers::Context<'_>,
) -> Option<SessionEndReason> {
    while let Some(action) = actions.recv().await {
        let job = match action {
            ActionEvent::Interrupt { reason } => {
                tracing::debug!(reason = reason.as_deref(), "interrupt requested");
                interrupt.interrupt();
                None
            }
            ActionEvent::EndSession { reason } => {
                // Work still queued is dropped; the running job is interrupted.
                context.shared.ending.store(true, Ordering::SeqCst);
                if context.shared.busy.load(Ordering::SeqCst) {
                    interrupt.interrupt();
                }
                return reason;
            }
            ActionEvent::UserInput { content, .. } => Some(Job::Turn(content)),
            ActionEvent::ContinueTurn {} => Some(Job::Continue),
            ActionEvent::ManualToolInvoke {
                request_id,
                tool_name,
                args,
            } => Some(Job::Manual {
                id: request_id,
                tool: tool_name,
                args,
            }),
            ActionEvent::SetModel { request_id, model } => {
                Some(Job::SetModel { request_id, model })
            }
            ActionEvent::NewSession { request_id } => Some(Job::NewSession { request_id }),
            ActionEvent::ClearHistory { request_id } => Some(Job::ClearHistory { request_id }),
            ActionEvent::Compact { request_id, focus } => Some(Job::Compact { request_id, focus }),
            ActionEvent::Undo {
                request_id,
                turns,
                force,
            } => Some(Job::Undo {
                request_id,
                turns: turns.unwrap_or(1).max(1),
                force,
            }),
            ActionEvent::ListManualTools { request_id } => {
                context.manual_tools(request_id);
                None
            }
            ActionEvent::ListApprovals { request_id } => {
                context.approvals(request_id);
                None
            }
            ActionEvent::ForgetApprovals { request_id, index } => {
                context.forget(request_id, index);
                None
            }
            ActionEvent::GetStatus { request_id } => {
                context.status(request_id);
                None
            }
            ActionEvent::SetApprovalMode { request_id, mode } => {
                context.set_approval_mode(request_id, mode);
                None
            }
            // Answers reach their waiter through the bus, never this subscription; one whose
            // request is over is dropped there.
            ActionEvent::ApprovalResponse(_) | ActionEvent::InputResponse { .. } => None,
        };
        if let Some(job) = job {
            // Marked busy when queued, so that `getStatus` right after says so.
            context.shared.busy.store(true, Ordering::SeqCst);
            if jobs.send(job).is_err() {
                tracing::error!("the session's worker is gone; the action is dropped");
            }
        }
    }
    None
}

impl Worker {
    async fn work(mut self, mut queue: mpsc::UnboundedReceiver<Job>) {
        while let Some(job) = queue.recv().await {
            if self.shared.ending.load(Ordering::SeqCst) {
                continue;
            }
            self.shared.busy.store(true, Ordering::SeqCst);
            // The job's last event goes out once the worker is idle again, so that a
            // `getStatus` sent on seeing it finds the session as the job left it.
            let last = match job {
                Job::Turn(input) => Some(self.turn(Some(&input)).await),
                Job::Continue => Some(self.turn(None).await),
                Job::Manual { id, tool, args } => {
                    let id = id.unwrap_or_else(|| self.ui.bus().next_request_id("user"));
                    self.runtime.invoke_manual_as(id, &tool, args).await;
                    None
                }
                Job::SetModel { request_id, model } => Some(self.set_model(request_id, &model)),
                Job::NewSession { request_id } => Some(self.new_session(request_id)),
                Job::ClearHistory { request_id } => {
                    self.runtime.clear_history();
                    self.transcript.append(&TranscriptEntry::Cleared);
                    self.shared.messages.store(0, Ordering::Relaxed);
                    self.shared.forget_context();
                    Some(answer(
                        request_id,
                        SessionAction::ClearHistory,
                        Ok("conversation cleared (remembered approvals are kept)".to_owned()),
                    ))
                }
                Job::Compact { request_id, focus } => {
                    let result = self.runtime.compact_history(focus.as_deref()).await;
                    let result = result.map_err(|e| e.to_string());
                    self.shared
                        .messages
                        .store(self.runtime.history().len() as u64, Ordering::Relaxed);
                    Some(answer(request_id, SessionAction::Compact, result))
                }
                Job::Undo {
                    request_id,
                    turns,
                    force,
                } => Some(self.undo(request_id, turns, force).await),
            };
            if queue.is_empty() {
                self.shared.busy.store(false, Ordering::SeqCst);
            }
            if let Some(event) = last {
                self.ui.emit(event);
            }
        }
    }

    /// A turn on `input`, or (`None`) the turn left waiting for an approval, continued.
    async fn turn(&mut self, input: Option<&str>) -> DisplayEvent {
        self.interrupt.reset();
        // Every front end sees what was asked, whichever one sent it (a second browser tab, a
        // tab that reloads later).
        if let Some(input) = input {
            self.ui.emit(DisplayEvent::Message {
                message: ChatMessage {
                    role: Role::User,
                    content: input.to_owned(),
                },
                worker: None,
            });
        }
        self.shared
            .usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .start_turn();
        let turn = self.shared.turns.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(journal) = &self.env.undo {
            journal.begin_turn(turn);
        }
        let outcome = match input {
            Some(input) => self.runtime.run(input).await,
            None => {
                self.env.tree.continue_trace();
                self.runtime.continue_turn().await
            }
        };
        if let Some(journal) = &self.env.undo {
            journal.sync();
        }
        let counts = self.shared.usage();
        let output = outcome.output;
        let (status, reason, response, error) = match outcome.status {
            RunStatus::Completed => (
                TurnStatus::Completed,
                SessionEndReason::Completed,
                Some(outcome.response),
                None,
            ),
            RunStatus::Interrupted => (
                TurnStatus::Interrupted,
                SessionEndReason::Interrupted,
                Some(outcome.response),
                None,
            ),
            RunStatus::Failed(error) => (
                TurnStatus::Failed,
                SessionEndReason::Failed,
                None,
                Some(error),
            ),
            RunStatus::BudgetExceeded(exceeded) => (
                TurnStatus::BudgetExceeded,
                SessionEndReason::BudgetExceeded,
                None,
                Some(exceeded.to_string()),
            ),
            RunStatus::WaitingApproval(ids) => (
                TurnStatus::WaitingApproval,
                SessionEndReason::WaitingApproval,
                None,
                Some(waiting_message(&ids)),
            ),
        };
        self.last.send_replace(Some(TurnRecord {
            reason,
            message: response.clone().or_else(|| error.clone()),
        }));
        let output = output.filter(|_| status == TurnStatus::Completed);
        DisplayEvent::TurnEnded {
            status,
            response,
            error,
            output,
            usage: counts.turn,
            cost: counts.turn_cost,
        }
    }

    /// The model called `name`, if it exists, is usable (its key is set) and fits the root
    /// worker's `compatible_models`.
    fn set_model(&mut self, request_id: Option<String>, name: &str) -> DisplayEvent {
        let cost_budget = self.runtime.tree_slot().budget.cost_usd.is_some();
        let resolved = self
            .definition
            .check_compatible(name)
            .map_err(|e| e.to_string())
            .and_then(|()| self.env.resolver.resolve(name).map_err(|e| e.to_string()))
            .and_then(|model| match model.price() {
                None if cost_budget => Err(format!(
                    "the worker runs under a cost budget, and the price of {} is not known \
                     (add it under `prices:` in golem-forge.config.yaml)",
                    model.spec()
                )),
                Some(_) | None => Ok(model),
            });
        let result = match resolved {
            Ok(model) => {
                self.runtime.set_model(model);
                *self
                    .shared
                    .model
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = name.to_owned();
                Ok(format!("model: {name}"))
            }
            Err(e) => Err(format!("cannot switch to {name}: {e}")),
        };
        answer(request_id, SessionAction::SetModel, result)
    }

    /// Closes this transcript and starts a new one for the same worker and model; history,
    /// remembered approvals and token counts start afresh.
    fn new_session(&mut self, request_id: Option<String>) -> DisplayEvent {
        let store = SessionStore::new(&self.env.config.root);
        let model = self.shared.model();
        let meta = SessionMeta::new(
            &self.definition.name,
            &self.definition.path,
            &model,
            self.definition.mode.as_str(),
        );
        let fresh = match store.create(meta) {
            Ok(fresh) => fresh,
            Err(e) => {
                return answer(
                    request_id,
                    SessionAction::NewSession,
                    Err(format!("cannot start a new session: {e}")),
                );
            }
        };
        let id = fresh.id().to_owned();
        if let Some(old) = self.transcript.replace(fresh) {
            close_writer(
                old,
                SessionEndReason::Completed,
                Some(format!("continued as session {id}")),
            );
        }
        self.runtime.clear_history();
        self.runtime.set_cache_key(&id);
        self.shared.turns.store(0, Ordering::SeqCst);
        if let Some(journal) = &self.env.undo
            && let Err(err) = journal.switch(&store.undo_dir(&id))
        {
            tracing::warn!(%err, "the new session's undo journal cannot be opened");
        }
        self.runtime.controller().memory().clear();
        self.inbox.bind(&id, &self.definition.name);
        self.env.tree.reset();
        self.shared.messages.store(0, Ordering::Relaxed);
        self.shared.forget_context();
        *self
            .shared
            .usage
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Default::default();
        *self
            .shared
            .session_id
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = id.clone();
        self.last.send_replace(None);
        self.ui.emit(DisplayEvent::SessionStarted {
            protocol_version: golem_protocol::PROTOCOL_VERSION.to_owned(),
            session_id: id.clone(),
            worker: self.definition.name.clone(),
            model,
        });
        answer(
            request_id,
            SessionAction::NewSession,
            Ok(format!(
                "new session {id}: history, remembered approvals and token counts cleared"
            )),
        )
    }
}

impl Worker {
    /// Puts the zone files of the last `turns` turns that changed files back, and tells the
    /// model; conflicts (files changed outside since) change nothing unless `force`.
    async fn undo(&mut self, request_id: Option<String>, turns: u32, force: bool) -> DisplayEvent {
        let Some(journal) = self.env.undo.clone() else {
            return answer(
                request_id,
                SessionAction::Undo,
                Err("undo is not available in this session".to_owned()),
            );
        };
        let scope = UndoScope::Last(usize::try_from(turns).unwrap_or(usize::MAX));
        let undone = tokio::task::spawn_blocking(move || journal.undo(scope, force))
            .await
            .map_err(|e| format!("undo stopped unexpectedly: {e}"))
            .and_then(|result| result.map_err(|e| e.to_string()));
        let result = undone.map(|report| {
            self.runtime.add_note(&report.model_note());
            report.summary()
        });
        answer(request_id, SessionAction::Undo, result)
    }
}

/// What a turn that ended waiting for approvals says: which inbox entries, and how to answer.
fn waiting_message(ids: &[u64]) -> String {
    let numbers: Vec<String> = ids.iter().map(u64::to_string).collect();
    match numbers.as_slice() {
        [] => "waiting for approval in the inbox: `golem-forge inbox` lists what waits".to_owned(),
        [one] => format!(
            "waiting for approval in the inbox (entry {one}): answer with `golem-forge inbox \
             approve {one}` or `golem-forge inbox deny {one}`"
        ),
        [first, rest @ ..] => format!(
            "waiting for approval in the inbox (entries {first}, {}): answer each with \
             `golem-forge inbox approve {first}` or `golem-forge inbox deny {first}`, and so on",
            rest.join(", ")
        ),
    }
}

/// The `actionResult` answering a session action.
fn answer(
    request_id: Option<String>,
    action: SessionAction,
    result: Result<String, String>,
) -> DisplayEvent {
    let (ok, message) = match result {
        Ok(message) => (true, message),
        Err(message) => (false, message),
    };
    DisplayEvent::ActionResult(ActionResult {
        request_id,
        action,
        ok,
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::waiting_message;

    #[test]
    fn the_waiting_message_names_the_entries_it_means() {
        assert_eq!(
            waiting_message(&[7]),
            "waiting for approval in the inbox (entry 7): answer with `golem-forge inbox \
             approve 7` or `golem-forge inbox deny 7`"
        );
        let many = waiting_message(&[3, 4, 9]);
        assert!(many.contains("(entries 3, 4, 9)"), "{many}");
        assert!(many.contains("`golem-forge inbox approve 3`"), "{many}");
        assert!(!waiting_message(&[]).contains(" N"));
        assert!(!many.contains(" N`") && !many.contains(" N "), "{many}");
    }
}
