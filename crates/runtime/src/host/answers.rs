//! The host's answers to questions a front end may ask at any time, even while a turn runs:
//! the session's status, the manual tools, the remembered approvals (and forgetting them).

use std::sync::atomic::Ordering;

use golem_core::approval::ApprovalController;
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{
    ActionResult, DisplayEvent, RememberedApproval, SessionAction, SessionStatus, ZoneSummary,
};

use super::SharedState;
use crate::worker::WorkerDefinition;

/// What the answers are read from.
pub(crate) struct Context<'a> {
    pub ui: &'a RuntimeUI,
    pub shared: &'a SharedState,
    pub registry: &'a ToolRegistry,
    pub controller: &'a ApprovalController,
    pub definition: &'a WorkerDefinition,
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
        self.ui.emit(DisplayEvent::SessionStatus(SessionStatus {
            request_id,
            session_id: self.shared.session_id(),
            worker: self.definition.name.clone(),
            model: self.shared.model(),
            zones,
            usage: self.shared.usage().session,
            cost: self.shared.usage().session_cost,
            messages: self.shared.messages.load(Ordering::Relaxed),
            approvals_remembered: self.controller.memory().len() as u64,
            busy: self.shared.busy.load(Ordering::SeqCst),
        }));
    }

    /// `manualToolsAvailable`.
    pub fn manual_tools(&self, request_id: Option<String>) {
        self.ui.emit(DisplayEvent::ManualToolsAvailable {
            request_id,
            tools: self.registry.manual_tool_infos(),
        });
    }

    /// `approvalsRemembered`, numbered from 1 in the memory's order.
    pub fn approvals(&self, request_id: Option<String>) {
        let approvals = self
            .controller
            .memory()
            .entries()
            .into_iter()
            .zip(1u32..)
            .map(|((tool_name, args), index)| RememberedApproval {
                index,
                tool_name,
                args,
            })
            .collect();
        self.ui.emit(DisplayEvent::ApprovalsRemembered {
            request_id,
            approvals,
        });
    }

    /// Forgets approval number `index` (as `approvalsRemembered` numbers them), or all.
    pub fn forget(&self, request_id: Option<String>, index: Option<u32>) {
        let memory = self.controller.memory();
        let result = match index {
            None => {
                memory.clear();
                Ok("forgot every remembered approval".to_owned())
            }
            Some(n) => {
                let entry = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| memory.entries().into_iter().nth(i));
                match entry {
                    Some((tool, args)) => {
                        memory.forget(&tool, &args);
                        Ok(format!("forgot {tool} {args}"))
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
