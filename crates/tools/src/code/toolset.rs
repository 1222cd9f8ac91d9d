//! The `code` toolset as a worker file configures it (`toolsets.code`) and its place among the
//! toolsets: `run_code` in a jail built from these settings.

use golem_core::approval::ApprovalDecisionType;
use golem_toolset::config::{
    DEFAULT_MAX_TIMEOUT_SECS, DEFAULT_TIMEOUT_SECS, JailMode, ProcessLimitsConfig,
    default_max_timeout, default_timeout, or_default, positive_max_secs, positive_secs,
};
use golem_toolset::{
    BuildContext, JailUse, NetworkAccess, ProcessJail, Reach, Tools, Toolset, ToolsetConfig,
    ToolsetError,
};
use serde::Deserialize;

use super::{CodeOptions, run_code_tool};

/// `run_code` in the jail.
pub struct CodeToolset;

/// The code toolset's options.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeToolsetConfig {
    /// Whether code may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Wall-clock limit per run in seconds when the call names none (default 60, at least 1).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    pub timeout: u64,
    /// The longest `timeout` a call may ask for (default 600).
    #[serde(
        default = "default_max_timeout",
        deserialize_with = "positive_max_secs"
    )]
    pub max_timeout: u64,
    /// How strictly to jail (default `strict`).
    #[serde(default, deserialize_with = "or_default")]
    pub jail: JailMode,
    /// The zone code runs in (default: the first `rw` zone, else the private `/tmp`).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Consent for `run_code` (default `preApproved`: it is jailed).
    #[serde(default = "pre_approved")]
    pub approval: ApprovalDecisionType,
    /// Resource limits.
    #[serde(default, deserialize_with = "or_default")]
    pub limits: ProcessLimitsConfig,
}

impl Default for CodeToolsetConfig {
    fn default() -> Self {
        Self {
            network: NetworkAccess::default(),
            timeout: DEFAULT_TIMEOUT_SECS,
            max_timeout: DEFAULT_MAX_TIMEOUT_SECS,
            jail: JailMode::Strict,
            workdir: None,
            approval: ApprovalDecisionType::PreApproved,
            limits: ProcessLimitsConfig::default(),
        }
    }
}

fn pre_approved() -> ApprovalDecisionType {
    ApprovalDecisionType::PreApproved
}

impl ToolsetConfig for CodeToolsetConfig {
    fn empty() -> Result<CodeToolsetConfig, &'static str> {
        Ok(CodeToolsetConfig::default())
    }
}

impl Toolset for CodeToolset {
    type Config = CodeToolsetConfig;

    fn build(config: &CodeToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let built = ProcessJail {
            toolset: "code",
            mode_key: "jail",
            network: &config.network,
            jail: config.jail,
            limits: &config.limits,
            workdir: config.workdir.as_deref(),
            timeout: config.timeout,
            max_timeout: config.max_timeout,
        }
        .build(cx)?;
        Ok(vec![run_code_tool(
            built.jail,
            CodeOptions {
                default_timeout: built.timeout,
                max_timeout: built.max_timeout,
                cwd_zone: built.cwd_zone,
                approval: config.approval,
            },
        )])
    }

    fn reach(config: &CodeToolsetConfig) -> Reach {
        Reach {
            zones: true,
            programs: true,
            network: config.network.on,
            ..Reach::default()
        }
    }

    fn jail_use(config: &CodeToolsetConfig) -> Option<JailUse> {
        Some(JailUse {
            label: Some("run_code"),
            network_off: !config.network.on,
            network_on: config.network.on,
        })
    }
}
