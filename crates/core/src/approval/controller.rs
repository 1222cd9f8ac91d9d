//! The approval controller: decides calls that require consent, by session memory, then by
//! project rules, then by mode (`approve_all`, `auto_deny`), or by asking through a callback
//! (the UI). An answer may remember the approval for the session or, as a rule, for the
//! project. In the `defer` mode a call that would be asked is parked in the project's approval
//! inbox instead ([`ApprovalInbox`]), and an answer given there later is taken as the user's.
//! It never sees pre-approved or blocked calls: the orchestrator settles those by policy.

use std::fmt;
use std::sync::Arc;

use futures::future::BoxFuture;
use golem_protocol::{ApprovalRequest, ApprovalResponse, DecidedBy, InvokedBy, RememberScope};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::{ApprovalMemory, ApprovalRule, ProjectRules};

/// How calls that require consent are decided.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Ask the user through the callback.
    #[default]
    Interactive,
    /// Approve everything (tests, trusted contexts).
    ApproveAll,
    /// Deny everything that needs consent.
    AutoDeny,
    /// Park a call that would be asked in the approval inbox: its session stops there and
    /// continues once someone answers (`golem-forge inbox`).
    Defer,
}

impl ApprovalMode {
    /// The name used on the command line and in config.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Interactive => "interactive",
            ApprovalMode::ApproveAll => "approve_all",
            ApprovalMode::AutoDeny => "auto_deny",
            ApprovalMode::Defer => "defer",
        }
    }
}

impl fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// Where the `defer` mode parks the calls it would ask, and where their answers come back: the
/// project's approval inbox, seen from one session.
pub trait ApprovalInbox: Send + Sync {
    /// Parks `request` (the same call parked again keeps its entry); its number in the inbox.
    fn park(&self, request: &ApprovalRequest) -> Result<u64, String>;
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
    mode: ApprovalMode,
    callback: Option<ApprovalCallback>,
    memory: ApprovalMemory,
    rules: ProjectRules,
    inbox: Option<Arc<dyn ApprovalInbox>>,
}

