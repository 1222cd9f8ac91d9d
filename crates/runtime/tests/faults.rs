//! Fault budgets: whole turns of a worker against misbehaving local servers (no headers ever,
//! 500s, HTML pages, pings and keep-alive comments without content, stalls, error events
//! mid-stream), on the Anthropic wire and, where the wires differ, the OpenAI ones, with limits
//! of milliseconds. The assertions are on the requests made and the messages shown, never on
//! timing.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use golem_core::approval::{ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::interrupt::InterruptSignal;
use golem_core::orchestrator::ToolCallOrchestrator;
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_llm::http::HttpSettings;
use golem_llm::providers::anthropic::{AnthropicConfig, AnthropicModel};
use golem_llm::providers::openai_chat::OpenAiChatModel;
use golem_llm::providers::openai_common::OpenAiConfig;
use golem_llm::providers::openai_responses::OpenAiResponsesModel;
use golem_llm::retry::RetryPolicy;
use golem_llm::{Model, ModelSpec};
use golem_protocol::{DisplayEvent, StatusLevel};
use golem_runtime::runner::{RunOutcome, RunStatus, RuntimeParts, WorkerRuntime};
use golem_runtime::tree::{TreeSlot, WorkerTree};
use golem_testkit::mock::{Chunk, MockServer, Reply, sse};
use serde_json::{Value, json};

/// Limits of milliseconds: headers and content idle 200 ms, short backoff, the default number
/// of retries, and a wall limit far away unless a test sets one.
fn settings() -> HttpSettings {
    HttpSettings {
        connect_timeout: Duration::from_secs(5),
        headers_timeout: Duration::from_millis(200),
        idle_timeout: Duration::from_millis(200),
        retry: RetryPolicy {
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
            wall_limit: Duration::from_secs(60),
            ..RetryPolicy::default()
        },
    }
}

/// What a run did: its outcome and the warnings it showed.
struct Ran {
    outcome: RunOutcome,
    warnings: Vec<String>,
}

impl Ran {
    fn error(&self) -> &str {
        match &self.outcome.status {
            RunStatus::Failed(message) => message,
            other => panic!("the run did not fail: {other:?}"),
        }
    }
}

fn spec(provider: &str) -> ModelSpec {
    ModelSpec {
        provider: provider.into(),
        model: "m".into(),
    }
}

/// Runs one turn of a tool-less worker on an Anthropic model at `base_url`.
async fn run_turn(base_url: &str, settings: HttpSettings) -> Ran {
    let model = AnthropicModel::new(
        spec("anthropic"),
        AnthropicConfig {
            base_url: base_url.to_owned(),
            api_key: "sk-ant-test".into(),
            key_env: "ANTHROPIC_API_KEY".into(),
            settings,
            extra_headers: Vec::new(),
        },
    )
    .unwrap();
    run_model(Arc::new(model)).await
}

/// The OpenAI config of a server at `base_url`.
fn openai(base_url: &str) -> OpenAiConfig {
    OpenAiConfig::new(
        "openai",
        format!("{base_url}/v1"),
        Some("sk-test".into()),
        "OPENAI_API_KEY",
    )
    .with_settings(settings())
}

/// Runs one turn of a tool-less worker on `model`.
async fn run_model(model: Arc<dyn Model>) -> Ran {
    let bus = UiEventBus::new();
    let mut events = bus.subscribe();
    let ui = RuntimeUI::new(bus.clone());
    let orchestrator = ToolCallOrchestrator::new(
        Arc::new(ToolRegistry::new()),
        ApprovalController::new(ApprovalMode::AutoDeny),
        ui.clone(),
    );
    let mut runtime = WorkerRuntime::new(RuntimeParts {
        worker_name: "w".into(),
        instructions: "Be brief.".into(),
        keeps_history: false,
        depth: 0,
        max_iterations: 3,
        context: golem_runtime::context_settings::ContextPolicy::default(),
        model,
        orchestrator,
        tree: TreeSlot::new(WorkerTree::new(ui.clone())),
        ui,
        interrupt: InterruptSignal::new(),
        observer: None,
    });
    let outcome = tokio::time::timeout(Duration::from_secs(30), runtime.run("hi"))
        .await
        .expect("the run gives up on its own");
    let mut warnings = Vec::new();
    while let Some(event) = events.try_recv() {
        if let DisplayEvent::Status {
            level: StatusLevel::Warning,
            message,
        } = event
        {
            warnings.push(message);
        }
    }
    Ran { outcome, warnings }
}

