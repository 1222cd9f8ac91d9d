//! What a tool call requires before it may run.

use golem_protocol::{ToolError, ToolErrorCode};

/// The gate's input for one call, decided by the tool from its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalRequirement {
    /// Runs without asking.
    PreApproved,
    /// Runs only with consent (session memory, the mode, or the user).
    Ask,
    /// Never runs and is never offered for approval.
    Blocked {
        /// Why, shown to the model.
        reason: String,
    },
}

impl ApprovalRequirement {
    /// A blocked requirement with a reason.
    pub fn blocked(reason: impl Into<String>) -> Self {
        ApprovalRequirement::Blocked {
            reason: reason.into(),
        }
    }

    /// The stricter of two requirements (blocked > ask > pre-approved); the first reason wins
    /// when both are blocked.
    pub fn strictest(self, other: ApprovalRequirement) -> ApprovalRequirement {
        match (self, other) {
            (blocked @ ApprovalRequirement::Blocked { .. }, _) => blocked,
            (_, blocked @ ApprovalRequirement::Blocked { .. }) => blocked,
            (ApprovalRequirement::Ask, _) | (_, ApprovalRequirement::Ask) => {
                ApprovalRequirement::Ask
            }
            (ApprovalRequirement::PreApproved, ApprovalRequirement::PreApproved) => {
                ApprovalRequirement::PreApproved
            }
        }
    }
}

/// A policy violation: the operation is forbidden outright, not refused by a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tool} is blocked: {reason}")]
pub struct BlockedError {
    /// The tool.
    pub tool: String,
    /// Why.
    pub reason: String,
}

impl BlockedError {
    /// A blocked error for `tool`; an empty reason becomes `Blocked by policy`.
    pub fn new(tool: impl Into<String>, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        let reason = if reason.is_empty() {
            "Blocked by policy".to_owned()
        } else {
            reason
        };
        Self {
            tool: tool.into(),
            reason,
        }
    }
}

impl From<BlockedError> for ToolError {
    fn from(err: BlockedError) -> Self {
        ToolError::new(ToolErrorCode::Blocked, err.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictest_orders_requirements() {
        use ApprovalRequirement::*;
        assert_eq!(PreApproved.strictest(PreApproved), PreApproved);
        assert_eq!(PreApproved.strictest(Ask), Ask);
        assert_eq!(Ask.strictest(PreApproved), Ask);
        assert_eq!(
            Ask.strictest(ApprovalRequirement::blocked("x")),
            ApprovalRequirement::blocked("x")
        );
        assert_eq!(
            ApprovalRequirement::blocked("a").strictest(ApprovalRequirement::blocked("b")),
            ApprovalRequirement::blocked("a")
        );
    }

    #[test]
    fn blocked_error_becomes_blocked_tool_error() {
        let err: ToolError = BlockedError::new("shell", "").into();
        assert_eq!(err.code, ToolErrorCode::Blocked);
        assert_eq!(err.message, "shell is blocked: Blocked by policy");
    }
}
