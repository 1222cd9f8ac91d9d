//! One finished span as this crate builds it ([`FinishedSpan`]), turned into the SDK's
//! `SpanData` for export; and the attribute names of the GenAI semantic conventions and of our
//! own `golem_forge.*` namespace, kept in one place.

use std::borrow::Cow;
use std::time::SystemTime;

use opentelemetry::trace::{SpanId, SpanKind, Status};
use opentelemetry::{InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use crate::traceparent::TraceParent;

/// Attribute names (OpenTelemetry GenAI semantic conventions, and ours).
pub mod attr {
    /// `chat`, `invoke_agent`, `execute_tool`.
    pub const OPERATION: &str = "gen_ai.operation.name";
    /// The provider's name (`openai`, `anthropic`, …).
    pub const PROVIDER: &str = "gen_ai.provider.name";
    /// The model asked for.
    pub const REQUEST_MODEL: &str = "gen_ai.request.model";
    /// The model that answered.
    pub const RESPONSE_MODEL: &str = "gen_ai.response.model";
    /// The provider's id of the answer.
    pub const RESPONSE_ID: &str = "gen_ai.response.id";
    /// Why the answer ended (a string array).
    pub const FINISH_REASONS: &str = "gen_ai.response.finish_reasons";
    /// Input tokens, cached ones included.
    pub const INPUT_TOKENS: &str = "gen_ai.usage.input_tokens";
    /// Output tokens.
    pub const OUTPUT_TOKENS: &str = "gen_ai.usage.output_tokens";
    /// Input tokens served from the provider's cache.
    pub const CACHE_READ_TOKENS: &str = "gen_ai.usage.cache_read.input_tokens";
    /// Input tokens written to the provider's cache.
    pub const CACHE_CREATION_TOKENS: &str = "gen_ai.usage.cache_creation.input_tokens";
    /// The session's id: every span of a session carries it.
    pub const CONVERSATION_ID: &str = "gen_ai.conversation.id";
    /// The worker's name.
    pub const AGENT_NAME: &str = "gen_ai.agent.name";
    /// The worker's id in the tree of workers.
    pub const AGENT_ID: &str = "gen_ai.agent.id";
    /// The tool.
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// The call's id.
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// `function` (a tool the model calls) or `extension` (one the user invokes by hand).
    pub const TOOL_TYPE: &str = "gen_ai.tool.type";
    /// The call's arguments (content: only when captured).
    pub const TOOL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
    /// The call's result (content: only when captured).
    pub const TOOL_RESULT: &str = "gen_ai.tool.call.result";
    /// What the run was asked (content: only when captured).
    pub const INPUT_MESSAGES: &str = "gen_ai.input.messages";
    /// What the run answered (content: only when captured).
    pub const OUTPUT_MESSAGES: &str = "gen_ai.output.messages";
    /// The endpoint's host.
    pub const SERVER_ADDRESS: &str = "server.address";
    /// The endpoint's port.
    pub const SERVER_PORT: &str = "server.port";
    /// What kind of failure ended the operation.
    pub const ERROR_TYPE: &str = "error.type";

    /// The session's id (also `gen_ai.conversation.id`).
    pub const SESSION_ID: &str = "golem_forge.session.id";
    /// The session's root worker.
    pub const WORKER: &str = "golem_forge.worker";
    /// The batch the session is an item of.
    pub const BATCH_ID: &str = "golem_forge.batch.id";
    /// The item of that batch.
    pub const ITEM_ID: &str = "golem_forge.batch.item";
    /// How many items a batch run (or the enqueueing of a queued batch) took.
    pub const BATCH_ITEMS: &str = "golem_forge.batch.items";
    /// Items of the run that completed.
    pub const BATCH_COMPLETED: &str = "golem_forge.batch.completed";
    /// Items that failed (after their retries).
    pub const BATCH_FAILED: &str = "golem_forge.batch.failed";
    /// Items left waiting for an approval.
    pub const BATCH_WAITING_APPROVAL: &str = "golem_forge.batch.waiting_approval";
    /// Items that ended otherwise (their budget, an interrupt).
    pub const BATCH_OTHER: &str = "golem_forge.batch.other";
    /// Items not run (the batch's budget was spent, or it was cancelled).
    pub const BATCH_NOT_RUN: &str = "golem_forge.batch.not_run";
    /// How often the request was tried again.
    pub const RETRIES: &str = "golem_forge.model_call.retries";
    /// Time waited before retries, rate-limit waits included.
    pub const RETRY_WAIT_MS: &str = "golem_forge.model_call.retry_wait_ms";
    /// Time waited for rate limits.
    pub const RATE_LIMIT_WAIT_MS: &str = "golem_forge.model_call.rate_limit_wait_ms";
    /// What the request was for (`conversation`, `summary`).
    pub const PURPOSE: &str = "golem_forge.model_call.purpose";
    /// A tool call's outcome (`success`, `error`, `denied`, `blocked`, `interrupted`).
    pub const TOOL_STATUS: &str = "golem_forge.tool.status";
    /// What the gate required: `approval` (someone was asked), `none` (pre-approved by the
    /// tool's policy), `blocked` (refused by it).
    pub const APPROVAL_REQUIREMENT: &str = "golem_forge.approval.requirement";
    /// `approved`, `denied` or `deferred` (parked in the inbox).
    pub const APPROVAL_DECISION: &str = "golem_forge.approval.decision";
    /// Who decided (`user`, `session_memory`, `mode`, `policy`, `rule`).
    pub const APPROVAL_DECIDED_BY: &str = "golem_forge.approval.decided_by";
    /// How long the call waited for a person's answer.
    pub const APPROVAL_WAIT_MS: &str = "golem_forge.approval.wait_ms";
    /// The inbox number of a deferred call.
    pub const APPROVAL_INBOX_ID: &str = "golem_forge.approval.inbox_id";
    /// What a compaction was started by.
    pub const COMPACTION_REASON: &str = "golem_forge.context.compaction_reason";
    /// Estimated request tokens before a compaction or elision.
    pub const TOKENS_BEFORE: &str = "golem_forge.context.tokens_before";
    /// Estimated request tokens after.
    pub const TOKENS_AFTER: &str = "golem_forge.context.tokens_after";
    /// Messages a compaction replaced.
    pub const MESSAGES_REPLACED: &str = "golem_forge.context.messages_replaced";
    /// Tool results an elision replaced.
    pub const RESULTS_ELIDED: &str = "golem_forge.context.results_elided";
    /// The context window the elision kept under.
    pub const WINDOW: &str = "golem_forge.context.window";
    /// What a jailed program ran.
    pub const JAIL_COMMAND: &str = "golem_forge.jail.command";
    /// Its exit code.
    pub const JAIL_EXIT_CODE: &str = "golem_forge.jail.exit_code";
    /// The signal that ended it.
    pub const JAIL_SIGNAL: &str = "golem_forge.jail.signal";
    /// Whether the wall-clock limit ended it.
    pub const JAIL_TIMED_OUT: &str = "golem_forge.jail.timed_out";
    /// Jail layers that could not be applied (a string array).
    pub const JAIL_WEAKENED: &str = "golem_forge.jail.weakened";
    /// The run's wall-clock limit.
    pub const JAIL_WALL_LIMIT_MS: &str = "golem_forge.jail.limit.wall_ms";
    /// Its CPU seconds limit.
    pub const JAIL_CPU_LIMIT_SECS: &str = "golem_forge.jail.limit.cpu_secs";
    /// Address space per process.
    pub const JAIL_MEMORY_LIMIT_BYTES: &str = "golem_forge.jail.limit.memory_bytes";
    /// Memory of the whole run.
    pub const JAIL_RUN_MEMORY_LIMIT_BYTES: &str = "golem_forge.jail.limit.run_memory_bytes";
    /// Processes and threads.
    pub const JAIL_PROCESSES_LIMIT: &str = "golem_forge.jail.limit.processes";
    /// The network the run had (`none`, `internet`, `internet_private`).
    pub const JAIL_NETWORK: &str = "golem_forge.jail.network";
    /// Whether the run changed files in the zones.
    pub const JAIL_CHANGED_FILES: &str = "golem_forge.jail.changed_files";
}

/// The instrumentation scope of every span this program makes, sent or exported.
pub(crate) fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("golem-forge")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build()
}

