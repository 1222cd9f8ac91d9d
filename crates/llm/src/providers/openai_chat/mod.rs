//! The OpenAI Chat Completions client (`POST {base}/chat/completions`, streamed), also used for
//! ollama, openrouter and OpenAI-compatible providers defined in program config.
//!
//! The request is built here from the canonical conversation; the stream is decoded by
//! [`ChatStreamDecoder`] (in `stream.rs`), which needs no HTTP and can be tested on its own.

pub mod entry;
mod stream;

use async_trait::async_trait;
use golem_protocol::ToolDefinition;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::event::StreamEvent;
use crate::message::{Message, ModelRequest};
use crate::model::{EventStream, Model};
use crate::providers::openai_common::{
    OpenAiConfig, SseDecoder, history_arguments, temperature_value, tool_output,
};
use crate::spec::ModelSpec;

pub use stream::ChatStreamDecoder;

/// A model behind a Chat Completions endpoint.
#[derive(Debug)]
pub struct OpenAiChatModel {
    spec: ModelSpec,
    config: OpenAiConfig,
    client: reqwest::Client,
}

impl OpenAiChatModel {
    /// A model `spec.model` at the endpoint `config`. Fails on an unusable base URL or header.
    pub fn new(spec: ModelSpec, config: OpenAiConfig) -> Result<Self, ModelError> {
        config.validate()?;
        let client = config.settings.client()?;
        Ok(Self {
            spec,
            config,
            client,
        })
    }

    /// The endpoint.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }
}

#[async_trait]
impl Model for OpenAiChatModel {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    fn server(&self) -> Option<crate::http::ServerAddress> {
        self.config.server()
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        cancel: CancellationToken,
    ) -> Result<EventStream, ModelError> {
        let body = chat_body(&self.spec.model, &self.config.provider, request);
        let decoder = ChatStreamDecoder::new(self.config.provider.clone());
        self.config
            .open_stream(&self.client, "/chat/completions", &body, cancel, decoder)
            .await
    }
}

impl SseDecoder for ChatStreamDecoder {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        ChatStreamDecoder::feed(self, event, data)
    }

    fn finish(self) -> Result<Vec<StreamEvent>, ModelError> {
        ChatStreamDecoder::finish(self)
    }

    fn is_done(&self) -> bool {
        ChatStreamDecoder::is_done(self)
    }
}

/// The `messages` array: the system prompt first, then the conversation.
fn chat_messages(request: &ModelRequest) -> Vec<Value> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message {
            Message::User { content } => messages.push(json!({"role": "user", "content": content})),
            Message::Assistant { text, tool_calls } => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                let content = if text.is_empty() && !tool_calls.is_empty() {
                    Value::Null
                } else {
                    Value::String(text.clone())
                };
                m.insert("content".into(), content);
                if !tool_calls.is_empty() {
                    let calls = tool_calls
                        .iter()
                        .map(|call| {
                            json!({"id": call.id, "type": "function",
                                   "function": {"name": call.name,
                                                "arguments": history_arguments(call)}})
                        })
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
            }
            Message::Tool { results } => {
                for result in results {
                    messages.push(json!({"role": "tool", "tool_call_id": result.tool_call_id,
                                         "content": tool_output(result)}));
                }
            }
        }
    }
    messages
}

/// A tool in the Chat Completions form: `{type: function, function: {name, description,
/// parameters}}`.
fn tool_json(tool: &ToolDefinition) -> Value {
    json!({"type": "function", "function": {
        "name": tool.name, "description": tool.description, "parameters": tool.input_schema}})
}

/// The request body. OpenAI itself takes `max_completion_tokens`; compatible servers
/// (ollama, openrouter, configured ones) the older `max_tokens`.
///
/// Every request of a conversation starts with the previous one's messages, unchanged, which
/// OpenAI caches on its own; OpenAI also gets the request's cache key as `prompt_cache_key`,
/// so that a session's requests reach the same cache. Compatible servers do not get it: it is
/// not part of what they all accept.
///
/// A request for a structured answer carries `response_format: {type: json_schema,
/// json_schema: {name, schema, strict}}`, `strict` only when the schema meets strict mode's
/// rules ([`crate::OutputFormat::strict`]).
fn chat_body(model: &str, provider: &str, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    body.insert("messages".into(), Value::Array(chat_messages(request)));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(tool_json).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if request.max_tokens > 0 {
        let key = if provider == "openai" {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), request.max_tokens.into());
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), temperature_value(temperature));
    }
    if let Some(key) = request.cache_key.as_ref().filter(|_| provider == "openai") {
        body.insert("prompt_cache_key".into(), key.clone().into());
    }
    if let Some(output) = &request.output {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {
                "name": output.name, "schema": output.schema, "strict": output.strict()}}),
        );
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ModelToolCall, ToolResultMessage};

    #[test]
    fn history_sends_valid_arguments_and_one_error_prefix() {
        let not_found = "Error [FILE_NOT_FOUND]: no such file: /a";
        let request = ModelRequest::new(
            "",
            vec![
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ModelToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: r#"{"path": "#.into(),
                    }],
                },
                Message::Tool {
                    results: vec![ToolResultMessage {
                        tool_call_id: "c1".into(),
                        tool_name: "read_file".into(),
                        content: not_found.into(),
                        is_error: true,
                    }],
                },
            ],
            Vec::new(),
        );
        let messages = chat_messages(&request);
        assert_eq!(messages[0]["tool_calls"][0]["function"]["arguments"], "{}");
        assert_eq!(
            messages[1],
            json!({"role": "tool", "tool_call_id": "c1", "content": not_found})
        );
    }

    #[test]
    fn tools_are_sent_as_functions_with_their_schema_as_parameters() {
        let tool = ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object"}),
        };
        assert_eq!(
            tool_json(&tool),
            json!({"type": "function", "function": {"name": "read_file",
                   "description": "Read a file", "parameters": {"type": "object"}}})
        );
    }

    #[test]
    fn the_cache_key_goes_to_openai_as_prompt_cache_key() {
        let request = ModelRequest::new("Be brief.", vec![Message::user("hi")], Vec::new());
        assert!(
            chat_body("gpt-x", "openai", &request)
                .get("prompt_cache_key")
                .is_none()
        );
        let request = request.with_cache_key(Some("20261123-1830-abcd".into()));
        assert_eq!(
            chat_body("gpt-x", "openai", &request)["prompt_cache_key"],
            "20261123-1830-abcd"
        );
        for provider in ["ollama", "openrouter", "local"] {
            let body = chat_body("m", provider, &request);
            assert!(body.get("prompt_cache_key").is_none(), "{provider}: {body}");
        }
    }
}
