//! MCP servers as toolsets (`toolsets.mcp`), on `rmcp`'s client: each configured server is a
//! child process speaking MCP over stdio, run outside the jail (real servers need their
//! package caches and the network) with a minimal environment (`env.rs`: `PATH`, `HOME`,
//! `LANG` and its own `env`, never our API keys). Its tools are read when the toolset is built
//! (the server started, asked and stopped), filtered by the per-server whitelist and exposed
//! as `<server>__<tool>` (names checked, a collision an error). In the session each server
//! starts on the first call of one of its tools (`server.rs`) and stops with the session's
//! tools; every tool passes the approval gate with the configured decision, `ask` unless
//! configured (`tool.rs`), and its result is mapped to a [`golem_protocol::ToolResultValue`]
//! (`result.rs`). A server that fails to start, dies or times out gives an error result naming
//! it; the run goes on.

mod env;
mod result;
mod server;
mod tool;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use golem_core::approval::ApprovalConfig;
use golem_core::tool::Tool;

pub use env::{expand, server_env};
pub use server::ServerSpec;

use server::Server;

/// One server as configured, before its environment is built.
#[derive(Debug, Clone)]
pub struct McpServerOptions {
    /// The server's name (`[a-zA-Z0-9_-]+`).
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its own variables, `${VAR}` not yet expanded.
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: PathBuf,
}

/// The MCP toolset as configured.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// The servers.
    pub servers: Vec<McpServerOptions>,
    /// The whitelist per server name.
    pub tools: BTreeMap<String, Vec<String>>,
    /// Decisions by exposed name, with a default (`ask` when absent).
    pub approval: ApprovalConfig,
    /// The limit of a server's start and of each call.
    pub timeout: Duration,
}

/// Why the toolset could not be built; the message names the server (and the tool).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct McpError(pub String);

/// Whether `name` can be a tool's name: `[a-zA-Z0-9_-]{1,64}`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The tools of every server of `options`, reading our environment for `${VAR}`. Each server
/// is started once now to list its tools (on a thread with a runtime of its own, so that this
/// works from synchronous code inside or outside a runtime) and stopped again.
pub fn mcp_tools(options: McpOptions) -> Result<Vec<Arc<dyn Tool>>, McpError> {
    let lookup = |name: &str| std::env::var(name).ok();
    for name in options.tools.keys() {
        if !options.servers.iter().any(|s| &s.name == name) {
            return Err(McpError(format!(
                "toolsets.mcp.tools names the server `{name}`, which is not under servers"
            )));
        }
    }
    let mut specs = Vec::new();
    for server in &options.servers {
        let mut own = BTreeMap::new();
        for (key, value) in &server.env {
            let value = expand(value, lookup).map_err(|why| {
                McpError(format!(
                    "toolsets.mcp.servers.{}.env.{key}: {why}",
                    server.name
                ))
            })?;
            own.insert(key.clone(), value);
        }
        specs.push(ServerSpec {
            name: server.name.clone(),
            command: server.command.clone(),
            args: server.args.clone(),
            env: server_env(&own, lookup),
            cwd: server.cwd.clone(),
        });
    }
    let listed = list_blocking(specs.clone(), options.timeout)?;
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut names = BTreeSet::new();
    for (spec, infos) in specs.into_iter().zip(listed) {
        let whitelist = options.tools.get(&spec.name);
        if let Some(whitelist) = whitelist {
            for wanted in whitelist {
                if !infos.iter().any(|info| info.name == wanted.as_str()) {
                    let mut has: Vec<&str> = infos.iter().map(|i| i.name.as_ref()).collect();
                    has.sort_unstable();
                    return Err(McpError(format!(
                        "toolsets.mcp.tools.{}: the server has no tool `{wanted}` (it has: {})",
                        spec.name,
                        has.join(", ")
                    )));
                }
            }
        }
        let server = Arc::new(Server::new(spec, options.timeout));
        for info in infos {
            if whitelist.is_some_and(|list| !list.iter().any(|w| *w == info.name)) {
                continue;
            }
            let name = format!("{}__{}", server.name(), info.name);
            if !is_valid_tool_name(&name) {
                return Err(McpError(format!(
                    "MCP server `{}`: its tool `{}` would be exposed as `{name}`, which does not \
                     fit `[a-zA-Z0-9_-]{{1,64}}` (leave it out with toolsets.mcp.tools.{})",
                    server.name(),
                    info.name.escape_debug(),
                    server.name()
                )));
            }
            if !names.insert(name.clone()) {
                return Err(McpError(format!(
                    "MCP tool name `{name}` comes twice (server `{}`); rename a server or leave \
                     one tool out with toolsets.mcp.tools",
                    server.name()
                )));
            }
            let decision = options.approval.decision_for(&name);
            let configured =
                options.approval.default.is_some() || options.approval.tools.contains_key(&name);
            tools.push(Arc::new(tool::McpTool::new(
                server.clone(),
                name,
                info,
                decision,
                configured,
            )));
        }
    }
    Ok(tools)
}

/// Starts each server, lists its tools and stops it, on a thread with a runtime of its own.
fn list_blocking(
    specs: Vec<ServerSpec>,
    timeout: Duration,
) -> Result<Vec<Vec<rmcp::model::Tool>>, McpError> {
    let handle = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| McpError(format!("MCP toolset: {e}")))?;
        runtime.block_on(async {
            let mut all = Vec::new();
            for spec in specs {
                let server = Server::new(spec, timeout);
                let listed = server.list_tools().await;
                server.stop().await;
                all.push(listed.map_err(McpError)?);
            }
            Ok(all)
        })
    });
    handle
        .join()
        .unwrap_or_else(|_| Err(McpError("listing MCP tools panicked".to_owned())))
}
