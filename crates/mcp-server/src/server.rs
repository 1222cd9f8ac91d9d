//! The MCP server: [`McpServer`] is the `rmcp` handler behind both transports. `tools/list`
//! lists the [`Catalog`]; `tools/call` checks the arguments (a wrong shape is an error result
//! the model can correct, an unknown tool a protocol error), decides how the call's approvals
//! are settled, and runs it ([`crate::call`]).
//!
//! Approvals: a client that declared the elicitation capability is asked (`interactive`);
//! for one that did not, a call that would ask is denied, saying that the client cannot ask a
//! person and naming `--approval approve_all` and `--approval defer`. An explicit
//! `--approval approve_all|auto_deny|defer`, else the worker's program config's
//! `approval.mode`, decides for every client instead.
//! Clients of protocol 2025-11-25 and before are asked with an `elicitation/create` request
//! while the call runs; clients of 2026-07-28, which forbids requests from the server, get
//! an input-required result carrying the same elicitation, and the call waits (parked here,
//! for at most [`PARK_LIMIT`]) until they call again with the answer and its `requestState`.
//!
//! Questions tools ask while they run (`inputRequired`, such as an MCP toolset's own
//! elicitation): a client that declared the elicitation capability gets the call's session
//! attached interactively, and each question goes to it the way approvals do (a request, or
//! an input-required result); for other clients the tools decline by themselves.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use golem_core::approval::ApprovalMode;
use golem_runtime::budget::BudgetLimits;
use golem_runtime::host::{HostOptions, HostWorker};
use rand::RngExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequest,
    ElicitResult, ElicitationCapability, Implementation, InputRequest, InputRequests,
    InputRequiredResult, JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::call::{CallIo, CallReport, CallRun, Driven};
use crate::catalog::{Catalog, WorkerEntry};
use crate::question::Question;

/// How long a call waits for a 2026-07-28 client to come back with the answer to an approval
/// or a tool's question before its session is ended as interrupted.
pub const PARK_LIMIT: Duration = Duration::from_secs(600);

/// The options every call's session is opened with (the command line's).
#[derive(Debug, Clone, Default)]
pub struct CallSettings {
    /// `--model`.
    pub model: Option<String>,
    /// `GOLEM_FORGE_MODEL`.
    pub env_model: Option<String>,
    /// `--approval`, when given.
    pub approval: Option<ApprovalMode>,
    /// `--max-iterations`.
    pub max_iterations: Option<u32>,
    /// The binary that runs the process jail's helper mode.
    pub jail_helper: Option<PathBuf>,
    /// Limits of each call, besides the worker's own `budget:`.
    pub budget: BudgetLimits,
}

/// Told about every call that ends (the command line logs them on stderr).
pub type CallObserver = Arc<dyn Fn(&CallReport) + Send + Sync>;

/// The server: its workers, the settings of their sessions, and the calls in progress.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
}

struct Inner {
    catalog: Catalog,
    settings: CallSettings,
    observer: Option<CallObserver>,
    parked: Mutex<HashMap<String, Parked>>,
    running: AtomicUsize,
    idle: Notify,
    hurry: CancellationToken,
}

/// A call waiting for a 2026-07-28 client's answer to a question.
struct Parked {
    run: CallRun,
    question: Question,
}

/// Counts a call in progress while it lives.
struct Running(Arc<Inner>);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl McpServer {
    /// A server of the workers in `catalog`, telling `observer` (if any) about every call
    /// that ends.
    pub fn new(catalog: Catalog, settings: CallSettings, observer: Option<CallObserver>) -> Self {
        Self {
            inner: Arc::new(Inner {
                catalog,
                settings,
                observer,
                parked: Mutex::new(HashMap::new()),
                running: AtomicUsize::new(0),
                idle: Notify::new(),
                hurry: CancellationToken::new(),
            }),
        }
    }

    /// The workers.
    pub fn catalog(&self) -> &Catalog {
        &self.inner.catalog
    }

    /// Ends the sessions of the calls in progress at once, as interrupted, instead of letting
    /// their turns wind down (the server was asked to stop again).
    pub fn hurry(&self) {
        self.inner.hurry.cancel();
    }

    /// Waits (at most `limit`) for the calls in progress to end, then ends the calls parked
    /// for an approval's answer. Called once the transport is closed, whose cancellation has
    /// interrupted every call in progress.
    pub async fn wind_down(&self, limit: Duration) {
        let calls = async {
            loop {
                let idle = self.inner.idle.notified();
                if self.inner.running.load(Ordering::SeqCst) == 0 {
                    break;
                }
                idle.await;
            }
        };
        if tokio::time::timeout(limit, calls).await.is_err() {
            tracing::warn!("calls still running after {limit:?}; leaving them");
        }
        let parked: Vec<Parked> = self.parked().drain().map(|(_, parked)| parked).collect();
        for parked in parked {
            parked.run.abandon().await;
        }
    }

