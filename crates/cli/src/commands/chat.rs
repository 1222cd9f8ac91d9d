//! `golem-forge chat`: an interactive session with a worker (the session itself is in
//! `crate::chat`).

use std::process::ExitCode;

use clap::Args;

use super::common::WorkerOptions;
use crate::cli_error::CommandError;

/// Talk with a worker in an interactive session
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `golem-forge chat`.
pub fn cmd_chat(args: ChatArgs) -> Result<ExitCode, CommandError> {
    crate::chat::cmd_chat(args)
}
