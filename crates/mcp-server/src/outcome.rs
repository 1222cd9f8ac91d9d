//! What a call reports back: the display events of its session read into the tool calls made
//! (name and status, and the sub-worker that made them), the files changed (the paths of
//! successful `write_file`, `edit_file`, `delete_file` and `move_file` calls, as they ran) and
//! the turn's end, then turned into the MCP result — the answer as text content, the rest as
//! `structuredContent` (shaped by [`crate::catalog`]'s output schema; a worker with an output
//! schema's answer is its `output`, the JSON value). Each event also says
//! what to show as progress, if anything, and what the user is asked (approvals, and the
//! questions tools ask).

use std::collections::HashMap;

use golem_protocol::{
    ApprovalRequest, DisplayEvent, TokenUsage, ToolStatus, TurnStatus, WorkerOrigin,
};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::question::FormQuestion;

/// The tools whose successful calls change files, and the arguments naming them.
const FILE_CHANGES: &[(&str, &[&str])] = &[
    ("write_file", &["path"]),
    ("edit_file", &["path"]),
    ("delete_file", &["path"]),
    ("move_file", &["from", "to"]),
];

/// One tool call, as reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallRecord {
    /// The tool.
    pub name: String,
    /// How it ended.
    pub status: ToolStatus,
    /// The sub-worker that made it, when not the worker called.
    pub worker: Option<String>,
}

/// How the turn ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnEnd {
    /// How it ended.
    pub status: TurnStatus,
    /// The answer.
    pub response: Option<String>,
    /// Why it failed.
    pub error: Option<String>,
    /// The answer as a JSON value, for a worker with an output schema.
    pub output: Option<Value>,
    /// Tokens used, every worker's.
    pub usage: TokenUsage,
    /// US dollars, when known.
    pub cost: Option<f64>,
}

/// What one display event means for the call.
#[derive(Debug)]
pub enum Step {
    /// Nothing to do.
    Nothing,
    /// Something to show as progress.
    Progress(String),
    /// A call waits for the user's consent.
    Approval(Box<ApprovalRequest>),
    /// A tool asks the user a question (`inputRequired`).
    Input(Box<FormQuestion>),
    /// The runtime settled the question with this id itself (`inputResolved`).
    Resolved(String),
    /// The turn ended.
    Ended(TurnEnd),
}

/// The record of one call's session.
#[derive(Debug, Default)]
pub struct Collector {
    worker: String,
    session_id: String,
    running: HashMap<String, Value>,
    tool_calls: Vec<ToolCallRecord>,
    files: Vec<String>,
}

impl Collector {
    /// The record of a session of `worker` with the transcript `session_id`.
    pub fn new(worker: &str, session_id: &str) -> Self {
        Self {
            worker: worker.to_owned(),
            session_id: session_id.to_owned(),
            ..Self::default()
        }
    }

    /// The tool calls so far.
    pub fn tool_calls(&self) -> &[ToolCallRecord] {
        &self.tool_calls
    }

    /// The files changed so far.
    #[cfg(test)]
    pub fn files_changed(&self) -> &[String] {
        &self.files
    }

    /// Reads one display event.
    pub fn on_event(&mut self, event: DisplayEvent) -> Step {
        match event {
            DisplayEvent::Streaming {
                delta,
                done: false,
                worker: None,
                ..
            } if !delta.is_empty() => Step::Progress(delta),
            DisplayEvent::ToolStarted {
                tool_call_id,
                tool_name,
                args,
                worker,
                ..
            } => {
                let message = format!("{}{tool_name}: started", by(worker.as_ref()));
                self.running.insert(tool_call_id, args);
                Step::Progress(message)
            }
            DisplayEvent::ToolResult {
                tool_call_id,
                tool_name,
                status,
                duration_ms,
                worker,
                ..
            } => {
                let args = self.running.remove(&tool_call_id);
                if status == ToolStatus::Success
                    && let Some(args) = &args
                {
                    self.note_changes(&tool_name, args);
                }
                let message = format!(
                    "{}{tool_name}: {} ({duration_ms} ms)",
                    by(worker.as_ref()),
                    status_name(status)
                );
                self.tool_calls.push(ToolCallRecord {
                    name: tool_name,
                    status,
                    worker: worker.map(|w| w.name),
                });
                Step::Progress(message)
            }
            DisplayEvent::ApprovalRequired(request) => Step::Approval(Box::new(request)),
            event @ DisplayEvent::InputRequired { .. } => FormQuestion::from_event(event)
                .map_or(Step::Nothing, |question| Step::Input(Box::new(question))),
            DisplayEvent::InputResolved { request_id, .. } => Step::Resolved(request_id),
            DisplayEvent::TurnEnded {
                status,
                response,
                error,
                output,
                usage,
                cost,
            } => Step::Ended(TurnEnd {
                status,
                response,
                error,
                output,
                usage,
                cost,
            }),
            // What an MCP client is not sent: the answer arrives whole in the result (a
            // worker's and the final stream's deltas are the progress above), and the rest is
            // the session's own bookkeeping, which the client has no message for. Listed kind
            // by kind so that a new kind needs a decision here.
            DisplayEvent::Streaming { .. }
            | DisplayEvent::SessionStarted { .. }
            | DisplayEvent::Message { .. }
            | DisplayEvent::ApprovalResolved(_)
            | DisplayEvent::ApprovalDeferred { .. }
            | DisplayEvent::Status { .. }
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::WorkerStarted { .. }
            | DisplayEvent::WorkerProgress(_)
            | DisplayEvent::WorkerFinished { .. }
            | DisplayEvent::Usage { .. }
            | DisplayEvent::ContextCompacted { .. }
            | DisplayEvent::ContextElided { .. }
            | DisplayEvent::ActionResult(_)
            | DisplayEvent::SessionStatus(_)
            | DisplayEvent::ApprovalsRemembered { .. }
            | DisplayEvent::SessionEnded { .. } => Step::Nothing,
        }
    }

