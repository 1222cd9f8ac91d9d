//! The Anthropic Messages API client against a mock that speaks the real SSE protocol: text,
//! tool calls (single, parallel, fragmented, malformed), usage, retries, auth failures, stream
//! faults, cancellation, and the exact request body and headers sent.

use std::time::Duration;

use futures::StreamExt;
use golem_llm::http::HttpSettings;
use golem_llm::providers::anthropic::{AnthropicConfig, AnthropicModel};
use golem_llm::retry::RetryPolicy;
use golem_llm::{
    FinishReason, Message, Model, ModelError, ModelRequest, ModelResponse, ModelSpec,
    ModelToolCall, StreamEvent, ToolResultMessage,
};
use golem_protocol::ToolDefinition;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use golem_testkit::mock::{Chunk, MockServer, Reply, sse};

// ---- fixtures shaped like the real API's stream ----

fn frame(data: Value) -> Chunk {
    let event = data["type"].as_str().unwrap().to_owned();
    sse(Some(&event), &data.to_string())
}

pub(crate) fn message_start(input_tokens: u64) -> Chunk {
    frame(json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1}}}))
}

fn ping() -> Chunk {
    sse(Some("ping"), r#"{"type": "ping"}"#)
}

pub(crate) fn text_block(index: usize, parts: &[&str]) -> Vec<Chunk> {
    let mut chunks = vec![frame(json!({"type": "content_block_start", "index": index,
                                       "content_block": {"type": "text", "text": ""}}))];
    for part in parts {
        chunks.push(frame(json!({"type": "content_block_delta", "index": index,
                                 "delta": {"type": "text_delta", "text": part}})));
    }
    chunks.push(frame(json!({"type": "content_block_stop", "index": index})));
    chunks
}

pub(crate) fn tool_block(index: usize, id: &str, name: &str, fragments: &[&str]) -> Vec<Chunk> {
    let mut chunks = vec![frame(json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}))];
    // The API opens every tool input with an empty fragment.
    for fragment in std::iter::once(&"").chain(fragments) {
        chunks.push(frame(json!({"type": "content_block_delta", "index": index,
                                 "delta": {"type": "input_json_delta", "partial_json": fragment}})));
    }
    chunks.push(frame(json!({"type": "content_block_stop", "index": index})));
    chunks
}

