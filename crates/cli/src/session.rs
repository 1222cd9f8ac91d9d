//! Opening a session host (`golem_runtime::host`) for the commands that run workers (`run`,
//! `chat`, `sessions resume`): the worker named on the command line (or the recorded session
//! to continue), the command-line options as the host's, and the host's errors as command
//! errors with hints. Everything else — the model, the bus, approvals, the interrupt, the
//! transcript — belongs to the host; these commands are its clients.

use std::path::PathBuf;

use golem_core::approval::ApprovalMode;
use golem_runtime::host::{HostError, HostOptions, HostWorker, SessionHost};
use golem_runtime::launch::LaunchError;
use golem_runtime::registry::resolve_worker_arg;

use crate::cli_error::CommandError;
use crate::commands::common::WorkerOptions;

/// Which session to open.
pub enum SessionChoice<'a> {
    /// A new session of the worker named on the command line (a file, a directory with
    /// `main.worker`, or a worker's name).
    Worker(&'a str),
    /// The recorded session with this id (or the start of one), found from the current
    /// directory.
    Resume(&'a str),
}

fn host_error(err: HostError) -> CommandError {
    match err {
        HostError::Config(message) => CommandError::usage(message),
        HostError::Session(err) => CommandError::usage(err.to_string()),
        HostError::Launch(LaunchError::Config(message) | LaunchError::Unsupported(message)) => {
            CommandError::usage(message)
        }
        HostError::Launch(LaunchError::Model(err)) => {
            let hint = match &err {
                golem_llm::ModelError::MissingApiKey { env, .. } => Some(format!(
                    "Set {env}, or run offline with `--model test:default`"
                )),
                _ => None,
            };
            let error = CommandError::usage(err.to_string());
            match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        }
    }
}

/// `GOLEM_FORGE_MODEL`, when it is set to something.
pub fn env_model() -> Option<String> {
    std::env::var("GOLEM_FORGE_MODEL")
        .ok()
        .filter(|m| !m.trim().is_empty())
}

fn current_dir() -> Result<PathBuf, CommandError> {
    std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))
}

/// Opens the session `choice` with the command line's `options`. `keeps_history` makes the
/// root worker keep its conversation between turns (a chat; a resumed session always does).
pub fn open_host(
    choice: SessionChoice<'_>,
    options: &WorkerOptions,
    max_iterations: Option<u32>,
    keeps_history: bool,
) -> Result<SessionHost, CommandError> {
    let cwd = current_dir()?;
    let worker = match choice {
        SessionChoice::Worker(arg) => HostWorker::File(
            resolve_worker_arg(arg, &cwd).map_err(|e| CommandError::usage(e.to_string()))?,
        ),
        SessionChoice::Resume(id) => HostWorker::Resume {
            program_root: golem_runtime::config::program_root(&cwd),
            id: id.to_owned(),
        },
    };
    SessionHost::open(HostOptions {
        worker,
        model: options.model.clone(),
        env_model: env_model(),
        approval: options.approval.map(ApprovalMode::from),
        max_iterations,
        record: options.record.clone(),
        jail_helper: std::env::current_exe().ok(),
        keeps_history,
        budget: options.budget(),
        instructions: None,
        batch_item: None,
        mcp_servers: Default::default(),
        ready_model: None,
        scratch: None,
        trace: Default::default(),
    })
    .map_err(host_error)
}
