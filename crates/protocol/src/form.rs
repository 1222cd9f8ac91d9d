//! Manual-tool descriptors and the form fields a UI builds from a tool's input schema.
//!
//! These are data only: `golem-core` derives fields from JSON Schema, front ends render them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The kind of input widget a form field needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FieldType {
    /// Free text (JSON Schema `string`, or anything without a better widget).
    Text,
    /// A number (JSON Schema `number` or `integer`).
    Number,
    /// A yes/no toggle (JSON Schema `boolean`).
    Boolean,
    /// One of a fixed set of choices (JSON Schema `enum`).
    Select,
}

/// One choice of a `select` field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldOption {
    /// The value sent as the argument when this choice is picked.
    pub value: Value,
    /// The text shown for the choice.
    pub label: String,
}

/// One input of a manual tool's form, derived from one property of its input schema.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FormField {
    /// The argument name (the schema property).
    pub name: String,
    /// The widget to show.
    #[serde(rename = "type")]
    pub field_type: FieldType,
    /// Whether the argument must be given.
    pub required: bool,
    /// The schema's default value, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The schema's description, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices of a `select` field; empty for other types.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<FieldOption>,
    /// Whether a `number` field only takes whole numbers (JSON Schema `integer`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub integer: bool,
}

/// Who may invoke a tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ExecutionMode {
    /// Only the model (the default).
    #[default]
    Llm,
    /// Only the user, through slash commands or forms; never offered to the model.
    Manual,
    /// The model and the user.
    Both,
}

impl ExecutionMode {
    /// Whether the model may see and call a tool in this mode.
    pub fn is_llm_visible(self) -> bool {
        match self {
            ExecutionMode::Llm | ExecutionMode::Both => true,
            ExecutionMode::Manual => false,
        }
    }

    /// Whether the user may invoke a tool in this mode.
    pub fn is_manual_invocable(self) -> bool {
        match self {
            ExecutionMode::Manual | ExecutionMode::Both => true,
            ExecutionMode::Llm => false,
        }
    }
}

/// A tool the user can invoke by hand, as announced to front ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManualToolInfo {
    /// The tool's name (what `/tool NAME` takes).
    pub name: String,
    /// A human-readable label.
    pub label: String,
    /// What the tool does.
    pub description: String,
    /// A group for menus, such as `Git`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Whether the model may call it too.
    pub mode: ExecutionMode,
    /// The form fields derived from the tool's input schema.
    pub fields: Vec<FormField>,
}
