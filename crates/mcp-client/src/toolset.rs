//! The MCP toolset of a worker (`toolsets.mcp`) and its place among the toolsets: its options
//! from the configuration — a stdio server's working directory relative to the worker file,
//! or, for a server with `jail:`, a jail of its own over the zones it names (built like the
//! other toolsets' jails, see `golem_toolset::ProcessJail`) and a working directory checked in
//! them — and its tools.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use golem_protocol::StatusLevel;
use golem_sandbox::Sandbox;
use golem_toolset::jail::zone_list;
use golem_toolset::{
    BuildContext, JailUse, ProcessJail, Reach, Schemas, Section, Tools, Toolset, ToolsetConfig,
    ToolsetError,
};

use super::config::{McpJailConfig, McpServerConfig, McpToolsetConfig};
use super::{CacheStatus, McpJailOptions, McpNotice, McpOptions, cache_status, mcp_tools};

/// The tools of MCP servers, each exposed as `<server>__<tool>`.
pub struct McpToolset;

impl ToolsetConfig for McpToolsetConfig {
    fn empty() -> Result<McpToolsetConfig, &'static str> {
        Ok(McpToolsetConfig::default())
    }
}

impl Toolset for McpToolset {
    type Config = McpToolsetConfig;

    const SCHEMAS: Schemas = Schemas::Unchecked;

    /// A stdio server a child process outside the jail or, with `jail:`, in a jail of its own
    /// over the zones it names; an HTTP server an endpoint. Tool lists come from the cache
    /// under the program root when it has them (no server started until a call), and a
    /// server's changed tool list is announced as a `status` event. A server that cannot be
    /// started or listed, a whitelisted tool it lacks, or a jail the kernel cannot build fails
    /// the launch with a message naming the server and the tool.
    fn build(config: &McpToolsetConfig, cx: &BuildContext<'_>) -> Result<Tools, ToolsetError> {
        let mut options = mcp_options(config, cx)?;
        options.notice = cx.notice.clone().map(|notice| {
            McpNotice(Arc::new(move |message: &str| {
                notice(StatusLevel::Info, message)
            }))
        });
        mcp_tools(options).map_err(|e| cx.worker_error(e))
    }

    fn reach(_: &McpToolsetConfig) -> Reach {
        Reach::default()
    }

    fn jail_use(config: &McpToolsetConfig) -> Option<JailUse> {
        let jails = config.servers.values().filter_map(|server| match server {
            McpServerConfig::Stdio { jail, .. } => jail.as_deref(),
            McpServerConfig::Http { .. } => None,
        });
        let (mut jailed, mut network_on) = (false, false);
        for jail in jails {
            jailed = true;
            network_on |= jail.network.on;
        }
        Some(JailUse {
            label: jailed.then_some("MCP servers"),
            network_off: false,
            network_on,
        })
    }

