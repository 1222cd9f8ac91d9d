//! `golem-forge mcp`: workers served as MCP tools by `golem-mcp-server`, over stdio (stdout is the
//! protocol; everything else goes to stderr) or streamable HTTP (`--http`: the first line on
//! stdout is the endpoint and its token, the rest goes to stderr).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, ValueEnum};
use golem_core::approval::ApprovalMode;
use golem_mcp_server::{CallReport, CallSettings, Catalog, HttpServer, McpServer};
use golem_runtime::registry::resolve_worker_arg;

use crate::cli_error::CommandError;

/// How long calls in progress get to wind down once the server stops.
const WIND_DOWN: Duration = Duration::from_secs(20);

/// The environment variable that fixes the HTTP token (for a client configured once).
const TOKEN_ENV: &str = "GOLEM_FORGE_MCP_TOKEN";

/// Serve workers as tools to MCP clients (desktop assistants, IDEs, other agents)
///
/// Each WORKER becomes one tool named after it, taking {input, instructions?}; a call runs the
/// worker as a fresh session (its transcript under .golem-forge/sessions/) and returns its
/// answer, with the tool calls it made, the files it changed and the tokens it used. Its
/// approvals are asked through the client (MCP elicitation) when the client can ask its user.
///
/// Over stdio (the default) stdout is the protocol. With --http, the first line on stdout is
/// the endpoint's address and the token every request must send as `Authorization: Bearer
/// TOKEN` (set GOLEM_FORGE_MCP_TOKEN to choose it); Ctrl+C stops the server.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// .worker files, directories with main.worker, or worker names
    #[arg(required = true, value_name = "WORKER")]
    pub workers: Vec<String>,

    /// Serve streamable HTTP at ADDR (a port, or host:port; the host is 127.0.0.1 unless
    /// given) instead of stdio
    #[arg(long, value_name = "ADDR", value_parser = parse_addr)]
    pub http: Option<SocketAddr>,

    /// How calls that need consent are decided [default: the config's approval.mode, else
    /// interactive]
    #[arg(short, long, value_enum)]
    pub approval: Option<McpApproval>,

    /// Model as provider:model, e.g. anthropic:claude-haiku-4-5 or test:default
    ///
    /// Overrides the worker's `model`, which overrides GOLEM_FORGE_MODEL, which overrides the
    /// program config's `model`.
    #[arg(short, long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,

    /// Most model requests per call (default: the worker's max_iterations)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: Option<u32>,
}

/// How calls that need consent are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum McpApproval {
    /// Ask the client's user (MCP elicitation); denied for clients that cannot ask
    Interactive,
    /// Approve every call that would ask
    ApproveAll,
    /// Deny every call that would ask
    AutoDeny,
    /// Park a call that would ask in the approval inbox; the call's result says so (answer
    /// with `golem-forge inbox approve N --resume`)
    Defer,
}

impl From<McpApproval> for ApprovalMode {
    fn from(arg: McpApproval) -> Self {
        match arg {
            McpApproval::Interactive => ApprovalMode::Interactive,
            McpApproval::ApproveAll => ApprovalMode::ApproveAll,
            McpApproval::AutoDeny => ApprovalMode::AutoDeny,
            McpApproval::Defer => ApprovalMode::Defer,
        }
    }
}

/// `--http`: `PORT` (on 127.0.0.1) or `HOST:PORT`.
fn parse_addr(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    if let Some(port) = text.strip_prefix("localhost:")
        && let Ok(port) = port.parse::<u16>()
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port));
    }
    text.parse::<SocketAddr>().map_err(|_| {
        format!("`{text}` is not an address: give a port (4778) or host:port (127.0.0.1:4778)")
    })
}

/// Runs `golem-forge mcp`.
pub fn cmd_mcp(args: McpArgs) -> Result<ExitCode, CommandError> {
    let server = build_server(&args)?;
    let token = http_token()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    let served = runtime.block_on(async move {
        match args.http {
            Some(addr) => serve_http(server, addr, token).await,
            None => serve_stdio(server).await,
        }
    });
    // A read of stdin in progress cannot be cancelled; do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served.map(|()| ExitCode::SUCCESS)
}

