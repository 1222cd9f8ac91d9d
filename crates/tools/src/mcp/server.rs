//! One MCP server over stdio: how its process is started (its command in a minimal
//! environment, outside the jail, in its working directory), the connection started on first
//! use and started again after the server died, and each call bounded by the toolset's
//! timeout. Every failure is a message naming the server. The process is killed when the
//! connection is dropped (with the session's tools) or when it stops answering.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, Tool as McpToolInfo};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// How to start one server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The server's name in the worker file.
    pub name: String,
    /// The program.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its whole environment (see `env.rs`).
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    pub cwd: PathBuf,
}

/// A running connection.
type Connection = RunningService<RoleClient, ()>;

/// One server, started on first use.
pub struct Server {
    spec: ServerSpec,
    timeout: Duration,
    connection: Mutex<Option<Arc<Connection>>>,
}

impl Server {
    /// A server not started yet.
    pub fn new(spec: ServerSpec, timeout: Duration) -> Server {
        Server {
            spec,
            timeout,
            connection: Mutex::new(None),
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Starts the server and completes the MCP handshake, within the timeout.
    async fn start(&self) -> Result<Connection, String> {
        let spec = &self.spec;
        let mut command = tokio::process::Command::new(&spec.command);
        command
            .args(&spec.args)
            .env_clear()
            .envs(&spec.env)
            .current_dir(&spec.cwd)
            .kill_on_drop(true);
        let (transport, _) = TokioChildProcess::builder(command)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| {
                format!(
                    "MCP server `{}` could not be started ({} in {}): {e}",
                    spec.name,
                    spec.command,
                    spec.cwd.display()
                )
            })?;
        match tokio::time::timeout(self.timeout, ().serve(transport)).await {
            Ok(Ok(connection)) => Ok(connection),
            Ok(Err(e)) => Err(format!("MCP server `{}` did not start: {e}", spec.name)),
            Err(_) => Err(format!(
                "MCP server `{}` did not answer within {} s of starting",
                spec.name,
                self.timeout.as_secs()
            )),
        }
    }

    /// The running connection, started now if there is none or the last one closed.
    async fn connection(&self) -> Result<Arc<Connection>, String> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && !connection.is_closed()
        {
            return Ok(connection.clone());
        }
        let connection = Arc::new(self.start().await?);
        *slot = Some(connection.clone());
        Ok(connection)
    }

    /// Forgets `connection` (when it is still the current one), stopping the server.
    async fn drop_connection(&self, connection: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) {
            *slot = None;
        }
    }

    /// Every tool of the server.
    pub async fn list_tools(&self) -> Result<Vec<McpToolInfo>, String> {
        let connection = self.connection().await?;
        match tokio::time::timeout(self.timeout, connection.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
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
            outcome = tokio::time::timeout(self.timeout, connection.peer().call_tool(params)) => outcome,
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

    /// Stops the server, if it runs, waiting for the connection to close when no call holds
    /// it.
    pub async fn stop(&self) {
        let connection = self.connection.lock().await.take();
        if let Some(connection) = connection {
            match Arc::try_unwrap(connection) {
                Ok(connection) => {
                    let _closed = connection.cancel().await;
                }
                Err(shared) => shared.cancellation_token().cancel(),
            }
        }
    }
}

/// Why a call gave no result.
#[derive(Debug)]
pub enum CallError {
    /// The call was interrupted.
    Cancelled,
    /// The server failed; the message names it.
    Failed(String),
}