pub(crate) fn message_end(stop_reason: &str, output_tokens: u64) -> Vec<Chunk> {
    vec![
        frame(json!({"type": "message_delta",
                     "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                     "usage": {"output_tokens": output_tokens}})),
        frame(json!({"type": "message_stop"})),
    ]
}

pub(crate) fn stream_of(parts: Vec<Vec<Chunk>>) -> Reply {
    Reply::sse(parts.into_iter().flatten().collect())
}

fn text_reply(text: &str) -> Reply {
    stream_of(vec![
        vec![message_start(10)],
        text_block(0, &[text]),
        message_end("end_turn", 3),
    ])
}

// ---- the client ----

pub(crate) fn settings(idle_timeout: Duration) -> HttpSettings {
    HttpSettings {
        connect_timeout: Duration::from_secs(5),
        headers_timeout: idle_timeout,
        idle_timeout,
        retry: RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            ..RetryPolicy::default()
        },
    }
}

pub(crate) fn model_at(base_url: &str, settings: HttpSettings) -> AnthropicModel {
    let spec = ModelSpec {
        provider: "anthropic".into(),
        model: "claude-x".into(),
    };
    let config = AnthropicConfig {
        base_url: base_url.to_owned(),
        api_key: "sk-ant-test".into(),
        key_env: "ANTHROPIC_API_KEY".into(),
        settings,
        extra_headers: vec![("anthropic-beta".into(), "tools-2024-05-16".into())],
    };
    AnthropicModel::new(spec, config).unwrap()
}

fn model(server: &MockServer) -> AnthropicModel {
    model_at(&server.base_url, settings(Duration::from_secs(10)))
}

fn request() -> ModelRequest {
    ModelRequest::new("Be brief.", vec![Message::user("hello")], Vec::new())
}

async fn complete(model: &AnthropicModel) -> Result<ModelResponse, ModelError> {
    model.complete(&request(), CancellationToken::new()).await
}

async fn events(model: &AnthropicModel) -> Vec<Result<StreamEvent, ModelError>> {
    model
        .stream(&request(), CancellationToken::new())
        .await
        .unwrap()
        .collect()
        .await
}

// ---- streaming ----

#[tokio::test]
async fn streams_text() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(25), ping()],
        text_block(0, &["Hello", ", ", "world."]),
        message_end("end_turn", 12),
    ])])
    .await;
    let events: Vec<StreamEvent> = events(&model(&server))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, ["Hello", ", ", "world."]);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::EndTurn
        })
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::ToolCallStart { .. }))
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_single_tool_call() {
    let reply = stream_of(vec![
        vec![message_start(30)],
        text_block(0, &["Let me check."]),
        tool_block(1, "toolu_01A", "read_file", &[r#"{"path": "/etc/hosts"}"#]),
        message_end("tool_use", 40),
    ]);
    let server = MockServer::start(vec![reply.clone(), reply]).await;
    let events: Vec<StreamEvent> = events(&model(&server))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(events.contains(&StreamEvent::ToolCallStart {
        index: 1,
        id: "toolu_01A".into(),
        name: "read_file".into()
    }));
    assert!(events.contains(&StreamEvent::ToolCallEnd { index: 1 }));
    let response = complete(&model(&server)).await.unwrap();
    assert_eq!(response.text, "Let me check.");
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].id, "toolu_01A");
    assert_eq!(response.tool_calls[0].name, "read_file");
    assert_eq!(
        response.tool_calls[0].parsed_arguments().unwrap(),
        json!({"path": "/etc/hosts"})
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
}

#[tokio::test]
async fn two_parallel_tool_calls() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(30)],
        tool_block(0, "toolu_a", "list_files", &[r#"{"path":"#, r#" "src"}"#]),
        tool_block(
            1,
            "toolu_b",
            "read_file",
            &[r#"{"path": "#, r#""Cargo.toml"}"#],
        ),
        message_end("tool_use", 60),
    ])])
    .await;
    let response = complete(&model(&server)).await.unwrap();
    assert_eq!(response.text, "");
    let calls: Vec<(&str, &str, Value)> = response
        .tool_calls
        .iter()
        .map(|c| {
            (
                c.id.as_str(),
                c.name.as_str(),
                c.parsed_arguments().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("toolu_a", "list_files", json!({"path": "src"})),
            ("toolu_b", "read_file", json!({"path": "Cargo.toml"}))
        ]
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
}

#[tokio::test]
async fn argument_json_split_across_many_fragments() {
    let arguments = r#"{"path": "src/main.rs", "lines": [1, 2, 3], "note": "ünïcödé \"quoted\""}"#;
    let chars: Vec<String> = arguments.chars().map(String::from).collect();
    let fragments: Vec<&str> = chars.iter().map(String::as_str).collect();
    let reply = stream_of(vec![
        vec![message_start(30)],
        tool_block(0, "toolu_1", "read_file", &fragments),
        message_end("tool_use", 60),
    ]);
    let server = MockServer::start(vec![reply.clone(), reply]).await;
    let events: Vec<StreamEvent> = events(&model(&server))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
        .count();
    assert_eq!(deltas, fragments.len(), "one delta per non-empty fragment");
    let response = complete(&model(&server)).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, arguments);
    assert_eq!(
        response.tool_calls[0].parsed_arguments().unwrap(),
        json!({"path": "src/main.rs", "lines": [1, 2, 3], "note": "ünïcödé \"quoted\""})
    );
}

#[tokio::test]
async fn usage_from_message_start_and_message_delta() {
    let start = frame(json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 25, "cache_creation_input_tokens": 7,
                  "cache_read_input_tokens": 100, "output_tokens": 1}}}));
    let server = MockServer::start(vec![stream_of(vec![
        vec![start],
        text_block(0, &["ok"]),
        message_end("end_turn", 89),
    ])])
    .await;
    let usage = complete(&model(&server)).await.unwrap().usage;
    assert_eq!(usage.input_tokens, 25);
    assert_eq!(usage.output_tokens, 89);
    assert_eq!(usage.cache_read_tokens, 100);
    assert_eq!(usage.cache_write_tokens, 7);
}

