//! `golem-forge sessions resume`: continue a recorded session with one more input, run like
//! `golem-forge run` (its input, output and turn are `run`'s; only the session it opens differs).

use std::process::ExitCode;

use clap::Args;

use super::super::common::WorkerOptions;
use super::super::run::{RunInput, block_on, run_turn};
use crate::cli_error::CommandError;
use crate::session::{SessionChoice, open_host};

/// Continue a recorded session with more input
///
/// The session's worker runs again with the conversation so far; input comes from --input,
/// then --file, then the words after ID, then stdin. A session parked waiting for an approval
/// (approval mode defer) continues its parked turn when no input is given: the call answered
/// with `golem-forge inbox` runs, then the worker goes on.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session id, or enough of its start to name one session
    pub id: String,

    #[command(flatten)]
    pub run: RunInput,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `golem-forge sessions resume` for the session `id`.
pub fn cmd_resume(args: ResumeArgs, id: &str) -> Result<ExitCode, CommandError> {
    block_on(async {
        let choice = SessionChoice::Resume(id);
        let host = open_host(choice, &args.options, args.run.max_iterations, true)?;
        let input = match host.is_waiting() && !args.run.given() {
            true => None,
            false => Some(args.run.read()?),
        };
        run_turn(host, input.as_deref(), &args.run, args.options.trace).await
    })?
}
