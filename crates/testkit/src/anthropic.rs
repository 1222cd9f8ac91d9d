//! Scripted replies shaped like the Anthropic Messages API's SSE stream (`message_start`,
//! content blocks with their deltas, `message_delta` with the stop reason, `message_stop`), and
//! readers of what a client sent back (`tool_result` blocks, `tool_use` blocks, the
//! `final_result` tool); [`WIRE`] gathers them for [`crate::Wire::Anthropic`].

use serde_json::{Value, json};

use crate::mock::{Chunk, Reply, sse};
use crate::{SentTool, SentToolCall, SentToolResult, WireSpec, halves};

/// The Anthropic wire, as data.
pub const WIRE: WireSpec = WireSpec {
    name: "anthropic",
    path: "/v1/messages",
    model: "anthropic:claude-mock",
    api_key: ("ANTHROPIC_API_KEY", "sk-ant-mock"),
    base_url_env: "ANTHROPIC_BASE_URL",
    base_url_path: "",
    // message_start, content_block_start and a ping come before the first text delta.
    after_first_text_delta: 4,
    text,
    tool_calls,
    tool_calls_raw,
    structured_answer: |value| tool_calls(&[("toolu_1", FINAL_RESULT, value.clone())]),
    tool_results,
    tool_calls_sent,
    tools_sent,
    output_schema_sent,
    is_error: |result| result.is_error == Some(true),
    result_text: |result| &result.content,
};

/// The tool through which the client asks for a structured answer.
const FINAL_RESULT: &str = "final_result";

fn frame(data: Value) -> Chunk {
    let event = data["type"].as_str().unwrap_or_default().to_owned();
    sse(Some(&event), &data.to_string())
}

fn message_start() -> Chunk {
    frame(json!({"type": "message_start", "message": {
        "id": "msg_mock", "type": "message", "role": "assistant", "model": "claude-mock",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1}}}))
}

