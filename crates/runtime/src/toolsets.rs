//! The built-in toolsets, listed once: the `toolsets:` section of a worker file
//! ([`ToolsetsConfig`], one key per toolset) and building a worker's tools from it. The
//! launcher, `golem-forge check` and the MCP server's catalog all go through
//! [`ToolsetsConfig::configured`]; what each toolset is lives in its own folder (see
//! ARCHITECTURE.md, "A toolset").

use std::sync::Arc;

use golem_core::registry::ToolRegistry;
use golem_sandbox::Sandbox;
use golem_toolset::{BuildContext, Configured, ConfiguredToolset, Schemas, ToolsetError};
use serde::Deserialize;

pub use golem_mcp_client::{mcp_cache_dir, mcp_options};

use crate::delegation::SessionDelegation;
use crate::launch::{LaunchError, SessionEnv, WorkerFrame};
use crate::worker::WorkerDefinition;

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
    workers: crate::delegation::WorkersToolset,
    /// `web_fetch` and `web_search`.
    web: golem_web_tools::WebToolset,
    /// The git tools on the repository of one zone.
    git: golem_tools::git::GitToolset,
    /// Custom tools from local modules (Python, JavaScript or any executable).
    custom: golem_tools::custom::CustomToolset,
    /// The tools of MCP servers, each exposed as `<server>__<tool>`.
    mcp: golem_mcp_client::McpToolset,
}

/// Where `definition`'s toolsets are built or described: the worker, `sandbox` and the program,
/// with nothing to notify and no delegation — as `check` and `mcp-refresh` use it; a session
/// adds both (`build_tools`).
pub fn outside_session<'a>(
    definition: &'a WorkerDefinition,
    sandbox: &'a Sandbox,
    program_root: &'a std::path::Path,
    jail_helper: Option<&'a std::path::Path>,
) -> BuildContext<'a> {
    BuildContext {
        worker: &definition.name,
        worker_file: &definition.path,
        sandbox,
        program_root,
        jail_helper,
        notice: None,
        delegation: None,
    }
}

/// Builds the tools of `definition`, toolset by toolset in the list's order.
pub fn build_tools(
    env: &Arc<SessionEnv>,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    frame: &WorkerFrame,
) -> Result<ToolRegistry, LaunchError> {
    let delegation = SessionDelegation {
        env: env.clone(),
        frame: frame.clone(),
    };
    let ui = env.ui.clone();
    let cx = BuildContext {
        notice: Some(Arc::new(move |level, message: &str| {
            ui.show_status(level, message);
        })),
        delegation: Some(&delegation),
        ..outside_session(
            definition,
            sandbox,
            &env.config.root,
            env.jail_helper.as_deref(),
        )
    };
    let mut toolsets = definition.toolsets.configured();
    if frame.depth == 0
        && let Some(config) = &env.client_mcp
    {
        if let Some(own) = &definition.toolsets.mcp
            && let Some(name) = config.servers.keys().find(|n| own.servers.contains_key(*n))
        {
            return Err(LaunchError::Config(format!(
                "the client's MCP server `{name}` has the name of one of worker {}'s own \
                 (toolsets.mcp.servers); rename it in the client",
                definition.name
            )));
        }
        toolsets.push(Box::new(Configured::<golem_mcp_client::McpToolset> {
            key: "mcp",
            config,
        }));
    }
    let mut registry = ToolRegistry::new();
    for toolset in toolsets {
        let tools = toolset.build(&cx).map_err(launch_error)?;
        for tool in tools {
            match toolset.schemas() {
                Schemas::Checked => registry.register_checked(tool),
                Schemas::Unchecked => registry.register(tool),
            }
            .map_err(|e| LaunchError::Config(format!("worker {}: {e}", definition.name)))?;
        }
    }
    Ok(registry)
}

/// A toolset's error as the launcher reports it.
pub fn launch_error(error: ToolsetError) -> LaunchError {
    match error {
        ToolsetError::Config(message) => LaunchError::Config(message),
        ToolsetError::Unsupported(message) => LaunchError::Unsupported(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_toolset_is_listed_once_in_the_prompts_order() {
        let text = "---\nname: all\ntoolsets:\n  mcp: {}\n  custom: []\n  git: { zone: repo }\n  \
                    web: {}\n  workers: {}\n  shell: {}\n  code: {}\n  filesystem:\n---\nHi.\n";
        let worker = crate::worker::parse_worker(text, std::path::Path::new("all.worker"))
            .expect("the worker parses");
        let keys: Vec<&str> = worker
            .toolsets
            .configured()
            .iter()
            .map(|toolset| toolset.key())
            .collect();
        assert_eq!(
            keys,
            [
                "filesystem",
                "code",
                "shell",
                "workers",
                "web",
                "git",
                "custom",
                "mcp"
            ]
        );
        let schemas: Vec<Schemas> = worker
            .toolsets
            .configured()
            .iter()
            .map(|toolset| toolset.schemas())
            .collect();
        assert_eq!(schemas.last(), Some(&Schemas::Unchecked));
        assert!(schemas[..7].iter().all(|s| *s == Schemas::Checked));
    }

    #[test]
    fn a_key_with_no_value_is_its_empty_configuration_or_an_error() {
        let parse = |toolsets: &str| {
            let text = format!("---\nname: w\ntoolsets:\n{toolsets}---\nHi.\n");
            crate::worker::parse_worker(&text, std::path::Path::new("w.worker"))
                .map_err(|e| e.to_string())
        };
        let worker = parse("  shell:\n").expect("shell with no value");
        assert_eq!(
            worker.toolsets.shell,
            Some(golem_tools::shell::ShellToolsetConfig::default())
        );
        let err = parse("  git:\n").expect_err("git needs its zone");
        assert!(err.contains("must give `zone`"), "{err}");
        assert!(err.contains("toolsets.git"), "{err}");
    }
}
