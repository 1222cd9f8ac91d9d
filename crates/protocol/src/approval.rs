//! Approval on the wire: the request a UI shows, the response it sends back, and the audit
//! record of every gate decision.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::form::FormField;
use crate::result::ToolResultValue;
use crate::tool_kind::ToolKind;
use crate::workers::WorkerOrigin;

/// Who started a tool call. The two paths never mix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum InvokedBy {
    /// The model asked for it.
    Model,
    /// The user invoked it (a slash command or a form).
    User,
}

/// How a session decides the calls that require consent (the `--approval` words, also on the
/// wire in `setApprovalMode` and `sessionStatus`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

impl std::fmt::Display for ApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How risky a call is, as shown to the user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Risk {
    /// Reads or harmless changes.
    Low,
    /// Changes that can be undone (the default).
    #[default]
    Medium,
    /// Destructive or outward-facing changes.
    High,
}

/// How long an approval is remembered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RememberScope {
    /// Only this call.
    #[default]
    None,
    /// Identical calls (same tool, same arguments) for the rest of the session.
    Session,
    /// Matching calls in this project from now on: a rule in `.golem-forge/approvals.yaml`
    /// (the call's exact `path` when it has one, else its exact arguments).
    Project,
}

/// A call waiting for the user's consent (the `approvalRequired` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// Correlates the `approvalResponse`.
    pub request_id: String,
    /// The call this request is about.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// What kind of thing the tool does (absent: `other`).
    #[serde(default, skip_serializing_if = "ToolKind::is_other")]
    pub tool_kind: ToolKind,
    /// The proposed arguments.
    pub args: Value,
    /// What the call will do, in words.
    pub description: String,
    /// How risky it is.
    pub risk: Risk,
    /// What will change, when the tool can tell in advance (a `diff` for file writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<ToolResultValue>,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
    /// The worker making the call, for delegated workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerOrigin>,
    /// The form fields of the tool's arguments, for a front end that lets the user edit them
    /// before approving (empty when the tool's schema has no properties).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FormField>,
    /// Whether the user may edit the arguments before approving (absent: yes). `false` for
    /// consent to what a call did (a jailed program's changes to the zones): there are only
    /// effects to take or leave.
    #[serde(default = "editable_default", skip_serializing_if = "is_editable")]
    pub editable: bool,
}

fn editable_default() -> bool {
    true
}

fn is_editable(editable: &bool) -> bool {
    *editable
}

/// The user's answer to an [`ApprovalRequest`] (the `approvalResponse` action).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResponse {
    /// The request answered.
    pub request_id: String,
    /// Whether the call may run.
    pub approved: bool,
    /// Whether to remember an approval for identical calls.
    #[serde(default)]
    pub remember: RememberScope,
    /// A note for the model (why it was denied, what to do instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Arguments to run with instead of the proposed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_args: Option<Value>,
}

impl ApprovalResponse {
    /// Approve once.
    pub fn approve(request_id: impl Into<String>) -> Self {
        Self {
            request_id: request_id.into(),
            approved: true,
            remember: RememberScope::None,
            note: None,
            modified_args: None,
        }
    }

    /// Deny, with an optional note for the model.
    pub fn deny(request_id: impl Into<String>, note: Option<String>) -> Self {
        Self {
            approved: false,
            note,
            ..Self::approve(request_id)
        }
    }
}

/// Who or what made a gate decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// The user answered a prompt, or answered the call in the approval inbox.
    User,
    /// An identical call was approved earlier with `remember: session`.
    SessionMemory,
    /// The approval mode (`approve_all` / `auto_deny`, or no terminal to ask).
    Mode,
    /// The tool's policy: pre-approved or blocked.
    Policy,
    /// A project rule (`.golem-forge/approvals.yaml`) pre-approved the call.
    Rule,
}

/// The audit record that follows every gate decision (the `approvalResolved` event).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalResolved {
    /// The approval request, when one was made (absent for policy decisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The call decided on.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// Whether the call may run.
    pub approved: bool,
    /// Who decided.
    pub decided_by: DecidedBy,
    /// The note given with the decision (a denial reason, a block reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The arguments the user approved instead of the proposed ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified_args: Option<Value>,
    /// The worker making the call, for delegated workers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerOrigin>,
}
