//! The `Tool` trait: what every tool (built-in, custom, MCP, delegated worker) implements, and
//! the context a call runs in. Tools decide their own approval requirement from their arguments;
//! they never prompt, and they never see calls that failed validation or approval.

use async_trait::async_trait;
use golem_protocol::{
    ExecutionMode, InvokedBy, Risk, ToolError, ToolErrorCode, ToolResultValue, WorkerOrigin,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::ApprovalRequirement;

/// Who may invoke a tool, and how it is presented to the user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManualExecution {
    /// Who may invoke the tool.
    pub mode: ExecutionMode,
    /// A human-readable name for menus.
    pub label: Option<String>,
    /// A group for menus.
    pub category: Option<String>,
}

impl ManualExecution {
    /// Model only (the default).
    pub fn llm() -> Self {
        Self::default()
    }

    /// User only, with a label and an optional category.
    pub fn manual(label: impl Into<String>, category: Option<&str>) -> Self {
        Self {
            mode: ExecutionMode::Manual,
            label: Some(label.into()),
            category: category.map(str::to_owned),
        }
    }

    /// Model and user, with a label and an optional category.
    pub fn both(label: impl Into<String>, category: Option<&str>) -> Self {
        Self {
            mode: ExecutionMode::Both,
            ..Self::manual(label, category)
        }
    }
}

/// The context of one tool call.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The call's id.
    pub tool_call_id: String,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
    /// The worker making the call, for delegated workers.
    pub worker: Option<WorkerOrigin>,
    /// Cancelled when the user interrupts; long-running tools must watch it.
    pub cancel: CancellationToken,
}

impl ToolContext {
    /// A context for a call from the model, with a fresh cancellation token.
    pub fn for_model(tool_call_id: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            invoked_by: InvokedBy::Model,
            worker: None,
            cancel: CancellationToken::new(),
        }
    }
}

/// A capability the runtime offers to the model, the user, or both.
///
/// Implementations provide a name, a description and a JSON Schema for their arguments
/// ([`input_schema_for`] derives one from a Rust type), an optional approval policy, and the
/// work itself. The orchestrator validates arguments against the schema before `approval` or
/// `execute` see them.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The name the model and slash commands use (`[A-Za-z0-9_-]{1,64}`).
    fn name(&self) -> &str;

    /// What the tool does, for the model and for help texts.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments (an object schema).
    fn input_schema(&self) -> &Value;

    /// Who may invoke the tool; model only by default.
    fn execution(&self) -> ManualExecution {
        ManualExecution::llm()
    }

    /// The tool's own approval policy for these arguments, or `None` when it has none (then
    /// the configured default applies, and without configuration the call asks).
    fn approval(&self, _args: &Value, _ctx: &ToolContext) -> Option<ApprovalRequirement> {
        None
    }

    /// The approval policy in words, for listings such as `golem-forge check` (`pre-approved`,
    /// `by zone: write`, …), or `None` when the tool has no policy of its own.
    fn approval_policy(&self) -> Option<String> {
        None
    }

    /// What the call will do, in words, for the approval prompt.
    fn describe_call(&self, args: &Value) -> String {
        let args = serde_json::to_string(args).unwrap_or_default();
        format!("Run {} with {}", self.name(), crate::text::fold(&args, 200))
    }

    /// How risky the call is.
    fn risk(&self, _args: &Value) -> Risk {
        Risk::Medium
    }

    /// What the call would change, computed before asking (a diff for file writes).
    async fn preview(&self, _args: &Value, _ctx: &ToolContext) -> Option<ToolResultValue> {
        None
    }

    /// Does the work. Arguments have been validated against [`Tool::input_schema`].
    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolResultValue, ToolError>;
}

/// The input schema of a Rust argument type: an object schema with subschemas inlined (some
/// providers do not follow `$ref`) and without the `$schema` key.
pub fn input_schema_for<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
    }
    value
}

/// Decodes validated arguments into their Rust type; a mismatch is `INVALID_ARGUMENTS`.
pub fn parse_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| {
        ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("invalid arguments for {tool}: {e}"),
        )
    })
}
