//! One short session per wire (Anthropic Messages, OpenAI Chat Completions, OpenAI
//! Responses) against a strict server (`strict_server.rs`): the model calls a tool well and
//! once with malformed arguments, gets a result and an invalid-arguments error, calls again and
//! gets a not-found error, then answers. Every recorded request body must be accepted by the
//! strict server and hold nothing but the fields its API documents (`documented.rs`); the
//! history must carry valid arguments, the invalid-arguments result, and each error with one
//! `Error` prefix. For prompt caching: each request starts with the previous one unchanged,
//! the OpenAI requests carry the session's `prompt_cache_key`, and the Anthropic requests at
//! most four cache breakpoints.

use golem_llm::http::HttpSettings;
use golem_llm::providers::anthropic::AnthropicModel;
use golem_llm::providers::openai_common::OpenAiConfig;
use golem_llm::{Message, Model, ModelRequest, ModelToolCall, ToolResultMessage};
use golem_protocol::ToolDefinition;
use golem_testkit::mock::Reply;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::documented;
use crate::strict_server::{Api, StrictServer};
use crate::{anthropic, openai_chat, openai_responses};

/// The malformed arguments the model sends (cut off), and what the runtime answers them with.
const MALFORMED: &str = r#"{"path": "/b.txt""#;
const INVALID: &str = "Error [INVALID_ARGUMENTS]: arguments for read_file are not valid JSON: \
                       EOF while parsing an object at line 1 column 16; send a JSON object";
const NOT_FOUND: &str = "Error [FILE_NOT_FOUND]: no such file: /missing.txt";
/// The session's cache key (the runtime sends its session id).
const CACHE_KEY: &str = "20261123-101500-a1b2";

/// `read_file` with an optional property, as our tools have (strict mode would refuse it).
fn read_file_tool() -> ToolDefinition {
    ToolDefinition {
        name: "read_file".into(),
        description: "Read a file".into(),
        input_schema: json!({"type": "object",
            "properties": {"path": {"type": "string"}, "max_lines": {"type": "integer"}},
            "required": ["path"]}),
    }
}

/// What the runtime would answer a call with.
fn result_of(call: &ModelToolCall) -> ToolResultMessage {
    let (content, is_error) = match call.parsed_arguments() {
        Err(_) => (INVALID.to_owned(), true),
        Ok(args) if args["path"] == "/missing.txt" => (NOT_FOUND.to_owned(), true),
        Ok(args) => (format!("contents of {}", args["path"]), false),
    };
    ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content,
        is_error,
    }
}

/// Runs the session (three requests) and returns the bodies the server recorded.
async fn session(model: &dyn Model, server: &StrictServer) -> Vec<Value> {
    let mut request = ModelRequest::new(
        "You read files.",
        vec![Message::user("read a.txt and b.txt")],
        vec![read_file_tool()],
    )
    .with_cache_key(Some(CACHE_KEY.into()));
    for turn in 0..3 {
        let response = match model.complete(&request, CancellationToken::new()).await {
            Ok(response) => response,
            Err(error) => panic!(
                "turn {turn} failed: {error}; the server refused: {:?}",
                server.refused()
            ),
        };
        let results: Vec<ToolResultMessage> = response.tool_calls.iter().map(result_of).collect();
        request.messages.push(Message::Assistant {
            text: response.text,
            tool_calls: response.tool_calls,
        });
        if results.is_empty() {
            break;
        }
        request.messages.push(Message::Tool { results });
    }
    assert_eq!(server.refused(), Vec::<String>::new());
    server.bodies()
}

fn assert_documented(bodies: &[Value], check: fn(&Value) -> Vec<String>) {
    assert_eq!(bodies.len(), 3, "{bodies:#?}");
    for (n, body) in bodies.iter().enumerate() {
        let problems = check(body);
        assert!(problems.is_empty(), "request {n}: {problems:#?}\n{body:#}");
    }
}

