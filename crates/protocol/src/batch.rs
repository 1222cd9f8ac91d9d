//! Batches: the result of one item of a `golem-forge batch`, one JSON line each in the batch's
//! `results.jsonl` (and `--output`), and what `batch results` prints; and the events of
//! `batch --json`, one JSON line each on stdout while a batch runs (docs/protocol.md, "Batch
//! events").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::workers::TokenUsage;

/// How one item of a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemStatus {
    /// The worker answered.
    Completed,
    /// The run failed (a model error, `max_iterations`, a worker that cannot start).
    Failed,
    /// The item's own budget (the worker's `budget:`) ran out.
    BudgetExceeded,
    /// A tool call waits for an approval; the item continues once it is answered.
    WaitingApproval,
    /// The batch was interrupted while the item ran.
    Interrupted,
}

impl ItemStatus {
    /// The status as written (`completed`, `budgetExceeded`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemStatus::Completed => "completed",
            ItemStatus::Failed => "failed",
            ItemStatus::BudgetExceeded => "budgetExceeded",
            ItemStatus::WaitingApproval => "waitingApproval",
            ItemStatus::Interrupted => "interrupted",
        }
    }
}

/// The result of one run of one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemResult {
    /// The item's id (from its line, else its line number).
    pub id: String,
    /// How it ended.
    pub status: ItemStatus,
    /// The final answer (empty unless completed).
    #[serde(default)]
    pub answer: String,
    /// The answer as a JSON value, for a worker that declares an output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    /// Tokens the item used, every worker's.
    #[serde(default)]
    pub usage: TokenUsage,
    /// What the item cost in US dollars, when the models' prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The item's session (its transcript), when one was opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Why it did not complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Which run of the item this is (1 for the first; retries and resumes count up).
    #[serde(default = "first_attempt")]
    pub attempt: u32,
}

impl ItemResult {
    /// A failed result of run `attempt` of item `id`, with nothing else known yet.
    pub fn failed(id: impl Into<String>, attempt: u32) -> ItemResult {
        ItemResult {
            id: id.into(),
            status: ItemStatus::Failed,
            answer: String::new(),
            output: None,
            usage: TokenUsage::default(),
            cost: None,
            session: None,
            error: None,
            attempt,
        }
    }
}

fn first_attempt() -> u32 {
    1
}

/// What `golem-forge batch --json` prints on stdout while a batch runs, one object per line:
/// `batchStarted` first, `batchEnded` last, and between them an `itemStarted` for each run of
/// an item (a retry is a new run) and an `itemFinished` then a `batchProgress` for each item
/// that ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum BatchEvent {
    /// First line: the batch is about to run its items.
    BatchStarted {
        /// The batch's id: its directory under `.golem-forge/batches/`, and the ID of
        /// `batch status`, `results` and `resume`.
        batch_id: String,
        /// The worker file, as an absolute path.
        worker: String,
        /// Items this run will run (on a resumed batch, those not done yet).
        total: u64,
        /// Items running at once, at most.
        concurrency: u64,
        /// Whether this run continues a batch that ran before (`batch resume`, or the same
        /// command again).
        resumed: bool,
    },
    /// A run of an item started (again with a higher `attempt` when a failed item is retried).
    ItemStarted {
        /// The item's id.
        id: String,
        /// Which run of the item this is (1 for the first).
        attempt: u32,
    },
    /// An item ended; `result` is the line appended to the batch's `results.jsonl`. A failed
    /// run that is retried has no `itemFinished`: only the item's last run has.
    ItemFinished {
        /// The item's result.
        result: ItemResult,
    },
    /// Where the batch stands, after each `itemFinished`.
    BatchProgress {
        /// Items of this run.
        total: u64,
        /// Items that completed.
        completed: u64,
        /// Items that failed (after their retries).
        failed: u64,
        /// Items that ran out of their own budget or were interrupted.
        other: u64,
        /// Items running now.
        running: u64,
        /// Items waiting for an approval.
        waiting_approval: u64,
        /// Tokens of every kind used so far, all items together.
        tokens: u64,
        /// US dollars spent so far, when a model's price is known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
    /// Last line: the run is over, with the counts of this run.
    BatchEnded {
        /// Items that completed.
        completed: u64,
        /// Items that failed (after their retries).
        failed: u64,
        /// Items that ran out of their own budget or were interrupted.
        other: u64,
        /// Items waiting for an approval.
        waiting_approval: u64,
        /// Items of this run that never started (the batch's budget, an interrupt).
        not_run: u64,
        /// The process's exit code (0 all completed, 1 some did not, 3 the batch's budget ran
        /// out, 4 some wait for an approval, 130 interrupted).
        exit_code: u8,
        /// Tokens used by this run, all items together.
        usage: TokenUsage,
        /// What this run cost in US dollars, when a model's price is known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_result_line_reads_back_and_leaves_out_what_is_absent() {
        let result = ItemResult {
            id: "7".into(),
            status: ItemStatus::BudgetExceeded,
            answer: String::new(),
            output: None,
            usage: TokenUsage {
                input_tokens: 10,
                output_tokens: 2,
                ..TokenUsage::default()
            },
            cost: None,
            session: Some("20261127-100000-abcd".into()),
            error: Some("the token budget ran out".into()),
            attempt: 2,
        };
        let line = serde_json::to_value(&result).unwrap();
        assert_eq!(
            line,
            json!({"id": "7", "status": "budgetExceeded", "answer": "",
                   "usage": {"inputTokens": 10, "outputTokens": 2},
                   "session": "20261127-100000-abcd", "error": "the token budget ran out",
                   "attempt": 2})
        );
        assert_eq!(serde_json::from_value::<ItemResult>(line).unwrap(), result);
        assert_eq!(ItemStatus::WaitingApproval.as_str(), "waitingApproval");
    }

    #[test]
    fn batch_events_are_tagged_by_type_in_camel_case() {
        let started = BatchEvent::BatchStarted {
            batch_id: "20261127-100000-abcd".into(),
            worker: "/p/w.worker".into(),
            total: 3,
            concurrency: 4,
            resumed: false,
        };
        assert_eq!(
            serde_json::to_value(&started).unwrap(),
            json!({"type": "batchStarted", "batchId": "20261127-100000-abcd",
                   "worker": "/p/w.worker", "total": 3, "concurrency": 4, "resumed": false})
        );
        let ended = json!({"type": "batchEnded", "completed": 2, "failed": 1, "other": 0,
                           "waitingApproval": 0, "notRun": 0, "exitCode": 1,
                           "usage": {"inputTokens": 30, "outputTokens": 15}});
        let event: BatchEvent = serde_json::from_value(ended.clone()).unwrap();
        assert!(matches!(
            event,
            BatchEvent::BatchEnded {
                failed: 1,
                exit_code: 1,
                cost: None,
                ..
            }
        ));
        assert_eq!(serde_json::to_value(&event).unwrap(), ended);
        let finished = json!({"type": "itemFinished", "result": {"id": "a", "status": "completed",
            "answer": "Done.", "usage": {"inputTokens": 10, "outputTokens": 5}, "attempt": 1}});
        let event: BatchEvent = serde_json::from_value(finished.clone()).unwrap();
        assert_eq!(serde_json::to_value(&event).unwrap(), finished);
    }
}
