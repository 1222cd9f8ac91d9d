//! Golem Forge workers served as MCP tools (`golem-forge mcp`), a front end beside
//! `golem-web`: every call of a tool is a fresh session of its worker on the session host, and
//! this crate is that session's protocol client — it sends the input, reads display events
//! and answers with action events, like `run` does.
//!
//! - [`catalog`]: the workers, loaded at start (file, line and key on an error), and their tools
//!   (`{input, instructions?}`, an output schema, annotations from zones and toolsets).
//! - [`server`]: the `rmcp` handler — list, call, approvals by elicitation (a request, or an
//!   input-required result for 2026-07-28 clients), the approval mode for other clients.
//! - `call`: one call's session, its progress notifications and its cancellation.
//! - `outcome`: the result — the answer as text, tool calls, files changed and usage as
//!   structured content.
//! - `elicit`: approval requests as elicitation forms, and the answers back.
//! - `question`: what a call asks the client's user — approvals, and the form questions its
//!   tools ask (`inputRequired`, for clients that can elicit) — as elicitation requests.
//! - [`http`] and [`guard`]: streamable HTTP on one address, with a bearer token and `Host`
//!   and `Origin` checks; [`serve_stdio`] for stdio.

pub mod catalog;
pub mod guard;
pub mod http;
pub mod server;

mod call;
mod elicit;
mod outcome;
mod question;

use std::future::Future;
use std::time::Duration;

use rmcp::ServiceExt;

pub use call::CallReport;
pub use catalog::{Catalog, CatalogError};
pub use http::{HttpError, HttpServer};
pub use server::{CallObserver, CallSettings, McpServer};

/// Why serving over stdio stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The client never completed the MCP handshake.
    #[error("the MCP client did not start a session: {0}")]
    Handshake(String),
}

/// Serves `server` on stdin and stdout until the client closes them, then waits (at most
/// `wind_down`) for the calls in progress, which the ending interrupts. `shutdown` resolving
/// (the client's SIGTERM) ends their sessions at once.
pub async fn serve_stdio(
    server: McpServer,
    shutdown: impl Future<Output = ()>,
    wind_down: Duration,
) -> Result<(), StdioError> {
    tokio::pin!(shutdown);
    let handshake = server.clone().serve(rmcp::transport::stdio_pipes());
    let running = tokio::select! {
        running = handshake => running.map_err(|e| StdioError::Handshake(e.to_string()))?,
        () = &mut shutdown => return Ok(()),
    };
    let stop = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    let (ended, stopped) = tokio::select! {
        ended = &mut waiting => (ended, false),
        () = &mut shutdown => {
            // The client gave its grace period already (it closes stdin first): the calls in
            // progress end at once.
            server.hurry();
            stop.cancel();
            (waiting.await, true)
        }
    };
    if let Err(e) = ended {
        tracing::error!(error = %e, "the MCP service stopped unexpectedly");
    }
    if stopped {
        server.wind_down(wind_down).await;
    } else {
        let calls = server.wind_down(wind_down);
        tokio::pin!(calls);
        tokio::select! {
            () = &mut calls => {}
            () = &mut shutdown => {
                server.hurry();
                calls.await;
            }
        }
    }
    Ok(())
}