/// Each request's `key` array starts with the previous request's, unchanged (what a provider
/// that caches prompt prefixes needs), and every request carries the session's
/// `prompt_cache_key`.
fn assert_stable_prefix_and_cache_key(bodies: &[Value], key: &str) {
    for (n, body) in bodies.iter().enumerate() {
        assert_eq!(body["prompt_cache_key"], CACHE_KEY, "request {n}");
    }
    for pair in bodies.windows(2) {
        let (before, after) = (
            pair[0][key].as_array().unwrap(),
            pair[1][key].as_array().unwrap(),
        );
        assert_eq!(&after[..before.len()], before.as_slice());
        for field in ["tools", "instructions"] {
            assert_eq!(pair[0].get(field), pair[1].get(field), "{field}");
        }
    }
}

fn settings() -> HttpSettings {
    openai_chat::settings()
}

fn openai_config(server: &StrictServer) -> OpenAiConfig {
    OpenAiConfig::new(
        "openai",
        format!("{}/v1", server.base_url),
        Some("sk-test".into()),
        "OPENAI_API_KEY",
    )
    .with_settings(settings())
}

// ---- Anthropic ----

fn anthropic_replies() -> Vec<Reply> {
    use anthropic::{message_end, message_start, stream_of, text_block, tool_block};
    vec![
        stream_of(vec![
            vec![message_start(20)],
            text_block(0, &["Reading."]),
            tool_block(1, "toolu_1", "read_file", &[r#"{"path": "/a.txt"}"#]),
            tool_block(2, "toolu_2", "read_file", &[MALFORMED]),
            message_end("tool_use", 9),
        ]),
        stream_of(vec![
            vec![message_start(40)],
            tool_block(0, "toolu_3", "read_file", &[r#"{"path": "/missing.txt"}"#]),
            message_end("tool_use", 5),
        ]),
        stream_of(vec![
            vec![message_start(60)],
            text_block(0, &["Done."]),
            message_end("end_turn", 2),
        ]),
    ]
}

#[tokio::test]
async fn anthropic_session_bodies_are_documented_and_accepted() {
    let server = StrictServer::start(Api::Anthropic, anthropic_replies()).await;
    let model: AnthropicModel = anthropic::model_at(&server.base_url, settings());
    let bodies = session(&model, &server).await;
    assert_documented(&bodies, documented::anthropic);
    for body in &bodies {
        assert!(
            body.get("prompt_cache_key").is_none(),
            "not an Anthropic field"
        );
        let text = body.to_string();
        let breakpoints = text
            .matches(r#""cache_control":{"type":"ephemeral"}"#)
            .count();
        assert!(
            (1..=4).contains(&breakpoints),
            "{breakpoints} breakpoints: {body:#}"
        );
    }
    for pair in bodies.windows(2) {
        assert_eq!(pair[0]["tools"], pair[1]["tools"]);
        assert_eq!(pair[0]["system"], pair[1]["system"]);
    }

    let last = &bodies[2]["messages"];
    assert_eq!(
        last[1]["content"][2],
        json!({"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}}),
        "malformed arguments go back as an empty object"
    );
    // (Both are the last blocks of their messages, cache breakpoints: where the previous
    // request ended, and the newest message.)
    assert_eq!(
        last[2]["content"][1],
        json!({"type": "tool_result", "tool_use_id": "toolu_2", "content": INVALID,
               "is_error": true, "cache_control": {"type": "ephemeral"}})
    );
    assert_eq!(
        last[4]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_3", "content": NOT_FOUND,
               "is_error": true, "cache_control": {"type": "ephemeral"}}),
        "one `Error` prefix, and the flag"
    );
}

// ---- OpenAI Chat Completions ----

fn chat_replies() -> Vec<Reply> {
    use openai_chat::{call_args, call_start, done, finish, role, text, usage};
    vec![
        Reply::sse(vec![
            role(),
            text("Reading."),
            call_start(0, "call_1", "read_file"),
            call_args(0, r#"{"path": "/a.txt"}"#),
            call_start(1, "call_2", "read_file"),
            call_args(1, MALFORMED),
            finish("tool_calls"),
            usage(20, 9, 0),
            done(),
        ]),
        Reply::sse(vec![
            role(),
            call_start(0, "call_3", "read_file"),
            call_args(0, r#"{"path": "/missing.txt"}"#),
            finish("tool_calls"),
            usage(40, 5, 0),
            done(),
        ]),
        Reply::sse(vec![
            role(),
            text("Done."),
            finish("stop"),
            usage(60, 2, 0),
            done(),
        ]),
    ]
}

#[tokio::test]
async fn chat_session_bodies_are_documented_and_accepted() {
    let server = StrictServer::start(Api::Chat, chat_replies()).await;
    let model = openai_chat::model(openai_config(&server));
    let bodies = session(&model, &server).await;
    assert_documented(&bodies, documented::chat);
    assert_stable_prefix_and_cache_key(&bodies, "messages");

    let last = &bodies[2]["messages"];
    assert_eq!(last[0]["role"], "system");
    assert_eq!(
        last[2]["tool_calls"][1],
        json!({"id": "call_2", "type": "function",
               "function": {"name": "read_file", "arguments": "{}"}}),
        "malformed arguments go back as an empty object"
    );
    assert_eq!(
        last[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": INVALID}),
        "the result still tells the model its arguments were invalid, with one prefix"
    );
    assert_eq!(
        last[6],
        json!({"role": "tool", "tool_call_id": "call_3", "content": NOT_FOUND}),
        "one `Error` prefix"
    );
}

// ---- OpenAI Responses ----

fn responses_reply(events: Vec<Value>, output: Value) -> Reply {
    use openai_responses::{completed, created, stream_of, usage};
    let mut all = created();
    all.extend(events);
    all.push(completed(output, usage(20, 5, 0)));
    Reply::sse(stream_of(all))
}

fn responses_replies() -> Vec<Reply> {
    use openai_responses::{call_events, call_item, message_item, text_events};
    let good = r#"{"path": "/a.txt"}"#;
    let missing = r#"{"path": "/missing.txt"}"#;
    let mut first = text_events(0, &["Reading."]);
    first.extend(call_events(1, "call_1", &[good]));
    first.extend(call_events(2, "call_2", &[MALFORMED]));
    vec![
        responses_reply(
            first,
            json!([
                message_item("Reading.", "completed"),
                call_item(1, "call_1", "read_file", good, "completed"),
                call_item(2, "call_2", "read_file", MALFORMED, "completed")
            ]),
        ),
        responses_reply(
            call_events(0, "call_3", &[missing]),
            json!([call_item(0, "call_3", "read_file", missing, "completed")]),
        ),
        responses_reply(
            text_events(0, &["Done."]),
            json!([message_item("Done.", "completed")]),
        ),
    ]
}

#[tokio::test]
async fn responses_session_bodies_are_documented_and_accepted() {
    let server = StrictServer::start(Api::Responses, responses_replies()).await;
    let model = openai_responses::model(openai_config(&server));
    let bodies = session(&model, &server).await;
    assert_documented(&bodies, documented::responses);
    assert_stable_prefix_and_cache_key(&bodies, "input");

    for body in &bodies {
        for tool in body["tools"].as_array().unwrap() {
            assert_eq!(tool["strict"], false, "{tool}");
        }
    }
    let input = &bodies[2]["input"];
    assert_eq!(
        input[1],
        json!({"role": "assistant", "content": "Reading."}),
        "earlier text goes back as an easy input message with string content"
    );
    assert_eq!(
        input[3],
        json!({"type": "function_call", "call_id": "call_2", "name": "read_file",
               "arguments": "{}"}),
        "malformed arguments go back as an empty object"
    );
    assert_eq!(
        input[5],
        json!({"type": "function_call_output", "call_id": "call_2", "output": INVALID})
    );
    assert_eq!(
        input[7],
        json!({"type": "function_call_output", "call_id": "call_3", "output": NOT_FOUND}),
        "one `Error` prefix"
    );
}
