//! The host's answers to questions a front end may ask at any time, even while a turn runs:
//! the session's status, the manual tools, the remembered approvals and project rules (and
//! forgetting them), and switching the approval mode.

use std::sync::atomic::Ordering;

use golem_core::approval::{ApprovalController, ApprovalMode, ApprovalRule};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{
    ActionResult, ApprovalScope, BudgetStatus, DisplayEvent, RememberedApproval, SessionAction,
    SessionStatus, ZoneSummary,
};

use super::SharedState;
use crate::budget::BudgetLimits;
use crate::tree::WorkerTree;
use crate::worker::WorkerDefinition;

/// One remembered approval, as listed.
enum Remembered {
    /// `(tool, args)` in the session's memory.
    Session(String, serde_json::Value),
    /// A project rule.
    Project(ApprovalRule),
}

/// What the answers are read from.
pub(crate) struct Context<'a> {
    pub ui: &'a RuntimeUI,
    pub shared: &'a SharedState,
    pub registry: &'a ToolRegistry,
    pub controller: &'a ApprovalController,
    pub definition: &'a WorkerDefinition,
    pub tree: &'a WorkerTree,
    /// The root worker's limits per turn.
    pub budget: BudgetLimits,
}

impl Context<'_> {
    /// `sessionStatus`.
    pub fn status(&self, request_id: Option<String>) {
        let zones = self
            .definition
            .zones
            .iter()
            .map(|zone| ZoneSummary {
                name: zone.name.clone(),
                mode: zone.mode.as_str().to_owned(),
            })
            .collect();
        let counts = self.shared.usage();
        let budget = (!self.budget.is_unlimited()).then(|| BudgetStatus {
            limits: self.budget.amounts(),
            remaining: self
                .tree
                .root_remaining()
                .unwrap_or_else(|| self.budget.amounts()),
        });
        self.ui.emit(DisplayEvent::SessionStatus(SessionStatus {
            request_id,
            session_id: self.shared.session_id(),
            worker: self.definition.name.clone(),
            model: self.shared.model(),
            zones,
            usage: counts.session,
            cost: counts.session_cost,
            messages: self.shared.messages.load(Ordering::Relaxed),
            context: self.shared.context(),
            approvals_remembered: self.controller.memory().len() as u64,
            approval_mode: Some(self.controller.mode()),
            busy: self.shared.busy.load(Ordering::SeqCst),
            budget,
        }));
    }

    /// `manualToolsAvailable`.
    pub fn manual_tools(&self, request_id: Option<String>) {
        self.ui.emit(DisplayEvent::ManualToolsAvailable {
            request_id,
            tools: self.registry.manual_tool_infos(),
        });
    }

    /// The remembered approvals in `approvalsRemembered`'s order: the session's, then the
    /// project's rules.
    fn remembered(&self) -> Vec<Remembered> {
        let session = self
            .controller
            .memory()
            .entries()
            .into_iter()
            .map(|(tool, args)| Remembered::Session(tool, args));
        let project = self
            .controller
            .rules()
            .rules()
            .into_iter()
            .map(Remembered::Project);
        session.chain(project).collect()
    }

    /// `approvalsRemembered`, numbered from 1: the session's approvals, then the project's
    /// rules.
    pub fn approvals(&self, request_id: Option<String>) {
        let approvals = self
            .remembered()
            .into_iter()
            .zip(1u32..)
            .map(|(entry, index)| match entry {
                Remembered::Session(tool_name, args) => RememberedApproval {
                    index,
                    tool_name,
                    args,
                    scope: ApprovalScope::Session,
                },
                Remembered::Project(rule) => RememberedApproval {
                    index,
                    args: rule.match_json(),
                    tool_name: rule.tool,
                    scope: ApprovalScope::Project,
                },
            })
            .collect();
        self.ui.emit(DisplayEvent::ApprovalsRemembered {
            request_id,
            approvals,
        });
    }

    /// Switches the session's approval mode at once: calls decided from now on (this turn's
    /// too, and its delegated workers') follow it; a call already asked stays asked.
    pub fn set_approval_mode(&self, request_id: Option<String>, mode: ApprovalMode) {
        let before = self.controller.mode();
        self.controller.set_mode(mode);
        tracing::debug!(%before, %mode, "approval mode switched");
        self.ui.emit(DisplayEvent::ActionResult(ActionResult {
            request_id,
            action: SessionAction::SetApprovalMode,
            ok: true,
            message: format!("approval mode: {mode}"),
        }));
    }

    /// Forgets approval number `index` (as `approvalsRemembered` numbers them: a session
    /// approval or a project rule, which is removed from the rules file), or every approval
    /// of the session (project rules are only removed one by one).
    pub fn forget(&self, request_id: Option<String>, index: Option<u32>) {
        let memory = self.controller.memory();
        let result = match index {
            None => {
                memory.clear();
                Ok(
                    "forgot every approval remembered for the session (project rules stay)"
                        .to_owned(),
                )
            }
            Some(n) => {
                let entry = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| self.remembered().into_iter().nth(i));
                match entry {
                    Some(Remembered::Session(tool, args)) => {
                        memory.forget(&tool, &args);
                        Ok(format!("forgot {tool} {args}"))
                    }
                    Some(Remembered::Project(rule)) => {
                        match self.controller.rules().remove(&rule) {
                            Ok(_) => Ok(format!("removed the project rule {rule}")),
                            Err(e) => Err(e.to_string()),
                        }
                    }
                    None => Err(format!("no remembered approval number {n}")),
                }
            }
        };
        let (ok, message) = match result {
            Ok(message) => (true, message),
            Err(message) => (false, message),
        };
        self.ui.emit(DisplayEvent::ActionResult(ActionResult {
            request_id,
            action: SessionAction::ForgetApprovals,
            ok,
            message,
        }));
    }
}
