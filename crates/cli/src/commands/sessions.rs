//! `golem-forge sessions`: list, show and resume recorded sessions.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::cli_error::CommandError;

/// List, show or resume recorded sessions
#[derive(Debug, Args)]
pub struct SessionsArgs {
    #[command(subcommand)]
    pub action: Option<SessionsAction>,
}

/// What to do with sessions.
#[derive(Debug, Subcommand)]
pub enum SessionsAction {
    /// List recorded sessions (the default)
    List,
    /// Print one session's transcript
    Show {
        /// The session id
        id: String,
    },
    /// Continue a chat session with its history
    Resume {
        /// The session id
        id: String,
    },
}

/// Runs `golem-forge sessions`.
pub fn cmd_sessions(args: SessionsArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(action = ?args.action, "sessions requested");
    Err(CommandError::not_built("sessions", 4, "the worker runtime"))
}
