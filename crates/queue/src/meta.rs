//! What a queued batch runs, stored with it: every consumer runs its items the same way, with
//! the worker found in its own program root.

use golem_protocol::ApprovalMode;
use serde::{Deserialize, Serialize};

/// A queued batch's settings (`golem-forge:batch:<name>:meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueMeta {
    /// The worker as a path relative to the program root (`/`-separated), found by each
    /// consumer under its own `--root`.
    pub worker: String,
    /// SHA-256 of the items, hex: enqueueing the same items again under the name is a no-op.
    pub input_hash: String,
    /// How many items.
    pub items: usize,
    /// When the batch was queued, RFC 3339 in UTC.
    pub queued: String,
    /// The model for every item, when the batch names one (else the worker's, or the
    /// consumer's `GOLEM_FORGE_MODEL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// How calls that need consent are decided (else each consumer's config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalMode>,
    /// Most model turns of each item's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
    /// Deliveries after which an item is given up (the dead-letter list).
    pub max_deliveries: u32,
}
