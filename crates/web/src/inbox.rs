//! `golem-forge serve --inbox`: the project's approval inbox served to a browser page
//! (`assets/inbox.html`). [`InboxServer::bind`] listens on the chosen address with a fresh token
//! and the same guard and accept loop as the session page; [`InboxServer::run`] serves the page
//! and a small JSON API until the caller's shutdown signal comes:
//!
//! - `GET /api/inbox`: `{"entries": [...]}`, every [`InboxEntry`] oldest first, each with
//!   `state` (`waiting`: no answer yet; `continuing`: answered here, its session is being
//!   continued; `answered`: answered elsewhere, it waits for its session to continue) and,
//!   when continuing failed, `problem`; and `answered`: the answers given on this page since
//!   the server started, newest first (at most [`MAX_ANSWERED`]), each with how its session
//!   went on ([`Outcome`]: `continuing`, then what its transcript says: `completed`, `failed`,
//!   `interrupted`, `budgetExceeded`, `unfinished`, or `waiting` again with the entries it
//!   parked).
//! - `POST /api/inbox/{n}/answer` with `{"approved": bool, "remember"?: "none"|"session"|
//!   "project", "note"?: string}` (`Content-Type: application/json`): stores the answer and
//!   hands the entry to the [`Continuer`], which continues its session in the background. `404`
//!   for a number that is not in the inbox, `409` for an entry answered before, `400` for a
//!   body that is not such an answer; errors are `{"error": "…"}`.
//!
//! Continuing a session is the caller's (the CLI's), so that this crate needs nothing of batches.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::SocketAddr;
use std::path::Path as FsPath;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use golem_http::guard::{Access, guard};
use golem_http::listen::{self, Limits};
use golem_protocol::{InboxEntry, RememberScope};
use golem_runtime::inbox::{InboxError, InboxStore};
use golem_session::{SessionStatus, SessionStore};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::net::TcpListener;

use crate::server::{ServeError, asset_response, new_token};

/// What continuing an answered entry's session returns: `Err` says why it could not go on.
pub type Continuation = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Continues the session of an answered entry (a batch item through its batch), headless and
/// in the approval mode the caller chose; called once per answer given on the page.
pub type Continuer = Arc<dyn Fn(InboxEntry) -> Continuation + Send + Sync>;

/// The largest answer body accepted (a note for the model, not a file).
const MAX_BODY: usize = 64 * 1024;

/// How many answers given on the page `GET /api/inbox` recalls, with their outcomes.
pub const MAX_ANSWERED: usize = 20;

/// A server of one project's inbox, bound to its address.
pub struct InboxServer {
    listener: TcpListener,
    access: Arc<Access>,
    state: Arc<InboxState>,
}

/// What the handlers share.
struct InboxState {
    store: InboxStore,
    sessions: SessionStore,
    continuer: Continuer,
    progress: Mutex<Progress>,
}

/// The answers given on this page whose sessions go on, why some could not, and how the
/// latest went on.
#[derive(Default)]
struct Progress {
    continuing: HashSet<u64>,
    problems: HashMap<u64, String>,
    /// Newest first, at most [`MAX_ANSWERED`].
    answered: Vec<Answered>,
}

/// An answer given on this page and what became of its session, as `answered` lists it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Answered {
    /// The entry answered.
    id: u64,
    tool_name: String,
    worker: String,
    session: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    batch: Option<golem_protocol::BatchItemRef>,
    approved: bool,
    #[serde(flatten)]
    outcome: Outcome,
}

/// How the session of an answered entry went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "outcome",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
enum Outcome {
    /// It is being continued now.
    Continuing,
    /// Its turn (or batch item) completed.
    Completed,
    /// It parked another call: the entries now waiting for it.
    Waiting { waiting: Vec<u64> },
    /// It failed, or could not continue (`problem` says why when known).
    Failed {
        #[serde(skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
    },
    /// An interrupt ended it.
    Interrupted,
    /// Its budget ran out.
    BudgetExceeded,
    /// It went on, but its transcript records no end (or could not be read: `problem`).
    Unfinished {
        #[serde(skip_serializing_if = "Option::is_none")]
        problem: Option<String>,
    },
}