    fn note_changes(&mut self, tool: &str, args: &Value) {
        let Some((_, keys)) = FILE_CHANGES.iter().find(|(name, _)| *name == tool) else {
            return;
        };
        for key in *keys {
            if let Some(path) = args.get(key).and_then(Value::as_str)
                && !self.files.iter().any(|f| f == path)
            {
                self.files.push(path.to_owned());
            }
        }
    }

    /// The structured content of the call that ended with `end`.
    pub fn structured(&self, end: &TurnEnd) -> Value {
        let mut object = Map::new();
        object.insert("worker".into(), json!(self.worker));
        object.insert("sessionId".into(), json!(self.session_id));
        object.insert("status".into(), json!(turn_status_name(end.status)));
        if let Some(answer) = &end.response {
            object.insert("answer".into(), json!(answer));
        }
        if let Some(error) = &end.error {
            object.insert("error".into(), json!(error));
        }
        if let Some(output) = &end.output {
            object.insert("output".into(), output.clone());
        }
        let calls: Vec<Value> = self
            .tool_calls
            .iter()
            .map(|call| {
                let mut entry = json!({"name": call.name, "status": status_name(call.status)});
                if let (Some(worker), Some(map)) = (&call.worker, entry.as_object_mut()) {
                    map.insert("worker".into(), json!(worker));
                }
                entry
            })
            .collect();
        object.insert("toolCalls".into(), Value::Array(calls));
        object.insert("filesChanged".into(), json!(self.files));
        object.insert(
            "usage".into(),
            json!({
                "inputTokens": end.usage.input_tokens,
                "outputTokens": end.usage.output_tokens,
                "cacheReadTokens": end.usage.cache_read_tokens,
                "cacheWriteTokens": end.usage.cache_write_tokens,
            }),
        );
        if let Some(cost) = end.cost {
            object.insert("cost".into(), json!(cost));
        }
        Value::Object(object)
    }

    /// The MCP result of the call that ended with `end`: the answer as text (an error result,
    /// with the reason, unless the turn completed), the record as structured content.
    pub fn result(&self, end: &TurnEnd) -> CallToolResult {
        let structured = self.structured(end);
        let answer = end.response.clone().unwrap_or_default();
        let mut result = match end.status {
            TurnStatus::Completed => CallToolResult::success(vec![ContentBlock::text(answer)]),
            TurnStatus::Interrupted => {
                let text = if answer.is_empty() {
                    golem_runtime::runner::INTERRUPTED_RESPONSE.to_owned()
                } else {
                    answer
                };
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
            TurnStatus::WaitingApproval => {
                let why = end.error.clone().unwrap_or_default();
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "worker {} is parked: {why}",
                    self.worker
                ))])
            }
            TurnStatus::Failed | TurnStatus::BudgetExceeded => {
                let why = end
                    .error
                    .clone()
                    .unwrap_or_else(|| "the worker failed".to_owned());
                CallToolResult::error(vec![ContentBlock::text(format!(
                    "worker {} {}: {why}",
                    self.worker,
                    if end.status == TurnStatus::BudgetExceeded {
                        "ran out of budget"
                    } else {
                        "failed"
                    }
                ))])
            }
        };
        result.structured_content = Some(structured);
        result
    }
}

/// `helper: ` for a sub-worker's event, nothing for the worker called.
fn by(worker: Option<&WorkerOrigin>) -> String {
    worker.map(|w| format!("{}: ", w.name)).unwrap_or_default()
}

/// The wire name of a tool status.
pub fn status_name(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Success => "success",
        ToolStatus::Error => "error",
        ToolStatus::Denied => "denied",
        ToolStatus::Blocked => "blocked",
        ToolStatus::Interrupted => "interrupted",
    }
}

/// The wire name of a turn status.
pub fn turn_status_name(status: TurnStatus) -> &'static str {
    match status {
        TurnStatus::Completed => "completed",
        TurnStatus::Failed => "failed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::BudgetExceeded => "budgetExceeded",
        TurnStatus::WaitingApproval => "waitingApproval",
    }
}

