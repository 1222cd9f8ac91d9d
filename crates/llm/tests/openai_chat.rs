//! The OpenAI Chat Completions client against a mock that speaks the real SSE protocol: text,
//! tool calls (single, parallel, fragmented, malformed), usage, retries, auth failures, stream
//! faults, cancellation, the quirks of compatible servers, the exact request body and headers,
//! and the endpoint configuration read from the environment.

use std::time::Duration;

use futures::StreamExt;
use golem_llm::http::HttpSettings;
use golem_llm::providers::openai_chat::{ChatStreamDecoder, OpenAiChatModel};
use golem_llm::providers::openai_common::OpenAiConfig;
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

fn data(chunk: Value) -> Chunk {
    sse(None, &chunk.to_string())
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> Chunk {
    data(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": "gpt-4o-mini", "system_fingerprint": "fp_1", "service_tier": "default",
                "choices": [{"index": 0, "delta": delta, "logprobs": null,
                             "finish_reason": finish_reason}],
                "usage": null}),
    )
}

pub(crate) fn role() -> Chunk {
    chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        None,
    )
}

pub(crate) fn text(part: &str) -> Chunk {
    chunk(json!({"content": part}), None)
}

pub(crate) fn finish(reason: &str) -> Chunk {
    chunk(json!({}), Some(reason))
}

pub(crate) fn usage(prompt: u64, completion: u64, cached: u64) -> Chunk {
    data(
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": "gpt-4o-mini", "choices": [],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion,
                          "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                              "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}}),
    )
}

pub(crate) fn done() -> Chunk {
    sse(None, "[DONE]")
}

/// The first fragment of a call: id, type and name, empty arguments.
pub(crate) fn call_start(index: usize, id: &str, name: &str) -> Chunk {
    chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                 "function": {"name": name, "arguments": ""}}]}),
        None,
    )
}

pub(crate) fn call_args(index: usize, arguments: &str) -> Chunk {
    chunk(
        json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}),
        None,
    )
}

fn text_reply(answer: &str) -> Reply {
    Reply::sse(vec![
        role(),
        text(answer),
        finish("stop"),
        usage(10, 3, 0),
        done(),
    ])
}

// ---- helpers ----

pub(crate) fn settings() -> HttpSettings {
    HttpSettings {
        connect_timeout: Duration::from_secs(5),
        headers_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            ..RetryPolicy::default()
        },
    }
}

fn config(server: &MockServer) -> OpenAiConfig {
    OpenAiConfig::new(
        "openai",
        format!("{}/v1/", server.base_url),
        Some("sk-test".into()),
        "OPENAI_API_KEY",
    )
    .with_settings(settings())
}

pub(crate) fn model(config: OpenAiConfig) -> OpenAiChatModel {
    let provider = config.provider.clone();
    OpenAiChatModel::new(
        ModelSpec {
            provider,
            model: "gpt-4o-mini".into(),
        },
        config,
    )
    .unwrap()
}

fn read_file_tool() -> ToolDefinition {
    ToolDefinition {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}},
                             "required": ["path"]}),
    }
}

fn request() -> ModelRequest {
    ModelRequest::new(
        "You are terse.",
        vec![Message::user("hi")],
        vec![read_file_tool()],
    )
}

async fn complete(server: &MockServer) -> Result<ModelResponse, ModelError> {
    model(config(server))
        .complete(&request(), CancellationToken::new())
        .await
}

async fn events(server: &MockServer) -> Vec<StreamEvent> {
    let stream = model(config(server))
        .stream(&request(), CancellationToken::new())
        .await
        .unwrap();
    stream.map(Result::unwrap).collect().await
}

// ---- streaming ----

#[tokio::test]
async fn streams_text() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        text("Hel"),
        chunk(json!({"content": ""}), None),
        text("lo!"),
        finish("stop"),
        usage(12, 4, 0),
        done(),
    ])])
    .await;
    let events = events(&server).await;
    // The chunks' id and model are told once, before the text.
    assert_eq!(
        events[..2],
        [
            StreamEvent::ResponseInfo {
                id: Some("chatcmpl-1".into()),
                model: Some("gpt-4o-mini".into()),
            },
            StreamEvent::TextDelta { text: "Hel".into() }
        ]
    );
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::EndTurn
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");

    let server = MockServer::start(vec![text_reply("Hello!")]).await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "Hello!");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.finish_reason, Some(FinishReason::EndTurn));
    assert_eq!(response.response_id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(response.response_model.as_deref(), Some("gpt-4o-mini"));
}

