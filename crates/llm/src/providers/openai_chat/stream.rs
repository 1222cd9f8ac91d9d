//! Decoding the Chat Completions stream: `data: {chat.completion.chunk}` lines into
//! [`StreamEvent`]s, tool-call fragments assembled by index (id and name only in a call's first
//! fragment), and the usual quirks of OpenAI-compatible servers tolerated: empty deltas, chunks
//! with no choices, missing ids, `finish_reason` on its own chunk, no `[DONE]`, null fields, a
//! reused index with a new id (a new call), `stop` as the reason for tool calls. The chunks'
//! `id` and `model` are told once (`ResponseInfo`), again only if a chunk changes them.

use golem_protocol::TokenUsage;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ModelError;
use crate::event::{FinishReason, ResponseInfoTold, StreamEvent};
use crate::providers::openai_common::{stream_error, unreadable, value_text};

#[derive(Deserialize)]
struct ChunkWire {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Option<Vec<ChoiceWire>>,
    #[serde(default)]
    usage: Option<UsageWire>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct ChoiceWire {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    delta: Option<DeltaWire>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct DeltaWire {
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallWire>>,
}

#[derive(Deserialize)]
struct ToolCallWire {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionWire>,
}

#[derive(Deserialize)]
struct FunctionWire {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct UsageWire {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetailsWire>,
}

#[derive(Deserialize)]
struct PromptDetailsWire {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

/// One tool call of the response; its position in `calls` is its event index.
#[derive(Debug)]
struct Call {
    wire_index: Option<u64>,
    id: String,
    name: String,
    ended: bool,
}

/// Decodes a Chat Completions SSE stream into [`StreamEvent`]s, one SSE event at a time.
///
/// Tool calls are numbered 0, 1, … in the order they first appear. `Finish` comes at
/// `data: [DONE]`, or from [`finish`](Self::finish) when the body ends after a
/// `finish_reason` without `[DONE]`.
#[derive(Debug)]
pub struct ChatStreamDecoder {
    provider: String,
    calls: Vec<Call>,
    finish: Option<FinishReason>,
    done: bool,
    last_usage: Option<TokenUsage>,
    told: ResponseInfoTold,
}

/// The canonical reason for a `finish_reason`.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" | "end_turn" | "eos" => FinishReason::EndTurn,
        "tool_calls" | "function_call" | "tool_use" => FinishReason::ToolUse,
        "length" | "max_tokens" => FinishReason::MaxTokens,
        "content_filter" => FinishReason::ContentFilter,
        "stop_sequence" => FinishReason::StopSequence,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// The text of a delta's `content`: a string, or (some servers) a list of text parts.
fn content_text(content: Option<Value>) -> String {
    match content {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| {
                part.get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|t| t == "text")
            })
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        other => value_text(other),
    }
}

impl ChatStreamDecoder {
    /// A decoder for a stream from `provider` (named in errors).
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            calls: Vec::new(),
            finish: None,
            done: false,
            last_usage: None,
            told: ResponseInfoTold::default(),
        }
    }

