//! The live tree of workers and their budgets: what `workerStarted`, `workerProgress`,
//! `workerFinished`, `usage` and `sessionStatus` say about each running worker (its id, its
//! parent's id, what it has spent, the tool it runs, whether it waits on an approval) and about
//! the budget it runs under. The events that carry these are in `events.rs`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::events::TokenUsage;

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
