//! The MCP toolset of a worker (`toolsets.mcp`): its options from the configuration — a
//! stdio server's working directory relative to the worker file, or, for a server with
//! `jail:`, a jail of its own over the zones it names (built like the other toolsets' jails,
//! see `ProcessToolset`) and a working directory checked in them — and its tools.

use std::sync::Arc;
use std::time::Duration;

use golem_sandbox::Sandbox;

use super::ProcessToolset;
use crate::launch::{LaunchError, SessionEnv};
use crate::worker::{McpJailConfig, McpServerConfig, McpToolsetConfig, WorkerDefinition};

/// The tools of every MCP server (`toolsets.mcp`): a stdio server a child process outside
/// the jail or, with `jail:`, in a jail of its own over the zones it names; an HTTP server an
/// endpoint. Tool lists come from the cache under the program root when it has them (no
/// server started until a call), and a server's changed tool list is announced as a `status`
/// event. A server that cannot be started or listed, a whitelisted tool it lacks, or a jail
/// the kernel cannot build fails the launch with a message naming the server and the tool.
pub(super) fn mcp_tools(
    env: &SessionEnv,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    mcp: &McpToolsetConfig,
) -> Result<Vec<Arc<dyn golem_core::tool::Tool>>, LaunchError> {
    let mut options = mcp_options(
        definition,
        mcp,
        &env.config.root,
        sandbox,
        env.jail_helper.as_deref(),
    )?;
    let ui = env.ui.clone();
    options.notice = Some(golem_tools::mcp::McpNotice(Arc::new(
        move |message: &str| {
            ui.show_status(golem_protocol::StatusLevel::Info, message);
        },
    )));
    golem_tools::mcp_tools(options).map_err(|e| {
        LaunchError::Config(format!(
            "worker {} ({}): {e}",
            definition.name,
            definition.path.display()
        ))
    })
}

/// The options of `definition`'s MCP toolset: a stdio server's working directory relative
/// to the worker file (default: the worker file's directory), a jailed server's jail over the
/// zones of `sandbox` it names (checked against the kernel now, with the program's jail
/// `helper`), the tool-list cache in `<program_root>/.golem-forge/mcp-tools`, and the same
/// `helper` as the reaper of the stdio servers outside the jail. For sessions,
/// `mcp-refresh` and `check`.
pub fn mcp_options(
    definition: &WorkerDefinition,
    mcp: &McpToolsetConfig,
    program_root: &std::path::Path,
    sandbox: &Sandbox,
    helper: Option<&std::path::Path>,
) -> Result<golem_tools::mcp::McpOptions, LaunchError> {
    let base = definition
        .path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let mut servers = Vec::new();
    for (name, server) in &mcp.servers {
        let transport = match server {
            McpServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
                jail: None,
            } => golem_tools::mcp::McpTransportOptions::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
                cwd: cwd
                    .as_deref()
                    .map_or_else(|| base.clone(), |cwd| base.join(cwd)),
            },
            McpServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
                jail: Some(jail),
            } => golem_tools::mcp::McpTransportOptions::Jailed {
                command: command.clone(),
                args: args.clone(),
                env: env.clone(),
                jail: Box::new(mcp_jail(
                    definition,
                    name,
                    jail,
                    cwd.as_deref(),
                    sandbox,
                    helper,
                    program_root,
                )?),
            },
            McpServerConfig::Http { url, headers } => golem_tools::mcp::McpTransportOptions::Http {
                url: url.clone(),
                headers: headers.clone(),
            },
        };
        servers.push(golem_tools::mcp::McpServerOptions {
            name: name.clone(),
            transport,
        });
    }
    Ok(golem_tools::mcp::McpOptions {
        servers,
        tools: mcp.tools.clone(),
        approval: mcp.approval.clone(),
        timeout: Duration::from_secs(mcp.timeout),
        cache_dir: Some(mcp_cache_dir(program_root)),
        notice: None,
        // The jail's helper is our binary, whose reaper runs the servers outside the jail.
        reaper: helper.map(std::path::Path::to_path_buf),
    })
}