/// Loads the workers (a broken one is reported with its file, line and key: exit 2).
fn build_server(args: &McpArgs) -> Result<McpServer, CommandError> {
    let cwd = std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))?;
    let paths = args
        .workers
        .iter()
        .map(|arg| resolve_worker_arg(arg, &cwd).map_err(|e| CommandError::usage(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let catalog = Catalog::load(&paths).map_err(|e| CommandError::usage(e.to_string()))?;
    let settings = CallSettings {
        model: args.model.clone(),
        env_model: crate::session::env_model(),
        approval: args.approval.map(ApprovalMode::from),
        max_iterations: args.max_iterations,
        jail_helper: std::env::current_exe().ok(),
        budget: Default::default(),
    };
    Ok(McpServer::new(catalog, settings, Some(Arc::new(log_call))))
}

/// `GOLEM_FORGE_MCP_TOKEN`, when set: at least 16 characters that may stand in a header.
fn http_token() -> Result<Option<String>, CommandError> {
    let Some(token) = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty()) else {
        return Ok(None);
    };
    let fits = token
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~'));
    if token.len() < 16 || !fits {
        return Err(CommandError::usage(format!(
            "{TOKEN_ENV} must be at least 16 letters, digits, `-`, `.`, `_` or `~`"
        ))
        .with_hint(format!(
            "Unset {TOKEN_ENV} to get a fresh random token each run"
        )));
    }
    Ok(Some(token))
}

/// One line on stderr per call that ends.
fn log_call(report: &CallReport) {
    let calls = match report.tool_calls {
        1 => "1 tool call".to_owned(),
        n => format!("{n} tool calls"),
    };
    let first = report
        .first_progress
        .map(|at| format!(", first progress after {} ms", at.as_millis()))
        .unwrap_or_default();
    eprintln!(
        "golem-forge mcp: {} {} in {:.1} s, {calls}{first} (session {})",
        report.worker,
        report.status,
        report.duration.as_secs_f64(),
        report.session_id
    );
}

fn names(server: &McpServer) -> String {
    server
        .catalog()
        .entries()
        .iter()
        .map(|e| e.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

async fn serve_stdio(server: McpServer) -> Result<(), CommandError> {
    eprintln!("golem-forge mcp: serving {} over stdio", names(&server));
    let stop = stop_then_hurry(server.clone());
    golem_mcp_server::serve_stdio(server, stop, WIND_DOWN)
        .await
        .map_err(|e| CommandError::usage(e.to_string()))
}

async fn serve_http(
    server: McpServer,
    addr: SocketAddr,
    token: Option<String>,
) -> Result<(), CommandError> {
    let workers = names(&server);
    let stop = stop_then_hurry(server.clone());
    let http = HttpServer::bind(server, addr, token).await.map_err(|e| {
        CommandError::usage(e.to_string())
            .with_hint("Choose another port with --http PORT, or any free one with --http 0")
    })?;
    let url = http.url();
    println!("{url} {}", http.token());
    eprintln!(
        "golem-forge mcp: serving {workers} at {url}; clients must send `Authorization: Bearer \
         {}` (Ctrl+C to stop)",
        http.token()
    );
    if !addr.ip().is_loopback() {
        eprintln!(
            "warning: listening on {} — other machines on the network can reach the server; \
             anyone with the token can run these workers",
            addr.ip()
        );
    }
    http.run(stop, WIND_DOWN)
        .await
        .map_err(|e| CommandError::usage(e.to_string()))
}

/// Returns on the first Ctrl+C or SIGTERM, which stops the server and lets the calls in
/// progress wind down; a second one ends their sessions at once.
async fn stop_then_hurry(server: McpServer) {
    stop_requested().await;
    tokio::spawn(async move {
        stop_requested().await;
        server.hurry();
    });
}

/// Returns on the first Ctrl+C or SIGTERM.
async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_addresses_are_a_port_or_host_and_port() {
        assert_eq!(parse_addr("4778"), Ok("127.0.0.1:4778".parse().unwrap()));
        assert_eq!(
            parse_addr("localhost:0"),
            Ok("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(
            parse_addr("0.0.0.0:8080"),
            Ok("0.0.0.0:8080".parse().unwrap())
        );
        assert_eq!(parse_addr("[::1]:9000"), Ok("[::1]:9000".parse().unwrap()));
        assert!(parse_addr("example.com:80").is_err());
        assert!(parse_addr("").is_err());
    }
}
