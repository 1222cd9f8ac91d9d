//! What a model stream yields, and the assembler that folds a stream into a complete response.
//! Every provider emits these events; tool-call fragments are keyed by index.

use golem_protocol::TokenUsage;
use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::message::ModelToolCall;

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A final answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran out of output tokens.
    MaxTokens,
    /// A stop sequence.
    StopSequence,
    /// The provider filtered the content.
    ContentFilter,
    /// Something else, as the provider named it.
    Other(String),
}

impl FinishReason {
    /// The reason as OpenTelemetry's GenAI conventions name it (`gen_ai.response.finish_reasons`):
    /// `stop` (a stop sequence too), `tool_call`, `length`, `content_filter`, or the provider's
    /// own word.
    pub fn gen_ai_name(&self) -> &str {
        match self {
            FinishReason::EndTurn | FinishReason::StopSequence => "stop",
            FinishReason::ToolUse => "tool_call",
            FinishReason::MaxTokens => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(other) => other,
        }
    }
}

/// One event of a model stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[allow(missing_docs)] // fields are named for what they hold
pub enum StreamEvent {
    /// More answer text.
    TextDelta { text: String },
    /// A tool call begins.
    ToolCallStart {
        /// The call's position in this response.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More argument JSON for a call.
    ToolCallDelta {
        /// The call's position.
        index: usize,
        /// The JSON fragment.
        arguments: String,
    },
    /// A tool call is complete.
    ToolCallEnd {
        /// The call's position.
        index: usize,
    },
    /// Token counts (may come more than once; later counts add up or replace as the provider
    /// reports them, see [`ResponseAssembler`]).
    Usage {
        /// The counts.
        usage: TokenUsage,
    },
    /// Who answered, as the provider named it (may come more than once; later values that
    /// are present replace earlier ones).
    ResponseInfo {
        /// The provider's id of the response.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The model that answered (a dated version of an alias, say).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
    },
    /// The response is complete.
    Finish {
        /// Why it stopped.
        reason: FinishReason,
    },
}

/// A complete model response.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelResponse {
    /// The answer text.
    pub text: String,
    /// The tool calls, in order.
    pub tool_calls: Vec<ModelToolCall>,
    /// Tokens used.
    pub usage: TokenUsage,
    /// Why it stopped (absent if the stream ended without saying).
    pub finish_reason: Option<FinishReason>,
    /// The model that answered, as the provider named it, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    /// The provider's id of the response, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

/// What a stream decoder told of the response's id and model, so that it tells each once,
/// and again only when the provider changes it.
#[derive(Debug, Default)]
pub(crate) struct ResponseInfoTold {
    id: Option<String>,
    model: Option<String>,
}

impl ResponseInfoTold {
    /// The `ResponseInfo` event for `id` and `model` as a provider's event gave them (empty
    /// ones are none), when either is new.
    pub(crate) fn tell(&mut self, id: Option<&str>, model: Option<&str>) -> Option<StreamEvent> {
        let id = id.filter(|v| !v.is_empty());
        let model = model.filter(|v| !v.is_empty());
        let new = |now: Option<&str>, told: &Option<String>| {
            now.is_some_and(|now| told.as_deref() != Some(now))
        };
        if !new(id, &self.id) && !new(model, &self.model) {
            return None;
        }
        if let Some(id) = id {
            self.id = Some(id.to_owned());
        }
        if let Some(model) = model {
            self.model = Some(model.to_owned());
        }
        Some(StreamEvent::ResponseInfo {
            id: id.map(str::to_owned),
            model: model.map(str::to_owned),
        })
    }
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Folds stream events into a [`ModelResponse`].
///
/// Usage events are merged field by field, keeping the largest value seen: providers report
/// input tokens at the start and cumulative output tokens at the end.
#[derive(Debug, Default)]
pub struct ResponseAssembler {
    text: String,
    calls: Vec<(usize, PartialCall)>,
    usage: TokenUsage,
    finish: Option<FinishReason>,
    response_model: Option<String>,
    response_id: Option<String>,
}

impl ResponseAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    fn call_mut(&mut self, index: usize) -> &mut PartialCall {
        let position = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(position) => position,
            None => {
                self.calls.push((index, PartialCall::default()));
                self.calls.len() - 1
            }
        };
        &mut self.calls[position].1
    }

