//! Batches: the result of one item of a `golem-forge batch`, one JSON line each in the batch's
//! `results.jsonl` (and `--output`), and what `batch results` prints.

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

fn first_attempt() -> u32 {
    1
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
}
