//! The `code` toolset as a worker file configures it (`toolsets.code`) and its place among the
//! toolsets: `run_code` in a jail built from these settings.

use golem_core::approval::ApprovalDecisionType;
use golem_toolset::{BuildContext, JailUse, Jailed, Reach, Tools, Toolset, ToolsetError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::run_code_tool;

/// `run_code` in the jail.
pub struct CodeToolset;

/// `toolsets.code`: the keys of [`CodeConfig`] and how its programs run
/// ([`golem_toolset::ProgramsConfig`]).
pub type CodeToolsetConfig = Jailed<CodeConfig>;

/// The code toolset's own key; `toolsets.code` also takes the keys the toolsets that run
/// programs share (`network`, `timeout`, `max_timeout`, `jail`, `workdir`, `limits`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeConfig {
    /// Consent for `run_code` (default `preApproved`: it is jailed).
    #[serde(default = "pre_approved")]
    pub approval: ApprovalDecisionType,
}

impl Default for CodeConfig {
    fn default() -> Self {
        Self {
            approval: ApprovalDecisionType::PreApproved,
        }
    }
}

fn pre_approved() -> ApprovalDecisionType {
    ApprovalDecisionType::PreApproved
}

impl Toolset for CodeToolset {
    type Config = CodeToolsetConfig;

    fn build(config: &CodeToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let built = config.programs.process_jail("code").build(cx)?;
        Ok(vec![run_code_tool(built, config.own.approval)])
    }

    fn reach(config: &CodeToolsetConfig) -> Reach {
        Reach {
            zones: true,
            programs: true,
            network: config.programs.network.on,
            ..Reach::default()
        }
    }

    fn jail_use(config: &CodeToolsetConfig) -> Option<JailUse> {
        Some(JailUse {
            label: Some("run_code"),
            network_off: !config.programs.network.on,
            network_on: config.programs.network.on,
        })
    }
}