fn frame(event: &str, data: Value) -> Chunk {
    sse(Some(event), &data.to_string())
}

/// The start of an Anthropic stream with `text` streamed.
fn partial(text: &str) -> Vec<Chunk> {
    vec![
        frame(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null,
                "usage": {"input_tokens": 3, "output_tokens": 1}}}),
        ),
        frame(
            "content_block_start",
            json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}}),
        ),
        frame(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": text}}),
        ),
    ]
}

/// A server that always answers with `reply`.
async fn always(reply: Reply) -> MockServer {
    let server = MockServer::start(Vec::new()).await;
    server.set_fallback(reply);
    server
}

/// Every warning is one line, and says it retries.
fn assert_one_line_retries(warnings: &[String]) {
    for warning in warnings {
        assert!(!warning.contains('\n'), "{warning:?}");
        assert!(warning.contains("retrying in"), "{warning:?}");
    }
}

/// A server that accepts connections and never answers; counts them.
async fn silent_server() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            open.push(socket);
        }
    });
    (url, accepted)
}

#[tokio::test]
async fn no_headers_ever_is_one_budget_per_turn() {
    let (url, accepted) = silent_server().await;
    let ran = run_turn(&url, settings()).await;
    // The default 4 retries of one budget, not 5 HTTP attempts × 3 turn attempts.
    assert_eq!(accepted.load(Ordering::SeqCst), 5);
    assert!(
        ran.error().contains("no response headers within 200ms"),
        "{}",
        ran.error()
    );
    assert_eq!(ran.warnings.len(), 4, "{:?}", ran.warnings);
    assert_one_line_retries(&ran.warnings);
    assert!(ran.warnings[3].ends_with("(4/4)"), "{:?}", ran.warnings);
}

#[tokio::test]
async fn the_wall_limit_stops_retrying() {
    let (url, accepted) = silent_server().await;
    let mut settings = settings();
    settings.retry.wall_limit = Duration::from_millis(300);
    let ran = run_turn(&url, settings).await;
    let requests = accepted.load(Ordering::SeqCst);
    assert!((1..5).contains(&requests), "{requests} requests");
    assert!(
        ran.error().contains("no response headers"),
        "{}",
        ran.error()
    );
}

#[tokio::test]
async fn a_500_is_retried_from_one_budget() {
    let server = always(Reply::json(
        500,
        r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
    ))
    .await;
    let ran = run_turn(&server.base_url, settings()).await;
    assert_eq!(server.requests().len(), 5);
    assert_eq!(
        ran.error(),
        "anthropic is unavailable (HTTP 500): Internal server error"
    );
    assert_eq!(ran.warnings.len(), 4, "{:?}", ran.warnings);
    assert_one_line_retries(&ran.warnings);
}

#[tokio::test]
async fn pings_and_keep_alives_are_not_progress() {
    let mut chunks = partial("partial");
    for _ in 0..40 {
        chunks.push(Chunk::Delay(Duration::from_millis(50)));
        chunks.push(frame("ping", json!({"type": "ping"})));
        chunks.push(Chunk::Data(": keep-alive\n\n".into()));
    }
    // On the old code the pings kept the stream alive until this cut.
    chunks.push(Chunk::Cut);
    let server = always(Reply::sse(chunks)).await;
    let ran = run_turn(&server.base_url, settings()).await;
    assert!(
        ran.error()
            .contains("the anthropic stream sent no content for 200ms"),
        "{}",
        ran.error()
    );
    // A stall is retried once.
    assert_eq!(server.requests().len(), 2);
    assert_eq!(ran.warnings.len(), 1, "{:?}", ran.warnings);
}

#[tokio::test]
async fn a_stall_after_partial_output_is_retried_once() {
    let mut chunks = partial("partial");
    chunks.push(Chunk::Hang);
    let server = always(Reply::sse(chunks)).await;
    let ran = run_turn(&server.base_url, settings()).await;
    assert!(ran.error().contains("sent no content"), "{}", ran.error());
    assert_eq!(server.requests().len(), 2);
    assert_eq!(ran.warnings.len(), 1, "{:?}", ran.warnings);
    assert_one_line_retries(&ran.warnings);
}

