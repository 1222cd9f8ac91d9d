//! Program config (`golem-forge.config.yaml`), found by walking up from a worker's directory:
//! the default model, approval mode, delegation depth, where workers live, extra model
//! providers and the timeouts and retry budget of model requests, files protected beyond the
//! built-in list (`protected:`); and the model precedence (`--model` > worker > `GOLEM_FORGE_MODEL` > config).
//! Nothing here resolves a model or reads the environment itself.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use std::time::Duration;

use golem_core::approval::ApprovalMode;
use golem_llm::http::HttpSettings;
use golem_llm::pricing::Price;
use golem_llm::resolve::ProviderDefinition;
use golem_llm::retry::RetryPolicy;
use golem_sandbox::ZoneConfig;
use serde::{Deserialize, Deserializer};

use crate::context_settings::ContextSettings;
use crate::worker::yaml::{self, or_default};
use crate::worker::{WorkerDefinition, WorkerFileError};

/// The name of the program config file.
pub const CONFIG_FILE_NAME: &str = "golem-forge.config.yaml";

/// The folder, in the program root, that holds what golem-forge records for the program
/// (sessions, approval rules, caches, the chat's history).
pub const STATE_DIR_NAME: &str = ".golem-forge";

/// The environment variable that names a model (below the worker's own `model`).
pub const MODEL_ENV: &str = "GOLEM_FORGE_MODEL";

/// The default of `delegation.max_depth`.
pub const DEFAULT_MAX_DEPTH: u32 = 5;

/// The program config, or its defaults when there is no config file.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgramConfig {
    /// The default model (`provider:model`), lowest in the precedence.
    pub model: Option<String>,
    /// `approval:` settings.
    pub approval: ApprovalSettings,
    /// `delegation:` settings.
    pub delegation: DelegationSettings,
    /// `undo:` settings.
    pub undo: UndoSettings,
    /// Directories holding workers, as written (relative to [`Self::root`]); see
    /// [`Self::worker_dirs`].
    pub worker_paths: Vec<PathBuf>,
    /// Model providers defined by the program, by name.
    pub providers: BTreeMap<String, ProviderDefinition>,
    /// `model_requests:` settings.
    pub model_requests: ModelRequestSettings,
    /// `notify:` — a command run when an approval has waited a while.
    pub notify: Option<NotifySettings>,
    /// `zones:` — the zones of a root worker that declares none (host paths relative to
    /// [`Self::root`]; see [`Self::apply_default_zones`]).
    pub zones: Vec<ZoneConfig>,
    /// `prices:` — US dollars per million tokens by `provider:model` (or `provider:prefix*`),
    /// before the built-in defaults.
    pub prices: BTreeMap<String, Price>,
    /// `context_windows:` — context windows in tokens by `provider:model` (or
    /// `provider:prefix*`), before the built-in defaults (the same matching as `prices:`).
    pub context_windows: BTreeMap<String, u64>,
    /// `context:` — how workers manage their context, below each worker's own `context:`.
    pub context: ContextSettings,
    /// `protected:` — zone-relative patterns of files no writer may change, added to the
    /// built-in list (`golem_sandbox::check_pattern` says how they are written); a zone's
    /// `unprotect` cannot lift them.
    pub protected: Vec<String>,
    /// `telemetry:` — where traces go, below the OpenTelemetry environment variables.
    pub telemetry: Option<golem_telemetry::TelemetryConfig>,
    /// The program root ([`program_root`] of where the search started): the config file's
    /// directory when there is one.
    pub root: PathBuf,
    /// The config file, if there is one.
    pub file: Option<PathBuf>,
}

/// The program root of `start` (made absolute): the nearest directory from `start` upwards
/// that holds the config file; without one, the nearest that holds [`STATE_DIR_NAME`] (a
/// program without a config file that has recorded something); without either, `start`.
///
/// Every part of golem-forge finds a program this way: the runtime from a worker's directory
/// ([`ProgramConfig::discover`]), the command line from the current directory (`sessions`,
/// `approvals`, the chat's history).
pub fn program_root(start: &Path) -> PathBuf {
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_owned());
    find_program_root(&start).unwrap_or(start)
}

/// The program root of `start` by the rule of [`program_root`], or `None` when no directory
/// from `start` upwards holds the config file or [`STATE_DIR_NAME`].
pub fn find_program_root(start: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start).unwrap_or_else(|_| start.to_owned());
    ProgramConfig::find(&start)
        .and_then(|file| file.parent().map(Path::to_path_buf))
        .or_else(|| {
            start
                .ancestors()
                .find(|dir| dir.join(STATE_DIR_NAME).is_dir())
                .map(Path::to_path_buf)
        })
}