#[cfg(test)]
mod tests {
    use golem_protocol::{InvokedBy, ToolResultValue};

    use super::*;

    fn started(id: &str, tool: &str, args: Value) -> DisplayEvent {
        DisplayEvent::ToolStarted {
            tool_call_id: id.into(),
            tool_name: tool.into(),
            tool_kind: golem_protocol::ToolKind::Other,
            args,
            invoked_by: InvokedBy::Model,
            worker: None,
        }
    }

    fn result(id: &str, tool: &str, status: ToolStatus, worker: Option<&str>) -> DisplayEvent {
        DisplayEvent::ToolResult {
            tool_call_id: id.into(),
            tool_name: tool.into(),
            tool_kind: golem_protocol::ToolKind::Other,
            status,
            args: None,
            value: ToolResultValue::text("ok"),
            duration_ms: 3,
            invoked_by: InvokedBy::Model,
            worker: worker.map(|name| WorkerOrigin {
                name: name.into(),
                depth: 1,
                id: "w1".into(),
            }),
        }
    }

    #[test]
    fn successful_changes_are_files_changed_and_every_call_is_listed() {
        let mut c = Collector::new("main", "s1");
        for event in [
            started(
                "1",
                "write_file",
                json!({"path": "/out/a.txt", "content": "x"}),
            ),
            result("1", "write_file", ToolStatus::Success, None),
            started(
                "2",
                "move_file",
                json!({"from": "/out/a.txt", "to": "/out/b.txt"}),
            ),
            result("2", "move_file", ToolStatus::Success, None),
            started("3", "edit_file", json!({"path": "/out/c.txt"})),
            result("3", "edit_file", ToolStatus::Error, None),
            result("4", "write_file", ToolStatus::Denied, None),
            started("5", "read_file", json!({"path": "/out/b.txt"})),
            result("5", "read_file", ToolStatus::Success, Some("helper")),
            started(
                "6",
                "write_file",
                json!({"path": "/out/b.txt", "content": "y"}),
            ),
            result("6", "write_file", ToolStatus::Success, None),
        ] {
            c.on_event(event);
        }
        assert_eq!(c.files_changed(), ["/out/a.txt", "/out/b.txt"]);
        let end = TurnEnd {
            status: TurnStatus::Completed,
            response: Some("done".into()),
            error: None,
            output: None,
            usage: TokenUsage {
                input_tokens: 10,
                output_tokens: 5,
                ..TokenUsage::default()
            },
            cost: None,
        };
        let value = c.structured(&end);
        assert_eq!(value["status"], "completed");
        assert_eq!(value["answer"], "done");
        assert_eq!(value["usage"]["inputTokens"], 10);
        let calls = value["toolCalls"].as_array().unwrap();
        assert_eq!(calls.len(), 6);
        assert_eq!(calls[3], json!({"name": "write_file", "status": "denied"}));
        assert_eq!(
            calls[4],
            json!({"name": "read_file", "status": "success", "worker": "helper"})
        );
        let result = c.result(&end);
        assert_eq!(result.is_error, Some(false));
    }

    #[test]
    fn a_failed_turn_is_an_error_result_with_its_reason() {
        let c = Collector::new("main", "s1");
        let end = TurnEnd {
            status: TurnStatus::Failed,
            response: None,
            error: Some("the model said no".into()),
            output: None,
            usage: TokenUsage::default(),
            cost: None,
        };
        let result = c.result(&end);
        assert_eq!(result.is_error, Some(true));
        let text = serde_json::to_value(&result.content).unwrap();
        assert!(text.to_string().contains("the model said no"), "{text}");
        assert_eq!(result.structured_content.unwrap()["status"], "failed");
    }

    #[test]
    fn a_structured_answer_is_the_output_of_the_structured_content() {
        let c = Collector::new("judge", "s1");
        let end = TurnEnd {
            status: TurnStatus::Completed,
            response: Some("{\"verdict\":\"ok\"}".into()),
            error: None,
            output: Some(json!({"verdict": "ok"})),
            usage: TokenUsage::default(),
            cost: None,
        };
        let result = c.result(&end);
        let content = result.structured_content.unwrap();
        assert_eq!(content["output"], json!({"verdict": "ok"}));
        assert_eq!(content["answer"], "{\"verdict\":\"ok\"}");
    }

    #[test]
    fn streamed_text_of_the_worker_called_is_progress_and_a_sub_workers_is_not() {
        let mut c = Collector::new("main", "s1");
        let stream = |worker: Option<WorkerOrigin>| DisplayEvent::Streaming {
            request_id: "r".into(),
            delta: "Hel".into(),
            done: false,
            worker,
        };
        assert!(matches!(c.on_event(stream(None)), Step::Progress(t) if t == "Hel"));
        let sub = WorkerOrigin {
            name: "helper".into(),
            depth: 1,
            id: "w".into(),
        };
        assert!(matches!(c.on_event(stream(Some(sub))), Step::Nothing));
    }
}
