//! The events of `golem-forge test --json`: one JSON line each on stdout while a worker's test
//! cases run (docs/protocol.md, "Test events"; the file format is docs/testing.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::workers::TokenUsage;

/// `golem-forge test --json` → its reader.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum TestEvent {
    /// A run of a case began.
    TestStarted {
        /// The case's name.
        case: String,
        /// The worker it tests, by name.
        worker: String,
        /// Which run of the case (1 for the first).
        run: u32,
    },
    /// A run of a case ended.
    TestFinished {
        /// The case's name.
        case: String,
        /// The worker it tests, by name.
        worker: String,
        /// Which run of the case.
        run: u32,
        /// Whether every expectation held.
        passed: bool,
        /// One message per expectation that did not hold (or why the case could not run),
        /// naming the expectation and what happened instead.
        failures: Vec<String>,
        /// Tokens the run used, every worker's.
        usage: TokenUsage,
        /// What the run cost in US dollars, when the models' prices are known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
        /// How long the run took.
        duration_ms: u64,
    },
    /// Every case ran: how many runs passed and failed.
    TestsEnded {
        /// Runs whose expectations all held.
        passed: u32,
        /// Runs with a failed expectation.
        failed: u32,
    },
}
