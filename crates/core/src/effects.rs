//! Consent for what a call *did*, asked after it ran: a jailed process's changes to the zones
//! are known only once it has ended (they wait in a copy-on-write layer until then), so the
//! tool asks through the [`EffectGate`] its [`crate::tool::ToolContext`] carries.
//!
//! The request goes the way of any approval (an `approvalRequired` event with a preview,
//! answered by session memory, a project rule, the mode or the user, then `approvalResolved`),
//! with two differences: it is about *scopes* (one JSON object per zone and operation, such as
//! `{"zone": "work", "operation": "write"}`) rather than the call's arguments, and an answer
//! "for the session" or "for the project" is kept per scope, so approving a script's writes to
//! `/work` once approves the next script's writes there, whatever the script; and it offers no
//! edit (there are no arguments to change, only effects to take or leave).

use golem_protocol::{
    ApprovalRequest, ApprovalResolved, ApprovalResponse, DecidedBy, DisplayEvent, InvokedBy, Risk,
    ToolKind, ToolResultValue, WorkerOrigin,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalController, ApprovalOutcome};
use crate::ui::RuntimeUI;

/// What a call did that needs consent.
#[derive(Debug, Clone)]
pub struct EffectRequest {
    /// What the memory and the rules are consulted for, one object per zone and operation.
    pub scopes: Vec<Value>,
    /// The request's arguments as the user and the transcript see them (the scopes and a
    /// count of the changes, for example).
    pub args: Value,
    /// What the call did, in words ("run_code changed 3 files in /work").
    pub description: String,
    /// The effects themselves (a multi-file `diff`).
    pub preview: Option<ToolResultValue>,
    /// How risky taking them is.
    pub risk: Risk,
    /// Set when only a person may approve (an unprotected path): the warning shown on its own
    /// line; memory, rules and `approve_all` then do not decide, and nothing is kept.
    pub for_user: Option<String>,
}

/// How an [`EffectRequest`] was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EffectDecision {
    /// Take the effects.
    Approved {
        /// Who decided.
        decided_by: DecidedBy,
    },
    /// Leave them: the message says who denied and why, for the model.
    Denied {
        /// Who decided.
        decided_by: DecidedBy,
        /// For the model ("The user denied run_code's changes: …").
        message: String,
    },
    /// The user interrupted while the request was pending.
    Interrupted,
}

/// Asks consent for one call's effects (made by the orchestrator for each call).
#[derive(Debug, Clone)]
pub struct EffectGate {
    controller: ApprovalController,
    ui: RuntimeUI,
    tool_call_id: String,
    tool_name: String,
    tool_kind: ToolKind,
    invoked_by: InvokedBy,
    worker: Option<WorkerOrigin>,
}

impl EffectGate {
    /// The gate of the call `tool_call_id` of `tool_name`, deciding with `controller` and
    /// telling the front ends through `ui`.
    pub fn new(
        controller: ApprovalController,
        ui: RuntimeUI,
        tool_call_id: String,
        tool_name: String,
        invoked_by: InvokedBy,
        worker: Option<WorkerOrigin>,
    ) -> EffectGate {
        EffectGate {
            controller,
            ui,
            tool_call_id,
            tool_name,
            tool_kind: ToolKind::Other,
            invoked_by,
            worker,
        }
    }