/// The jail of the MCP server `server` (`toolsets.mcp.servers.<server>.jail`): the zones it
/// names (all of the worker's when it names none) at their virtual paths, its network, mode
/// and limits as for the other toolsets, and its working directory `cwd`, a virtual path in
/// one of those zones (default: the first zone's root, or the jail's `/tmp` without zones).
fn mcp_jail(
    definition: &WorkerDefinition,
    server: &str,
    jail: &McpJailConfig,
    cwd: Option<&str>,
    sandbox: &Sandbox,
    helper: Option<&std::path::Path>,
    program_root: &std::path::Path,
) -> Result<golem_tools::mcp::McpJailOptions, LaunchError> {
    let key = format!("mcp.servers.{server}.jail");
    let config_error = |message: String| {
        LaunchError::Config(format!(
            "worker {} ({}): toolsets.{key}: {message}",
            definition.name,
            definition.path.display()
        ))
    };
    let known = || {
        let zones: Vec<&str> = sandbox.zones().iter().map(|z| z.name()).collect();
        if zones.is_empty() {
            "none".to_owned()
        } else {
            zones.join(", ")
        }
    };
    let names: Vec<String> = match &jail.zones {
        Some(names) => names.clone(),
        None => sandbox
            .zones()
            .iter()
            .map(|z| z.name().to_owned())
            .collect(),
    };
    let mut zones = Vec::with_capacity(names.len());
    for name in &names {
        let Some(zone) = sandbox.zone(name) else {
            return Err(config_error(format!(
                "zones: `{name}` is not a zone of this worker (zones: {})",
                known()
            )));
        };
        zones.push(golem_sandbox::ZoneConfig {
            name: zone.name().to_owned(),
            path: None,
            mode: zone.mode(),
            approval: *zone.approval(),
            unprotect: Vec::new(),
        });
    }
    let narrowed = sandbox
        .narrow(&zones)
        .map_err(|e| config_error(format!("zones: {e}")))?;
    let cwd = match cwd {
        None => names.first().map(|zone| format!("/{zone}")),
        Some(cwd) => Some(jailed_cwd(cwd, &narrowed, &names).map_err(|why| {
            LaunchError::Config(format!(
                "worker {} ({}): toolsets.mcp.servers.{server}.cwd: {why}",
                definition.name,
                definition.path.display()
            ))
        })?),
    };
    let process = ProcessToolset {
        toolset: "mcp",
        mode_key: "mode",
        network: &jail.network,
        jail: jail.mode,
        limits: &jail.limits,
        workdir: None,
        timeout: 0,
        max_timeout: 0,
    };
    let jail = process.checked_jail(
        helper.map(std::path::Path::to_path_buf),
        program_root,
        definition,
        &narrowed,
        &key,
    )?;
    Ok(golem_tools::mcp::McpJailOptions { jail, cwd })
}

/// A jailed server's working directory `cwd` checked in its jail's zones (`zones`): a
/// directory at `/<zone>` or below, normalized.
fn jailed_cwd(cwd: &str, jail: &Sandbox, zones: &[String]) -> Result<String, String> {
    let path = jail.resolve(cwd).map_err(|e| {
        format!(
            "\"{}\" is not a directory of the jail's zones ({}): {}",
            cwd.escape_debug(),
            if zones.is_empty() {
                "none".to_owned()
            } else {
                zones.join(", ")
            },
            e.message
        )
    })?;
    if path.is_root() {
        return Err(format!(
            "\"{cwd}\" is the jail's root; name a zone (`/{}`) or a directory in one",
            zones.first().map_or("zone", String::as_str)
        ));
    }
    match jail.metadata(&path) {
        Ok(info) if info.kind == golem_sandbox::EntryKind::Directory => Ok(path.virtual_path()),
        Ok(_) => Err(format!("\"{cwd}\" is not a directory")),
        Err(e) => Err(format!("\"{cwd}\": {}", e.message)),
    }
}

/// The MCP tool-list cache of the program at `program_root`.
pub fn mcp_cache_dir(program_root: &std::path::Path) -> std::path::PathBuf {
    program_root.join(".golem-forge").join("mcp-tools")
}
