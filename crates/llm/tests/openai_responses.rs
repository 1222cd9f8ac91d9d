//! The OpenAI Responses API client against a mock that speaks the real SSE protocol: text,
//! function calls (one, two, fragmented), usage, retries, auth failures, stream faults,
//! cancellation, failed responses, and the exact request body sent.

use std::time::Duration;

use futures::StreamExt;
use golem_llm::http::HttpSettings;
use golem_llm::providers::openai_common::OpenAiConfig;
use golem_llm::providers::openai_responses::{OpenAiResponsesModel, ResponsesStreamDecoder};
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

/// One event's data; its `type` names the SSE event and [`stream_of`] numbers it.
fn frame(data: Value) -> Value {
    data
}

pub(crate) fn stream_of(events: Vec<Value>) -> Vec<Chunk> {
    events
        .into_iter()
        .enumerate()
        .map(|(n, mut data)| {
            data["sequence_number"] = json!(n);
            let event = data["type"].as_str().unwrap().to_owned();
            sse(Some(&event), &data.to_string())
        })
        .collect()
}

fn response_object(status: &str, output: Value, usage: Value) -> Value {
    json!({"id": "resp_1", "object": "response", "created_at": 1_741_290_958, "status": status,
           "error": null, "incomplete_details": null, "instructions": "You are terse.",
           "max_output_tokens": null, "model": "gpt-4.1-2025-04-14", "output": output,
           "parallel_tool_calls": true, "previous_response_id": null, "store": false,
           "temperature": 1.0, "tool_choice": "auto", "tools": [], "top_p": 1.0,
           "truncation": "disabled", "usage": usage, "metadata": {}})
}

pub(crate) fn created() -> Vec<Value> {
    vec![
        frame(
            json!({"type": "response.created", "response": response_object("in_progress", json!([]), Value::Null)}),
        ),
        frame(
            json!({"type": "response.in_progress", "response": response_object("in_progress", json!([]), Value::Null)}),
        ),
    ]
}

pub(crate) fn message_item(text: &str, status: &str) -> Value {
    let content = if status == "completed" {
        json!([{"type": "output_text", "annotations": [], "logprobs": [], "text": text}])
    } else {
        json!([])
    };
    json!({"id": "msg_1", "type": "message", "status": status, "content": content, "role": "assistant"})
}

pub(crate) fn text_events(output_index: usize, parts: &[&str]) -> Vec<Value> {
    let full: String = parts.concat();
    let mut events = vec![
        frame(
            json!({"type": "response.output_item.added", "output_index": output_index,
                     "item": message_item("", "in_progress")}),
        ),
        frame(
            json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": output_index,
                     "content_index": 0, "part": {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}}),
        ),
    ];
    for part in parts {
        events.push(frame(
            json!({"type": "response.output_text.delta", "item_id": "msg_1",
            "output_index": output_index, "content_index": 0, "delta": part, "logprobs": []}),
        ));
    }
    events.extend([
        frame(json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": output_index,
                     "content_index": 0, "text": full, "logprobs": []})),
        frame(json!({"type": "response.content_part.done", "item_id": "msg_1", "output_index": output_index,
                     "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": full}})),
        frame(json!({"type": "response.output_item.done", "output_index": output_index,
                     "item": message_item(&full, "completed")})),
    ]);
    events
}

pub(crate) fn call_item(
    n: usize,
    call_id: &str,
    name: &str,
    arguments: &str,
    status: &str,
) -> Value {
    json!({"id": format!("fc_{n}"), "type": "function_call", "status": status,
           "arguments": arguments, "call_id": call_id, "name": name})
}

fn call_added(output_index: usize, call_id: &str, name: &str) -> Value {
    frame(
        json!({"type": "response.output_item.added", "output_index": output_index,
                 "item": call_item(output_index, call_id, name, "", "in_progress")}),
    )
}

fn call_delta(output_index: usize, delta: &str) -> Value {
    frame(
        json!({"type": "response.function_call_arguments.delta", "item_id": format!("fc_{output_index}"),
                 "output_index": output_index, "delta": delta}),
    )
}

fn call_done(output_index: usize, call_id: &str, name: &str, arguments: &str) -> Vec<Value> {
    vec![
        frame(
            json!({"type": "response.function_call_arguments.done", "item_id": format!("fc_{output_index}"),
                     "output_index": output_index, "arguments": arguments}),
        ),
        frame(
            json!({"type": "response.output_item.done", "output_index": output_index,
                     "item": call_item(output_index, call_id, name, arguments, "completed")}),
        ),
    ]
}

pub(crate) fn usage(input: u64, output: u64, cached: u64) -> Value {
    json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
           "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
           "total_tokens": input + output})
}