    /// Adds one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta { text } => self.text.push_str(text),
            StreamEvent::ToolCallStart { index, id, name } => {
                let call = self.call_mut(*index);
                if !id.is_empty() {
                    call.id.clone_from(id);
                }
                if !name.is_empty() {
                    call.name.clone_from(name);
                }
            }
            StreamEvent::ToolCallDelta { index, arguments } => {
                self.call_mut(*index).arguments.push_str(arguments);
            }
            StreamEvent::ToolCallEnd { .. } => {}
            StreamEvent::Usage { usage } => {
                self.usage.input_tokens = self.usage.input_tokens.max(usage.input_tokens);
                self.usage.output_tokens = self.usage.output_tokens.max(usage.output_tokens);
                self.usage.cache_read_tokens =
                    self.usage.cache_read_tokens.max(usage.cache_read_tokens);
                self.usage.cache_write_tokens =
                    self.usage.cache_write_tokens.max(usage.cache_write_tokens);
            }
            StreamEvent::ResponseInfo { id, model } => {
                let present = |value: &Option<String>| value.clone().filter(|v| !v.is_empty());
                if let Some(id) = present(id) {
                    self.response_id = Some(id);
                }
                if let Some(model) = present(model) {
                    self.response_model = Some(model);
                }
            }
            StreamEvent::Finish { reason } => self.finish = Some(reason.clone()),
        }
    }

    /// The response so far. Calls without an id get `call_<index>`.
    pub fn finish(mut self) -> ModelResponse {
        self.calls.sort_by_key(|(index, _)| *index);
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, call)| ModelToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}")
                } else {
                    call.id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        ModelResponse {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish,
            response_model: self.response_model,
            response_id: self.response_id,
        }
    }
}

/// Collects a whole stream into a response; the first error ends it.
pub async fn collect<S>(mut stream: S) -> Result<ModelResponse, ModelError>
where
    S: futures::Stream<Item = Result<StreamEvent, ModelError>> + Unpin,
{
    use futures::StreamExt;
    let mut assembler = ResponseAssembler::new();
    while let Some(event) = stream.next().await {
        assembler.push(&event?);
    }
    Ok(assembler.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assembles_interleaved_parallel_calls_by_index() {
        let mut a = ResponseAssembler::new();
        for event in [
            StreamEvent::TextDelta {
                text: "Let me ".into(),
            },
            StreamEvent::TextDelta {
                text: "look.".into(),
            },
            StreamEvent::ToolCallStart {
                index: 1,
                id: "b".into(),
                name: "list_files".into(),
            },
            StreamEvent::ToolCallStart {
                index: 0,
                id: "a".into(),
                name: "read_file".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{\"pa".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: "{}".into(),
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "th\":\"/a\"}".into(),
            },
            StreamEvent::Usage {
                usage: TokenUsage {
                    input_tokens: 10,
                    ..TokenUsage::default()
                },
            },
            StreamEvent::Usage {
                usage: TokenUsage {
                    output_tokens: 7,
                    ..TokenUsage::default()
                },
            },
            StreamEvent::ResponseInfo {
                id: Some("resp_1".into()),
                model: Some("m-2025".into()),
            },
            // A later event without them keeps what was said.
            StreamEvent::ResponseInfo {
                id: None,
                model: Some(String::new()),
            },
            StreamEvent::Finish {
                reason: FinishReason::ToolUse,
            },
        ] {
            a.push(&event);
        }
        let r = a.finish();
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].name, "read_file");
        assert_eq!(
            r.tool_calls[0].parsed_arguments().unwrap(),
            serde_json::json!({"path": "/a"})
        );
        assert_eq!(r.tool_calls[1].id, "b");
        assert_eq!(r.usage.input_tokens, 10);
        assert_eq!(r.usage.output_tokens, 7);
        assert_eq!(r.finish_reason, Some(FinishReason::ToolUse));
        assert_eq!(r.response_id.as_deref(), Some("resp_1"));
        assert_eq!(r.response_model.as_deref(), Some("m-2025"));
    }

    #[test]
    fn finish_reasons_by_their_gen_ai_names() {
        for (reason, name) in [
            (FinishReason::EndTurn, "stop"),
            (FinishReason::StopSequence, "stop"),
            (FinishReason::ToolUse, "tool_call"),
            (FinishReason::MaxTokens, "length"),
            (FinishReason::ContentFilter, "content_filter"),
            (FinishReason::Other("pause_turn".into()), "pause_turn"),
        ] {
            assert_eq!(reason.gen_ai_name(), name);
        }
    }

    #[test]
    fn missing_ids_and_malformed_arguments() {
        let mut a = ResponseAssembler::new();
        a.push(&StreamEvent::ToolCallStart {
            index: 3,
            id: String::new(),
            name: "t".into(),
        });
        a.push(&StreamEvent::ToolCallDelta {
            index: 3,
            arguments: "{\"a\": ".into(),
        });
        let r = a.finish();
        assert_eq!(r.tool_calls[0].id, "call_3");
        assert!(r.tool_calls[0].parsed_arguments().is_err());
        assert_eq!(r.tool_calls[0].arguments_object(), serde_json::json!({}));
        let empty = ModelToolCall {
            id: "x".into(),
            name: "t".into(),
            arguments: " ".into(),
        };
        assert_eq!(empty.parsed_arguments().unwrap(), serde_json::json!({}));
    }
}
