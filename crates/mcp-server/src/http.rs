//! The streamable HTTP transport: `rmcp`'s service at `/mcp` behind [`crate::guard`], an axum
//! router on one address (127.0.0.1 unless told otherwise) served by `golem_http::listen`'s
//! accept loop (a header-read timeout, a cap on connections waiting for their first request
//! head). Sessions of protocol 2025-11-25 and before are kept by `rmcp` (so the server's
//! elicitation requests reach the client on the call's stream); 2026-07-28 requests are served
//! statelessly.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use golem_http::listen::{self, Limits};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::guard::{Access, ENDPOINT, endpoint_url, guard};
use crate::server::{McpServer, new_handle};

/// Why the HTTP server could not run.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Serving failed.
    #[error("the server stopped: {0}")]
    Io(#[from] std::io::Error),
}

/// A server bound to its address.
pub struct HttpServer {
    listener: TcpListener,
    access: Arc<Access>,
    server: McpServer,
}

impl HttpServer {
    /// Listens on `addr` for `server`'s clients, who must send `token` (a fresh one of 128
    /// random bits when `None`).
    pub async fn bind(
        server: McpServer,
        addr: SocketAddr,
        token: Option<String>,
    ) -> Result<HttpServer, HttpError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| HttpError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        let token = token.unwrap_or_else(new_handle);
        Ok(HttpServer {
            listener,
            access: Arc::new(Access::bearer(token, local)),
            server,
        })
    }

    /// The endpoint's address, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> String {
        endpoint_url(&self.access)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.access.port()
    }

    /// The token every request must carry.
    pub fn token(&self) -> &str {
        self.access.token()
    }

    /// Serves until `shutdown` resolves; then closes the clients' streams and waits (at most
    /// `wind_down`) for the calls in progress, which the closing interrupts.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
        wind_down: Duration,
    ) -> Result<(), HttpError> {
        let HttpServer {
            listener,
            access,
            server,
        } = self;
        let stop = CancellationToken::new();
        // Our guard checks Host and Origin against the bound address; rmcp's own lists would
        // refuse the addresses of a server bound to every interface.
        let config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_cancellation_token(stop.child_token());
        let handler = server.clone();
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = Router::new()
            .route_service(ENDPOINT, service)
            .layer(axum::middleware::from_fn_with_state(access, guard));
        let stopping = stop.clone();
        listen::serve(listener, router, Limits::default(), async move {
            shutdown.await;
            stopping.cancel();
        })
        .await;
        server.wind_down(wind_down).await;
        Ok(())
    }
}
