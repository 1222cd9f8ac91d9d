//! `FnTool`: a tool built from a closure, for custom tools, tests and benchmarks. Its plan is
//! its arguments.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use async_trait::async_trait;
use futures::future::BoxFuture;
use golem_protocol::{ToolError, ToolResultValue};
use serde_json::Value;

use crate::approval::ApprovalRequirement;
use crate::plan::{Plan, PreparedCall, Preparing};
use crate::tool::{ManualExecution, Tool, ToolContext};

type ExecuteFn = Arc<
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolResultValue, ToolError>>
        + Send
        + Sync,
>;
type ApprovalFn = Arc<dyn Fn(&Value) -> ApprovalRequirement + Send + Sync>;

/// A tool whose work is a closure.
#[derive(Clone)]
pub struct FnTool {
    name: String,
    description: String,
    schema: Value,
    execution: ManualExecution,
    approval: Option<ApprovalFn>,
    policy: Option<String>,
    execute: ExecuteFn,
}

impl fmt::Debug for FnTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl FnTool {
    /// A model-only tool with no approval policy of its own.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        execute: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResultValue, ToolError>> + Send + 'static,
    {
        Self {
            name: name.into(),
            description: description.into(),
            schema,
            execution: ManualExecution::llm(),
            approval: None,
            policy: None,
            execute: Arc::new(move |args, ctx| Box::pin(execute(args, ctx))),
        }
    }

    /// Sets who may invoke the tool.
    pub fn with_execution(mut self, execution: ManualExecution) -> Self {
        self.execution = execution;
        self
    }

    /// Sets the approval policy, computed from the arguments.
    pub fn with_approval(
        mut self,
        approval: impl Fn(&Value) -> ApprovalRequirement + Send + Sync + 'static,
    ) -> Self {
        self.approval = Some(Arc::new(approval));
        self.policy = Some("by arguments".to_owned());
        self
    }

    /// Sets a static approval policy.
    pub fn with_static_approval(self, requirement: ApprovalRequirement) -> Self {
        let policy = match &requirement {
            ApprovalRequirement::PreApproved => "pre-approved".to_owned(),
            ApprovalRequirement::Ask => "ask".to_owned(),
            ApprovalRequirement::AskUser { .. } => "ask the user".to_owned(),
            ApprovalRequirement::Blocked { reason } => format!("blocked: {reason}"),
        };
        let mut tool = self.with_approval(move |_| requirement.clone());
        tool.policy = Some(policy);
        tool
    }
}

#[async_trait]
impl Tool for FnTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn execution(&self) -> ManualExecution {
        self.execution.clone()
    }
    fn approval_policy(&self) -> Option<String> {
        self.policy.clone()
    }
    /// The plan is the arguments; the requirement comes from the approval closure, if any.
    fn prepare<'a>(&'a self, args: &'a Value, _ctx: &'a ToolContext) -> Preparing<'a> {
        Preparing::ready(Ok(PreparedCall {
            requirement: self.approval.as_ref().map(|f| f(args)),
            ..PreparedCall::new(Plan::args(args.clone()))
        }))
    }
    async fn execute(&self, plan: Plan, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args: Value = plan.downcast(&self.name)?;
        (self.execute)(args, ctx.clone()).await
    }
}
