//! One MCP server: how it is reached (a child process over stdio — its command in a minimal
//! environment, outside the jail, in its working directory, under our reaper, in a process
//! group of its own — or the same in the process jail (`jailed.rs`), or a streamable HTTP
//! endpoint with its headers), the connection started on first use and started again after the
//! server died, and each call bounded by the toolset's timeout. Every failure is a message
//! naming the server. Everything a stdio server outside the jail started (`npx` and the `node`
//! it starts, `sh -c` and its child, a daemon that left the group) is ended by its reaper
//! (`golem_sandbox::reaper`: asked with `SIGTERM`, its group killed should it not end in
//! time; without a reaper, the process group is killed), and everything in a jailed server's
//! jail by the jail, when its connection is dropped (with the session's tools), when it stops
//! answering, or when it is stopped. Should golem-forge die, the reaper ends everything too
//! (a parent-death signal).
//!
//! A stdio server that exits or stops talking before it has initialized is reported with its
//! command, how it ended and the last lines of its stderr ([`NotStarted`]), read all along by a
//! task of its own (so a chatty server never blocks on a full pipe), only the end kept; when it
//! looks uninstalled (a module or program not found), the error asks whether it is installed.
//!
//! The first time a server is started in a session, its tool list is compared with the cached
//! one (`cache.rs`), and the cache is updated when it changed.

use std::collections::BTreeMap;
use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use golem_toolset::process::changes::Pending;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::cache::{CacheSlot, CachedServer};
use super::client::{AskSlot, Client};
use super::jailed::{self, McpJailOptions};

