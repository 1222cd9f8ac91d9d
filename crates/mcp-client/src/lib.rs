//! MCP servers as toolsets (`toolsets.mcp`), on `rmcp`'s client: each configured server is a
//! child process speaking MCP over stdio, run outside the jail by default (real servers need
//! their package caches and the network) with a minimal environment (`env.rs`: `PATH`,
//! `HOME`, `LANG` and its own `env`, never our API keys) or, when it opts in, in the process
//! jail with the zones and network it was given (`jailed.rs`: the jail's base environment and
//! its own `env`), or a streamable HTTP endpoint (`http.rs`) with its headers (`${VAR}`
//! expanded from our environment). Each server's tool list comes
//! from the cache under the program root (`cache.rs`) when it has one, so a session starts no
//! server until the first call of one of its tools; without one (or with an unusable one) the
//! server is started, asked and stopped when the toolset is built, and the cache written.
//! Tools are filtered by the per-server whitelist and exposed as `<server>__<tool>` (names
//! checked, a collision an error). A stdio server outside the jail runs under our reaper
//! (`golem_sandbox::reaper`), which ends everything the server started when it ends or is
//! stopped, daemons that left its process group included. In the session each server starts on the first call of one
//! of its tools (`server.rs`), its live tool list then compared with the cached one, and
//! stops with the session's tools; every tool passes the approval gate with the configured
//! decision, `ask` unless configured (`tool.rs`), and its result is mapped to a
//! [`golem_protocol::ToolResultValue`] (`result.rs`). A server that fails to start, dies or
//! times out gives an error result naming it; the run goes on. `refresh.rs` lists every
//! server again for `golem-forge mcp-refresh` and reports what the cache holds for `check`.

mod cache;
mod client;
mod config;
mod env;
mod http;
mod jailed;
mod refresh;
mod result;
mod server;
mod tool;
mod toolset;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use golem_core::tool::Tool;

pub use cache::CacheError;
pub use cache::CachedServer;
pub use config::{
    McpJailConfig, McpServerConfig, McpToolsetConfig, ServerConfigError, is_valid_mcp_server_name,
};
pub use env::{ExpandError, expand, server_env};
pub use jailed::McpJailOptions;
pub use refresh::{CacheStatus, Refreshed, ServerRefresh, cache_status, refresh};
pub use server::{ListError, ServerSpec, StartError, Transport};
pub use toolset::{McpToolset, mcp_cache_dir, mcp_options};

use cache::{CacheSlot, Identity};
use server::Server;

/// Where messages for the user go (a `status` event in a session): a server's tool list
/// changed since it was cached.
#[derive(Clone)]
pub struct McpNotice(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for McpNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpNotice")
    }
}

/// The MCP toolset ready to be built: its configuration as written, and what the worker
/// resolves for it (`toolset::mcp_options`): where a stdio server starts, the jails, the cache
/// and the reaper. Each server is then reached as a [`Transport`], built from both when the
/// toolset is built.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// The toolset as configured: the servers, the whitelist per server, the decisions by
    /// exposed name and the limit of a server's start and of each call.
    pub config: McpToolsetConfig,
    /// The directory a stdio server outside the jail starts in, and its `cwd` is relative to
    /// (the worker file's).
    pub base_dir: PathBuf,
    /// The jail of each server with `jail:`, by name: the worker's zones it names, checked
    /// against the kernel, and its working directory in them.
    pub jails: BTreeMap<String, McpJailOptions>,
    /// The tool-list cache directory (`<program root>/.golem-forge/mcp-tools`); `None`
    /// lists every server at each build.
    pub cache_dir: Option<PathBuf>,
    /// Where notices for the user go; `None` logs them only.
    pub notice: Option<McpNotice>,
    /// Our binary (a jail helper: `golem_sandbox::reaper` is its `__jail --reap` mode), which
    /// runs each stdio server outside the jail and ends with it everything it started, daemons
    /// included. `None` (an embedding without a helper binary): only the server's process
    /// group is killed, and a process that leaves the group outlives it (logged as a warning
    /// at each start).
    pub reaper: Option<PathBuf>,
}

impl McpOptions {
    /// The limit of a server's start and of each call.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.config.timeout)
    }
}