    /// Each server's transport (the stdio command or the URL), where it runs (outside the
    /// jail: a stdio server gets a minimal environment, never our API keys; or in the jail,
    /// with its zones and network), the names of its variables or headers (never their values,
    /// which hold secrets) and whether its tool list is cached, without starting any.
    fn section(
        config: &McpToolsetConfig,
        cx: &BuildContext<'_>,
    ) -> Result<Option<Section>, ToolsetError> {
        let mut lines = Vec::new();
        if config.servers.is_empty() {
            lines.push("  none".to_owned());
        }
        let options = mcp_options(config, cx)?;
        let statuses = cache_status(&options);
        for (name, server) in &config.servers {
            let transport = match server {
                McpServerConfig::Stdio {
                    command, args, env, ..
                } => {
                    let mut line = vec![command.clone()];
                    line.extend(args.iter().cloned());
                    let jail = options.jails.get(name);
                    let (place, base) = match jail {
                        None => ("runs outside the jail".to_owned(), "PATH, HOME, LANG"),
                        Some(jail) => {
                            let zones = jail.zones();
                            let place = format!(
                                "runs in the jail (zones: {}; network: {}{})",
                                if zones.is_empty() {
                                    "none".to_owned()
                                } else {
                                    zones.join(", ")
                                },
                                if jail.network() { "on" } else { "off" },
                                jail.cwd
                                    .as_deref()
                                    .map(|cwd| format!("; cwd: {cwd}"))
                                    .unwrap_or_default()
                            );
                            (place, "the jail's PATH, HOME, LANG")
                        }
                    };
                    format!(
                        "stdio, `{}`, {place} (environment: {base}{})",
                        line.join(" "),
                        env.keys().map(|k| format!(", {k}")).collect::<String>()
                    )
                }
                McpServerConfig::Http { url, headers } => {
                    let names = if headers.is_empty() {
                        "no headers".to_owned()
                    } else {
                        format!(
                            "headers: {}",
                            headers.keys().cloned().collect::<Vec<_>>().join(", ")
                        )
                    };
                    format!("http, {url}, reached from outside the jail ({names})")
                }
            };
            let whitelist = match config.tools.get(name) {
                Some(tools) => format!(", tools: {}", tools.join(", ")),
                None => String::new(),
            };
            let cache = match statuses.iter().find(|(server, _)| server == name) {
                Some((
                    _,
                    CacheStatus::Cached {
                        fetched_at,
                        tools,
                        version,
                    },
                )) => {
                    let version = if version.is_empty() {
                        String::new()
                    } else {
                        format!(", version {version}")
                    };
                    format!("tool list cached {fetched_at} ({tools} tools{version})")
                }
                Some((_, CacheStatus::Missing)) => {
                    "tool list not cached (listed when a session starts, or run `golem-forge \
                     mcp-refresh`)"
                        .to_owned()
                }
                Some((_, CacheStatus::Unusable(why))) => {
                    format!("tool list cache unusable, listed again at start ({why})")
                }
                Some((_, CacheStatus::Unknown(why))) => {
                    format!("tool list cache unknown ({why})")
                }
                None => "tool list cache unknown".to_owned(),
            };
            lines.push(format!("  {name}: {transport}{whitelist}"));
            lines.push(format!("    {cache}"));
        }
        Ok(Some(Section {
            title: "MCP servers".to_owned(),
            lines,
        }))
    }
}

/// The options of a worker's MCP toolset: a stdio server's working directory relative to the
/// worker file (default: the worker file's directory), a jailed server's jail over the zones
/// of the worker's sandbox it names (checked against the kernel now, with the program's jail
/// helper), the tool-list cache in `<program root>/.golem-forge/mcp-tools`, and the same helper
/// as the reaper of the stdio servers outside the jail. For sessions, `mcp-refresh` and
/// `check`.
pub fn mcp_options(
    config: &McpToolsetConfig,
    cx: &BuildContext<'_>,
) -> Result<McpOptions, ToolsetError> {
    let mut jails = BTreeMap::new();
    for (name, server) in &config.servers {
        if let McpServerConfig::Stdio {
            cwd,
            jail: Some(jail),
            ..
        } = server
        {
            jails.insert(name.clone(), mcp_jail(cx, name, jail, cwd.as_deref())?);
        }
    }
    Ok(McpOptions {
        config: config.clone(),
        base_dir: cx.worker_dir(),
        jails,
        cache_dir: Some(mcp_cache_dir(cx.program_root)),
        notice: None,
        // The jail's helper is our binary, whose reaper runs the servers outside the jail.
        reaper: cx.jail_helper.map(Path::to_path_buf),
    })
}

/// The jail of the MCP server `server` (`toolsets.mcp.servers.<server>.jail`): the zones it
/// names (all of the worker's when it names none) at their virtual paths, its network, mode
/// and limits as for the other toolsets, and its working directory `cwd`, a virtual path in
/// one of those zones (default: the first zone's root, or the jail's `/tmp` without zones).
fn mcp_jail(
    cx: &BuildContext<'_>,
    server: &str,
    jail: &McpJailConfig,
    cwd: Option<&str>,
) -> Result<McpJailOptions, ToolsetError> {
    let key = format!("mcp.servers.{server}.jail");
    let sandbox = cx.sandbox;
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
            return Err(cx.config_error(
                &key,
                format_args!(
                    "zones: `{name}` is not a zone of this worker (zones: {})",
                    zone_list(cx)
                ),
            ));
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
        .map_err(|e| cx.config_error(&key, format_args!("zones: {e}")))?;
    let cwd = match cwd {
        None => names.first().map(|zone| format!("/{zone}")),
        Some(cwd) => Some(
            jailed_cwd(cwd, &narrowed, &names)
                .map_err(|why| cx.config_error(&format!("mcp.servers.{server}.cwd"), why))?,
        ),
    };
    let process = ProcessJail {
        toolset: "mcp",
        mode_key: "mode",
        network: &jail.network,
        jail: jail.mode,
        limits: &jail.limits,
        workdir: None,
        timeout: 0,
        max_timeout: 0,
    };
    let jail = process.checked_jail(cx, &narrowed, &key)?;
    Ok(McpJailOptions { jail, cwd })
}

