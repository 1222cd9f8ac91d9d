//! `golem-forge init`: scaffold a worker project.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::cli_error::CommandError;

/// Create a worker project: a config, an example worker and its zones
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to create the project (default: the current directory)
    pub dir: Option<PathBuf>,
}

/// Runs `golem-forge init`.
pub fn cmd_init(args: InitArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(dir = ?args.dir, "init requested");
    Err(CommandError::not_built("init", 4, "the worker runtime"))
}