/// Why the toolset could not be built; the message names the server (and the tool).
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A `${VAR}` of a server's `env` or `headers` could not be expanded.
    #[error("toolsets.mcp.servers.{server}.{key}.{var}: {source}")]
    Expand {
        /// The server.
        server: String,
        /// `env` or `headers`.
        key: &'static str,
        /// The variable or header whose value it is.
        var: String,
        /// What is wrong with the reference.
        source: ExpandError,
    },
    /// A jailed server whose jail the launcher did not build.
    #[error("MCP server `{0}`: its jail was not built")]
    NoJail(String),
    /// `toolsets.mcp.tools` names a server that is not configured.
    #[error("toolsets.mcp.tools names the server `{0}`, which is not under servers")]
    UnknownServer(String),
    /// A server could not be started or asked for its tools.
    #[error(transparent)]
    List(#[from] server::ListError),
    /// A server whose tool list never came back.
    #[error("MCP server `{0}`: no tool list")]
    NoToolList(String),
    /// `toolsets.mcp.tools` names a tool the server does not have.
    #[error(
        "toolsets.mcp.tools.{server}: the server has no tool `{wanted}` (it has: {})",
        has.join(", ")
    )]
    NoSuchTool {
        /// The server.
        server: String,
        /// The tool named.
        wanted: String,
        /// The server's tools, sorted.
        has: Vec<String>,
    },
    /// A tool whose exposed name `<server>__<tool>` providers would refuse.
    #[error(
        "MCP server `{server}`: its tool `{}` would be exposed as `{exposed}`, which does not \
         fit `[a-zA-Z0-9_-]{{1,64}}` (leave it out with toolsets.mcp.tools.{server})",
        tool.escape_debug()
    )]
    BadExposedName {
        /// The server.
        server: String,
        /// The tool's name as the server gives it.
        tool: String,
        /// The name it would be exposed as.
        exposed: String,
    },
    /// Two servers' tools with one exposed name.
    #[error(
        "MCP tool name `{name}` comes twice (server `{server}`); rename a server or leave one \
         tool out with toolsets.mcp.tools"
    )]
    Twice {
        /// The exposed name.
        name: String,
        /// The server of the second.
        server: String,
    },
    /// No runtime to list the tools on.
    #[error("MCP toolset: {0}")]
    Runtime(#[source] std::io::Error),
    /// A listing task failed.
    #[error("listing MCP tools failed: {0}")]
    Join(#[source] tokio::task::JoinError),
    /// The thread listing the tools panicked.
    #[error("listing MCP tools panicked")]
    Panicked,
}

/// Whether `name` can be a tool's name: `[a-zA-Z0-9_-]{1,64}`.
pub fn is_valid_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A server ready to be started: how, and its cache file.
struct Prepared {
    spec: ServerSpec,
    slot: Option<CacheSlot>,
}

/// Expands each server's `${VAR}` from our environment and builds its environment (stdio)
/// and its cache slot.
fn prepare(options: &McpOptions) -> Result<Vec<Prepared>, McpError> {
    options
        .config
        .servers
        .iter()
        .map(|(name, server)| prepare_server(options, name, server))
        .collect()
}

/// [`prepare`] for the one server `name`, configured as `server`.
fn prepare_server(
    options: &McpOptions,
    name: &str,
    server: &McpServerConfig,
) -> Result<Prepared, McpError> {
    let lookup = |var: &str| std::env::var(var).ok();
    let expand_all = |key: &'static str, map: &BTreeMap<String, String>| {
        map.iter()
            .map(|(var, value)| {
                expand(value, lookup)
                    .map(|value| (var.clone(), value))
                    .map_err(|source| McpError::Expand {
                        server: name.to_owned(),
                        key,
                        var: var.clone(),
                        source,
                    })
            })
            .collect::<Result<BTreeMap<_, _>, _>>()
    };
    let (transport, slot) = match server {
        McpServerConfig::Stdio {
            command,
            args,
            env,
            cwd,
            jail: None,
        } => {
            let own = expand_all("env", env)?;
            let cwd = cwd.as_deref().map_or_else(
                || options.base_dir.clone(),
                |cwd| options.base_dir.join(cwd),
            );
            let slot = options.cache_dir.as_deref().map(|dir| {
                let identity = Identity::Stdio {
                    command,
                    args,
                    cwd: &cwd,
                    env: &own,
                };
                CacheSlot::new(dir, identity, options.notice.clone())
            });
            let transport = Transport::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: server_env(&own, lookup),
                cwd,
                reaper: options.reaper.clone(),
            };
            (transport, slot)
        }
        McpServerConfig::Stdio {
            command,
            args,
            env,
            jail: Some(_),
            ..
        } => {
            let Some(jail) = options.jails.get(name) else {
                return Err(McpError::NoJail(name.to_owned()));
            };
            let own = expand_all("env", env)?;
            let slot = options.cache_dir.as_deref().map(|dir| {
                let identity = Identity::Jailed {
                    command,
                    args,
                    env: &own,
                    jail,
                };
                CacheSlot::new(dir, identity, options.notice.clone())
            });
            let transport = Transport::Jailed {
                command: command.clone(),
                args: args.clone(),
                env: own,
                jail: Box::new(jail.clone()),
            };
            (transport, slot)
        }
        McpServerConfig::Http { url, headers } => {
            let headers = expand_all("headers", headers)?;
            let slot = options.cache_dir.as_deref().map(|dir| {
                let identity = Identity::Http {
                    url,
                    headers: &headers,
                };
                CacheSlot::new(dir, identity, options.notice.clone())
            });
            let transport = Transport::Http {
                url: url.clone(),
                headers,
            };
            (transport, slot)
        }
    };
    Ok(Prepared {
        spec: ServerSpec {
            name: name.to_owned(),
            transport,
        },
        slot,
    })
}

