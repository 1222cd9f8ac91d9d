//! `golem-forge serve`: one session served to browser tabs. [`WebServer::bind`] listens on the
//! chosen address (127.0.0.1 unless told otherwise), makes a fresh token, attaches to the
//! session host as the front end that answers approvals (through whichever tab answers first)
//! and starts the session; [`WebServer::run`] serves the page, its files and the WebSocket
//! until the session ends or the caller's shutdown signal comes (which ends the session), on
//! [`crate::listen`]'s accept loop (a header-read timeout, a cap on waiting connections).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use golem_protocol::{ActionEvent, DisplayEvent, SessionEndReason};
use golem_runtime::host::{ActionSender, Presence, RunningSession, SessionHost};
use rand::RngExt;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::assets;
use crate::encoding::Encoding;
use crate::log::SessionLog;
use crate::socket::{Tabs, upgrade};
use golem_http::guard::{Access, guard};
use golem_http::listen::{self, Limits};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
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

/// A server bound to its address, with its session started.
pub struct WebServer {
    listener: TcpListener,
    access: Arc<Access>,
    tabs: Arc<Tabs>,
    running: RunningSession,
    ended: watch::Receiver<bool>,
    actions: ActionSender,
    _presence: Presence,
}

/// A fresh token of 128 random bits, as hex.
pub(crate) fn new_token() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl WebServer {
    /// Listens on `addr` and starts `host`'s session, recording its events for the tabs.
    pub async fn bind(host: SessionHost, addr: SocketAddr) -> Result<WebServer, ServeError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        let access = Arc::new(Access::new(new_token(), local));
        let (mut events, actions, presence) = host.attach_interactive().into_parts();
        let log = Arc::new(SessionLog::default());
        let (ended_tx, ended) = watch::channel(false);
        let recorder = log.clone();
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let last = matches!(event, DisplayEvent::SessionEnded { .. });
                recorder.push(event);
                if last {
                    break;
                }
            }
            let _ = ended_tx.send(true);
        });
        let running = host.start();
        Ok(WebServer {
            listener,
            access,
            tabs: Arc::new(Tabs {
                log,
                actions: actions.clone(),
            }),
            running,
            ended,
            actions,
            _presence: presence,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// The address to open, with the token.
    pub fn url(&self) -> String {
        self.access.url()
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.access.port()
    }

    /// The run's token.
    pub fn token(&self) -> &str {
        self.access.token()
    }

    /// A sender of actions to the session (a second Ctrl+C ends it at once).
    pub fn actions(&self) -> ActionSender {
        self.actions.clone()
    }

    /// The session so far, as the tabs get it.
    pub fn log(&self) -> Arc<SessionLog> {
        self.tabs.log.clone()
    }

    /// Serves until the session ends, or until `shutdown` resolves (which ends the session
    /// first, so every tab sees `sessionEnded`).
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let WebServer {
            listener,
            access,
            tabs,
            running,
            ended,
            actions,
            _presence,
        } = self;
        let router = Router::new()
            .route("/", get(index))
            .route("/assets/{*path}", get(asset))
            .route("/ws", get(upgrade).with_state(tabs))
            .layer(axum::middleware::from_fn_with_state(access, guard));
        let watcher = ended.clone();
        let stop = async move {
            tokio::select! {
                () = shutdown => {
                    actions.send(ActionEvent::EndSession { reason: Some(SessionEndReason::Completed) });
                    session_over(ended).await;
                }
                () = session_over(watcher) => {}
            }
        };
        listen::serve(listener, router, Limits::default(), stop).await;
        running.closed().await;
        Ok(())
    }
}

/// Returns once the session has ended (or its recorder is gone, which means the same).
async fn session_over(mut ended: watch::Receiver<bool>) {
    let _ = ended.wait_for(|ended| *ended).await.map(|_| ());
}

async fn index(headers: HeaderMap) -> Response {
    asset_response("index.html", &headers)
}

async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    asset_response(&path, &headers)
}

/// The embedded file at `path` in the form the request's `Accept-Encoding` takes best (its
/// `Content-Encoding` said, `Vary: Accept-Encoding` on every form), or `404`. `HEAD` gets the
/// same headers without the body (axum's `get` answers it).
pub(crate) fn asset_response(path: &str, headers: &HeaderMap) -> Response {
    let Some(asset) = assets::file(path) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let (encoding, body) = asset.for_request(accept_encoding(headers).as_deref());
    let mut response = (
        [
            (header::CONTENT_TYPE, asset.content_type()),
            (header::VARY, "accept-encoding"),
        ],
        body,
    )
        .into_response();
    match encoding {
        Encoding::Identity => {}
        Encoding::Gzip | Encoding::Brotli => {
            response.headers_mut().insert(
                header::CONTENT_ENCODING,
                HeaderValue::from_static(encoding.token()),
            );
        }
    }
    response
}

/// Every `Accept-Encoding` of a request, joined with `,` (`None` when it sent none; a value
/// that is not text counts as empty).
fn accept_encoding(headers: &HeaderMap) -> Option<String> {
    let values: Vec<&str> = headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .map(|value| value.to_str().unwrap_or(""))
        .collect();
    (!values.is_empty()).then(|| values.join(","))
}
