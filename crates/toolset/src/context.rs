//! What building a worker's toolsets needs from the launcher ([`BuildContext`]), and how it
//! fails ([`ToolsetError`]); how a toolset asks for the tool that delegates to another worker
//! ([`Delegation`]) and how that fails ([`DelegationError`]).

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use golem_core::tool::Tool;
use golem_protocol::StatusLevel;
use golem_sandbox::Sandbox;

/// Where a worker's toolsets are built: the worker, its sandbox and the program around it.
pub struct BuildContext<'a> {
    /// The worker's name, for messages.
    pub worker: &'a str,
    /// The worker file as it was given; paths in a toolset's configuration are relative to
    /// its directory.
    pub worker_file: &'a Path,
    /// The worker's zones.
    pub sandbox: &'a Sandbox,
    /// The program root (where `.golem-forge/` keeps caches).
    pub program_root: &'a Path,
    /// Our own binary, the process jail's helper; `None` where there is no jail.
    pub jail_helper: Option<&'a Path>,
    /// Tells the user something while the session runs.
    pub notice: Option<Notice>,
    /// Makes the tools that delegate to other workers; `None` where delegation is not built
    /// (`check`).
    pub delegation: Option<&'a dyn Delegation>,
}

impl BuildContext<'_> {
    /// The directory of the worker file (empty for a bare file name).
    pub fn worker_dir(&self) -> PathBuf {
        self.worker_file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// A configuration error about the worker: `worker NAME (FILE): MESSAGE`.
    pub fn worker_error(&self, message: impl Display) -> ToolsetError {
        ToolsetError::Config(format!(
            "worker {} ({}): {message}",
            self.worker,
            self.worker_file.display()
        ))
    }

    /// A configuration error about `toolsets.KEY`: `worker NAME (FILE): toolsets.KEY: MESSAGE`.
    pub fn config_error(&self, key: &str, message: impl Display) -> ToolsetError {
        self.worker_error(format_args!("toolsets.{key}: {message}"))
    }
}

/// Tells the user something while the session runs (a `status` event of that level).
pub type Notice = Arc<dyn Fn(StatusLevel, &str) + Send + Sync>;

/// Makes the tool that delegates to another worker. The launcher implements it for a session;
/// a toolset sees only this trait, so it never names the launcher that builds the child.
pub trait Delegation {
    /// The tool that runs `worker` as a sub-worker, or why it cannot be made.
    fn tool(&self, worker: &str) -> Result<Arc<dyn Tool>, DelegationError>;
}

/// Why the tool that delegates to a worker cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum DelegationError {
    /// The worker cannot be loaded: no worker has that name, or its file is wrong. Shown as
    /// the launcher's own error.
    #[error(transparent)]
    Load(Box<dyn std::error::Error + Send + Sync>),
}

/// Why a worker's toolset cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ToolsetError {
    /// The worker file or program config is wrong; the message names the worker and the key.
    #[error("{0}")]
    Config(String),
    /// This machine cannot give the toolset what it needs (the process jail's layers).
    #[error("{0}")]
    Unsupported(String),
}
