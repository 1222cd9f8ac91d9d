//! The MCP toolset's configuration (`toolsets.mcp`): its servers — each a stdio command
//! (`{command, args, env, cwd, jail}`) or a streamable HTTP endpoint (`{url, headers}`) — the
//! whitelist per server, the approval decisions and the timeout. A stdio server runs outside
//! the jail unless it opts in with `jail:` ([`McpJailConfig`]: `true` for all the worker's
//! zones without the network, or `{zones, network, mode, limits}`). Deserialization checks
//! what it can alone (a transport given once, an `http`/`https` URL, header names, `jail`
//! only on stdio servers, a jailed server's `cwd` a virtual path), so that errors name the
//! file, the line and the key; the zone names are checked against the worker's zones when
//! the toolset is built. Nothing here starts a server.

use std::collections::BTreeMap;

use golem_core::approval::ApprovalConfig;
use schemars::JsonSchema;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use golem_toolset::NetworkAccess;
use golem_toolset::config::{
    DEFAULT_TIMEOUT_SECS, JailMode, ProcessLimitsConfig, default_timeout, or_default, positive_secs,
};

/// The MCP toolset (`toolsets.mcp`): servers whose tools the worker may call, each tool
/// exposed as `<server>__<tool>`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpToolsetConfig {
    /// The servers by name (`[a-zA-Z0-9_-]+`), in name order.
    #[serde(default, deserialize_with = "mcp_servers")]
    #[schemars(with = "Option<BTreeMap<String, McpServerConfig>>")]
    pub servers: BTreeMap<String, McpServerConfig>,
    /// The whitelist per server: only these tools of that server are exposed (a server not
    /// listed exposes all its tools).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<BTreeMap<String, Vec<String>>>")]
    pub tools: BTreeMap<String, Vec<String>>,
    /// Decisions by exposed name (`everything__echo`), with a default (`ask` when absent).
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ApprovalConfig>")]
    pub approval: ApprovalConfig,
    /// Wall-clock limit of a server's start and of each call, in seconds (default 60).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout: u64,
}

impl Default for McpToolsetConfig {
    fn default() -> Self {
        Self {
            servers: BTreeMap::new(),
            tools: BTreeMap::new(),
            approval: ApprovalConfig::default(),
            timeout: DEFAULT_TIMEOUT_SECS,
        }
    }
}

/// One MCP server (`toolsets.mcp.servers.NAME`) and how it is reached.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(try_from = "McpServerSection")]
pub enum McpServerConfig {
    /// A command started as a child process that speaks MCP on its standard input and output.
    Stdio {
        /// The program (looked up on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its minimal environment; `${VAR}` in a value is expanded from
        /// ours when the toolset is built.
        env: BTreeMap<String, String>,
        /// Its working directory: outside the jail relative to the worker file (default: the
        /// worker file's directory); in the jail a virtual path, `/<zone>` or below (default:
        /// the first of the jail's zones, or the jail's private `/tmp` without zones).
        cwd: Option<String>,
        /// The jail it runs in; `None` (the default): outside the jail.
        jail: Option<Box<McpJailConfig>>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint, `http://` or `https://`.
        url: String,
        /// Headers sent with every request; `${VAR}` in a value is expanded from our
        /// environment when the toolset is built (values are never printed).
        headers: BTreeMap<String, String>,
    },
}

impl McpServerConfig {
    /// `stdio` or `http`.
    pub fn transport_name(&self) -> &'static str {
        match self {
            McpServerConfig::Stdio { .. } => "stdio",
            McpServerConfig::Http { .. } => "http",
        }
    }
}

/// `toolsets.mcp.servers.NAME.jail`: a stdio server run in the process jail, seeing only
/// `zones` at their virtual paths (`/<zone>`). `jail: true` is every zone of the worker and
/// no network; `jail: false` (or no `jail`) runs the server outside the jail.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpJailConfig {
    /// The worker's zones the server sees (absent: all of them; `[]`: none).
    #[serde(default)]
    pub zones: Option<Vec<String>>,
    /// Whether the server may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// How strictly to jail (default `strict`), as for the other toolsets' `jail:`.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<JailMode>")]
    pub mode: JailMode,
    /// Resource limits of the server's processes, for as long as it runs.
    #[serde(default, deserialize_with = "or_default")]
    #[schemars(with = "Option<ProcessLimitsConfig>")]
    pub limits: ProcessLimitsConfig,
}