impl Progress {
    /// Records (or updates) how the session of entry `id` goes on.
    fn settle(&mut self, id: u64, outcome: Outcome) {
        if let Some(found) = self.answered.iter_mut().find(|a| a.id == id) {
            found.outcome = outcome;
        }
    }

    /// Recalls an answer just given, newest first.
    fn remember(&mut self, entry: &InboxEntry, approved: bool) {
        self.answered.retain(|a| a.id != entry.id);
        self.answered.insert(
            0,
            Answered {
                id: entry.id,
                tool_name: entry.request.tool_name.clone(),
                worker: entry.worker.clone(),
                session: entry.session.clone(),
                batch: entry.batch.clone(),
                approved,
                outcome: Outcome::Continuing,
            },
        );
        self.answered.truncate(MAX_ANSWERED);
    }
}

impl InboxState {
    /// How the session of `entry` went on once its continuation returned `Ok`: what its
    /// transcript says, and when it parked again, the entries now waiting for it.
    fn outcome_after(&self, entry: &InboxEntry) -> Outcome {
        let status = match self.sessions.load(&entry.session) {
            Ok(transcript) => transcript.status(),
            Err(e) => {
                return Outcome::Unfinished {
                    problem: Some(format!("its transcript cannot be read: {e}")),
                };
            }
        };
        match status {
            SessionStatus::Completed => Outcome::Completed,
            SessionStatus::Failed => Outcome::Failed { problem: None },
            SessionStatus::Interrupted => Outcome::Interrupted,
            SessionStatus::BudgetExceeded => Outcome::BudgetExceeded,
            SessionStatus::Unfinished => Outcome::Unfinished { problem: None },
            SessionStatus::WaitingApproval => Outcome::Waiting {
                waiting: self
                    .store
                    .list()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|other| other.session == entry.session && other.answer.is_none())
                    .map(|other| other.id)
                    .collect(),
            },
        }
    }
}

