//! Tool errors: the codes of docs/tools.md (Errors) and the `ToolError` the model and the UI
//! receive.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A machine-readable tool error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ToolErrorCode {
    /// A path outside every zone, into an unknown zone, or malformed.
    InvalidPath,
    /// The file does not exist.
    FileNotFound,
    /// The zone or the system does not allow the operation.
    PermissionDenied,
    /// The operation ran past its time limit.
    Timeout,
    /// The tool ran and failed.
    ExecutionError,
    /// The arguments do not match the tool's input schema.
    InvalidArguments,
    /// Policy forbids the call; it was never offered for approval.
    Blocked,
    /// The user (or the approval mode) refused the call.
    Denied,
    /// The call was cut short by an interrupt.
    Interrupted,
    /// No tool of that name.
    NotFound,
}

impl ToolErrorCode {
    /// The code as it appears on the wire (`INVALID_PATH`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolErrorCode::InvalidPath => "INVALID_PATH",
            ToolErrorCode::FileNotFound => "FILE_NOT_FOUND",
            ToolErrorCode::PermissionDenied => "PERMISSION_DENIED",
            ToolErrorCode::Timeout => "TIMEOUT",
            ToolErrorCode::ExecutionError => "EXECUTION_ERROR",
            ToolErrorCode::InvalidArguments => "INVALID_ARGUMENTS",
            ToolErrorCode::Blocked => "BLOCKED",
            ToolErrorCode::Denied => "DENIED",
            ToolErrorCode::Interrupted => "INTERRUPTED",
            ToolErrorCode::NotFound => "NOT_FOUND",
        }
    }
}

impl std::fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed tool call, as the model and the UI see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolError {
    /// What kind of failure.
    pub code: ToolErrorCode,
    /// A message the model can act on.
    pub message: String,
    /// Extra structured detail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolError {
    /// An error with a code and a message.
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: None,
        }
    }

    /// Adds structured detail.
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The error as a `tool_error` result value, so every UI can render it like any result.
    pub fn to_result_value(&self) -> crate::result::ToolResultValue {
        let data = serde_json::to_value(self).unwrap_or(Value::Null);
        crate::result::ToolResultValue::new("tool_error", data)
            .with_summary(format!("{}: {}", self.code, self.message))
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
