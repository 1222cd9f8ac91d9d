//! Tests of the one path of a tool call: each step, each status, and the events it reports;
//! the prepared call's own in `prepare`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use golem_protocol::{ApprovalResponse, ExecutionMode, RememberScope};
use serde_json::json;

use super::*;
use crate::approval::{ApprovalCallback, ApprovalMode};
use crate::bus::UiEventBus;
use crate::fn_tool::FnTool;
use crate::tool::ManualExecution;

mod prepare;

/// A tool that counts its executions and echoes its arguments.
fn counting_tool(
    name: &str,
    requirement: Option<ApprovalRequirement>,
    runs: Arc<AtomicUsize>,
) -> FnTool {
    let tool = FnTool::new(
        name,
        "test tool",
        json!({"type": "object", "properties": {"path": {"type": "string"}},
               "required": ["path"], "additionalProperties": false}),
        move |args, _ctx| {
            let runs = runs.clone();
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(ToolResultValue::structured(args))
            }
        },
    );
    match requirement {
        Some(r) => tool.with_static_approval(r),
        None => tool,
    }
}

struct Harness {
    orchestrator: ToolCallOrchestrator,
    events: crate::bus::DisplaySubscription,
    runs: Arc<AtomicUsize>,
    asked: Arc<AtomicUsize>,
}

impl Harness {
    fn events(&mut self) -> Vec<DisplayEvent> {
        let mut out = Vec::new();
        while let Some(event) = self.events.try_recv() {
            out.push(event);
        }
        out
    }

    fn event_types(&mut self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| {
                serde_json::to_value(e).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect()
    }
}

/// A callback that counts how often it is asked and answers with `response`.
fn answering(response: ApprovalResponse, asked: Arc<AtomicUsize>) -> ApprovalCallback {
    Arc::new(move |_req, _cancel| {
        asked.fetch_add(1, Ordering::SeqCst);
        let response = response.clone();
        Box::pin(async move { Ok(response) })
    })
}

fn harness(
    tools: Vec<FnTool>,
    mode: ApprovalMode,
    answer: Option<ApprovalResponse>,
    runs: Arc<AtomicUsize>,
) -> Harness {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(Arc::new(tool)).unwrap();
    }
    let bus = UiEventBus::new();
    let events = bus.subscribe();
    let asked = Arc::new(AtomicUsize::new(0));
    let mut controller = ApprovalController::new(mode);
    if let Some(answer) = answer {
        controller = controller.with_callback(answering(answer, asked.clone()));
    }
    let orchestrator =
        ToolCallOrchestrator::new(Arc::new(registry), controller, RuntimeUI::new(bus));
    Harness {
        orchestrator,
        events,
        runs,
        asked,
    }
}

fn simple(
    requirement: Option<ApprovalRequirement>,
    mode: ApprovalMode,
    answer: Option<ApprovalResponse>,
) -> Harness {
    let runs = Arc::new(AtomicUsize::new(0));
    harness(
        vec![counting_tool("t", requirement, runs.clone())],
        mode,
        answer,
        runs,
    )
}

/// Runs one call with empty arguments to `tool`, alone in a registry, in approve_all mode.
async fn call_alone(tool: FnTool) -> CallOutcome {
    let name = tool.name().to_owned();
    let h = harness(
        vec![tool],
        ApprovalMode::ApproveAll,
        None,
        Arc::new(AtomicUsize::new(0)),
    );
    h.orchestrator
        .call(
            ToolCall::from_model("c1", name, json!({})),
            &CancellationToken::new(),
        )
        .await
}

async fn call(h: &Harness, args: serde_json::Value) -> CallOutcome {
    h.orchestrator
        .call(
            ToolCall::from_model("c1", "t", args),
            &CancellationToken::new(),
        )
        .await
}

