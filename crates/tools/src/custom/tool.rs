//! One custom tool: its description and schema from the module, approval decided in
//! `prepare` (what the user configured for the tool by name first; else the tool's own
//! `needs_approval`, static or asked of the module for the call's arguments; else the
//! configured `default`, `ask` when unset), and each call run as a
//! `call NAME` request whose output becomes the result (`output.rs`); a result passed on as
//! `structured` because it was not valid is told to the user, the first time for each tool.
//! A dynamic policy that gives no answer to trust (it fails, times out, answers neither true
//! nor false, or is answered for by something else than the module's process) fails closed:
//! the call is asked for.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use golem_core::approval::{ApprovalConfig, ApprovalDecisionType, ApprovalRequirement};
use golem_core::tool::{ManualExecution, Plan, PreparedCall, Preparing, Tool, ToolContext};
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};
use golem_toolset::process::changes;
use serde_json::Value;

use super::CustomNotice;
use super::describe::{Entry, OwnPolicy};
use super::module::Module;
use super::output;

/// Where a tool's approval comes from.
#[derive(Debug, Clone)]
enum Approval {
    /// The tool's own policy.
    Own(OwnPolicy),
    /// The configured decision; `configured` is false when it is the unset default (`ask`),
    /// `over_own` true when the user named the tool and so overruled its own policy.
    Config {
        decision: ApprovalDecisionType,
        configured: bool,
        over_own: bool,
    },
}

/// A tool of a custom module.
pub struct CustomTool {
    module: Arc<Module>,
    name: String,
    description: String,
    input_schema: Value,
    execution: ManualExecution,
    approval: Approval,
    /// Where warnings for the tool's author go (`None`: `tracing::warn!`).
    notice: Option<CustomNotice>,
    /// Whether the user was told that a result was not valid.
    warned: AtomicBool,
}

impl CustomTool {
    /// The tool `entry` of `module`, with `config` for when it has no policy of its own, telling
    /// `notice` what its author should know.
    pub fn new(
        module: Arc<Module>,
        entry: Entry,
        config: &ApprovalConfig,
        notice: Option<CustomNotice>,
    ) -> CustomTool {
        // The user's word for this tool by name beats the module's own policy, which beats
        // only the `default:`, which wraps tools that define none (docs/tools.md, Approval).
        let approval = match (config.tools.get(&entry.name), entry.own_policy) {
            (Some(decision), own) => Approval::Config {
                decision: *decision,
                configured: true,
                over_own: own.is_some(),
            },
            (None, Some(own)) => Approval::Own(own),
            (None, None) => Approval::Config {
                decision: config.decision_for(&entry.name),
                configured: config.default.is_some(),
                over_own: false,
            },
        };
        let description = if entry.description.is_empty() {
            format!("Custom tool {} from {}", entry.name, module.shown())
        } else {
            entry.description
        };
        CustomTool {
            module,
            name: entry.name,
            description,
            input_schema: entry.input_schema,
            execution: entry.execution,
            approval,
            notice,
            warned: AtomicBool::new(false),
        }
    }

    /// Tells the user `warning` (about a result of this tool), the first time only.
    fn warn(&self, warning: &str) {
        if self.warned.swap(true, Ordering::Relaxed) {
            tracing::debug!("{warning}");
            return;
        }
        self.tell(&format!("{warning} (told once per session)"));
    }

    /// Tells the user `message`, through the notice if there is one.
    fn tell(&self, message: &str) {
        match &self.notice {
            Some(notice) => {
                tracing::info!("{message}");
                (notice.0)(message);
            }
            None => tracing::warn!("{message}"),
        }
    }

    fn what(&self) -> String {
        format!(
            "custom tool `{}` (module {})",
            self.name,
            self.module.shown()
        )
    }