pub(crate) fn completed(output: Value, usage: Value) -> Value {
    frame(
        json!({"type": "response.completed", "response": response_object("completed", output, usage)}),
    )
}

fn text_reply(text: &str) -> Reply {
    let mut events = created();
    events.extend(text_events(0, &[text]));
    events.push(completed(
        json!([message_item(text, "completed")]),
        usage(10, 3, 0),
    ));
    Reply::sse(stream_of(events))
}

/// A function call at `output_index` streamed in `fragments`.
pub(crate) fn call_events(output_index: usize, call_id: &str, fragments: &[&str]) -> Vec<Value> {
    let mut events = vec![call_added(output_index, call_id, "read_file")];
    events.extend(fragments.iter().map(|f| call_delta(output_index, f)));
    events.extend(call_done(
        output_index,
        call_id,
        "read_file",
        &fragments.concat(),
    ));
    events
}

// ---- helpers ----

fn config(server: &MockServer) -> OpenAiConfig {
    let settings = HttpSettings {
        connect_timeout: Duration::from_secs(5),
        headers_timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        retry: RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(10),
            max_delay: Duration::from_millis(100),
            ..RetryPolicy::default()
        },
    };
    OpenAiConfig::new(
        "openai",
        format!("{}/v1", server.base_url),
        Some("sk-test".into()),
        "OPENAI_API_KEY",
    )
    .with_settings(settings)
}

pub(crate) fn model(config: OpenAiConfig) -> OpenAiResponsesModel {
    OpenAiResponsesModel::new(
        ModelSpec {
            provider: "openai-responses".into(),
            model: "gpt-4.1".into(),
        },
        config,
    )
    .unwrap()
}

fn read_file_tool() -> ToolDefinition {
    ToolDefinition {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
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

// ---- streaming ----

#[tokio::test]
async fn streams_text() {
    let mut events = created();
    events.extend(text_events(0, &["Hel", "lo", "!"]));
    events.push(completed(
        json!([message_item("Hello!", "completed")]),
        usage(10, 3, 0),
    ));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let stream = model(config(&server))
        .stream(&request(), CancellationToken::new())
        .await
        .unwrap();
    let events: Vec<StreamEvent> = stream.map(Result::unwrap).collect().await;
    let texts: Vec<&StreamEvent> = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::TextDelta { .. }))
        .collect();
    assert_eq!(texts.len(), 3, "{events:?}");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            reason: FinishReason::EndTurn
        })
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(
        requests[0].headers.get("authorization").map(String::as_str),
        Some("Bearer sk-test")
    );

    let server = MockServer::start(vec![text_reply("Hello!")]).await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "Hello!");
    assert_eq!(response.finish_reason, Some(FinishReason::EndTurn));
    assert_eq!(response.response_id.as_deref(), Some("resp_1"));
    assert_eq!(
        response.response_model.as_deref(),
        Some("gpt-4.1-2025-04-14")
    );
}

#[tokio::test]
async fn one_function_call() {
    let mut events = created();
    events.extend(call_events(0, "call_1", &["{\"path\":", "\"/etc/hosts\"}"]));
    let output = json!([call_item(
        0,
        "call_1",
        "read_file",
        "{\"path\":\"/etc/hosts\"}",
        "completed"
    )]);
    events.push(completed(output, usage(40, 12, 0)));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let stream = model(config(&server))
        .stream(&request(), CancellationToken::new())
        .await
        .unwrap();
    let events: Vec<StreamEvent> = stream.map(Result::unwrap).collect().await;
    assert_eq!(
        events,
        vec![
            StreamEvent::ResponseInfo {
                id: Some("resp_1".into()),
                model: Some("gpt-4.1-2025-04-14".into()),
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "call_1".into(),
                name: "read_file".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"path\":".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "\"/etc/hosts\"}".into()
            },
            StreamEvent::ToolCallEnd { index: 0 },
            StreamEvent::Usage {
                usage: golem_protocol::TokenUsage {
                    input_tokens: 40,
                    output_tokens: 12,
                    ..Default::default()
                }
            },
            StreamEvent::Finish {
                reason: FinishReason::ToolUse
            },
        ]
    );
}

