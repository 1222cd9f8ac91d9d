//! The session's display events as ACP `session/update`s: streamed text as message chunks,
//! each tool call as a `tool_call` followed by `tool_call_update`s, usage as `usage_update`.
//! What needs the editor (an approval, a tool's question) and what ends a prompt (the turn's
//! end, the answer to a command) come out as [`Step`]s for the session to act on.

use std::collections::HashSet;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, SessionUpdate, TextContent, ToolCall, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, UsageUpdate,
};
use golem_protocol::workers::elision_line;
use golem_protocol::{
    ApprovalRequest, DisplayEvent, FormField, Role, SessionStatus, StatusLevel, ToolKind,
    ToolResultValue, ToolStatus, TurnStatus,
};
use serde_json::Value;

use crate::tool_call::{self, ZoneMap};

/// What an event asks of the session.
#[derive(Debug)]
pub enum Step {
    /// Send this update.
    Update(SessionUpdate),
    /// Ask the editor for permission (the call's `tool_call` was sent before).
    Ask(ApprovalRequest),
    /// A tool's question for the user.
    Question {
        /// Correlates the answer.
        request_id: String,
        /// What is asked.
        prompt: String,
        /// Who asks.
        source: Option<String>,
        /// The form.
        fields: Vec<FormField>,
    },
    /// The running turn ended.
    TurnEnded {
        /// How.
        status: TurnStatus,
        /// Why it failed.
        error: Option<String>,
    },
    /// The answer to a command (`requestId`), as text for the user; for a manual tool, its
    /// result (already shown as a tool call).
    Answer {
        /// The command's request id.
        request_id: String,
        /// What to tell the user; empty when the tool call says it all.
        text: String,
    },
}

/// Turns one session's display events into steps, remembering which tool calls the editor
/// already knows.
#[derive(Debug, Default)]
pub struct Translator {
    zones: ZoneMap,
    announced: HashSet<String>,
    /// Whether text was streamed since the last assistant message (the message then repeats
    /// it and is not sent again).
    streamed: bool,
    /// The session's cost so far, when prices are known (a loaded session starts from what
    /// its transcript recorded).
    cost: Option<f64>,
}

/// A cost in US dollars as the editor gets it: rounded to a millionth of a dollar, so that
/// the sum of many calls' prices reads `0.002955`, not `0.0029551000000000004`.
pub fn rounded_cost(dollars: f64) -> f64 {
    (dollars * 1_000_000.0).round() / 1_000_000.0
}

/// A text chunk of the agent's message.
pub fn message(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// A text chunk of the agent's thoughts (what delegated workers say, status lines).
pub fn thought(text: impl Into<String>) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(TextContent::new(
        text,
    ))))
}

/// How a tool call that ended is shown.
pub fn call_status(status: ToolStatus) -> ToolCallStatus {
    match status {
        ToolStatus::Success => ToolCallStatus::Completed,
        ToolStatus::Error | ToolStatus::Denied | ToolStatus::Blocked | ToolStatus::Interrupted => {
            ToolCallStatus::Failed
        }
    }
}

impl Translator {
    /// A translator whose paths are shown on the host through `zones`.
    pub fn new(zones: ZoneMap) -> Self {
        Self {
            zones,
            ..Self::default()
        }
    }

    /// Starts the session's cost at `cost`, what was spent before (a loaded session's total).
    pub fn with_cost(mut self, cost: Option<f64>) -> Self {
        self.cost = cost;
        self
    }

    /// The fields of a call as the editor first sees it.
    fn call_fields(&self, name: &str, kind: ToolKind, args: &Value) -> ToolCallUpdateFields {
        ToolCallUpdateFields::new()
            .title(tool_call::title(name, args))
            .kind(tool_call::acp_kind(kind))
            .locations(tool_call::locations(name, args, &self.zones))
            .raw_input(args.clone())
    }

    /// `fields` with the content of `value` and, when it is a change that says where, the
    /// changed files at their first changed line as the locations.
    fn with_value(
        &self,
        fields: ToolCallUpdateFields,
        value: &ToolResultValue,
    ) -> ToolCallUpdateFields {
        let fields = fields.content(tool_call::content(value, &self.zones));
        let changed = tool_call::changed_locations(value, &self.zones);
        if changed.is_empty() {
            fields
        } else {
            fields.locations(changed)
        }
    }