    fn parked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.inner
            .parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn enter(&self) -> Running {
        self.inner.running.fetch_add(1, Ordering::SeqCst);
        Running(self.inner.clone())
    }

    /// How a call of `entry` settles approvals: `--approval`, else the program config's, else
    /// `interactive` (asked through elicitation, or denied when the client cannot elicit).
    fn mode_for(&self, entry: &WorkerEntry) -> ApprovalMode {
        match self.inner.settings.approval.or(entry.config_mode) {
            Some(ApprovalMode::ApproveAll) => ApprovalMode::ApproveAll,
            Some(ApprovalMode::AutoDeny) => ApprovalMode::AutoDeny,
            Some(ApprovalMode::Defer) => ApprovalMode::Defer,
            // A client that cannot elicit is attached as nobody who answers approvals, so a
            // call that would ask is denied saying why (`call::UNATTENDED`).
            Some(ApprovalMode::Interactive) | None => ApprovalMode::Interactive,
        }
    }

    fn host_options(&self, entry: &WorkerEntry, mode: ApprovalMode) -> HostOptions {
        let settings = &self.inner.settings;
        HostOptions {
            worker: HostWorker::File(entry.path.clone()),
            model: settings.model.clone(),
            env_model: settings.env_model.clone(),
            approval: Some(mode),
            max_iterations: settings.max_iterations,
            record: None,
            jail_helper: settings.jail_helper.clone(),
            keeps_history: false,
            budget: settings.budget,
            instructions: None,
            batch_item: None,
            mcp_servers: Default::default(),
            ready_model: None,
            scratch: None,
            trace: Default::default(),
        }
    }

    /// Runs `run` on with the request `context` (which arrived at `received`): to its end, or,
    /// for a client of 2026-07-28 (`modern`), to the next question (an approval, or a tool's),
    /// which goes back as an input-required result.
    async fn drive(
        &self,
        mut run: CallRun,
        context: &RequestContext<RoleServer>,
        received: Instant,
        modern: bool,
    ) -> CallToolResponse {
        let mut io = CallIo::new(context, received, self.inner.hurry.clone());
        match run.drive(&mut io, !modern).await {
            Driven::Finished(result) => {
                if let Some(observer) = &self.inner.observer {
                    let status = result
                        .structured_content
                        .as_ref()
                        .and_then(|s| s.get("status"))
                        .and_then(Value::as_str)
                        .unwrap_or("failed");
                    observer(&run.report(status, &io));
                }
                result.into()
            }
            Driven::Question(question) => {
                let handle = new_handle();
                let mut requests = InputRequests::new();
                requests.insert(
                    question.key().to_owned(),
                    InputRequest::Elicitation(ElicitRequest::new(
                        question.request_params(run.worker()),
                    )),
                );
                self.parked()
                    .insert(handle.clone(), Parked { run, question });
                let server = self.clone();
                let expiring = handle.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(PARK_LIMIT).await;
                    let parked = server.parked().remove(&expiring);
                    if let Some(parked) = parked {
                        tracing::info!(
                            "a question waited {PARK_LIMIT:?} for its answer; ending its call"
                        );
                        parked.run.abandon().await;
                    }
                });
                InputRequiredResult::new(Some(requests), Some(handle)).into()
            }
        }
    }

    /// A 2026-07-28 client's next round of a parked call, with the question's answer.
    async fn resume(
        &self,
        request: CallToolRequestParams,
        state: &str,
        context: &RequestContext<RoleServer>,
        received: Instant,
    ) -> CallToolResponse {
        let parked = {
            let mut parked = self.parked();
            match parked.get(state) {
                Some(p) if p.run.worker() == request.name => parked.remove(state),
                Some(_) | None => None,
            }
        };
        let Some(parked) = parked else {
            return error_result(
                "no call of this tool is waiting under this requestState: it was answered \
                 already, or waited too long for the answer"
                    .to_owned(),
            )
            .into();
        };
        let answer = request
            .input_responses
            .as_ref()
            .and_then(|responses| responses.get(parked.question.key()))
            .and_then(|value| serde_json::from_value::<ElicitResult>(value.clone()).ok());
        let response = match answer {
            Some(answer) => parked.question.response(&answer),
            None => parked.question.unavailable("no answer came back"),
        };
        parked.run.answer(response);
        self.drive(parked.run, context, received, true).await
    }
}

