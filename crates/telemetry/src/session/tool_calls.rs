//! The tool calls of a session's spans: each call seen at the gate or running, its approval
//! (asked, how long it waited, who decided, deferred to the inbox), and its `execute_tool`
//! span when it ends, with the `run_jailed` child of a call that ran a program in the jail.

use std::time::{Duration, SystemTime};

use golem_protocol::result::CodeResultData;
use golem_protocol::{
    ApprovalRequest, ApprovalResolved, ToolResultValue, ToolStatus, WorkerOrigin,
};
use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanId, SpanKind};

use super::{SessionTracer, before, string_array, to_i64};
use crate::span::{FinishedSpan, attr};
use crate::traceparent::TraceParent;

/// A tool call seen at the gate or running.
#[derive(Debug)]
pub(super) struct OpenTool {
    name: String,
    /// Its arguments as JSON text, when content is captured.
    args: Option<String>,
    /// When it was first seen (asked about, decided, started).
    pub(super) seen: SystemTime,
    /// Its span's ids (a sub-worker it starts hangs under it).
    pub(super) ids: TraceParent,
    parent: SpanId,
    asked_at: Option<SystemTime>,
    waited: Option<Duration>,
    /// Whether it may run, and who decided.
    resolved: Option<(bool, String)>,
    /// Parked in the inbox, under this number when it got one.
    deferred: Option<Option<u64>>,
}

/// A tool call's end, as `toolResult` tells it.
pub(super) struct ToolCallEnd<'a> {
    pub tool_call_id: &'a str,
    pub tool_name: &'a str,
    pub status: ToolStatus,
    pub args: Option<&'a serde_json::Value>,
    pub value: &'a ToolResultValue,
    pub duration_ms: u64,
    pub manual: bool,
    pub worker: Option<&'a WorkerOrigin>,
}

impl SessionTracer {
    /// The tool call's entry, made on first sight under its worker's span.
    pub(super) fn tool(
        &mut self,
        at: SystemTime,
        tool_call_id: &str,
        name: &str,
        origin: Option<&WorkerOrigin>,
    ) -> &mut OpenTool {
        let place = match self.child_of_worker(origin) {
            Some((ids, (parent, _))) => (ids, parent),
            None => (TraceParent::new_trace(), SpanId::INVALID),
        };
        self.tools
            .entry(tool_call_id.to_owned())
            .or_insert_with(|| OpenTool {
                name: name.to_owned(),
                args: None,
                seen: at,
                ids: place.0,
                parent: place.1,
                asked_at: None,
                waited: None,
                resolved: None,
                deferred: None,
            })
    }

    /// Someone is asked about a call (or it is parked in the inbox).
    pub(super) fn approval_asked(&mut self, at: SystemTime, request: &ApprovalRequest) {
        let capture = self.capture_content;
        let tool = self.tool(
            at,
            &request.tool_call_id,
            &request.tool_name,
            request.worker.as_ref(),
        );
        tool.asked_at.get_or_insert(at);
        if capture && tool.args.is_none() {
            tool.args = Some(request.args.to_string());
        }
    }

    /// A call was parked in the inbox instead of asked.
    pub(super) fn approval_deferred(
        &mut self,
        at: SystemTime,
        request: &ApprovalRequest,
        inbox_id: Option<u64>,
    ) {
        self.approval_asked(at, request);
        let tool = self.tool(
            at,
            &request.tool_call_id,
            &request.tool_name,
            request.worker.as_ref(),
        );
        tool.deferred = Some(inbox_id);
    }

    /// A call began running with `args`.
    pub(super) fn tool_started(
        &mut self,
        at: SystemTime,
        tool_call_id: &str,
        tool_name: &str,
        args: &serde_json::Value,
        origin: Option<&WorkerOrigin>,
    ) {
        let capture = self.capture_content;
        let tool = self.tool(at, tool_call_id, tool_name, origin);
        if capture {
            tool.args = Some(args.to_string());
        }
    }

