//! The subcommands: one file each (but `chat`, whose arguments are the chat's own, in
//! `crate::chat`), one enum, one `match`. Each `…Args` struct's doc comment is its help text.

mod acp;
mod approvals;
mod batch;
mod batch_worker;
mod check;
pub mod common;
mod inbox;
mod init;
mod mcp;
mod mcp_refresh;
mod parked;
mod queue;
mod run;
mod schema;
mod serve;
mod sessions;
mod test;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli_error::CommandError;

/// Writes `text` to stdout and flushes it; a closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        done => done,
    }
}

/// Run LLM workers with tools, approvals and sandboxes
///
/// A worker is a `.worker` file: YAML front matter (model, zones, toolsets) and markdown
/// instructions. Every tool call passes an approval gate, and files outside the worker's zones
/// are unreachable.
#[derive(Debug, Parser)]
#[command(
    name = "golem-forge",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Run(run::RunArgs),
    Batch(batch::BatchArgs),
    BatchWorker(batch_worker::BatchWorkerArgs),
    Chat(crate::chat::ChatArgs),
    Serve(serve::ServeArgs),
    Mcp(mcp::McpArgs),
    Acp(acp::AcpArgs),
    McpRefresh(mcp_refresh::McpRefreshArgs),
    Init(init::InitArgs),
    Check(check::CheckArgs),
    Sessions(sessions::SessionsArgs),
    Approvals(approvals::ApprovalsArgs),
    Inbox(inbox::InboxArgs),
    Schema(schema::SchemaArgs),
    Test(test::TestArgs),
}

/// Runs the chosen subcommand.
pub fn run(cli: Cli) -> Result<ExitCode, CommandError> {
    tracing::debug!(?cli, "starting");
    match cli.command {
        Command::Run(args) => run::cmd_run(args),
        Command::Batch(args) => batch::cmd_batch(args),
        Command::BatchWorker(args) => batch_worker::cmd_batch_worker(args),
        Command::Chat(args) => crate::chat::cmd_chat(args),
        Command::Serve(args) => serve::cmd_serve(args),
        Command::Mcp(args) => mcp::cmd_mcp(args),
        Command::Acp(args) => acp::cmd_acp(args),
        Command::McpRefresh(args) => mcp_refresh::cmd_mcp_refresh(args),
        Command::Init(args) => init::cmd_init(args),
        Command::Check(args) => check::cmd_check(args),
        Command::Sessions(args) => sessions::cmd_sessions(args),
        Command::Approvals(args) => approvals::cmd_approvals(args),
        Command::Inbox(args) => inbox::cmd_inbox(args),
        Command::Schema(args) => schema::cmd_schema(args),
        Command::Test(args) => test::cmd_test(args),
    }
}
