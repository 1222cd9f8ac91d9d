//! `golem-forge mcp-refresh WORKER` (and `check --refresh`): start every MCP server of a
//! worker, list its tools and write the tool-list cache under the program root, printing per
//! server its tool count and version, or the error naming it. Sessions read that cache, so
//! they start no server until one of its tools is called. Header and environment values are
//! never printed (they hold secrets).

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use golem_runtime::config::ProgramConfig;
use golem_runtime::registry::resolve_worker_arg;
use golem_runtime::worker::{WorkerDefinition, load_worker};

use crate::cli_error::CommandError;
use crate::frontend::clean::clean_text;

/// Start a worker's MCP servers, list their tools and update the tool-list cache
///
/// Sessions take each MCP server's tool list from the cache in
/// `<program root>/.golem-forge/mcp-tools/`, so they start no server until one of its tools is
/// called. Run this after installing or upgrading a server.
#[derive(Debug, Args)]
pub struct McpRefreshArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,
}

/// Prints `text` and a newline, its controls drawn visibly.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", clean_text(text));
}

fn usage(err: impl std::fmt::Display) -> CommandError {
    CommandError::usage(err.to_string())
}

/// Runs `golem-forge mcp-refresh`: exit 1 when a server failed.
pub fn cmd_mcp_refresh(args: McpRefreshArgs) -> Result<ExitCode, CommandError> {
    let cwd = std::env::current_dir().map_err(usage)?;
    let path = resolve_worker_arg(&args.worker, &cwd).map_err(usage)?;
    let mut worker = load_worker(&path).map_err(usage)?;
    let config = ProgramConfig::discover(worker.dir()).map_err(usage)?;
    config.apply_default_zones(&mut worker);
    if worker.toolsets.mcp.is_none() {
        say(&format!(
            "Worker {} has no MCP servers (toolsets.mcp): nothing to refresh",
            worker.name
        ));
        return Ok(ExitCode::SUCCESS);
    }
    if refresh_and_print(&worker, &config.root)? {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::from(1))
    }
}

/// Refreshes the tool lists of `worker`'s MCP servers (of the program at `root`; jailed
/// servers over the worker's zones, its default zones already applied) and prints one line
/// per server; whether every server answered.
pub(super) fn refresh_and_print(
    worker: &WorkerDefinition,
    root: &Path,
) -> Result<bool, CommandError> {
    let Some(mcp) = &worker.toolsets.mcp else {
        return Ok(true);
    };
    let sandbox = golem_sandbox::Sandbox::open(worker.dir(), &worker.zones).map_err(usage)?;
    let helper = std::env::current_exe().ok();
    let cx = golem_runtime::launch::outside_session(worker, &sandbox, root, helper.as_deref());
    let options = golem_runtime::toolsets::mcp_options(mcp, &cx).map_err(usage)?;
    say(&format!(
        "Refreshing the MCP tool lists of worker {} (cache: {})",
        worker.name,
        golem_runtime::toolsets::mcp_cache_dir(root).display()
    ));
    if options.config.servers.is_empty() {
        say("  no servers");
        return Ok(true);
    }
    let outcomes = golem_mcp_client::refresh(&options).map_err(usage)?;
    let mut all_ok = true;
    for outcome in outcomes {
        match outcome.outcome {
            Ok(refreshed) => {
                let listing = &refreshed.listing;
                let version = if listing.version.is_empty() {
                    "no version".to_owned()
                } else {
                    format!("version {}", listing.version)
                };
                let reported = if listing.server_name.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", listing.server_name)
                };
                let cached = match &refreshed.cache {
                    Ok(_) if refreshed.changed => "cached (changed)".to_owned(),
                    Ok(_) => "cached (unchanged)".to_owned(),
                    Err(why) => {
                        all_ok = false;
                        format!("not cached: {why}")
                    }
                };
                say(&format!(
                    "  {}: {} tools, {version}{reported}, {cached}",
                    outcome.server,
                    listing.tools.len()
                ));
            }
            Err(error) => {
                all_ok = false;
                say(&format!("  {}: error: {error}", outcome.server));
            }
        }
    }
    Ok(all_ok)
}