/// How a server is reached, ready to start: built from its configuration
/// ([`crate::McpServerConfig`], what the worker file says) when the toolset is built, with what
/// is known only then: `${VAR}` expanded from our environment, a stdio server's whole
/// environment and working directory, its jail built and checked against the kernel, and our
/// reaper. It stays a type of its own because the configuration never holds those (expanded
/// values are secrets; `check` shows the configuration), while a server is started from this.
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
        /// Our binary, whose reaper (`golem_sandbox::reaper`) runs the server and ends with it
        /// everything it started, daemons that left its process group included; `None`: only
        /// its process group is killed (a warning is logged at each start).
        reaper: Option<PathBuf>,
    },
    /// A child process in the process jail, speaking MCP on its standard input and output.
    Jailed {
        /// The program, as the jail sees it.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its own variables (the jail adds its base environment, see `jailed.rs`).
        env: BTreeMap<String, String>,
        /// The jail and the working directory in it (boxed: it is much the largest variant).
        jail: Box<McpJailOptions>,
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

/// A stdio server outside the jail: its process (the reaper running it, or the server itself)
/// in a process group of its own. Dropping it asks the reaper to stop (it kills everything the
/// server started, then ends), or, without a reaper, kills the whole group.
struct Outside {
    child: Child,
    /// The process (and group) id, when it was known.
    pid: Option<rustix::process::Pid>,
    /// When `child` is the reaper: how to ask it to stop.
    reaper: Option<golem_sandbox::reaper::Stop>,
}

impl Outside {
    /// Ends the server with everything it started and reaps it: the reaper asked to stop and
    /// given [`REAPER_GRACE`] to do it, then (or without a reaper, at once) the group killed. A
    /// reaper that has ended has ended everything with it: nothing to do.
    async fn end(&mut self) {
        if let Some(reaper) = &self.reaper {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            if reaper.stop()
                && tokio::time::timeout(REAPER_GRACE, self.child.wait())
                    .await
                    .is_ok()
            {
                return;
            }
            tracing::warn!("the reaper of an MCP server did not stop in time; killing its group");
        }
        self.kill_group();
        let _killed = self.child.kill().await;
    }

    /// `SIGKILL` to every process of the group (the group may be gone already).
    fn kill_group(&self) {
        if let Some(pid) = self.pid {
            let _gone = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for Outside {
    fn drop(&mut self) {
        match &self.reaper {
            // The reaper ends everything and itself; it is reaped in the background. A group
            // kill here would kill the reaper before it could.
            Some(reaper) => {
                let _asked = reaper.stop();
            }
            None => self.kill_group(),
        }
    }
}

/// What ends a stdio server's processes when dropped (held only to be dropped).
#[allow(dead_code, reason = "held for its Drop")]
enum Processes {
    /// A server outside the jail.
    Outside(Outside),
    /// A jailed server (dropping it kills everything in its jail).
    Jail(Box<golem_sandbox::jail::JailProcess>),
}

/// A started server: its connection and, for stdio, what ends its processes.
struct Live {
    connection: Arc<Connection>,
    /// Dropped after the connection's graceful close, killing whatever is left.
    processes: Option<Processes>,
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
    async fn start(&self) -> Result<Live, StartError> {
        let spec = &self.spec;
        match &spec.transport {
            Transport::Stdio {
                command: program,
                args,
                env,
                cwd,
                reaper,
            } => {
                let spawn_error = |e: std::io::Error| StartError::Spawn {
                    server: spec.name.clone(),
                    why: spawn_failure(program, cwd, env, &e),
                };
                let mut command = match reaper {
                    Some(helper) => {
                        // Found now, so that a missing program is reported as before.
                        let path = env.get("PATH").map(String::as_str);
                        let found = golem_sandbox::reaper::resolve(program, cwd, path)
                            .map_err(spawn_error)?;
                        tokio::process::Command::from(golem_sandbox::reaper::command(
                            helper,
                            &found,
                            program.as_ref(),
                            args,
                        ))
                    }
                    None => {
                        tracing::warn!(
                            server = %spec.name,
                            "no reaper: processes that leave the server's process group outlive it"
                        );
                        let mut command = tokio::process::Command::new(program);
                        command.args(args).kill_on_drop(true);
                        command
                    }
                };
                command
                    .env_clear()
                    .envs(env)
                    .current_dir(cwd)
                    .process_group(0)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = command.spawn().map_err(|e| match reaper {
                    // Not the server's fault: our own binary could not run.
                    Some(helper) if cwd.is_dir() => StartError::Spawn {
                        server: spec.name.clone(),
                        why: format!(
                            "the reaper that runs it ({} __jail --reap) could not run: {e}",
                            helper.display()
                        ),
                    },
                    _ => spawn_error(e),
                })?;
                let pid = child
                    .id()
                    .and_then(|id| i32::try_from(id).ok())
                    .and_then(rustix::process::Pid::from_raw);
                let (Some(stdout), Some(stdin), Some(stderr)) =
                    (child.stdout.take(), child.stdin.take(), child.stderr.take())
                else {
                    return Err(StartError::Spawn {
                        server: spec.name.clone(),
                        why: "it was started without its stdin, stdout or stderr".to_owned(),
                    });
                };
                let stderr = StderrTail::read(stderr);
                let stop = reaper
                    .as_ref()
                    .and(child.id())
                    .map(golem_sandbox::reaper::Stop::new);
                let mut outside = Outside {
                    child,
                    pid,
                    reaper: stop,
                };
                match self.handshake((stdout, stdin)).await {
                    Ok(connection) => Ok(Live {
                        connection: Arc::new(connection),
                        processes: Some(Processes::Outside(outside)),
                    }),
                    Err(failure) => {
                        let ending = stdio_ending(&mut outside, failure).await;
                        Err(NotStarted {
                            server: spec.name.clone(),
                            command: command_line(program, args),
                            place: None,
                            ending,
                            stderr: stderr.finish(STDERR_EOF).await,
                        }
                        .into())
                    }
                }
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
                        processes: Some(Processes::Jail(Box::new(process))),
                    }),
                    Err(failure) => {
                        let (ending, stderr) = jailed::ending(process, failure).await;
                        Err(NotStarted {
                            server: spec.name.clone(),
                            command: command_line(command, args),
                            place: Some(format!("in the jail ({})", jail.summary())),
                            ending,
                            stderr,
                        }
                        .into())
                    }
                }
            }
            Transport::Http { url, headers } => {
                let transport = super::http::transport(url, headers).map_err(|e| {
                    StartError::Other(format!("MCP server `{}` ({url}): {e}", spec.name))
                })?;
                let connection = self.handshake(transport).await.map_err(|failure| {
                    let name = &spec.name;
                    StartError::Other(match failure {
                        Unanswered::Failed(why) => format!(
                            "MCP server `{name}` did not start: {why} (streamable HTTP at {url})"
                        ),
                        Unanswered::TimedOut(limit) => format!(
                            "MCP server `{name}` did not answer within {} s of starting \
                             (streamable HTTP at {url})",
                            limit.as_secs()
                        ),
                    })
                })?;
                Ok(Live {
                    connection: Arc::new(connection),
                    processes: None,
                })
            }
        }
    }

    /// The MCP handshake over `transport`, within the timeout: the one place where every
    /// transport's connection is made (and where the client's handler is chosen).
    async fn handshake<T, E, A>(&self, transport: T) -> Result<Connection, Unanswered>
    where
        T: rmcp::transport::IntoTransport<RoleClient, E, A> + Send + 'static,
        E: std::error::Error + Send + Sync + 'static,
    {
        match tokio::time::timeout(
            self.timeout,
            Client::new(&self.spec.name, self.asking.clone()).serve(transport),
        )
        .await
        {
            Ok(Ok(connection)) => Ok(connection),
            Ok(Err(e)) => Err(Unanswered::Failed(e.to_string())),
            Err(_) => Err(Unanswered::TimedOut(self.timeout)),
        }
    }

    /// The running connection, started now if there is none or the last one closed. The
    /// first start in a session compares the tool list with the cache.
    async fn connection(&self) -> Result<Arc<Connection>, StartError> {
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
    /// The changes a jailed server has left in its zones' layers, taken: the server is
    /// stopped (its process ended with everything it started) and started again by the next
    /// call. `None` when it changed nothing, or writes its zones directly.
    async fn take_changes(&self) -> Option<Pending> {
        let mut slot = self.live.lock().await;
        let changed = matches!(
            slot.as_ref().and_then(|live| live.processes.as_ref()),
            Some(Processes::Jail(process)) if process.has_changes()
        );
        if !changed {
            return None;
        }
        let live = slot.take()?;
        drop(slot);
        live.connection.cancellation_token().cancel();
        match live.processes {
            Some(Processes::Jail(process)) => Some(process.end_with_changes().await),
            Some(Processes::Outside(..)) | None => None,
        }
    }

    /// The zones a jailed server sees (`None` for a server outside the jail).
    pub fn sandbox(&self) -> Option<&golem_sandbox::Sandbox> {
        match &self.spec.transport {
            Transport::Jailed { jail, .. } => Some(jail.jail.sandbox()),
            Transport::Stdio { .. } | Transport::Http { .. } => None,
        }
    }

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
    pub async fn list_tools(&self) -> Result<CachedServer, ListError> {
        let connection = self.connection().await?;
        match tokio::time::timeout(self.timeout, connection.peer().list_all_tools()).await {
            Ok(Ok(tools)) => Ok(CachedServer::new(server_identity(&connection), tools)),
            Ok(Err(source)) => {
                self.drop_connection(&connection).await;
                Err(ListError::Failed {
                    server: self.spec.name.clone(),
                    source: Box::new(source),
                })
            }
            Err(_) => {
                self.drop_connection(&connection).await;
                Err(ListError::TimedOut {
                    server: self.spec.name.clone(),
                    limit: self.timeout,
                })
            }
        }
    }

    /// Calls `tool` with `arguments`; `cancel` abandons the call. An error names the server;
    /// after a broken connection or a timeout the server is stopped, and started again by the
    /// next call.
    ///
    /// A jailed server sees its `rw` zones through copy-on-write layers: when a call leaves
    /// anything there, the server is stopped (a layer cannot be emptied while mounted) and
    /// the changes come back with the result, not applied, for the caller to settle; the next
    /// call starts the server again. The changes of a failed or interrupted call are
    /// discarded. Calls that run at the same time share the layers: the first to end with
    /// changes takes them all (its approval shows them all), and the others lose the server.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
    ) -> Result<(CallToolResult, Option<Pending>), CallError> {
        let connection = self
            .connection()
            .await
            .map_err(|e| CallError::Failed(e.to_string()))?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let name = &self.spec.name;
        let outcome = tokio::select! {
            () = cancel.cancelled() => None,
            outcome = tokio::time::timeout(self.timeout, connection.call_tool(params)) => Some(outcome),
        };
        let Some(outcome) = outcome else {
            // An interrupted call's changes are not taken (the server is stopped with them).
            if let Some(Ok(changeset)) = self.take_changes().await {
                golem_toolset::process::changes::discard(changeset).await;
            }
            return Err(CallError::Cancelled);
        };
        // What the call left in a jailed server's layers goes with its result; a failed
        // call's changes are discarded.
        let changes = self.take_changes().await;
        let outcome = match (outcome, changes) {
            (Ok(Ok(result)), changes) => return Ok((result, changes)),
            (outcome, Some(Ok(changeset))) => {
                golem_toolset::process::changes::discard(changeset).await;
                outcome
            }
            (outcome, Some(Err(_)) | None) => outcome,
        };
        match outcome {
            Ok(Ok(result)) => Ok((result, None)),
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
            mut processes,
        }) = live
        {
            match Arc::try_unwrap(connection) {
                Ok(connection) => {
                    // Closes its stdin: a server ends by itself then, given a moment.
                    let _closed = connection.cancel().await;
                    if let Some(Processes::Outside(outside)) = processes.as_mut() {
                        let _ended = tokio::time::timeout(GRACE, outside.child.wait()).await;
                        // Whatever it started (or all of it, when it did not end) goes too.
                        outside.end().await;
                    }
                }
                Err(shared) => shared.cancellation_token().cancel(),
            }
            drop(processes);
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

/// How long a stdio server whose handshake failed gets to end by itself, so that its exit and
/// its last words are known, before it is killed; also how long a stopped server gets to end
/// after its stdin closed.
pub(super) const GRACE: Duration = Duration::from_secs(1);

/// How long a reaper asked to stop gets to kill and reap everything before its group is
/// killed (which kills the reaper too, leaving what left the group to init): its work takes
/// milliseconds, so this is only a bound for a reaper that hangs, generous for a loaded
/// machine.
const REAPER_GRACE: Duration = Duration::from_secs(10);

/// How long the end of a failed server's stderr is waited for once it ended (a process it left
/// behind may hold the pipe open).
const STDERR_EOF: Duration = Duration::from_millis(300);

/// How much of a failed server's stderr goes into the error: at most this many of its last
/// lines, within its last [`STDERR_TAIL_BYTES`].
const STDERR_TAIL_LINES: usize = 20;

/// See [`STDERR_TAIL_LINES`]; also how much of a stdio server's stderr is kept.
const STDERR_TAIL_BYTES: usize = 4096;

/// Why a server's tools could not be listed; the message names the server.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// It could not be started.
    #[error(transparent)]
    Start(#[from] StartError),
    /// It answered the listing with an error, or the connection broke.
    #[error("MCP server `{server}`: listing its tools failed: {source}")]
    Failed {
        /// The server.
        server: String,
        /// rmcp's error (boxed: it is large).
        source: Box<ServiceError>,
    },
    /// It did not answer within the limit.
    #[error("MCP server `{server}` did not list its tools within {} s", limit.as_secs())]
    TimedOut {
        /// The server.
        server: String,
        /// The limit.
        limit: Duration,
    },
}

/// Why a server could not be started; [`NotStarted`] when it ran but did not initialize.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its program could not be run at all.
    #[error("MCP server `{server}` could not be started: {why}")]
    Spawn {
        /// The server's name.
        server: String,
        /// Why, naming the program.
        why: String,
    },
    /// It ran, but ended or stopped talking before it initialized.
    #[error(transparent)]
    NotStarted(Box<NotStarted>),
    /// Anything else (a streamable HTTP server's failure); the message names the server.
    #[error("{0}")]
    Other(String),
}

impl From<NotStarted> for StartError {
    fn from(not_started: NotStarted) -> StartError {
        StartError::NotStarted(Box::new(not_started))
    }
}

/// Why the handshake did not complete.
#[derive(Debug)]
pub(super) enum Unanswered {
    /// The connection failed (closed, unreadable, refused), in rmcp's words.
    Failed(String),
    /// No answer within this limit.
    TimedOut(Duration),
}

/// How a stdio server that did not initialize ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ending {
    /// It exited with this code.
    Exited(i32),
    /// A signal killed it.
    Signal(i32),
    /// The jail stopped it (a limit).
    Stopped(String),
    /// It still ran when the handshake failed (for this reason), and was killed.
    Failed(String),
    /// It did not answer within this limit, and was killed.
    TimedOut(Duration),
    /// Its end is not known: why the handshake failed, and why the end is not known.
    Unknown(String, String),
}

/// A stdio server (outside the jail or in it) that ended or stopped talking before it
/// initialized: its name, its command, how it ended and the end of its stderr, with a hint
/// when it looks not installed.
#[derive(Debug, thiserror::Error)]
pub struct NotStarted {
    /// The server's name.
    pub(super) server: String,
    /// Its command line, its words quoted as a shell would need.
    pub(super) command: String,
    /// Where it ran, when not simply outside the jail (`in the jail (zones docs, no network)`).
    pub(super) place: Option<String>,
    /// How it ended.
    pub(super) ending: Ending,
    /// What it wrote to stderr, as far as it was kept.
    pub(super) stderr: String,
}

impl NotStarted {
    /// Whether the server looks not installed: a program not found (exit code 127) or the
    /// words of a missing module or file on its stderr.
    fn looks_uninstalled(&self) -> bool {
        const MISSING: [&str; 7] = [
            "Cannot find module",
            "MODULE_NOT_FOUND",
            "ERR_MODULE_NOT_FOUND",
            "ENOENT",
            "No such file or directory",
            "not found",
            "E404",
        ];
        self.ending == Ending::Exited(127) || MISSING.iter().any(|m| self.stderr.contains(m))
    }
}

impl fmt::Display for NotStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP server `{}` did not start", self.server)?;
        if let Some(place) = &self.place {
            write!(f, " {place}")?;
        }
        write!(f, ": `{}` ", self.command)?;
        match &self.ending {
            Ending::Exited(code) => write!(f, "exited with code {code} before initializing")?,
            Ending::Signal(signal) => {
                write!(f, "was killed by signal {signal} before initializing")?;
            }
            Ending::Stopped(why) => write!(f, "was stopped before initializing: {why}")?,
            Ending::Failed(why) => write!(f, "did not initialize ({why}); it was stopped")?,
            Ending::TimedOut(limit) => write!(
                f,
                "did not answer within {} s of starting; it was stopped",
                limit.as_secs()
            )?,
            Ending::Unknown(why, unknown) => write!(f, "did not initialize ({why}); {unknown}")?,
        }
        let lines = last_lines(&self.stderr);
        if lines.is_empty() {
            f.write_str("; it wrote nothing to stderr")?;
        } else {
            f.write_str("; its stderr ended with:")?;
            for line in lines {
                if line.is_empty() {
                    f.write_str("\n")?;
                } else {
                    write!(f, "\n  {line}")?;
                }
            }
        }
        if self.looks_uninstalled() {
            f.write_str(
                "\nhint: something it needs was not found: is the server installed? (see the \
                 worker's README)",
            )?;
        }
        Ok(())
    }
}

