//! The parsed worker file: [`WorkerDefinition`] and the configuration of each toolset, as
//! docs/worker-file.md describes them. Deserialization validates every value it can check alone
//! (with its line); nothing here builds tools or touches the filesystem.

use std::path::{Path, PathBuf};

use golem_sandbox::ZoneConfig;
use serde::{Deserialize, Serialize};

use crate::budget::BudgetLimits;
use crate::context_settings::ContextSettings;
use crate::toolsets::ToolsetsConfig;

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
    /// How it manages its context (`context:`), before the program's settings.
    pub context: ContextSettings,
    /// The sandbox zones; host paths are relative to [`WorkerDefinition::dir`].
    pub zones: Vec<ZoneConfig>,
    /// The toolsets the worker gets.
    pub toolsets: ToolsetsConfig,
    /// The shape of its final answer (`output:`), when it must be JSON; `None`: free text.
    pub output: Option<WorkerOutput>,
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

/// `output:` in the front matter: the worker's final answer is a JSON value valid against
/// `schema`, a JSON Schema checked (with the `jsonschema` crate) when the file is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerOutput {
    /// The JSON Schema of the answer.
    pub schema: serde_json::Value,
}

/// How the root worker talks to its user.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
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
