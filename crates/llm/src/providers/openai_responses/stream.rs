//! Decoding the Responses API stream: typed SSE events (`response.output_text.delta`,
//! `response.output_item.added`/`.done`, `response.function_call_arguments.delta`,
//! `response.completed`/`.incomplete`/`.failed`, `error`) into [`StreamEvent`]s, and the
//! response's id and model from `response.created` (or the final response). Other events are
//! ignored. Items a server completed without streaming them are taken from the final response.

use golem_protocol::TokenUsage;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::ModelError;
use crate::event::{FinishReason, ResponseInfoTold, StreamEvent};
use crate::providers::openai_common::{stream_error, unreadable, value_text};

/// The fields of the events we read; every event has a `type`, the rest depend on it.
#[derive(Deserialize)]
struct EventWire {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    delta: Option<Value>,
    #[serde(default)]
    output_index: Option<u64>,
    #[serde(default)]
    item_id: Option<String>,
    #[serde(default)]
    item: Option<Value>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    response: Option<Value>,
    #[serde(default)]
    error: Option<Value>,
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<Value>,
}

/// One function call; `index` is its `output_index`.
#[derive(Debug)]
struct Call {
    index: usize,
    item_id: String,
    call_id: String,
    has_arguments: bool,
    ended: bool,
}

