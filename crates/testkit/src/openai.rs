//! Scripted replies shaped like the OpenAI Chat Completions SSE stream (`chat.completion.chunk`
//! objects: the role, content or tool-call deltas, the finish reason, a usage chunk, then
//! `[DONE]`), and readers of what a client sent back (`role: tool` messages, the assistant's
//! `tool_calls`, `response_format`); [`WIRE`] gathers them for [`crate::Wire::OpenAi`].

use serde_json::{Value, json};

use crate::mock::{Chunk, Reply, sse};
use crate::{SentTool, SentToolCall, SentToolResult, WireSpec, halves};

/// The Chat Completions wire, as data.
pub const WIRE: WireSpec = WireSpec {
    name: "openai",
    path: "/v1/chat/completions",
    model: "openai:gpt-mock",
    api_key: ("OPENAI_API_KEY", "sk-mock"),
    base_url_env: "OPENAI_BASE_URL",
    base_url_path: "/v1",
    // Only the role chunk comes before the first text delta.
    after_first_text_delta: 2,
    text,
    tool_calls,
    tool_calls_raw,
    structured_answer: |value| text(&value.to_string()),
    tool_results,
    tool_calls_sent,
    tools_sent,
    output_schema_sent,
    // No error flag: a failed result's text starts with `Error`.
    is_error: |result| result.content.starts_with("Error"),
    result_text: |result| {
        result
            .content
            .strip_prefix("Error: ")
            .unwrap_or(&result.content)
    },
};

fn data(chunk: Value) -> Chunk {
    sse(None, &chunk.to_string())
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> Chunk {
    data(
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000,
                "model": "gpt-mock", "system_fingerprint": "fp_mock",
                "choices": [{"index": 0, "delta": delta, "logprobs": null,
                             "finish_reason": finish_reason}],
                "usage": null}),
    )
}

fn ending(finish_reason: &str) -> [Chunk; 3] {
    [
        chunk(json!({}), Some(finish_reason)),
        data(
            json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1_700_000_000,
                    "model": "gpt-mock", "choices": [],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
                              "prompt_tokens_details": {"cached_tokens": 0}}}),
        ),
        sse(None, "[DONE]"),
    ]
}

fn role() -> Chunk {
    chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        None,
    )
}

/// A final answer streamed in two content deltas, finish reason `stop`.
pub fn text(text: &str) -> Reply {
    let mut chunks = vec![role()];
    for part in halves(text).into_iter().filter(|p| !p.is_empty()) {
        chunks.push(chunk(json!({"content": part}), None));
    }
    chunks.extend(ending("stop"));
    Reply::sse(chunks)
}

/// A turn of tool calls (id, name, arguments): per call, a first delta with id, type and
/// name, then the arguments' JSON text in two halves; finish reason `tool_calls`.
pub fn tool_calls(calls: &[(&str, &str, Value)]) -> Reply {
    let texts: Vec<String> = calls.iter().map(|(_, _, args)| args.to_string()).collect();
    let raw: Vec<(&str, &str, &str)> = calls
        .iter()
        .zip(&texts)
        .map(|((id, name, _), args)| (*id, *name, args.as_str()))
        .collect();
    tool_calls_raw(&raw)
}

/// Like [`tool_calls`], with each call's arguments given as the text the model streams,
/// which need not be valid JSON (a model's malformed arguments).
pub fn tool_calls_raw(calls: &[(&str, &str, &str)]) -> Reply {
    let mut chunks = vec![role()];
    for (index, (id, name, args)) in calls.iter().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                     "function": {"name": name, "arguments": ""}}]}),
            None,
        ));
        for fragment in halves(args) {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
                None,
            ));
        }
    }
    chunks.extend(ending("tool_calls"));
    Reply::sse(chunks)
}

/// The `role: tool` messages of a request body, in order.
pub fn tool_results(body: &Value) -> Vec<SentToolResult> {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| SentToolResult {
            tool_call_id: m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
            content: match &m["content"] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            },
            is_error: None,
        })
        .collect()
}

