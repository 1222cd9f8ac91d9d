//! The parsed worker file: [`WorkerDefinition`] and the configuration of each toolset, as
//! docs/worker-file.md describes them. Deserialization validates every value it can check alone
//! (with its line); nothing here builds tools or touches the filesystem.

use std::fmt;
use std::path::{Path, PathBuf};

use golem_core::approval::{ApprovalConfig, ApprovalDecisionType};
use golem_sandbox::ZoneConfig;
use golem_tools::web::{HostPattern, PrivateHost, SearchBackend, check_search_url};
use serde::de::{DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use super::mcp_config::McpToolsetConfig;
use super::network::{NetworkAccess, private_networks};
use super::yaml::or_default;
use crate::budget::BudgetLimits;
use golem_sandbox::jail::Ipv4Network;

/// A worker as its `.worker` file defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerDefinition {
    /// The worker's name, `[a-z][a-z0-9_]*`.
    pub name: String,
    /// Shown in listings and to delegating workers.
    pub description: Option<String>,
    /// The worker's own model (`provider:model`), if it names one.
    pub model: Option<String>,
    /// One-shot or conversing.
    pub mode: WorkerMode,
    /// Globs of the models the worker works with; `None` allows every model.
    pub compatible_models: Option<Vec<String>>,
    /// Model turns before the run fails (at least 1; 20 when absent).
    pub max_iterations: u32,
    /// What one run of it may spend (`budget:`); unlimited when absent.
    pub budget: BudgetLimits,
    /// The sandbox zones; host paths are relative to [`WorkerDefinition::dir`].
    pub zones: Vec<ZoneConfig>,
    /// The toolsets the worker gets.
    pub toolsets: ToolsetsConfig,
    /// The markdown body, trimmed: the worker's instructions.
    pub instructions: String,
    /// The worker file, as it was given.
    pub path: PathBuf,
}

impl WorkerDefinition {
    /// The default of `max_iterations`.
    pub const DEFAULT_MAX_ITERATIONS: u32 = 20;

    /// The directory of the worker file (`.` for a bare file name); zone paths are relative
    /// to it.
    pub fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            Some(_) | None => Path::new("."),
        }
    }

    /// The host directory of `zone`: its `path` (or `./<name>`) under [`Self::dir`]; an
    /// absolute `path` stays as it is.
    pub fn zone_dir(&self, zone: &ZoneConfig) -> PathBuf {
        match &zone.path {
            Some(path) => self.dir().join(path),
            None => self.dir().join(&zone.name),
        }
    }
}

/// How the root worker talks to its user.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerMode {
    /// One input, one answer (the default).
    #[default]
    Single,
    /// The root worker converses and keeps its history.
    Chat,
}

impl WorkerMode {
    /// The name used in worker files.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkerMode::Single => "single",
            WorkerMode::Chat => "chat",
        }
    }
}

/// How strictly a toolset's child processes are jailed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JailMode {
    /// Every jail feature is required; a kernel without one is an error (the default).
    #[default]
    Strict,
    /// Use the jail features the kernel has, and say which are missing.
    BestEffort,
}

/// The `toolsets:` section. A toolset is present when its key is, even with an empty value
/// (`filesystem:` or `filesystem: {}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsetsConfig {
    /// File tools over the worker's zones.
    #[serde(default, deserialize_with = "present")]
    pub filesystem: Option<FilesystemToolsetConfig>,
    /// `run_code` in the jail.
    #[serde(default, deserialize_with = "present")]
    pub code: Option<CodeToolsetConfig>,
    /// `shell` in the jail, decided by rules.
    #[serde(default, deserialize_with = "present")]
    pub shell: Option<ShellToolsetConfig>,
    /// One tool per allowed sub-worker.
    #[serde(default, deserialize_with = "present")]
    pub workers: Option<WorkersToolsetConfig>,
    /// Custom tools from local modules (Python, JavaScript or any executable).
    #[serde(default, deserialize_with = "present")]
    pub custom: Option<CustomToolsetConfig>,
    /// `web_fetch` and `web_search`.
    #[serde(default, deserialize_with = "present")]
    pub web: Option<WebToolsetConfig>,
    /// The git tools on the repository of one zone.
    #[serde(default, deserialize_with = "git_toolset")]
    pub git: Option<GitToolsetConfig>,
    /// The tools of MCP servers, each exposed as `<server>__<tool>`.
    #[serde(default, deserialize_with = "present")]
    pub mcp: Option<McpToolsetConfig>,
}

