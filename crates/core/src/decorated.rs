//! `DecoratedTool`: a tool with some of its answers replaced — its input schema (for example
//! with examples that name the worker's real zones) or its missing approval policy (the
//! configured default, docs/tools.md, Approval). Everything else is the wrapped tool's.

use std::sync::Arc;

use async_trait::async_trait;
use golem_protocol::{ToolError, ToolResultValue};
use serde_json::Value;

use crate::approval::ApprovalRequirement;
use crate::plan::{Plan, Preparing};
use crate::tool::{ManualExecution, Tool, ToolContext};

/// A tool with a replaced input schema and/or a default approval policy.
pub struct DecoratedTool {
    inner: Arc<dyn Tool>,
    schema: Option<Value>,
    default_approval: Option<(ApprovalRequirement, String)>,
}

impl DecoratedTool {
    /// Wraps `inner`, changing nothing yet.
    pub fn new(inner: Arc<dyn Tool>) -> Self {
        Self {
            inner,
            schema: None,
            default_approval: None,
        }
    }

    /// Uses `schema` as the input schema (it must accept what the tool accepts).
    pub fn with_input_schema(mut self, schema: Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// Applies `requirement` (described as `policy`) whenever the tool has no approval policy
    /// of its own for a call.
    pub fn with_default_approval(
        mut self,
        requirement: ApprovalRequirement,
        policy: String,
    ) -> Self {
        self.default_approval = Some((requirement, policy));
        self
    }
}

#[async_trait]
impl Tool for DecoratedTool {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn input_schema(&self) -> &Value {
        self.schema
            .as_ref()
            .unwrap_or_else(|| self.inner.input_schema())
    }
    fn execution(&self) -> ManualExecution {
        self.inner.execution()
    }
    fn kind(&self) -> golem_protocol::ToolKind {
        self.inner.kind()
    }
    fn approval_policy(&self) -> Option<String> {
        self.inner.approval_policy().or_else(|| {
            self.default_approval
                .as_ref()
                .map(|(_, policy)| policy.clone())
        })
    }
    /// The wrapped tool's preparation, with the default requirement when it has no policy of
    /// its own for the call.
    fn prepare<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> Preparing<'a> {
        let preparing = self.inner.prepare(args, ctx);
        match &self.default_approval {
            None => preparing,
            Some((default, _)) => preparing.map(move |mut prepared| {
                if prepared.requirement.is_none() {
                    prepared.requirement = Some(default.clone());
                }
                prepared
            }),
        }
    }
    async fn execute(&self, plan: Plan, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        self.inner.execute(plan, ctx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fn_tool::FnTool;
    use serde_json::json;

    #[tokio::test]
    async fn replaces_only_what_it_is_told() {
        let inner = FnTool::new("t", "desc", json!({"type": "object"}), |_, _| async {
            Ok(ToolResultValue::text("ran"))
        });
        let tool = DecoratedTool::new(Arc::new(inner))
            .with_input_schema(json!({"type": "object", "examples": [{}]}));
        assert_eq!(tool.input_schema()["examples"], json!([{}]));
        assert_eq!(tool.name(), "t");
        assert_eq!(tool.description(), "desc");
        let ctx = ToolContext::for_model("c");
        let prepared = tool.prepare(&json!({}), &ctx).await.unwrap();
        assert_eq!(prepared.requirement, None);
        let result = tool.execute(prepared.plan, &ctx).await.unwrap();
        assert_eq!(result, ToolResultValue::text("ran"));
    }
}
