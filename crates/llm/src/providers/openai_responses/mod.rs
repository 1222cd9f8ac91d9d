//! The OpenAI Responses API client (`POST {base}/responses`, streamed): the conversation as
//! `input` items (messages, `function_call` and `function_call_output` items joined by
//! `call_id`), the system prompt as `instructions`, nothing stored on the server.
//!
//! The stream is decoded by [`ResponsesStreamDecoder`] (in `stream.rs`), which needs no HTTP.

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

pub use stream::ResponsesStreamDecoder;

/// A model behind a Responses API endpoint.
#[derive(Debug)]
pub struct OpenAiResponsesModel {
    spec: ModelSpec,
    config: OpenAiConfig,
    client: reqwest::Client,
}

impl OpenAiResponsesModel {
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
impl Model for OpenAiResponsesModel {
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
        let body = responses_body(&self.spec.model, request);
        let decoder = ResponsesStreamDecoder::new(self.config.provider.clone());
        self.config
            .open_stream(&self.client, "/responses", &body, cancel, decoder)
            .await
    }
}

impl SseDecoder for ResponsesStreamDecoder {
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        ResponsesStreamDecoder::feed(self, event, data)
    }

    fn finish(self) -> Result<Vec<StreamEvent>, ModelError> {
        ResponsesStreamDecoder::finish(self)
    }

    fn is_done(&self) -> bool {
        ResponsesStreamDecoder::is_done(self)
    }
}

/// A tool in the Responses form: `{type: function, name, description, parameters, strict}`.
///
/// `strict: false` is sent explicitly: the API takes a missing `strict` as `true`, and strict
/// mode refuses our schemas (it wants every property required and `additionalProperties:
/// false`, while our tools have optional properties). Making every schema strict-compatible
/// would change what the model may leave out; the orchestrator validates the arguments anyway.
fn tool_json(tool: &ToolDefinition) -> Value {
    json!({"type": "function", "name": tool.name, "description": tool.description,
           "parameters": tool.input_schema, "strict": false})
}

/// The `input` items of the conversation. The model's earlier text goes back as an easy input
/// message with string content (`{role: assistant, content: "…"}`), the one assistant shape
/// the API accepts without the `id` and `status` of an output message it produced itself
/// (nothing is stored, so there is no id to give).
fn input_items(request: &ModelRequest) -> Vec<Value> {
    let mut items = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            Message::User { content } => items.push(json!({
                "role": "user", "content": [{"type": "input_text", "text": content}]})),
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() || tool_calls.is_empty() {
                    items.push(json!({"role": "assistant", "content": text}));
                }
                for call in tool_calls {
                    items.push(json!({"type": "function_call", "call_id": call.id,
                                      "name": call.name,
                                      "arguments": history_arguments(call)}));
                }
            }
            Message::Tool { results } => {
                for result in results {
                    items.push(json!({"type": "function_call_output",
                                      "call_id": result.tool_call_id,
                                      "output": tool_output(result)}));
                }
            }
        }
    }
    items
}

/// The request body. `store: false`: every request carries the whole conversation, so each
/// one's prefix (instructions, tools, earlier items) is the previous one's, which OpenAI caches
/// on its own; the request's cache key goes as `prompt_cache_key` (a documented field of the
/// Responses API), so that a session's requests reach the same cache. A request for a
/// structured answer carries `text: {format: {type: json_schema, name, schema, strict}}`.
fn responses_body(model: &str, request: &ModelRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), model.into());
    if !request.system.is_empty() {
        body.insert("instructions".into(), request.system.clone().into());
    }
    body.insert("input".into(), Value::Array(input_items(request)));
    if !request.tools.is_empty() {
        let tools = request.tools.iter().map(tool_json).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), true.into());
    body.insert("store".into(), false.into());
    if request.max_tokens > 0 {
        body.insert("max_output_tokens".into(), request.max_tokens.into());
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), temperature_value(temperature));
    }
    if let Some(key) = &request.cache_key {
        body.insert("prompt_cache_key".into(), key.clone().into());
    }
    if let Some(output) = &request.output {
        body.insert(
            "text".into(),
            json!({"format": {"type": "json_schema", "name": output.name,
                              "schema": output.schema, "strict": output.strict()}}),
        );
    }
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ModelToolCall, ToolResultMessage};

    #[test]
    fn history_items_have_the_documented_shapes() {
        let not_found = "Error [FILE_NOT_FOUND]: no such file: /a";
        let request = ModelRequest::new(
            "",
            vec![
                Message::Assistant {
                    text: "Reading.".into(),
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
        assert_eq!(
            input_items(&request),
            vec![
                json!({"role": "assistant", "content": "Reading."}),
                json!({"type": "function_call", "call_id": "c1", "name": "read_file",
                       "arguments": "{}"}),
                json!({"type": "function_call_output", "call_id": "c1", "output": not_found}),
            ]
        );
    }

    #[test]
    fn tools_are_flat_functions_with_their_schema_as_parameters() {
        let tool = ToolDefinition {
            name: "read_file".into(),
            description: "Read a file".into(),
            input_schema: json!({"type": "object"}),
        };
        assert_eq!(
            tool_json(&tool),
            json!({"type": "function", "name": "read_file", "description": "Read a file",
                   "parameters": {"type": "object"}, "strict": false})
        );
    }

    #[test]
    fn the_cache_key_goes_as_prompt_cache_key() {
        let request = ModelRequest::new("Be brief.", vec![Message::user("hi")], Vec::new());
        assert!(
            responses_body("gpt-x", &request)
                .get("prompt_cache_key")
                .is_none()
        );
        let request = request.with_cache_key(Some("20261123-1830-abcd".into()));
        assert_eq!(
            responses_body("gpt-x", &request)["prompt_cache_key"],
            "20261123-1830-abcd"
        );
    }
}