#[tokio::test]
async fn a_single_tool_call() {
    let server = MockServer::start(vec![Reply::sse(vec![
        chunk(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0,
            "id": "call_abc", "type": "function", "function": {"name": "read_file", "arguments": ""}}],
            "refusal": null}), None),
        call_args(0, "{\"path\""),
        call_args(0, ": \"/etc/hosts\"}"),
        finish("tool_calls"),
        usage(50, 20, 0),
        done(),
    ])])
    .await;
    let events = events(&server).await;
    assert_eq!(
        events,
        vec![
            StreamEvent::ResponseInfo {
                id: Some("chatcmpl-1".into()),
                model: Some("gpt-4o-mini".into()),
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_abc".into(),
                name: "read_file".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"path\"".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: ": \"/etc/hosts\"}".into()
            },
            StreamEvent::Usage {
                usage: golem_protocol::TokenUsage {
                    input_tokens: 50,
                    output_tokens: 20,
                    ..Default::default()
                }
            },
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::Finish {
                reason: FinishReason::ToolUse
            },
        ]
    );
}

#[tokio::test]
async fn two_parallel_tool_calls_interleaved() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        call_start(0, "call_a", "read_file"),
        call_start(1, "call_b", "read_file"),
        call_args(1, "{\"path\": "),
        call_args(0, "{\"path\": "),
        call_args(0, "\"/a\"}"),
        call_args(1, "\"/b\"}"),
        finish("tool_calls"),
        usage(5, 5, 0),
        done(),
    ])])
    .await;
    let response = complete(&server).await.unwrap();
    assert_eq!(
        response.tool_calls,
        vec![
            ModelToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "/a"}"#.into()
            },
            ModelToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: r#"{"path": "/b"}"#.into()
            },
        ]
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
}

#[tokio::test]
async fn argument_json_split_across_many_fragments() {
    let arguments =
        r#"{"path": "/very/long/path/to/some/file.txt", "lines": [1, 2, 3], "note": "ünïcødé"}"#;
    let mut chunks = vec![role(), call_start(0, "call_1", "read_file")];
    let characters: Vec<char> = arguments.chars().collect();
    for piece in characters.chunks(3) {
        chunks.push(call_args(0, &piece.iter().collect::<String>()));
    }
    chunks.extend([finish("tool_calls"), done()]);
    let fragments = chunks.len() - 4;
    let server = MockServer::start(vec![Reply::sse(chunks)]).await;
    let events = events(&server).await;
    let deltas = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
        .count();
    assert_eq!(deltas, fragments);
    let server = MockServer::start(vec![Reply::sse({
        let mut chunks = vec![call_start(0, "call_1", "read_file")];
        chunks.extend(
            characters
                .chunks(2)
                .map(|p| call_args(0, &p.iter().collect::<String>())),
        );
        chunks.extend([finish("tool_calls"), done()]);
        chunks
    })])
    .await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, arguments);
    assert_eq!(
        response.tool_calls[0].parsed_arguments().unwrap()["note"],
        "ünïcødé"
    );
}

#[tokio::test]
async fn usage_from_include_usage_chunk() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        text("ok"),
        finish("stop"),
        usage(1200, 34, 1024),
        done(),
    ])])
    .await;
    let response = complete(&server).await.unwrap();
    // 1200 prompt tokens of which 1024 cached: 176 at the full price.
    assert_eq!(response.usage.input_tokens, 176);
    assert_eq!(response.usage.output_tokens, 34);
    assert_eq!(response.usage.cache_read_tokens, 1024);
    assert_eq!(
        server.requests()[0].body["stream_options"],
        json!({"include_usage": true})
    );
}

#[tokio::test]
async fn malformed_tool_arguments_pass_through_raw() {
    let server = MockServer::start(vec![Reply::sse(vec![
        call_start(0, "call_1", "read_file"),
        call_args(0, "{\"path\": \"/a"),
        call_args(0, "\", oops}"),
        finish("tool_calls"),
        done(),
    ])])
    .await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, "{\"path\": \"/a\", oops}");
    assert!(response.tool_calls[0].parsed_arguments().is_err());
}

