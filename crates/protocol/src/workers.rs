//! The live tree of workers and their budgets: what `workerStarted`, `workerProgress`,
//! `workerFinished`, `usage` and `sessionStatus` say about each running worker (its id, its
//! parent's id, what it has spent, the tool it runs, whether it waits on an approval) and about
//! the budget it runs under; which worker an event comes from (`WorkerOrigin`) and token counts
//! (`TokenUsage`). The events that carry these are in `events.rs`.

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

impl TokenUsage {
    /// Adds another count to this one.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
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