/// The `tool_calls` of a request body's assistant messages, in order, each call's
/// `arguments` string parsed as JSON (kept as the string when it is not JSON).
///
/// # Panics
/// When `arguments` is not a string: the API takes only the JSON text.
pub fn tool_calls_sent(body: &Value) -> Vec<SentToolCall> {
    let messages = body["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|call| {
            let function = &call["function"];
            let Value::String(text) = &function["arguments"] else {
                panic!("arguments must be a string of JSON: {call}")
            };
            SentToolCall {
                id: call["id"].as_str().unwrap_or_default().to_owned(),
                name: function["name"].as_str().unwrap_or_default().to_owned(),
                arguments: serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
            }
        })
        .collect()
}

/// The `tools` of a request body: `function.name` and `function.parameters`.
pub fn tools_sent(body: &Value) -> Vec<SentTool> {
    let tools = body["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    tools
        .iter()
        .map(|tool| SentTool {
            name: tool["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            schema: tool["function"]["parameters"].clone(),
        })
        .collect()
}

/// The `schema` of a `response_format` of type `json_schema`.
pub fn output_schema_sent(body: &Value) -> Option<Value> {
    let format = &body["response_format"];
    (format["type"] == "json_schema").then(|| format["json_schema"]["schema"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON objects of a reply's `data:` lines, and whether it ends with `[DONE]`.
    fn chunks(reply: &Reply) -> (Vec<Value>, bool) {
        let mut objects = Vec::new();
        let mut done = false;
        for chunk in &reply.chunks {
            let Chunk::Data(text) = chunk else {
                panic!("only data chunks: {chunk:?}")
            };
            let data = text.trim_end().strip_prefix("data: ").unwrap();
            if data == "[DONE]" {
                done = true;
            } else {
                assert!(!done, "nothing after [DONE]");
                objects.push(serde_json::from_str(data).unwrap());
            }
        }
        (objects, done)
    }

    #[test]
    fn text_streams_content_then_stop_usage_and_done() {
        let (objects, done) = chunks(&text("héllo"));
        assert!(done);
        let content: String = objects
            .iter()
            .filter_map(|o| o["choices"][0]["delta"]["content"].as_str())
            .collect();
        assert_eq!(content, "héllo");
        let finishes: Vec<_> = objects
            .iter()
            .filter_map(|o| o["choices"][0]["finish_reason"].as_str())
            .collect();
        assert_eq!(finishes, ["stop"]);
        assert_eq!(objects.last().unwrap()["usage"]["total_tokens"], 15);
    }

    #[test]
    fn tool_calls_stream_ids_names_and_argument_fragments_by_index() {
        let (objects, done) = chunks(&tool_calls(&[
            (
                "call_1",
                "write_file",
                json!({"path": "/out/a.txt", "content": "x"}),
            ),
            ("call_2", "list_files", json!({"path": "/out"})),
        ]));
        assert!(done);
        let deltas: Vec<&Value> = objects
            .iter()
            .filter_map(|o| o["choices"][0]["delta"]["tool_calls"].get(0))
            .collect();
        for (index, id, args) in [
            (0, "call_1", json!({"path": "/out/a.txt", "content": "x"})),
            (1, "call_2", json!({"path": "/out"})),
        ] {
            let mine: Vec<_> = deltas.iter().filter(|d| d["index"] == index).collect();
            assert_eq!(mine[0]["id"], id);
            let text: String = mine
                .iter()
                .filter_map(|d| d["function"]["arguments"].as_str())
                .collect();
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), args);
        }
        let finishes: Vec<_> = objects
            .iter()
            .filter_map(|o| o["choices"][0]["finish_reason"].as_str())
            .collect();
        assert_eq!(finishes, ["tool_calls"]);
    }

    #[test]
    fn tool_results_are_the_tool_messages() {
        let body = json!({"messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "c1", "content": "Error: nope"},
            {"role": "tool", "tool_call_id": "c2", "content": "fine"}
        ]});
        let results = tool_results(&body);
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].tool_call_id, "c1");
        assert_eq!(results[0].content, "Error: nope");
        assert_eq!(results[1].is_error, None);
    }
}