/// Whether `dir` holds a program: the config file, or the [`STATE_DIR_NAME`] folder of one
/// without a config file.
pub fn holds_program(dir: &Path) -> bool {
    dir.join(CONFIG_FILE_NAME).is_file() || dir.join(STATE_DIR_NAME).is_dir()
}

/// `approval:` in program config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSettings {
    /// The approval mode unless the command line gives one.
    #[serde(default)]
    pub mode: Option<ApprovalMode>,
}

/// `delegation:` in program config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegationSettings {
    /// How deep workers may delegate (the root worker is depth 0); default 5.
    #[serde(default = "default_max_depth", deserialize_with = "max_depth")]
    pub max_depth: u32,
}

impl Default for DelegationSettings {
    fn default() -> Self {
        Self {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// `undo:` in program config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UndoSettings {
    /// How many MiB of file contents a session keeps to undo its turns (default 256); a turn
    /// that needs more is not undoable, and says so.
    #[serde(default = "default_undo_max_mb")]
    pub max_mb: u64,
}

impl UndoSettings {
    /// The cap in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_mb.saturating_mul(1 << 20)
    }
}

impl Default for UndoSettings {
    fn default() -> Self {
        Self {
            max_mb: default_undo_max_mb(),
        }
    }
}

fn default_undo_max_mb() -> u64 {
    golem_sandbox::undo::DEFAULT_UNDO_CAP >> 20
}

/// `model_requests:` in program config: the timeouts and the retry budget of every model
/// request. Each turn has one budget of `max_retries` retries (HTTP errors, broken streams and
/// stalls together), at most `stall_retries` of them after a stream went without content, none
/// started `wall_limit_secs` after the turn began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelRequestSettings {
    /// How long to wait for response headers (default 30).
    #[serde(deserialize_with = "positive_secs")]
    pub headers_timeout_secs: u64,
    /// How long a stream may go without content; pings do not count (default 90).
    #[serde(deserialize_with = "positive_secs")]
    pub idle_timeout_secs: u64,
    /// Retries per turn (default 4).
    pub max_retries: u32,
    /// Retries per turn after a stall (default 1).
    pub stall_retries: u32,
    /// No retry starts this long after the turn began (default 180).
    #[serde(deserialize_with = "positive_secs")]
    pub wall_limit_secs: u64,
}

impl Default for ModelRequestSettings {
    fn default() -> Self {
        let http = HttpSettings::default();
        Self {
            headers_timeout_secs: http.headers_timeout.as_secs(),
            idle_timeout_secs: http.idle_timeout.as_secs(),
            max_retries: http.retry.max_retries,
            stall_retries: http.retry.stall_retries,
            wall_limit_secs: http.retry.wall_limit.as_secs(),
        }
    }
}

impl ModelRequestSettings {
    /// The HTTP settings of every model client.
    pub fn http_settings(&self) -> HttpSettings {
        let defaults = HttpSettings::default();
        HttpSettings {
            headers_timeout: Duration::from_secs(self.headers_timeout_secs),
            idle_timeout: Duration::from_secs(self.idle_timeout_secs),
            retry: RetryPolicy {
                max_retries: self.max_retries,
                stall_retries: self.stall_retries,
                wall_limit: Duration::from_secs(self.wall_limit_secs),
                ..defaults.retry
            },
            ..defaults
        }
    }
}

/// `notify:` in program config: when an approval has waited `after_seconds`, `command` runs
/// once for it (outside the jail: it is the user's own program, like `notify-send` or a webhook
/// script), with `GOLEM_FORGE_TOOL`, `GOLEM_FORGE_DESCRIPTION` and `GOLEM_FORGE_RISK` in its
/// environment.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    /// The program and its arguments (not run through a shell).
    #[serde(deserialize_with = "command_words")]
    pub command: Vec<String>,
    /// How long an approval waits before the command runs (default 10; 0 runs it at once).
    #[serde(default = "default_notify_after")]
    pub after_seconds: u64,
}

fn default_notify_after() -> u64 {
    10
}

fn command_words<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let words = Vec::<String>::deserialize(deserializer)?;
    if words
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err(serde::de::Error::custom(
            "must name a program, e.g. [notify-send, golem-forge]",
        ));
    }
    Ok(words)
}

