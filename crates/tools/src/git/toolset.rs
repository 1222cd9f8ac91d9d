//! The git toolset as a worker file configures it (`toolsets.git`) and its place among the
//! toolsets: the git tools on the repository of one zone, in two jails (without and with the
//! network).

use golem_sandbox::ZoneMode;
use golem_sandbox::jail::Ipv4Network;
use golem_toolset::config::{
    JailMode, ProcessLimitsConfig, default_timeout, non_empty_string, or_default, positive_secs,
};
use golem_toolset::jail::zone_list;
use golem_toolset::network::private_networks;
use golem_toolset::{
    BuildContext, JailUse, NetworkAccess, ProcessJail, Reach, Section, Tools, Toolset,
    ToolsetConfig, ToolsetError,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{DEFAULT_AUTHOR, GitAuthor, READ_TOOLS, git_tools};

/// The git tools on the repository of one zone.
pub struct GitToolset;

/// The git toolset's options (`toolsets.git`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitToolsetConfig {
    /// The zone whose root is the repository (required).
    #[serde(deserialize_with = "non_empty_string")]
    #[schemars(length(min = 1))]
    pub zone: String,
    /// Whether the repository's hooks run (default `false`: git runs with no hooks).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<bool>")]
    pub hooks: bool,
    /// The identity of commits (default: the repository's own `user.name` and `user.email`,
    /// else `Golem Forge <golem-forge@localhost>`).
    #[serde(default)]
    pub author: Option<GitAuthor>,
    /// Wall-clock limit of each git command in seconds (default 60).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout: u64,
    /// How strictly to jail (default `strict`).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<JailMode>")]
    pub jail: JailMode,
    /// Resource limits of git's processes.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ProcessLimitsConfig>")]
    pub limits: ProcessLimitsConfig,
    /// Private networks `git_pull` and `git_push` may reach (a company's git server); the
    /// host's own services and other private networks are out of their reach.
    #[serde(default, deserialize_with = "private_networks")]
    #[schemars(with = "Option<Vec<String>>")]
    pub allow_private: Vec<Ipv4Network>,
}

impl ToolsetConfig for GitToolsetConfig {
    fn empty() -> Result<GitToolsetConfig, &'static str> {
        Err("must give `zone`, the zone whose root is the repository (`git: { zone: repo }`)")
    }
}

impl Toolset for GitToolset {
    type Config = GitToolsetConfig;

    /// Two jails over the worker's zones, both checked against the kernel now: one without
    /// the network for reading and changing the repository, one with it for `git_pull` and
    /// `git_push` (only built when the zone is `rw`, the only case they exist in).
    fn build(config: &GitToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let Some(zone) = cx.sandbox.zone(&config.zone) else {
            return Err(cx.config_error(
                "git",
                format_args!(
                    "zone `{}` is not a zone of this worker (zones: {})",
                    config.zone,
                    zone_list(cx)
                ),
            ));
        };
        let offline = NetworkAccess::default();
        let online = NetworkAccess {
            on: true,
            allow_private: config.allow_private.clone(),
        };
        let process = |network| ProcessJail {
            toolset: "git",
            mode_key: "jail",
            network,
            jail: config.jail,
            limits: &config.limits,
            workdir: None,
            timeout: config.timeout,
            max_timeout: config.timeout,
        };
        let local = process(&offline).build(cx)?.jail;
        let network = match zone.mode() {
            ZoneMode::Rw => Some(process(&online).build(cx)?.jail),
            ZoneMode::Ro => None,
        };
        git_tools(local, network, config).map_err(|e| cx.config_error("git", e))
    }

    fn reach(_: &GitToolsetConfig) -> Reach {
        Reach {
            zones: true,
            ..Reach::default()
        }
    }

    /// Every git tool but `git_pull` and `git_push` runs without the network.
    fn jail_use(_: &GitToolsetConfig) -> Option<JailUse> {
        Some(JailUse {
            label: Some("git"),
            network_off: true,
            network_on: true,
        })
    }

    /// The repository's zone, whether its hooks run, the identity of commits and the time
    /// limit (on a read-only zone, that only the read tools exist).
    fn section(
        config: &GitToolsetConfig,
        cx: &BuildContext<'_>,
    ) -> Result<Option<Section>, ToolsetError> {
        let read_only = cx
            .sandbox
            .zone(&config.zone)
            .is_some_and(|zone| zone.mode() == ZoneMode::Ro);
        let (name, email) = match &config.author {
            Some(author) => (author.name.as_str(), author.email.as_str()),
            None => DEFAULT_AUTHOR,
        };
        let author = match &config.author {
            Some(_) => format!("{name} <{email}>"),
            None => format!("the repository's own, else {name} <{email}>"),
        };
        let mut lines = vec![
            format!("  repository: /{} (the zone's root)", config.zone),
            format!(
                "  hooks: {}",
                if config.hooks {
                    "run (hooks: true)"
                } else {
                    "off"
                }
            ),
        ];
        if read_only {
            lines.push(format!(
                "  read-only zone: only {} (nothing is changed or pushed)",
                READ_TOOLS.join(", ")
            ));
            lines.push(format!("  limit: {} s per git command", config.timeout));
        } else {
            lines.push(format!("  commits as: {author}"));
            lines.push(format!(
                "  limit: {} s per git command; git_pull and git_push use the network",
                config.timeout
            ));
        }
        Ok(Some(Section {
            title: "Git".to_owned(),
            lines,
        }))
    }
}