impl InboxState {
    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An answer as the page posts it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerBody {
    approved: bool,
    #[serde(default)]
    remember: RememberScope,
    #[serde(default)]
    note: Option<String>,
}

impl InboxServer {
    /// Listens on `addr` for the inbox of the program at `program_root`; answered entries go
    /// to `continuer`.
    pub async fn bind(
        program_root: &FsPath,
        addr: SocketAddr,
        continuer: Continuer,
    ) -> Result<InboxServer, ServeError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        Ok(InboxServer {
            listener,
            access: Arc::new(Access::new(new_token(), local)),
            state: Arc::new(InboxState {
                store: InboxStore::new(program_root),
                sessions: SessionStore::new(program_root),
                continuer,
                progress: Mutex::default(),
            }),
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

    /// Serves until `shutdown` resolves. Continuations still running are left to the caller's
    /// runtime (they end with the process).
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let InboxServer {
            listener,
            access,
            state,
        } = self;
        let router = Router::new()
            .route(
                "/",
                get(|headers: HeaderMap| async move { asset_response("inbox.html", &headers) }),
            )
            .route(
                "/assets/{*path}",
                get(|Path(path): Path<String>, headers: HeaderMap| async move {
                    asset_response(&path, &headers)
                }),
            )
            .route("/api/inbox", get(list))
            .route("/api/inbox/{n}/answer", post(answer))
            .with_state(state)
            .layer(axum::middleware::from_fn_with_state(access, guard));
        listen::serve(listener, router, Limits::default(), shutdown).await;
        Ok(())
    }
}

/// A JSON response.
fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json_response(status, &json!({ "error": message.into() }))
}

fn inbox_error(e: InboxError) -> Response {
    let status = match &e {
        InboxError::NotFound(_) => StatusCode::NOT_FOUND,
        InboxError::AlreadyAnswered { .. } => StatusCode::CONFLICT,
        InboxError::Io { .. } | InboxError::Corrupt { .. } => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e.to_string())
}

/// `GET /api/inbox`.
async fn list(State(state): State<Arc<InboxState>>) -> Response {
    let entries = match state.store.list() {
        Ok(entries) => entries,
        Err(e) => return inbox_error(e),
    };
    let progress = state.progress();
    let shown: Vec<Value> = entries
        .iter()
        .map(|entry| {
            let mut value = serde_json::to_value(entry).unwrap_or(Value::Null);
            let label = if entry.answer.is_none() {
                "waiting"
            } else if progress.continuing.contains(&entry.id) {
                "continuing"
            } else {
                "answered"
            };
            if let Some(fields) = value.as_object_mut() {
                fields.insert("state".into(), label.into());
                if let Some(problem) = progress.problems.get(&entry.id) {
                    fields.insert("problem".into(), problem.clone().into());
                }
            }
            value
        })
        .collect();
    let answered = serde_json::to_value(&progress.answered).unwrap_or(Value::Null);
    json_response(
        StatusCode::OK,
        &json!({ "entries": shown, "answered": answered }),
    )
}

/// `POST /api/inbox/{n}/answer`.
async fn answer(
    State(state): State<Arc<InboxState>>,
    Path(n): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(id) = n.parse::<u64>() else {
        return error(
            StatusCode::NOT_FOUND,
            format!("no approval {n} waits in the inbox: entries are numbered 1, 2, …"),
        );
    };
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "send the answer as JSON (Content-Type: application/json)",
        );
    }
    if body.len() > MAX_BODY {
        return error(StatusCode::PAYLOAD_TOO_LARGE, "the answer is too long");
    }
    let answer: AnswerBody = match serde_json::from_slice(&body) {
        Ok(answer) => answer,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "the answer must be {{\"approved\": true|false, \"remember\"?: \
                     \"none\"|\"session\"|\"project\", \"note\"?: \"…\"}}: {e}"
                ),
            );
        }
    };
    let note = answer
        .note
        .map(|note| note.trim().to_owned())
        .filter(|note| !note.is_empty());
    let store = state.store.clone();
    let stored = tokio::task::spawn_blocking(move || {
        store.answer(id, answer.approved, answer.remember, note)
    })
    .await;
    let entry = match stored {
        Ok(Ok(entry)) => entry,
        Ok(Err(e)) => return inbox_error(e),
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the answer was not stored: {e}"),
            );
        }
    };
    {
        let mut progress = state.progress();
        progress.continuing.insert(id);
        progress.problems.remove(&id);
        progress.remember(&entry, answer.approved);
    }
    let continuation = (state.continuer)(entry.clone());
    let watcher = state.clone();
    let answered = entry.clone();
    tokio::spawn(async move {
        let outcome = continuation.await;
        let problem = match outcome {
            Err(problem) => Some(problem),
            // Went on, yet the call still waits with its answer: the session did not take it.
            Ok(()) => match watcher.store.get(id) {
                Ok(entry) if entry.answer.is_some() => Some(
                    "the session went on but did not take this answer; continue it from the \
                     command line"
                        .to_owned(),
                ),
                Ok(_) | Err(_) => None,
            },
        };
        let went_on = match &problem {
            Some(problem) => Outcome::Failed {
                problem: Some(problem.clone()),
            },
            None => {
                let watcher = watcher.clone();
                tokio::task::spawn_blocking(move || watcher.outcome_after(&answered))
                    .await
                    .unwrap_or_else(|e| Outcome::Unfinished {
                        problem: Some(format!("how it went on could not be read: {e}")),
                    })
            }
        };
        let mut progress = watcher.progress();
        progress.continuing.remove(&id);
        progress.settle(id, went_on);
        if let Some(problem) = problem {
            tracing::warn!(entry = id, %problem, "an answered session did not continue");
            progress.problems.insert(id, problem);
        }
    });
    let body = serde_json::to_value(&entry).unwrap_or(Value::Null);
    json_response(StatusCode::OK, &body)
}