/// A config file that cannot be read or is invalid.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read config file {}: {source}", path.display())]
    Read {
        /// The config file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The file is invalid; `message` names the key when there is one.
    #[error("config file {}, line {line}: {message}", path.display())]
    Invalid {
        /// The config file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// The dotted key path, when the problem has one.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
}

/// Where the chosen model came from, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// `--model` on the command line.
    CommandLine,
    /// The worker's `model`.
    Worker,
    /// The `GOLEM_FORGE_MODEL` environment variable.
    Environment,
    /// The program config's `model`.
    Config,
}

/// No model was chosen, or the chosen one does not fit the worker.
#[derive(Debug, thiserror::Error)]
pub enum ModelChoiceError {
    /// Nothing names a model.
    #[error(
        "no model for worker {worker}: pass `--model provider:model`, set `model:` in the worker \
         file or in {CONFIG_FILE_NAME}, or set {MODEL_ENV} (`--model test:default` runs offline)"
    )]
    NoModel {
        /// The worker's name.
        worker: String,
    },
    /// The chosen model is not in the worker's `compatible_models`.
    #[error(transparent)]
    Incompatible(#[from] WorkerFileError),
}

/// The keys of the config file.
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    model: Option<String>,
    #[serde(default, deserialize_with = "or_default")]
    approval: ApprovalSettings,
    #[serde(default, deserialize_with = "or_default")]
    delegation: DelegationSettings,
    #[serde(default, deserialize_with = "or_default")]
    undo: UndoSettings,
    #[serde(default, deserialize_with = "or_default")]
    worker_paths: Vec<PathBuf>,
    #[serde(default, deserialize_with = "provider_names")]
    providers: BTreeMap<String, ProviderDefinition>,
    #[serde(default, deserialize_with = "or_default")]
    model_requests: ModelRequestSettings,
    #[serde(default, deserialize_with = "or_default")]
    prices: BTreeMap<String, Price>,
    #[serde(default, deserialize_with = "context_windows")]
    context_windows: BTreeMap<String, u64>,
    #[serde(default, deserialize_with = "or_default")]
    context: ContextSettings,
    #[serde(default)]
    notify: Option<NotifySettings>,
    #[serde(default, deserialize_with = "crate::worker::unique_zones")]
    zones: Vec<ZoneConfig>,
    #[serde(default, deserialize_with = "protected_patterns")]
    protected: Vec<String>,
    #[serde(default)]
    telemetry: Option<golem_telemetry::TelemetryConfig>,
}

impl ProgramConfig {
    /// The defaults, with `root` as the program root and no file.
    pub fn defaults(root: impl Into<PathBuf>) -> Self {
        Self::from_file(ConfigFile::default(), root.into(), None)
    }

    /// The nearest config file in `start_dir` or one of its ancestors, if any.
    pub fn find(start_dir: &Path) -> Option<PathBuf> {
        let start = std::path::absolute(start_dir).unwrap_or_else(|_| start_dir.to_owned());
        start
            .ancestors()
            .map(|dir| dir.join(CONFIG_FILE_NAME))
            .find(|file| file.is_file())
    }

    /// Loads the nearest config file walking up from `start_dir`; without one, the defaults
    /// with [`program_root`] of `start_dir` as the program root.
    pub fn discover(start_dir: &Path) -> Result<Self, ConfigError> {
        match Self::find(start_dir) {
            Some(file) => Self::load(&file),
            None => Ok(Self::defaults(program_root(start_dir))),
        }
    }