#[tokio::test]
async fn text_then_two_function_calls() {
    let mut events = created();
    events.extend(text_events(0, &["Reading both."]));
    events.push(call_added(1, "call_a", "read_file"));
    events.push(call_added(2, "call_b", "read_file"));
    events.push(call_delta(1, "{\"path\":\"/a\"}"));
    events.push(call_delta(2, "{\"path\":\"/b\"}"));
    events.extend(call_done(1, "call_a", "read_file", "{\"path\":\"/a\"}"));
    events.extend(call_done(2, "call_b", "read_file", "{\"path\":\"/b\"}"));
    let output = json!([
        message_item("Reading both.", "completed"),
        call_item(1, "call_a", "read_file", "{\"path\":\"/a\"}", "completed"),
        call_item(2, "call_b", "read_file", "{\"path\":\"/b\"}", "completed")
    ]);
    events.push(completed(output, usage(40, 30, 0)));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "Reading both.");
    assert_eq!(
        response.tool_calls,
        vec![
            ModelToolCall {
                id: "call_a".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"/a"}"#.into()
            },
            ModelToolCall {
                id: "call_b".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"/b"}"#.into()
            },
        ]
    );
    assert_eq!(response.finish_reason, Some(FinishReason::ToolUse));
}

#[tokio::test]
async fn fragmented_and_malformed_arguments() {
    let arguments = r#"{"path": "/very/long/path/file.txt", "note": "ünïcødé", "n": [1, 2, 3]}"#;
    let characters: Vec<char> = arguments.chars().collect();
    let fragments: Vec<String> = characters.chunks(2).map(|c| c.iter().collect()).collect();
    let fragments: Vec<&str> = fragments.iter().map(String::as_str).collect();
    let mut events = created();
    events.extend(call_events(0, "call_1", &fragments));
    events.push(completed(json!([]), usage(1, 1, 0)));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, arguments);
    assert_eq!(
        response.tool_calls[0].parsed_arguments().unwrap()["note"],
        "ünïcødé"
    );

    let mut events = created();
    events.extend(call_events(0, "call_1", &["{\"path\": \"/a", "\", oops}"]));
    events.push(completed(json!([]), usage(1, 1, 0)));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.tool_calls[0].arguments, "{\"path\": \"/a\", oops}");
    assert!(response.tool_calls[0].parsed_arguments().is_err());
}

#[tokio::test]
async fn usage_and_max_tokens() {
    let mut events = created();
    events.extend(text_events(0, &["cut sh"]));
    let mut response = response_object(
        "incomplete",
        json!([message_item("cut sh", "completed")]),
        usage(2000, 16, 1536),
    );
    response["incomplete_details"] = json!({"reason": "max_output_tokens"});
    events.push(frame(
        json!({"type": "response.incomplete", "response": response}),
    ));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let response = complete(&server).await.unwrap();
    assert_eq!(response.text, "cut sh");
    // 2000 input tokens of which 1536 cached: 464 at the full price.
    assert_eq!(response.usage.input_tokens, 464);
    assert_eq!(response.usage.output_tokens, 16);
    assert_eq!(response.usage.cache_read_tokens, 1536);
    assert_eq!(response.finish_reason, Some(FinishReason::MaxTokens));
}

// ---- retries and HTTP errors ----

