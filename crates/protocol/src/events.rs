//! The event protocol (docs/protocol.md): display events flow from the runtime to a UI, action
//! events from a UI to the runtime. Every front end (terminal, browser, `--json`) speaks exactly
//! these JSON objects, tagged by `type`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::{
    ApprovalMode, ApprovalRequest, ApprovalResolved, ApprovalResponse, InvokedBy,
};
use crate::batch::BatchEvent;
use crate::form::{FormField, ManualToolInfo};
use crate::result::ToolResultValue;
use crate::session::{ActionResult, RememberedApproval, SessionStatus, TurnStatus};
use crate::tool_kind::ToolKind;
use crate::workers::{
    BudgetAmounts, CompactionReason, ContextFill, ModelCall, TokenUsage, WorkerOrigin,
    WorkerProgress,
};

/// The protocol version carried by `sessionStarted`: the major part changes on any incompatible
/// change, the minor part when events are added (1.1: session actions, `turnEnded`,
/// `actionResult`, `sessionStatus`, `approvalsRemembered`; 1.2: the live tree of workers —
/// worker ids, `workerProgress` — and budgets: `budgetExceeded` turns and sessions, the
/// remaining budget in `usage` and `sessionStatus`; 1.3: `approvalRequired.fields`, the form of
/// the tool's arguments, for front ends that edit them before approving; 1.4: forms in
/// `inputRequired` — `fields` and `source` — answered by `inputResponse`, which can also
/// decline or cancel; 1.5: consent for what a call did — `approvalRequired.editable` (`false`:
/// nothing to edit), a second request and resolution for the same call, and a `code_result`'s
/// `changes`; 1.6: `undo`, putting the zone files of the last turns back; 1.7: `usage.context`,
/// how full the worker's context is against its model's window; 1.8: `contextCompacted`, the
/// `compact` action and `sessionStatus.context`; 1.9: `turnEnded.output`, the structured answer
/// of a worker with an output schema; 1.10: approvals that wait — the `defer` approval mode's
/// `approvalDeferred`, the `waitingApproval` turn and session endings, the `continueTurn`
/// action — and the batch events of `golem-forge batch --json`; 1.11: `setApprovalMode`, the
/// approval mode switched during a session, and `sessionStatus.approvalMode`; 1.12: `toolKind`
/// on `toolStarted`, `toolResult` and `approvalRequired`, what kind of thing the tool does;
/// 1.13: `toolResult.args`, the arguments of a call that never started; 1.14: the test events
/// of `golem-forge test --json`, `testStarted`, `testFinished` and `testsEnded`; 1.15:
/// `usage.call`, what each model request was and took, a failed one included; `contextElided`,
/// an elision of old tool results, until then an `info` status; `contextCompacted.durationMs`).
pub const PROTOCOL_VERSION: &str = "1.16";

/// The author of a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
    /// The runtime.
    System,
}

/// A complete chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    /// Who wrote it.
    pub role: Role,
    /// The text.
    pub content: String,
}

/// The outcome of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    /// It ran and succeeded.
    Success,
    /// It failed (unknown tool, invalid arguments, or an error while running).
    Error,
    /// The user or the approval mode refused it.
    Denied,
    /// Policy forbids it; no one was asked.
    Blocked,
    /// An interrupt stopped it, or it never started because of one.
    Interrupted,
}

/// Severity of a status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum StatusLevel {
    /// Progress and information.
    Info,
    /// Something the user may want to know about.
    Warning,
    /// Something failed.
    Error,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SessionEndReason {
    /// The run finished with an answer, or the user left the chat.
    Completed,
    /// The run failed (model error, max iterations).
    Failed,
    /// An interrupt ended it.
    Interrupted,
    /// The root worker's budget (tokens, cost or time) ran out.
    BudgetExceeded,
    /// A call waits for an approval in the inbox (approval mode `defer`); the session continues
    /// once it is answered (`golem-forge inbox`).
    WaitingApproval,
}

