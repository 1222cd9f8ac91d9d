//! A tool as a model is told about it: name, description and the JSON Schema of its arguments.
//! The tool registry makes these and the model providers send them, each in its own wire form
//! (built in the provider's folder).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool as the model sees it: name, description and argument schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// The name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub input_schema: Value,
}
