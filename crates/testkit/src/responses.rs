//! Scripted replies shaped like the OpenAI Responses API's SSE stream (typed events, each with
//! its `sequence_number`: `response.created` and `response.in_progress`, per output item its
//! `response.output_item.added`, the text or argument deltas and their `.done` events, and
//! `response.output_item.done`, then `response.completed` with the whole response and its
//! usage; no `[DONE]`), and a reader of the `function_call_output` items a client sent back.
//!
//! Providers use this wire with `wire: responses` in `golem-forge.config.yaml`; clients post
//! to `{base_url}/responses`.

use serde_json::{Value, json};

use crate::mock::{Chunk, Reply, sse};
use crate::{SentToolResult, halves};

/// The response object as the lifecycle events carry it, with `output` and `usage`.
fn response(status: &str, output: Value, usage: Value) -> Value {
    json!({"id": "resp_mock", "object": "response", "created_at": 1_700_000_000,
           "status": status, "error": null, "incomplete_details": null, "instructions": null,
           "max_output_tokens": null, "model": "gpt-mock", "output": output,
           "parallel_tool_calls": true, "previous_response_id": null,
           "reasoning": {"effort": null, "summary": null}, "store": false, "temperature": 1.0,
           "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [],
           "top_p": 1.0, "truncation": "disabled", "usage": usage, "user": null,
           "metadata": {}})
}

/// The events of one response: the lifecycle around `items` (the events of each output item),
/// ending in `response.completed` with `output` and a usage of 10 input tokens (none cached)
/// and 5 output tokens. Numbers the events and names each SSE event after its `type`.
fn stream(items: Vec<Value>, output: Value) -> Reply {
    let usage = json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 15});
    let mut events = vec![
        json!({"type": "response.created",
               "response": response("in_progress", json!([]), Value::Null)}),
        json!({"type": "response.in_progress",
               "response": response("in_progress", json!([]), Value::Null)}),
    ];
    events.extend(items);
    events.push(json!({"type": "response.completed",
                       "response": response("completed", output, usage)}));
    let chunks = events
        .into_iter()
        .enumerate()
        .map(|(n, mut event)| {
            event["sequence_number"] = json!(n);
            let name = event["type"].as_str().unwrap_or_default().to_owned();
            sse(Some(&name), &event.to_string())
        })
        .collect::<Vec<Chunk>>();
    Reply::sse(chunks)
}

/// A final answer: one assistant message whose text streams in two deltas.
pub fn text(text: &str) -> Reply {
    let message = |status: &str, content: Value| {
        json!({"id": "msg_mock", "type": "message", "status": status, "role": "assistant",
               "content": content})
    };
    let part = |text: &str| json!({"type": "output_text", "annotations": [], "text": text});
    let mut events = vec![
        json!({"type": "response.output_item.added", "output_index": 0,
               "item": message("in_progress", json!([]))}),
        json!({"type": "response.content_part.added", "item_id": "msg_mock",
               "output_index": 0, "content_index": 0, "part": part("")}),
    ];
    for delta in halves(text).into_iter().filter(|p| !p.is_empty()) {
        events.push(
            json!({"type": "response.output_text.delta", "item_id": "msg_mock",
                           "output_index": 0, "content_index": 0, "delta": delta,
                           "logprobs": []}),
        );
    }
    let done = message("completed", json!([part(text)]));
    events.extend([
        json!({"type": "response.output_text.done", "item_id": "msg_mock", "output_index": 0,
               "content_index": 0, "text": text, "logprobs": []}),
        json!({"type": "response.content_part.done", "item_id": "msg_mock", "output_index": 0,
               "content_index": 0, "part": part(text)}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": done}),
    ]);
    stream(events, json!([done]))
}

/// A turn of tool calls (call id, name, arguments): one `function_call` item each, its
/// arguments' JSON text streamed in two halves.
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
///
/// Item `n` has the id `fc_mock_n` (the API's own id, which the deltas name) besides its
/// `call_id` (the one the client answers with a `function_call_output`).
pub fn tool_calls_raw(calls: &[(&str, &str, &str)]) -> Reply {
    let mut events = Vec::new();
    let mut output = Vec::new();
    for (index, (call_id, name, args)) in calls.iter().enumerate() {
        let item_id = format!("fc_mock_{index}");
        let item = |status: &str, arguments: &str| {
            json!({"id": item_id, "type": "function_call", "status": status,
                   "arguments": arguments, "call_id": call_id, "name": name})
        };
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
                           "item": item("in_progress", "")}),
        );
        for delta in halves(args).into_iter().filter(|p| !p.is_empty()) {
            events.push(json!({"type": "response.function_call_arguments.delta",
                               "item_id": item_id, "output_index": index, "delta": delta}));
        }
        events.extend([
            json!({"type": "response.function_call_arguments.done", "item_id": item_id,
                   "output_index": index, "arguments": args}),
            json!({"type": "response.output_item.done", "output_index": index,
                   "item": item("completed", args)}),
        ]);
        output.push(item("completed", args));
    }
    stream(events, Value::Array(output))
}

