//! The ACP connection: `initialize`, then sessions — `session/new`, `session/load`,
//! `session/prompt`, `session/set_mode` and the `session/cancel` notification — each answered
//! from the session host. A request out of order (a session before `initialize`, a prompt for
//! a session that does not exist, a second prompt while one runs) is a JSON-RPC error; so are
//! malformed messages and unknown methods (answered by the SDK). Long work (opening a session,
//! a turn) runs off the dispatch loop, so that a `session/cancel` gets through at once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommandsUpdate, CancelNotification, CurrentModeUpdate,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SessionId, SessionMode, SessionModeState, SessionNotification,
    SessionUpdate, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Agent, Client, Error, ErrorCode, Responder, Stdio, V1};
use golem_core::approval::ApprovalMode;
use golem_mcp_client::McpServerConfig;
use golem_runtime::config::program_root;
use golem_runtime::host::{HostOptions, HostWorker};
use golem_runtime::registry::resolve_worker_arg;

use crate::AcpSettings;
use crate::prompt::{available_commands, read_prompt};
use crate::session::{AcpSession, Opened, PromptFailure};

/// The modes a session advertises: the approval modes an editor user switches among.
const MODES: [(ApprovalMode, &str, &str); 3] = [
    (
        ApprovalMode::Interactive,
        "Ask",
        "Ask before every call that needs consent",
    ),
    (
        ApprovalMode::ApproveAll,
        "Approve all",
        "Run every call that needs consent without asking (blocked calls stay blocked)",
    ),
    (
        ApprovalMode::AutoDeny,
        "Read only",
        "Deny every call that needs consent",
    ),
];

/// What every handler shares.
struct AgentState {
    settings: AcpSettings,
    initialized: AtomicBool,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

impl AgentState {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<AcpSession>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check_initialized(&self) -> Result<(), Error> {
        if self.initialized.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err(Error::new(
                ErrorCode::INVALID_REQUEST,
                "call `initialize` first",
            ))
        }
    }

    fn session(&self, id: &SessionId) -> Result<Arc<AcpSession>, Error> {
        self.check_initialized()?;
        self.sessions().get(id.0.as_ref()).cloned().ok_or_else(|| {
            Error::new(
                ErrorCode::INVALID_PARAMS,
                format!("no session `{}` in this connection", id.0),
            )
        })
    }

    /// The worker file for a session in `cwd`: `WORKER` resolved there, else in the
    /// directory golem-forge was started in.
    fn worker_file(&self, cwd: &Path) -> Result<PathBuf, Error> {
        let arg = &self.settings.worker;
        resolve_worker_arg(arg, cwd)
            .or_else(|first| match std::env::current_dir() {
                Ok(here) if here != cwd => resolve_worker_arg(arg, &here).map_err(|_| first),
                _ => Err(first),
            })
            .map_err(|e| Error::new(ErrorCode::INVALID_PARAMS, e.to_string()))
    }

    fn options(
        &self,
        worker: HostWorker,
        servers: &[McpServer],
        cwd: &Path,
    ) -> Result<HostOptions, Error> {
        let settings = &self.settings;
        Ok(HostOptions {
            model: settings.model.clone(),
            env_model: settings.env_model.clone(),
            approval: settings.approval,
            max_iterations: settings.max_iterations,
            jail_helper: settings.jail_helper.clone(),
            keeps_history: true,
            mcp_servers: client_servers(servers, cwd)?,
            ready_model: None,
            scratch: None,
            ..HostOptions::new(worker)
        })
    }
}

/// The editor's MCP servers as ours: names made of `[A-Za-z0-9_-]`, stdio servers started in
/// the session's directory, HTTP servers with their headers.
fn client_servers(
    servers: &[McpServer],
    cwd: &Path,
) -> Result<std::collections::BTreeMap<String, McpServerConfig>, Error> {
    let mut out = std::collections::BTreeMap::new();
    for server in servers {
        let (name, config) = match server {
            McpServer::Stdio(stdio) => (
                &stdio.name,
                McpServerConfig::Stdio {
                    command: stdio.command.to_string_lossy().into_owned(),
                    args: stdio.args.clone(),
                    env: stdio
                        .env
                        .iter()
                        .map(|v| (v.name.clone(), v.value.clone()))
                        .collect(),
                    cwd: Some(cwd.to_string_lossy().into_owned()),
                    jail: None,
                },
            ),
            McpServer::Http(http) => (
                &http.name,
                McpServerConfig::Http {
                    url: http.url.clone(),
                    headers: http
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                },
            ),
            McpServer::Sse(sse) => {
                return Err(Error::new(
                    ErrorCode::INVALID_PARAMS,
                    format!(
                        "MCP server `{}`: the SSE transport is not supported; use stdio or HTTP",
                        sse.name
                    ),
                ));
            }
            _ => {
                return Err(Error::new(
                    ErrorCode::INVALID_PARAMS,
                    "an MCP server of a transport this agent does not know",
                ));
            }
        };
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if name.is_empty() || out.insert(name.clone(), config).is_some() {
            return Err(Error::new(
                ErrorCode::INVALID_PARAMS,
                format!("MCP server names must be distinct and not empty (`{name}`)"),
            ));
        }
    }
    Ok(out)
}

