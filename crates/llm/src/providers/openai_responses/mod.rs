//! The OpenAI Responses API client (`POST {base}/responses`, streamed): the conversation as
//! `input` items (messages, `function_call` and `function_call_output` items joined by
//! `call_id`), the system prompt as `instructions`, nothing stored on the server.
//!
//! The stream is decoded by [`ResponsesStreamDecoder`] (in `stream.rs`), which needs no HTTP.

mod stream;

use async_trait::async_trait;
use golem_protocol::ToolDefinition;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::ModelError;
use crate::event::StreamEvent;
use crate::message::{Message, ModelRequest};
use crate::model::{EventStream, Model};
use crate::providers::openai_common::{OpenAiConfig, SseDecoder, temperature_value};
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

/// The `input` items of the conversation.
/// A tool in the Responses form: `{type: function, name, description, parameters}`.
fn tool_json(tool: &ToolDefinition) -> Value {
    json!({"type": "function", "name": tool.name, "description": tool.description,
           "parameters": tool.input_schema})
}

fn input_items(request: &ModelRequest) -> Vec<Value> {
    let mut items = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        match message {
            Message::User { content } => items.push(json!({
                "role": "user", "content": [{"type": "input_text", "text": content}]})),
            Message::Assistant { text, tool_calls } => {
                if !text.is_empty() || tool_calls.is_empty() {
                    items.push(json!({
                        "role": "assistant", "content": [{"type": "output_text", "text": text}]}));
                }
                for call in tool_calls {
                    items.push(json!({"type": "function_call", "call_id": call.id,
                                      "name": call.name, "arguments": call.arguments}));
                }
            }
            Message::Tool { results } => {
                for result in results {
                    // The format has no error flag: failures say so in the text.
                    let output = if result.is_error {
                        format!("Error: {}", result.content)
                    } else {
                        result.content.clone()
                    };
                    items.push(json!({"type": "function_call_output",
                                      "call_id": result.tool_call_id, "output": output}));
                }
            }
        }
    }
    items
}

/// The request body. `store: false`: every request carries the whole conversation.
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
    Value::Object(body)
}

#[cfg(test)]
mod tests {
    use super::*;

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
                   "parameters": {"type": "object"}})
        );
    }
}