    /// Says what kind of thing the tool does (sent with the request).
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.tool_kind = kind;
        self
    }

    /// Decides `request`; `cancel` is the call's interrupt.
    pub async fn decide(
        &self,
        request: EffectRequest,
        cancel: &CancellationToken,
    ) -> EffectDecision {
        let request_id = self.ui.bus().next_request_id("approval");
        let description = match &request.for_user {
            Some(warning) => format!("{}\n{warning}", request.description),
            None => request.description,
        };
        let approval = ApprovalRequest {
            request_id: request_id.clone(),
            tool_call_id: self.tool_call_id.clone(),
            tool_name: self.tool_name.clone(),
            tool_kind: self.tool_kind,
            args: request.args,
            description,
            risk: request.risk,
            preview: request.preview,
            invoked_by: self.invoked_by,
            worker: self.worker.clone(),
            fields: Vec::new(),
            editable: false,
        };
        let outcome = match request.for_user {
            Some(_) => self.controller.decide_by_user(approval, cancel).await,
            None => {
                self.controller
                    .decide_scoped(approval, &request.scopes, cancel)
                    .await
            }
        };
        let (response, decided_by) = match outcome {
            ApprovalOutcome::Interrupted => return EffectDecision::Interrupted,
            // The controller never parks consent for effects (`editable: false`); were it to,
            // nobody decided, and the changes are not taken.
            ApprovalOutcome::Deferred { .. } => (
                ApprovalResponse::deny(
                    request_id.clone(),
                    Some("the changes cannot wait for an approval".to_owned()),
                ),
                DecidedBy::Mode,
            ),
            ApprovalOutcome::Decided {
                response,
                decided_by,
            } => (response, decided_by),
        };
        self.ui
            .emit(DisplayEvent::ApprovalResolved(ApprovalResolved {
                request_id: Some(request_id),
                tool_call_id: self.tool_call_id.clone(),
                tool_name: self.tool_name.clone(),
                approved: response.approved,
                decided_by,
                note: response.note.clone(),
                modified_args: None,
                worker: self.worker.clone(),
            }));
        if response.approved {
            return EffectDecision::Approved { decided_by };
        }
        let tool = &self.tool_name;
        let message = match (decided_by, response.note) {
            (DecidedBy::User, Some(note)) => format!("The user denied {tool}'s changes: {note}"),
            (DecidedBy::User, None) => format!("The user denied {tool}'s changes"),
            (_, Some(note)) => note,
            (_, None) => format!("{tool}'s changes were denied"),
        };
        EffectDecision::Denied {
            decided_by,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use golem_protocol::{ApprovalResponse, RememberScope};
    use serde_json::json;

    use super::*;
    use crate::approval::ApprovalMode;
    use crate::bus::UiEventBus;

    fn gate(controller: ApprovalController) -> (EffectGate, UiEventBus) {
        let bus = UiEventBus::new();
        let ui = RuntimeUI::new(bus.clone());
        let gate = EffectGate::new(
            controller,
            ui,
            "call_1".into(),
            "run_code".into(),
            InvokedBy::Model,
            None,
        );
        (gate, bus)
    }

    fn request(for_user: Option<&str>) -> EffectRequest {
        EffectRequest {
            scopes: vec![json!({"zone": "work", "operation": "write"})],
            args: json!({"changes": 1}),
            description: "run_code changed 1 file in /work".into(),
            preview: None,
            risk: Risk::Medium,
            for_user: for_user.map(str::to_owned),
        }
    }

    #[tokio::test]
    async fn a_denial_tells_the_model_and_the_front_ends() {
        let (gate, bus) = gate(ApprovalController::new(ApprovalMode::AutoDeny));
        let mut events = bus.subscribe();
        let cancel = CancellationToken::new();
        let decision = gate.decide(request(None), &cancel).await;
        let EffectDecision::Denied {
            decided_by,
            message,
        } = decision
        else {
            panic!("{decision:?}");
        };
        assert_eq!(decided_by, DecidedBy::Mode);
        assert!(message.contains("auto_deny"), "{message}");
        let event = events.try_recv().unwrap();
        let DisplayEvent::ApprovalResolved(resolved) = &event else {
            panic!("{event:?}");
        };
        assert!(!resolved.approved);
        assert_eq!(resolved.tool_call_id, "call_1");
        assert!(resolved.request_id.is_some());
    }

    #[tokio::test]
    async fn only_a_person_approves_what_needs_one_and_nothing_is_kept() {
        let cancel = CancellationToken::new();
        // approve_all does not decide it; without anyone to ask it is denied.
        let (gate_all, _bus) = gate(ApprovalController::new(ApprovalMode::ApproveAll));
        let decision = gate_all
            .decide(request(Some("unprotected: .git")), &cancel)
            .await;
        assert!(
            matches!(decision, EffectDecision::Denied { .. }),
            "{decision:?}"
        );

        let mut session = ApprovalResponse::approve("x");
        session.remember = RememberScope::Session;
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = asked.clone();
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(
            Arc::new(move |req: ApprovalRequest, _| {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                assert!(req.description.ends_with("\nunprotected: .git"));
                assert!(!req.editable && req.fields.is_empty(), "nothing to edit");
                let response = session.clone();
                Box::pin(async move { Ok(response) })
            }),
        );
        let (gate, _bus) = gate(controller);
        for _ in 0..2 {
            let decision = gate
                .decide(request(Some("unprotected: .git")), &cancel)
                .await;
            assert_eq!(
                decision,
                EffectDecision::Approved {
                    decided_by: DecidedBy::User
                }
            );
        }
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    }
}
