//! A session's spans, assembled from its display events as they happen (or as a transcript
//! recorded them): one `invoke_agent {worker}` span per run of a worker, a delegated worker's
//! the child of the tool call that started it; one `chat {model}` span per model request; one
//! `execute_tool {tool}` span per tool call, the approval in `golem_forge.approval.*`, a jailed
//! program's run as its child; compactions and elisions as spans of their own. Each run of the
//! root worker (a turn) is a trace of its own, or the child of the span the session was handed
//! ([`TraceOrigin::parent`]: a queued batch item's, a parked turn's).

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use golem_protocol::{DisplayEvent, ModelCall, TokenUsage, WorkerOrigin};
use opentelemetry::trace::{SpanId, SpanKind};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::SpanData;

use crate::span::{FinishedSpan, attr};
use crate::traceparent::TraceParent;
use tool_calls::{OpenTool, ToolCallEnd};

mod tool_calls;

/// Where a session's traces hang and what its root spans say about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceOrigin {
    /// Each run of the root worker is a child of this span, in its trace (a queued item's
    /// span, or the turn a continuation continues); without one each run starts a trace.
    pub parent: Option<TraceParent>,
    /// Spans every root span links to (the batch the session is an item of).
    pub links: Vec<TraceParent>,
    /// The batch the session is an item of.
    pub batch_id: Option<String>,
    /// Its item.
    pub item_id: Option<String>,
}

/// Where finished spans go.
pub type SpanSink = Box<dyn FnMut(SpanData) + Send>;

/// A running worker's span.
#[derive(Debug)]
struct OpenWorker {
    ids: TraceParent,
    parent: Option<(SpanId, bool)>,
    name: String,
    model: Option<String>,
    depth: u32,
    started: SystemTime,
}

/// The spans of one session, built event by event.
pub struct SessionTracer {
    origin: TraceOrigin,
    capture_content: bool,
    sink: SpanSink,
    session_id: String,
    root_worker: String,
    /// By worker id.
    workers: HashMap<String, OpenWorker>,
    /// The running root worker's id.
    root: Option<String>,
    /// By call id.
    tools: HashMap<String, OpenTool>,
    /// The user's input of the turn in progress (recorded only when content is captured).
    input: Option<String>,
    /// The root run's span, ended, kept until `turnEnded` brings the answer.
    ended_root: Option<FinishedSpan>,
}

impl std::fmt::Debug for SessionTracer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTracer")
            .field("session_id", &self.session_id)
            .field("origin", &self.origin)
            .finish_non_exhaustive()
    }
}

impl SessionTracer {
    /// A tracer handing each finished span to `sink`.
    pub fn new(origin: TraceOrigin, capture_content: bool, sink: SpanSink) -> SessionTracer {
        SessionTracer {
            origin,
            capture_content,
            sink,
            session_id: String::new(),
            root_worker: String::new(),
            workers: HashMap::new(),
            root: None,
            tools: HashMap::new(),
            input: None,
            ended_root: None,
        }
    }

