//! Worker files (`*.worker`, docs/worker-file.md): YAML front matter and markdown instructions,
//! parsed into a [`WorkerDefinition`] whose errors name the file, the line and the key, plus the
//! `compatible_models` check. Nothing here runs a worker or builds its tools.

mod definition;
mod error;
mod mcp_config;
mod models;
mod network;
mod parse;
pub(crate) mod suggest;
pub(crate) mod yaml;

pub use definition::{
    CodeToolsetConfig, CustomModuleConfig, CustomToolsetConfig, DEFAULT_MAX_TIMEOUT_SECS,
    DEFAULT_TIMEOUT_SECS, FilesystemToolsetConfig, GitAuthorConfig, GitToolsetConfig, JailMode,
    ProcessLimitsConfig, ShellRule, ShellToolsetConfig, ToolsetsConfig, WebSearchConfig,
    WebToolsetConfig, WorkerDefinition, WorkerMode, WorkersToolsetConfig, is_valid_worker_name,
};
pub use error::WorkerFileError;
pub use mcp_config::{McpJailConfig, McpServerConfig, McpToolsetConfig, is_valid_mcp_server_name};
pub use models::glob_matches;
pub use network::NetworkAccess;
pub(crate) use parse::unique_zones;
pub use parse::{WORKER_EXTENSION, load_worker, parse_worker};
