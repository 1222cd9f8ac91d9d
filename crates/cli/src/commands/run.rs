//! `golem-forge run`: run a worker once on some input and print its answer.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::common::WorkerOptions;
use crate::cli_error::CommandError;

/// Run a worker once and print its answer
///
/// Input comes from --input, then --file, then the words after WORKER, then stdin.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

    /// Input words, joined by spaces
    pub input: Vec<String>,

    /// Input text
    #[arg(short = 'i', long = "input", value_name = "TEXT")]
    pub input_text: Option<String>,

    /// Read the input from a file
    #[arg(short, long, value_name = "PATH")]
    pub file: Option<PathBuf>,

    /// Print the protocol events as JSON lines on stdout, and nothing else
    #[arg(long)]
    pub json: bool,

    /// Stop after this many model turns
    #[arg(long, value_name = "N")]
    pub max_iterations: Option<u32>,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `golem-forge run`.
pub fn cmd_run(args: RunArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(worker = %args.worker, "run requested");
    Err(CommandError::not_built("run", 4, "the worker runtime"))
}