/// Decodes a Responses API SSE stream into [`StreamEvent`]s, one SSE event at a time.
///
/// Tool calls are indexed by their `output_index`. `Finish` comes at `response.completed`
/// (or `response.incomplete`); a stream that ends before is [`ModelError::StreamCut`].
#[derive(Debug)]
pub struct ResponsesStreamDecoder {
    provider: String,
    calls: Vec<Call>,
    text_seen: bool,
    completed: bool,
    told: ResponseInfoTold,
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

impl ResponsesStreamDecoder {
    /// A decoder for a stream from `provider` (named in errors).
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            calls: Vec::new(),
            text_seen: false,
            completed: false,
            told: ResponseInfoTold::default(),
        }
    }

    /// Whether the response is complete.
    pub fn is_done(&self) -> bool {
        self.completed
    }

    /// Decodes one SSE event (`event` is the SSE event name; the `type` in `data` wins).
    /// Malformed JSON, `response.failed` and `error` events are errors; malformed tool
    /// arguments are not.
    pub fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        let data = data.trim();
        if self.completed || data.is_empty() || data == "[DONE]" {
            return Ok(Vec::new());
        }
        let wire: EventWire = serde_json::from_str(data)
            .map_err(|e| unreadable(&self.provider, "an event", &e, data))?;
        let kind = wire
            .kind
            .as_deref()
            .filter(|k| !k.is_empty())
            .unwrap_or(event);
        let mut out = Vec::new();
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                let text = value_text(wire.delta);
                if !text.is_empty() {
                    self.text_seen = true;
                    out.push(StreamEvent::TextDelta { text });
                }
            }
            "response.output_item.added" => {
                if let Some(item) = wire
                    .item
                    .filter(|i| str_field(i, "type") == "function_call")
                {
                    let position = self.start_call(wire.output_index, &item, &mut out);
                    self.call_arguments(position, &item, &mut out);
                }
            }
            "response.function_call_arguments.delta" => {
                let arguments = value_text(wire.delta);
                if !arguments.is_empty() {
                    let position =
                        self.call_for(wire.output_index, wire.item_id.as_deref(), &mut out);
                    self.calls[position].has_arguments = true;
                    let index = self.calls[position].index;
                    out.push(StreamEvent::ToolCallDelta { index, arguments });
                }
            }
            "response.function_call_arguments.done" => {
                let item = json!({"arguments": wire.arguments});
                let position = self.call_for(wire.output_index, wire.item_id.as_deref(), &mut out);
                self.call_arguments(position, &item, &mut out);
            }
            "response.output_item.done" => {
                if let Some(item) = wire
                    .item
                    .filter(|i| str_field(i, "type") == "function_call")
                {
                    let position = self.start_call(wire.output_index, &item, &mut out);
                    self.call_arguments(position, &item, &mut out);
                    self.end_call(position, &mut out);
                }
            }
            "response.created" | "response.in_progress" => {
                if let Some(response) = &wire.response {
                    self.tell_info(response, &mut out);
                }
            }
            "response.completed" | "response.incomplete" => {
                let response = wire.response.unwrap_or(Value::Null);
                self.tell_info(&response, &mut out);
                self.complete(kind, &response, &mut out)?;
            }
            "response.failed" => {
                let response = wire.response.unwrap_or(Value::Null);
                return Err(self.failure(&response));
            }
            "error" => {
                let error = match wire.error.filter(|e| !e.is_null()) {
                    Some(error) => error,
                    None => json!({"code": wire.code, "message": wire.message}),
                };
                return Err(stream_error(&self.provider, &error));
            }
            _ => {}
        }
        Ok(out)
    }

    /// The body ended: nothing more when the response was completed, otherwise
    /// [`ModelError::StreamCut`].
    pub fn finish(self) -> Result<Vec<StreamEvent>, ModelError> {
        if self.completed {
            Ok(Vec::new())
        } else {
            Err(ModelError::StreamCut {
                provider: self.provider,
                message: "the stream ended before response.completed".into(),
            })
        }
    }

    /// The response's `id` and `model`, when new (`ResponseInfo`).
    fn tell_info(&mut self, response: &Value, out: &mut Vec<StreamEvent>) {
        let field = |key: &str| response.get(key).and_then(Value::as_str);
        out.extend(self.told.tell(field("id"), field("model")));
    }

    /// The call of a `function_call` item, started (`ToolCallStart`) if new.
    fn start_call(
        &mut self,
        output_index: Option<u64>,
        item: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        let item_id = str_field(item, "id");
        let call_id = str_field(item, "call_id");
        let found = self.calls.iter().position(|c| {
            output_index.is_some_and(|i| usize::try_from(i).is_ok_and(|i| i == c.index))
                || (!item_id.is_empty() && c.item_id == item_id)
                || (!call_id.is_empty() && c.call_id == call_id)
        });
        if let Some(position) = found {
            let call = &mut self.calls[position];
            if call.call_id.is_empty() && !call_id.is_empty() {
                call.call_id = call_id.to_owned();
                let name = str_field(item, "name").to_owned();
                out.push(StreamEvent::ToolCallStart {
                    index: call.index,
                    id: call.call_id.clone(),
                    name,
                });
            }
            return position;
        }
        let index = self.new_index(output_index);
        out.push(StreamEvent::ToolCallStart {
            index,
            id: call_id.to_owned(),
            name: str_field(item, "name").to_owned(),
        });
        self.calls.push(Call {
            index,
            item_id: item_id.to_owned(),
            call_id: call_id.to_owned(),
            has_arguments: false,
            ended: false,
        });
        self.calls.len() - 1
    }

    /// The call an arguments event is about (started without a name if unseen).
    fn call_for(
        &mut self,
        output_index: Option<u64>,
        item_id: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        let item = json!({"id": item_id.unwrap_or("")});
        self.start_call(output_index, &item, out)
    }

    fn new_index(&self, output_index: Option<u64>) -> usize {
        match output_index.and_then(|i| usize::try_from(i).ok()) {
            Some(index) => index,
            None => self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0),
        }
    }

    /// The item's whole `arguments`, when no fragments of them were streamed.
    fn call_arguments(&mut self, position: usize, item: &Value, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[position];
        if call.has_arguments {
            return;
        }
        let arguments = value_text(item.get("arguments").cloned());
        if !arguments.is_empty() {
            call.has_arguments = true;
            out.push(StreamEvent::ToolCallDelta {
                index: call.index,
                arguments,
            });
        }
    }

    fn end_call(&mut self, position: usize, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[position];
        if !call.ended {
            call.ended = true;
            out.push(StreamEvent::ToolCallEnd { index: call.index });
        }
    }

    /// `response.completed` / `response.incomplete`: unstreamed items, open calls ended,
    /// usage, and the finish reason.
    fn complete(
        &mut self,
        kind: &str,
        response: &Value,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        let items = response
            .get("output")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let text_seen = self.text_seen;
        for (position, item) in items.iter().enumerate() {
            match str_field(item, "type") {
                "function_call" => {
                    let call = self.start_call(u64::try_from(position).ok(), item, out);
                    self.call_arguments(call, item, out);
                }
                "message" if !text_seen => {
                    let parts = item
                        .get("content")
                        .and_then(Value::as_array)
                        .map_or(&[][..], Vec::as_slice);
                    for part in parts {
                        let text = match str_field(part, "type") {
                            "output_text" => str_field(part, "text"),
                            "refusal" => str_field(part, "refusal"),
                            _ => "",
                        };
                        if !text.is_empty() {
                            self.text_seen = true;
                            out.push(StreamEvent::TextDelta {
                                text: text.to_owned(),
                            });
                        }
                    }
                }
                _ => {}
            }
        }
        for position in 0..self.calls.len() {
            self.end_call(position, out);
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            let number =
                |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            // `input_tokens` counts the cached ones too; ours are the rest (full price).
            let cached = number("/input_tokens_details/cached_tokens");
            out.push(StreamEvent::Usage {
                usage: TokenUsage {
                    input_tokens: number("/input_tokens").saturating_sub(cached),
                    output_tokens: number("/output_tokens"),
                    cache_read_tokens: cached,
                    cache_write_tokens: 0,
                },
            });
        }
        let default_status = if kind == "response.incomplete" {
            "incomplete"
        } else {
            "completed"
        };
        let status = response
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or(default_status);
        let reason = match status {
            "incomplete" => match response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str)
            {
                Some("max_output_tokens") => FinishReason::MaxTokens,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Other("incomplete".into()),
            },
            "failed" => return Err(self.failure(response)),
            "cancelled" => FinishReason::Other("cancelled".into()),
            _ if self.calls.is_empty() => FinishReason::EndTurn,
            _ => FinishReason::ToolUse,
        };
        out.push(StreamEvent::Finish { reason });
        self.completed = true;
        Ok(())
    }

    /// The error of a failed response.
    fn failure(&self, response: &Value) -> ModelError {
        match response.get("error").filter(|e| !e.is_null()) {
            Some(error) => stream_error(&self.provider, error),
            None => stream_error(&self.provider, &json!({"message": "the response failed"})),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    #[test]
    fn the_response_id_model_and_finish_reason_are_told() {
        let mut decoder = ResponsesStreamDecoder::new("openai");
        let mut out = Vec::new();
        for (event, data) in [
            (
                "response.created",
                r#"{"type":"response.created","response":{"id":"resp_7","model":"gpt-x-2025","status":"in_progress","output":[]}}"#,
            ),
            (
                "response.output_text.delta",
                r#"{"type":"response.output_text.delta","output_index":0,"delta":"Hi"}"#,
            ),
            (
                "response.incomplete",
                r#"{"type":"response.incomplete","response":{"id":"resp_7","model":"gpt-x-2025","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}}"#,
            ),
        ] {
            out.extend(decoder.feed(event, data).unwrap());
        }
        assert_eq!(
            out,
            vec![
                StreamEvent::ResponseInfo {
                    id: Some("resp_7".into()),
                    model: Some("gpt-x-2025".into()),
                },
                StreamEvent::TextDelta { text: "Hi".into() },
                StreamEvent::Finish {
                    reason: FinishReason::ContentFilter
                },
            ]
        );
        // A server that skips `response.created` names them in the final response.
        let mut late = ResponsesStreamDecoder::new("openai");
        let out = late
            .feed(
                "response.completed",
                r#"{"type":"response.completed","response":{"id":"resp_8","model":"m","status":"completed","output":[]}}"#,
            )
            .unwrap();
        assert_eq!(
            out[0],
            StreamEvent::ResponseInfo {
                id: Some("resp_8".into()),
                model: Some("m".into()),
            }
        );
        assert_eq!(
            out.last(),
            Some(&StreamEvent::Finish {
                reason: FinishReason::EndTurn
            })
        );
    }
}
