//! The `shell` toolset as a worker file configures it (`toolsets.shell`) and its place among
//! the toolsets: `shell` in a jail built from these settings, decided by its rules.

use golem_core::approval::ApprovalDecisionType;
use golem_toolset::config::or_default;
use golem_toolset::{BuildContext, JailUse, Jailed, Reach, Tools, Toolset, ToolsetError};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ShellRule, ShellRules, bare_program_warning, shell_tool};

/// `shell` in the jail, decided by rules.
pub struct ShellToolset;

/// `toolsets.shell`: the keys of [`ShellConfig`] and how its programs run
/// ([`golem_toolset::ProgramsConfig`]).
pub type ShellToolsetConfig = Jailed<ShellConfig>;

/// The shell toolset's own keys, its approval rules; `toolsets.shell` also takes the keys the
/// toolsets that run programs share (`network`, `timeout`, `max_timeout`, `jail`, `workdir`,
/// `limits`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellConfig {
    /// The rules, in the order written: the first whose pattern words begin the command decides.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<Vec<ShellRule>>")]
    pub rules: Vec<ShellRule>,
    /// The decision for commands no rule matches; absent → they are blocked.
    #[serde(default)]
    pub default: Option<ApprovalDecisionType>,
}

impl Toolset for ShellToolset {
    type Config = ShellToolsetConfig;

    fn build(config: &ShellToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let rules = ShellRules::new(config.own.rules.clone(), config.own.default)
            .map_err(|e| cx.config_error("shell.rules", e))?;
        let built = config.programs.process_jail("shell").build(cx)?;
        Ok(vec![shell_tool(built, rules)])
    }

    fn reach(config: &ShellToolsetConfig) -> Reach {
        Reach {
            zones: true,
            programs: true,
            network: config.programs.network.on,
            ..Reach::default()
        }
    }

    fn jail_use(config: &ShellToolsetConfig) -> Option<JailUse> {
        Some(JailUse {
            label: Some("shell"),
            network_off: !config.programs.network.on,
            network_on: config.programs.network.on,
        })
    }

    /// Rules that pre-approve every command of a program that can run other programs or load
    /// other configuration (`git `, `find `): such commands ask anyway (the table in
    /// `dangerous/`), and a narrow rule says what is meant.
    fn warnings(config: &ShellToolsetConfig) -> Vec<String> {
        config
            .own
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
