//! What each model request was and took, as the `usage` event's `call` tells it: the provider,
//! the models asked for and answering, the response id, the finish reason, the endpoint, the
//! retries and their waits (a 429 answered with `retry-after-ms`), a request that failed (told
//! with `call.error`, counting nothing), and a compaction's summary request (`purpose:
//! summary`). Against the mock server on the Chat Completions wire, and a scripted model.

use std::sync::Arc;
use std::time::Duration;

use golem_core::approval::{ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::interrupt::InterruptSignal;
use golem_core::orchestrator::ToolCallOrchestrator;
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_llm::Model;
use golem_llm::ModelSpec;
use golem_llm::http::HttpSettings;
use golem_llm::providers::openai_chat::OpenAiChatModel;
use golem_llm::providers::openai_common::OpenAiConfig;
use golem_llm::providers::script::{ScriptedModel, ScriptedReply};
use golem_llm::retry::RetryPolicy;
use golem_protocol::{DisplayEvent, ModelCall, ModelCallPurpose, TokenUsage};
use golem_runtime::context_settings::ContextPolicy;
use golem_runtime::runner::{RunOutcome, RunStatus, RuntimeParts, WorkerRuntime};
use golem_runtime::tree::{TreeSlot, WorkerTree};
use golem_testkit::mock::{MockServer, Reply};
use golem_testkit::openai;

/// A `usage` event's parts: this call's tokens, the run's total, its cost and the call.
#[derive(Debug)]
struct Told {
    usage: TokenUsage,
    total: TokenUsage,
    cost: Option<f64>,
    call: ModelCall,
}

/// A worker runtime on `model`, and the bus its events go to.
fn runtime(
    model: Arc<dyn Model>,
    keeps_history: bool,
    context: ContextPolicy,
) -> (WorkerRuntime, UiEventBus) {
    let bus = UiEventBus::new();
    let ui = RuntimeUI::new(bus.clone());
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(ToolRegistry::new()),
        ApprovalController::new(ApprovalMode::AutoDeny),
        ui.clone(),
    );
    let runtime = WorkerRuntime::new(RuntimeParts {
        worker_name: "w".into(),
        instructions: "Be brief.".into(),
        keeps_history,
        depth: 0,
        max_iterations: 3,
        context,
        model,
        orchestrator,
        tree: TreeSlot::new(WorkerTree::new(ui.clone())),
        ui,
        interrupt: InterruptSignal::new(),
        observer: None,
    });
    (runtime, bus)
}

/// An OpenAI Chat Completions model `m` at `server`, retrying under `retry`.
fn chat_model(server: &MockServer, retry: RetryPolicy) -> Arc<dyn Model> {
    let config = OpenAiConfig::new(
        "openai",
        format!("{}/v1", server.base_url),
        Some("sk-test".into()),
        "OPENAI_API_KEY",
    )
    .with_settings(HttpSettings {
        retry,
        ..HttpSettings::default()
    });
    let spec = ModelSpec {
        provider: "openai".into(),
        model: "m".into(),
    };
    Arc::new(OpenAiChatModel::new(spec, config).unwrap())
}

/// Runs one turn of a tool-less worker on `model`: its outcome and the `usage` events told.
async fn run_once(model: Arc<dyn Model>) -> (RunOutcome, Vec<Told>) {
    let (mut runtime, bus) = runtime(model, false, ContextPolicy::default());
    let mut events = bus.subscribe();
    let outcome = tokio::time::timeout(Duration::from_secs(30), runtime.run("hi"))
        .await
        .expect("the run ends on its own");
    let mut told = Vec::new();
    while let Some(event) = events.try_recv() {
        told.extend(usage_of(event));
    }
    (outcome, told)
}

fn usage_of(event: DisplayEvent) -> Option<Told> {
    match event {
        DisplayEvent::Usage {
            usage,
            total,
            cost,
            call,
            ..
        } => Some(Told {
            usage,
            total,
            cost,
            call: call.expect("every usage event says what the call was"),
        }),
        _ => None,
    }
}

