//! The tool-call orchestrator: the one path every tool call takes, from the model or from the user
//! (ARCHITECTURE.md, The path of one tool call). Lookup → execution-mode check → argument
//! validation → `Tool::prepare` once (requirement, description, risk, plan) → blocked /
//! pre-approved / asked (session memory, mode, user; the plan's preview only now) → modified
//! arguments validated and prepared again (their plan runs) → execute the plan with a cancellation
//! token → result. Every step is reported on the event bus; nothing else executes tools.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use golem_protocol::{
    ApprovalRequest, ApprovalResolved, DecidedBy, DisplayEvent, InvokedBy, ToolError,
    ToolErrorCode, ToolKind, ToolResultValue, ToolStatus, WorkerOrigin,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalController, ApprovalOutcome, ApprovalRequirement};
use crate::effects::EffectGate;
use crate::fields::derive_fields_from_schema;
use crate::input::InputRequester;
use crate::plan::{Plan, PreparedCall};
use crate::redact::SecretRedactor;
use crate::registry::ToolRegistry;
use crate::tool::{Tool, ToolContext};
use crate::ui::RuntimeUI;

mod call;

pub use call::{CallOutcome, ToolCall};

/// How long a tool may take to wind down by itself after an interrupt before it is dropped.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);

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

/// The gate's verdict for a call that may proceed: the plan to run and the arguments it was
/// prepared from.
struct Cleared {
    args: Value,
    plan: Plan,
    approved_args: Option<Value>,
    decided_by: DecidedBy,
}

/// Why a call stops before it runs.
struct Stopped {
    status: ToolStatus,
    error: ToolError,
    approved_args: Option<Value>,
    decided_by: Option<DecidedBy>,
    /// Parked in the approval inbox under this number.
    deferred: Option<u64>,
}

