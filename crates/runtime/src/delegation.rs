//! Delegation: the tool that runs one other worker, named after it (the workers toolset,
//! `workers_toolset.rs`, asks for one per allowed worker through [`golem_toolset::Delegation`]).
//! Calling it runs the child worker one-shot at depth + 1, sharing the parent's approval
//! controller (and so its session memory), its UI and its interrupt; the child's zones can only
//! narrow the parent's. Depth beyond `delegation.max_depth` and cycles (A → B → A) are error
//! results, never runs. A child with an output schema answers with a `structured` result holding
//! its JSON value. The child is built by the [`BuildWorker`] the launcher gave, so this module
//! does not import the launcher.

use std::sync::Arc;

use async_trait::async_trait;
use golem_core::tool::{CallPlan, PreparedCall, Tool, ToolContext, TypedTool, input_schema_for};
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};
use golem_toolset::{Delegation, DelegationError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::runner::{RunStatus, WorkerRuntime};
use crate::session_env::{LaunchError, SessionEnv, WorkerFrame};

/// Builds the worker of a name from the session's registry as a child of a frame:
/// `launch::build_worker`, handed down by the launcher.
pub type BuildWorker =
    fn(&Arc<SessionEnv>, &str, WorkerFrame) -> Result<WorkerRuntime, LaunchError>;

/// Delegation within a session: the tool for a worker found by name in the session's
/// registry, run below `frame`.
pub struct SessionDelegation {
    /// The session.
    pub env: Arc<SessionEnv>,
    /// The delegating worker.
    pub frame: WorkerFrame,
    /// How the child is built.
    pub build: BuildWorker,
}

impl Delegation for SessionDelegation {
    fn tool(&self, worker: &str) -> Result<Arc<dyn Tool>, DelegationError> {
        let child = self
            .env
            .registry
            .load(worker)
            .map_err(|e| DelegationError::Load(Box::new(e)))?;
        let description = child.description.unwrap_or_default();
        Ok(Arc::new(DelegateTool::new(
            worker,
            &description,
            self.env.clone(),
            self.frame.clone(),
            self.build,
        )))
    }
}

/// The arguments of a delegation tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelegateArgs {
    /// The task for the worker, in plain words.
    pub input: String,
    /// Extra instructions for this call, added to the worker's own.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Sandbox paths (`/zone/file`) the worker should read.
    #[serde(default)]
    pub attachments: Vec<String>,
}

/// The tool that delegates to one worker.
pub struct DelegateTool {
    name: String,
    description: String,
    schema: Value,
    env: Arc<SessionEnv>,
    frame: WorkerFrame,
    build: BuildWorker,
}

impl DelegateTool {
    /// A tool for the worker `name` (described by `description`), called from `frame`, its
    /// child built by `build`.
    pub fn new(
        name: &str,
        description: &str,
        env: Arc<SessionEnv>,
        frame: WorkerFrame,
        build: BuildWorker,
    ) -> Self {
        Self {
            name: name.to_owned(),
            description: format!("Delegate a task to the `{name}` worker: {description}"),
            schema: input_schema_for::<DelegateArgs>(),
            env,
            frame,
            build,
        }
    }
}

/// A delegation runs with its arguments as its plan.
impl CallPlan for DelegateArgs {}

#[async_trait]
impl TypedTool for DelegateTool {
    type Args = DelegateArgs;
    type Plan = DelegateArgs;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn kind(&self) -> golem_protocol::ToolKind {
        golem_protocol::ToolKind::Delegate
    }

    /// No policy of its own (the configured default applies, else the call asks).
    async fn prepare(
        &self,
        args: DelegateArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<DelegateArgs>, ToolError> {
        let description = format!(
            "Delegate to worker {}: {}",
            self.name,
            golem_core::text::fold(&args.input, 160)
        );
        Ok(PreparedCall::new(args).with_description(description))
    }

    async fn execute(
        &self,
        args: DelegateArgs,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let depth = self.frame.depth + 1;
        let max_depth = self.env.max_depth;
        if depth > max_depth {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "cannot delegate to {}: the delegation depth limit ({max_depth}) is reached",
                    self.name
                ),
            ));
        }
        if self.frame.chain.iter().any(|w| w == &self.name) {
            let mut chain = self.frame.chain.clone();
            chain.push(self.name.clone());
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("delegation cycle refused: {}", chain.join(" → ")),
            ));
        }
        if let Some(sandbox) = &self.frame.sandbox {
            for path in &args.attachments {
                sandbox.resolve(path)?;
            }
        }
        let mut child = (self.build)(&self.env, &self.name, self.frame.clone())
            .map_err(|e| {
                ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!("cannot start worker {}: {e}", self.name),
                )
            })?
            .with_parent_call(&ctx.tool_call_id);
        // Counted against the `max_workers` of the caller and of each worker above it.
        if let Some(caller) = self.env.tree.running(&self.frame.id) {
            caller
                .start_child(&self.name)
                .map_err(|e| ToolError::new(ToolErrorCode::ExecutionError, e.to_string()))?;
        }
        let mut input = args.input;
        if let Some(extra) = args.instructions.filter(|i| !i.trim().is_empty()) {
            input = format!("{input}\n\nInstructions for this task:\n{extra}");
        }
        if !args.attachments.is_empty() {
            input = format!(
                "{input}\n\nAttached files (read them with your tools):\n- {}",
                args.attachments.join("\n- ")
            );
        }
        let outcome = tokio::select! {
            outcome = child.run(&input) => outcome,
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::new(ToolErrorCode::Interrupted, format!("{} was interrupted", self.name)));
            }
        };
        match outcome.status {
            RunStatus::Completed => {
                let summary = format!(
                    "{} answered after {} turn{}",
                    self.name,
                    outcome.turns,
                    if outcome.turns == 1 { "" } else { "s" }
                );
                // A child with an output schema answers its caller with the value itself.
                let result = match outcome.output {
                    Some(value) => ToolResultValue::structured(value),
                    None => ToolResultValue::text(outcome.response),
                };
                Ok(result.with_summary(summary))
            }
            RunStatus::Failed(message) => Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("worker {} failed: {message}", self.name),
            )),
            RunStatus::Interrupted => Err(ToolError::new(
                ToolErrorCode::Interrupted,
                format!("worker {} was interrupted: {}", self.name, outcome.response),
            )),
            RunStatus::BudgetExceeded(exceeded) => Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!("worker {} stopped: {exceeded}", self.name),
            )),
            // The gate denies a delegated worker's call rather than park it; should one wait
            // anyway, the caller is told, since only the root's turn can continue later.
            RunStatus::WaitingApproval(_) => Err(ToolError::new(
                ToolErrorCode::Denied,
                format!(
                    "worker {} stopped: a call waits for an approval, which a delegated \
                     worker cannot do",
                    self.name
                ),
            )),
        }
    }
}