/// The modes, with `current` first among equals.
fn modes(current: ApprovalMode) -> SessionModeState {
    let mut available: Vec<SessionMode> = MODES
        .iter()
        .map(|(mode, name, description)| {
            SessionMode::new(mode.as_str(), *name).description(*description)
        })
        .collect();
    if !MODES.iter().any(|(mode, ..)| *mode == current) {
        available.push(SessionMode::new(current.as_str(), current.as_str()));
    }
    SessionModeState::new(current.as_str(), available)
}

fn mode_named(id: &str) -> Option<ApprovalMode> {
    MODES
        .iter()
        .map(|(mode, ..)| *mode)
        .chain([ApprovalMode::Defer])
        .find(|mode| mode.as_str() == id)
}

fn absolute(cwd: &Path) -> Result<(), Error> {
    if cwd.is_absolute() {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!("cwd must be an absolute path, not `{}`", cwd.display()),
        ))
    }
}

/// Sends `update` for session `id`, logging a failure (the editor is gone).
fn notify(connection: &ConnectionTo<Client>, id: &str, update: SessionUpdate) {
    if let Err(e) =
        connection.send_notification(SessionNotification::new(SessionId::new(id), update))
    {
        tracing::debug!(error = %e, "an update could not be sent");
    }
}

/// Opens a session with `options` and keeps it in the connection's sessions; a failure is a
/// JSON-RPC error with `code` and the reason.
async fn open(
    state: &AgentState,
    options: HostOptions,
    connection: &ConnectionTo<Client>,
    code: ErrorCode,
) -> Result<Opened, Error> {
    let opened = AcpSession::open(options, connection.clone())
        .await
        .map_err(|e| Error::new(code, e))?;
    state
        .sessions()
        .insert(opened.session.id().to_owned(), opened.session.clone());
    Ok(opened)
}

/// Tells the editor the session's commands (after the answer that opened it).
fn advertise(connection: &ConnectionTo<Client>, session: &AcpSession) {
    notify(
        connection,
        session.id(),
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(available_commands(
            session.tools(),
        ))),
    );
}