/// A resource naming this program as the service `service_name` (`service.name`, and its
/// version as `service.version`), to which the caller adds what else it knows.
pub(crate) fn service_resource(service_name: &str) -> opentelemetry_sdk::resource::ResourceBuilder {
    opentelemetry_sdk::Resource::builder_empty()
        .with_service_name(service_name.to_owned())
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
}

/// A span as this crate assembles it, ready to hand to the exporter
/// ([`crate::Telemetry::send_finished`]).
#[derive(Debug, Clone)]
pub struct FinishedSpan {
    /// The span's name (`invoke_agent reviewer`).
    pub name: String,
    /// Its kind.
    pub kind: SpanKind,
    /// Its trace and its own span id.
    pub ids: TraceParent,
    /// The parent span and whether it was received from elsewhere.
    pub parent: Option<(SpanId, bool)>,
    /// When it started.
    pub start: SystemTime,
    /// When it ended.
    pub end: SystemTime,
    /// Its attributes, in order.
    pub attributes: Vec<KeyValue>,
    /// Events: name, time, attributes.
    pub events: Vec<(String, SystemTime, Vec<KeyValue>)>,
    /// Spans it links to (a batch item's root span links to the batch).
    pub links: Vec<TraceParent>,
    /// Set when it failed: the status message.
    pub error: Option<String>,
}

