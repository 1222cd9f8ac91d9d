//! The approval controller: decides calls that require consent, by session memory, then by
//! project rules, then by mode (`approve_all`, `auto_deny`), or by asking through a callback
//! (the UI). An answer may remember the approval for the session or, as a rule, for the
//! project. In the `defer` mode a call that would be asked is parked in the project's approval
//! inbox instead ([`ApprovalInbox`]), and an answer given there later is taken as the user's.
//! It never sees pre-approved or blocked calls: the orchestrator settles those by policy.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
pub use golem_protocol::ApprovalMode;
use golem_protocol::{ApprovalRequest, ApprovalResponse, DecidedBy, InvokedBy, RememberScope};
use tokio_util::sync::CancellationToken;

use super::{ApprovalMemory, ApprovalRule, ProjectRules};

/// Why the callback gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallbackError {
    /// The request was cancelled (the user interrupted).
    #[error("approval request cancelled")]
    Cancelled,
    /// No one can answer (no UI, the UI went away, a timeout); the call is denied with this
    /// message as the note.
    #[error("{0}")]
    Unavailable(String),
}

/// Asks the user: receives the request and a cancellation token, resolves to the answer.
pub type ApprovalCallback = Arc<
    dyn Fn(
            ApprovalRequest,
            CancellationToken,
        ) -> BoxFuture<'static, Result<ApprovalResponse, CallbackError>>
        + Send
        + Sync,
>;

/// The decision for one asked call.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // fields are named for what they hold
pub enum ApprovalOutcome {
    /// Decided: the response (approved or denied, with note and modified arguments) and who
    /// decided.
    Decided {
        response: ApprovalResponse,
        /// Who decided.
        decided_by: DecidedBy,
    },
    /// The user interrupted while the request was pending.
    Interrupted,
    /// Parked in the approval inbox (the `defer` mode): nobody decided yet. `inbox_id` is its
    /// number there.
    Deferred {
        /// The entry's number in the inbox.
        inbox_id: u64,
    },
}

/// Why the `defer` mode could not park a call; the call is denied with this message in its note
/// (`… was denied: approval mode is defer, but {this}`).
#[derive(Debug, thiserror::Error)]
pub enum ParkError {
    /// The controller was given no inbox.
    #[error("this session has no approval inbox")]
    NoInbox,
    /// Consent for what a call did (a jailed program's changeset): its changes are held only
    /// while the call runs.
    #[error(
        "what a program changed cannot wait in the inbox; its changes were discarded \
         (allow them with a project rule, or run interactively)"
    )]
    ChangesCannotWait,
    /// Only the root worker's turn can wait and continue.
    #[error("a delegated worker's call ({worker}) cannot wait in the inbox")]
    Delegated {
        /// The name of the delegated worker that made the call.
        worker: String,
    },
    /// The inbox's store failed (an implementation's own error).
    #[error("the inbox cannot be written ({0})")]
    Unwritable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where the `defer` mode parks the calls it would ask, and where their answers come back: the
/// project's approval inbox, seen from one session.
pub trait ApprovalInbox: Send + Sync {
    /// Parks `request` (the same call parked again keeps its entry); its number in the inbox.
    fn park(&self, request: &ApprovalRequest) -> Result<u64, ParkError>;
    /// The answer given in the inbox to the call `tool_call_id`, if one was given.
    fn answer(&self, tool_call_id: &str) -> Option<ApprovalResponse>;
}

/// The message used when a call needs consent and there is no one to ask.
pub fn no_terminal_message(tool: &str) -> String {
    format!(
        "approval needed for {tool} but no terminal is attached \
         (use --approval approve_all or auto_deny, or defer to let it wait in the inbox)"
    )
}

/// Decides calls that require consent.
#[derive(Clone)]
pub struct ApprovalController {
    /// Shared by every clone: switching it switches the whole session (delegated workers
    /// included), in the middle of a turn too.
    mode: Arc<Mutex<ApprovalMode>>,
    callback: Option<ApprovalCallback>,
    memory: ApprovalMemory,
    rules: ProjectRules,
    inbox: Option<Arc<dyn ApprovalInbox>>,
}

impl fmt::Debug for ApprovalController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalController")
            .field("mode", &self.mode())
            .field("callback", &self.callback.is_some())
            .field("remembered", &self.memory.len())
            .field("rules", &self.rules.len())
            .field("inbox", &self.inbox.is_some())
            .finish()
    }
}