const PAGE: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n\
<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

fn html(status: u16, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
        chunks: vec![Chunk::Data(body.to_owned())],
    }
}

#[tokio::test]
async fn an_html_page_with_status_200_is_not_retried() {
    let server = always(html(
        200,
        "<!DOCTYPE html>\n<html><body>Please log in to the proxy</body></html>\n",
    ))
    .await;
    let ran = run_turn(&server.base_url, settings()).await;
    assert_eq!(
        ran.error(),
        "unexpected data from anthropic: expected an event stream, got text/html: <!DOCTYPE html>"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(ran.warnings.is_empty(), "{:?}", ran.warnings);
}

#[tokio::test]
async fn an_html_502_page_is_one_line_per_retry() {
    let server = always(html(502, PAGE)).await;
    let ran = run_turn(&server.base_url, settings()).await;
    assert_eq!(server.requests().len(), 5);
    assert_eq!(
        ran.error(),
        "anthropic is unavailable (HTTP 502): 502 Bad Gateway"
    );
    assert_eq!(ran.warnings.len(), 4, "{:?}", ran.warnings);
    assert_one_line_retries(&ran.warnings);
    for warning in &ran.warnings {
        assert!(
            warning.starts_with("anthropic is unavailable (HTTP 502): 502 Bad Gateway; retrying"),
            "{warning:?}"
        );
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_is_a_stream_error_with_backoff() {
    let mut chunks = partial("partial");
    chunks.push(frame(
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ));
    let server = always(Reply::sse(chunks)).await;
    let ran = run_turn(&server.base_url, settings()).await;
    assert_eq!(
        ran.error(),
        "anthropic reported an error in the stream: overloaded_error: Overloaded"
    );
    // Retried like an HTTP error, from the same budget, each retry after a backoff.
    assert_eq!(server.requests().len(), 5);
    assert_eq!(ran.warnings.len(), 4, "{:?}", ran.warnings);
    assert_one_line_retries(&ran.warnings);
    assert!(
        ran.warnings.iter().all(|w| !w.contains("HTTP")),
        "{:?}",
        ran.warnings
    );
}

#[tokio::test]
async fn response_failed_mid_stream_is_a_stream_error_with_backoff() {
    let event = |data: Value| frame(data["type"].as_str().unwrap(), data.clone());
    let server = always(Reply::sse(vec![
        event(
            json!({"type": "response.output_text.delta", "item_id": "msg_1",
            "output_index": 0, "content_index": 0, "delta": "partial"}),
        ),
        event(
            json!({"type": "response.failed", "response": {"id": "resp_1",
            "status": "failed", "output": [],
            "error": {"code": "server_error", "message": "The model failed."}}}),
        ),
    ]))
    .await;
    let model = OpenAiResponsesModel::new(spec("openai"), openai(&server.base_url)).unwrap();
    let ran = run_model(Arc::new(model)).await;
    assert_eq!(
        ran.error(),
        "openai reported an error in the stream: server_error: The model failed."
    );
    assert_eq!(server.requests().len(), 5);
    assert_eq!(ran.warnings.len(), 4, "{:?}", ran.warnings);
    assert_one_line_retries(&ran.warnings);
}

#[tokio::test]
async fn keep_alive_comments_on_a_chat_stream_are_not_progress() {
    let chunk = |content: &str| {
        sse(
            None,
            &json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]})
            .to_string(),
        )
    };
    let mut chunks = vec![chunk("so")];
    for _ in 0..40 {
        chunks.push(Chunk::Delay(Duration::from_millis(50)));
        chunks.push(Chunk::Data(": OPENROUTER PROCESSING\n\n".into()));
    }
    chunks.push(Chunk::Cut);
    let server = always(Reply::sse(chunks)).await;
    let model = OpenAiChatModel::new(spec("openai"), openai(&server.base_url)).unwrap();
    let ran = run_model(Arc::new(model)).await;
    assert!(
        ran.error()
            .contains("the openai stream sent no content for 200ms"),
        "{}",
        ran.error()
    );
    assert_eq!(server.requests().len(), 2);
}