    /// The gate decided on a call.
    pub(super) fn approval_resolved(&mut self, at: SystemTime, resolved: &ApprovalResolved) {
        let tool = self.tool(
            at,
            &resolved.tool_call_id,
            &resolved.tool_name,
            resolved.worker.as_ref(),
        );
        if let Some(asked) = tool.asked_at.take() {
            let waited = at.duration_since(asked).unwrap_or_default();
            tool.waited = Some(tool.waited.unwrap_or_default() + waited);
        }
        let decided_by = serde_json::to_value(resolved.decided_by)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        // A later decision (consent to what a jailed program changed) keeps the first
        // denial, or replaces an approval.
        if !matches!(tool.resolved, Some((false, _))) {
            tool.resolved = Some((resolved.approved, decided_by));
        }
    }

    /// The `execute_tool` span of a call: its end as `toolResult` told it, or (`None`) a call
    /// still open at `at`, parked in the inbox or cut off with the session.
    pub(super) fn tool_span(
        &self,
        tool: OpenTool,
        tool_call_id: &str,
        at: SystemTime,
        call: Option<&ToolCallEnd<'_>>,
    ) -> FinishedSpan {
        let start = match call {
            Some(call) => before(at, call.duration_ms),
            None => tool.seen,
        };
        let mut span = FinishedSpan::new(
            format!("execute_tool {}", tool.name),
            SpanKind::Internal,
            tool.ids,
            start,
            at,
        );
        if tool.parent != SpanId::INVALID {
            span.parent = Some((tool.parent, false));
        }
        span.set(attr::OPERATION, "execute_tool");
        span.set(attr::TOOL_NAME, tool.name.clone());
        span.set(attr::TOOL_CALL_ID, tool_call_id.to_owned());
        let manual = call.is_some_and(|call| call.manual);
        span.set(
            attr::TOOL_TYPE,
            if manual { "extension" } else { "function" },
        );
        span.set(attr::CONVERSATION_ID, self.session_id.clone());
        let status = match (call, &tool.deferred) {
            (Some(call), _) => status_name(call.status),
            (None, Some(_)) => "parked",
            (None, None) => "interrupted",
        };
        span.set(attr::TOOL_STATUS, status);
        let asked = tool.waited.is_some() || tool.deferred.is_some() || tool.asked_at.is_some();
        let requirement = match (&tool.resolved, asked) {
            (_, true) => "approval",
            (Some((false, _)), false) => "blocked",
            (Some((true, _)) | None, false) => "none",
        };
        span.set(attr::APPROVAL_REQUIREMENT, requirement);
        match (&tool.deferred, &tool.resolved) {
            (Some(inbox), _) => {
                span.set(attr::APPROVAL_DECISION, "deferred");
                span.set_some(attr::APPROVAL_INBOX_ID, inbox.map(to_i64));
            }
            (None, Some((approved, decided_by))) => {
                span.set(
                    attr::APPROVAL_DECISION,
                    if *approved { "approved" } else { "denied" },
                );
                span.set(attr::APPROVAL_DECIDED_BY, decided_by.clone());
            }
            (None, None) => {}
        }
        if let Some(waited) = tool.waited {
            span.set(
                attr::APPROVAL_WAIT_MS,
                i64::try_from(waited.as_millis()).unwrap_or(i64::MAX),
            );
        }
        if self.capture_content
            && let Some(args) = call
                .and_then(|c| c.args)
                .map(|a| a.to_string())
                .or(tool.args)
        {
            span.set(attr::TOOL_ARGUMENTS, args);
        }
        let Some(call) = call else {
            if tool.deferred.is_none() {
                span.fail("interrupted", "the session ended before the call did");
            }
            return span;
        };
        if self.capture_content {
            span.set(attr::TOOL_RESULT, call.value.to_model_text());
        }
        if call.status != ToolStatus::Success {
            let code = call
                .value
                .data
                .get("code")
                .and_then(|c| c.as_str())
                .unwrap_or(status_name(call.status))
                .to_owned();
            let message = call
                .value
                .data
                .get("message")
                .and_then(|m| m.as_str())
                .map(str::to_owned)
                .unwrap_or_else(|| call.value.summary.clone().unwrap_or_default());
            span.fail(&code, &message);
        }
        span
    }