// ---- retries and HTTP errors ----

#[tokio::test]
async fn retries_429_honouring_retry_after() {
    let server = MockServer::start(vec![
        Reply::json(429, r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#)
            .header("retry-after", "0"),
        text_reply("after the wait"),
    ])
    .await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn context_length_exceeded_is_a_context_overflow_and_not_retried() {
    let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130410 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let server = MockServer::start(vec![Reply::json(400, body), text_reply("never")]).await;
    let err = complete(&server).await.unwrap_err();
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err:?}");
    assert!(
        err.to_string().contains("maximum context length is 128000"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_mocks_context_limit_is_a_context_overflow() {
    let server = MockServer::start(vec![text_reply("never")]).await;
    server.set_context_limit(1);
    let err = complete(&server).await.unwrap_err();
    assert!(matches!(err, ModelError::ContextOverflow { .. }), "{err:?}");
}

#[tokio::test]
async fn retries_500_three_times_then_succeeds() {
    let error = r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#;
    let server = MockServer::start(vec![
        Reply::json(500, error),
        Reply::json(502, "Bad Gateway"),
        Reply::json(503, error),
        text_reply("finally"),
    ])
    .await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "finally");
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn a_401_is_not_retried_and_names_the_variable() {
    let server = MockServer::start(vec![Reply::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
    )])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::Auth { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.starts_with("invalid API key for openai (OPENAI_API_KEY): Incorrect API key"),
        "{message}"
    );
    assert_eq!(server.requests().len(), 1);
}

// ---- stream faults ----

#[tokio::test]
async fn a_stream_cut_midway_is_stream_cut() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        text("partial"),
        call_start(0, "call_1", "read_file"),
        call_args(0, "{\"pa"),
        // Let the headers and the first events go out before the connection breaks.
        Chunk::Delay(Duration::from_millis(50)),
        Chunk::Cut,
    ])])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");
    assert!(error.is_retryable_turn());
}

#[tokio::test]
async fn a_stream_ending_without_finish_is_stream_cut() {
    let server = MockServer::start(vec![Reply::sse(vec![role(), text("partial")])]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        text("thinking"),
        Chunk::Hang,
    ])])
    .await;
    let mut config = config(&server);
    config.settings.idle_timeout = Duration::from_millis(200);
    let error = model(config)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::IdleTimeout { .. }), "{error:?}");
}

#[tokio::test]
async fn cancellation_while_streaming() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        text("first"),
        Chunk::Delay(Duration::from_secs(30)),
        text("never"),
        finish("stop"),
        done(),
    ])])
    .await;
    let cancel = CancellationToken::new();
    let mut stream = model(config(&server))
        .stream(&request(), cancel.clone())
        .await
        .unwrap();
    assert!(matches!(
        stream.next().await.unwrap().unwrap(),
        StreamEvent::ResponseInfo { .. }
    ));
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        StreamEvent::TextDelta {
            text: "first".into()
        }
    );
    cancel.cancel();
    let next = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .unwrap();
    assert_eq!(next, Some(Err(ModelError::Cancelled)));
    assert!(stream.next().await.is_none());
}

#[tokio::test]
async fn an_error_object_in_the_stream() {
    let server = MockServer::start(vec![Reply::sse(vec![
        role(),
        text("so"),
        data(json!({"error": {"message": "The server is overloaded", "type": "server_error", "code": null}})),
    ])])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamError { .. }), "{error:?}");
    let server = MockServer::start(vec![Reply::sse(vec![data(
        json!({"error": {"message": "Invalid prompt", "type": "invalid_request_error", "code": "invalid_prompt"}}),
    )])])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::Protocol { .. }), "{error:?}");
    let server = MockServer::start(vec![Reply::sse(vec![sse(None, "{not json")])]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::Protocol { .. }), "{error:?}");
    // A proxy answering 200 with a JSON error instead of a stream.
    let server = MockServer::start(vec![Reply::json(
        200,
        r#"{"error":{"message":"Upstream rate limit exceeded","code":429}}"#,
    )])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(
        matches!(error, ModelError::StreamError { .. }) && error.is_retryable_turn(),
        "{error:?}"
    );
    let server = MockServer::start(vec![Reply::json(
        200,
        r#"{"id":"chatcmpl-1","choices":[]}"#,
    )])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(
        error.to_string().contains("expected an event stream"),
        "{error}"
    );
}