    /// Takes in one event that happened at `at`.
    pub fn observe(&mut self, at: SystemTime, event: &DisplayEvent) {
        match event {
            DisplayEvent::SessionStarted {
                session_id, worker, ..
            } => {
                self.session_id = session_id.clone();
                self.root_worker = worker.clone();
            }
            DisplayEvent::Message { message, worker } => {
                if worker.is_none()
                    && message.role == golem_protocol::Role::User
                    && self.capture_content
                {
                    self.input = Some(message.content.clone());
                }
            }
            DisplayEvent::WorkerStarted {
                worker_id,
                parent_id,
                worker_name,
                depth,
                model,
                parent_tool_call_id,
                trace_context,
                trace_parent,
                ..
            } => self.worker_started(
                at,
                WorkerStart {
                    worker_id,
                    parent_id: parent_id.as_deref(),
                    name: worker_name,
                    depth: *depth,
                    model: model.clone(),
                    parent_tool_call_id: parent_tool_call_id.as_deref(),
                    context: trace_context.as_deref().and_then(TraceParent::parse),
                    parent: trace_parent.as_deref().and_then(TraceParent::parse),
                },
            ),
            DisplayEvent::WorkerFinished {
                worker_id,
                success,
                error,
                usage,
                ..
            } => self.worker_finished(at, worker_id, *success, error.as_deref(), usage.as_ref()),
            DisplayEvent::Usage {
                usage,
                model,
                worker,
                call: Some(call),
                ..
            } => self.model_call(at, usage, model.as_deref(), worker.as_ref(), call),
            DisplayEvent::ApprovalRequired(request) => self.approval_asked(at, request),
            DisplayEvent::ApprovalDeferred { request, inbox_id } => {
                self.approval_deferred(at, request, *inbox_id);
            }
            DisplayEvent::ApprovalResolved(resolved) => self.approval_resolved(at, resolved),
            DisplayEvent::ToolStarted {
                tool_call_id,
                tool_name,
                args,
                worker,
                ..
            } => self.tool_started(at, tool_call_id, tool_name, args, worker.as_ref()),
            DisplayEvent::ToolResult {
                tool_call_id,
                tool_name,
                status,
                args,
                value,
                duration_ms,
                invoked_by,
                worker,
                ..
            } => {
                let call = ToolCallEnd {
                    tool_call_id,
                    tool_name,
                    status: *status,
                    args: args.as_ref(),
                    value,
                    duration_ms: *duration_ms,
                    manual: matches!(invoked_by, golem_protocol::InvokedBy::User),
                    worker: worker.as_ref(),
                };
                self.tool_finished(at, call);
            }
            DisplayEvent::ContextCompacted {
                reason,
                tokens_before,
                tokens_after,
                messages_replaced,
                duration_ms,
                worker,
                ..
            } => {
                let Some((ids, parent)) = self.child_of_worker(worker.as_ref()) else {
                    return;
                };
                let start = before(at, *duration_ms);
                let mut span = FinishedSpan::new(
                    format!("compact_context {}", self.worker_name(worker.as_ref())),
                    SpanKind::Internal,
                    ids,
                    start,
                    at,
                );
                span.parent = Some(parent);
                span.set(attr::COMPACTION_REASON, reason.as_str());
                span.set(attr::TOKENS_BEFORE, to_i64(*tokens_before));
                span.set(attr::TOKENS_AFTER, to_i64(*tokens_after));
                span.set(attr::MESSAGES_REPLACED, to_i64(*messages_replaced));
                self.emit(span);
            }
            DisplayEvent::ContextElided {
                tokens_before,
                tokens_after,
                window,
                results,
                worker,
                ..
            } => {
                let Some((ids, parent)) = self.child_of_worker(worker.as_ref()) else {
                    return;
                };
                let mut span = FinishedSpan::new(
                    format!("elide_context {}", self.worker_name(worker.as_ref())),
                    SpanKind::Internal,
                    ids,
                    at,
                    at,
                );
                span.parent = Some(parent);
                span.set(attr::TOKENS_BEFORE, to_i64(*tokens_before));
                span.set(attr::TOKENS_AFTER, to_i64(*tokens_after));
                span.set(attr::WINDOW, to_i64(*window));
                span.set(attr::RESULTS_ELIDED, to_i64(*results));
                self.emit(span);
            }
            DisplayEvent::TurnEnded { response, .. } => {
                if let Some(mut root) = self.ended_root.take() {
                    if self.capture_content
                        && let Some(response) = response
                    {
                        root.set(attr::OUTPUT_MESSAGES, messages_json("assistant", response));
                    }
                    self.emit(root);
                }
                self.input = None;
            }
            DisplayEvent::SessionEnded { .. } => self.finish(at),
            DisplayEvent::Streaming { .. }
            | DisplayEvent::Usage { call: None, .. }
            | DisplayEvent::InputRequired { .. }
            | DisplayEvent::InputResolved { .. }
            | DisplayEvent::Status { .. }
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::WorkerProgress(_)
            | DisplayEvent::ActionResult(_)
            | DisplayEvent::SessionStatus(_)
            | DisplayEvent::ApprovalsRemembered { .. } => {}
        }
    }

    /// Ends what is still open at `at` (the session ended, or the recording stops).
    pub fn finish(&mut self, at: SystemTime) {
        let mut open: Vec<String> = self.workers.keys().cloned().collect();
        open.sort_by_key(|id| std::cmp::Reverse(self.workers.get(id).map_or(0, |w| w.depth)));
        for id in open {
            self.worker_finished(at, &id, false, Some("the session ended first"), None);
        }
        if let Some(root) = self.ended_root.take() {
            self.emit(root);
        }
        // Calls without a result: parked in the inbox (the turn waits for an answer), or cut
        // off with the session.
        let mut open: Vec<(String, OpenTool)> = self.tools.drain().collect();
        open.sort_by_key(|(_, tool)| tool.seen);
        for (id, tool) in open {
            let span = self.tool_span(tool, &id, at, None);
            self.emit(span);
        }
    }

