//! Tests of the prepared call through the orchestrator: one `prepare` per call, the preview
//! only when the gate asks, edited arguments prepared again (their plan runs, a blocked one is
//! refused), and a `prepare` that fails, panics or is interrupted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use golem_protocol::{ApprovalResponse, Risk};
use serde::Deserialize;
use serde_json::json;

use crate::approval::{ApprovalCallback, ApprovalMode};
use crate::bus::{DisplaySubscription, UiEventBus};
use crate::orchestrator::*;
use crate::plan::CallPlan;
use crate::tool::TypedTool;

#[derive(Deserialize)]
struct WriteArgs {
    path: String,
}

/// What the test tool saw.
#[derive(Default)]
struct Probe {
    prepared: Mutex<Vec<String>>,
    previews: AtomicUsize,
    /// Each executed plan's path and the path of the plan it followed.
    executed: Mutex<Vec<(String, Option<String>)>>,
}

struct WritePlan {
    path: String,
    followed: Option<String>,
    probe: Arc<Probe>,
}

impl CallPlan for WritePlan {
    fn preview(&mut self) -> Option<ToolResultValue> {
        self.probe.previews.fetch_add(1, Ordering::SeqCst);
        Some(ToolResultValue::text(format!("diff of {}", self.path)))
    }

    fn follow(&mut self, shown: &Self) {
        self.followed = Some(shown.path.clone());
    }
}

/// A writer whose requirement depends on the path: `/etc/…` blocked, `/auto/…` pre-approved,
/// anything else asks; `/panic` panics and `/hang` never finishes preparing.
struct Writer {
    probe: Arc<Probe>,
    schema: Value,
}

#[async_trait::async_trait]
impl TypedTool for Writer {
    type Args = WriteArgs;
    type Plan = WritePlan;

    fn name(&self) -> &str {
        "w"
    }