/// Whether the request's client speaks protocol 2026-07-28 or later (no server requests).
fn is_modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the request's client can answer form elicitation.
fn elicits(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e: ElicitationCapability| e.form.is_some() || e.url.is_none())
}

/// The input of a call from its arguments: `input`, with `instructions` added as delegation
/// adds them; a wrong shape is a message for an error result.
pub(crate) fn input_of(arguments: Option<&JsonObject>) -> Result<String, String> {
    let empty = JsonObject::new();
    let arguments = arguments.unwrap_or(&empty);
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !matches!(k.as_str(), "input" | "instructions"))
    {
        return Err(format!(
            "invalid arguments: unknown argument `{unknown}` (the arguments are `input`, a \
             string, and optionally `instructions`, a string)"
        ));
    }
    let input = match arguments.get("input") {
        Some(Value::String(input)) => input.clone(),
        Some(other) => {
            return Err(format!(
                "invalid arguments: `input` must be a string, not {}",
                type_name(other)
            ));
        }
        None => {
            return Err(
                "invalid arguments: `input` is required (the task for the worker, a string)"
                    .to_owned(),
            );
        }
    };
    if input.trim().is_empty() {
        return Err("invalid arguments: `input` is empty".to_owned());
    }
    match arguments.get("instructions") {
        None | Some(Value::Null) => Ok(input),
        Some(Value::String(extra)) if extra.trim().is_empty() => Ok(input),
        Some(Value::String(extra)) => {
            Ok(format!("{input}\n\nInstructions for this task:\n{extra}"))
        }
        Some(other) => Err(format!(
            "invalid arguments: `instructions` must be a string, not {}",
            type_name(other)
        )),
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A fresh handle of 128 random bits, as hex.
pub(crate) fn new_handle() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let names = self.inner.catalog.names();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("golem-forge", env!("CARGO_PKG_VERSION"))
                    .with_title("Golem Forge workers"),
            )
            .with_instructions(format!(
                "Each tool runs a Golem Forge worker ({}) on a task: give it `input` (and \
                 optionally `instructions`). Its file changes stay inside its zones and may \
                 ask for approval; the result lists its tool calls and the files it changed.",
                names.join(", ")
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.catalog.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.catalog.get(name).map(|e| e.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let received = Instant::now();
        let _running = self.enter();
        if let Some(state) = request.request_state.clone() {
            return Ok(self.resume(request, &state, &context, received).await);
        }
        let Some(entry) = self.inner.catalog.get(&request.name).cloned() else {
            let names = self.inner.catalog.names();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{}`: this server has {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        };
        let input = match input_of(request.arguments.as_ref()) {
            Ok(input) => input,
            Err(message) => return Ok(error_result(message).into()),
        };
        let elicits = elicits(&context);
        let mode = self.mode_for(&entry);
        let options = self.host_options(&entry, mode);
        let run = match CallRun::start(entry, options, input, elicits).await {
            Ok(run) => run,
            Err(message) => return Ok(error_result(message).into()),
        };
        Ok(self
            .drive(run, &context, received, is_modern(&context))
            .await)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn arguments_are_an_input_and_optional_instructions() {
        assert_eq!(
            input_of(Some(&args(json!({"input": "do it"})))),
            Ok("do it".into())
        );
        assert_eq!(
            input_of(Some(&args(
                json!({"input": "do it", "instructions": "carefully"})
            ))),
            Ok("do it\n\nInstructions for this task:\ncarefully".into())
        );
        assert_eq!(
            input_of(Some(&args(json!({"input": "do it", "instructions": " "})))),
            Ok("do it".into())
        );
        for (bad, why) in [
            (json!({}), "`input` is required"),
            (
                json!({"input": 3}),
                "`input` must be a string, not a number",
            ),
            (json!({"input": "  "}), "`input` is empty"),
            (
                json!({"input": "x", "instructions": ["a"]}),
                "`instructions` must be a string",
            ),
            (
                json!({"input": "x", "extra": 1}),
                "unknown argument `extra`",
            ),
        ] {
            let message = input_of(Some(&args(bad.clone()))).unwrap_err();
            assert!(message.contains(why), "{bad}: {message}");
        }
        assert!(input_of(None).unwrap_err().contains("`input` is required"));
    }

    #[test]
    fn handles_are_fresh_128_bit_hex() {
        let (a, b) = (new_handle(), new_handle());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
