//! The built-in toolsets, listed once: the `toolsets:` section of a worker file
//! ([`ToolsetsConfig`], one key per toolset) and the keys in their order ([`TOOLSET_KEYS`]).
//! The launcher (`launch::build_tools`), `golem-forge check` and the MCP server's catalog all
//! go through [`ToolsetsConfig::configured`]; what each toolset is lives in its own folder (see
//! ARCHITECTURE.md, "A toolset"). The worker file holds this section, so nothing here knows the
//! worker file or the launcher.

use golem_toolset::{Configured, ConfiguredToolset};
use serde::Deserialize;

pub use golem_mcp_client::{mcp_cache_dir, mcp_options};

/// Declares the built-in toolsets: `key: Type` per line, in the order their tools are offered
/// to the model.
macro_rules! builtin_toolsets {
    ($($(#[$doc:meta])* $key:ident: $toolset:ty,)*) => {
        /// The `toolsets:` section. A toolset is present when its key is, even with an empty
        /// value (`filesystem:` or `filesystem: {}`).
        #[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ToolsetsConfig {
            $(
                $(#[$doc])*
                #[serde(default, deserialize_with = "golem_toolset::present")]
                pub $key: Option<<$toolset as golem_toolset::Toolset>::Config>,
            )*
        }

        /// Every key of the list, in its order: the order of [`ToolsetsConfig::configured`]
        /// and of the tools in the prompt.
        pub const TOOLSET_KEYS: &[&str] = &[$(stringify!($key)),*];

        /// What each toolset of the list says of its schemas
        /// ([`golem_toolset::Toolset::SCHEMAS`]), in the list's order.
        #[cfg(test)]
        const DECLARED_SCHEMAS: &[golem_toolset::Schemas] =
            &[$(<$toolset as golem_toolset::Toolset>::SCHEMAS),*];

        impl ToolsetsConfig {
            /// The toolsets the worker turned on, in order.
            pub fn configured(&self) -> Vec<Box<dyn ConfiguredToolset + '_>> {
                let mut configured: Vec<Box<dyn ConfiguredToolset + '_>> = Vec::new();
                $(
                    if let Some(config) = &self.$key {
                        configured.push(Box::new(Configured::<$toolset> {
                            key: stringify!($key),
                            config,
                        }));
                    }
                )*
                configured
            }
        }
    };
}

builtin_toolsets! {
    /// File tools over the worker's zones.
    filesystem: golem_tools::filesystem::FilesystemToolset,
    /// `run_code` in the jail.
    code: golem_tools::code::CodeToolset,
    /// `shell` in the jail, decided by rules.
    shell: golem_tools::shell::ShellToolset,
    /// One tool per allowed sub-worker.
    workers: crate::workers_toolset::WorkersToolset,
    /// `web_fetch` and `web_search`.
    web: golem_web_tools::WebToolset,
    /// The git tools on the repository of one zone.
    git: golem_tools::git::GitToolset,
    /// Custom tools from local modules (Python, JavaScript or any executable).
    custom: golem_tools::custom::CustomToolset,
    /// The tools of MCP servers, each exposed as `<server>__<tool>`.
    mcp: golem_mcp_client::McpToolset,
}

#[cfg(test)]
mod tests {
    use golem_toolset::Schemas;

    use super::*;

    /// A worker file's `toolsets:` section read the way the worker file reads it.
    #[derive(Debug, Deserialize)]
    struct Front {
        toolsets: ToolsetsConfig,
    }

    fn parse(toolsets: &str) -> Result<ToolsetsConfig, String> {
        crate::worker::yaml::from_yaml::<Front>(&format!("toolsets:\n{toolsets}"), 1, "test")
            .map(|front| front.toolsets)
            .map_err(|problem| format!("{problem:?}"))
    }

    /// The value a toolset is turned on with here: none (its empty configuration), unless it
    /// needs one.
    fn value_of(key: &str) -> &'static str {
        match key {
            "git" => " { zone: repo }",
            _ => "",
        }
    }

    #[test]
    fn every_toolset_is_listed_once_in_the_prompts_order() {
        // Written in the reverse of the list's order: `configured` follows the list, not the file.
        let text: String = TOOLSET_KEYS
            .iter()
            .rev()
            .map(|key| format!("  {key}:{}\n", value_of(key)))
            .collect();
        let config = parse(&text).unwrap_or_else(|e| {
            panic!("every toolset turned on (give `value_of` a value for one that needs it): {e}")
        });
        let configured = config.configured();
        let keys: Vec<&str> = configured.iter().map(|toolset| toolset.key()).collect();
        assert_eq!(keys, TOOLSET_KEYS);
        let unique: std::collections::BTreeSet<&str> = keys.iter().copied().collect();
        assert_eq!(unique.len(), keys.len(), "a key listed twice: {keys:?}");
        // Each answers for its schemas what its toolset declares; MCP servers' schemas come from
        // outside and are checked when they are registered.
        let schemas: Vec<Schemas> = configured.iter().map(|toolset| toolset.schemas()).collect();
        assert_eq!(schemas, DECLARED_SCHEMAS);
        let mcp = keys
            .iter()
            .position(|key| *key == "mcp")
            .expect("mcp is listed");
        assert_eq!(schemas[mcp], Schemas::Unchecked);
        // Nothing else is on when nothing is written.
        assert!(ToolsetsConfig::default().configured().is_empty());
    }

    #[test]
    fn a_key_with_no_value_is_its_empty_configuration_or_an_error() {
        let config = parse("  shell:\n").expect("shell with no value");
        assert_eq!(
            config.shell,
            Some(golem_tools::shell::ShellToolsetConfig::default())
        );
        let err = parse("  git:\n").expect_err("git needs its zone");
        assert!(err.contains("must give `zone`"), "{err}");
        assert!(err.contains("toolsets.git"), "{err}");
    }
}