#[tokio::test]
async fn pre_approved_tool_executes_exactly_once() {
    let mut h = simple(
        Some(ApprovalRequirement::PreApproved),
        ApprovalMode::Interactive,
        None,
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(
        outcome.value,
        ToolResultValue::structured(json!({"path": "/a"}))
    );
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(outcome.executed_args, Some(json!({"path": "/a"})));
    assert_eq!(h.runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        h.event_types(),
        ["approvalResolved", "toolStarted", "toolResult"]
    );
}

#[tokio::test]
async fn unknown_tool_is_an_error_result() {
    let mut h = simple(None, ApprovalMode::ApproveAll, None);
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_model("c1", "nope", json!({})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert_eq!(
        outcome.error.as_ref().unwrap().code,
        ToolErrorCode::NotFound
    );
    assert!(
        outcome
            .model_text()
            .starts_with("Error [NOT_FOUND]: Tool not found: nope"),
        "{}",
        outcome.model_text()
    );
    assert_eq!(h.event_types(), ["toolResult"]);
}

#[tokio::test]
async fn invalid_arguments_never_reach_execute() {
    let mut h = simple(
        Some(ApprovalRequirement::PreApproved),
        ApprovalMode::ApproveAll,
        None,
    );
    for args in [
        json!({}),
        json!({"path": 3}),
        json!({"path": "/a", "x": 1}),
        json!([1]),
    ] {
        let outcome = call(&h, args).await;
        assert_eq!(outcome.status, ToolStatus::Error);
        assert_eq!(outcome.error.unwrap().code, ToolErrorCode::InvalidArguments);
        assert_eq!(outcome.executed_args, None);
    }
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    assert!(!h.event_types().contains(&"toolStarted".to_owned()));
}

#[tokio::test]
async fn malformed_json_arguments_are_invalid_arguments() {
    let h = simple(
        Some(ApprovalRequirement::PreApproved),
        ApprovalMode::ApproveAll,
        None,
    );
    let call = ToolCall::malformed("c1", "t", "{\"path\": ", "EOF while parsing");
    let outcome = h.orchestrator.call(call, &CancellationToken::new()).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::InvalidArguments);
    assert!(
        error.message.contains("not valid JSON"),
        "{}",
        error.message
    );
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn manual_only_tool_is_refused_to_the_model_and_never_executed() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = counting_tool(
        "deploy",
        Some(ApprovalRequirement::PreApproved),
        runs.clone(),
    )
    .with_execution(ManualExecution::manual("Deploy", None));
    let h = harness(vec![tool], ApprovalMode::ApproveAll, None, runs);
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_model("c1", "deploy", json!({"path": "/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert!(
        outcome
            .error
            .unwrap()
            .message
            .contains("only be invoked by the user")
    );
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    // The user may invoke it, through the same path.
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_user("u1", "deploy", json!({"path": "/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(outcome.invoked_by, InvokedBy::User);
    assert_eq!(h.runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        h.orchestrator
            .registry()
            .get("deploy")
            .unwrap()
            .execution()
            .mode,
        ExecutionMode::Manual
    );
}

#[tokio::test]
async fn llm_only_tool_is_refused_to_the_user() {
    let h = simple(
        Some(ApprovalRequirement::PreApproved),
        ApprovalMode::ApproveAll,
        None,
    );
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_user("u1", "t", json!({"path": "/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn blocked_never_calls_the_approval_callback() {
    let mut h = simple(
        Some(ApprovalRequirement::blocked("rm -rf is blocked")),
        ApprovalMode::Interactive,
        Some(ApprovalResponse::approve("x")),
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::Blocked);
    assert_eq!(error.message, "rm -rf is blocked");
    assert_eq!(h.asked.load(Ordering::SeqCst), 0);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    let events = h.events();
    assert!(matches!(&events[0], DisplayEvent::ApprovalResolved(r)
        if !r.approved && r.decided_by == DecidedBy::Policy && r.note.as_deref() == Some("rm -rf is blocked")));
    // The call never started, so its result carries the arguments a front end draws it with.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, DisplayEvent::ToolResult { args, .. }
            if *args == Some(json!({"path": "/a"})))),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, DisplayEvent::ApprovalRequired(_)))
    );
}

#[tokio::test]
async fn auto_deny_denies_with_a_note_naming_the_tool() {
    let h = simple(None, ApprovalMode::AutoDeny, None);
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Mode));
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::Denied);
    assert!(
        error.message.contains('t') && error.message.contains("auto_deny"),
        "{}",
        error.message
    );
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn tools_without_policy_ask() {
    let h = simple(
        None,
        ApprovalMode::Interactive,
        Some(ApprovalResponse::approve("x")),
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(outcome.decided_by, Some(DecidedBy::User));
    assert_eq!(h.asked.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn user_denial_carries_the_note_to_the_model() {
    let h = simple(
        Some(ApprovalRequirement::Ask),
        ApprovalMode::Interactive,
        Some(ApprovalResponse::deny("x", Some("use /tmp instead".into()))),
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(
        outcome.model_text(),
        "Error [DENIED]: The user denied t: use /tmp instead"
    );
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn session_approval_skips_the_prompt_for_identical_calls() {
    let mut answer = ApprovalResponse::approve("x");
    answer.remember = RememberScope::Session;
    let mut h = simple(
        Some(ApprovalRequirement::Ask),
        ApprovalMode::Interactive,
        Some(answer),
    );
    call(&h, json!({"path": "/a"})).await;
    let second = call(&h, json!({"path": "/a"})).await;
    assert_eq!(second.decided_by, Some(DecidedBy::SessionMemory));
    call(&h, json!({"path": "/b"})).await;
    assert_eq!(h.asked.load(Ordering::SeqCst), 2);
    assert_eq!(h.runs.load(Ordering::SeqCst), 3);
    let resolved: Vec<DecidedBy> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            DisplayEvent::ApprovalResolved(r) => Some(r.decided_by),
            _ => None,
        })
        .collect();
    assert_eq!(
        resolved,
        [DecidedBy::User, DecidedBy::SessionMemory, DecidedBy::User]
    );
}

#[tokio::test]
async fn modified_arguments_run_and_are_kept_apart() {
    let mut answer = ApprovalResponse::approve("x");
    answer.modified_args = Some(json!({"path": "/edited"}));
    let h = simple(
        Some(ApprovalRequirement::Ask),
        ApprovalMode::Interactive,
        Some(answer),
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(outcome.proposed_args, json!({"path": "/a"}));
    assert_eq!(outcome.approved_args, Some(json!({"path": "/edited"})));
    assert_eq!(outcome.executed_args, Some(json!({"path": "/edited"})));
    assert_eq!(
        outcome.value,
        ToolResultValue::structured(json!({"path": "/edited"}))
    );
    assert_eq!(
        h.asked.load(Ordering::SeqCst),
        1,
        "edited arguments are not re-asked"
    );
}

#[tokio::test]
async fn invalid_modified_arguments_never_run() {
    let mut answer = ApprovalResponse::approve("x");
    answer.modified_args = Some(json!({"path": 5}));
    let h = simple(
        Some(ApprovalRequirement::Ask),
        ApprovalMode::Interactive,
        Some(answer),
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert!(
        outcome
            .error
            .unwrap()
            .message
            .starts_with("the edited arguments are invalid")
    );
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn modified_arguments_that_are_blocked_never_run() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = counting_tool("t", None, runs.clone()).with_approval(|args| {
        if args["path"] == "/etc/passwd" {
            ApprovalRequirement::blocked("system files are blocked")
        } else {
            ApprovalRequirement::Ask
        }
    });
    let mut answer = ApprovalResponse::approve("x");
    answer.modified_args = Some(json!({"path": "/etc/passwd"}));
    let h = harness(vec![tool], ApprovalMode::Interactive, Some(answer), runs);
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn interrupted_before_start_does_not_run() {
    let h = simple(
        Some(ApprovalRequirement::PreApproved),
        ApprovalMode::ApproveAll,
        None,
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_model("c1", "t", json!({"path": "/a"})),
            &cancel,
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Interrupted);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn interrupt_while_waiting_for_approval() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut h = harness(
        vec![counting_tool(
            "t",
            Some(ApprovalRequirement::Ask),
            runs.clone(),
        )],
        ApprovalMode::Interactive,
        None,
        runs,
    );
    let bus = UiEventBus::new();
    let ui = RuntimeUI::new(bus.clone());
    let callback: ApprovalCallback = Arc::new(|_, _| Box::pin(futures::future::pending()));
    h.orchestrator = ToolCallOrchestrator::new(
        h.orchestrator.registry().clone(),
        ApprovalController::new(ApprovalMode::Interactive).with_callback(callback),
        ui,
    );
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::task::yield_now().await;
        canceller.cancel();
    });
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_model("c1", "t", json!({"path": "/a"})),
            &cancel,
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Interrupted);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn interrupt_while_running_stops_a_tool_that_ignores_it() {
    let tool = FnTool::new("slow", "", json!({"type": "object"}), |_, _| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(ToolResultValue::text("late"))
    })
    .with_static_approval(ApprovalRequirement::PreApproved);
    let h = harness(
        vec![tool],
        ApprovalMode::ApproveAll,
        None,
        Arc::new(AtomicUsize::new(0)),
    );
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        canceller.cancel();
    });
    let outcome = h
        .orchestrator
        .call(ToolCall::from_model("c1", "slow", json!({})), &cancel)
        .await;
    assert_eq!(outcome.status, ToolStatus::Interrupted);
    assert_eq!(outcome.error.unwrap().code, ToolErrorCode::Interrupted);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_watches_the_token_reports_partial_output() {
    let tool = FnTool::new(
        "watcher",
        "",
        json!({"type": "object"}),
        |_, ctx: ToolContext| async move {
            ctx.cancel.cancelled().await;
            Err(ToolError::new(
                ToolErrorCode::Interrupted,
                "stopped after 3 of 10 files",
            ))
        },
    )
    .with_static_approval(ApprovalRequirement::PreApproved);
    let h = harness(
        vec![tool],
        ApprovalMode::ApproveAll,
        None,
        Arc::new(AtomicUsize::new(0)),
    );
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move { canceller.cancel() });
    let outcome = h
        .orchestrator
        .call(ToolCall::from_model("c1", "watcher", json!({})), &cancel)
        .await;
    assert_eq!(outcome.status, ToolStatus::Interrupted);
    assert_eq!(
        outcome.error.unwrap().message,
        "stopped after 3 of 10 files"
    );
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_execution_error() {
    let tool = FnTool::new("boom", "", json!({"type": "object"}), |_, _| async {
        let items: Vec<u8> = Vec::new();
        #[allow(clippy::indexing_slicing)]
        let _ = items[3];
        Ok(ToolResultValue::text("unreachable"))
    })
    .with_static_approval(ApprovalRequirement::PreApproved);
    let outcome = call_alone(tool).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    let error = outcome.error.unwrap();
    assert_eq!(error.code, ToolErrorCode::ExecutionError);
    assert!(
        error.message.contains("boom failed unexpectedly"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_result_with_an_invalid_kind_is_an_error() {
    let tool = FnTool::new("bad", "", json!({"type": "object"}), |_, _| async {
        Ok(ToolResultValue::new("Bad-Kind", json!(1)))
    })
    .with_static_approval(ApprovalRequirement::PreApproved);
    let outcome = call_alone(tool).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert!(
        outcome
            .error
            .unwrap()
            .message
            .contains("invalid kind `Bad-Kind`")
    );
}

#[tokio::test]
async fn tool_errors_map_to_statuses() {
    let tool = FnTool::new("missing", "", json!({"type": "object"}), |_, _| async {
        Err(ToolError::new(
            ToolErrorCode::FileNotFound,
            "/in/x does not exist",
        ))
    })
    .with_static_approval(ApprovalRequirement::PreApproved);
    let outcome = call_alone(tool).await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert_eq!(
        outcome.model_text(),
        "Error [FILE_NOT_FOUND]: /in/x does not exist"
    );
    assert_eq!(outcome.value.kind, "tool_error");
    assert!(outcome.is_error());
}

#[tokio::test]
async fn events_carry_the_worker_origin() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut h = harness(
        vec![counting_tool(
            "t",
            Some(ApprovalRequirement::PreApproved),
            runs.clone(),
        )],
        ApprovalMode::ApproveAll,
        None,
        runs,
    );
    h.orchestrator = h.orchestrator.clone().with_worker(WorkerOrigin {
        name: "sub".into(),
        depth: 2,
        id: "w3".into(),
    });
    call(&h, json!({"path": "/a"})).await;
    for event in h.events() {
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(value["worker"]["depth"], 2, "{value}");
        // A call that started had its arguments on `toolStarted`; its result does not repeat them.
        if value["type"] == "toolResult" {
            assert_eq!(value.get("args"), None, "{value}");
        }
    }
}

#[tokio::test]
async fn asks_a_front_end_through_the_bus_end_to_end() {
    use crate::approval::ui_approval_callback;
    use golem_protocol::ActionEvent;

    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(counting_tool(
            "t",
            Some(ApprovalRequirement::Ask),
            runs.clone(),
        )))
        .unwrap();
    let bus = UiEventBus::new();
    let ui = RuntimeUI::new(bus.clone());
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(ui_approval_callback(ui.clone()));
    let orchestrator = ToolCallOrchestrator::new(Arc::new(registry), controller, ui);

    // A front end: answers every approval request with edited arguments, records event types.
    let mut front_end_events = bus.subscribe();
    let front_end_bus = bus.clone();
    let front_end = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(event) = front_end_events.recv().await {
            let value = serde_json::to_value(&event).unwrap();
            seen.push(value["type"].as_str().unwrap().to_owned());
            match event {
                DisplayEvent::ApprovalRequired(request) => {
                    let mut response = ApprovalResponse::approve(request.request_id);
                    response.modified_args = Some(json!({"path": "/edited"}));
                    front_end_bus.send_action(ActionEvent::ApprovalResponse(response));
                }
                DisplayEvent::ToolResult { .. } => break,
                _ => {}
            }
        }
        seen
    });
    let outcome = orchestrator
        .call(
            ToolCall::from_model("c1", "t", json!({"path": "/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(outcome.executed_args, Some(json!({"path": "/edited"})));
    assert_eq!(outcome.decided_by, Some(DecidedBy::User));
    assert_eq!(
        front_end.await.unwrap(),
        [
            "approvalRequired",
            "approvalResolved",
            "toolStarted",
            "toolResult"
        ]
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(bus.pending_requests(), 0);
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_front_end_times_out_into_a_denial() {
    use crate::approval::ui_approval_callback;

    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(counting_tool(
            "t",
            Some(ApprovalRequirement::Ask),
            runs.clone(),
        )))
        .unwrap();
    let ui = RuntimeUI::new(UiEventBus::new()).with_request_timeout(Some(Duration::from_secs(30)));
    let controller = ApprovalController::new(ApprovalMode::Interactive)
        .with_callback(ui_approval_callback(ui.clone()));
    let orchestrator = ToolCallOrchestrator::new(Arc::new(registry), controller, ui);
    let outcome = orchestrator
        .call(
            ToolCall::from_model("c1", "t", json!({"path": "/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert!(
        outcome
            .error
            .unwrap()
            .message
            .contains("no approval answer")
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// An orchestrator over `tools` in `mode` with the project rule "`t`/`deploy` under `/notes/**`"
/// and a callback that denies (so anything asked is visible).
fn with_notes_rule(tools: Vec<FnTool>, mode: ApprovalMode, runs: Arc<AtomicUsize>) -> Harness {
    use crate::approval::{ApprovalRule, ArgMatch, ProjectRules};
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(Arc::new(tool)).unwrap();
    }
    let bus = UiEventBus::new();
    let events = bus.subscribe();
    let asked = Arc::new(AtomicUsize::new(0));
    let rule = |tool: &str| ApprovalRule {
        tool: tool.into(),
        matches: [("path".to_owned(), ArgMatch::Glob("/notes/**".into()))].into(),
    };
    let controller = ApprovalController::new(mode)
        .with_callback(answering(ApprovalResponse::deny("x", None), asked.clone()))
        .with_rules(ProjectRules::new(vec![rule("t"), rule("deploy")]));
    Harness {
        orchestrator: ToolCallOrchestrator::new(
            Arc::new(registry),
            controller,
            RuntimeUI::new(bus),
        ),
        events,
        runs,
        asked,
    }
}

fn resolved_by(events: &[DisplayEvent]) -> Vec<(bool, DecidedBy)> {
    events
        .iter()
        .filter_map(|e| match e {
            DisplayEvent::ApprovalResolved(r) => Some((r.approved, r.decided_by)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_project_rule_approves_a_matching_call_and_asks_for_others() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut h = with_notes_rule(
        vec![counting_tool(
            "t",
            Some(ApprovalRequirement::Ask),
            runs.clone(),
        )],
        ApprovalMode::Interactive,
        runs,
    );
    let outcome = call(&h, json!({"path": "/notes/today.md"})).await;
    assert_eq!(outcome.status, ToolStatus::Success);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Rule));
    assert_eq!(h.asked.load(Ordering::SeqCst), 0);
    let outcome = call(&h, json!({"path": "/out/today.md"})).await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(outcome.decided_by, Some(DecidedBy::User));
    assert_eq!(h.asked.load(Ordering::SeqCst), 1);
    assert_eq!(h.runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        resolved_by(&h.events()),
        [(true, DecidedBy::Rule), (false, DecidedBy::User)]
    );
}

#[tokio::test]
async fn a_project_rule_never_approves_a_blocked_call() {
    let runs = Arc::new(AtomicUsize::new(0));
    let mut h = with_notes_rule(
        vec![counting_tool(
            "t",
            Some(ApprovalRequirement::blocked("notes are read-only")),
            runs.clone(),
        )],
        ApprovalMode::ApproveAll,
        runs,
    );
    let outcome = call(&h, json!({"path": "/notes/today.md"})).await;
    assert_eq!(outcome.status, ToolStatus::Blocked);
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    assert_eq!(resolved_by(&h.events()), [(false, DecidedBy::Policy)]);
}

#[tokio::test]
async fn a_project_rule_never_lets_the_model_call_a_manual_only_tool() {
    let runs = Arc::new(AtomicUsize::new(0));
    let tool = counting_tool("deploy", Some(ApprovalRequirement::Ask), runs.clone())
        .with_execution(ManualExecution::manual("Deploy", None));
    let mut h = with_notes_rule(vec![tool], ApprovalMode::Interactive, runs);
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_model("c1", "deploy", json!({"path": "/notes/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Error);
    assert_eq!(outcome.decided_by, None);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    assert!(resolved_by(&h.events()).is_empty());
    // The user's own call to it may be approved by the rule.
    let outcome = h
        .orchestrator
        .call(
            ToolCall::from_user("u1", "deploy", json!({"path": "/notes/a"})),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome.decided_by, Some(DecidedBy::Rule));
    assert_eq!(h.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_call_for_the_user_is_asked_every_time_even_under_approve_all() {
    let warning = "\u{26a0} unprotected: /z/.git/config is read outside the sandbox";
    // approve_all with no one to ask: denied, not approved.
    let h = simple(
        Some(ApprovalRequirement::ask_user(warning)),
        ApprovalMode::ApproveAll,
        None,
    );
    let outcome = call(&h, json!({"path": "/a"})).await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert_eq!(h.runs.load(Ordering::SeqCst), 0);
    // With someone to ask, they are asked each time (a session answer is not kept), and the
    // prompt's description carries the warning on a line of its own.
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = ToolRegistry::new();
    registry
        .register(Arc::new(counting_tool(
            "t",
            Some(ApprovalRequirement::ask_user(warning)),
            runs.clone(),
        )))
        .unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorder = seen.clone();
    let callback: ApprovalCallback = Arc::new(move |request: ApprovalRequest, _cancel| {
        recorder.lock().unwrap().push(request.description.clone());
        let mut answer = ApprovalResponse::approve(request.request_id);
        answer.remember = RememberScope::Session;
        Box::pin(async move { Ok(answer) })
    });
    let controller = ApprovalController::new(ApprovalMode::ApproveAll).with_callback(callback);
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(registry),
        controller,
        RuntimeUI::new(UiEventBus::new()),
    );
    for _ in 0..2 {
        let outcome = orchestrator
            .call(
                ToolCall::from_model("c1", "t", json!({"path": "/a"})),
                &CancellationToken::new(),
            )
            .await;
        assert_eq!(outcome.status, ToolStatus::Success);
        assert_eq!(outcome.decided_by, Some(DecidedBy::User));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 2);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].ends_with(&format!("\n{warning}")), "{}", seen[0]);
}
