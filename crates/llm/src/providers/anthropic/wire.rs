//! The Messages API wire types: the request body (canonical messages converted to Anthropic
//! content blocks, consecutive same-role messages merged as the API requires alternating
//! roles, prompt-cache breakpoints marked) and the stream events this client reads.
//!
//! Prompt caching: the API caches the prompt (`tools`, then `system`, then `messages`) up to
//! each block marked with `cache_control`, and a later request whose prompt is byte-for-byte the
//! same up to a marked block reads it from the cache (a marked block also finds a cached prefix
//! ending up to 20 blocks before it). Each request marks at most [`MAX_BREAKPOINTS`] blocks;
//! see [`mark_breakpoints`] for which.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::message::{Message, ModelRequest};
use crate::output::{FINAL_RESULT_INSTRUCTION, FINAL_RESULT_TOOL};

/// The most blocks one request may mark with `cache_control` (the API refuses more).
pub(super) const MAX_BREAKPOINTS: usize = 4;

/// `cache_control` on a block: a cache breakpoint with the default lifetime (5 minutes,
/// refreshed by each read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

const EPHEMERAL: Option<CacheControl> = Some(CacheControl { kind: "ephemeral" });

/// The request body of `POST /v1/messages`.
#[derive(Debug, Serialize)]
pub(super) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    /// The system prompt as one text block (a block, not a string, so that it can carry a
    /// breakpoint); omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    /// Set only for a structured answer (see [`request_body`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<Value>,
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

/// A text block of the system prompt.
#[derive(Debug, Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
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
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        #[serde(skip_serializing_if = "is_false")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

impl WireBlock<'_> {
    fn text(text: &str) -> WireBlock<'_> {
        WireBlock::Text {
            text,
            cache_control: None,
        }
    }

    /// Marks this block as a breakpoint; false for an empty text block, which the API does not
    /// let carry one.
    fn mark(&mut self) -> bool {
        let slot = match self {
            WireBlock::Text { text: "", .. } => return false,
            WireBlock::Text { cache_control, .. }
            | WireBlock::ToolUse { cache_control, .. }
            | WireBlock::ToolResult { cache_control, .. } => cache_control,
        };
        *slot = EPHEMERAL;
        true
    }
}

#[derive(Debug, Serialize)]
struct WireTool<'a> {
    name: Cow<'a, str>,
    description: Cow<'a, str>,
    input_schema: Cow<'a, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Builds the streaming request body for `model`, with its cache breakpoints.
///
/// A request for a structured answer ([`ModelRequest::output`]) gets the `final_result` tool
/// after the worker's tools (its input schema is the answer's), a sentence at the end of the
/// system prompt telling the model to answer through it, and a `tool_choice` that makes the
/// model call a tool: `final_result` itself when it is the only tool, else `any` tool (so that
/// the model may still work with its tools first, and ends by calling `final_result`). All three
/// are the same on every request of a worker, so the prompt cache keeps matching.
pub(super) fn request_body<'a>(model: &'a str, request: &'a ModelRequest) -> WireRequest<'a> {
    let system_text: Cow<'a, str> = match &request.output {
        None => Cow::Borrowed(&request.system),
        Some(_) if request.system.is_empty() => Cow::Borrowed(FINAL_RESULT_INSTRUCTION),
        Some(_) => Cow::Owned(format!("{}\n\n{FINAL_RESULT_INSTRUCTION}", request.system)),
    };
    let system = if system_text.is_empty() {
        Vec::new()
    } else {
        vec![SystemBlock {
            kind: "text",
            text: system_text,
            cache_control: None,
        }]
    };
    let mut tools: Vec<WireTool<'a>> = request
        .tools
        .iter()
        .map(|tool| WireTool {
            name: Cow::Borrowed(&tool.name),
            description: Cow::Borrowed(&tool.description),
            input_schema: Cow::Borrowed(&tool.input_schema),
            cache_control: None,
        })
        .collect();
    let tool_choice = request.output.as_ref().map(|output| {
        let choice = if tools.is_empty() {
            json!({"type": "tool", "name": FINAL_RESULT_TOOL})
        } else {
            json!({"type": "any"})
        };
        let tool = output.final_result_tool();
        tools.push(WireTool {
            name: Cow::Owned(tool.name),
            description: Cow::Owned(tool.description),
            input_schema: Cow::Owned(tool.input_schema),
            cache_control: None,
        });
        choice
    });
    let mut body = WireRequest {
        model,
        max_tokens: request.max_tokens,
        system,
        messages: convert_messages(&request.messages),
        tools,
        tool_choice,
        stream: true,
        temperature: request.temperature,
    };
    mark_breakpoints(&mut body);
    body
}

/// Marks the cache breakpoints (at most three, under [`MAX_BREAKPOINTS`]):
///
/// 1. the system prompt (or the last tool when there is no system prompt): tools and
///    instructions, the same for every request of a worker, are cached apart from the
///    conversation, so that a new conversation with the same worker reads them too;
/// 2. the last block of the newest message: this request's whole prompt is written to the
///    cache, for the next request to read;
/// 3. the last block of the message before the last assistant message: where the previous
///    request of this conversation ended (and was written to the cache), so that it is read
///    even when the model's answer and the tool results since then add more than the 20
///    blocks a breakpoint looks back over (many parallel tool calls).
///
/// Breakpoints only say where the cache may end; they change nothing the model reads, so a
/// block marked in one request and not in the next is still read from the cache.
fn mark_breakpoints(body: &mut WireRequest<'_>) {
    let mut marked = 0;
    if let Some(system) = body.system.last_mut() {
        system.cache_control = EPHEMERAL;
        marked += 1;
    } else if let Some(tool) = body.tools.last_mut() {
        tool.cache_control = EPHEMERAL;
        marked += 1;
    }
    let messages = &mut body.messages;
    let newest = messages.len().checked_sub(1);
    let previous_end = messages
        .iter()
        .rposition(|message| message.role == Role::Assistant)
        .and_then(|assistant| assistant.checked_sub(1));
    for index in [previous_end, newest].into_iter().flatten() {
        if let Some(block) = messages
            .get_mut(index)
            .and_then(|message| message.content.last_mut())
        {
            marked += usize::from(block.mark());
        }
    }
    debug_assert!(marked <= MAX_BREAKPOINTS, "{marked} cache breakpoints");
}

