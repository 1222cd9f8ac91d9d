//! The tool-call orchestrator: the one path every tool call takes, from the model or from the
//! user (DESIGN.md §2). Lookup → execution-mode check → argument validation → the tool's
//! approval requirement → blocked / pre-approved / asked (session memory, mode, user) →
//! modified arguments re-validated and re-checked → execute with a cancellation token → result.
//! Every step is reported on the event bus; nothing else executes tools.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use golem_protocol::{
    ApprovalRequest, ApprovalResolved, DecidedBy, DisplayEvent, InvokedBy, ToolError,
    ToolErrorCode, ToolResultValue, ToolStatus, WorkerOrigin,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalController, ApprovalOutcome, ApprovalRequirement};
use crate::redact::SecretRedactor;
use crate::registry::ToolRegistry;
use crate::tool::{Tool, ToolContext};
use crate::ui::RuntimeUI;

/// How long a tool may take to wind down by itself after an interrupt before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

/// One requested tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The call's id (from the model, or made up for manual calls).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The proposed arguments.
    pub args: Value,
    /// Why the arguments could not be read, when the model sent malformed JSON.
    pub malformed_args: Option<String>,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
}

impl ToolCall {
    /// A call from the model.
    pub fn from_model(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            args,
            malformed_args: None,
            invoked_by: InvokedBy::Model,
        }
    }

    /// A call from the user (a slash command or a form).
    pub fn from_user(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        Self {
            invoked_by: InvokedBy::User,
            ..Self::from_model(id, name, args)
        }
    }

    /// A call from the model whose arguments were not valid JSON.
    pub fn malformed(
        id: impl Into<String>,
        name: impl Into<String>,
        raw: &str,
        error: impl Into<String>,
    ) -> Self {
        Self {
            malformed_args: Some(error.into()),
            ..Self::from_model(id, name, Value::String(raw.to_owned()))
        }
    }
}

/// What became of a call: its status, the result value (a `tool_error` value on failure), and
/// the arguments as proposed, approved and executed, kept apart for the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// Who asked for the call.
    pub invoked_by: InvokedBy,
    /// The outcome.
    pub status: ToolStatus,
    /// The result, or the error as a `tool_error` value.
    pub value: ToolResultValue,
    /// The error, when the call did not succeed.
    pub error: Option<ToolError>,
    /// The arguments as proposed.
    pub proposed_args: Value,
    /// The arguments as edited by the user at approval, if edited.
    pub approved_args: Option<Value>,
    /// The arguments the tool ran with, if it ran.
    pub executed_args: Option<Value>,
    /// Who decided at the gate, if the call reached it.
    pub decided_by: Option<DecidedBy>,
    /// From reaching the orchestrator to the end.
    pub duration: Duration,
}

impl CallOutcome {
    /// Whether the model should see this result as an error.
    pub fn is_error(&self) -> bool {
        self.status != ToolStatus::Success
    }

    /// The text sent back to the model.
    pub fn model_text(&self) -> String {
        match &self.error {
            Some(error) => format!("Error [{}]: {}", error.code, error.message),
            None => self.value.to_model_text(),
        }
    }
}

/// Runs tool calls through the gate. Cheap to clone; shared by a worker's loop and its
/// front end's manual invocations.
#[derive(Clone)]
pub struct ToolCallOrchestrator {
    registry: Arc<ToolRegistry>,
    controller: ApprovalController,
    ui: RuntimeUI,
    worker: Option<WorkerOrigin>,
    redactor: Option<Arc<SecretRedactor>>,
}

impl std::fmt::Debug for ToolCallOrchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCallOrchestrator")
            .field("registry", &self.registry)
            .field("controller", &self.controller)
            .finish_non_exhaustive()
    }
}

/// The gate's verdict for a call that may proceed: the arguments to run with.
struct Cleared {
    args: Value,
    approved_args: Option<Value>,
    decided_by: DecidedBy,
}

