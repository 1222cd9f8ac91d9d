//! The live tree of workers and their budgets: what `workerStarted`, `workerProgress`,
//! `workerFinished`, `usage` and `sessionStatus` say about each running worker (its id, its
//! parent's id, what it has spent, the tool it runs, whether it waits on an approval) and about
//! the budget it runs under; which worker an event comes from (`WorkerOrigin`) and token counts
//! (`TokenUsage`); what one model request was and took (`ModelCall`); how full a context is and the line an elision is shown as. The events that
//! carry these are in `events.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The worker an event comes from, for events of delegated workers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerOrigin {
    /// The worker's name.
    pub name: String,
    /// Its depth in the delegation tree (0 is the root).
    pub depth: u32,
    /// Its id in the tree of workers (as in its `workerStarted`; absent in transcripts written
    /// before protocol 1.2).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
}

/// Token counts. The input of a request is `input_tokens + cache_read_tokens +
/// cache_write_tokens`: `input_tokens` are the ones billed at the full input price (providers
/// that count cached tokens in their input total have them taken out).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Input tokens neither read from nor written to the provider's cache.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// Input tokens served from the provider's cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}

impl TokenUsage {
    /// Adds another count to this one.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// One model request as it went: who answered, how it ended, what it took (the `call` of a
/// `usage` event; for traces and audits). A request that failed after its retries has `error`
/// set and the `usage` event counts what was counted of it, usually nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelCall {
    /// The provider's name as in `provider:model` (`openai`, `anthropic`, `test`, `replay`,
    /// `script`, or one defined in program config).
    pub provider: String,
    /// The model asked for, without the provider (for `replay:`, the recording's path).
    pub request_model: String,
    /// The model as the provider's answer named it, when it did (a dated version of an alias,
    /// say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    /// The provider's id of the response, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// Why the answer ended, as OpenTelemetry's GenAI conventions name it (`stop`,
    /// `tool_call`, `length`, `content_filter`) or, for other reasons, as the provider did;
    /// empty when no answer came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub finish_reasons: Vec<String>,
    /// The host of the endpoint asked; absent for models answered in process (`test`,
    /// `replay:`, scripted ones).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_address: Option<String>,
    /// The endpoint's port (the scheme's default when its URL names none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_port: Option<u16>,
    /// From the start of the first attempt to the end of the last, retries and their waits
    /// included.
    pub duration_ms: u64,
    /// How often the request was tried again (HTTP retries before a stream started, and
    /// retries of the whole request after a stream broke off).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub retries: u32,
    /// Time spent waiting before retries, and at the shared rate gate of a batch.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_wait_ms: u64,
    /// The part of `retry_wait_ms` owed to rate limits (429 or overloaded answers, the shared
    /// rate gate's pauses included).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_limit_wait_ms: u64,
    /// What the request was for.
    pub purpose: ModelCallPurpose,
    /// Why the request failed, when it did after its retries (an interrupted request emits no
    /// `usage` event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a model request was for (`ModelCall::purpose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ModelCallPurpose {
    /// A step of the worker's turn: the answer the worker acts on.
    Conversation,
    /// The summary request of a compaction (`contextCompacted`).
    Summary,
}

impl ModelCallPurpose {
    /// The purpose as the protocol writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelCallPurpose::Conversation => "conversation",
            ModelCallPurpose::Summary => "summary",
        }
    }
}

/// How full a worker's context is: the tokens its last model call held (prompt, cached parts
/// included, and answer) against its model's context window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextFill {
    /// Tokens in the context after the call.
    pub used: u64,
    /// The model's context window in tokens.
    pub window: u64,
}

impl ContextFill {
    /// How full the context is, in whole percent (rounded down; 0 for an empty window).
    pub fn percent(&self) -> u64 {
        self.used
            .saturating_mul(100)
            .checked_div(self.window)
            .unwrap_or(0)
    }
}

/// The status line a front end shows for a `contextElided` event, from its fields:
/// `context 71 % full: elided 3 old tool results (about 12000 tokens)`, or after a skipped
/// compaction (`harder`) `context 71 % full and too little to compact: elided 3 more tool
/// results (…)`; the percent is of the request before the elision.
pub fn elision_line(
    tokens_before: u64,
    tokens_after: u64,
    window: u64,
    results: u64,
    harder: bool,
) -> String {
    let fill = ContextFill {
        used: tokens_before,
        window,
    };
    let (why, which) = if harder {
        (" and too little to compact", "more")
    } else {
        ("", "old")
    };
    format!(
        "context {} % full{why}: elided {results} {which} tool result{} (about {} tokens)",
        fill.percent(),
        if results == 1 { "" } else { "s" },
        tokens_before.saturating_sub(tokens_after)
    )
}

/// What made a worker compact its history (`contextCompacted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CompactionReason {
    /// The next request would have passed the worker's `context.compact_at`.
    Threshold,
    /// The provider said the request does not fit the model's window; it is sent again.
    Overflow,
    /// The user asked (`/compact`, the `compact` action).
    Requested,
}

impl CompactionReason {
    /// The reason as the protocol writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            CompactionReason::Threshold => "threshold",
            CompactionReason::Overflow => "overflow",
            CompactionReason::Requested => "requested",
        }
    }
}

/// Amounts of a budget: the limits a worker runs under, or what is left of them. An absent
/// amount has no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetAmounts {
    /// Tokens, every kind counted (input, output, cache reads and writes), sub-workers'
    /// included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// US dollars, at the models' prices, sub-workers' included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Seconds of wall-clock time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
    /// Sub-workers that may be started below the worker, at any depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
}

impl BudgetAmounts {
    /// Whether no amount is limited.
    pub fn is_unlimited(&self) -> bool {
        self.tokens.is_none()
            && self.cost_usd.is_none()
            && self.wall_seconds.is_none()
            && self.workers.is_none()
    }
}

/// The root worker's budget as `sessionStatus` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BudgetStatus {
    /// The limits of each turn (the worker's `budget:` and the command line's, the tighter of
    /// the two).
    pub limits: BudgetAmounts,
    /// What is left: of the turn running now, else of the last turn (the limits before the
    /// first).
    pub remaining: BudgetAmounts,
}

/// Where a running worker stands (the `workerProgress` event), sent when it spends tokens,
/// starts or ends a tool call, or starts or stops waiting on an approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkerProgress {
    /// The worker's id in the tree (as in its `workerStarted`).
    pub worker_id: String,
    /// The id of the worker that delegated to it; absent for the root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// The worker's name.
    pub worker_name: String,
    /// Its depth (0 is the root).
    pub depth: u32,
    /// Its model, as `provider:model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Tokens spent so far in this run, its sub-workers' included.
    pub usage: TokenUsage,
    /// What they cost in US dollars, when the models' prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The tool call in progress (at the gate or running), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_tool: Option<String>,
    /// Whether it waits for someone to answer an approval.
    #[serde(default)]
    pub awaiting_approval: bool,
    /// What is left of its budget (the tightest of its own and its callers'), when it has
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetAmounts>,
}