// ---- quirks of compatible servers ----

#[tokio::test]
async fn quirks_empty_deltas_missing_ids_separate_finish_and_no_done() {
    let bare = |delta: Value, finish: Value| {
        data(
            json!({"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "llama3",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
        )
    };
    let server = MockServer::start(vec![Reply::sse(vec![
        bare(json!({"role": "assistant"}), Value::Null),
        bare(json!({}), Value::Null),
        bare(json!({"content": null}), Value::Null),
        data(json!({"id": "x", "object": "chat.completion.chunk", "choices": []})),
        bare(json!({"content": "Checking."}), Value::Null),
        bare(
            json!({"tool_calls": [{"index": 0, "type": "function",
                                    "function": {"name": "read_file", "arguments": null}}]}),
            Value::Null,
        ),
        bare(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":\"/x\"}"}}]}),
            Value::Null,
        ),
        bare(
            json!({"tool_calls": [{"index": 1, "id": null, "function": {"name": "read_file",
                                    "arguments": "{\"path\":\"/y\"}"}}]}),
            Value::Null,
        ),
        bare(json!({"content": ""}), json!("tool_calls")),
        data(
            json!({"id": "x", "object": "chat.completion.chunk", "choices": [],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}}),
        ),
    ])])
    .await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "Checking.");
    let ids: Vec<&str> = response.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_0", "call_1"]);
    assert_eq!(response.tool_calls[1].arguments, "{\"path\":\"/y\"}");
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
    assert_eq!(response.usage.input_tokens, 7);
}

#[test]
fn decoder_quirks_reused_index_and_stop_with_tool_calls() {
    let mut decoder = ChatStreamDecoder::new("ollama");
    let mut events = Vec::new();
    for line in [
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_x","function":{"name":"a","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_y","function":{"name":"b","arguments":{"k":1}}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"hi"}]},"finish_reason":"stop"}]}"#,
    ] {
        events.extend(decoder.feed("message", line).unwrap());
    }
    events.extend(decoder.finish().unwrap());
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_x".into(),
                name: "a".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{}".into()
            },
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::ToolCallStart {
                index: 1,
                id: "call_y".into(),
                name: "b".into()
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: r#"{"k":1}"#.into()
            },
            StreamEvent::TextDelta { text: "hi".into() },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::Finish {
                reason: FinishReason::ToolUse
            },
        ]
    );

    let mut decoder = ChatStreamDecoder::new("openai");
    assert!(
        decoder
            .feed(
                "message",
                r#"{"choices":[{"index":0,"delta":{"content":"x"}}]}"#
            )
            .is_ok()
    );
    let error = decoder.finish().unwrap_err();
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");

    let mut decoder = ChatStreamDecoder::new("openai");
    decoder
        .feed(
            "message",
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#,
        )
        .unwrap();
    assert_eq!(
        decoder.feed("message", "[DONE]").unwrap(),
        vec![StreamEvent::Finish {
            reason: FinishReason::MaxTokens
        }]
    );
    assert!(decoder.is_done());
    assert_eq!(decoder.finish().unwrap(), vec![]);
}

// ---- the request ----

fn history_request() -> ModelRequest {
    let mut request = ModelRequest::new(
        "You are terse.",
        vec![
            Message::user("read two files"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ModelToolCall {
                        id: "call_a".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path":"/a"}"#.into(),
                    },
                    ModelToolCall {
                        id: "call_b".into(),
                        name: "read_file".into(),
                        arguments: "{bad".into(),
                    },
                ],
            },
            Message::Tool {
                results: vec![
                    ToolResultMessage {
                        tool_call_id: "call_a".into(),
                        tool_name: "read_file".into(),
                        content: "A".into(),
                        is_error: false,
                    },
                    ToolResultMessage {
                        tool_call_id: "call_b".into(),
                        tool_name: "read_file".into(),
                        content: "invalid arguments".into(),
                        is_error: true,
                    },
                ],
            },
            Message::assistant("Done."),
            Message::user("thanks"),
        ],
        vec![read_file_tool()],
    );
    request.max_tokens = 1000;
    request.temperature = Some(0.2);
    request
}