    fn emit(&mut self, span: FinishedSpan) {
        (self.sink)(span.into_span_data());
    }

    /// The open worker an event's origin names (the root worker without one).
    fn worker_id(&self, origin: Option<&WorkerOrigin>) -> Option<String> {
        match origin {
            Some(origin) if !origin.id.is_empty() && self.workers.contains_key(&origin.id) => {
                Some(origin.id.clone())
            }
            Some(origin) => self
                .workers
                .iter()
                .find(|(_, w)| w.name == origin.name && w.depth == origin.depth)
                .map(|(id, _)| id.clone()),
            None => self.root.clone(),
        }
    }

    fn worker_name(&self, origin: Option<&WorkerOrigin>) -> String {
        match origin {
            Some(origin) => origin.name.clone(),
            None => self.root_worker.clone(),
        }
    }

    /// New span ids under the worker of `origin`, and the parent reference.
    fn child_of_worker(
        &self,
        origin: Option<&WorkerOrigin>,
    ) -> Option<(TraceParent, (SpanId, bool))> {
        let id = self.worker_id(origin)?;
        let worker = self.workers.get(&id)?;
        Some((worker.ids.child(), (worker.ids.span_id, false)))
    }

    fn worker_started(&mut self, at: SystemTime, start: WorkerStart<'_>) {
        let WorkerStart {
            worker_id,
            parent_id,
            name,
            depth,
            model,
            parent_tool_call_id,
            ..
        } = start;
        let (ids, parent) = if depth == 0 {
            // The run's own ids when the event has them (always, since protocol 1.16); else
            // made up here, under the origin's span.
            let (ids, parent) = match (start.context, start.parent) {
                (Some(ids), parent) => (ids, parent),
                (None, _) => match &self.origin.parent {
                    Some(parent) => (parent.child(), Some(*parent)),
                    None => (TraceParent::new_trace(), None),
                },
            };
            let parent = parent.map(|p| (p.span_id, true));
            self.root = Some(worker_id.to_owned());
            if self.root_worker.is_empty() {
                self.root_worker = name.to_owned();
            }
            (ids, parent)
        } else if let Some(tool) = parent_tool_call_id.and_then(|id| self.tools.get(id)) {
            (tool.ids.child(), Some((tool.ids.span_id, false)))
        } else if let Some(parent) = parent_id.and_then(|id| self.workers.get(id)) {
            (parent.ids.child(), Some((parent.ids.span_id, false)))
        } else {
            (TraceParent::new_trace(), None)
        };
        self.workers.insert(
            worker_id.to_owned(),
            OpenWorker {
                ids,
                parent,
                name: name.to_owned(),
                model,
                depth,
                started: at,
            },
        );
    }

    fn worker_finished(
        &mut self,
        at: SystemTime,
        worker_id: &str,
        success: bool,
        error: Option<&str>,
        usage: Option<&TokenUsage>,
    ) {
        let Some(worker) = self.workers.remove(worker_id) else {
            return;
        };
        let mut span = FinishedSpan::new(
            format!("invoke_agent {}", worker.name),
            SpanKind::Internal,
            worker.ids,
            worker.started,
            at,
        );
        span.parent = worker.parent;
        span.set(attr::OPERATION, "invoke_agent");
        span.set(attr::AGENT_NAME, worker.name.clone());
        if !worker_id.is_empty() {
            span.set(attr::AGENT_ID, worker_id.to_owned());
        }
        if let Some(model) = &worker.model {
            let (provider, request_model) = split_model(model);
            span.set_some(attr::PROVIDER, provider.map(str::to_owned));
            span.set(attr::REQUEST_MODEL, request_model.to_owned());
        }
        span.set(attr::CONVERSATION_ID, self.session_id.clone());
        if let Some(usage) = usage {
            set_usage(&mut span, usage);
        }
        if worker.depth == 0 {
            span.set(attr::SESSION_ID, self.session_id.clone());
            span.set(attr::WORKER, self.root_worker.clone());
            span.set_some(attr::BATCH_ID, self.origin.batch_id.clone());
            span.set_some(attr::ITEM_ID, self.origin.item_id.clone());
            span.links = self.origin.links.clone();
            if let Some(input) = &self.input {
                span.set(attr::INPUT_MESSAGES, messages_json("user", input));
            }
            self.root = None;
        }
        if !success {
            span.fail(
                "worker_failed",
                error.unwrap_or("the worker produced no answer"),
            );
        }
        if worker.depth == 0 {
            if let Some(previous) = self.ended_root.replace(span) {
                self.emit(previous);
            }
        } else {
            self.emit(span);
        }
    }