impl ApprovalController {
    /// A controller in `mode` with no callback and an empty memory.
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode: Arc::new(Mutex::new(mode)),
            callback: None,
            memory: ApprovalMemory::new(),
            rules: ProjectRules::default(),
            inbox: None,
        }
    }

    /// Parks calls in `inbox` in the `defer` mode, and takes the answers given there in every
    /// mode.
    pub fn with_inbox(mut self, inbox: Arc<dyn ApprovalInbox>) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// Uses the project's rules (consulted after session memory, before the mode).
    pub fn with_rules(mut self, rules: ProjectRules) -> Self {
        self.rules = rules;
        self
    }

    /// The project rules.
    pub fn rules(&self) -> &ProjectRules {
        &self.rules
    }

    /// Sets the callback that asks the user (interactive mode).
    pub fn with_callback(mut self, callback: ApprovalCallback) -> Self {
        self.callback = Some(callback);
        self
    }

    /// Shares an existing session memory (delegated workers share their parent's).
    pub fn with_memory(mut self, memory: ApprovalMemory) -> Self {
        self.memory = memory;
        self
    }

    /// The mode.
    pub fn mode(&self) -> ApprovalMode {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Switches the mode of this controller and of every clone of it (the session's), for
    /// the calls decided from now on.
    pub fn set_mode(&self, mode: ApprovalMode) {
        *self.mode.lock().unwrap_or_else(PoisonError::into_inner) = mode;
    }

    /// The session memory.
    pub fn memory(&self) -> &ApprovalMemory {
        &self.memory
    }

    /// Decides a call that requires consent.
    pub async fn decide(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalOutcome {
        if self.memory.is_approved(&request.tool_name, &request.args) {
            return decided(
                ApprovalResponse::approve(request.request_id),
                DecidedBy::SessionMemory,
            );
        }
        if self
            .rules
            .matching(&request.tool_name, &request.args)
            .is_some()
        {
            return decided(
                ApprovalResponse::approve(request.request_id),
                DecidedBy::Rule,
            );
        }
        self.by_mode(request, cancel, Keep::Call).await
    }

    /// Decides a call that only a person may approve (`ApprovalRequirement::AskUser`): no
    /// session memory, no project rule, and `approve_all` does not approve it; `auto_deny`
    /// denies it. The user is asked (without a callback, it is denied with the headless
    /// message), and an answer "for the session" or "for the project" is not kept.
    pub async fn decide_by_user(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
    ) -> ApprovalOutcome {
        match self.mode() {
            ApprovalMode::AutoDeny => auto_denied(request),
            ApprovalMode::Defer => self.park_or_take(request, cancel, Keep::Nothing).await,
            ApprovalMode::Interactive | ApprovalMode::ApproveAll => {
                self.ask_with(request, cancel, Keep::Nothing).await
            }
        }
    }

    /// Decides consent for what a call did (a jailed process's changes, see
    /// [`crate::effects`]), asked once for several `scopes` (each a JSON object such as
    /// `{zone, operation}`): approved at once when every scope is remembered for the session
    /// or matched by a project rule of the request's tool; otherwise by the mode, or by asking
    /// the user, whose "for the session" or "for the project" is kept per scope, not for the
    /// request as a whole. Edited arguments are not taken: there is nothing to edit.
    pub async fn decide_scoped(
        &self,
        request: ApprovalRequest,
        scopes: &[serde_json::Value],
        cancel: &CancellationToken,
    ) -> ApprovalOutcome {
        let tool = request.tool_name.as_str();
        let remembered = |scope: &serde_json::Value| self.memory.is_approved(tool, scope);
        let ruled = |scope: &serde_json::Value| self.rules.matching(tool, scope).is_some();
        if !scopes.is_empty() && scopes.iter().all(|s| remembered(s) || ruled(s)) {
            let decided_by = if scopes.iter().all(remembered) {
                DecidedBy::SessionMemory
            } else {
                DecidedBy::Rule
            };
            return decided(ApprovalResponse::approve(request.request_id), decided_by);
        }
        self.by_mode(request, cancel, Keep::Scopes(scopes)).await
    }

    /// Decides by the mode: `approve_all` approves, `auto_deny` denies, `interactive` asks
    /// (keeping what `keep` says of an answer for the session or the project).
    async fn by_mode(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
        keep: Keep<'_>,
    ) -> ApprovalOutcome {
        match self.mode() {
            ApprovalMode::ApproveAll => decided(
                ApprovalResponse::approve(request.request_id),
                DecidedBy::Mode,
            ),
            ApprovalMode::AutoDeny => auto_denied(request),
            ApprovalMode::Defer => self.park_or_take(request, cancel, keep).await,
            ApprovalMode::Interactive => self.ask_with(request, cancel, keep).await,
        }
    }

    /// The `defer` mode: the inbox's answer to the call when one was given (taken as the
    /// user's), else the call parked there. A delegated worker's call is not parked (only the
    /// root worker's turn can wait and continue), nor is consent for what a call did (a jailed
    /// program's changes are held only while its call runs): both are denied, saying so.
    async fn park_or_take(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
        keep: Keep<'_>,
    ) -> ApprovalOutcome {
        let given = self.inbox_answer(&request);
        // A call the user invoked is asked: the user is right there.
        if given.is_some() || request.invoked_by == InvokedBy::User {
            return self.answer_with(request, cancel, keep, given).await;
        }
        let parked = match (&self.inbox, &request.worker) {
            (None, _) => Err(ParkError::NoInbox),
            _ if !request.editable => Err(ParkError::ChangesCannotWait),
            (Some(_), Some(worker)) => Err(ParkError::Delegated {
                worker: worker.name.clone(),
            }),
            (Some(inbox), None) => inbox.park(&request),
        };
        match parked {
            Ok(inbox_id) => ApprovalOutcome::Deferred { inbox_id },
            Err(why) => {
                let note = format!(
                    "{} was denied: approval mode is defer, but {why}",
                    request.tool_name
                );
                decided(
                    ApprovalResponse::deny(request.request_id, Some(note)),
                    DecidedBy::Mode,
                )
            }
        }
    }

    /// The answer given in the inbox to `request`'s call, if any.
    fn inbox_answer(&self, request: &ApprovalRequest) -> Option<ApprovalResponse> {
        self.inbox
            .as_ref()
            .and_then(|inbox| inbox.answer(&request.tool_call_id))
    }

    /// Asks through the callback, unless the call was answered in the inbox.
    async fn ask_with(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
        keep: Keep<'_>,
    ) -> ApprovalOutcome {
        let given = self.inbox_answer(&request);
        self.answer_with(request, cancel, keep, given).await
    }

    /// Decides `request` by `given` (the inbox's answer), else by asking through the callback
    /// (denied with the headless message without one), keeping what `keep` says of the answer.
    async fn answer_with(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
        keep: Keep<'_>,
        given: Option<ApprovalResponse>,
    ) -> ApprovalOutcome {
        let tool = request.tool_name.clone();
        let args = request.args.clone();
        let request_id = request.request_id.clone();
        let answer = match (given, &self.callback) {
            // Answered in the inbox while the call was parked: the user's answer.
            (Some(answer), _) => Ok(answer),
            (None, Some(callback)) => tokio::select! {
                answer = callback(request, cancel.clone()) => answer,
                () = cancel.cancelled() => Err(CallbackError::Cancelled),
            },
            (None, None) => {
                let note = no_terminal_message(&tool);
                return decided(
                    ApprovalResponse::deny(request_id, Some(note)),
                    DecidedBy::Mode,
                );
            }
        };
        match answer {
            Ok(mut response) => {
                // The answer is about this request, whatever id the callback put on it.
                response.request_id = request_id;
                // The user approved these arguments; edited arguments are approved as edited
                // (for a call: scoped requests have nothing to edit).
                let kept: Vec<&serde_json::Value> = match keep {
                    Keep::Call => vec![response.modified_args.as_ref().unwrap_or(&args)],
                    Keep::Scopes(scopes) => {
                        response.modified_args = None;
                        scopes.iter().collect()
                    }
                    Keep::Nothing => {
                        response.remember = RememberScope::None;
                        Vec::new()
                    }
                };
                for approved in kept {
                    match response.remember {
                        _ if !response.approved => {}
                        RememberScope::None => {}
                        RememberScope::Session => self.memory.remember(&tool, approved),
                        RememberScope::Project => {
                            let rule = ApprovalRule::for_call(&tool, approved);
                            if let Err(error) = self.rules.add(rule) {
                                // It still holds for this session; the file could not keep it.
                                tracing::warn!(%error, "the project rule was not saved");
                                self.memory.remember(&tool, approved);
                            }
                        }
                    }
                }
                if !response.approved {
                    response.remember = RememberScope::None;
                    response.modified_args = None;
                }
                decided(response, DecidedBy::User)
            }
            Err(CallbackError::Cancelled) => ApprovalOutcome::Interrupted,
            Err(CallbackError::Unavailable(note)) => decided(
                ApprovalResponse::deny(request_id, Some(note)),
                DecidedBy::Mode,
            ),
        }
    }
}

/// What an answer "for the session" or "for the project" keeps.
#[derive(Debug, Clone, Copy)]
enum Keep<'a> {
    /// The call's arguments (as edited).
    Call,
    /// Each of these scopes.
    Scopes(&'a [serde_json::Value]),
    /// Nothing: only a person may approve, every time.
    Nothing,
}

/// `request` denied by the `auto_deny` mode.
fn auto_denied(request: ApprovalRequest) -> ApprovalOutcome {
    let note = format!(
        "{} was denied: approval mode is auto_deny",
        request.tool_name
    );
    decided(
        ApprovalResponse::deny(request.request_id, Some(note)),
        DecidedBy::Mode,
    )
}

fn decided(response: ApprovalResponse, decided_by: DecidedBy) -> ApprovalOutcome {
    ApprovalOutcome::Decided {
        response,
        decided_by,
    }
}

#[cfg(test)]
mod tests;