/// Why a call stops before it runs.
struct Stopped {
    status: ToolStatus,
    error: ToolError,
    approved_args: Option<Value>,
    decided_by: Option<DecidedBy>,
}

impl Stopped {
    fn new(status: ToolStatus, code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            error: ToolError::new(code, message),
            approved_args: None,
            decided_by: None,
        }
    }

    fn error(error: ToolError) -> Self {
        Self {
            status: ToolStatus::Error,
            error,
            approved_args: None,
            decided_by: None,
        }
    }

    fn interrupted(tool: &str) -> Self {
        Self::new(
            ToolStatus::Interrupted,
            ToolErrorCode::Interrupted,
            format!("{tool} was not run: interrupted"),
        )
    }
}

impl ToolCallOrchestrator {
    /// An orchestrator over `registry`, deciding asked calls with `controller` and reporting on
    /// `ui`.
    pub fn new(registry: Arc<ToolRegistry>, controller: ApprovalController, ui: RuntimeUI) -> Self {
        Self {
            registry,
            controller,
            ui,
            worker: None,
            redactor: None,
        }
    }

    /// Replaces secret values in every result and error before they leave the call.
    pub fn with_redactor(mut self, redactor: Arc<SecretRedactor>) -> Self {
        self.redactor = Some(redactor).filter(|r| !r.is_empty());
        self
    }