    fn model_call(
        &mut self,
        at: SystemTime,
        usage: &TokenUsage,
        model: Option<&str>,
        origin: Option<&WorkerOrigin>,
        call: &ModelCall,
    ) {
        let Some((ids, parent)) = self.child_of_worker(origin) else {
            return;
        };
        let start = before(at, call.duration_ms);
        let request_model = if call.request_model.is_empty() {
            model
                .map(|m| split_model(m).1.to_owned())
                .unwrap_or_default()
        } else {
            call.request_model.clone()
        };
        let mut span = FinishedSpan::new(
            format!("chat {request_model}"),
            SpanKind::Client,
            ids,
            start,
            at,
        );
        span.parent = Some(parent);
        span.set(attr::OPERATION, "chat");
        span.set(attr::PROVIDER, call.provider.clone());
        span.set(attr::REQUEST_MODEL, request_model);
        span.set_some(attr::RESPONSE_MODEL, call.response_model.clone());
        span.set_some(attr::RESPONSE_ID, call.response_id.clone());
        if !call.finish_reasons.is_empty() {
            span.attributes.push(KeyValue::new(
                attr::FINISH_REASONS,
                string_array(&call.finish_reasons),
            ));
        }
        set_usage(&mut span, usage);
        span.set_some(attr::SERVER_ADDRESS, call.server_address.clone());
        span.set_some(attr::SERVER_PORT, call.server_port.map(i64::from));
        span.set(attr::CONVERSATION_ID, self.session_id.clone());
        span.set(attr::RETRIES, i64::from(call.retries));
        span.set(attr::RETRY_WAIT_MS, to_i64(call.retry_wait_ms));
        span.set(attr::RATE_LIMIT_WAIT_MS, to_i64(call.rate_limit_wait_ms));
        span.set(attr::PURPOSE, call.purpose.as_str());
        if let Some(error) = &call.error {
            span.fail("model_request_failed", error);
        }
        self.emit(span);
    }
}

/// A worker run's start, as `workerStarted` tells it.
struct WorkerStart<'a> {
    worker_id: &'a str,
    parent_id: Option<&'a str>,
    name: &'a str,
    depth: u32,
    model: Option<String>,
    parent_tool_call_id: Option<&'a str>,
    context: Option<TraceParent>,
    parent: Option<TraceParent>,
}

/// `ms` milliseconds before `at` (`at` itself for a duration no clock can go back by: a damaged
/// recording).
fn before(at: SystemTime, ms: u64) -> SystemTime {
    at.checked_sub(Duration::from_millis(ms)).unwrap_or(at)
}

/// `provider:model` split; a name without a provider is all model.
fn split_model(model: &str) -> (Option<&str>, &str) {
    match model.split_once(':') {
        Some((provider, name)) => (Some(provider), name),
        None => (None, model),
    }
}

fn set_usage(span: &mut FinishedSpan, usage: &TokenUsage) {
    let input = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens;
    span.set(attr::INPUT_TOKENS, to_i64(input));
    span.set(attr::OUTPUT_TOKENS, to_i64(usage.output_tokens));
    if usage.cache_read_tokens > 0 {
        span.set(attr::CACHE_READ_TOKENS, to_i64(usage.cache_read_tokens));
    }
    if usage.cache_write_tokens > 0 {
        span.set(
            attr::CACHE_CREATION_TOKENS,
            to_i64(usage.cache_write_tokens),
        );
    }
}

/// Messages as the conventions' `gen_ai.input.messages` writes them: a JSON array of
/// `{role, parts: [{type: text, content}]}`.
fn messages_json(role: &str, text: &str) -> String {
    serde_json::json!([{ "role": role, "parts": [{ "type": "text", "content": text }] }])
        .to_string()
}

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A string array attribute value.
fn string_array(items: &[String]) -> Value {
    Value::Array(
        items
            .iter()
            .map(|item| item.clone().into())
            .collect::<Vec<opentelemetry::StringValue>>()
            .into(),
    )
}