#[tokio::test]
async fn retries_429_then_succeeds() {
    let server = MockServer::start(vec![
        Reply::json(429, r#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#)
            .header("retry-after", "0"),
        text_reply("after the wait"),
    ])
    .await;
    assert_eq!(complete(&server).await.unwrap().text, "after the wait");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn context_length_exceeded_is_a_context_overflow_and_not_retried() {
    let body = r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}"#;
    let server = MockServer::start(vec![Reply::json(400, body), text_reply("never")]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(
        matches!(error, ModelError::ContextOverflow { .. }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("exceeds the context window"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_mocks_context_limit_is_a_context_overflow() {
    let server = MockServer::start(vec![text_reply("never")]).await;
    server.set_context_limit(1);
    let error = complete(&server).await.unwrap_err();
    assert!(
        matches!(error, ModelError::ContextOverflow { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_401_is_not_retried() {
    let server = MockServer::start(vec![Reply::json(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-test.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
    )])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::Auth { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "invalid API key for openai (OPENAI_API_KEY): Incorrect API key provided: sk-test."
    );
    assert_eq!(server.requests().len(), 1);
}

// ---- stream faults ----

#[tokio::test]
async fn a_stream_cut_midway_is_stream_cut() {
    let mut events = created();
    events.extend(text_events(0, &["partial"]));
    events.push(call_added(1, "call_1", "read_file"));
    events.push(call_delta(1, "{\"pa"));
    let mut chunks = stream_of(events);
    // Let the headers and the first events go out before the connection breaks.
    chunks.extend([Chunk::Delay(Duration::from_millis(50)), Chunk::Cut]);
    let server = MockServer::start(vec![Reply::sse(chunks)]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");

    let mut events = created();
    events.extend(text_events(0, &["no completed event"]));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamCut { .. }), "{error:?}");
}

#[tokio::test]
async fn an_idle_stream_times_out() {
    let mut chunks = stream_of(created());
    chunks.push(Chunk::Hang);
    let server = MockServer::start(vec![Reply::sse(chunks)]).await;
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
    let mut events = created();
    events.extend(text_events(0, &["first"]));
    let mut chunks = stream_of(events);
    chunks.push(Chunk::Delay(Duration::from_secs(30)));
    chunks.extend(stream_of(vec![completed(json!([]), usage(1, 1, 0))]));
    let server = MockServer::start(vec![Reply::sse(chunks)]).await;
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
async fn failed_responses_and_error_events() {
    let failed = |code: &str, message: &str| {
        let mut response = response_object("failed", json!([]), Value::Null);
        response["error"] = json!({"code": code, "message": message});
        let mut events = created();
        events.push(frame(
            json!({"type": "response.failed", "response": response}),
        ));
        Reply::sse(stream_of(events))
    };
    let server = MockServer::start(vec![failed(
        "server_error",
        "The model failed to generate a response.",
    )])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::StreamError { .. }), "{error:?}");
    assert!(error.to_string().contains("The model failed"), "{error}");

    let server = MockServer::start(vec![failed(
        "context_length_exceeded",
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
    )])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(
        matches!(error, ModelError::ContextOverflow { .. }),
        "{error:?}"
    );
    assert!(!error.is_retryable_turn());

    let server = MockServer::start(vec![failed("invalid_prompt", "Invalid prompt.")]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::Protocol { .. }), "{error:?}");

    let mut events = created();
    events.push(frame(json!({"type": "error", "code": "rate_limit_exceeded", "message": "Rate limit reached", "param": null})));
    let server = MockServer::start(vec![Reply::sse(stream_of(events))]).await;
    let error = complete(&server).await.unwrap_err();
    assert!(
        matches!(error, ModelError::StreamError { .. }) && error.is_retryable_turn(),
        "{error:?}"
    );

    let server = MockServer::start(vec![Reply::sse(vec![sse(
        Some("response.created"),
        "{oops",
    )])])
    .await;
    let error = complete(&server).await.unwrap_err();
    assert!(matches!(error, ModelError::Protocol { .. }), "{error:?}");
}

#[test]
fn decoder_takes_unstreamed_items_from_the_final_response() {
    let mut decoder = ResponsesStreamDecoder::new("local");
    let response = response_object(
        "completed",
        json!([
            message_item("All at once.", "completed"),
            call_item(1, "call_z", "read_file", "{}", "completed")
        ]),
        usage(3, 4, 0),
    );
    let data = json!({"type": "response.completed", "response": response}).to_string();
    let events = decoder.feed("response.completed", &data).unwrap();
    assert!(decoder.is_done());
    assert_eq!(
        events,
        vec![
            StreamEvent::ResponseInfo {
                id: Some("resp_1".into()),
                model: Some("gpt-4.1-2025-04-14".into()),
            },
            StreamEvent::TextDelta {
                text: "All at once.".into()
            },
            StreamEvent::ToolCallStart {
                index: 1,
                id: "call_z".into(),
                name: "read_file".into()
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: "{}".into()
            },
            StreamEvent::ToolCallEnd { index: 1 },
            StreamEvent::Usage {
                usage: golem_protocol::TokenUsage {
                    input_tokens: 3,
                    output_tokens: 4,
                    ..Default::default()
                }
            },
            StreamEvent::Finish {
                reason: FinishReason::ToolUse
            },
        ]
    );
    assert_eq!(decoder.finish().unwrap(), vec![]);
    assert!(ResponsesStreamDecoder::new("x").finish().is_err());
}

// ---- the request ----

#[tokio::test]
async fn the_request_body() {
    let server = MockServer::start(vec![text_reply("ok")]).await;
    let mut request = ModelRequest::new(
        "You are terse.",
        vec![
            Message::user("read two files"),
            Message::Assistant {
                text: "Reading.".into(),
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
    request.max_tokens = 500;
    model(config(&server))
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let sent = &server.requests()[0];
    assert_eq!(
        sent.body,
        json!({
            "model": "gpt-4.1",
            "instructions": "You are terse.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "read two files"}]},
                {"role": "assistant", "content": "Reading."},
                {"type": "function_call", "call_id": "call_a", "name": "read_file", "arguments": "{\"path\":\"/a\"}"},
                {"type": "function_call", "call_id": "call_b", "name": "read_file", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_a", "output": "A"},
                {"type": "function_call_output", "call_id": "call_b", "output": "Error: invalid arguments"},
                {"role": "assistant", "content": "Done."},
                {"role": "user", "content": [{"type": "input_text", "text": "thanks"}]},
            ],
            "tools": [{"type": "function", "name": "read_file", "description": "Read a file",
                       "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
                       "strict": false}],
            "stream": true,
            "store": false,
            "max_output_tokens": 500,
        })
    );
}