/// Whether `listing` has every tool of `whitelist`.
fn has_whitelisted(listing: &CachedServer, whitelist: Option<&Vec<String>>) -> bool {
    whitelist.is_none_or(|list| {
        list.iter()
            .all(|wanted| listing.tools.iter().any(|t| t.name == wanted.as_str()))
    })
}

/// The tools of every server of `options`, reading our environment for `${VAR}`. A server
/// with a usable cache entry (holding every whitelisted tool) is not started now; the others
/// are started together to list their tools (on a thread with a runtime of its own, so that
/// this works from synchronous code inside or outside a runtime), stopped again, and cached.
pub fn mcp_tools(options: McpOptions) -> Result<Vec<Arc<dyn Tool>>, McpError> {
    for name in options.config.tools.keys() {
        if !options.config.servers.contains_key(name) {
            return Err(McpError::UnknownServer(name.clone()));
        }
    }
    let prepared = prepare(&options)?;
    let mut listings: Vec<Option<CachedServer>> = Vec::new();
    let mut to_list = Vec::new();
    for (index, server) in prepared.iter().enumerate() {
        let cached = match server.slot.as_ref().map(CacheSlot::read) {
            Some(Ok(Some(entry))) => Some(entry.listing),
            Some(Err(why)) => {
                tracing::info!(server = %server.spec.name, "tool-list cache unusable, listing again: {why}");
                None
            }
            Some(Ok(None)) | None => None,
        };
        let whitelist = options.config.tools.get(&server.spec.name);
        let usable = cached.filter(|c| has_whitelisted(c, whitelist));
        if usable.is_none() {
            to_list.push((index, server.spec.clone()));
        }
        listings.push(usable);
    }
    let fresh: BTreeSet<usize> = to_list.iter().map(|(index, _)| *index).collect();
    let timeout = options.timeout();
    for (index, listed) in list_blocking(to_list, timeout)? {
        let listing = listed?;
        let (Some(server), Some(slot)) = (prepared.get(index), listings.get_mut(index)) else {
            continue;
        };
        if let Some(cache) = &server.slot
            && let Err(e) = cache.write(&server.spec.name, &listing)
        {
            tracing::warn!("MCP tool-list cache not written: {e}");
        }
        *slot = Some(listing);
    }
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut names = BTreeSet::new();
    for (index, (server, listing)) in prepared.into_iter().zip(listings).enumerate() {
        let Some(listing) = listing else {
            return Err(McpError::NoToolList(server.spec.name));
        };
        let whitelist = options.config.tools.get(&server.spec.name);
        if let Some(whitelist) = whitelist {
            for wanted in whitelist {
                if !listing
                    .tools
                    .iter()
                    .any(|info| info.name == wanted.as_str())
                {
                    let mut has: Vec<String> =
                        listing.tools.iter().map(|i| i.name.to_string()).collect();
                    has.sort_unstable();
                    return Err(McpError::NoSuchTool {
                        server: server.spec.name,
                        wanted: wanted.clone(),
                        has,
                    });
                }
            }
        }
        let server = Arc::new(match server.slot {
            Some(slot) => {
                slot.remember(&listing);
                Server::with_cache(server.spec, timeout, slot, fresh.contains(&index))
            }
            None => Server::new(server.spec, timeout),
        });
        for info in listing.tools {
            if whitelist.is_some_and(|list| !list.iter().any(|w| *w == info.name)) {
                continue;
            }
            let name = format!("{}__{}", server.name(), info.name);
            if !is_valid_tool_name(&name) {
                return Err(McpError::BadExposedName {
                    server: server.name().to_owned(),
                    tool: info.name.to_string(),
                    exposed: name,
                });
            }
            if !names.insert(name.clone()) {
                return Err(McpError::Twice {
                    name,
                    server: server.name().to_owned(),
                });
            }
            let approval = &options.config.approval;
            let decision = approval.decision_for(&name);
            let configured = approval.default.is_some() || approval.tools.contains_key(&name);
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

/// One outcome of [`list_blocking`], under the caller's key.
type Listed = (usize, Result<CachedServer, server::ListError>);

/// Starts each server (all at once), lists its tools and stops it, on a thread with a
/// runtime of its own; one outcome per spec, under the key it was given with, in that order.
fn list_blocking(
    specs: Vec<(usize, ServerSpec)>,
    timeout: Duration,
) -> Result<Vec<Listed>, McpError> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let handle = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(McpError::Runtime)?;
        runtime.block_on(async {
            let mut tasks = tokio::task::JoinSet::new();
            for (order, (key, spec)) in specs.into_iter().enumerate() {
                tasks.spawn(async move {
                    let server = Server::new(spec, timeout);
                    let listed = server.list_tools().await;
                    server.stop().await;
                    (order, (key, listed))
                });
            }
            let mut all = Vec::new();
            while let Some(joined) = tasks.join_next().await {
                all.push(joined.map_err(McpError::Join)?);
            }
            all.sort_by_key(|(order, _)| *order);
            Ok(all.into_iter().map(|(_, listed)| listed).collect())
        })
    });
    handle.join().unwrap_or(Err(McpError::Panicked))
}