impl fmt::Debug for ApprovalController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalController")
            .field("mode", &self.mode)
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
            mode,
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
        self.mode
    }

    /// Switches the mode.
    pub fn set_mode(&mut self, mode: ApprovalMode) {
        self.mode = mode;
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
        match self.mode {
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
        match self.mode {
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
        let answered = self
            .inbox
            .as_ref()
            .is_some_and(|inbox| inbox.answer(&request.tool_call_id).is_some());
        // A call the user invoked is asked: the user is right there.
        if answered || request.invoked_by == InvokedBy::User {
            return self.ask_with(request, cancel, keep).await;
        }
        let parked = match (&self.inbox, &request.worker) {
            (None, _) => Err("this session has no approval inbox".to_owned()),
            _ if !request.editable => Err(
                "what a program changed cannot wait in the inbox; its changes were discarded \
                 (allow them with a project rule, or run interactively)"
                    .to_owned(),
            ),
            (Some(_), Some(worker)) => Err(format!(
                "a delegated worker's call ({}) cannot wait in the inbox",
                worker.name
            )),
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

    async fn ask_with(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
        keep: Keep<'_>,
    ) -> ApprovalOutcome {
        let given = self
            .inbox
            .as_ref()
            .and_then(|inbox| inbox.answer(&request.tool_call_id));
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
mod tests {
    use super::*;
    use golem_protocol::Risk;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn request(tool: &str, args: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            request_id: "a1".into(),
            tool_call_id: "t1".into(),
            tool_name: tool.into(),
            args,
            description: "d".into(),
            risk: Risk::Medium,
            preview: None,
            invoked_by: InvokedBy::Model,
            worker: None,
            fields: Vec::new(),
            editable: true,
        }
    }

    fn answering(response: ApprovalResponse, calls: Arc<AtomicUsize>) -> ApprovalCallback {
        Arc::new(move |_req, _cancel| {
            calls.fetch_add(1, Ordering::SeqCst);
            let response = response.clone();
            Box::pin(async move { Ok(response) })
        })
    }

    fn unwrap_decided(outcome: ApprovalOutcome) -> (ApprovalResponse, DecidedBy) {
        match outcome {
            ApprovalOutcome::Decided {
                response,
                decided_by,
            } => (response, decided_by),
            ApprovalOutcome::Interrupted => panic!("interrupted"),
            ApprovalOutcome::Deferred { inbox_id } => panic!("deferred as {inbox_id}"),
        }
    }

    #[tokio::test]
    async fn modes() {
        let cancel = CancellationToken::new();
        let (r, by) = unwrap_decided(
            ApprovalController::new(ApprovalMode::ApproveAll)
                .decide(request("w", json!({})), &cancel)
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::Mode);
        let (r, by) = unwrap_decided(
            ApprovalController::new(ApprovalMode::AutoDeny)
                .decide(request("write_file", json!({})), &cancel)
                .await,
        );
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
        assert!(r.note.unwrap().contains("write_file"));
    }

    #[tokio::test]
    async fn scoped_answers_are_kept_per_scope_not_per_request() {
        let cancel = CancellationToken::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let mut remember = ApprovalResponse::approve("x");
        remember.remember = RememberScope::Session;
        remember.modified_args = Some(json!({"edited": true}));
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(remember, calls.clone()));
        let write = json!({"zone": "work", "operation": "write"});
        let create = json!({"zone": "work", "operation": "create"});
        let delete = json!({"zone": "work", "operation": "delete"});
        let changes = request("run_code", json!({"changes": 2}));
        let both = [write.clone(), create.clone()];
        let (r, by) = unwrap_decided(
            controller
                .decide_scoped(changes.clone(), &both, &cancel)
                .await,
        );
        assert!(r.approved && r.modified_args.is_none(), "nothing to edit");
        assert_eq!(by, DecidedBy::User);
        // Each scope was kept: a later request for one of them (or both, in any order) is
        // approved without asking; one with a scope never approved asks again.
        for scopes in [vec![create.clone()], vec![create.clone(), write.clone()]] {
            let (r, by) = unwrap_decided(
                controller
                    .decide_scoped(changes.clone(), &scopes, &cancel)
                    .await,
            );
            assert!(r.approved);
            assert_eq!(by, DecidedBy::SessionMemory);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let (_, by) = unwrap_decided(
            controller
                .decide_scoped(changes.clone(), &[write.clone(), delete], &cancel)
                .await,
        );
        assert_eq!(by, DecidedBy::User);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // The request's own arguments were never remembered as a call.
        assert!(
            !controller
                .memory()
                .is_approved("run_code", &json!({"changes": 2}))
        );
    }

    #[tokio::test]
    async fn scoped_requests_follow_rules_and_modes() {
        let cancel = CancellationToken::new();
        let write = json!({"zone": "work", "operation": "write"});
        let delete = json!({"zone": "work", "operation": "delete"});
        let rules = ProjectRules::new(vec![ApprovalRule::for_call("shell", &write)]);
        let denying = ApprovalController::new(ApprovalMode::AutoDeny).with_rules(rules);
        let req = request("shell", json!({}));
        let (r, by) = unwrap_decided(
            denying
                .decide_scoped(req.clone(), std::slice::from_ref(&write), &cancel)
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::Rule);
        // A rule of another tool does not hold; one scope without a rule leaves it to the mode.
        let other = request("run_code", json!({}));
        for (request, scopes) in [(other, vec![write.clone()]), (req, vec![write, delete])] {
            let (r, by) = unwrap_decided(denying.decide_scoped(request, &scopes, &cancel).await);
            assert!(!r.approved);
            assert_eq!(by, DecidedBy::Mode);
        }
        let (r, _) = unwrap_decided(
            ApprovalController::new(ApprovalMode::ApproveAll)
                .decide_scoped(
                    request("shell", json!({})),
                    &[json!({"zone": "a"})],
                    &cancel,
                )
                .await,
        );
        assert!(r.approved);
    }

    #[tokio::test]
    async fn interactive_without_callback_denies_with_the_headless_message() {
        let cancel = CancellationToken::new();
        let (r, by) = unwrap_decided(
            ApprovalController::new(ApprovalMode::Interactive)
                .decide(request("shell", json!({})), &cancel)
                .await,
        );
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
        assert_eq!(
            r.note.as_deref(),
            Some(
                "approval needed for shell but no terminal is attached (use --approval approve_all or auto_deny, or defer to let it wait in the inbox)"
            )
        );
    }

    #[tokio::test]
    async fn session_approvals_are_remembered_and_denials_never() {
        let cancel = CancellationToken::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let mut remember = ApprovalResponse::approve("x");
        remember.remember = RememberScope::Session;
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(remember, calls.clone()));
        let (r, by) = unwrap_decided(
            controller
                .decide(request("w", json!({"a": 1, "b": 2})), &cancel)
                .await,
        );
        assert!(r.approved && by == DecidedBy::User && r.request_id == "a1");
        let (r, by) = unwrap_decided(
            controller
                .decide(request("w", json!({"b": 2, "a": 1})), &cancel)
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::SessionMemory);
        assert_eq!(calls.load(Ordering::SeqCst), 1);

        // A denial with remember: session is not remembered.
        let mut deny = ApprovalResponse::deny("x", Some("no".into()));
        deny.remember = RememberScope::Session;
        let calls = Arc::new(AtomicUsize::new(0));
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(deny, calls.clone()));
        for _ in 0..2 {
            let (r, by) = unwrap_decided(controller.decide(request("w", json!({})), &cancel).await);
            assert!(!r.approved && by == DecidedBy::User);
            assert_eq!(r.note.as_deref(), Some("no"));
        }
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert!(controller.memory().is_empty());

        // An approval once is not remembered either.
        let calls = Arc::new(AtomicUsize::new(0));
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(ApprovalResponse::approve("x"), calls.clone()));
        controller.decide(request("w", json!({})), &cancel).await;
        controller.decide(request("w", json!({})), &cancel).await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    fn notes_rule() -> ProjectRules {
        ProjectRules::new(vec![ApprovalRule {
            tool: "write_file".into(),
            matches: [(
                "path".to_owned(),
                super::super::ArgMatch::Glob("/notes/**".into()),
            )]
            .into(),
        }])
    }

    #[tokio::test]
    async fn order_is_session_memory_then_rule_then_mode() {
        let cancel = CancellationToken::new();
        let controller = ApprovalController::new(ApprovalMode::AutoDeny).with_rules(notes_rule());
        // A rule decides before the mode.
        let (r, by) = unwrap_decided(
            controller
                .decide(
                    request("write_file", json!({"path": "/notes/a.md"})),
                    &cancel,
                )
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::Rule);
        // Not matching: the mode.
        let (r, by) = unwrap_decided(
            controller
                .decide(request("write_file", json!({"path": "/out/a.md"})), &cancel)
                .await,
        );
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
        // Session memory decides before a rule.
        controller
            .memory()
            .remember("write_file", &json!({"path": "/notes/a.md"}));
        let (_, by) = unwrap_decided(
            controller
                .decide(
                    request("write_file", json!({"path": "/notes/a.md"})),
                    &cancel,
                )
                .await,
        );
        assert_eq!(by, DecidedBy::SessionMemory);
        // A rule decides before the callback too.
        let calls = Arc::new(AtomicUsize::new(0));
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(ApprovalResponse::approve("x"), calls.clone()))
            .with_rules(notes_rule());
        let (_, by) = unwrap_decided(
            controller
                .decide(request("write_file", json!({"path": "/notes/b"})), &cancel)
                .await,
        );
        assert_eq!(by, DecidedBy::Rule);
        assert_eq!(calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn project_answers_add_a_rule_and_denials_never() {
        let cancel = CancellationToken::new();
        let calls = Arc::new(AtomicUsize::new(0));
        let mut always = ApprovalResponse::approve("x");
        always.remember = RememberScope::Project;
        let rules = ProjectRules::new(Vec::new());
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(always, calls.clone()))
            .with_rules(rules.clone());
        let (_, by) = unwrap_decided(
            controller
                .decide(
                    request("write_file", json!({"path": "/n/a", "content": "1"})),
                    &cancel,
                )
                .await,
        );
        assert_eq!(by, DecidedBy::User);
        assert_eq!(rules.rules()[0].match_json(), json!({"path": "/n/a"}));
        let (_, by) = unwrap_decided(
            controller
                .decide(
                    request("write_file", json!({"path": "/n/a", "content": "2"})),
                    &cancel,
                )
                .await,
        );
        assert_eq!(by, DecidedBy::Rule);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(controller.memory().is_empty());

        let mut deny = ApprovalResponse::deny("x", None);
        deny.remember = RememberScope::Project;
        let rules = ProjectRules::new(Vec::new());
        let controller = ApprovalController::new(ApprovalMode::Interactive)
            .with_callback(answering(deny, Arc::new(AtomicUsize::new(0))))
            .with_rules(rules.clone());
        let (r, _) = unwrap_decided(controller.decide(request("w", json!({})), &cancel).await);
        assert!(!r.approved);
        assert_eq!(r.remember, RememberScope::None);
        assert!(rules.is_empty());
    }

    #[tokio::test]
    async fn a_call_for_the_user_is_never_decided_by_memory_rules_or_approve_all() {
        let cancel = CancellationToken::new();
        let args = json!({"path": "/notes/a.md"});
        // approve_all without anyone to ask: denied, not approved.
        let controller = ApprovalController::new(ApprovalMode::ApproveAll).with_rules(notes_rule());
        controller.memory().remember("write_file", &args);
        let (r, by) = unwrap_decided(
            controller
                .decide_by_user(request("write_file", args.clone()), &cancel)
                .await,
        );
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
        assert!(r.note.unwrap().contains("no terminal"));
        // auto_deny denies.
        let (r, _) = unwrap_decided(
            ApprovalController::new(ApprovalMode::AutoDeny)
                .decide_by_user(request("write_file", args.clone()), &cancel)
                .await,
        );
        assert!(!r.approved);
        // With someone to ask, approve_all asks, and "for the session" or "for the project"
        // is not kept.
        for scope in [RememberScope::Session, RememberScope::Project] {
            let calls = Arc::new(AtomicUsize::new(0));
            let mut answer = ApprovalResponse::approve("x");
            answer.remember = scope;
            let rules = ProjectRules::new(Vec::new());
            let controller = ApprovalController::new(ApprovalMode::ApproveAll)
                .with_callback(answering(answer, calls.clone()))
                .with_rules(rules.clone());
            for _ in 0..2 {
                let (r, by) = unwrap_decided(
                    controller
                        .decide_by_user(request("write_file", args.clone()), &cancel)
                        .await,
                );
                assert!(r.approved);
                assert_eq!(by, DecidedBy::User);
                assert_eq!(r.remember, RememberScope::None);
            }
            assert_eq!(calls.load(Ordering::SeqCst), 2);
            assert!(controller.memory().is_empty());
            assert!(rules.is_empty());
        }
    }

    #[tokio::test]
    async fn cancellation_while_asking_is_an_interrupt() {
        let cancel = CancellationToken::new();
        let callback: ApprovalCallback =
            Arc::new(|_req, _cancel| Box::pin(futures::future::pending()));
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        let canceller = cancel.clone();
        tokio::spawn(async move { canceller.cancel() });
        assert_eq!(
            controller.decide(request("w", json!({})), &cancel).await,
            ApprovalOutcome::Interrupted
        );
    }

    #[tokio::test]
    async fn unavailable_ui_denies_with_its_message() {
        let callback: ApprovalCallback = Arc::new(|_req, _cancel| {
            Box::pin(async { Err(CallbackError::Unavailable("the browser went away".into())) })
        });
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        let (r, by) = unwrap_decided(
            controller
                .decide(request("w", json!({})), &CancellationToken::new())
                .await,
        );
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
        assert_eq!(r.note.as_deref(), Some("the browser went away"));
    }

    /// An inbox in memory: parked requests, and answers by call id.
    #[derive(Default)]
    struct TestInbox {
        parked: std::sync::Mutex<Vec<ApprovalRequest>>,
        answers: std::sync::Mutex<std::collections::HashMap<String, ApprovalResponse>>,
    }

    impl ApprovalInbox for TestInbox {
        fn park(&self, request: &ApprovalRequest) -> Result<u64, String> {
            let mut parked = self.parked.lock().unwrap();
            parked.push(request.clone());
            Ok(parked.len() as u64 + 6)
        }
        fn answer(&self, tool_call_id: &str) -> Option<ApprovalResponse> {
            self.answers.lock().unwrap().get(tool_call_id).cloned()
        }
    }

    fn deferring(inbox: &Arc<TestInbox>, asked: Arc<AtomicUsize>) -> ApprovalController {
        ApprovalController::new(ApprovalMode::Defer)
            .with_inbox(inbox.clone())
            .with_callback(answering(ApprovalResponse::approve("x"), asked))
    }

    #[tokio::test]
    async fn defer_parks_a_call_instead_of_asking() {
        let inbox = Arc::new(TestInbox::default());
        let asked = Arc::new(AtomicUsize::new(0));
        let outcome = deferring(&inbox, asked.clone())
            .decide(
                request("write_file", json!({"path": "a"})),
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(outcome, ApprovalOutcome::Deferred { inbox_id: 7 });
        assert_eq!(inbox.parked.lock().unwrap()[0].tool_call_id, "t1");
        assert_eq!(asked.load(Ordering::SeqCst), 0, "nobody is asked");
        // Only a person may approve: still parked, not approved by the mode.
        let outcome = deferring(&inbox, asked.clone())
            .decide_by_user(request("write_file", json!({})), &CancellationToken::new())
            .await;
        assert!(matches!(outcome, ApprovalOutcome::Deferred { .. }));
    }

    #[tokio::test]
    async fn an_inbox_answer_is_the_user_s_and_its_memory_is_kept() {
        let inbox = Arc::new(TestInbox::default());
        let mut answer = ApprovalResponse::approve("from the inbox");
        answer.remember = RememberScope::Session;
        inbox.answers.lock().unwrap().insert("t1".into(), answer);
        let asked = Arc::new(AtomicUsize::new(0));
        let controller = deferring(&inbox, asked.clone());
        let args = json!({"path": "a"});
        let (r, by) = unwrap_decided(
            controller
                .decide(
                    request("write_file", args.clone()),
                    &CancellationToken::new(),
                )
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::User);
        assert_eq!(r.request_id, "a1", "the answer is about this request");
        assert!(controller.memory().is_approved("write_file", &args));
        assert!(inbox.parked.lock().unwrap().is_empty());
        // In the interactive mode too (a parked session resumed at a terminal), without asking.
        let interactive = ApprovalController::new(ApprovalMode::Interactive)
            .with_inbox(inbox.clone())
            .with_callback(answering(ApprovalResponse::deny("x", None), asked.clone()));
        let (r, by) = unwrap_decided(
            interactive
                .decide(
                    request("write_file", json!({"path": "b"})),
                    &CancellationToken::new(),
                )
                .await,
        );
        assert!(r.approved);
        assert_eq!(by, DecidedBy::User);
        assert_eq!(asked.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn defer_denies_what_cannot_wait() {
        let inbox = Arc::new(TestInbox::default());
        let asked = Arc::new(AtomicUsize::new(0));
        let controller = deferring(&inbox, asked.clone());
        let cancel = CancellationToken::new();
        // A delegated worker's call: only the root's turn can continue later.
        let mut delegated = request("write_file", json!({}));
        delegated.worker = Some(golem_protocol::WorkerOrigin {
            name: "helper".into(),
            depth: 1,
            id: "w1".into(),
        });
        let (r, by) = unwrap_decided(controller.decide(delegated, &cancel).await);
        assert!(!r.approved);
        assert_eq!(by, DecidedBy::Mode);
        assert!(r.note.unwrap().contains("delegated worker"));
        // What a jailed program changed is held only while its call runs.
        let mut effects = request("run_code", json!({}));
        effects.editable = false;
        let scopes = [json!({"zone": "work"})];
        let (r, _) = unwrap_decided(controller.decide_scoped(effects, &scopes, &cancel).await);
        assert!(!r.approved);
        assert!(r.note.unwrap().contains("discarded"));
        assert!(inbox.parked.lock().unwrap().is_empty());
        // A call the user invoked is asked: the user is there.
        let mut manual = request("write_file", json!({}));
        manual.invoked_by = InvokedBy::User;
        let (r, _) = unwrap_decided(controller.decide(manual, &cancel).await);
        assert!(r.approved);
        assert_eq!(asked.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn defer_without_an_inbox_denies_saying_why() {
        let (r, _) = unwrap_decided(
            ApprovalController::new(ApprovalMode::Defer)
                .decide(request("write_file", json!({})), &CancellationToken::new())
                .await,
        );
        assert!(!r.approved);
        assert!(r.note.unwrap().contains("no approval inbox"));
    }
}