impl Stopped {
    fn new(status: ToolStatus, code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            error: ToolError::new(code, message),
            approved_args: None,
            decided_by: None,
            deferred: None,
        }
    }

    fn error(error: ToolError) -> Self {
        Self {
            status: status_for(error.code),
            error,
            approved_args: None,
            decided_by: None,
            deferred: None,
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
        let tool_kind = self
            .registry
            .get(&call.name)
            .map_or(ToolKind::Other, |tool| tool.kind());
        let ctx = ToolContext {
            tool_call_id: call.id.clone(),
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
            cancel: cancel.child_token(),
            // Tools may ask the user only while someone can answer.
            input: self
                .ui
                .bus()
                .has_input_answerer()
                .then(|| InputRequester::new(self.ui.clone())),
            effects: Some(
                EffectGate::new(
                    self.controller.clone(),
                    self.ui.clone(),
                    call.id.clone(),
                    call.name.clone(),
                    call.invoked_by,
                    self.worker.clone(),
                )
                .with_kind(tool_kind),
            ),
        };
        let mut deferred = None;
        let (status, mut value, mut error, approved_args, executed_args, decided_by) =
            match self.clear(&call, &ctx).await {
                Err(stopped) => {
                    deferred = stopped.deferred;
                    (
                        stopped.status,
                        stopped.error.to_result_value(),
                        Some(stopped.error),
                        stopped.approved_args,
                        None,
                        stopped.decided_by,
                    )
                }
                Ok((tool, cleared)) => {
                    let Cleared {
                        args,
                        plan,
                        approved_args,
                        decided_by,
                    } = cleared;
                    let (status, value, error) =
                        self.execute(&call, &tool, &args, plan, &ctx).await;
                    (
                        status,
                        value,
                        error,
                        approved_args,
                        Some(args),
                        Some(decided_by),
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
        // A parked call has no result yet: `approvalDeferred` said where it waits.
        if deferred.is_none() {
            self.ui.emit(DisplayEvent::ToolResult {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                tool_kind,
                status,
                args: executed_args.is_none().then(|| call.args.clone()),
                value: value.clone(),
                duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
                invoked_by: call.invoked_by,
                worker: self.worker.clone(),
            });
        }
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
            deferred,
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

        let prepared = self
            .prepare(call, &tool, &call.args, ctx)
            .await
            .map_err(Stopped::error)?;
        match prepared
            .requirement
            .clone()
            .unwrap_or(ApprovalRequirement::Ask)
        {
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
                        plan: prepared.plan,
                        approved_args: None,
                        decided_by: DecidedBy::Policy,
                    },
                ))
            }
            ApprovalRequirement::Ask => self.ask(call, tool, prepared, None, ctx).await,
            ApprovalRequirement::AskUser { warning } => {
                self.ask(call, tool, prepared, Some(warning), ctx).await
            }
        }
    }

    /// `Tool::prepare`, with a panic turned into `EXECUTION_ERROR` and an interrupt into
    /// `INTERRUPTED`.
    async fn prepare(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<PreparedCall, ToolError> {
        // A tool may do its work in `prepare` itself or in the future it returns.
        let preparing = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.prepare(args, ctx)))
        {
            Ok(preparing) => preparing,
            Err(panic) => return Err(panicked(&call.name, &*panic)),
        };
        let prepare = AssertUnwindSafe(preparing).catch_unwind();
        tokio::select! {
            biased;
            prepared = prepare => prepared.unwrap_or_else(|panic| Err(panicked(&call.name, &*panic))),
            () = ctx.cancel.cancelled() => Err(ToolError::new(
                ToolErrorCode::Interrupted,
                format!("{} was not run: interrupted", call.name),
            )),
        }
    }

    /// Asks for consent; with `for_user` (the warning of an `AskUser` requirement, added to
    /// the description on a line of its own) only a person may give it.
    async fn ask(
        &self,
        call: &ToolCall,
        tool: Arc<dyn Tool>,
        prepared: PreparedCall,
        for_user: Option<String>,
        ctx: &ToolContext,
    ) -> Result<(Arc<dyn Tool>, Cleared), Stopped> {
        let PreparedCall {
            description,
            risk,
            mut plan,
            ..
        } = prepared;
        let request_id = self.ui.bus().next_request_id("approval");
        let request = ApprovalRequest {
            request_id: request_id.clone(),
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            tool_kind: tool.kind(),
            args: call.args.clone(),
            description: {
                let description = description.unwrap_or_else(|| describe(&call.name, &call.args));
                match &for_user {
                    Some(warning) => format!("{description}\n{warning}"),
                    None => description,
                }
            },
            risk,
            preview: plan.preview(),
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
            fields: derive_fields_from_schema(tool.input_schema()),
            editable: true,
        };
        let asked = request.clone();
        let outcome = match for_user {
            Some(_) => self.controller.decide_by_user(request, &ctx.cancel).await,
            None => self.controller.decide(request, &ctx.cancel).await,
        };
        let (response, decided_by) = match outcome {
            ApprovalOutcome::Interrupted => return Err(Stopped::interrupted(&call.name)),
            ApprovalOutcome::Deferred { inbox_id } => {
                self.ui.emit(DisplayEvent::ApprovalDeferred {
                    request: asked,
                    inbox_id: Some(inbox_id),
                });
                return Err(Stopped {
                    deferred: Some(inbox_id),
                    ..Stopped::new(
                        ToolStatus::Interrupted,
                        ToolErrorCode::Interrupted,
                        format!("{} waits for an approval (inbox {inbox_id})", call.name),
                    )
                });
            }
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
                    plan,
                    approved_args: None,
                    decided_by,
                },
            ));
        };
        // Edited arguments are validated and prepared again (checked for Blocked, and by the
        // tool for what it checks); they are not re-asked. Their plan is what runs.
        let checked = match self.registry.validate(&call.name, &modified) {
            Err(e) => Err(ToolError::new(
                e.code,
                format!("the edited arguments are invalid: {}", e.message),
            )),
            Ok(()) => self
                .prepare_edited(call, &tool, &modified, ctx)
                .await
                .map(|mut edited| {
                    edited.follow(&plan);
                    edited
                }),
        };
        match checked {
            Ok(plan) => {
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
                        plan,
                        approved_args: Some(modified),
                        decided_by,
                    },
                ))
            }
            Err(error) => {
                let status = status_for(error.code);
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
                    deferred: None,
                })
            }
        }
    }

    /// The plan for arguments the user edited; a blocked edited call is refused.
    async fn prepare_edited(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        modified: &Value,
        ctx: &ToolContext,
    ) -> Result<Plan, ToolError> {
        let prepared = self
            .prepare(call, tool, modified, ctx)
            .await
            .map_err(|e| match e.code {
                ToolErrorCode::InvalidArguments => ToolError::new(
                    e.code,
                    format!("the edited arguments are invalid: {}", e.message),
                ),
                _ => e,
            })?;
        match prepared.requirement {
            Some(ApprovalRequirement::Blocked { reason }) => Err(ToolError::new(
                ToolErrorCode::Blocked,
                format!("the edited call is blocked: {reason}"),
            )),
            Some(
                ApprovalRequirement::PreApproved
                | ApprovalRequirement::Ask
                | ApprovalRequirement::AskUser { .. },
            )
            | None => Ok(prepared.plan),
        }
    }

    async fn execute(
        &self,
        call: &ToolCall,
        tool: &Arc<dyn Tool>,
        args: &Value,
        plan: Plan,
        ctx: &ToolContext,
    ) -> (ToolStatus, ToolResultValue, Option<ToolError>) {
        self.ui.emit(DisplayEvent::ToolStarted {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            tool_kind: tool.kind(),
            args: args.clone(),
            invoked_by: call.invoked_by,
            worker: self.worker.clone(),
        });
        let run = AssertUnwindSafe(tool.execute(plan, ctx)).catch_unwind();
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
            Some(Err(panic)) => Err(panicked(&call.name, &*panic)),
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
            Err(error) => (status_for(error.code), error.to_result_value(), Some(error)),
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

/// The status of a call that ended with an error of `code`.
fn status_for(code: ToolErrorCode) -> ToolStatus {
    match code {
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
    }
}

/// `EXECUTION_ERROR` for a tool that panicked.
fn panicked(tool: &str, panic: &(dyn std::any::Any + Send)) -> ToolError {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    tracing::error!(tool = %tool, panic = %what, "tool panicked");
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!("{tool} failed unexpectedly: {what}"),
    )
}

/// The description of a call whose tool gave none: `Run <tool> with <arguments>`.
fn describe(tool: &str, args: &Value) -> String {
    let args = serde_json::to_string(args).unwrap_or_default();
    format!("Run {tool} with {}", crate::text::fold(&args, 200))
}

#[cfg(test)]
mod tests;
