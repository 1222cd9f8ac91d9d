//! The `Tool` trait: what every tool (built-in, custom, MCP, delegated worker) implements, and
//! the context a call runs in; [`TypedTool`], the same with typed arguments and plan. A call is
//! prepared once (arguments decoded and checked, approval requirement, description, risk and a
//! plan, see [`crate::plan`]) and its plan executes. Tools decide their own approval
//! requirement; they never prompt, and they never run calls that failed validation or approval.
//!
//! Most tools write only their own logic: their metadata is data ([`ToolInfo`]) and they
//! implement [`DescribedTool`] (`prepare` and `execute`), or, when every call is pre-approved
//! and only reads, [`PreApprovedTool`] (a description of the call and `execute`). Each is a
//! [`TypedTool`], and so a [`Tool`], through an adapter that only forwards.

use async_trait::async_trait;
use golem_protocol::{
    ExecutionMode, InvokedBy, Risk, ToolError, ToolErrorCode, ToolKind, ToolResultValue,
    WorkerOrigin,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::ApprovalRequirement;
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

    /// What kind of thing the tool does, sent with each call's events (an editor's icon,
    /// `check`'s listing); `other` by default.
    fn kind(&self) -> ToolKind {
        ToolKind::Other
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

    /// See [`Tool::kind`].
    fn kind(&self) -> ToolKind {
        ToolKind::Other
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

    fn kind(&self) -> ToolKind {
        TypedTool::kind(self)
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

/// What the model and the user are told about a tool, as data: its name, its description, the
/// JSON Schema of its arguments, who may call it, what kind of thing it does, and its approval
/// policy in words. A [`DescribedTool`] or [`PreApprovedTool`] answers [`Tool::name`],
/// [`Tool::description`], [`Tool::input_schema`], [`Tool::execution`], [`Tool::kind`] and
/// [`Tool::approval_policy`] from one.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// See [`Tool::name`].
    pub name: String,
    /// See [`Tool::description`].
    pub description: String,
    /// See [`Tool::input_schema`].
    pub schema: Value,
    /// See [`Tool::execution`].
    pub execution: ManualExecution,
    /// See [`Tool::kind`].
    pub kind: ToolKind,
    /// See [`Tool::approval_policy`].
    pub approval_policy: Option<String>,
}

impl ToolInfo {
    /// A model-only tool with no approval policy of its own whose arguments are an `A` (the
    /// schema is [`input_schema_for`]).
    pub fn new<A: JsonSchema>(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self::with_schema(name, description, input_schema_for::<A>())
    }

    /// A model-only tool with no approval policy of its own whose arguments follow `schema`.
    pub fn with_schema(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            schema,
            execution: ManualExecution::llm(),
            kind: ToolKind::Other,
            approval_policy: None,
        }
    }

    /// Sets who may invoke the tool.
    pub fn with_execution(mut self, execution: ManualExecution) -> Self {
        self.execution = execution;
        self
    }

    /// Sets what kind of thing the tool does.
    pub fn with_kind(mut self, kind: ToolKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets the approval policy in words.
    pub fn with_approval_policy(mut self, policy: impl Into<String>) -> Self {
        self.approval_policy = Some(policy.into());
        self
    }
}

/// A [`TypedTool`] whose metadata is one [`ToolInfo`]: what is left to write is the tool's own
/// logic, `prepare` and `execute`.
#[async_trait]
pub trait DescribedTool: Send + Sync {
    /// See [`TypedTool::Args`].
    type Args: DeserializeOwned + Send;
    /// See [`TypedTool::Plan`].
    type Plan: CallPlan;

    /// The tool's name, description, schema, execution and approval policy.
    fn info(&self) -> &ToolInfo;

    /// See [`TypedTool::prepare`].
    async fn prepare(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<Self::Plan>, ToolError>;

    /// See [`TypedTool::execute`].
    async fn execute(
        &self,
        plan: Self::Plan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError>;
}

// Answers from the info and forwards the two steps.
#[async_trait]
impl<T: DescribedTool> TypedTool for T {
    type Args = T::Args;
    type Plan = T::Plan;

    fn name(&self) -> &str {
        &self.info().name
    }

    fn description(&self) -> &str {
        &self.info().description
    }

    fn input_schema(&self) -> &Value {
        &self.info().schema
    }

    fn execution(&self) -> ManualExecution {
        self.info().execution.clone()
    }

    fn kind(&self) -> ToolKind {
        self.info().kind
    }

    fn approval_policy(&self) -> Option<String> {
        self.info().approval_policy.clone()
    }

    async fn prepare(
        &self,
        args: T::Args,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<T::Plan>, ToolError> {
        DescribedTool::prepare(self, args, ctx).await
    }

    async fn execute(
        &self,
        plan: T::Plan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        DescribedTool::execute(self, plan, ctx).await
    }
}

/// A tool that only reads: every call is pre-approved and of low risk, and runs with its
/// arguments as its plan, so the only thing to prepare is the call's description. Its
/// [`DescribedTool`] `prepare` is that default.
#[async_trait]
pub trait PreApprovedTool: Send + Sync {
    /// See [`TypedTool::Args`]; they are also the plan.
    type Args: DeserializeOwned + Send + 'static;

    /// See [`DescribedTool::info`].
    fn info(&self) -> &ToolInfo;

    /// What the call does, in words (the prepared call's description; no prompt shows it, a
    /// transcript or a listing may).
    fn describe(&self, args: &Self::Args) -> String;

    /// Does the work of a call with these arguments.
    async fn execute(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError>;
}

/// The plan of a [`PreApprovedTool`]'s call: its arguments, nothing to preview.
#[derive(Debug)]
pub struct ArgsPlan<A>(pub A);

impl<A: Send + 'static> CallPlan for ArgsPlan<A> {}

// The default `prepare`: pre-approved, low risk, described, the arguments as the plan.
#[async_trait]
impl<T: PreApprovedTool> DescribedTool for T {
    type Args = T::Args;
    type Plan = ArgsPlan<T::Args>;

    fn info(&self) -> &ToolInfo {
        PreApprovedTool::info(self)
    }

    async fn prepare(
        &self,
        args: T::Args,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<ArgsPlan<T::Args>>, ToolError> {
        let description = self.describe(&args);
        Ok(PreparedCall::new(ArgsPlan(args))
            .with_requirement(ApprovalRequirement::PreApproved)
            .with_description(description)
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        plan: ArgsPlan<T::Args>,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        PreApprovedTool::execute(self, plan.0, ctx).await
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

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// Says the path back.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct EchoArgs {
        path: String,
    }

    struct Echo(ToolInfo);

    #[async_trait]
    impl PreApprovedTool for Echo {
        type Args = EchoArgs;

        fn info(&self) -> &ToolInfo {
            &self.0
        }

        fn describe(&self, args: &EchoArgs) -> String {
            format!("Echo {}", args.path)
        }

        async fn execute(
            &self,
            args: EchoArgs,
            _ctx: &ToolContext,
        ) -> Result<ToolResultValue, ToolError> {
            Ok(ToolResultValue::text(args.path))
        }
    }

    fn echo() -> Echo {
        Echo(
            ToolInfo::new::<EchoArgs>("echo", "Says the path back.")
                .with_execution(ManualExecution::both("Echo", Some("Test")))
                .with_approval_policy("pre-approved"),
        )
    }

    #[test]
    fn a_tool_answers_from_its_info() {
        let tool = echo();
        let tool: &dyn Tool = &tool;
        assert_eq!(tool.name(), "echo");
        assert_eq!(tool.description(), "Says the path back.");
        assert_eq!(tool.input_schema(), &input_schema_for::<EchoArgs>());
        assert_eq!(
            tool.execution(),
            ManualExecution::both("Echo", Some("Test"))
        );
        assert_eq!(tool.approval_policy().as_deref(), Some("pre-approved"));
        let plain = ToolInfo::with_schema("t", "d", json!({"type": "object"}));
        assert_eq!(
            (plain.execution, plain.approval_policy),
            (ManualExecution::llm(), None)
        );
    }

    #[tokio::test]
    async fn a_pre_approved_call_is_described_low_risk_and_runs_its_arguments() {
        let tool = echo();
        let tool: &dyn Tool = &tool;
        let ctx = ToolContext::for_model("t");
        let mut prepared = tool.prepare(&json!({"path": "/a"}), &ctx).await.unwrap();
        assert_eq!(prepared.requirement, Some(ApprovalRequirement::PreApproved));
        assert_eq!(prepared.description.as_deref(), Some("Echo /a"));
        assert_eq!(prepared.risk, Risk::Low);
        assert_eq!(prepared.plan.preview(), None);
        let result = Tool::execute(tool, prepared.plan, &ctx).await.unwrap();
        assert_eq!(result, ToolResultValue::text("/a"));
        let err = tool.prepare(&json!({"path": 1}), &ctx).await.unwrap_err();
        assert_eq!(err.code, ToolErrorCode::InvalidArguments);
    }
}