#[tokio::test]
async fn other_stop_reasons() {
    let server = MockServer::start(vec![
        stream_of(vec![
            vec![message_start(1)],
            text_block(0, &["cut"]),
            message_end("max_tokens", 5),
        ]),
        stream_of(vec![vec![message_start(1)], message_end("refusal", 1)]),
    ])
    .await;
    let model = model(&server);
    assert_eq!(
        complete(&model).await.unwrap().finish_reason,
        Some(FinishReason::MaxTokens)
    );
    assert_eq!(
        complete(&model).await.unwrap().finish_reason,
        Some(FinishReason::ContentFilter)
    );
}

// ---- retries and HTTP errors ----

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

#[tokio::test]
async fn rate_limited_then_success_honouring_retry_after() {
    let limited =
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"Rate limited"}}"#;
    let server = MockServer::start(vec![
        Reply::json(429, limited).header("retry-after", "0"),
        text_reply("after the wait"),
    ])
    .await;
    // A long base delay: only `retry-after: 0` keeps this test fast.
    let mut slow = settings(Duration::from_secs(10));
    slow.retry.base_delay = Duration::from_secs(30);
    slow.retry.max_delay = Duration::from_secs(60);
    let response = complete(&model_at(&server.base_url, slow)).await.unwrap();
    assert_eq!(response.text, "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_three_times_then_success() {
    let error =
        r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#;
    let server = MockServer::start(vec![
        Reply::json(500, error),
        Reply::json(500, error),
        Reply::json(500, error),
        text_reply("finally"),
    ])
    .await;
    let response = complete(&model(&server)).await.unwrap();
    assert_eq!(response.text, "finally");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn server_errors_beyond_the_retry_budget_fail() {
    let server = MockServer::start(vec![Reply::json(503, "upstream down"); 5]).await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(
        matches!(err, ModelError::Unavailable { status: 503, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn overloaded_529_then_success() {
    let server =
        MockServer::start(vec![Reply::json(529, OVERLOADED), text_reply("recovered")]).await;
    let response = complete(&model(&server)).await.unwrap();
    assert_eq!(response.text, "recovered");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_names_the_key() {
    let body =
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let server = MockServer::start(vec![Reply::json(401, body), text_reply("never")]).await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(matches!(err, ModelError::Auth { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "invalid API key for anthropic (ANTHROPIC_API_KEY): invalid x-api-key"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn bad_request_is_rejected_without_retry() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#;
    let server = MockServer::start(vec![Reply::json(400, body), text_reply("never")]).await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(
        matches!(err, ModelError::Rejected { status: 400, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("max_tokens: too large"), "{err}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_prompt_too_long_is_a_context_overflow_and_not_retried() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#;
    let server = MockServer::start(vec![Reply::json(400, body), text_reply("never")]).await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err:?}");
    assert!(!err.is_retryable_turn());
    assert_eq!(
        err.to_string(),
        "the request does not fit anthropic's context window: prompt is too long: 208310 tokens > 200000 maximum"
    );
    assert_eq!(server.requests().len(), 1);
}

// ---- stream faults ----

#[tokio::test]
async fn the_mocks_context_limit_is_a_context_overflow() {
    let server = MockServer::start(vec![text_reply("never")]).await;
    server.set_context_limit(1);
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err:?}");
}

#[tokio::test]
async fn a_prompt_too_long_error_event_is_a_context_overflow() {
    let error = sse(
        Some("error"),
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 200001 tokens > 200000 maximum"}}"#,
    );
    let server =
        MockServer::start(vec![stream_of(vec![vec![message_start(10)], vec![error]])]).await;
    let events = events(&model(&server)).await;
    let last = events.last().unwrap().as_ref().unwrap_err();
    assert!(
        matches!(last, ModelError::ContextOverflow { .. }),
        "{last:?}"
    );
    assert!(!last.is_retryable_turn());
}

#[tokio::test]
async fn overloaded_error_event_mid_stream() {
    let error = sse(Some("error"), OVERLOADED);
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        vec![frame(json!({"type": "content_block_start", "index": 0,
                          "content_block": {"type": "text", "text": ""}}))],
        vec![frame(json!({"type": "content_block_delta", "index": 0,
                          "delta": {"type": "text_delta", "text": "partial"}}))],
        vec![error],
    ])])
    .await;
    let events = events(&model(&server)).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Ok(StreamEvent::TextDelta { text }) if text == "partial"))
    );
    let last = events.last().unwrap().as_ref().unwrap_err();
    assert!(matches!(last, ModelError::StreamError { .. }), "{last:?}");
    assert!(!last.to_string().contains("HTTP"), "{last}");
    assert!(last.is_retryable_turn());
    assert!(last.to_string().contains("Overloaded"), "{last}");
}

#[tokio::test]
async fn a_stream_cut_mid_way() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        tool_block(0, "toolu_1", "read_file", &[r#"{"pa"#]),
        vec![Chunk::Cut],
    ])])
    .await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(matches!(err, ModelError::StreamCut { .. }), "{err:?}");
    assert!(err.is_retryable_turn());
}

