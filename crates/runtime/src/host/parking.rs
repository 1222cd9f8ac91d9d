//! The session's approval inbox as its controller sees it: calls parked in the project's inbox
//! (`crate::inbox`), and the `notify:` command run at once for each, since nobody waits at a
//! terminal for a parked call.

use std::sync::Arc;

use golem_core::approval::{ApprovalInbox, ParkError};
use golem_protocol::{ApprovalRequest, ApprovalResponse};

use super::notify::ApprovalNotifier;
use crate::inbox::SessionInbox;

/// Parks in `inbox` and nudges through `notifier`.
pub(crate) struct ParkingInbox {
    pub inbox: Arc<SessionInbox>,
    pub notifier: Option<ApprovalNotifier>,
}

impl ApprovalInbox for ParkingInbox {
    fn park(&self, request: &ApprovalRequest) -> Result<u64, ParkError> {
        let id = self.inbox.park(request)?;
        if let Some(notifier) = &self.notifier {
            notifier.parked(request, id);
        }
        Ok(id)
    }

    fn answer(&self, tool_call_id: &str) -> Option<ApprovalResponse> {
        self.inbox.answer(tool_call_id)
    }
}