/// The filesystem toolset's options: none yet (`filesystem: {}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesystemToolsetConfig {}

/// The default timeout of `run_code` and `shell`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The default of `max_timeout`: the longest a call may ask for, in seconds.
pub const DEFAULT_MAX_TIMEOUT_SECS: u64 = 600;

/// Resource limits of jailed processes; each absent value keeps the jail's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessLimitsConfig {
    /// CPU seconds per run (default 120).
    #[serde(default)]
    pub cpu_seconds: Option<u64>,
    /// Address space per process in MiB (default 2048).
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// Processes and threads (default 256).
    #[serde(default)]
    pub processes: Option<u64>,
    /// Open files per process (default 1024).
    #[serde(default)]
    pub open_files: Option<u64>,
    /// Largest file written, in MiB (default 256).
    #[serde(default)]
    pub file_size_mb: Option<u64>,
    /// Output kept per stream, in KiB (default 1024); the rest is counted and dropped.
    #[serde(default)]
    pub output_kb: Option<u64>,
    /// Memory of all processes of one run together, in MiB (default 2048).
    #[serde(default)]
    pub run_memory_mb: Option<u64>,
    /// Size of the private `/tmp` (and of `/dev/shm`), in MiB (default 512).
    #[serde(default)]
    pub tmp_mb: Option<u64>,
    /// Files the private `/tmp` (and `/dev/shm`) may hold (default 65536).
    #[serde(default)]
    pub tmp_files: Option<u64>,
    /// How much one run may write into the zones, in MiB (default 1024).
    #[serde(default)]
    pub zone_write_mb: Option<u64>,
    /// How many files one run may add to the zones (default 20000).
    #[serde(default)]
    pub zone_files: Option<u64>,
}

/// The code toolset's options.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeToolsetConfig {
    /// Whether code may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Wall-clock limit per run in seconds when the call names none (default 60, at least 1).
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
    /// The zone code runs in (default: the first `rw` zone, else the private `/tmp`).
    #[serde(default)]
    pub workdir: Option<String>,
    /// Consent for `run_code` (default `preApproved`: it is jailed).
    #[serde(default = "pre_approved")]
    pub approval: ApprovalDecisionType,
    /// Resource limits.
    #[serde(default, deserialize_with = "or_default")]
    pub limits: ProcessLimitsConfig,
}

impl Default for CodeToolsetConfig {
    fn default() -> Self {
        Self {
            network: NetworkAccess::default(),
            timeout: DEFAULT_TIMEOUT_SECS,
            max_timeout: DEFAULT_MAX_TIMEOUT_SECS,
            jail: JailMode::Strict,
            workdir: None,
            approval: ApprovalDecisionType::PreApproved,
            limits: ProcessLimitsConfig::default(),
        }
    }
}

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

/// One shell rule: a command pattern and the decision for commands that match it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellRule {
    /// The command pattern the rule is about (not empty).
    #[serde(deserialize_with = "non_empty_string")]
    pub pattern: String,
    /// The decision for matching commands.
    pub approval: ApprovalDecisionType,
}

/// The workers toolset: the sub-workers this worker may delegate to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkersToolsetConfig {
    /// Worker names, each becoming a tool of the same name.
    #[serde(default, deserialize_with = "worker_names")]
    pub allowed_workers: Vec<String>,
}