/// Runtime → UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum DisplayEvent {
    /// First event of a session.
    SessionStarted {
        /// [`PROTOCOL_VERSION`].
        protocol_version: String,
        /// The session's id (its transcript name).
        session_id: String,
        /// The root worker.
        worker: String,
        /// The model, as `provider:model`.
        model: String,
    },
    /// A complete message. The session host echoes each `userInput` as a `user` message when
    /// its turn starts, so that every front end (another tab, a reloaded page) sees what was
    /// asked.
    Message {
        /// The message.
        message: ChatMessage,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
    },
    /// A piece of streamed model text; `done: true` closes the stream.
    Streaming {
        /// The stream's id (one per model response).
        request_id: String,
        /// The new text.
        delta: String,
        /// Whether the stream is complete.
        done: bool,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
    },
    /// A tool call passed the gate and began running.
    ToolStarted {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// What kind of thing the tool does (absent: `other`).
        #[serde(default, skip_serializing_if = "ToolKind::is_other")]
        tool_kind: ToolKind,
        /// The arguments it runs with.
        args: Value,
        /// Who asked for it.
        invoked_by: InvokedBy,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
    },
    /// A tool call ended, whatever the outcome.
    ToolResult {
        /// The call's id.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// What kind of thing the tool does (absent: `other`).
        #[serde(default, skip_serializing_if = "ToolKind::is_other")]
        tool_kind: ToolKind,
        /// The outcome.
        status: ToolStatus,
        /// The arguments the model (or the user) proposed, for a call that never started
        /// (denied, blocked, invalid, unknown): no `toolStarted` event carried them. Absent when
        /// the call started.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<Value>,
        /// The result, or a `tool_error` value.
        value: ToolResultValue,
        /// Time from the call reaching the gate to its end.
        duration_ms: u64,
        /// Who asked for it.
        invoked_by: InvokedBy,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
    },
    /// A call waits for consent; answer with `approvalResponse`.
    ApprovalRequired(ApprovalRequest),
    /// The audit record of a gate decision.
    ApprovalResolved(ApprovalResolved),
    /// A call that needs consent was parked in the project's approval inbox instead of asked
    /// (approval mode `defer`): the turn ends as `waitingApproval` once the calls of the same
    /// model message are settled, and continues (`continueTurn`, or resuming the session) after
    /// the request is answered with `golem-forge inbox`.
    ApprovalDeferred {
        /// What would have been asked, preview included.
        request: ApprovalRequest,
        /// The request's number in the inbox (`golem-forge inbox show N`), when it could be
        /// stored there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inbox_id: Option<u64>,
    },
    /// The runtime waits for the user. Without `fields` it asks for text: answer with
    /// `userInput`. With `fields` it asks for a form (a tool's question, such as an MCP
    /// server's elicitation): answer with `inputResponse` (accept with the values, decline or
    /// cancel); a `userInput` answering it counts as accepting, its content read as a JSON
    /// object of values (or as the value of a form's only field).
    InputRequired {
        /// Correlates the answer.
        request_id: String,
        /// What to ask.
        prompt: String,
        /// Who asks, for the user to judge the question (e.g. "MCP server `everything`");
        /// absent when the runtime itself asks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
        /// The form to fill, one field per value asked for; empty for a plain text question.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        fields: Vec<FormField>,
    },
    /// A form question (`inputRequired` with `fields`) is over: answered, refused, or ended by
    /// an interrupt (`cancel`). Front ends close its dialog; the values are not repeated.
    InputResolved {
        /// The `inputRequired` it settles.
        request_id: String,
        /// How it ended.
        action: InputAction,
    },
    /// A status line.
    Status {
        /// Severity.
        level: StatusLevel,
        /// The text.
        message: String,
    },
    /// The tools the user may invoke by hand (also the answer to `listManualTools`).
    ManualToolsAvailable {
        /// The `listManualTools` request's id, if it answers one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The tools.
        tools: Vec<ManualToolInfo>,
    },
    /// A worker began (the root or a delegated one): a node of the live tree of workers.
    WorkerStarted {
        /// Its id in the tree (empty in transcripts written before protocol 1.2).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        worker_id: String,
        /// The id of the worker that delegated to it; absent for the root.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_id: Option<String>,
        /// The worker's name.
        worker_name: String,
        /// Its depth (0 is the root).
        depth: u32,
        /// Its model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// The delegating call, for sub-workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_tool_call_id: Option<String>,
        /// The budget it runs under (the tightest of its own and its callers' remaining), when
        /// it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<BudgetAmounts>,
        /// For a run of the root worker, its span as W3C `traceparent` text
        /// (`00-<trace id>-<span id>-01`): the trace of the run's spans (the turn's), whether or
        /// not they are exported. Absent for delegated workers and before protocol 1.16.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_context: Option<String>,
        /// The span the root run continues, as `traceparent` text: a queued batch item's, or
        /// the run of a turn that waited on an approval and now goes on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trace_parent: Option<String>,
    },
    /// Where a running worker stands: what it spent, the tool it runs, whether it waits on an
    /// approval.
    WorkerProgress(WorkerProgress),
    /// A worker ended.
    WorkerFinished {
        /// Its id in the tree (empty in transcripts written before protocol 1.2).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        worker_id: String,
        /// The worker's name.
        worker_name: String,
        /// Its depth.
        depth: u32,
        /// Whether it produced an answer.
        success: bool,
        /// How long it ran.
        duration_ms: u64,
        /// Why it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// Tokens it spent, its sub-workers' included.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
        /// What they cost in US dollars, when the models' prices are known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
    /// Tokens used by one model call and by the run so far. A call that failed after its
    /// retries is told too, with `call.error` set and what was counted of it (usually nothing).
    Usage {
        /// This call.
        usage: TokenUsage,
        /// The run so far.
        total: TokenUsage,
        /// The model, as `provider:model`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// What this call cost in US dollars, when the model's price is known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
        /// What is left of the calling worker's budget after this call, when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<BudgetAmounts>,
        /// How full the worker's context is after this call.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context: Option<ContextFill>,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
        /// The request itself: provider, models, finish, endpoint, duration, retries; absent
        /// in transcripts written before protocol 1.15.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<ModelCall>,
    },
    /// The history of a worker before its last turns was replaced by one summary message, to
    /// make room in its context window (the transcript keeps what was replaced).
    ContextCompacted {
        /// What made it compact.
        reason: CompactionReason,
        /// The estimated tokens of the next request before compacting.
        tokens_before: u64,
        /// The estimated tokens of the next request after compacting.
        tokens_after: u64,
        /// The tokens of the summary the model wrote.
        summary_tokens: u64,
        /// Messages of the history that the summary replaced.
        messages_replaced: u64,
        /// How long compacting took, the summary request included; 0 in transcripts written
        /// before protocol 1.15.
        #[serde(default)]
        duration_ms: u64,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
    },
    /// Old tool results of a worker's next request were replaced by short stubs to keep it
    /// under `context.elide_at` (the history keeps them whole; a call made again sees them).
    /// Shown as the line `context 71 % full: elided 3 old tool results (about 12000 tokens)`.
    ContextElided {
        /// The request's estimated tokens before this elision.
        tokens_before: u64,
        /// Its estimated tokens after.
        tokens_after: u64,
        /// The model's context window in tokens.
        window: u64,
        /// How many tool results this elision replaced.
        results: u64,
        /// It came after a threshold compaction was skipped (too little to compact), so the
        /// results of the last turns were elided too, all but the newest.
        harder: bool,
        /// The worker, for delegated workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        worker: Option<WorkerOrigin>,
    },
    /// A turn started by `userInput` ended: every event of the turn came before this one. Turns
    /// run one at a time, in the order their `userInput` arrived.
    TurnEnded {
        /// How it ended.
        status: TurnStatus,
        /// The answer (after an interrupt, the model's summary or `[Interrupted]`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<String>,
        /// Why it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// The answer as a JSON value, when the worker declares an output schema (`output:`)
        /// and the turn completed: valid against that schema; `response` is its JSON text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<serde_json::Value>,
        /// Tokens the turn used, every worker's.
        usage: TokenUsage,
        /// What the turn cost in US dollars, when the model's price is known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
    /// The answer to a session action (`setModel`, `newSession`, `clearHistory`,
    /// `forgetApprovals`), or the refusal of an action the session cannot take.
    ActionResult(ActionResult),
    /// The session as it stands (the answer to `getStatus`).
    SessionStatus(SessionStatus),
    /// The approvals remembered for the session (the answer to `listApprovals`).
    ApprovalsRemembered {
        /// The `listApprovals` request's id, if it had one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The approvals, numbered from 1.
        approvals: Vec<RememberedApproval>,
    },
    /// Last event of a session.
    SessionEnded {
        /// Why it ended.
        reason: SessionEndReason,
        /// The final answer or the error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Tokens used by the whole session.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<TokenUsage>,
        /// What the session cost in US dollars, when the model's price is known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
}

/// UI → runtime.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ActionEvent {
    /// Text from the user: a chat turn, or the answer to `inputRequired`.
    UserInput {
        /// The `inputRequired` this answers, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The text.
        content: String,
    },
    /// The answer to `approvalRequired`.
    ApprovalResponse(ApprovalResponse),
    /// The answer to an `inputRequired` form: the values when accepted, or a refusal.
    InputResponse {
        /// The `inputRequired` this answers.
        request_id: String,
        /// What the user did; `accept` when absent.
        #[serde(default)]
        action: InputAction,
        /// The form's values by field name (for `accept`); fields left out take their
        /// defaults.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        values: Option<serde_json::Map<String, Value>>,
    },
    /// Stop the current turn.
    Interrupt {
        /// Why, for the transcript.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Run a manual tool.
    ManualToolInvoke {
        /// Correlates the resulting `toolResult` (used as its `toolCallId`), if given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The tool.
        tool_name: String,
        /// Its arguments.
        args: Value,
    },
    /// Switch how the session decides calls that need consent, at once (a call already waiting
    /// for an answer stays asked); answered by `actionResult`.
    SetApprovalMode {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The new mode.
        mode: ApprovalMode,
    },
    /// Switch the root worker's model (kept for the rest of the session); answered by
    /// `actionResult`.
    SetModel {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The model, as `provider:model` (or a name the model resolver knows).
        model: String,
    },
    /// End this session's transcript and start a new one with the same worker and model:
    /// history, remembered approvals and token counts start afresh. Answered by a new
    /// `sessionStarted`, then `actionResult`.
    NewSession {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// Forget the conversation (remembered approvals are kept); answered by `actionResult`.
    ClearHistory {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// Summarise the root worker's conversation before its last turns into one message, now
    /// (between turns: it waits for a running turn), optionally with what the summary should
    /// keep in focus. Answered by `contextCompacted` when it compacted, then `actionResult`.
    Compact {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// What the summary should keep in focus (`the failing tests`), in the user's words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// Continue the turn that ended as `waitingApproval`: the calls it left waiting go through
    /// the gate again (an answer given in the inbox is taken as given), then the model goes on
    /// without new input. Answered by `turnEnded` (`failed` when nothing waits).
    ContinueTurn {},
    /// Put the zone files back as they were before the last `turns` turns that changed files
    /// (1 when absent), and tell the model. A file changed outside the session since is a
    /// conflict: nothing is changed, the `actionResult` (`ok: false`) lists the conflicts,
    /// unless `force`. Answered by `actionResult`.
    Undo {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// How many turns to undo, newest first (at least 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(range(min = 1))]
        turns: Option<u32>,
        /// Overwrite files changed outside the session since.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        force: bool,
    },
    /// Ask for the tools the user may invoke; answered by `manualToolsAvailable`.
    ListManualTools {
        /// Correlates the `manualToolsAvailable`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// Ask for the remembered approvals; answered by `approvalsRemembered`.
    ListApprovals {
        /// Correlates the `approvalsRemembered`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// Forget remembered approval number `index` (as listed), or every one when `index` is
    /// absent; answered by `actionResult`.
    ForgetApprovals {
        /// Correlates the `actionResult`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
        /// The approval's number in `approvalsRemembered`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        index: Option<u32>,
    },
    /// Ask for the session's status; answered by `sessionStatus`.
    GetStatus {
        /// Correlates the `sessionStatus`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        request_id: Option<String>,
    },
    /// End the session: a running turn is interrupted, then `sessionEnded` is the last event.
    /// Without a reason, the last turn's outcome decides it (`completed` when there was none).
    EndSession {
        /// Why the session ends.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<SessionEndReason>,
    },
}

impl ActionEvent {
    /// The request this action answers, for correlated responses.
    pub fn answers_request(&self) -> Option<&str> {
        match self {
            ActionEvent::UserInput { request_id, .. } => request_id.as_deref(),
            ActionEvent::ApprovalResponse(response) => Some(&response.request_id),
            ActionEvent::InputResponse { request_id, .. } => Some(request_id),
            ActionEvent::Interrupt { .. }
            | ActionEvent::ManualToolInvoke { .. }
            | ActionEvent::SetModel { .. }
            | ActionEvent::SetApprovalMode { .. }
            | ActionEvent::NewSession { .. }
            | ActionEvent::ClearHistory { .. }
            | ActionEvent::Compact { .. }
            | ActionEvent::ContinueTurn { .. }
            | ActionEvent::Undo { .. }
            | ActionEvent::ListManualTools { .. }
            | ActionEvent::ListApprovals { .. }
            | ActionEvent::ForgetApprovals { .. }
            | ActionEvent::GetStatus { .. }
            | ActionEvent::EndSession { .. } => None,
        }
    }
}

/// What the user did with an `inputRequired` form.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum InputAction {
    /// Filled it in and sent it (the values come along).
    #[default]
    Accept,
    /// Refused to answer.
    Decline,
    /// Dismissed it without choosing (closed the dialog, pressed Ctrl+C).
    Cancel,
}

impl InputAction {
    /// The wire name (`accept`, `decline`, `cancel`).
    pub fn as_str(self) -> &'static str {
        match self {
            InputAction::Accept => "accept",
            InputAction::Decline => "decline",
            InputAction::Cancel => "cancel",
        }
    }
}

/// Any protocol object, for readers of a mixed stream and for the committed JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ProtocolEvent {
    /// Runtime → UI.
    Display(Box<DisplayEvent>),
    /// UI → runtime.
    Action(Box<ActionEvent>),
    /// `golem-forge batch --json` → its reader.
    Batch(Box<BatchEvent>),
    /// `golem-forge test --json` → its reader.
    Test(Box<crate::worker_test::TestEvent>),
}
