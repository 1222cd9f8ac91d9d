//! `golem-forge serve`: serve a worker's session to a browser.

use std::process::ExitCode;

use clap::Args;

use super::common::WorkerOptions;
use crate::cli_error::CommandError;

/// Serve a worker's session to a browser page
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

    /// The port to listen on (on 127.0.0.1)
    #[arg(long, default_value_t = 4777)]
    pub port: u16,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `golem-forge serve`.
pub fn cmd_serve(args: ServeArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(worker = %args.worker, port = args.port, "serve requested");
    Err(CommandError::usage(
        "`golem-forge serve` is not available yet: the browser front end has no issue filed so far",
    )
    .with_hint("Use `golem-forge run --json` to drive a worker from another program once it lands"))
}