/// The git toolset's options (`toolsets.git`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitToolsetConfig {
    /// The zone whose root is the repository (required).
    #[serde(deserialize_with = "non_empty_string")]
    pub zone: String,
    /// Whether the repository's hooks run (default `false`: git runs with no hooks).
    #[serde(default, deserialize_with = "or_default")]
    pub hooks: bool,
    /// The identity of commits (default: the repository's own `user.name` and `user.email`,
    /// else `Golem Forge <golem-forge@localhost>`).
    #[serde(default)]
    pub author: Option<GitAuthorConfig>,
    /// Wall-clock limit of each git command in seconds (default 60).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    pub timeout: u64,
    /// How strictly to jail (default `strict`).
    #[serde(default, deserialize_with = "or_default")]
    pub jail: JailMode,
    /// Resource limits of git's processes.
    #[serde(default, deserialize_with = "or_default")]
    pub limits: ProcessLimitsConfig,
    /// Private networks `git_pull` and `git_push` may reach (a company's git server); the
    /// host's own services and other private networks are out of their reach.
    #[serde(default, deserialize_with = "private_networks")]
    pub allow_private: Vec<Ipv4Network>,
}

/// `toolsets.git.author`: the name and email git records on commits.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitAuthorConfig {
    /// `user.name`.
    #[serde(deserialize_with = "non_empty_string")]
    pub name: String,
    /// `user.email`.
    #[serde(deserialize_with = "non_empty_string")]
    pub email: String,
}

/// The custom toolset (`toolsets.custom`): one module, or a list of them, each written as a
/// [`CustomModuleConfig`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomToolsetConfig {
    /// The modules, in the order written.
    pub modules: Vec<CustomModuleConfig>,
}

impl<'de> Deserialize<'de> for CustomToolsetConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Modules;
        impl<'de> Visitor<'de> for Modules {
            type Value = CustomToolsetConfig;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a module (`module: ./tools.py`) or a list of modules")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let module = CustomModuleConfig::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                Ok(CustomToolsetConfig {
                    modules: vec![module],
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                let modules = Vec::<CustomModuleConfig>::deserialize(
                    serde::de::value::SeqAccessDeserializer::new(seq),
                )?;
                Ok(CustomToolsetConfig { modules })
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(CustomToolsetConfig::default())
            }
        }
        deserializer.deserialize_any(Modules)
    }
}

/// One module of custom tools: a Python file, a JavaScript module or any executable, run in
/// the jail with the worker's zones.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomModuleConfig {
    /// The module, relative to the worker file: `.py`, `.mjs`/`.js`, or any executable.
    #[serde(deserialize_with = "non_empty_string")]
    pub module: String,
    /// The whitelist: only these tools are exposed (absent: every tool of the module).
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Decisions for tools without a policy of their own, with a default (`ask` when absent).
    #[serde(default, deserialize_with = "or_default")]
    pub approval: ApprovalConfig,
    /// Whether the module may use the network, and which private networks (default: none).
    #[serde(default)]
    pub network: NetworkAccess,
    /// Wall-clock limit of each call (and of reading the module's tools) in seconds
    /// (default 60).
    #[serde(default = "default_timeout", deserialize_with = "positive_secs")]
    pub timeout: u64,
    /// How strictly to jail (default `strict`).
    #[serde(default, deserialize_with = "or_default")]
    pub jail: JailMode,
    /// Resource limits of the module's processes.
    #[serde(default, deserialize_with = "or_default")]
    pub limits: ProcessLimitsConfig,
}