    /// Whether `[DONE]` was seen (the response is complete).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Decodes one SSE event (`event` is the SSE event name, usually `message`; `data` its
    /// data). Malformed JSON and `error` objects are errors; malformed tool arguments are not.
    pub fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let data = data.trim();
        if self.done || data.is_empty() {
            return Ok(Vec::new());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(self.closing());
        }
        if event == "error" {
            let value: Value =
                serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.to_owned()));
            let error = value.get("error").cloned().unwrap_or(value);
            return Err(stream_error(&self.provider, &error));
        }
        let chunk: ChunkWire = serde_json::from_str(data)
            .map_err(|e| unreadable(&self.provider, "a chunk", &e, data))?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&self.provider, &error));
        }
        let mut out = Vec::new();
        out.extend(self.told.tell(chunk.id.as_deref(), chunk.model.as_deref()));
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.is_some_and(|index| index != 0) {
                continue;
            }
            if let Some(delta) = choice.delta {
                let mut text = content_text(delta.content);
                if let Some(refusal) = delta.refusal {
                    text.push_str(&refusal);
                }
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta { text });
                }
                for call in delta.tool_calls.into_iter().flatten() {
                    self.tool_fragment(call, &mut out);
                }
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                self.finish = Some(finish_reason(&reason));
            }
        }
        if let Some(usage) = chunk.usage {
            // `prompt_tokens` counts the cached ones too; ours are the rest (full price).
            let cached = usage
                .prompt_tokens_details
                .and_then(|d| d.cached_tokens)
                .unwrap_or(0);
            let usage = TokenUsage {
                input_tokens: usage.prompt_tokens.unwrap_or(0).saturating_sub(cached),
                output_tokens: usage.completion_tokens.unwrap_or(0),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
            };
            if usage != TokenUsage::default() && self.last_usage != Some(usage) {
                self.last_usage = Some(usage);
                out.push(StreamEvent::Usage { usage });
            }
        }
        Ok(out)
    }

    /// The body ended: the closing events when a `finish_reason` (or `[DONE]`) was seen,
    /// otherwise [`ModelError::StreamCut`].
    pub fn finish(mut self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        if self.finish.is_none() {
            return Err(ModelError::StreamCut {
                provider: self.provider,
                message: "the stream ended without a finish_reason or [DONE]".into(),
            });
        }
        self.done = true;
        Ok(self.closing())
    }

    /// `ToolCallEnd` for the open calls, then `Finish`.
    fn closing(&mut self) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for (index, call) in self.calls.iter_mut().enumerate() {
            if !call.ended {
                call.ended = true;
                out.push(StreamEvent::ToolCallEnd { index });
            }
        }
        let has_calls = !self.calls.is_empty();
        let reason = match self.finish.take() {
            Some(FinishReason::EndTurn) | None if has_calls => FinishReason::ToolUse,
            Some(reason) => reason,
            None => FinishReason::EndTurn,
        };
        out.push(StreamEvent::Finish { reason });
        out
    }

    /// The call a fragment belongs to (`None`: a new call). A known index with a different
    /// id starts a new call (some servers number every call 0).
    fn find_call(
        &mut self,
        wire_index: Option<u64>,
        id: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Option<usize> {
        match wire_index {
            Some(wire) => {
                let position = self
                    .calls
                    .iter()
                    .rposition(|c| c.wire_index == Some(wire))?;
                let call = &mut self.calls[position];
                if !id.is_empty() && !call.id.is_empty() && call.id != id {
                    if !call.ended {
                        call.ended = true;
                        out.push(StreamEvent::ToolCallEnd { index: position });
                    }
                    return None;
                }
                Some(position)
            }
            None if !id.is_empty() => self.calls.iter().position(|c| c.id == id),
            None => self.calls.len().checked_sub(1),
        }
    }

    fn tool_fragment(&mut self, fragment: ToolCallWire, out: &mut Vec<StreamEvent>) {
        let id = fragment.id.unwrap_or_default();
        let (name, arguments) = match fragment.function {
            Some(function) => (
                function.name.unwrap_or_default(),
                value_text(function.arguments),
            ),
            None => (String::new(), String::new()),
        };
        let index = match self.find_call(fragment.index, &id, out) {
            Some(index) => {
                let call = &mut self.calls[index];
                let new_id = call.id.is_empty() && !id.is_empty();
                let new_name = call.name.is_empty() && !name.is_empty();
                if new_id {
                    call.id = id;
                }
                if new_name {
                    call.name = name;
                }
                if new_id || new_name {
                    out.push(StreamEvent::ToolCallStart {
                        index,
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
                index
            }
            None => {
                let index = self.calls.len();
                out.push(StreamEvent::ToolCallStart {
                    index,
                    id: id.clone(),
                    name: name.clone(),
                });
                self.calls.push(Call {
                    wire_index: fragment.index,
                    id,
                    name,
                    ended: false,
                });
                index
            }
        };
        if !arguments.is_empty() {
            out.push(StreamEvent::ToolCallDelta { index, arguments });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn the_response_id_model_and_finish_reason_are_told() {
        let mut decoder = ChatStreamDecoder::new("openai");
        let chunk = |delta: &str, finish: &str, model: &str| {
            format!(
                r#"{{"id":"chatcmpl-9","object":"chat.completion.chunk","model":"{model}","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
            )
        };
        let mut out = Vec::new();
        for data in [
            chunk(r#"{"role":"assistant","content":""}"#, "null", "gpt-x-2025"),
            chunk(r#"{"content":"Hi"}"#, "null", "gpt-x-2025"),
            chunk("{}", r#""length""#, "gpt-x-2025"),
            "[DONE]".to_owned(),
        ] {
            out.extend(decoder.feed("message", &data).unwrap());
        }
        assert_eq!(
            out,
            vec![
                StreamEvent::ResponseInfo {
                    id: Some("chatcmpl-9".into()),
                    model: Some("gpt-x-2025".into()),
                },
                StreamEvent::TextDelta { text: "Hi".into() },
                StreamEvent::Finish {
                    reason: FinishReason::MaxTokens
                },
            ]
        );
        // A server that names neither tells nothing of them.
        let mut bare = ChatStreamDecoder::new("local");
        let out = bare
            .feed(
                "message",
                r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}"#,
            )
            .unwrap();
        assert_eq!(out, vec![StreamEvent::TextDelta { text: "x".into() }]);
    }
}