/// The last lines of `text` worth showing: at most [`STDERR_TAIL_LINES`] within its last
/// [`STDERR_TAIL_BYTES`], without the blank lines around them; a line cut there starts with
/// `…`, and a `…` line comes first when whole lines were left out.
pub(super) fn last_lines(text: &str) -> Vec<String> {
    let text = text.trim_end();
    let mut start = text.len().saturating_sub(STDERR_TAIL_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let mut lines: Vec<&str> = text[start..].lines().map(str::trim_end).collect();
    let mut left_out = start > 0 && text[..start].ends_with('\n');
    let mut cut_line = start > 0 && !left_out;
    if lines.len() > STDERR_TAIL_LINES {
        lines.drain(..lines.len() - STDERR_TAIL_LINES);
        left_out = true;
        cut_line = false;
    }
    while lines.first().is_some_and(|line| line.is_empty()) {
        lines.remove(0);
        cut_line = false;
    }
    let mut shown: Vec<String> = lines.into_iter().map(str::to_owned).collect();
    match shown.first_mut() {
        Some(first) if cut_line => first.insert(0, '…'),
        Some(_) if left_out => shown.insert(0, "…".to_owned()),
        _ => {}
    }
    shown
}

/// `program` and `args` as one command line, each word quoted as a shell would need.
pub(super) fn command_line(program: &str, args: &[String]) -> String {
    shell_words::join(std::iter::once(program).chain(args.iter().map(String::as_str)))
}

/// Why `program` could not be run in `cwd` with `env`, naming it, and asking whether it is
/// installed when it was not found.
fn spawn_failure(
    program: &str,
    cwd: &Path,
    env: &BTreeMap<String, String>,
    error: &std::io::Error,
) -> String {
    if !cwd.is_dir() {
        return format!(
            "its working directory {} is not a directory ({program}: {error})",
            cwd.display()
        );
    }
    if error.kind() == std::io::ErrorKind::NotFound {
        let looked = if program.contains('/') {
            format!("`{program}` does not exist (relative to {})", cwd.display())
        } else {
            match env.get("PATH") {
                Some(path) => format!("`{program}` was not found on its PATH ({path})"),
                None => format!("`{program}` was not found (it has no PATH)"),
            }
        };
        return format!("{looked}; is it installed? (see the worker's README)");
    }
    format!("`{program}` in {}: {error}", cwd.display())
}

/// How the stdio server `outside` ended after its handshake `failure`: given [`GRACE`] to end
/// by itself when the connection failed, ended (with everything it started) when it still runs.
async fn stdio_ending(outside: &mut Outside, failure: Unanswered) -> Ending {
    let why = match failure {
        Unanswered::TimedOut(limit) => {
            outside.end().await;
            return Ending::TimedOut(limit);
        }
        Unanswered::Failed(why) => why,
    };
    let ending = match tokio::time::timeout(GRACE, outside.child.wait()).await {
        Ok(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => Ending::Exited(code),
            (None, Some(signal)) => Ending::Signal(signal),
            (None, None) => Ending::Unknown(why, format!("it ended: {status}")),
        },
        Ok(Err(e)) => Ending::Unknown(why, format!("its end is not known: {e}")),
        Err(_) => Ending::Failed(why),
    };
    // Whatever it started goes too, closing their ends of its stderr.
    outside.end().await;
    ending
}

/// The end of a stdio server's stderr, read by a task of its own until the pipe closes (so a
/// chatty server never blocks on it), only the last [`STDERR_TAIL_BYTES`] or so kept.
struct StderrTail {
    kept: Arc<std::sync::Mutex<Kept>>,
    reader: tokio::task::JoinHandle<()>,
}

/// The bytes a [`StderrTail`] kept, and whether earlier ones were dropped.
#[derive(Default)]
struct Kept {
    bytes: Vec<u8>,
    dropped: bool,
}

impl StderrTail {
    /// Starts reading `stderr`.
    fn read(mut stderr: ChildStderr) -> StderrTail {
        let kept = Arc::new(std::sync::Mutex::new(Kept::default()));
        let into = kept.clone();
        let reader = tokio::spawn(async move {
            let mut chunk = vec![0; 8192];
            while let Ok(read @ 1..) = stderr.read(&mut chunk).await {
                let mut kept = into.lock().unwrap_or_else(PoisonError::into_inner);
                kept.bytes.extend_from_slice(&chunk[..read]);
                if kept.bytes.len() > 2 * STDERR_TAIL_BYTES {
                    let excess = kept.bytes.len() - STDERR_TAIL_BYTES;
                    kept.bytes.drain(..excess);
                    kept.dropped = true;
                }
            }
        });
        StderrTail { kept, reader }
    }

    /// What was kept, once the pipe closed or after `within` (UTF-8, invalid sequences
    /// replaced), starting with `…` when earlier bytes were dropped.
    async fn finish(mut self, within: Duration) -> String {
        let _closed = tokio::time::timeout(within, &mut self.reader).await;
        self.reader.abort();
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let text = String::from_utf8_lossy(&kept.bytes);
        if kept.dropped {
            // Its first line is (most likely) only the end of one.
            format!("…{text}")
        } else {
            text.into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_started(ending: Ending, stderr: &str) -> String {
        NotStarted {
            server: "docs".to_owned(),
            command: command_line("node", &["/servers/a b.js".to_owned()]),
            place: Some("in the jail (zones servers, no network)".to_owned()),
            ending,
            stderr: stderr.to_owned(),
        }
        .to_string()
    }

    #[test]
    fn the_error_names_the_server_its_command_its_end_and_its_last_words() {
        assert_eq!(
            not_started(Ending::Exited(2), "warming up\nfailed: bad config\n\n"),
            "MCP server `docs` did not start in the jail (zones servers, no network): \
             `node '/servers/a b.js'` exited with code 2 before initializing; its stderr \
             ended with:\n  warming up\n  failed: bad config"
        );
        assert_eq!(
            not_started(Ending::Exited(127), ""),
            "MCP server `docs` did not start in the jail (zones servers, no network): \
             `node '/servers/a b.js'` exited with code 127 before initializing; it wrote \
             nothing to stderr\nhint: something it needs was not found: is the server \
             installed? (see the worker's README)"
        );
        let silent = not_started(Ending::TimedOut(Duration::from_secs(5)), "npm warn\n");
        assert!(
            silent.contains("did not answer within 5 s of starting; it was stopped")
                && !silent.contains("hint"),
            "{silent}"
        );
    }

    #[test]
    fn only_the_last_lines_are_shown_and_a_cut_is_marked() {
        assert_eq!(last_lines("\n a\nb\n"), [" a", "b"]);
        assert_eq!(last_lines("\n\n"), Vec::<String>::new());
        let many: String = (0..50).map(|i| format!("line {i}\n")).collect();
        let shown = last_lines(&many);
        assert_eq!(shown.len(), STDERR_TAIL_LINES + 1);
        assert_eq!(shown[0], "…");
        assert_eq!(shown[1], "line 30");
        assert_eq!(shown[STDERR_TAIL_LINES], "line 49");
        // Cut by bytes, at a character boundary: the cut line keeps its end, marked.
        let long = format!("{}\nend\n", "é".repeat(STDERR_TAIL_BYTES));
        let shown = last_lines(&long);
        assert_eq!(shown.len(), 2);
        assert!(shown[0].starts_with("…é"), "{shown:?}");
        assert!(shown[0].len() <= STDERR_TAIL_BYTES + "…".len());
        assert_eq!(shown[1], "end");
        let lines: String = (0..STDERR_TAIL_BYTES / 4).map(|_| "abc\n").collect();
        let shown = last_lines(&format!("first\n{lines}"));
        assert_eq!(
            (shown[0].as_str(), shown.len()),
            ("…", STDERR_TAIL_LINES + 1)
        );
    }
}
