//! The `Tool` trait: what every tool (built-in, custom, MCP, delegated worker) implements, and
//! the context a call runs in; [`TypedTool`], the same with typed arguments and plan. A call is
//! prepared once (arguments decoded and checked, approval requirement, description, risk and a
//! plan, see [`crate::plan`]) and its plan executes. Tools decide their own approval
//! requirement; they never prompt, and they never run calls that failed validation or approval.

use async_trait::async_trait;
use golem_protocol::{
    ExecutionMode, InvokedBy, ToolError, ToolErrorCode, ToolResultValue, WorkerOrigin,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use crate::input::{FormAnswer, InputRequester};
pub use crate::plan::{CallPlan, Plan, PreparedCall, Preparing};

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
    /// How to ask the user a question while the call runs; `None` when no front end can
    /// answer (a headless run): a tool then declines on the user's behalf.
    pub input: Option<InputRequester>,
    /// How to ask consent for what the call did once it ran (a jailed process's changes to
    /// the zones; see [`crate::effects`]). The orchestrator always sets it; `None` (a call
    /// made outside it, in tests) leaves effects that need consent untaken.
    pub effects: Option<crate::effects::EffectGate>,
}

impl ToolContext {
    /// A context for a call from the model, with a fresh cancellation token.
    pub fn for_model(tool_call_id: impl Into<String>) -> Self {
        Self {
            tool_call_id: tool_call_id.into(),
            invoked_by: InvokedBy::Model,
            worker: None,
            cancel: CancellationToken::new(),
            input: None,
            effects: None,
        }
    }
}

/// A capability the runtime offers to the model, the user, or both.
///
/// Implementations provide a name, a description and a JSON Schema for their arguments
/// ([`input_schema_for`] derives one from a Rust type), and two steps: [`Tool::prepare`], which
/// decodes and checks a call's arguments once and says what the gate and the user need (the
/// approval requirement, the description, the risk, the plan's preview), and
/// [`Tool::execute`], which runs the plan `prepare` made. The orchestrator validates arguments
/// against the schema before `prepare` sees them, and only it calls `execute`. Most tools
/// implement [`TypedTool`] instead, which decodes the arguments into a Rust type and keeps the
/// plan typed.
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

    /// The approval policy in words, for listings such as `golem-forge check` (`pre-approved`,
    /// `by zone: write`, …), or `None` when the tool has no policy of its own.
    fn approval_policy(&self) -> Option<String> {
        None
    }

    /// Prepares one call whose arguments passed validation: decodes and checks them, works out
    /// the approval requirement (`None`: no policy of its own), the description and the risk,
    /// and makes the plan that [`Tool::execute`] runs. Called again for arguments the user
    /// edited at approval. An error becomes the call's result without reaching the gate.
    /// Blocking work (file-system calls) runs off the async threads (`spawn_blocking`). A tool
    /// with nothing to wait for answers [`Preparing::ready`], one that waits
    /// [`Preparing::later`].
    fn prepare<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> Preparing<'a>;

    /// Does the work of a plan this tool's [`Tool::prepare`] made, once the gate let it
    /// through.
    async fn execute(&self, plan: Plan, ctx: &ToolContext) -> Result<ToolResultValue, ToolError>;
}

/// A [`Tool`] with typed arguments and a typed plan: every `TypedTool` is a `Tool` whose
/// `prepare` decodes the arguments into [`TypedTool::Args`] (a mismatch with the schema is
/// `INVALID_ARGUMENTS`) and whose `execute` gets its own [`TypedTool::Plan`] back.
#[async_trait]
pub trait TypedTool: Send + Sync {
    /// The decoded arguments.
    type Args: DeserializeOwned + Send;
    /// What `prepare` hands to `execute`.
    type Plan: CallPlan;

    /// See [`Tool::name`].
    fn name(&self) -> &str;

    /// See [`Tool::description`].
    fn description(&self) -> &str;

    /// See [`Tool::input_schema`].
    fn input_schema(&self) -> &Value;

    /// See [`Tool::execution`].
    fn execution(&self) -> ManualExecution {
        ManualExecution::llm()
    }

    /// See [`Tool::approval_policy`].
    fn approval_policy(&self) -> Option<String> {
        None
    }

    /// See [`Tool::prepare`]; the arguments come decoded.
    async fn prepare(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<Self::Plan>, ToolError>;

    /// See [`Tool::execute`]; the plan comes typed.
    async fn execute(
        &self,
        plan: Self::Plan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError>;
}

// Forwards to the typed steps, like a decorated tool forwards to the tool it wraps.
#[async_trait]
impl<T: TypedTool> Tool for T {
    fn name(&self) -> &str {
        TypedTool::name(self)
    }

    fn description(&self) -> &str {
        TypedTool::description(self)
    }

    fn input_schema(&self) -> &Value {
        TypedTool::input_schema(self)
    }

    fn execution(&self) -> ManualExecution {
        TypedTool::execution(self)
    }

    fn approval_policy(&self) -> Option<String> {
        TypedTool::approval_policy(self)
    }

    fn prepare<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> Preparing<'a> {
        match decode_args::<T::Args>(TypedTool::name(self), args) {
            Err(error) => Preparing::ready(Err(error)),
            Ok(args) => Preparing::later(async move {
                let prepared = TypedTool::prepare(self, args, ctx).await?;
                Ok(prepared.map_plan(Plan::new))
            }),
        }
    }

    async fn execute(&self, plan: Plan, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let plan = plan.downcast::<T::Plan>(TypedTool::name(self))?;
        TypedTool::execute(self, plan, ctx).await
    }
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
    serde_json::from_value(args).map_err(|e| invalid_arguments(tool, &e))
}

/// Decodes borrowed arguments into their Rust type (without copying the JSON first); a mismatch
/// is `INVALID_ARGUMENTS`.
pub fn decode_args<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolError> {
    T::deserialize(args).map_err(|e| invalid_arguments(tool, &e))
}

fn invalid_arguments(tool: &str, error: &serde_json::Error) -> ToolError {
    ToolError::new(
        ToolErrorCode::InvalidArguments,
        format!("invalid arguments for {tool}: {error}"),
    )
}
