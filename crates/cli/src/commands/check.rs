//! `golem-forge check`: validate a worker and list its tools and policies.

use std::process::ExitCode;

use clap::Args;

use crate::cli_error::CommandError;

/// Validate a worker and its program config; list its tools and their approval policies
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,
}

/// Runs `golem-forge check`.
pub fn cmd_check(args: CheckArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(worker = %args.worker, "check requested");
    Err(CommandError::not_built("check", 4, "the worker runtime"))
}