    fn description(&self) -> &str {
        "writes"
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    async fn prepare(
        &self,
        args: WriteArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<WritePlan>, ToolError> {
        self.probe.prepared.lock().unwrap().push(args.path.clone());
        let requirement = match args.path.as_str() {
            "/panic" => panic!("prepare exploded"),
            "/hang" => futures::future::pending().await,
            path if path.starts_with("/etc/") => ApprovalRequirement::blocked("system files"),
            path if path.starts_with("/auto/") => ApprovalRequirement::PreApproved,
            _ => ApprovalRequirement::Ask,
        };
        Ok(PreparedCall::new(WritePlan {
            path: args.path.clone(),
            followed: None,
            probe: self.probe.clone(),
        })
        .with_requirement(requirement)
        .with_description(format!("Write {}", args.path))
        .with_risk(Risk::High))
    }

    async fn execute(
        &self,
        plan: WritePlan,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        self.probe
            .executed
            .lock()
            .unwrap()
            .push((plan.path, plan.followed));
        Ok(ToolResultValue::text("done"))
    }
}

struct Setup {
    orchestrator: ToolCallOrchestrator,
    probe: Arc<Probe>,
    requests: Arc<Mutex<Vec<ApprovalRequest>>>,
    events: DisplaySubscription,
}

impl Setup {
    /// The writer behind an interactive gate whose user approves, with `modified` arguments
    /// when given.
    fn new(modified: Option<Value>) -> Setup {
        let probe = Arc::new(Probe::default());
        // `path` is not required, so that `{}` passes validation and fails to decode.
        let schema = json!({"type": "object", "properties": {"path": {"type": "string"}}});
        let mut registry = ToolRegistry::new();
        registry
            .register(Arc::new(Writer {
                probe: probe.clone(),
                schema,
            }))
            .unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let callback: ApprovalCallback = Arc::new(move |request: ApprovalRequest, _| {
            let response = ApprovalResponse {
                modified_args: modified.clone(),
                ..ApprovalResponse::approve(&request.request_id)
            };
            seen.lock().unwrap().push(request);
            Box::pin(async move { Ok(response) })
        });
        let bus = UiEventBus::new();
        let events = bus.subscribe();
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        Setup {
            orchestrator: ToolCallOrchestrator::new(
                Arc::new(registry),
                controller,
                RuntimeUI::new(bus),
            ),
            probe,
            requests,
            events,
        }
    }

    async fn call(&self, args: Value) -> CallOutcome {
        self.orchestrator
            .call(
                ToolCall::from_model("c9", "w", args),
                &CancellationToken::new(),
            )
            .await
    }

    fn prepared(&self) -> Vec<String> {
        self.probe.prepared.lock().unwrap().clone()
    }

    fn executed(&self) -> Vec<(String, Option<String>)> {
        self.probe.executed.lock().unwrap().clone()
    }

    fn previews(&self) -> usize {
        self.probe.previews.load(Ordering::SeqCst)
    }

    fn event_types(&mut self) -> Vec<String> {
        let mut types = Vec::new();
        while let Some(event) = self.events.try_recv() {
            let value = serde_json::to_value(&event).unwrap();
            types.push(value["type"].as_str().unwrap().to_owned());
        }
        types
    }
}

#[tokio::test]
async fn approval_request_carries_description_risk_and_preview() {
    let setup = Setup::new(None);
    let outcome = setup.call(json!({"path": "/out/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Success);
    let request = setup.requests.lock().unwrap()[0].clone();
    assert_eq!(request.description, "Write /out/a");
    assert_eq!(request.risk, Risk::High);
    assert_eq!(
        request.preview,
        Some(ToolResultValue::text("diff of /out/a"))
    );
    assert_eq!(request.tool_call_id, "c9");
    assert_eq!(setup.prepared(), ["/out/a"], "prepared once");
    assert_eq!(setup.previews(), 1);
    assert_eq!(setup.executed(), [("/out/a".to_owned(), None)]);
}

#[tokio::test]
async fn a_pre_approved_call_never_computes_a_preview() {
    let setup = Setup::new(None);
    let outcome = setup.call(json!({"path": "/auto/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(setup.previews(), 0);
    assert!(setup.requests.lock().unwrap().is_empty());
    assert_eq!(setup.prepared(), ["/auto/a"]);
    // Nor does a blocked one.
    let outcome = setup.call(json!({"path": "/etc/passwd"})).await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert_eq!(setup.previews(), 0);
    assert_eq!(setup.executed().len(), 1);
}

#[tokio::test]
async fn edited_arguments_are_prepared_again_and_their_plan_runs() {
    let setup = Setup::new(Some(json!({"path": "/auto/b"})));
    let outcome = setup.call(json!({"path": "/out/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert_eq!(outcome.executed_args, Some(json!({"path": "/auto/b"})));
    assert_eq!(setup.prepared(), ["/out/a", "/auto/b"]);
    assert_eq!(
        setup.executed(),
        [("/auto/b".to_owned(), Some("/out/a".to_owned()))],
        "the edited plan runs, following the one the user was shown"
    );
    assert_eq!(
        setup.previews(),
        1,
        "edited arguments are not previewed again"
    );
    assert_eq!(setup.requests.lock().unwrap().len(), 1, "nor asked again");
}

#[tokio::test]
async fn an_edited_call_that_is_blocked_is_refused() {
    let setup = Setup::new(Some(json!({"path": "/etc/shadow"})));
    let outcome = setup.call(json!({"path": "/out/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(
        outcome.error.unwrap().message,
        "the edited call is blocked: system files"
    );
    assert_eq!(outcome.approved_args, Some(json!({"path": "/etc/shadow"})));
    assert!(setup.executed().is_empty());
}

#[tokio::test]
async fn edited_arguments_the_tool_cannot_decode_never_run() {
    let setup = Setup::new(Some(json!({})));
    let outcome = setup.call(json!({"path": "/out/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::InvalidArguments);
    assert_eq!(
        error.message,
        "the edited arguments are invalid: invalid arguments for w: missing field `path`"
    );
    assert!(setup.executed().is_empty());
}

#[tokio::test]
async fn arguments_the_tool_cannot_decode_stop_before_the_gate() {
    let mut setup = Setup::new(None);
    let outcome = setup.call(json!({})).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::InvalidArguments);
    assert_eq!(
        error.message,
        "invalid arguments for w: missing field `path`"
    );
    assert_eq!(outcome.decided_by, None);
    assert_eq!(setup.event_types(), ["toolResult"]);
    assert!(setup.requests.lock().unwrap().is_empty());
    assert!(setup.prepared().is_empty());
}

#[tokio::test]
async fn a_panicking_prepare_is_an_execution_error() {
    let setup = Setup::new(None);
    let outcome = setup.call(json!({"path": "/panic"})).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert_eq!(error.message, "w failed unexpectedly: prepare exploded");
    assert!(setup.executed().is_empty());
}

#[tokio::test]
async fn an_interrupt_while_preparing_stops_the_call() {
    let setup = Setup::new(None);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        trigger.cancel();
    });
    let outcome = setup
        .orchestrator
        .call(
            ToolCall::from_model("c1", "w", json!({"path": "/hang"})),
            &cancel,
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Interrupted);
    assert_eq!(outcome.error.unwrap().message, "w was not run: interrupted");
    assert!(setup.executed().is_empty());
}
