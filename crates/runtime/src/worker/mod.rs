//! Worker files (`*.worker`, docs/worker-file.md): YAML front matter and markdown instructions,
//! parsed into a [`WorkerDefinition`] whose errors name the file, the line and the key, plus the
//! `compatible_models` check and the front matter's JSON Schema. Nothing here runs a worker or builds its tools.

mod definition;
mod error;
mod models;
pub(crate) mod name;
mod parse;
mod schema;
pub(crate) mod suggest;
pub(crate) mod yaml;

pub use definition::{WorkerDefinition, WorkerMode, WorkerOutput};
pub use error::WorkerFileError;
pub use models::glob_matches;
pub use name::is_valid_worker_name;
pub(crate) use parse::unique_zones;
pub use parse::{WORKER_EXTENSION, load_worker, parse_worker};
pub use schema::{strict_schema_json, worker_schema_json};
pub use yaml::{TextFileProblem, YamlProblem, from_yaml, read_text_file};

// Each toolset's configuration lives with the toolset; these are the names a worker file's
// readers (`check`, the tests) know them by.
pub use crate::toolsets::ToolsetsConfig;
pub use crate::workers_toolset::WorkersToolsetConfig;
pub use golem_mcp_client::{
    McpJailConfig, McpServerConfig, McpToolsetConfig, is_valid_mcp_server_name,
};
pub use golem_tools::code::{CodeConfig, CodeToolsetConfig};
pub use golem_tools::custom::{CustomModuleConfig, CustomToolsetConfig};
pub use golem_tools::filesystem::FilesystemToolsetConfig;
pub use golem_tools::git::{GitAuthor as GitAuthorConfig, GitToolsetConfig};
pub use golem_tools::shell::{ShellConfig, ShellRule, ShellToolsetConfig};
pub use golem_toolset::{
    DEFAULT_MAX_TIMEOUT_SECS, DEFAULT_TIMEOUT_SECS, JailMode, Jailed, NetworkAccess,
    ProcessLimitsConfig, ProgramsConfig,
};
pub use golem_web_tools::{WebSearchConfig, WebToolsetConfig};
