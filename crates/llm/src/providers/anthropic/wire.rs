//! The Messages API wire types: the request body (canonical messages converted to Anthropic
//! content blocks, consecutive same-role messages merged as the API requires alternating
//! roles) and the stream events this client reads.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::{Message, ModelRequest};

/// The request body of `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(super) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "str::is_empty")]
    system: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Role {
    User,
    Assistant,
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: Role,
    content: Vec<WireBlock<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
    },
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Builds the streaming request body for `model`.
pub(super) fn request_body<'a>(model: &'a str, request: &'a ModelRequest) -> WireRequest<'a> {
    WireRequest {
        model,
        max_tokens: request.max_tokens,
        system: &request.system,
        messages: convert_messages(&request.messages),
        tools: request
            .tools
            .iter()
            .map(|tool| WireTool {
                name: &tool.name,
                description: &tool.description,
                input_schema: &tool.input_schema,
            })
            .collect(),
        stream: true,
        temperature: request.temperature,
    }
}

/// Converts the conversation, merging consecutive messages of the same role. Within a merged
/// user message the `tool_result` blocks come first, as the API requires; messages left
/// without any block (an empty assistant turn, an empty list of results) are dropped.
fn convert_messages(messages: &[Message]) -> Vec<WireMessage<'_>> {
    let mut out: Vec<WireMessage<'_>> = Vec::with_capacity(messages.len());
    for message in messages {
        let (role, blocks) = match message {
            Message::User { content } => (Role::User, vec![WireBlock::Text { text: content }]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !text.is_empty() {
                    blocks.push(WireBlock::Text { text });
                }
                blocks.extend(tool_calls.iter().map(|call| WireBlock::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: call.arguments_object(),
                }));
                (Role::Assistant, blocks)
            }
            Message::Tool { results } => (
                Role::User,
                results
                    .iter()
                    .map(|result| WireBlock::ToolResult {
                        tool_use_id: &result.tool_call_id,
                        content: &result.content,
                        is_error: result.is_error,
                    })
                    .collect(),
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => {
                // An empty user text adds nothing to a message that already has content.
                last.content.extend(
                    blocks
                        .into_iter()
                        .filter(|b| !matches!(b, WireBlock::Text { text } if text.is_empty())),
                );
            }
            Some(_) | None => out.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    for message in &mut out {
        if message.role == Role::User {
            // A stable sort: tool results first, everything else after, each in order.
            message
                .content
                .sort_by_key(|block| !matches!(block, WireBlock::ToolResult { .. }));
        }
    }
    out
}

// ---- the stream events (only the fields this client reads) ----

#[derive(Debug, Default, Deserialize)]
pub(super) struct WireUsage {
    pub(super) input_tokens: Option<u64>,
    pub(super) output_tokens: Option<u64>,
    pub(super) cache_read_input_tokens: Option<u64>,
    pub(super) cache_creation_input_tokens: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub(super) struct MessageStart {
    pub(super) message: StartedMessage,
}

#[derive(Debug, Deserialize)]
pub(super) struct StartedMessage {
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct BlockStart {
    pub(super) index: usize,
    pub(super) content_block: StartedBlock,
}

#[derive(Debug, Deserialize)]
pub(super) struct StartedBlock {
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) text: String,
    #[serde(default)]
    pub(super) id: String,
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) input: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(super) struct BlockDelta {
    pub(super) index: usize,
    pub(super) delta: Delta,
}

#[derive(Debug, Deserialize)]
pub(super) struct Delta {
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) text: String,
    #[serde(default)]
    pub(super) partial_json: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct BlockStop {
    pub(super) index: usize,
}

#[derive(Debug, Deserialize)]
pub(super) struct MessageDelta {
    #[serde(default)]
    pub(super) delta: Option<MessageDeltaBody>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
pub(super) struct MessageDeltaBody {
    #[serde(default)]
    pub(super) stop_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ErrorEvent {
    pub(super) error: ErrorBody,
}

#[derive(Debug, Default, Deserialize)]
pub(super) struct ErrorBody {
    #[serde(rename = "type", default)]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) message: String,
}

#[derive(Debug, Deserialize)]
pub(super) struct TypeOnly {
    #[serde(rename = "type", default)]
    pub(super) kind: String,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use serde_json::json;

    use super::*;
    use crate::message::{ModelToolCall, ToolResultMessage};

    fn body(request: &ModelRequest) -> Value {
        serde_json::to_value(request_body("claude-x", request)).unwrap()
    }

    fn call(id: &str, arguments: &str) -> ModelToolCall {
        ModelToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: arguments.into(),
        }
    }

    fn result(id: &str, is_error: bool) -> ToolResultMessage {
        ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read_file".into(),
            content: format!("result {id}"),
            is_error,
        }
    }

    #[test]
    fn minimal_body_omits_empty_system_and_tools() {
        let request = ModelRequest::new("", vec![Message::user("hi")], Vec::new());
        assert_eq!(
            body(&request),
            json!({"model": "claude-x", "max_tokens": 8192, "stream": true,
                   "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
        );
    }

    #[test]
    fn converts_tool_use_and_results_and_merges_roles() {
        let mut request = ModelRequest::new(
            "Be brief.",
            vec![
                Message::user("read both"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("toolu_1", r#"{"path":"/a"}"#), call("toolu_2", "{bad")],
                },
                Message::Tool {
                    results: vec![result("toolu_1", false), result("toolu_2", true)],
                },
                Message::user("and now?"),
                Message::assistant("done"),
                Message::assistant(""),
                Message::Tool {
                    results: Vec::new(),
                },
            ],
            Vec::new(),
        );
        request.temperature = Some(0.5);
        let body = body(&request);
        assert_eq!(body["system"], "Be brief.");
        assert_eq!(body["temperature"], 0.5);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": [{"type": "text", "text": "read both"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "/a"}},
                    {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "result toolu_1"},
                    {"type": "tool_result", "tool_use_id": "toolu_2", "content": "result toolu_2",
                     "is_error": true},
                    {"type": "text", "text": "and now?"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
            ])
        );
    }

    #[test]
    fn an_error_result_is_flagged_and_its_text_sent_as_it_is() {
        let not_found = "Error [FILE_NOT_FOUND]: no such file: /a";
        let request = ModelRequest::new(
            "",
            vec![Message::Tool {
                results: vec![ToolResultMessage {
                    tool_call_id: "t1".into(),
                    tool_name: "read_file".into(),
                    content: not_found.into(),
                    is_error: true,
                }],
            }],
            Vec::new(),
        );
        assert_eq!(
            body(&request)["messages"][0]["content"][0],
            json!({"type": "tool_result", "tool_use_id": "t1", "content": not_found,
                   "is_error": true})
        );
    }

    #[test]
    fn tool_results_come_first_in_a_merged_user_message() {
        let request = ModelRequest::new(
            "",
            vec![
                Message::Assistant {
                    text: "Reading.".into(),
                    tool_calls: vec![call("t1", "{}")],
                },
                Message::user("hurry"),
                Message::Tool {
                    results: vec![result("t1", false)],
                },
                Message::user(""),
            ],
            Vec::new(),
        );
        let body = body(&request);
        assert_eq!(
            body["messages"][0]["content"][0],
            json!({"type": "text", "text": "Reading."})
        );
        assert_eq!(
            body["messages"][1]["content"],
            json!([{"type": "tool_result", "tool_use_id": "t1", "content": "result t1"},
                   {"type": "text", "text": "hurry"}])
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
    }
}