    /// The `tool_call` the first time a call is seen, a `tool_call_update` after.
    fn call(
        &mut self,
        id: &str,
        (name, kind): (&str, ToolKind),
        args: Option<&Value>,
        fields: ToolCallUpdateFields,
    ) -> SessionUpdate {
        if self.announced.insert(id.to_owned()) {
            let first = self.call_fields(name, kind, args.unwrap_or(&Value::Null));
            let mut call = ToolCall::new(
                id.to_owned(),
                tool_call::title(name, args.unwrap_or(&Value::Null)),
            );
            call.update(first);
            call.update(fields);
            SessionUpdate::ToolCall(call)
        } else {
            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields))
        }
    }

    /// The permission request's view of the call: what the `tool_call` said, with the preview.
    pub fn asked_call(&self, request: &ApprovalRequest) -> ToolCallUpdate {
        let mut fields = self.call_fields(&request.tool_name, request.tool_kind, &request.args);
        if let Some(preview) = &request.preview {
            fields = self.with_value(fields, preview);
        }
        ToolCallUpdate::new(request.tool_call_id.clone(), fields)
    }

    fn pending(&mut self, request: &ApprovalRequest) -> SessionUpdate {
        let mut fields = ToolCallUpdateFields::new().status(ToolCallStatus::Pending);
        if let Some(preview) = &request.preview {
            fields = self.with_value(fields, preview);
        }
        self.call(
            &request.tool_call_id,
            (&request.tool_name, request.tool_kind),
            Some(&request.args),
            fields,
        )
    }

    /// A call's end; `args` are those of a call that never started (its first announcement).
    fn ended(
        &mut self,
        id: &str,
        tool: (&str, ToolKind),
        (status, args): (ToolStatus, Option<&Value>),
        value: &ToolResultValue,
    ) -> SessionUpdate {
        let fields = self.with_value(
            ToolCallUpdateFields::new()
                .status(call_status(status))
                .raw_output(serde_json::to_value(value).unwrap_or(Value::Null)),
            value,
        );
        self.call(id, tool, args, fields)
    }

    /// The steps of `event`.
    pub fn steps(&mut self, event: &DisplayEvent) -> Vec<Step> {
        let update = |u| vec![Step::Update(u)];
        match event {
            DisplayEvent::Streaming { delta, worker, .. } => {
                if delta.is_empty() {
                    return Vec::new();
                }
                match worker {
                    None => {
                        self.streamed = true;
                        update(message(delta.clone()))
                    }
                    Some(_) => update(thought(delta.clone())),
                }
            }
            DisplayEvent::Message { message: m, worker } => {
                let streamed = std::mem::take(&mut self.streamed);
                match m.role {
                    Role::Assistant if worker.is_none() && !streamed && !m.content.is_empty() => {
                        update(message(m.content.clone()))
                    }
                    Role::Assistant | Role::User | Role::System => Vec::new(),
                }
            }
            DisplayEvent::ToolStarted {
                tool_call_id,
                tool_name,
                tool_kind,
                args,
                ..
            } => update(self.call(
                tool_call_id,
                (tool_name, *tool_kind),
                Some(args),
                ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
            )),
            DisplayEvent::ToolResult {
                tool_call_id,
                tool_name,
                tool_kind,
                status,
                args,
                value,
                ..
            } => {
                let shown = self.ended(
                    tool_call_id,
                    (tool_name, *tool_kind),
                    (*status, args.as_ref()),
                    value,
                );
                vec![
                    Step::Update(shown),
                    Step::Answer {
                        request_id: tool_call_id.clone(),
                        text: String::new(),
                    },
                ]
            }
            DisplayEvent::ApprovalRequired(request) => {
                vec![
                    Step::Update(self.pending(request)),
                    Step::Ask(request.clone()),
                ]
            }
            DisplayEvent::ApprovalDeferred { request, inbox_id } => {
                let number = inbox_id
                    .map(|n| format!(" as number {n}"))
                    .unwrap_or_default();
                vec![
                    Step::Update(self.pending(request)),
                    Step::Update(message(format!(
                        "\n\n{} waits in the approval inbox{number}: answer it with \
                         `golem-forge inbox`.\n",
                        request.tool_name
                    ))),
                ]
            }
            DisplayEvent::InputRequired {
                request_id,
                prompt,
                source,
                fields,
            } => vec![Step::Question {
                request_id: request_id.clone(),
                prompt: prompt.clone(),
                source: source.clone(),
                fields: fields.clone(),
            }],
            DisplayEvent::Status {
                level,
                message: text,
            } => match level {
                StatusLevel::Info => update(thought(format!("{text}\n"))),
                StatusLevel::Warning | StatusLevel::Error => {
                    update(message(format!("\n\n> ⚠ {text}\n\n")))
                }
            },
            DisplayEvent::Usage {
                cost,
                context,
                worker,
                ..
            } => {
                if let Some(cost) = cost {
                    self.cost = Some(self.cost.unwrap_or(0.0) + cost);
                }
                match (worker, context) {
                    (None, Some(fill)) => {
                        let mut usage = UsageUpdate::new(fill.used, fill.window);
                        if let Some(total) = self.cost {
                            usage = usage.cost(Cost::new(rounded_cost(total), "USD"));
                        }
                        update(SessionUpdate::UsageUpdate(usage))
                    }
                    _ => Vec::new(),
                }
            }
            DisplayEvent::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => update(thought(format!(
                "context compacted: {tokens_before} → {tokens_after} tokens\n"
            ))),
            DisplayEvent::ContextElided {
                tokens_before,
                tokens_after,
                window,
                results,
                harder,
                ..
            } => update(thought(format!(
                "{}\n",
                elision_line(*tokens_before, *tokens_after, *window, *results, *harder)
            ))),
            DisplayEvent::WorkerStarted {
                worker_name, depth, ..
            } if *depth > 0 => update(thought(format!("→ delegating to {worker_name}\n"))),
            DisplayEvent::TurnEnded { status, error, .. } => vec![Step::TurnEnded {
                status: *status,
                error: error.clone(),
            }],
            DisplayEvent::ActionResult(result) => match &result.request_id {
                Some(id) => vec![Step::Answer {
                    request_id: id.clone(),
                    text: result.message.clone(),
                }],
                None => Vec::new(),
            },
            DisplayEvent::SessionStatus(status) => match &status.request_id {
                Some(id) => vec![Step::Answer {
                    request_id: id.clone(),
                    text: status_text(status),
                }],
                None => Vec::new(),
            },
            DisplayEvent::ApprovalsRemembered {
                request_id,
                approvals,
            } => match request_id {
                Some(id) => {
                    let text = if approvals.is_empty() {
                        "No approvals are remembered.".to_owned()
                    } else {
                        approvals
                            .iter()
                            .map(|a| {
                                format!("{}. {} {} ({:?})", a.index, a.tool_name, a.args, a.scope)
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    };
                    vec![Step::Answer {
                        request_id: id.clone(),
                        text,
                    }]
                }
                None => Vec::new(),
            },
            DisplayEvent::SessionStarted { .. }
            | DisplayEvent::ApprovalResolved(_)
            | DisplayEvent::InputResolved { .. }
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::WorkerStarted { .. }
            | DisplayEvent::WorkerProgress(_)
            | DisplayEvent::WorkerFinished { .. }
            | DisplayEvent::SessionEnded { .. } => Vec::new(),
        }
    }
}

/// `/status` as text.
fn status_text(status: &SessionStatus) -> String {
    let mut lines = vec![
        format!("session {}", status.session_id),
        format!("worker {}, model {}", status.worker, status.model),
        format!(
            "usage: {} input, {} output tokens{}",
            status.usage.input_tokens,
            status.usage.output_tokens,
            status
                .cost
                .map(|c| format!(", ${c:.4}"))
                .unwrap_or_default()
        ),
    ];
    if let Some(fill) = status.context {
        lines.push(format!(
            "context: {} % of {} tokens",
            fill.used.saturating_mul(100) / fill.window.max(1),
            fill.window
        ));
    }
    if let Some(mode) = status.approval_mode {
        lines.push(format!("approval mode: {mode}"));
    }
    lines.push(format!(
        "approvals remembered: {}",
        status.approvals_remembered
    ));
    lines.join("\n")
}

#[cfg(test)]
mod tests;
