//! The approval inbox on the wire: a call parked by the `defer` approval mode, waiting for a
//! person's answer (`golem-forge inbox`, its `--json` listing, and the inbox page).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::approval::{ApprovalRequest, RememberScope};

/// One parked call of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InboxEntry {
    /// The entry's number in the project's inbox: given once, never reused.
    pub id: u64,
    /// The parked session (its transcript's name).
    pub session: String,
    /// The session's root worker.
    pub worker: String,
    /// When the call was parked (RFC 3339, UTC).
    pub created: String,
    /// The batch item the session runs, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchItemRef>,
    /// What would have been asked: tool, arguments, description, risk, preview.
    pub request: ApprovalRequest,
    /// The answer, once given; the entry leaves the inbox when its session has taken it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<InboxAnswer>,
}

/// A batch item, as an inbox entry names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BatchItemRef {
    /// The batch's id.
    pub batch: String,
    /// The item's id within it.
    pub item: String,
}

/// A person's answer to a parked call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InboxAnswer {
    /// Whether the call may run.
    pub approved: bool,
    /// For an approval: whether to keep it for the session or the project, as an
    /// `approvalResponse` would.
    #[serde(default)]
    pub remember: RememberScope,
    /// For a denial: what the model is told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When it was answered (RFC 3339, UTC).
    pub answered: String,
}