fn message_end(stop_reason: &str) -> [Chunk; 2] {
    [
        frame(json!({"type": "message_delta",
                     "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                     "usage": {"output_tokens": 5}})),
        frame(json!({"type": "message_stop"})),
    ]
}

/// A final answer: one text block streamed in two deltas, stop reason `end_turn`.
pub fn text(text: &str) -> Reply {
    let mut chunks = vec![
        message_start(),
        frame(json!({"type": "content_block_start", "index": 0,
                     "content_block": {"type": "text", "text": ""}})),
        sse(Some("ping"), r#"{"type": "ping"}"#),
    ];
    for part in halves(text).into_iter().filter(|p| !p.is_empty()) {
        chunks.push(frame(json!({"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": part}})));
    }
    chunks.push(frame(json!({"type": "content_block_stop", "index": 0})));
    chunks.extend(message_end("end_turn"));
    Reply::sse(chunks)
}

/// A turn of tool calls (id, name, arguments): one `tool_use` block each, its input streamed
/// as an empty fragment then two halves of the JSON text, stop reason `tool_use`.
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Reply {
    let texts: Vec<String> = calls.iter().map(|(_, _, args)| args.to_string()).collect();
    let raw: Vec<(&str, &str, &str)> = calls
        .iter()
        .zip(&texts)
        .map(|((id, name, _), args)| (*id, *name, args.as_str()))
        .collect();
    tool_calls_raw(&raw)
}

/// Like [`tool_calls`], with each call's input given as the text the model streams, which
/// need not be valid JSON (a model's malformed arguments).
pub fn tool_calls_raw(calls: &[(&str, &str, &str)]) -> Reply {
    let mut chunks = vec![message_start()];
    for (index, (id, name, args)) in calls.iter().enumerate() {
        chunks.push(frame(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})));
        for fragment in std::iter::once("").chain(halves(args)) {
            chunks.push(frame(json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": fragment}})));
        }
        chunks.push(frame(json!({"type": "content_block_stop", "index": index})));
    }
    chunks.extend(message_end("tool_use"));
    Reply::sse(chunks)
}

/// The `tool_result` blocks of a request body (`messages[].content[]`), in order.
pub fn tool_results(body: &Value) -> Vec<SentToolResult> {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result")
        .map(|block| SentToolResult {
            tool_call_id: block["tool_use_id"].as_str().unwrap_or_default().to_owned(),
            content: match &block["content"] {
                Value::String(text) => text.clone(),
                // The API also takes a list of content blocks; the text ones are joined.
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                other => other.to_string(),
            },
            is_error: Some(block["is_error"].as_bool().unwrap_or(false)),
        })
        .collect()
}

/// The `tool_use` blocks of a request body's assistant messages, in order.
pub fn tool_calls_sent(body: &Value) -> Vec<SentToolCall> {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_use")
        .map(|block| SentToolCall {
            id: block["id"].as_str().unwrap_or_default().to_owned(),
            name: block["name"].as_str().unwrap_or_default().to_owned(),
            arguments: block["input"].clone(),
        })
        .collect()
}

/// The `tools` of a request body: name and `input_schema`.
pub fn tools_sent(body: &Value) -> Vec<SentTool> {
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    tools
        .iter()
        .map(|tool| SentTool {
            name: tool["name"].as_str().unwrap_or_default().to_owned(),
            schema: tool["input_schema"].clone(),
        })
        .collect()
}

/// The `input_schema` of the `final_result` tool, when `tool_choice` makes the model call it
/// (by name, or `any` tool).
pub fn output_schema_sent(body: &Value) -> Option<Value> {
    let choice = &body["tool_choice"];
    let forced =
        choice["type"] == "any" || (choice["type"] == "tool" && choice["name"] == FINAL_RESULT);
    if !forced {
        return None;
    }
    body["tools"]
        .as_array()?
        .iter()
        .find(|tool| tool["name"] == FINAL_RESULT)
        .map(|tool| tool["input_schema"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SSE frames of a reply as (event, data) pairs.
    fn frames(reply: &Reply) -> Vec<(String, Value)> {
        reply
            .chunks
            .iter()
            .map(|chunk| {
                let Chunk::Data(text) = chunk else {
                    panic!("only data chunks: {chunk:?}")
                };
                let mut lines = text.lines();
                let event = lines.next().unwrap().strip_prefix("event: ").unwrap();
                let data = lines.next().unwrap().strip_prefix("data: ").unwrap();
                (event.to_owned(), serde_json::from_str(data).unwrap())
            })
            .collect()
    }

    #[test]
    fn text_streams_the_answer_in_deltas_and_ends_the_turn() {
        let frames = frames(&text("héllo wörld"));
        let events: Vec<_> = frames.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(
            events,
            [
                "message_start",
                "content_block_start",
                "ping",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let streamed: String = frames
            .iter()
            .filter_map(|(_, d)| d["delta"]["text"].as_str())
            .collect();
        assert_eq!(streamed, "héllo wörld");
        assert_eq!(frames[6].1["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn tool_calls_stream_each_input_as_json_fragments() {
        let reply = tool_calls(&[
            ("toolu_1", "read_file", json!({"path": "/a/b.txt"})),
            ("toolu_2", "list_files", json!({})),
        ]);
        let frames = frames(&reply);
        let starts: Vec<_> = frames
            .iter()
            .filter(|(e, _)| e == "content_block_start")
            .map(|(_, d)| (d["index"].clone(), d["content_block"]["id"].clone()))
            .collect();
        assert_eq!(
            starts,
            [(json!(0), json!("toolu_1")), (json!(1), json!("toolu_2"))]
        );
        let input: String = frames
            .iter()
            .filter(|(_, d)| d["index"] == 0)
            .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&input).unwrap(),
            json!({"path": "/a/b.txt"})
        );
        let end = frames.iter().find(|(e, _)| e == "message_delta").unwrap();
        assert_eq!(end.1["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn tool_results_are_read_from_user_messages() {
        let body = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": true},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "ok"}]}
            ]}
        ]});
        assert_eq!(
            tool_results(&body),
            [
                SentToolResult {
                    tool_call_id: "t1".into(),
                    content: "boom".into(),
                    is_error: Some(true)
                },
                SentToolResult {
                    tool_call_id: "t2".into(),
                    content: "ok".into(),
                    is_error: Some(false)
                },
            ]
        );
        assert!(tool_results(&Value::Null).is_empty());
    }
}