/// The `function_call_output` items of a request body's `input`, in order. The API has no
/// error flag (`is_error` is `None`): like the Chat Completions clients, ours starts a failed
/// result with `Error`.
pub fn tool_results(body: &Value) -> Vec<SentToolResult> {
    let items = body["input"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    items
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| SentToolResult {
            tool_call_id: item["call_id"].as_str().unwrap_or_default().to_owned(),
            content: match &item["output"] {
                Value::String(text) => text.clone(),
                // The API also takes a list of content parts; the text ones are joined.
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                other => other.to_string(),
            },
            is_error: None,
        })
        .collect()
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

    /// What every reply shares: the event names are the `type`s, the sequence numbers count
    /// from 0, and the stream ends with `response.completed` and its usage.
    fn assert_lifecycle(frames: &[(String, Value)]) {
        for (n, (event, data)) in frames.iter().enumerate() {
            assert_eq!(data["type"], event.as_str());
            assert_eq!(data["sequence_number"], n);
        }
        assert_eq!(frames[0].0, "response.created");
        let (last, completed) = frames.last().unwrap();
        assert_eq!(last, "response.completed");
        assert_eq!(completed["response"]["status"], "completed");
        let usage = &completed["response"]["usage"];
        assert_eq!(usage["input_tokens"], 10);
        assert_eq!(usage["output_tokens"], 5);
        assert_eq!(usage["input_tokens_details"]["cached_tokens"], 0);
    }

    #[test]
    fn text_streams_one_message_in_deltas_then_completes() {
        let frames = frames(&text("héllo wörld"));
        assert_lifecycle(&frames);
        let events: Vec<_> = frames.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(
            events,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let streamed: String = frames
            .iter()
            .filter(|(e, _)| e == "response.output_text.delta")
            .filter_map(|(_, d)| d["delta"].as_str())
            .collect();
        assert_eq!(streamed, "héllo wörld");
        let output = &frames.last().unwrap().1["response"]["output"];
        assert_eq!(output[0]["content"][0]["text"], "héllo wörld");
    }

    #[test]
    fn tool_calls_stream_each_items_arguments_by_output_index() {
        let frames = frames(&tool_calls(&[
            ("call_1", "read_file", json!({"path": "/a/b.txt"})),
            ("call_2", "list_files", json!({})),
        ]));
        assert_lifecycle(&frames);
        let added: Vec<_> = frames
            .iter()
            .filter(|(e, _)| e == "response.output_item.added")
            .map(|(_, d)| {
                let item = &d["item"];
                (
                    d["output_index"].clone(),
                    item["call_id"].clone(),
                    item["id"].clone(),
                )
            })
            .collect();
        assert_eq!(
            added,
            [
                (json!(0), json!("call_1"), json!("fc_mock_0")),
                (json!(1), json!("call_2"), json!("fc_mock_1"))
            ]
        );
        let arguments: String = frames
            .iter()
            .filter(|(e, d)| {
                e == "response.function_call_arguments.delta" && d["output_index"] == 0
            })
            .map(|(_, d)| {
                assert_eq!(d["item_id"], "fc_mock_0");
                d["delta"].as_str().unwrap()
            })
            .collect();
        assert_eq!(
            serde_json::from_str::<Value>(&arguments).unwrap(),
            json!({"path": "/a/b.txt"})
        );
        let output = &frames.last().unwrap().1["response"]["output"];
        assert_eq!(output[1]["name"], "list_files");
        assert_eq!(output[1]["arguments"], "{}");
    }

    #[test]
    fn tool_results_are_the_function_call_output_items() {
        let body = json!({"instructions": "be brief", "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "x", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "Error: nope"},
            {"type": "function_call_output", "call_id": "c2",
             "output": [{"type": "input_text", "text": "fine"}]}
        ]});
        assert_eq!(
            tool_results(&body),
            [
                SentToolResult {
                    tool_call_id: "c1".into(),
                    content: "Error: nope".into(),
                    is_error: None
                },
                SentToolResult {
                    tool_call_id: "c2".into(),
                    content: "fine".into(),
                    is_error: None
                },
            ]
        );
        assert!(tool_results(&Value::Null).is_empty());
    }
}
