//! What a front end learns about a session besides its conversation: how a turn ended, the
//! answers to session actions (`setModel`, `newSession`, `clearHistory`, `forgetApprovals`, …),
//! the session's status and the approvals it remembers. The events that carry these are in
//! `events.rs`; these are their payloads.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::ApprovalMode;
use crate::workers::{BudgetStatus, ContextFill, TokenUsage};

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// The model gave a final answer.
    Completed,
    /// The turn failed (model error, max iterations).
    Failed,
    /// An interrupt ended it.
    Interrupted,
    /// The root worker's budget (tokens, cost or time) ran out; `error` says which and by how
    /// much.
    BudgetExceeded,
    /// A call waits for an approval in the inbox (approval mode `defer`); `continueTurn` goes
    /// on once it is answered.
    WaitingApproval,
}

/// The session actions answered by an `actionResult` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionAction {
    /// `setModel`.
    SetModel,
    /// `setApprovalMode`.
    SetApprovalMode,
    /// `newSession`.
    NewSession,
    /// `clearHistory`.
    ClearHistory,
    /// `undo`.
    Undo,
    /// `compact`.
    Compact,
    /// `forgetApprovals`.
    ForgetApprovals,
    /// An action the session cannot take now (for example, one sent after `endSession`).
    Refused,
}

/// The answer to a session action: whether it was done, and a line for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The action's `requestId`, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Which action this answers.
    pub action: SessionAction,
    /// Whether it was done.
    pub ok: bool,
    /// What happened, in words (`model: openai:gpt-4o`, `cannot switch to x: …`).
    pub message: String,
}

/// A zone of the root worker, as the status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ZoneSummary {
    /// The zone's name (its virtual path is `/<name>`).
    pub name: String,
    /// `ro` or `rw`.
    pub mode: String,
}

/// The session as it stands (the answer to `getStatus`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// The `getStatus` request's id, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The session's id (its transcript name).
    pub session_id: String,
    /// The root worker.
    pub worker: String,
    /// The model, as `provider:model`.
    pub model: String,
    /// The root worker's zones.
    #[serde(default)]
    pub zones: Vec<ZoneSummary>,
    /// Tokens used by the session so far, every worker's.
    pub usage: TokenUsage,
    /// What the session cost so far in US dollars, when the models' prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Messages in the root worker's conversation.
    pub messages: u64,
    /// How full the root worker's context was after its last model call, when it made one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextFill>,
    /// Approvals remembered for the session.
    pub approvals_remembered: u64,
    /// How calls that need consent are decided now (absent from hosts before protocol 1.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_mode: Option<ApprovalMode>,
    /// Whether a turn or a manual tool call is running.
    pub busy: bool,
    /// The root worker's budget per turn and what is left of it, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetStatus>,
}

/// One remembered approval: for the session (identical calls are not asked again) or a
/// project rule (matching calls are not asked again, in any session of the project).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RememberedApproval {
    /// Its number in the list (from 1), what `forgetApprovals` takes.
    pub index: u32,
    /// The tool.
    pub tool_name: String,
    /// The arguments approved; for a project rule, its `match` (exact values, and
    /// `{"glob": …}` for a path glob).
    pub args: Value,
    /// Where it is remembered (absent from older hosts: the session).
    #[serde(default)]
    pub scope: ApprovalScope,
}

/// Where an approval is remembered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalScope {
    /// In this session's memory, until the session ends or it is forgotten.
    #[default]
    Session,
    /// A rule of the project, in `.golem-forge/approvals.yaml`.
    Project,
}