#[tokio::test]
async fn a_stream_ending_without_message_stop_is_cut() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        text_block(0, &["half"]),
    ])])
    .await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(matches!(err, ModelError::StreamCut { .. }), "{err:?}");
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        text_block(0, &["thinking"]),
        vec![Chunk::Hang],
    ])])
    .await;
    let model = model_at(&server.base_url, settings(Duration::from_millis(200)));
    let err = complete(&model).await.unwrap_err();
    assert!(matches!(err, ModelError::IdleTimeout { .. }), "{err:?}");
}

#[tokio::test]
async fn malformed_tool_arguments_are_passed_through_raw() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        tool_block(
            0,
            "toolu_1",
            "write_file",
            &[r#"{"path": "a.txt", "#, r#""content": "#],
        ),
        message_end("tool_use", 20),
    ])])
    .await;
    let response = complete(&model(&server)).await.unwrap();
    let call = &response.tool_calls[0];
    assert_eq!(call.arguments, r#"{"path": "a.txt", "content": "#);
    assert!(call.parsed_arguments().is_err());
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
}

#[tokio::test]
async fn malformed_event_json_is_a_protocol_error() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        vec![sse(
            Some("content_block_start"),
            r#"{"type":"content_block_start","index":0,"content_blo"#,
        )],
        message_end("end_turn", 1),
    ])])
    .await;
    let err = complete(&model(&server)).await.unwrap_err();
    assert!(matches!(err, ModelError::Protocol { .. }), "{err:?}");
    assert!(err.to_string().contains("content_block_start"), "{err}");
}

#[tokio::test]
async fn unknown_events_and_blocks_are_ignored() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        vec![
            frame(json!({"type": "content_block_start", "index": 0,
                         "content_block": {"type": "thinking", "thinking": "", "signature": ""}})),
            frame(json!({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "thinking_delta", "thinking": "Let me see"}})),
            frame(json!({"type": "content_block_delta", "index": 0,
                         "delta": {"type": "signature_delta", "signature": "EqQB"}})),
            frame(json!({"type": "content_block_stop", "index": 0})),
            frame(json!({"type": "some_future_event", "payload": [1, 2]})),
        ],
        text_block(1, &["answer"]),
        message_end("end_turn", 5),
    ])])
    .await;
    let response = complete(&model(&server)).await.unwrap();
    assert_eq!(response.text, "answer");
    assert!(response.tool_calls.is_empty());
}

// ---- cancellation ----

#[tokio::test]
async fn cancellation_while_streaming() {
    let server = MockServer::start(vec![stream_of(vec![
        vec![message_start(10)],
        text_block(0, &["started"]),
        vec![Chunk::Hang],
    ])])
    .await;
    let model = model_at(&server.base_url, settings(Duration::from_secs(60)));
    let cancel = CancellationToken::new();
    let mut stream = model.stream(&request(), cancel.clone()).await.unwrap();
    loop {
        if let StreamEvent::TextDelta { .. } = stream.next().await.unwrap().unwrap() {
            break;
        }
    }
    let canceller = tokio::spawn({
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        }
    });
    // Guard against a hang only; the idle timeout (60 s) is far beyond it.
    let next = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap();
    assert!(matches!(next, Some(Err(ModelError::Cancelled))), "{next:?}");
    assert!(stream.next().await.is_none());
    drop(stream);
    canceller.await.unwrap();
}