/// Why a jailed server's `cwd` was refused (under `toolsets.mcp.servers.<server>.cwd`).
#[derive(Debug, thiserror::Error)]
enum CwdError {
    /// `cwd` is not a path in the jail's zones (`zones`); `message` is the sandbox's reason.
    #[error(
        "\"{}\" is not a directory of the jail's zones ({}): {message}",
        cwd.escape_debug(),
        if zones.is_empty() { "none".to_owned() } else { zones.join(", ") }
    )]
    OutsideZones {
        cwd: String,
        zones: Vec<String>,
        message: String,
    },
    /// `cwd` is `/`, above every zone; `first_zone` is suggested instead.
    #[error(
        "\"{cwd}\" is the jail's root; name a zone (`/{}`) or a directory in one",
        first_zone.as_deref().unwrap_or("zone")
    )]
    Root {
        cwd: String,
        first_zone: Option<String>,
    },
    /// `cwd` is a file (or something else that is not a directory).
    #[error("\"{cwd}\" is not a directory")]
    NotADirectory { cwd: String },
    /// `cwd` cannot be looked at (it does not exist, say); `message` is the sandbox's reason.
    #[error("\"{cwd}\": {message}")]
    Unreadable { cwd: String, message: String },
}

/// A jailed server's working directory `cwd` checked in its jail's zones (`zones`): a
/// directory at `/<zone>` or below, normalized.
fn jailed_cwd(cwd: &str, jail: &Sandbox, zones: &[String]) -> Result<String, CwdError> {
    let path = jail.resolve(cwd).map_err(|e| CwdError::OutsideZones {
        cwd: cwd.to_owned(),
        zones: zones.to_vec(),
        message: e.message,
    })?;
    if path.is_root() {
        return Err(CwdError::Root {
            cwd: cwd.to_owned(),
            first_zone: zones.first().cloned(),
        });
    }
    match jail.metadata(&path) {
        Ok(info) if info.kind == golem_sandbox::EntryKind::Directory => Ok(path.virtual_path()),
        Ok(_) => Err(CwdError::NotADirectory {
            cwd: cwd.to_owned(),
        }),
        Err(e) => Err(CwdError::Unreadable {
            cwd: cwd.to_owned(),
            message: e.message,
        }),
    }
}

/// The MCP tool-list cache of the program at `program_root`.
pub fn mcp_cache_dir(program_root: &Path) -> std::path::PathBuf {
    program_root.join(".golem-forge").join("mcp-tools")
}

#[cfg(test)]
mod tests {
    use super::CwdError;

    #[test]
    fn a_refused_cwd_says_why_in_the_user_s_words() {
        let outside = CwdError::OutsideZones {
            cwd: "/docs\n".into(),
            zones: Vec::new(),
            message: "no zone `docs`".into(),
        };
        assert_eq!(
            outside.to_string(),
            "\"/docs\\n\" is not a directory of the jail's zones (none): no zone `docs`"
        );
        let root = |first_zone: Option<&str>| CwdError::Root {
            cwd: "/".into(),
            first_zone: first_zone.map(str::to_owned),
        };
        assert_eq!(
            root(Some("servers")).to_string(),
            "\"/\" is the jail's root; name a zone (`/servers`) or a directory in one"
        );
        assert_eq!(
            root(None).to_string(),
            "\"/\" is the jail's root; name a zone (`/zone`) or a directory in one"
        );
        let file = CwdError::NotADirectory {
            cwd: "/servers/a.js".into(),
        };
        assert_eq!(file.to_string(), "\"/servers/a.js\" is not a directory");
        let missing = CwdError::Unreadable {
            cwd: "/servers/gone".into(),
            message: "not found".into(),
        };
        assert_eq!(missing.to_string(), "\"/servers/gone\": not found");
    }
}