#[tokio::test]
async fn the_request_body_and_headers() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    model(config(&server))
        .complete(&history_request(), CancellationToken::new())
        .await
        .unwrap();
    let sent = &server.requests()[0];
    assert_eq!(
        sent.headers.get("authorization").map(String::as_str),
        Some("Bearer sk-test")
    );
    assert_eq!(
        sent.headers.get("content-type").map(String::as_str),
        Some("application/json")
    );
    assert_eq!(
        sent.body,
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "read two files"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"/a\"}"}},
                    {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_a", "content": "A"},
                {"role": "tool", "tool_call_id": "call_b", "content": "Error: invalid arguments"},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": "thanks"},
            ],
            "tools": [{"type": "function", "function": {"name": "read_file", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_completion_tokens": 1000,
            "temperature": 0.2,
        })
    );
}

#[tokio::test]
async fn ollama_sends_no_key_and_max_tokens() {
    let server = MockServer::start(vec![text_reply("ok"), text_reply("ok")]).await;
    let base = format!("{}/v1", server.base_url);
    let config =
        OpenAiConfig::ollama_from(|name| (name == "OLLAMA_BASE_URL").then(|| base.clone()))
            .with_settings(settings())
            .with_header("X-Title", "golem-forge");
    assert_eq!(config.provider, "ollama");
    let mut request = request();
    request.tools.clear();
    model(config)
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert!(
        !sent.headers.contains_key("authorization"),
        "{:?}",
        sent.headers
    );
    assert_eq!(
        sent.headers.get("x-title").map(String::as_str),
        Some("golem-forge")
    );
    assert_eq!(sent.body["max_tokens"], 8192);
    assert!(sent.body.get("max_completion_tokens").is_none());
    assert!(sent.body.get("tools").is_none());
}

#[test]
fn configuration_from_the_environment() {
    let none = |_: &str| None::<String>;
    let error = OpenAiConfig::openai_from(none).unwrap_err();
    assert_eq!(
        error,
        ModelError::MissingApiKey {
            provider: "openai".into(),
            env: "OPENAI_API_KEY".into()
        }
    );
    assert!(error.to_string().contains("OPENAI_API_KEY"));
    let config =
        OpenAiConfig::openai_from(|name| (name == "OPENAI_API_KEY").then(|| "sk-1".to_owned()))
            .unwrap();
    assert_eq!(
        config.url("/chat/completions"),
        "https://api.openai.com/v1/chat/completions"
    );
    assert_eq!(config.api_key.as_deref(), Some("sk-1"));
    assert!(!format!("{config:?}").contains("sk-1"));
    let config = OpenAiConfig::openai_from(|name| match name {
        "OPENAI_API_KEY" => Some("sk-1".to_owned()),
        "OPENAI_BASE_URL" => Some("http://proxy:8080/v1/".to_owned()),
        _ => None,
    })
    .unwrap();
    assert_eq!(config.url("/responses"), "http://proxy:8080/v1/responses");
    let error = OpenAiConfig::openrouter_from(none).unwrap_err();
    assert!(error.to_string().contains("OPENROUTER_API_KEY"), "{error}");
    let config = OpenAiConfig::openrouter_from(|name| {
        (name == "OPENROUTER_API_KEY").then(|| "k".to_owned())
    })
    .unwrap();
    assert_eq!(
        config.url("/chat/completions"),
        "https://openrouter.ai/api/v1/chat/completions"
    );
    let config = OpenAiConfig::ollama_from(none);
    assert_eq!(
        (config.base_url.as_str(), config.api_key.is_none()),
        ("http://localhost:11434/v1", true)
    );
    let config =
        OpenAiConfig::ollama_from(|name| (name == "OLLAMA_HOST").then(|| "gpu-box".to_owned()));
    assert_eq!(config.base_url, "http://gpu-box:11434/v1");
    let bad = OpenAiConfig::new("local", "not a url", None, "");
    let error = OpenAiChatModel::new(
        ModelSpec {
            provider: "local".into(),
            model: "m".into(),
        },
        bad,
    )
    .unwrap_err();
    assert!(matches!(error, ModelError::Config(_)), "{error:?}");
}