/// The web toolset's options (`toolsets.web`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebToolsetConfig {
    /// Hosts whose fetches are pre-approved (`docs.rs`, `*.python.org`, `127.0.0.1:8080`);
    /// other hosts ask. A port other than 80 and 443 can be fetched only when written here.
    #[serde(default, deserialize_with = "host_patterns")]
    pub allow: Vec<HostPattern>,
    /// Hosts, addresses or networks (`10.0.0.0/8`) that may be fetched on private networks
    /// (none by default).
    #[serde(default, deserialize_with = "private_hosts")]
    pub private_hosts: Vec<PrivateHost>,
    /// The largest response body read, in bytes (default 2000000, at least 1).
    #[serde(default = "default_max_bytes", deserialize_with = "positive_max_bytes")]
    pub max_bytes: u64,
    /// A fetch's wall-clock limit in seconds, and the most a call may ask for (default 30).
    #[serde(
        default = "default_web_timeout",
        deserialize_with = "positive_web_secs"
    )]
    pub timeout: u64,
    /// The backend of `web_search`; absent → `web_search` fails, naming this setting.
    #[serde(default)]
    pub search: Option<WebSearchConfig>,
}

impl Default for WebToolsetConfig {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            private_hosts: Vec::new(),
            max_bytes: golem_tools::web::DEFAULT_MAX_BYTES,
            timeout: golem_tools::web::DEFAULT_TIMEOUT.as_secs(),
            search: None,
        }
    }
}

/// `toolsets.web.search`: which service `web_search` asks, and where.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, try_from = "SearchSection")]
pub struct WebSearchConfig {
    /// `searxng`, `brave` (key in `BRAVE_API_KEY`) or `tavily` (key in `TAVILY_API_KEY`).
    pub backend: SearchBackend,
    /// The service's address: required for SearXNG (its instance), optional for Brave and
    /// Tavily (their public APIs by default). Trusted configuration: not subject to
    /// `web_fetch`'s address checks.
    pub url: Option<String>,
}

/// `toolsets.web.search` as written, before the backend and the URL are checked together.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchSection {
    backend: SearchBackend,
    #[serde(default, deserialize_with = "search_url")]
    url: Option<String>,
}

impl TryFrom<SearchSection> for WebSearchConfig {
    type Error = String;

    fn try_from(section: SearchSection) -> Result<Self, String> {
        if section.url.is_none() && section.backend.default_url().is_none() {
            return Err(format!(
                "must give `url` for the {} backend (the address of the instance, such as \
                 http://127.0.0.1:8888)",
                section.backend.as_str()
            ));
        }
        Ok(WebSearchConfig {
            backend: section.backend,
            url: section.url,
        })
    }
}

/// Whether `name` is a valid worker name: `[a-z][a-z0-9_]*`.
pub fn is_valid_worker_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) if first.is_ascii_lowercase() => {}
        Some(_) | None => return false,
    }
    chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// What is wrong with an invalid worker name, to follow "must match" in a message: the
/// pattern, the name found and a corrected spelling when one is obvious.
pub(crate) fn name_problem(name: &str) -> String {
    let mut message = format!(
        "`[a-z][a-z0-9_]*` (lowercase letters, digits and `_`, starting with a letter), \
         found \"{}\"",
        name.escape_debug()
    );
    if let Some(fixed) = corrected_name(name) {
        message.push_str(&format!(" (try `{fixed}`)"));
    }
    message
}

/// `My-Worker` → `my_worker`, when that makes a valid name.
pub(crate) fn corrected_name(name: &str) -> Option<String> {
    let fixed: String = name
        .trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' | '.' => '_',
            other => other.to_ascii_lowercase(),
        })
        .collect();
    (fixed != name && is_valid_worker_name(&fixed)).then_some(fixed)
}

pub(super) fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}

fn default_max_timeout() -> u64 {
    DEFAULT_MAX_TIMEOUT_SECS
}

fn pre_approved() -> ApprovalDecisionType {
    ApprovalDecisionType::PreApproved
}

fn positive_max_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let secs = Option::<u64>::deserialize(deserializer)?.unwrap_or(DEFAULT_MAX_TIMEOUT_SECS);
    if secs == 0 {
        return Err(serde::de::Error::custom(
            "must be at least 1 (seconds), found \"0\"",
        ));
    }
    Ok(secs)
}