/// `jail:` as written: a bool or a map.
fn jail_section<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<McpJailConfig>, D::Error> {
    struct JailSection;
    impl<'de> Visitor<'de> for JailSection {
        type Value = Option<McpJailConfig>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("`true`, `false` or `{ zones: [...], network: false }`")
        }
        fn visit_bool<E: serde::de::Error>(self, jailed: bool) -> Result<Self::Value, E> {
            Ok(jailed.then(McpJailConfig::default))
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_i64<E: serde::de::Error>(self, found: i64) -> Result<Self::Value, E> {
            Err(not_a_jail(&found.to_string()))
        }
        fn visit_u64<E: serde::de::Error>(self, found: u64) -> Result<Self::Value, E> {
            Err(not_a_jail(&found.to_string()))
        }
        fn visit_f64<E: serde::de::Error>(self, found: f64) -> Result<Self::Value, E> {
            Err(not_a_jail(&found.to_string()))
        }
        fn visit_str<E: serde::de::Error>(self, found: &str) -> Result<Self::Value, E> {
            Err(not_a_jail(&format!("\"{}\"", found.escape_debug())))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(not_a_jail("a list"))
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let jail =
                McpJailConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
            if let Some(zones) = &jail.zones {
                for (index, zone) in zones.iter().enumerate() {
                    if zones[..index].contains(zone) {
                        return Err(serde::de::Error::custom(format!(
                            "zones: `{zone}` is listed twice"
                        )));
                    }
                }
            }
            Ok(Some(jail))
        }
    }
    deserializer.deserialize_any(JailSection)
}

/// The error of a `jail:` that is neither a bool nor a map (`found` as written).
fn not_a_jail<E: serde::de::Error>(found: &str) -> E {
    E::custom(format!(
        "must be `true`, `false` or `{{ zones: [...], network: false }}`, found {found}"
    ))
}

/// `toolsets.mcp.servers.NAME` as written, before the transport is checked: a stdio server
/// (`command`, `args`, `env`, `cwd`, `jail`) or an HTTP one (`url`, `headers`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{ "required": ["command"] }, { "required": ["url"] }]))]
struct McpServerSection {
    /// stdio: the program (looked up on `PATH`).
    #[serde(default)]
    command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    args: Option<Vec<String>>,
    /// stdio: variables added to its minimal environment; `${VAR}` in a value is expanded
    /// from ours.
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    /// stdio: its working directory (outside the jail relative to the worker file; in the jail
    /// a virtual path, `/<zone>` or below).
    #[serde(default)]
    cwd: Option<String>,
    /// HTTP: the endpoint, `http://` or `https://`.
    #[serde(default)]
    url: Option<String>,
    /// HTTP: headers sent with every request; `${VAR}` in a value is expanded from our
    /// environment.
    #[serde(default)]
    headers: Option<BTreeMap<String, String>>,
    /// stdio: `true` (every zone of the worker, no network), `false` (outside the jail, the
    /// default) or `{ zones, network, mode, limits }`.
    // `Some(None)`: written as `false` (or empty).
    #[serde(default, deserialize_with = "some_jail")]
    #[schemars(schema_with = "jail_schema")]
    jail: Option<Option<McpJailConfig>>,
}

/// `jail:` in the schema: a bool, nothing, or [`McpJailConfig`].
fn jail_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let jail = generator.subschema_for::<McpJailConfig>();
    schemars::json_schema!({ "anyOf": [{ "type": ["boolean", "null"] }, jail] })
}

/// `jail:` given, whatever its value.
fn some_jail<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Option<McpJailConfig>>, D::Error> {
    jail_section(deserializer).map(Some)
}

