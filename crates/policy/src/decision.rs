//! A decision as written in configuration (`preApproved`, `ask`, `blocked`), for a tool, a
//! zone or a default.

use serde::{Deserialize, Serialize};

use crate::ApprovalRequirement;

/// A configured decision: `preApproved`, `ask` or `blocked`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalDecisionType {
    /// Runs without asking.
    PreApproved,
    /// Asks first (the secure default).
    #[default]
    Ask,
    /// Never runs.
    Blocked,
}

impl ApprovalDecisionType {
    /// The requirement this decision stands for; `what` names the blocked operation.
    pub fn requirement(self, what: &str) -> ApprovalRequirement {
        match self {
            ApprovalDecisionType::PreApproved => ApprovalRequirement::PreApproved,
            ApprovalDecisionType::Ask => ApprovalRequirement::Ask,
            ApprovalDecisionType::Blocked => {
                ApprovalRequirement::blocked(format!("{what} is blocked by configuration"))
            }
        }
    }

    /// The name used in configuration files.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecisionType::PreApproved => "preApproved",
            ApprovalDecisionType::Ask => "ask",
            ApprovalDecisionType::Blocked => "blocked",
        }
    }
}
