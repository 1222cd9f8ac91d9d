//! One MCP server: how it is reached (a child process over stdio — its command in a minimal
//! environment, outside the jail, in its working directory, in a process group of its own — or
//! the same in the process jail (`jailed.rs`), or a streamable HTTP endpoint with its
//! headers), the connection started on first use and started again after the server died, and
//! each call bounded by the toolset's timeout. Every failure is a message naming the server. A
//! stdio server's whole process group (`npx` and the `node` it starts, or `sh -c` and its
//! child), or everything in a jailed server's jail, is killed when its connection is dropped
//! (with the session's tools), when it stops answering, or when it is stopped.
//!
//! The first time a server is started in a session, its tool list is compared with the cached
//! one (`cache.rs`), and the cache is updated when it changed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::cache::{CacheSlot, CachedServer};
use super::client::{AskSlot, Client};
use super::jailed::{self, McpJailOptions};

/// How a server is reached.
#[derive(Debug, Clone)]
pub enum Transport {
    /// A child process speaking MCP on its standard input and output.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment (see `env.rs`).
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: PathBuf,
    },
    /// A child process in the process jail, speaking MCP on its standard input and output.
    Jailed {
        /// The program, as the jail sees it.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its own variables (the jail adds its base environment, see `jailed.rs`).
        env: BTreeMap<String, String>,
        /// The jail and the working directory in it.
        jail: McpJailOptions,
    },
    /// A streamable HTTP endpoint (`http` or `https`).
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request, `${VAR}` already expanded.
        headers: BTreeMap<String, String>,
    },
}

/// How to reach one server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The server's name in the worker file.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
}

/// A running connection.
type Connection = RunningService<RoleClient, Client>;

/// The process group of a stdio server, killed (every process in it) when dropped.
struct ProcessGroup(rustix::process::Pid);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        // The group may be gone already (the server exited and was reaped): nothing to do.
        let _gone = rustix::process::kill_process_group(self.0, rustix::process::Signal::KILL);
    }
}

/// What ends a stdio server's processes when dropped (held only to be dropped).
#[allow(dead_code, reason = "held for its Drop")]
enum Processes {
    /// The process group of a server outside the jail.
    Group(ProcessGroup),
    /// A jailed server (dropping it kills everything in its jail).
    Jail(Box<golem_sandbox::jail::JailProcess>),
}

/// A started server: its connection and, for stdio, what ends its processes.
struct Live {
    connection: Arc<Connection>,
    /// Dropped after the connection's graceful close, killing whatever is left.
    _processes: Option<Processes>,
}

/// One server, started on first use.
pub struct Server {
    spec: ServerSpec,
    timeout: Duration,
    live: Mutex<Option<Live>>,
    /// Its cached tool list, compared once with the live one.
    cache: Option<CacheSlot>,
    /// Whether the live tool list was compared with the cache (or listed) in this session.
    checked: AtomicBool,
    /// The call in progress, which answers the server's elicitation requests.
    pub(super) asking: AskSlot,
}

impl Server {
    /// A server not started yet.
    pub fn new(spec: ServerSpec, timeout: Duration) -> Server {
        Server {
            spec,
            timeout,
            live: Mutex::new(None),
            cache: None,
            checked: AtomicBool::new(false),
            asking: AskSlot::default(),
        }
    }

    /// A server not started yet whose tool list came from `cache` (compared with the live
    /// list when the server is first started); `fresh` when it was listed in this session.
    pub fn with_cache(
        spec: ServerSpec,
        timeout: Duration,
        cache: CacheSlot,
        fresh: bool,
    ) -> Server {
        Server {
            cache: Some(cache),
            checked: AtomicBool::new(fresh),
            ..Server::new(spec, timeout)
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Where the server runs, for the approval prompt: `outside the jail`, or `in the jail:
    /// zones docs, no network`.
    pub fn place(&self) -> String {
        match &self.spec.transport {
            Transport::Jailed { jail, .. } => format!("in the jail: {}", jail.summary()),
            Transport::Stdio { .. } | Transport::Http { .. } => "outside the jail".to_owned(),
        }
    }

    /// Starts the server and completes the MCP handshake, within the timeout.
    async fn start(&self) -> Result<Live, String> {
        let spec = &self.spec;
        match &spec.transport {
            Transport::Stdio {
                command: program,
                args,
                env,
                cwd,
            } => {
                let mut command = tokio::process::Command::new(program);
                command
                    .args(args)
                    .env_clear()
                    .envs(env)
                    .current_dir(cwd)
                    .process_group(0)
                    .kill_on_drop(true);
                let (transport, _) = TokioChildProcess::builder(command)
                    .stderr(Stdio::null())
                    .spawn()
                    .map_err(|e| {
                        format!(
                            "MCP server `{}` could not be started ({program} in {}): {e}",
                            spec.name,
                            cwd.display()
                        )
                    })?;
                let group = transport
                    .id()
                    .and_then(|id| i32::try_from(id).ok())
                    .and_then(rustix::process::Pid::from_raw)
                    .map(|pid| Processes::Group(ProcessGroup(pid)));
                let connection = self.handshake(transport).await?;
                Ok(Live {
                    connection: Arc::new(connection),
                    _processes: group,
                })
            }
            Transport::Jailed {
                command,
                args,
                env,
                jail,
            } => {
                let (process, io) = jailed::spawn(&spec.name, command, args, env, jail).await?;
                match self.handshake(io).await {
                    Ok(connection) => Ok(Live {
                        connection: Arc::new(connection),
                        _processes: Some(Processes::Jail(Box::new(process))),
                    }),
                    Err(e) => Err(jailed::failed(process, format!("{e} (in the jail)")).await),
                }
            }
            Transport::Http { url, headers } => {
                let transport = super::http::transport(url, headers)
                    .map_err(|e| format!("MCP server `{}` ({url}): {e}", spec.name))?;
                let connection = self
                    .handshake(transport)
                    .await
                    .map_err(|e| format!("{e} (streamable HTTP at {url})"))?;
                Ok(Live {
                    connection: Arc::new(connection),
                    _processes: None,
                })
            }
        }
    }

    /// The MCP handshake over `transport`, within the timeout: the one place where every
    /// transport's connection is made (and where the client's handler is chosen).
    async fn handshake<T, E, A>(&self, transport: T) -> Result<Connection, String>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        let name = &self.spec.name;
        match tokio::time::timeout(
            self.timeout,
            Client::new(name, self.asking.clone()).serve(transport),
        )
        .await
        {
            Ok(Ok(connection)) => Ok(connection),
            Ok(Err(e)) => Err(format!("MCP server `{name}` did not start: {e}")),
            Err(_) => Err(format!(
                "MCP server `{name}` did not answer within {} s of starting",
                self.timeout.as_secs()
            )),
        }
    }

    /// The running connection, started now if there is none or the last one closed. The
    /// first start in a session compares the tool list with the cache.
    async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.live.lock().await;
        if let Some(live) = slot.as_ref()
            && !live.connection.is_closed()
        {
            return Ok(live.connection.clone());
        }
        *slot = None;
        let live = self.start().await?;
        let connection = live.connection.clone();
        *slot = Some(live);
        drop(slot);
        if !self.checked.swap(true, Ordering::SeqCst)
            && let Some(cache) = &self.cache
        {
            self.compare_with_cache(&connection, cache).await;
        }
        Ok(connection)
    }