/// Serves the agent on stdin and stdout until the editor closes the connection, then ends
/// every session (their transcripts closed).
pub async fn serve_stdio(settings: AcpSettings) -> Result<(), Error> {
    let state = Arc::new(AgentState {
        settings,
        initialized: AtomicBool::new(false),
        sessions: Mutex::new(HashMap::new()),
    });
    let served = {
        let init = state.clone();
        let new = state.clone();
        let load = state.clone();
        let prompt = state.clone();
        let mode = state.clone();
        let cancel = state.clone();
        Agent
            .v1()
            .name("golem-forge")
            .on_receive_request(
                async move |request: InitializeRequest,
                            responder: Responder<InitializeResponse, V1>,
                            _connection: ConnectionTo<Client>| {
                    init.initialized.store(true, Ordering::SeqCst);
                    tracing::debug!(client = ?request.client_info, "initialize");
                    responder.respond(
                        InitializeResponse::new(ProtocolVersion::V1)
                            .agent_capabilities(
                                AgentCapabilities::new()
                                    .load_session(true)
                                    .prompt_capabilities(
                                        PromptCapabilities::new().embedded_context(true),
                                    )
                                    .mcp_capabilities(McpCapabilities::new().http(true)),
                            )
                            .agent_info(
                                Implementation::new("golem-forge", env!("CARGO_PKG_VERSION"))
                                    .title("Golem Forge"),
                            ),
                    )
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: NewSessionRequest,
                            responder: Responder<NewSessionResponse, V1>,
                            connection: ConnectionTo<Client>| {
                    let state = new.clone();
                    let setup = (|| {
                        state.check_initialized()?;
                        absolute(&request.cwd)?;
                        let worker = HostWorker::File(state.worker_file(&request.cwd)?);
                        state.options(worker, &request.mcp_servers, &request.cwd)
                    })();
                    let options = match setup {
                        Ok(options) => options,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    connection.clone().spawn(async move {
                        let opened = open(&state, options, &connection, ErrorCode::INTERNAL_ERROR);
                        match opened.await {
                            Ok(Opened { session, mode, .. }) => {
                                responder.respond(
                                    NewSessionResponse::new(SessionId::new(session.id()))
                                        .modes(modes(mode)),
                                )?;
                                advertise(&connection, &session);
                                Ok(())
                            }
                            Err(e) => responder.respond_with_error(e),
                        }
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: LoadSessionRequest,
                            responder: Responder<LoadSessionResponse, V1>,
                            connection: ConnectionTo<Client>| {
                    let state = load.clone();
                    let setup = (|| {
                        state.check_initialized()?;
                        absolute(&request.cwd)?;
                        if state.sessions().contains_key(request.session_id.0.as_ref()) {
                            return Err(Error::new(
                                ErrorCode::INVALID_PARAMS,
                                format!("session `{}` is already open", request.session_id.0),
                            ));
                        }
                        // Sessions are recorded under the worker's program, else the cwd's.
                        let root = match state.worker_file(&request.cwd) {
                            Ok(file) => program_root(file.parent().unwrap_or(&request.cwd)),
                            Err(_) => program_root(&request.cwd),
                        };
                        let worker = HostWorker::Resume {
                            program_root: root,
                            id: request.session_id.0.to_string(),
                        };
                        state.options(worker, &request.mcp_servers, &request.cwd)
                    })();
                    let options = match setup {
                        Ok(options) => options,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    connection.clone().spawn(async move {
                        let opened = open(&state, options, &connection, ErrorCode::INVALID_PARAMS);
                        match opened.await {
                            Ok(Opened {
                                session,
                                history,
                                mode,
                            }) => {
                                for update in history {
                                    notify(&connection, session.id(), update);
                                }
                                responder.respond(LoadSessionResponse::new().modes(modes(mode)))?;
                                advertise(&connection, &session);
                                Ok(())
                            }
                            Err(e) => responder.respond_with_error(e),
                        }
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: PromptRequest,
                            responder: Responder<PromptResponse, V1>,
                            connection: ConnectionTo<Client>| {
                    let session = match prompt.session(&request.session_id) {
                        Ok(session) => session,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    let action = match read_prompt(&request.prompt, session.tools()) {
                        Ok(action) => action,
                        Err(e) => {
                            return responder.respond_with_error(Error::new(
                                ErrorCode::INVALID_PARAMS,
                                e.to_string(),
                            ));
                        }
                    };
                    connection.spawn(async move {
                        match session.prompt(action).await {
                            Ok(stop) => responder.respond(PromptResponse::new(stop)),
                            Err(e @ PromptFailure::Busy) => responder.respond_with_error(
                                Error::new(ErrorCode::INVALID_REQUEST, e.to_string()),
                            ),
                            Err(e @ (PromptFailure::Closed | PromptFailure::Failed(_))) => {
                                responder.respond_with_error(Error::new(
                                    ErrorCode::INTERNAL_ERROR,
                                    e.to_string(),
                                ))
                            }
                        }
                    })
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: SetSessionModeRequest,
                            responder: Responder<SetSessionModeResponse, V1>,
                            connection: ConnectionTo<Client>| {
                    let session = match mode.session(&request.session_id) {
                        Ok(session) => session,
                        Err(e) => return responder.respond_with_error(e),
                    };
                    let Some(chosen) = mode_named(request.mode_id.0.as_ref()) else {
                        return responder.respond_with_error(Error::new(
                            ErrorCode::INVALID_PARAMS,
                            format!(
                                "no mode `{}`: interactive, approve_all or auto_deny",
                                request.mode_id.0
                            ),
                        ));
                    };
                    session.set_mode(chosen);
                    responder.respond(SetSessionModeResponse::new())?;
                    notify(
                        &connection,
                        session.id(),
                        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(chosen.as_str())),
                    );
                    Ok(())
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_notification(
                async move |notification: CancelNotification, _connection: ConnectionTo<Client>| {
                    match cancel.session(&notification.session_id) {
                        Ok(session) => session.cancel(),
                        Err(e) => tracing::debug!(error = %e.message, "cancel of no session"),
                    }
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .connect_to(Stdio::new())
            .await
    };
    let sessions: Vec<_> = state.sessions().drain().map(|(_, s)| s).collect();
    for session in sessions {
        session.end().await;
    }
    served
}