impl FinishedSpan {
    /// A span with nothing but its name, kind, ids and times.
    pub fn new(
        name: impl Into<String>,
        kind: SpanKind,
        ids: TraceParent,
        start: SystemTime,
        end: SystemTime,
    ) -> FinishedSpan {
        FinishedSpan {
            name: name.into(),
            kind,
            ids,
            parent: None,
            start: start.min(end),
            end,
            attributes: Vec::new(),
            events: Vec::new(),
            links: Vec::new(),
            error: None,
        }
    }

    /// Adds an attribute.
    pub fn set(&mut self, key: &'static str, value: impl Into<Value>) {
        self.attributes.push(KeyValue::new(key, value));
    }

    /// Adds an attribute when there is a value.
    pub fn set_some<V: Into<Value>>(&mut self, key: &'static str, value: Option<V>) {
        if let Some(value) = value {
            self.set(key, value);
        }
    }

    /// Marks the span failed: error status with `message`, `error.type`, and an `exception`
    /// event, as the conventions record errors.
    pub fn fail(&mut self, error_type: &str, message: &str) {
        self.set(attr::ERROR_TYPE, error_type.to_owned());
        self.events.push((
            "exception".to_owned(),
            self.end,
            vec![
                KeyValue::new("exception.type", error_type.to_owned()),
                KeyValue::new("exception.message", message.to_owned()),
            ],
        ));
        self.error = Some(message.to_owned());
    }

    /// The SDK's form of the span.
    pub fn into_span_data(self) -> SpanData {
        let (parent_span_id, parent_span_is_remote) =
            self.parent.unwrap_or((SpanId::INVALID, false));
        // Both are `non_exhaustive` with public fields: filled in from their defaults.
        let mut events = SpanEvents::default();
        events.events = self
            .events
            .into_iter()
            .map(|(name, at, attributes)| opentelemetry::trace::Event::new(name, at, attributes, 0))
            .collect();
        let mut links = SpanLinks::default();
        links.links = self
            .links
            .iter()
            .map(|link| opentelemetry::trace::Link::with_context(link.remote_context()))
            .collect();
        SpanData {
            span_context: self.ids.local_context(),
            parent_span_id,
            parent_span_is_remote,
            span_kind: self.kind,
            name: Cow::Owned(self.name),
            start_time: self.start,
            end_time: self.end,
            attributes: self.attributes,
            dropped_attributes_count: 0,
            events,
            links,
            status: match self.error {
                Some(message) => Status::error(message),
                None => Status::Unset,
            },
            instrumentation_scope: InstrumentationScope::default(),
        }
    }
}