    /// A call ended: its span, and its jailed program's when it ran one.
    pub(super) fn tool_finished(&mut self, at: SystemTime, call: ToolCallEnd<'_>) {
        self.tool(at, call.tool_call_id, call.tool_name, call.worker);
        let Some(tool) = self.tools.remove(call.tool_call_id) else {
            return;
        };
        let ids = tool.ids;
        let span = self.tool_span(tool, call.tool_call_id, at, Some(&call));
        let jailed = jailed_run(call.value).map(|run| jailed_span(&run, ids, span.start, at));
        self.emit(span);
        if let Some(child) = jailed {
            self.emit(child);
        }
    }
}

/// The `run_jailed` span of `run`, the child of the call `parent` that ran it from `start`
/// (its program ran at most until `call_end`).
fn jailed_span(
    run: &CodeResultData,
    parent: TraceParent,
    start: SystemTime,
    call_end: SystemTime,
) -> FinishedSpan {
    let end = (start + Duration::from_millis(run.duration_ms)).min(call_end);
    let mut child = FinishedSpan::new(
        format!("run_jailed {}", first_word(&run.command)),
        SpanKind::Internal,
        parent.child(),
        start,
        end,
    );
    child.parent = Some((parent.span_id, false));
    child.set(attr::JAIL_COMMAND, run.command.clone());
    child.set_some(attr::JAIL_EXIT_CODE, run.exit_code.map(i64::from));
    child.set_some(attr::JAIL_SIGNAL, run.signal.map(i64::from));
    child.set(attr::JAIL_TIMED_OUT, run.timed_out);
    child.set(attr::JAIL_CHANGED_FILES, run.changes.is_some());
    if let Some(limits) = &run.limits {
        child.set(attr::JAIL_WALL_LIMIT_MS, to_i64(limits.wall_ms));
        child.set(attr::JAIL_CPU_LIMIT_SECS, to_i64(limits.cpu_secs));
        child.set(attr::JAIL_MEMORY_LIMIT_BYTES, to_i64(limits.memory_bytes));
        child.set(
            attr::JAIL_RUN_MEMORY_LIMIT_BYTES,
            to_i64(limits.run_memory_bytes),
        );
        child.set(attr::JAIL_PROCESSES_LIMIT, to_i64(limits.processes));
        child.set(attr::JAIL_NETWORK, limits.network.clone());
    }
    if !run.weakened.is_empty() {
        child.attributes.push(KeyValue::new(
            attr::JAIL_WEAKENED,
            string_array(&run.weakened),
        ));
    }
    match (run.timed_out, run.signal, run.exit_code) {
        (true, _, _) => child.fail("timeout", "the wall-clock limit ended the run"),
        (false, Some(signal), _) => child.fail("signal", &format!("killed by signal {signal}")),
        (false, None, Some(code)) if code != 0 => child.fail("exit_code", &format!("exit {code}")),
        (false, None, _) => {}
    }
    child
}

/// The program run of a `code_result` (a `run_code` or `shell` call).
fn jailed_run(value: &ToolResultValue) -> Option<CodeResultData> {
    (value.kind == "code_result")
        .then(|| value.data_as::<CodeResultData>())
        .flatten()
}

fn first_word(command: &str) -> &str {
    command.split_whitespace().next().unwrap_or(command)
}

fn status_name(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Success => "success",
        ToolStatus::Error => "error",
        ToolStatus::Denied => "denied",
        ToolStatus::Blocked => "blocked",
        ToolStatus::Interrupted => "interrupted",
    }
}