    /// The requirement for a call with `args`.
    async fn requirement(
        &self,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<ApprovalRequirement, ToolError> {
        let ask = |ask: bool| {
            if ask {
                ApprovalRequirement::Ask
            } else {
                ApprovalRequirement::PreApproved
            }
        };
        match &self.approval {
            Approval::Own(OwnPolicy::Static(needs)) => Ok(ask(*needs)),
            Approval::Config { decision, .. } => Ok(decision.requirement(&self.name)),
            Approval::Own(OwnPolicy::Dynamic) => {
                let answer = match self
                    .module
                    .ask("policy", &self.name, args, &ctx.cancel)
                    .await
                {
                    Ok(answer) => answer,
                    Err(error) if error.code == ToolErrorCode::Interrupted => return Err(error),
                    Err(error) => return Ok(self.untrusted_policy(&error.message)),
                };
                // Deciding a policy is no occasion to change the zones: that is dropped.
                if let Some(changes) = answer.changes {
                    tracing::warn!(tool = %self.name, "its needs_approval changed the zones; the changes were discarded");
                    if let Ok(changeset) = changes {
                        changes::discard(changeset).await;
                    }
                }
                match answer.text.trim() {
                    "true" => Ok(ask(true)),
                    "false" => Ok(ask(false)),
                    other => Ok(self.untrusted_policy(&format!(
                        "its needs_approval must answer true or false, not {:?}",
                        other.chars().take(100).collect::<String>()
                    ))),
                }
            }
        }
    }

    /// A dynamic policy that gave no answer to go by (it failed, timed out, answered something
    /// else than true or false, or was answered for by something else than the module's
    /// process): the call is asked for, and the user told why.
    fn untrusted_policy(&self, why: &str) -> ApprovalRequirement {
        self.tell(&format!(
            "{}: its needs_approval gave no answer to trust, so the call is asked for: {why}",
            self.what()
        ));
        ApprovalRequirement::Ask
    }
}

#[async_trait]
impl Tool for CustomTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn input_schema(&self) -> &Value {
        &self.input_schema
    }
    fn execution(&self) -> ManualExecution {
        self.execution.clone()
    }
    /// The final policy and whose it is: `ask (tool's own)`, `dynamic (tool's own)`,
    /// `preApproved (configured)`, `blocked (configured, over the tool's own)`, `ask (default)`.
    fn approval_policy(&self) -> Option<String> {
        Some(match &self.approval {
            Approval::Own(OwnPolicy::Static(true)) => "ask (tool's own)".to_owned(),
            Approval::Own(OwnPolicy::Static(false)) => "preApproved (tool's own)".to_owned(),
            Approval::Own(OwnPolicy::Dynamic) => "dynamic (tool's own)".to_owned(),
            Approval::Config {
                decision,
                configured: true,
                over_own: true,
            } => format!("{} (configured, over the tool's own)", decision.as_str()),
            Approval::Config {
                decision,
                configured: true,
                over_own: false,
            } => format!("{} (configured)", decision.as_str()),
            Approval::Config {
                decision,
                configured: false,
                ..
            } => format!("{} (default)", decision.as_str()),
        })
    }
    fn prepare<'a>(&'a self, args: &'a Value, ctx: &'a ToolContext) -> Preparing<'a> {
        Preparing::later(async move {
            if !args.is_object() {
                return Err(ToolError::new(
                    ToolErrorCode::InvalidArguments,
                    format!(
                        "invalid arguments for {}: expected a JSON object",
                        self.name
                    ),
                ));
            }
            let requirement = self.requirement(args, ctx).await?;
            Ok(PreparedCall::new(Plan::args(args.clone()))
                .with_requirement(requirement)
                .with_risk(self.module.runner().risk()))
        })
    }
    async fn execute(&self, plan: Plan, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args = plan.downcast::<Value>(&self.name)?;
        let answer = self
            .module
            .ask("call", &self.name, &args, &ctx.cancel)
            .await?;
        // What the call changed in the zones lands only once it passes their approval.
        if let Some(pending) = answer.changes {
            let sandbox = self.module.runner().sandbox();
            changes::settle(pending, sandbox, ctx, &self.name).await?;
        }
        let output = output::result(&self.what(), &answer.text)?;
        if let Some(warning) = &output.warning {
            self.warn(warning);
        }
        Ok(output.value)
    }
}
