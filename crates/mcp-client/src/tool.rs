//! One MCP tool exposed as `<server>__<tool>`: the server's description and input schema,
//! approval decided in `prepare` from the configuration alone (`ask` unless configured), the
//! server's annotations (`readOnlyHint`, `destructiveHint`) shown in the approval description
//! and the risk but never used to skip the gate, and each call sent to the server.

use std::sync::Arc;

use async_trait::async_trait;
use golem_core::approval::ApprovalDecisionType;
use golem_core::tool::{Plan, PreparedCall, Preparing, Tool, ToolContext};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use golem_toolset::process::changes;
use rmcp::model::ToolAnnotations;
use serde_json::Value;

use super::result::map_result;
use super::server::{CallError, Server};

/// A tool of an MCP server.
pub struct McpTool {
    server: Arc<Server>,
    /// The exposed name, `<server>__<tool>`.
    name: String,
    /// The tool's name on the server.
    remote: String,
    description: String,
    input_schema: Value,
    annotations: Option<ToolAnnotations>,
    decision: ApprovalDecisionType,
    configured: bool,
}

impl McpTool {
    /// The tool `info` of `server`, exposed as `name`, with the configured decision (and
    /// whether it was configured rather than the default).
    pub fn new(
        server: Arc<Server>,
        name: String,
        info: rmcp::model::Tool,
        decision: ApprovalDecisionType,
        configured: bool,
    ) -> McpTool {
        let description = match info.description.as_deref() {
            Some(text) if !text.is_empty() => text.to_owned(),
            _ => format!("Tool {} of the MCP server {}", info.name, server.name()),
        };
        McpTool {
            name,
            remote: info.name.to_string(),
            description,
            input_schema: Value::Object((*info.input_schema).clone()),
            annotations: info.annotations,
            decision,
            configured,
            server,
        }
    }