#[tokio::test]
async fn dropping_the_stream_mid_way_is_fine() {
    let server = MockServer::start(vec![
        stream_of(vec![
            vec![message_start(10)],
            text_block(0, &["one"]),
            vec![Chunk::Hang],
        ]),
        text_reply("two"),
    ])
    .await;
    let model = model(&server);
    let mut stream = model
        .stream(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    drop(stream);
    assert_eq!(complete(&model).await.unwrap().text, "two");
}

// ---- what is sent ----

#[tokio::test]
async fn request_body_and_headers() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    let schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    let request = ModelRequest {
        system: "You are terse.".into(),
        messages: vec![
            Message::user("list and read"),
            Message::Assistant {
                text: "Looking.".into(),
                tool_calls: vec![
                    ModelToolCall {
                        id: "toolu_a".into(),
                        name: "list_files".into(),
                        arguments: r#"{"path":"."}"#.into(),
                    },
                    ModelToolCall {
                        id: "toolu_b".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"#.into(),
                    },
                ],
            },
            Message::Tool {
                results: vec![
                    ToolResultMessage {
                        tool_call_id: "toolu_a".into(),
                        tool_name: "list_files".into(),
                        content: "a.txt\nb.txt".into(),
                        is_error: false,
                    },
                    ToolResultMessage {
                        tool_call_id: "toolu_b".into(),
                        tool_name: "read_file".into(),
                        content: "invalid arguments: EOF while parsing".into(),
                        is_error: true,
                    },
                ],
            },
            Message::user("thanks, go on"),
        ],
        tools: vec![ToolDefinition {
            name: "list_files".into(),
            description: "Lists files.".into(),
            input_schema: schema.clone(),
        }],
        max_tokens: 1024,
        temperature: Some(0.25),
        cache_key: Some("session-1".into()),
        output: None,
    };
    model(&server)
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.headers["x-api-key"], "sk-ant-test");
    assert_eq!(sent.headers["anthropic-version"], "2023-06-01");
    assert_eq!(sent.headers["content-type"], "application/json");
    assert_eq!(sent.headers["anthropic-beta"], "tools-2024-05-16");
    assert!(!sent.headers.contains_key("authorization"));
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-x",
            "max_tokens": 1024,
            "system": [{"type": "text", "text": "You are terse.",
                        "cache_control": {"type": "ephemeral"}}],
            "temperature": 0.25,
            "stream": true,
            "tools": [{"name": "list_files", "description": "Lists files.", "input_schema": schema}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "list and read",
                                              "cache_control": {"type": "ephemeral"}}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "toolu_a", "name": "list_files", "input": {"path": "."}},
                    {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "a.txt\nb.txt"},
                    {"type": "tool_result", "tool_use_id": "toolu_b",
                     "content": "invalid arguments: EOF while parsing", "is_error": true},
                    {"type": "text", "text": "thanks, go on",
                     "cache_control": {"type": "ephemeral"}}
                ]}
            ]
        })
    );
    let roles: Vec<&str> = sent.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert!(
        roles.windows(2).all(|pair| pair[0] != pair[1]),
        "roles alternate: {roles:?}"
    );
}

#[tokio::test]
async fn empty_system_and_tools_are_omitted() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    let request = ModelRequest::new("", vec![Message::user("hi")], Vec::new());
    model(&server)
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let body = &server.requests()[0].body;
    assert!(body.get("system").is_none(), "{body}");
    assert!(body.get("tools").is_none(), "{body}");
    assert!(body.get("temperature").is_none(), "{body}");
    assert_eq!(body["stream"], true);
}

#[tokio::test]
async fn base_url_with_or_without_v1() {
    let server = MockServer::start(vec![
        text_reply("a"),
        text_reply("b"),
        text_reply("c"),
        text_reply("d"),
    ])
    .await;
    for base in [
        server.base_url.clone(),
        format!("{}/", server.base_url),
        format!("{}/v1", server.base_url),
        format!("{}/v1/", server.base_url),
    ] {
        let model = model_at(&base, settings(Duration::from_secs(10)));
        complete(&model).await.unwrap();
    }
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/messages"; 4]);
}
