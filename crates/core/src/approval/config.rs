//! Declarative approval configuration (docs/tools.md, Approval): a default and per-tool decisions,
//! applied to tools that have no policy of their own.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::ApprovalDecisionType;
use crate::decorated::DecoratedTool;
use crate::tool::Tool;

/// Per-tool approval decisions with a default, as written in a worker file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalConfig {
    /// The decision for tools not listed; `ask` when absent.
    #[serde(default)]
    pub default: Option<ApprovalDecisionType>,
    /// Decisions by tool name.
    #[serde(default)]
    pub tools: BTreeMap<String, ApprovalDecisionType>,
}

impl ApprovalConfig {
    /// The decision for `tool`: its own entry, else the default, else `ask`.
    pub fn decision_for(&self, tool: &str) -> ApprovalDecisionType {
        self.tools
            .get(tool)
            .copied()
            .or(self.default)
            .unwrap_or_default()
    }
}

/// Wraps `tool` so that, whenever it has no approval policy of its own for a call, the
/// configured decision applies (docs/tools.md, Approval). A tool's own policy is always
/// respected.
pub fn wrap_with_default_approval(tool: Arc<dyn Tool>, config: &ApprovalConfig) -> Arc<dyn Tool> {
    let decision = config.decision_for(tool.name());
    let requirement = decision.requirement(tool.name());
    let policy = format!("{} (configured)", decision.as_str());
    Arc::new(DecoratedTool::new(tool).with_default_approval(requirement, policy))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval::ApprovalRequirement;
    use crate::fn_tool::FnTool;
    use crate::tool::ToolContext;
    use golem_protocol::ToolResultValue;
    use serde_json::json;

    fn plain(name: &str) -> Arc<dyn Tool> {
        Arc::new(FnTool::new(
            name,
            "t",
            json!({"type": "object"}),
            |_, _| async { Ok(ToolResultValue::text("ok")) },
        ))
    }

    #[test]
    fn parses_config_and_rejects_unknown_keys() {
        let config: ApprovalConfig = serde_json::from_value(
            json!({"default": "blocked", "tools": {"wc": "preApproved", "rm": "ask"}}),
        )
        .unwrap();
        assert_eq!(config.decision_for("wc"), ApprovalDecisionType::PreApproved);
        assert_eq!(config.decision_for("rm"), ApprovalDecisionType::Ask);
        assert_eq!(config.decision_for("other"), ApprovalDecisionType::Blocked);
        assert_eq!(
            ApprovalConfig::default().decision_for("x"),
            ApprovalDecisionType::Ask
        );
        let err = serde_json::from_value::<ApprovalConfig>(json!({"defaults": "ask"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("defaults"), "{err}");
        assert!(serde_json::from_value::<ApprovalConfig>(json!({"default": "maybe"})).is_err());
    }

    async fn requirement(
        tool: &Arc<dyn Tool>,
        args: serde_json::Value,
    ) -> Option<ApprovalRequirement> {
        let ctx = ToolContext::for_model("t1");
        tool.prepare(&args, &ctx).await.unwrap().requirement
    }

    #[tokio::test]
    async fn fills_in_missing_policy_with_secure_default() {
        let wrapped = wrap_with_default_approval(plain("wc"), &ApprovalConfig::default());
        assert_eq!(
            requirement(&wrapped, json!({})).await,
            Some(ApprovalRequirement::Ask)
        );
        let config = ApprovalConfig {
            default: None,
            tools: [("wc".to_owned(), ApprovalDecisionType::PreApproved)].into(),
        };
        let wrapped = wrap_with_default_approval(plain("wc"), &config);
        assert_eq!(
            requirement(&wrapped, json!({})).await,
            Some(ApprovalRequirement::PreApproved)
        );
        let config = ApprovalConfig {
            default: Some(ApprovalDecisionType::Blocked),
            ..config
        };
        let wrapped = wrap_with_default_approval(plain("rm"), &config);
        assert!(matches!(
            requirement(&wrapped, json!({})).await,
            Some(ApprovalRequirement::Blocked { .. })
        ));
    }

    #[tokio::test]
    async fn respects_the_tools_own_policy() {
        let own = FnTool::new("push", "t", json!({"type": "object"}), |_, _| async {
            Ok(ToolResultValue::text("ok"))
        })
        .with_approval(|args| {
            if args["force"] == json!(true) {
                ApprovalRequirement::Ask
            } else {
                ApprovalRequirement::PreApproved
            }
        });
        let config = ApprovalConfig {
            default: Some(ApprovalDecisionType::Blocked),
            tools: BTreeMap::new(),
        };
        let wrapped = wrap_with_default_approval(Arc::new(own), &config);
        assert_eq!(
            requirement(&wrapped, json!({"force": false})).await,
            Some(ApprovalRequirement::PreApproved)
        );
        assert_eq!(
            requirement(&wrapped, json!({"force": true})).await,
            Some(ApprovalRequirement::Ask)
        );
        assert_eq!(wrapped.name(), "push");
    }
}