    /// The program config of the worker file at `worker_path` (see [`Self::discover`]).
    pub fn for_worker(worker_path: &Path) -> Result<Self, ConfigError> {
        let dir = match worker_path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            Some(_) | None => Path::new("."),
        };
        Self::discover(dir)
    }

    /// Reads and parses the config file at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses the text of the config file at `path`; an empty file gives the defaults.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let text = text.replace("\r\n", "\n");
        let root = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
            Some(_) | None => PathBuf::from("."),
        };
        let blank = text.lines().all(|line| {
            let line = line.trim_start();
            line.is_empty() || line.starts_with('#')
        });
        let file = if blank {
            ConfigFile::default()
        } else {
            yaml::from_yaml(&text, 1, "config").map_err(|problem| ConfigError::Invalid {
                path: path.to_owned(),
                line: problem.line,
                key: problem.key,
                message: problem.message,
            })?
        };
        Ok(Self::from_file(file, root, Some(path.to_owned())))
    }

    fn from_file(file: ConfigFile, root: PathBuf, path: Option<PathBuf>) -> Self {
        Self {
            model: file.model,
            approval: file.approval,
            delegation: file.delegation,
            undo: file.undo,
            worker_paths: file.worker_paths,
            providers: file.providers,
            model_requests: file.model_requests,
            prices: file.prices,
            context_windows: file.context_windows,
            context: file.context,
            notify: file.notify,
            zones: file.zones,
            protected: file.protected,
            telemetry: file.telemetry,
            root,
            file: path,
        }
    }

    /// Gives `worker` the program's default zones when it declares none of its own, with their
    /// host paths made absolute from the program root (so they mean the same whichever
    /// directory the worker file is in). Returns whether it did.
    pub fn apply_default_zones(&self, worker: &mut WorkerDefinition) -> bool {
        if !worker.zones.is_empty() || self.zones.is_empty() {
            return false;
        }
        worker.zones = self
            .zones
            .iter()
            .map(|zone| ZoneConfig {
                path: Some(
                    self.root.join(
                        zone.path
                            .clone()
                            .unwrap_or_else(|| PathBuf::from(&zone.name)),
                    ),
                ),
                ..zone.clone()
            })
            .collect();
        true
    }

    /// The directories to look for workers in: `worker_paths` resolved against the program
    /// root, or the root itself when there are none.
    pub fn worker_dirs(&self) -> Vec<PathBuf> {
        if self.worker_paths.is_empty() {
            return vec![self.root.clone()];
        }
        self.worker_paths
            .iter()
            .map(|path| self.root.join(path))
            .collect()
    }
}

/// Chooses the model for `worker`: `cli` (`--model`) > the worker's `model` > `env`
/// (`GOLEM_FORGE_MODEL`) > the config's `model`; blank values count as absent. The choice
/// must fit the worker's `compatible_models`.
pub fn choose_model(
    cli: Option<&str>,
    worker: &WorkerDefinition,
    env: Option<&str>,
    config: &ProgramConfig,
) -> Result<String, ModelChoiceError> {
    model_choice(cli, worker, env, config).map(|(model, _)| model)
}

/// [`choose_model`], also saying where the model came from.
pub fn model_choice(
    cli: Option<&str>,
    worker: &WorkerDefinition,
    env: Option<&str>,
    config: &ProgramConfig,
) -> Result<(String, ModelSource), ModelChoiceError> {
    let given = |value: Option<&str>, source| {
        value
            .map(str::trim)
            .filter(|value| !value.is_empty())
            .map(|value| (value.to_owned(), source))
    };
    let (model, source) = given(cli, ModelSource::CommandLine)
        .or_else(|| given(worker.model.as_deref(), ModelSource::Worker))
        .or_else(|| given(env, ModelSource::Environment))
        .or_else(|| given(config.model.as_deref(), ModelSource::Config))
        .ok_or_else(|| ModelChoiceError::NoModel {
            worker: worker.name.clone(),
        })?;
    worker.check_compatible(&model)?;
    Ok((model, source))
}

fn default_max_depth() -> u32 {
    DEFAULT_MAX_DEPTH
}

fn max_depth<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    Ok(Option::<u32>::deserialize(deserializer)?.unwrap_or(DEFAULT_MAX_DEPTH))
}

fn positive_secs<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let secs = u64::deserialize(deserializer)?;
    if secs == 0 {
        return Err(serde::de::Error::custom("must be at least 1 (seconds)"));
    }
    Ok(secs)
}

fn protected_patterns<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    let patterns = Option::<Vec<golem_sandbox::PathPattern>>::deserialize(deserializer)?;
    Ok(patterns
        .unwrap_or_default()
        .into_iter()
        .map(|pattern| pattern.0)
        .collect())
}

/// `context_windows:`, each a positive number of tokens.
fn context_windows<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, u64>, D::Error> {
    let windows = Option::<BTreeMap<String, u64>>::deserialize(deserializer)?.unwrap_or_default();
    if let Some((model, _)) = windows.iter().find(|(_, window)| **window == 0) {
        return Err(serde::de::Error::custom(format!(
            "must give \"{}\" a window of at least one token",
            model.escape_debug()
        )));
    }
    Ok(windows)
}

fn provider_names<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, ProviderDefinition>, D::Error> {
    let providers = Option::<BTreeMap<String, ProviderDefinition>>::deserialize(deserializer)?
        .unwrap_or_default();
    if let Some(bad) = providers
        .keys()
        .find(|name| name.is_empty() || name.contains(':') || name.contains(char::is_whitespace))
    {
        return Err(serde::de::Error::custom(format!(
            "must use provider names without `:` or spaces, found \"{}\"",
            bad.escape_debug()
        )));
    }
    Ok(providers)
}
