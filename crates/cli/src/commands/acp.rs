//! `golem-forge acp`: a worker served to an editor as an Agent Client Protocol agent by
//! `golem-acp`, over stdio (stdout is the protocol; logs go to stderr).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use golem_acp::AcpSettings;
use golem_core::approval::ApprovalMode;

use super::common::ApprovalArg;
use crate::cli_error::CommandError;

/// Serve a worker to an editor as an Agent Client Protocol (ACP) agent over stdio
///
/// Editors that speak ACP (Zed, JetBrains IDEs, Neovim with CodeCompanion or avante) start
/// this command and drive it over stdin and stdout. Each editor session is a session of the
/// WORKER (its transcript under .golem-forge/sessions/, resumable with session/load); its
/// approvals are asked through the editor's permission dialog, and the editor's own MCP
/// servers are added as tools (each asked before it runs). WORKER is resolved in the editor's
/// project directory, else in the current directory.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    #[arg(value_name = "WORKER")]
    pub worker: String,

    /// Model as provider:model, e.g. anthropic:claude-haiku-4-5 or test:default
    ///
    /// Overrides the worker's `model`, which overrides GOLEM_FORGE_MODEL, which overrides the
    /// program config's `model`.
    #[arg(short, long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,

    /// How calls that need consent are decided at first [default: the config's
    /// approval.mode, else interactive: the editor asks]; the editor switches it per session
    #[arg(short, long, value_enum)]
    pub approval: Option<ApprovalArg>,

    /// Most model requests per turn (default: the worker's max_iterations)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: Option<u32>,
}

/// Runs `golem-forge acp`.
pub fn cmd_acp(args: AcpArgs) -> Result<ExitCode, CommandError> {
    let settings = AcpSettings {
        worker: args.worker,
        model: args.model,
        env_model: crate::session::env_model(),
        approval: args.approval.map(ApprovalMode::from),
        max_iterations: args.max_iterations,
        jail_helper: std::env::current_exe().ok(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    eprintln!("golem-forge acp: serving {} over stdio", settings.worker);
    let served = runtime.block_on(golem_acp::serve_stdio(settings));
    // A read of stdin in progress cannot be cancelled; do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
        .map(|()| ExitCode::SUCCESS)
        .map_err(|e| CommandError::usage(format!("the ACP connection failed: {e}")))
}