/// A toolset key that is present is enabled, even with an empty (null) value.
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Some(
        Option::<T>::deserialize(deserializer)?.unwrap_or_default(),
    ))
}

/// `git:` needs its zone: the key with no value is an error, not a toolset without a
/// repository.
fn git_toolset<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<GitToolsetConfig>, D::Error> {
    match Option::<GitToolsetConfig>::deserialize(deserializer)? {
        Some(config) => Ok(Some(config)),
        None => Err(serde::de::Error::custom(
            "must give `zone`, the zone whose root is the repository (`git: { zone: repo }`)",
        )),
    }
}

pub(super) fn positive_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let secs = Option::<u64>::deserialize(deserializer)?.unwrap_or(DEFAULT_TIMEOUT_SECS);
    if secs == 0 {
        return Err(serde::de::Error::custom(
            "must be at least 1 (seconds), found \"0\"",
        ));
    }
    Ok(secs)
}

fn default_max_bytes() -> u64 {
    golem_tools::web::DEFAULT_MAX_BYTES
}

fn default_web_timeout() -> u64 {
    golem_tools::web::DEFAULT_TIMEOUT.as_secs()
}

fn positive_max_bytes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let bytes = Option::<u64>::deserialize(deserializer)?.unwrap_or_else(default_max_bytes);
    if bytes == 0 {
        return Err(serde::de::Error::custom(
            "must be at least 1 (bytes), found \"0\"",
        ));
    }
    Ok(bytes)
}

fn positive_web_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let secs = Option::<u64>::deserialize(deserializer)?.unwrap_or_else(default_web_timeout);
    if secs == 0 {
        return Err(serde::de::Error::custom(
            "must be at least 1 (seconds), found \"0\"",
        ));
    }
    Ok(secs)
}

fn host_patterns<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<HostPattern>, D::Error> {
    parsed_list(
        deserializer,
        HostPattern::parse,
        "a host such as \"docs.rs\", \"*.python.org\" or \"127.0.0.1:8080\"",
    )
}

fn private_hosts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PrivateHost>, D::Error> {
    parsed_list(
        deserializer,
        PrivateHost::parse,
        "a host, an address or a network such as \"intranet.example\", \"10.1.2.3\" or \
         \"10.0.0.0/8\"",
    )
}

/// A list of strings, each parsed by `parse`; a bad entry is an error at its own line.
fn parsed_list<'de, D, T>(
    deserializer: D,
    parse: fn(&str) -> Result<T, String>,
    what: &'static str,
) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
{
    Ok(deserializer
        .deserialize_option(ParsedList { parse, what })?
        .unwrap_or_default())
}

/// Reads a list of strings, parsing each one where it stands.
struct ParsedList<T> {
    parse: fn(&str) -> Result<T, String>,
    what: &'static str,
}

impl<'de, T> Visitor<'de> for ParsedList<T> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ParsedItem {
            parse: self.parse,
            what: self.what,
        })? {
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// One entry of a [`ParsedList`].
struct ParsedItem<T> {
    parse: fn(&str) -> Result<T, String>,
    what: &'static str,
}

impl<'de, T> DeserializeSeed<'de> for ParsedItem<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        let text = String::deserialize(deserializer)?;
        (self.parse)(&text)
            .map_err(|why| serde::de::Error::custom(format!("must be {}: {why}", self.what)))
    }
}

fn search_url<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    match Option::<String>::deserialize(deserializer)? {
        None => Ok(None),
        Some(url) => check_search_url(&url)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

fn non_empty_string<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = String::deserialize(deserializer)?;
    if text.is_empty() {
        return Err(serde::de::Error::custom("must not be empty"));
    }
    Ok(text)
}

fn worker_names<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let names = Option::<Vec<String>>::deserialize(deserializer)?.unwrap_or_default();
    for name in &names {
        if !is_valid_worker_name(name) {
            return Err(serde::de::Error::custom(format!(
                "must list worker names matching {}",
                name_problem(name)
            )));
        }
    }
    Ok(names)
}
