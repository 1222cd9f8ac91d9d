//! A tool call as requested (`ToolCall`, from the model or the user) and what became of it
//! (`CallOutcome`, with the arguments as proposed, approved and executed kept apart).

use std::time::Duration;

use golem_protocol::{DecidedBy, InvokedBy, ToolError, ToolResultValue, ToolStatus};
use serde_json::Value;

/// One requested tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id (from the model, or made up for manual calls).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The proposed arguments.
    pub args: Value,
    /// Why the arguments could not be read, when the model sent malformed JSON.
    pub malformed_args: Option<String>,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
}

impl ToolCall {
    /// A call from the model.
    pub fn from_model(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args,
            malformed_args: None,
            invoked_by: InvokedBy::Model,
        }
    }

    /// A call from the user (a slash command or a form).
    pub fn from_user(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            invoked_by: InvokedBy::User,
            ..Self::from_model(id, name, args)
        }
    }

    /// A call from the model whose arguments were not valid JSON.
    pub fn malformed(
        id: impl Into<String>,
        name: impl Into<String>,
        raw: &str,
        error: impl Into<String>,
    ) -> Self {
        Self {
            malformed_args: Some(error.into()),
            ..Self::from_model(id, name, Value::String(raw.to_owned()))
        }
    }
}

/// What became of a call: its status, the result value (a `tool_error` value on failure), and
/// the arguments as proposed, approved and executed, kept apart for the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
    /// The outcome.
    pub status: ToolStatus,
    /// The result, or the error as a `tool_error` value.
    pub value: ToolResultValue,
    /// The error, when the call did not succeed.
    pub error: Option<ToolError>,
    /// The arguments as proposed.
    pub proposed_args: Value,
    /// The arguments as edited by the user at approval, if edited.
    pub approved_args: Option<Value>,
    /// The arguments the tool ran with, if it ran.
    pub executed_args: Option<Value>,
    /// Who decided at the gate, if the call reached it.
    pub decided_by: Option<DecidedBy>,
    /// The call's number in the approval inbox when the `defer` mode parked it there: nobody
    /// decided yet, it did not run and it has no result to send the model (`status` is
    /// `interrupted` until it continues).
    pub deferred: Option<u64>,
    /// From reaching the orchestrator to the end.
    pub duration: Duration,
}

impl CallOutcome {
    /// Whether the model should see this result as an error.
    pub fn is_error(&self) -> bool {
        self.status != ToolStatus::Success
    }

    /// The text sent back to the model.
    pub fn model_text(&self) -> String {
        match &self.error {
            Some(error) => format!("Error [{}]: {}", error.code, error.message),
            None => self.value.to_model_text(),
        }
    }
}
