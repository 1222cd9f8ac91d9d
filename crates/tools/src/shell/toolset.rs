//! The `shell` toolset as a worker file configures it (`toolsets.shell`) and its place among
//! the toolsets: `shell` in a jail built from these settings, decided by its rules.

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

use super::{ShellOptions, ShellRule, ShellRules, bare_program_warning, shell_tool};

/// `shell` in the jail, decided by rules.
pub struct ShellToolset;

/// The shell toolset's options.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellToolsetConfig {
    /// The rules, in the order written.
    #[serde(default, deserialize_with = "or_default")]
    pub rules: Vec<ShellRule>,
    /// The decision for commands no rule matches; absent → they are blocked.
    #[serde(default)]
    pub default: Option<ApprovalDecisionType>,
    /// Whether commands may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Wall-clock limit per command in seconds when the call names none (default 60).
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
    /// The zone commands run in (default: the first `rw` zone, else the private `/tmp`).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Resource limits.
    #[serde(default, deserialize_with = "or_default")]
    pub limits: ProcessLimitsConfig,
}

impl Default for ShellToolsetConfig {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            default: None,
            network: NetworkAccess::default(),
            timeout: DEFAULT_TIMEOUT_SECS,
            max_timeout: DEFAULT_MAX_TIMEOUT_SECS,
            jail: JailMode::Strict,
            workdir: None,
            limits: ProcessLimitsConfig::default(),
        }
    }
}

impl ToolsetConfig for ShellToolsetConfig {
    fn empty() -> Result<ShellToolsetConfig, &'static str> {
        Ok(ShellToolsetConfig::default())
    }
}

impl Toolset for ShellToolset {
    type Config = ShellToolsetConfig;

    fn build(config: &ShellToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let rules = ShellRules::new(config.rules.clone(), config.default)
            .map_err(|e| cx.config_error("shell.rules", e))?;
        let built = ProcessJail {
            toolset: "shell",
            mode_key: "jail",
            network: &config.network,
            jail: config.jail,
            limits: &config.limits,
            workdir: config.workdir.as_deref(),
            timeout: config.timeout,
            max_timeout: config.max_timeout,
        }
        .build(cx)?;
        Ok(vec![shell_tool(
            built.jail,
            ShellOptions {
                rules,
                default_timeout: built.timeout,
                max_timeout: built.max_timeout,
                cwd_zone: built.cwd_zone,
            },
        )])
    }

    fn reach(config: &ShellToolsetConfig) -> Reach {
        Reach {
            zones: true,
            programs: true,
            network: config.network.on,
            ..Reach::default()
        }
    }

    fn jail_use(config: &ShellToolsetConfig) -> Option<JailUse> {
        Some(JailUse {
            label: Some("shell"),
            network_off: !config.network.on,
            network_on: config.network.on,
        })
    }

    /// Rules that pre-approve every command of a program that can run other programs or load
    /// other configuration (`git `, `find `): such commands ask anyway (the table in
    /// `dangerous/`), and a narrow rule says what is meant.
    fn warnings(config: &ShellToolsetConfig) -> Vec<String> {
        config
            .rules
            .iter()
            .enumerate()
            .filter(|(_, rule)| rule.approval == ApprovalDecisionType::PreApproved)
            .filter_map(|(i, rule)| {
                let warning = bare_program_warning(&rule.pattern)?;
                Some(format!(
                    "warning: shell rule {} (`{}`) {warning}",
                    i + 1,
                    rule.pattern.trim()
                ))
            })
            .collect()
    }
}