/// Converts the conversation, merging consecutive messages of the same role. Within a merged
/// user message the `tool_result` blocks come first, as the API requires; messages left
/// without any block (an empty assistant turn, an empty list of results) are dropped.
fn convert_messages(messages: &[Message]) -> Vec<WireMessage<'_>> {
    let mut out: Vec<WireMessage<'_>> = Vec::with_capacity(messages.len());
    for message in messages {
        let (role, blocks) = match message {
            Message::User { content } => (Role::User, vec![WireBlock::text(content)]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !text.is_empty() {
                    blocks.push(WireBlock::text(text));
                }
                blocks.extend(tool_calls.iter().map(|call| WireBlock::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: call.arguments_object(),
                    cache_control: None,
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
                        cache_control: None,
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
                        .filter(|b| !matches!(b, WireBlock::Text { text, .. } if text.is_empty())),
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
    pub(super) id: Option<String>,
    #[serde(default)]
    pub(super) model: Option<String>,
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
                   "messages": [{"role": "user", "content": [{"type": "text", "text": "hi",
                                 "cache_control": {"type": "ephemeral"}}]}]})
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
        let mut body = body(&request);
        assert_eq!(
            body["system"],
            json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(body["temperature"], 0.5);
        // The breakpoints: where the previous request ended (the user message before the last
        // assistant message) and the newest message.
        for (message, block) in [(2, 2), (3, 0)] {
            let block = body["messages"][message]["content"][block]
                .as_object_mut()
                .unwrap();
            assert_eq!(
                block.remove("cache_control"),
                Some(json!({"type": "ephemeral"}))
            );
        }
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
                   "is_error": true, "cache_control": {"type": "ephemeral"}})
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
                   {"type": "text", "text": "hurry", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 2);
    }

    /// Where each request of a session puts its breakpoints.
    fn breakpoints(body: &Value) -> Vec<String> {
        let mut found = Vec::new();
        for (n, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
            if tool.get("cache_control").is_some() {
                found.push(format!("tools[{n}]"));
            }
        }
        for (n, block) in body["system"].as_array().into_iter().flatten().enumerate() {
            if block.get("cache_control").is_some() {
                found.push(format!("system[{n}]"));
            }
        }
        for (m, message) in body["messages"].as_array().unwrap().iter().enumerate() {
            for (n, block) in message["content"].as_array().unwrap().iter().enumerate() {
                if block.get("cache_control").is_some() {
                    found.push(format!("messages[{m}][{n}]"));
                }
            }
        }
        found
    }

    fn tool(name: &str) -> golem_protocol::ToolDefinition {
        golem_protocol::ToolDefinition {
            name: name.into(),
            description: format!("{name} things"),
            input_schema: json!({"type": "object"}),
        }
    }

    #[test]
    fn breakpoints_on_instructions_previous_end_and_newest_message() {
        let tools = vec![tool("read_file"), tool("write_file")];
        let mut request =
            ModelRequest::new("Be brief.", vec![Message::user("read a")], tools.clone());
        assert_eq!(
            breakpoints(&body(&request)),
            ["system[0]", "messages[0][0]"]
        );
        // Three parallel calls: the previous request ended at messages[0].
        request.messages.push(Message::Assistant {
            text: "Reading.".into(),
            tool_calls: vec![call("t1", "{}"), call("t2", "{}"), call("t3", "{}")],
        });
        request.messages.push(Message::Tool {
            results: vec![result("t1", false), result("t2", true), result("t3", false)],
        });
        let second = body(&request);
        assert_eq!(
            breakpoints(&second),
            ["system[0]", "messages[0][0]", "messages[2][2]"]
        );
        request.messages.push(Message::assistant("Done."));
        request.messages.push(Message::user("and b?"));
        assert_eq!(
            breakpoints(&body(&request)),
            ["system[0]", "messages[2][2]", "messages[4][0]"]
        );

        // Without instructions the last tool carries the first breakpoint; never more than 4.
        request.system.clear();
        let third = body(&request);
        assert_eq!(
            breakpoints(&third),
            ["tools[1]", "messages[2][2]", "messages[4][0]"]
        );
        assert!(breakpoints(&third).len() <= MAX_BREAKPOINTS);
        // No tools, no instructions: the conversation only.
        request.tools.clear();
        assert_eq!(
            breakpoints(&body(&request)),
            ["messages[2][2]", "messages[4][0]"]
        );
        assert!(third["tools"][0].get("cache_control").is_none());
        assert_eq!(
            second["tools"],
            json!([
            {"name": "read_file", "description": "read_file things",
             "input_schema": {"type": "object"}},
            {"name": "write_file", "description": "write_file things",
             "input_schema": {"type": "object"}}])
        );
    }

    #[test]
    fn an_empty_text_block_carries_no_breakpoint() {
        let request = ModelRequest::new("", vec![Message::user("")], Vec::new());
        assert_eq!(breakpoints(&body(&request)), Vec::<String>::new());
    }
}