    /// Lists the tools of the just started server and updates the cache when the list (or
    /// the server's version) changed, telling the user it takes effect next session. A
    /// failure here only skips the comparison.
    async fn compare_with_cache(&self, connection: &Connection, cache: &CacheSlot) {
        let listed = tokio::time::timeout(self.timeout, connection.peer().list_all_tools()).await;
        let Ok(Ok(tools)) = listed else {
            tracing::debug!(server = %self.spec.name, "could not list tools to compare with the cache");
            return;
        };
        let fresh = CachedServer::new(server_identity(connection), tools);
        cache.update_if_changed(&self.spec.name, fresh);
    }

    /// Forgets `connection` (when it is still the current one), stopping the server.
    async fn drop_connection(&self, connection: &Arc<Connection>) {
        let mut slot = self.live.lock().await;
        if slot
            .as_ref()
            .is_some_and(|live| Arc::ptr_eq(&live.connection, connection))
        {
            *slot = None;
        }
    }

    /// Every tool of the server, and its reported name and version.
    pub async fn list_tools(&self) -> Result<CachedServer, String> {
        let connection = self.connection().await?;
        match tokio::time::timeout(self.timeout, connection.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(CachedServer::new(server_identity(&connection), tools)),
            Ok(Err(e)) => {
                self.drop_connection(&connection).await;
                Err(format!(
                    "MCP server `{}`: listing its tools failed: {e}",
                    self.spec.name
                ))
            }
            Err(_) => {
                self.drop_connection(&connection).await;
                Err(format!(
                    "MCP server `{}` did not list its tools within {} s",
                    self.spec.name,
                    self.timeout.as_secs()
                ))
            }
        }
    }

    /// Calls `tool` with `arguments`; `cancel` abandons the call. An error names the server;
    /// after a broken connection or a timeout the server is stopped, and started again by the
    /// next call.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<CallToolResult, CallError> {
        let connection = self.connection().await.map_err(CallError::Failed)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let name = &self.spec.name;
        let outcome = tokio::select! {
            () = cancel.cancelled() => return Err(CallError::Cancelled),
            outcome = tokio::time::timeout(self.timeout, connection.call_tool(params)) => outcome,
        };
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(error))) => Err(CallError::Failed(format!(
                "MCP server `{name}` refused the call of `{tool}`: {}",
                error.message
            ))),
            Ok(Err(e)) => {
                self.drop_connection(&connection).await;
                Err(CallError::Failed(format!(
                    "MCP server `{name}` failed during the call of `{tool}` ({e}); it is started \
                     again on the next call"
                )))
            }
            Err(_) => {
                self.drop_connection(&connection).await;
                Err(CallError::Failed(format!(
                    "MCP server `{name}` did not answer the call of `{tool}` within {} s; it was \
                     stopped and is started again on the next call",
                    self.timeout.as_secs()
                )))
            }
        }
    }

    /// Stops the server, if it runs: the connection closed (waiting for it when no call holds
    /// it), then whatever is left of its process group killed.
    pub async fn stop(&self) {
        let live = self.live.lock().await.take();
        if let Some(Live {
            connection,
            _processes,
        }) = live
        {
            match Arc::try_unwrap(connection) {
                Ok(connection) => {
                    let _closed = connection.cancel().await;
                }
                Err(shared) => shared.cancellation_token().cancel(),
            }
            drop(_processes);
        }
    }
}

/// The name and version the server reported in the handshake.
fn server_identity(connection: &Connection) -> (String, String) {
    connection
        .peer_info()
        .and_then(|info| {
            info.server_info
                .as_ref()
                .map(|server| (server.name.clone(), server.version.clone()))
        })
        .unwrap_or_default()
}

/// Why a call gave no result.
#[derive(Debug)]
pub enum CallError {
    /// The call was interrupted.
    Cancelled,
    /// The server failed; the message names it.
    Failed(String),
}