    /// What the server says about the tool, in words (`read-only`, `destructive`).
    fn hints(&self) -> Vec<&'static str> {
        let Some(annotations) = &self.annotations else {
            return Vec::new();
        };
        let mut hints = Vec::new();
        match annotations.read_only_hint {
            Some(true) => hints.push("read-only"),
            Some(false) => hints.push("may change things"),
            None => {}
        }
        match annotations.destructive_hint {
            Some(true) => hints.push("destructive"),
            Some(false) => hints.push("not destructive"),
            None => {}
        }
        hints
    }

    /// The approval prompt's description of a call with `args`.
    fn call_description(&self, args: &Value) -> String {
        let hints = self.hints();
        let said = if hints.is_empty() {
            String::new()
        } else {
            format!(" (the server says: {})", hints.join(", "))
        };
        format!(
            "Call `{}` on the MCP server `{}` ({}){said} with {args}",
            self.remote,
            self.server.name(),
            self.server.place()
        )
    }

    /// The risk the server's hints suggest; shown, never used to skip approval.
    fn risk(&self) -> Risk {
        match &self.annotations {
            Some(a) if a.read_only_hint == Some(true) => Risk::Low,
            Some(a) if a.destructive_hint == Some(false) => Risk::Medium,
            _ => Risk::High,
        }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.input_schema
    }
    /// `read` when the server's annotations say the tool only reads, `other` otherwise.
    fn kind(&self) -> golem_protocol::ToolKind {
        match &self.annotations {
            Some(a) if a.read_only_hint == Some(true) => golem_protocol::ToolKind::Read,
            _ => golem_protocol::ToolKind::Other,
        }
    }
    /// `ask (default)`, `preApproved (configured)`, …
    fn approval_policy(&self) -> Option<String> {
        let whose = if self.configured {
            "configured"
        } else {
            "default"
        };
        Some(format!("{} ({whose})", self.decision.as_str()))
    }
    fn prepare<'a>(&'a self, args: &'a Value, _ctx: &'a ToolContext) -> Preparing<'a> {
        let prepared = if args.is_object() {
            Ok(PreparedCall::new(Plan::args(args.clone()))
                .with_requirement(self.decision.requirement(&self.name))
                .with_description(self.call_description(args))
                .with_risk(self.risk()))
        } else {
            Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                format!(
                    "invalid arguments for {}: expected a JSON object",
                    self.name
                ),
            ))
        };
        Preparing::ready(prepared)
    }
    async fn execute(&self, plan: Plan, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args = plan.downcast::<Value>(&self.name)?;
        let arguments = match args {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        // The server's questions during the call go to this call's user (or are declined).
        let _asking = self.server.asking.hold(ctx);
        match self.server.call(&self.remote, arguments, &ctx.cancel).await {
            Ok((result, changes)) => {
                // What the call changed in a jailed server's zones lands only once it passes
                // their approval.
                if let (Some(pending), Some(sandbox)) = (changes, self.server.sandbox()) {
                    changes::settle(pending, sandbox, ctx, &self.name).await?;
                }
                map_result(&self.name, result)
            }
            Err(CallError::Cancelled) => Err(ToolError::new(
                ToolErrorCode::Interrupted,
                format!("{} was interrupted", self.name),
            )),
            Err(CallError::Failed(message)) => {
                Err(ToolError::new(ToolErrorCode::ExecutionError, message))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use golem_core::approval::ApprovalRequirement;
    use serde_json::json;

    use super::*;
    use crate::{McpJailOptions, ServerSpec, Transport};

    fn tool(annotations: Value, decision: ApprovalDecisionType) -> McpTool {
        tool_of(
            Transport::Stdio {
                command: "true".to_owned(),
                args: vec![],
                env: Default::default(),
                cwd: PathBuf::from("."),
                reaper: None,
            },
            annotations,
            decision,
        )
    }

    fn tool_of(
        transport: Transport,
        annotations: Value,
        decision: ApprovalDecisionType,
    ) -> McpTool {
        let server = Arc::new(Server::new(
            ServerSpec {
                name: "files".to_owned(),
                transport,
            },
            Duration::from_secs(1),
        ));
        let info: rmcp::model::Tool = serde_json::from_value(json!({
            "name": "delete",
            "inputSchema": {"type": "object"},
            "annotations": annotations,
        }))
        .unwrap();
        McpTool::new(server, "files__delete".to_owned(), info, decision, false)
    }

    #[test]
    fn hints_are_shown_and_never_skip_the_gate() {
        let read_only = tool(
            json!({"readOnlyHint": true, "destructiveHint": false}),
            ApprovalDecisionType::Ask,
        );
        let description = read_only.call_description(&json!({"path": "a"}));
        assert_eq!(
            description,
            "Call `delete` on the MCP server `files` (outside the jail) (the server says: \
             read-only, not destructive) with {\"path\":\"a\"}"
        );
        assert_eq!(read_only.risk(), Risk::Low);
        assert_eq!(
            read_only.decision.requirement(&read_only.name),
            ApprovalRequirement::Ask,
            "a read-only hint still asks"
        );
        assert_eq!(
            read_only.approval_policy().as_deref(),
            Some("ask (default)")
        );
        let destructive = tool(json!({"destructiveHint": true}), ApprovalDecisionType::Ask);
        assert!(
            destructive
                .call_description(&json!({}))
                .contains("destructive")
        );
        assert_eq!(destructive.risk(), Risk::High);
        assert_eq!(
            destructive.description(),
            "Tool delete of the MCP server files"
        );
    }

    #[test]
    fn a_jailed_server_says_where_it_runs() {
        use golem_sandbox::jail::{Jail, JailPolicy};
        use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("docs")).unwrap();
        std::fs::create_dir(dir.path().join("servers")).unwrap();
        let sandbox = Sandbox::open(
            dir.path(),
            &[
                ZoneConfig::new("docs", ZoneMode::Rw),
                ZoneConfig::new("servers", ZoneMode::Ro),
            ],
        )
        .unwrap();
        let jailed = tool_of(
            Transport::Jailed {
                command: "node".to_owned(),
                args: vec![],
                env: Default::default(),
                jail: Box::new(McpJailOptions {
                    jail: Jail::new("golem-forge".into(), sandbox, JailPolicy::default()),
                    cwd: Some("/docs".to_owned()),
                }),
            },
            serde_json::json!({}),
            ApprovalDecisionType::Ask,
        );
        assert_eq!(
            jailed.call_description(&serde_json::json!({})),
            "Call `delete` on the MCP server `files` (in the jail: zones docs, servers, no network) \
             with {}"
        );
    }
}
