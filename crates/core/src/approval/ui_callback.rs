//! The approval callback that asks through the event bus: it emits `approvalRequired` and waits
//! for the matching `approvalResponse` from whichever front end is attached.

use std::sync::Arc;

use super::{ApprovalCallback, CallbackError};
use crate::bus::RequestError;
use crate::ui::RuntimeUI;

/// A callback that asks the user through `ui`. A cancelled request is an interrupt; a request
/// that cannot be answered (timeout, a closed bus, a wrong answer) is denied with a note saying
/// why.
pub fn ui_approval_callback(ui: RuntimeUI) -> ApprovalCallback {
    Arc::new(move |request, cancel| {
        let ui = ui.clone();
        Box::pin(async move {
            let tool = request.tool_name.clone();
            ui.request_approval(request, &cancel)
                .await
                .map_err(|err| match err {
                    RequestError::Cancelled => CallbackError::Cancelled,
                    RequestError::Timeout(_)
                    | RequestError::Closed
                    | RequestError::DuplicateId(_)
                    | RequestError::UnexpectedResponse { .. } => CallbackError::Unavailable(
                        format!("{tool} was denied: no approval answer ({err})"),
                    ),
                })
        })
    })
}