/// The mock server's port, from its base URL.
fn port_of(server: &MockServer) -> u16 {
    server.base_url.rsplit(':').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_request_retried_after_a_429_says_so_in_its_call() {
    let server = MockServer::start(vec![
        Reply::json(429, r#"{"error": {"message": "slow down"}}"#).header("retry-after-ms", "30"),
        openai::text("Hello there."),
    ])
    .await;
    let (outcome, told) = run_once(chat_model(&server, RetryPolicy::default())).await;
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(told.len(), 1, "{told:?}");
    let call = &told[0].call;
    assert_eq!(call.provider, "openai");
    assert_eq!(call.request_model, "m");
    assert_eq!(call.response_model.as_deref(), Some("gpt-mock"));
    assert_eq!(call.response_id.as_deref(), Some("chatcmpl-mock"));
    assert_eq!(call.finish_reasons, ["stop"]);
    assert_eq!(call.server_address.as_deref(), Some("127.0.0.1"));
    assert_eq!(call.server_port, Some(port_of(&server)));
    assert_eq!(call.retries, 1);
    // The wait `retry-after-ms` asked for, all of it for a rate limit.
    assert_eq!(call.rate_limit_wait_ms, 30);
    assert_eq!(call.retry_wait_ms, 30);
    assert!(call.duration_ms >= call.retry_wait_ms, "{call:?}");
    assert_eq!(call.purpose, ModelCallPurpose::Conversation);
    assert_eq!(call.error, None);
    assert_eq!(told[0].usage.output_tokens, 5);
}

#[tokio::test]
async fn a_failed_request_is_told_with_its_error_and_counts_nothing() {
    // Not retryable: one request.
    let server = MockServer::start(vec![Reply::json(
        400,
        r#"{"error": {"message": "no such model"}}"#,
    )])
    .await;
    let (outcome, told) = run_once(chat_model(&server, RetryPolicy::default())).await;
    assert!(
        matches!(outcome.status, RunStatus::Failed(_)),
        "{outcome:?}"
    );
    assert_eq!(outcome.usage, TokenUsage::default());
    assert_eq!(told.len(), 1, "{told:?}");
    let failed = &told[0];
    assert_eq!(failed.usage, TokenUsage::default());
    assert_eq!(failed.total, TokenUsage::default());
    assert_eq!(failed.cost, None);
    let call = &failed.call;
    let error = call.error.as_deref().unwrap_or_default();
    assert!(error.contains("no such model"), "{call:?}");
    assert_eq!(call.retries, 0);
    assert!(call.finish_reasons.is_empty() && call.response_id.is_none());
    assert_eq!(call.server_port, Some(port_of(&server)));

    // A request that fails after its retries counts them.
    let server = MockServer::start(Vec::new()).await;
    server.set_fallback(Reply::json(500, r#"{"error": {"message": "down"}}"#));
    let retry = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(2),
        ..RetryPolicy::default()
    };
    let (outcome, told) = run_once(chat_model(&server, retry)).await;
    assert!(
        matches!(outcome.status, RunStatus::Failed(_)),
        "{outcome:?}"
    );
    assert_eq!(server.requests().len(), 2);
    assert_eq!(told.len(), 1, "{told:?}");
    let call = &told[0].call;
    assert_eq!(call.retries, 1);
    assert_eq!(call.rate_limit_wait_ms, 0, "a 500 is no rate limit");
    assert!(
        call.error.as_deref().unwrap_or_default().contains("down"),
        "{call:?}"
    );
}

#[tokio::test]
async fn a_compactions_summary_request_is_told_as_a_summary() {
    let reply = |text: &str| ScriptedReply {
        text: text.into(),
        tool_calls: Vec::new(),
    };
    let model = ScriptedModel::new(
        "calls",
        vec![
            reply("one done"),
            reply("two done"),
            reply("SUMMARY: one, two"),
        ],
    );
    let context = ContextPolicy {
        keep_turns: 1,
        ..ContextPolicy::default()
    };
    let (mut runtime, bus) = runtime(Arc::new(model), true, context);
    let mut events = bus.subscribe();
    for input in ["one", "two"] {
        assert_eq!(runtime.run(input).await.status, RunStatus::Completed);
    }
    runtime.compact_history(None).await.unwrap();
    let mut calls = Vec::new();
    while let Some(event) = events.try_recv() {
        calls.extend(usage_of(event).map(|told| told.call));
    }
    let purposes: Vec<_> = calls.iter().map(|call| call.purpose).collect();
    assert_eq!(
        purposes,
        [
            ModelCallPurpose::Conversation,
            ModelCallPurpose::Conversation,
            ModelCallPurpose::Summary
        ]
    );
    let summary = &calls[2];
    assert_eq!(summary.provider, "script");
    assert_eq!(summary.request_model, "calls");
    assert_eq!(summary.finish_reasons, ["stop"]);
    // Answered in process: no endpoint.
    assert_eq!(summary.server_address, None);
    assert_eq!(summary.server_port, None);
}