    /// Marks events as coming from a delegated worker.
    pub fn with_worker(mut self, worker: WorkerOrigin) -> Self {
        self.worker = Some(worker);
        self
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The approval controller.
    pub fn controller(&self) -> &ApprovalController {
        &self.controller
    }

    /// Runs one call through the whole path. `cancel` is the interrupt: a cancelled token stops
    /// the call wherever it is, and a call that has not started is not run.
    pub async fn call(&self, call: ToolCall, cancel: &CancellationToken) -> CallOutcome {
        let started = Instant::now();
        let ctx = ToolContext {
            tool_call_id: call.id.clone(),
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
            cancel: cancel.child_token(),
        };
        let (status, mut value, mut error, approved_args, executed_args, decided_by) =
            match self.clear(&call, &ctx).await {
                Err(stopped) => (
                    stopped.status,
                    stopped.error.to_result_value(),
                    Some(stopped.error),
                    stopped.approved_args,
                    None,
                    stopped.decided_by,
                ),
                Ok((tool, cleared)) => {
                    let (status, value, error) =
                        self.execute(&call, &tool, cleared.args.clone(), &ctx).await;
                    (
                        status,
                        value,
                        error,
                        cleared.approved_args,
                        Some(cleared.args),
                        Some(cleared.decided_by),
                    )
                }
            };
        if let Some(redactor) = &self.redactor {
            redactor.redact_result(&mut value);
            if let Some(error) = &mut error {
                redactor.redact_error(error);
            }
        }
        let duration = started.elapsed();
        self.ui.emit(DisplayEvent::ToolResult {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            status,
            value: value.clone(),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
        });
        CallOutcome {
            tool_call_id: call.id,
            tool_name: call.name,
            invoked_by: call.invoked_by,
            status,
            value,
            error,
            proposed_args: call.args,
            approved_args,
            executed_args,
            decided_by,
            duration,
        }
    }

    /// Lookup, mode check, validation and the approval gate.
    async fn clear(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
    ) -> Result<(Arc<dyn Tool>, Cleared), Stopped> {
        if ctx.cancel.is_cancelled() {
            return Err(Stopped::interrupted(&call.name));
        }
        let Some(tool) = self.registry.get(&call.name).cloned() else {
            return Err(Stopped::error(self.registry.not_found(&call.name)));
        };
        let mode = tool.execution().mode;
        match call.invoked_by {
            InvokedBy::Model if !mode.is_llm_visible() => {
                return Err(Stopped::new(
                    ToolStatus::Error,
                    ToolErrorCode::NotFound,
                    format!(
                        "Tool not found: {} (it can only be invoked by the user)",
                        call.name
                    ),
                ));
            }
            InvokedBy::User if !mode.is_manual_invocable() => {
                return Err(Stopped::new(
                    ToolStatus::Error,
                    ToolErrorCode::NotFound,
                    format!(
                        "{} is not a manual tool; only the model can call it",
                        call.name
                    ),
                ));
            }
            InvokedBy::Model | InvokedBy::User => {}
        }
        if let Some(error) = &call.malformed_args {
            return Err(Stopped::new(
                ToolStatus::Error,
                ToolErrorCode::InvalidArguments,
                format!(
                    "arguments for {} are not valid JSON: {error}; send a JSON object",
                    call.name
                ),
            ));
        }
        self.registry
            .validate(&call.name, &call.args)
            .map_err(Stopped::error)?;

        let requirement = tool
            .approval(&call.args, ctx)
            .unwrap_or(ApprovalRequirement::Ask);
        match requirement {
            ApprovalRequirement::Blocked { reason } => {
                self.resolved(
                    call,
                    None,
                    false,
                    DecidedBy::Policy,
                    Some(reason.clone()),
                    None,
                );
                Err(Stopped {
                    decided_by: Some(DecidedBy::Policy),
                    ..Stopped::new(ToolStatus::Blocked, ToolErrorCode::Blocked, reason)
                })
            }
            ApprovalRequirement::PreApproved => {
                self.resolved(call, None, true, DecidedBy::Policy, None, None);
                Ok((
                    tool,
                    Cleared {
                        args: call.args.clone(),
                        approved_args: None,
                        decided_by: DecidedBy::Policy,
                    },
                ))
            }
            ApprovalRequirement::Ask => self.ask(call, tool, ctx).await,
        }
    }

    async fn ask(
        &self,
        call: &ToolCall,
        tool: Arc<dyn Tool>,
        ctx: &ToolContext,
    ) -> Result<(Arc<dyn Tool>, Cleared), Stopped> {
        let request_id = self.ui.bus().next_request_id("approval");
        let request = ApprovalRequest {
            request_id: request_id.clone(),
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: call.args.clone(),
            description: tool.describe_call(&call.args),
            risk: tool.risk(&call.args),
            preview: tool.preview(&call.args, ctx).await,
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
        };
        let (response, decided_by) = match self.controller.decide(request, &ctx.cancel).await {
            ApprovalOutcome::Interrupted => return Err(Stopped::interrupted(&call.name)),
            ApprovalOutcome::Decided {
                response,
                decided_by,
            } => (response, decided_by),
        };
        let rid = Some(request_id);
        if !response.approved {
            self.resolved(call, rid, false, decided_by, response.note.clone(), None);
            let message = match (decided_by, response.note) {
                (DecidedBy::User, Some(note)) => format!("The user denied {}: {note}", call.name),
                (DecidedBy::User, None) => format!("The user denied {}", call.name),
                (_, Some(note)) => note,
                (_, None) => format!("{} was denied", call.name),
            };
            return Err(Stopped {
                decided_by: Some(decided_by),
                ..Stopped::new(ToolStatus::Denied, ToolErrorCode::Denied, message)
            });
        }
        let Some(modified) = response.modified_args else {
            self.resolved(call, rid, true, decided_by, response.note, None);
            return Ok((
                tool,
                Cleared {
                    args: call.args.clone(),
                    approved_args: None,
                    decided_by,
                },
            ));
        };
        // Edited arguments are validated and checked for Blocked again; they are not re-asked.
        let checked = self
            .registry
            .validate(&call.name, &modified)
            .map_err(|e| {
                ToolError::new(
                    e.code,
                    format!("the edited arguments are invalid: {}", e.message),
                )
            })
            .and_then(|()| match tool.approval(&modified, ctx) {
                Some(ApprovalRequirement::Blocked { reason }) => Err(ToolError::new(
                    ToolErrorCode::Blocked,
                    format!("the edited call is blocked: {reason}"),
                )),
                Some(ApprovalRequirement::PreApproved | ApprovalRequirement::Ask) | None => Ok(()),
            });
        match checked {
            Ok(()) => {
                self.resolved(
                    call,
                    rid,
                    true,
                    decided_by,
                    response.note,
                    Some(modified.clone()),
                );
                Ok((
                    tool,
                    Cleared {
                        args: modified.clone(),
                        approved_args: Some(modified),
                        decided_by,
                    },
                ))
            }
            Err(error) => {
                let status = if error.code == ToolErrorCode::Blocked {
                    ToolStatus::Blocked
                } else {
                    ToolStatus::Error
                };
                let by = if status == ToolStatus::Blocked {
                    DecidedBy::Policy
                } else {
                    decided_by
                };
                self.resolved(
                    call,
                    rid,
                    false,
                    by,
                    Some(error.message.clone()),
                    Some(modified.clone()),
                );
                Err(Stopped {
                    status,
                    error,
                    approved_args: Some(modified),
                    decided_by: Some(by),
                })
            }
        }
    }

    async fn execute(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: Value,
        ctx: &ToolContext,
    ) -> (ToolStatus, ToolResultValue, Option<ToolError>) {
        self.ui.emit(DisplayEvent::ToolStarted {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            args: args.clone(),
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
        });
        let run = AssertUnwindSafe(tool.execute(args, ctx)).catch_unwind();
        tokio::pin!(run);
        let finished = tokio::select! {
            finished = &mut run => Some(finished),
            () = ctx.cancel.cancelled() => {
                // Give the tool a moment to stop by itself and report partial output.
                tokio::time::timeout(INTERRUPT_GRACE, &mut run).await.ok()
            }
        };
        let result = match finished {
            None => Err(ToolError::new(
                ToolErrorCode::Interrupted,
                format!("{} was interrupted", call.name),
            )),
            Some(Err(panic)) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                tracing::error!(tool = %call.name, panic = %what, "tool panicked");
                Err(ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!("{} failed unexpectedly: {what}", call.name),
                ))
            }
            Some(Ok(result)) => result,
        };
        match result {
            Ok(value) if value.has_valid_kind() => (ToolStatus::Success, value, None),
            Ok(value) => {
                let error = ToolError::new(
                    ToolErrorCode::ExecutionError,
                    format!(
                        "{} returned a result of invalid kind `{}`",
                        call.name, value.kind
                    ),
                );
                (ToolStatus::Error, error.to_result_value(), Some(error))
            }
            Err(error) => {
                let status = match error.code {
                    ToolErrorCode::Interrupted => ToolStatus::Interrupted,
                    ToolErrorCode::Blocked => ToolStatus::Blocked,
                    ToolErrorCode::Denied => ToolStatus::Denied,
                    ToolErrorCode::InvalidPath
                    | ToolErrorCode::FileNotFound
                    | ToolErrorCode::PermissionDenied
                    | ToolErrorCode::Timeout
                    | ToolErrorCode::ExecutionError
                    | ToolErrorCode::InvalidArguments
                    | ToolErrorCode::NotFound => ToolStatus::Error,
                };
                (status, error.to_result_value(), Some(error))
            }
        }
    }

    fn resolved(
        &self,
        call: &ToolCall,
        request_id: Option<String>,
        approved: bool,
        decided_by: DecidedBy,
        note: Option<String>,
        modified_args: Option<Value>,
    ) {
        self.ui
            .emit(DisplayEvent::ApprovalResolved(ApprovalResolved {
                request_id,
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                approved,
                decided_by,
                note,
                modified_args,
                worker: self.worker.clone(),
            }));
    }
}

#[cfg(test)]
mod tests;
