//! A call forbidden by policy, as an error the model is shown.

use golem_protocol::{ToolError, ToolErrorCode};

/// A policy violation: the operation is forbidden outright, not refused by a person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{tool} is blocked: {reason}")]
#[allow(missing_docs)] // fields are named for what they hold
pub struct BlockedError {
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
    fn blocked_error_becomes_blocked_tool_error() {
        let err: ToolError = BlockedError::new("shell", "").into();
        assert_eq!(err.code, ToolErrorCode::Blocked);
        assert_eq!(err.message, "shell is blocked: Blocked by policy");
    }
}