/// What is wrong with a server of `toolsets.mcp.servers` as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerConfigError {
    /// Both `command` and `url`.
    #[error("give either `command` (a stdio server) or `url` (a streamable HTTP server), not both")]
    Both,
    /// Neither `command` nor `url`.
    #[error(
        "must give `command`, the program of the server (`{{ command: npx, args: [...] }}`), \
         or `url`, its streamable HTTP endpoint (`{{ url: \"https://…/mcp\" }}`)"
    )]
    Neither,
    /// `command: ""`.
    #[error("`command` must not be empty")]
    EmptyCommand,
    /// `headers` on a stdio server.
    #[error("`headers` is for `url` servers; a stdio server takes `env`")]
    HeadersOnStdio,
    /// A jailed server's `cwd` that is not a virtual path.
    #[error(
        "cwd \"{}\": in the jail the working directory is a virtual path, `/<zone>` or below \
         (such as `/docs`)",
        .0.escape_debug()
    )]
    RelativeJailCwd(String),
    /// A stdio server's key on a `url` server.
    #[error(
        "`{0}` is for `command` servers (a `url` server is reached from outside the jail and \
         takes `headers`)"
    )]
    StdioKeyOnUrl(&'static str),
    /// A header name that is not an HTTP token.
    #[error("headers: \"{}\" is not an HTTP header name", .0.escape_debug())]
    BadHeaderName(String),
    /// A `url` without `scheme://`.
    #[error("url \"{0}\" must start with http:// or https://")]
    NoScheme(String),
    /// A `url` of another scheme.
    #[error("url \"{url}\": the scheme must be http or https, found `{scheme}`")]
    BadScheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A `url` without a host.
    #[error("url \"{0}\" has no host")]
    NoHost(String),
    /// A `url` with white space.
    #[error("url \"{0}\" contains a space")]
    Space(String),
}

impl TryFrom<McpServerSection> for McpServerConfig {
    type Error = ServerConfigError;

    fn try_from(section: McpServerSection) -> Result<Self, ServerConfigError> {
        match (section.command, section.url) {
            (Some(_), Some(_)) => Err(ServerConfigError::Both),
            (Some(command), None) => {
                if command.is_empty() {
                    return Err(ServerConfigError::EmptyCommand);
                }
                if section.headers.is_some() {
                    return Err(ServerConfigError::HeadersOnStdio);
                }
                let jail = section.jail.flatten().map(Box::new);
                if jail.is_some()
                    && let Some(cwd) = &section.cwd
                    && !cwd.starts_with('/')
                {
                    return Err(ServerConfigError::RelativeJailCwd(cwd.clone()));
                }
                Ok(McpServerConfig::Stdio {
                    command,
                    args: section.args.unwrap_or_default(),
                    env: section.env.unwrap_or_default(),
                    cwd: section.cwd,
                    jail,
                })
            }
            (None, Some(url)) => {
                for (key, given) in [
                    ("args", section.args.is_some()),
                    ("env", section.env.is_some()),
                    ("cwd", section.cwd.is_some()),
                    ("jail", section.jail.is_some()),
                ] {
                    if given {
                        return Err(ServerConfigError::StdioKeyOnUrl(key));
                    }
                }
                check_url(&url)?;
                let headers = section.headers.unwrap_or_default();
                if let Some(name) = headers.keys().find(|name| !is_header_name(name)) {
                    return Err(ServerConfigError::BadHeaderName(name.clone()));
                }
                Ok(McpServerConfig::Http { url, headers })
            }
            (None, None) => Err(ServerConfigError::Neither),
        }
    }
}

/// Whether `url` is an `http` or `https` URL with a host and no spaces.
fn check_url(url: &str) -> Result<(), ServerConfigError> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(ServerConfigError::NoScheme(url.to_owned()));
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return Err(ServerConfigError::BadScheme {
            url: url.to_owned(),
            scheme: scheme.to_owned(),
        });
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if host.is_empty() || host.starts_with(':') {
        return Err(ServerConfigError::NoHost(url.to_owned()));
    }
    if url.chars().any(char::is_whitespace) {
        return Err(ServerConfigError::Space(url.to_owned()));
    }
    Ok(())
}

/// Whether `name` is an HTTP header name (a token).
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether `name` may name an MCP server: `[a-zA-Z0-9_-]{1,64}`.
pub fn is_valid_mcp_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn mcp_servers<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, McpServerConfig>, D::Error> {
    let servers =
        Option::<BTreeMap<String, McpServerConfig>>::deserialize(deserializer)?.unwrap_or_default();
    for name in servers.keys() {
        if !is_valid_mcp_server_name(name) {
            return Err(serde::de::Error::custom(format!(
                "server names must match `[a-zA-Z0-9_-]{{1,64}}`, found \"{}\"",
                name.escape_debug()
            )));
        }
    }
    Ok(servers)
}
