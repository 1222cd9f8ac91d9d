//! Decoding the Messages API event stream: a pure state machine fed one server-sent event at a
//! time (testable and benchmarkable without HTTP), and the adapter that runs it over the
//! HTTP event stream. The message's id and model come with `message_start`.

use std::collections::VecDeque;

use eventsource_stream::Event;
use futures::{Stream, StreamExt};
use golem_protocol::TokenUsage;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ModelError;
use crate::event::{FinishReason, ResponseInfoTold, StreamEvent};
use crate::model::EventStream;

use super::wire::{
    BlockDelta, BlockStart, BlockStop, ErrorBody, ErrorEvent, MessageDelta, MessageStart, TypeOnly,
    WireUsage,
};

/// What a content block is.
#[derive(Debug)]
enum Block {
    /// Answer text.
    Text,
    /// A tool call; `initial` holds a non-empty `input` sent with the start, used only when no
    /// `input_json_delta` follows.
    ToolUse { initial: Option<String> },
    /// Thinking, server tools and future block types: ignored.
    Other,
}

/// Turns Messages API server-sent events into [`StreamEvent`]s, one event at a time.
///
/// Tool calls are keyed by their content-block index. Usage events carry the running totals
/// (input and cache counts from `message_start`, output from `message_delta`). Unknown event
/// and block types are ignored; malformed JSON is a [`ModelError::Protocol`].
#[derive(Debug)]
pub struct AnthropicStreamDecoder {
    provider: String,
    blocks: Vec<(usize, Block)>,
    usage: TokenUsage,
    stop_reason: Option<String>,
    done: bool,
    told: ResponseInfoTold,
}

impl AnthropicStreamDecoder {
    /// A decoder for a stream from `provider` (named in errors).
    pub fn new(provider: impl Into<String>) -> Self {
        Self {
            provider: provider.into(),
            blocks: Vec::new(),
            usage: TokenUsage::default(),
            stop_reason: None,
            done: false,
            told: ResponseInfoTold::default(),
        }
    }

    /// Whether the response is complete (`message_stop` or an `error` event was seen); later
    /// events are ignored.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Decodes one event: its `event:` name (the `type` in `data` is used when the name is
    /// empty or the default `message`) and its `data`.
    pub fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError> {
        if self.done {
            return Ok(Vec::new());
        }
        let peeked;
        let kind = if event.is_empty() || event == "message" {
            peeked = self.parse::<TypeOnly>(event, data)?.kind;
            peeked.as_str()
        } else {
            event
        };
        match kind {
            "message_start" => {
                let start: MessageStart = self.parse(kind, data)?;
                let message = start.message;
                if let Some(usage) = &message.usage {
                    self.add_usage(usage);
                }
                let mut events: Vec<StreamEvent> = self
                    .told
                    .tell(message.id.as_deref(), message.model.as_deref())
                    .into_iter()
                    .collect();
                events.push(StreamEvent::Usage { usage: self.usage });
                Ok(events)
            }
            "content_block_start" => {
                let start: BlockStart = self.parse(kind, data)?;
                self.start_block(start)
            }
            "content_block_delta" => {
                let delta: BlockDelta = self.parse(kind, data)?;
                self.delta(delta)
            }
            "content_block_stop" => {
                let stop: BlockStop = self.parse(kind, data)?;
                Ok(self.stop_block(stop.index))
            }
            "message_delta" => {
                let delta: MessageDelta = self.parse(kind, data)?;
                if let Some(reason) = delta.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                match delta.usage {
                    Some(usage) => {
                        self.add_usage(&usage);
                        Ok(vec![StreamEvent::Usage { usage: self.usage }])
                    }
                    None => Ok(Vec::new()),
                }
            }
            "message_stop" => Ok(self.stop_message()),
            "error" => {
                let error: ErrorEvent = self.parse(kind, data)?;
                self.done = true;
                Err(self.stream_error(error.error))
            }
            // `ping` and event types added after this client was written.
            _ => Ok(Vec::new()),
        }
    }

    /// Ends the stream: an error unless `message_stop` (or an `error` event) was seen.
    pub fn finish(self) -> Result<(), ModelError> {
        if self.done {
            Ok(())
        } else {
            Err(ModelError::StreamCut {
                provider: self.provider,
                message: "the stream ended before `message_stop`".to_owned(),
            })
        }
    }

    fn parse<T: DeserializeOwned>(&self, event: &str, data: &str) -> Result<T, ModelError> {
        serde_json::from_str(data).map_err(|e| ModelError::Protocol {
            provider: self.provider.clone(),
            message: format!(
                "malformed `{event}` event ({e}): {}",
                golem_protocol::text::fold(data, 200)
            ),
        })
    }

    fn protocol(&self, message: String) -> ModelError {
        ModelError::Protocol {
            provider: self.provider.clone(),
            message,
        }
    }

    fn add_usage(&mut self, usage: &WireUsage) {
        let raise = |total: &mut u64, value: Option<u64>| {
            if let Some(value) = value {
                *total = (*total).max(value);
            }
        };
        raise(&mut self.usage.input_tokens, usage.input_tokens);
        raise(
            &mut self.usage.cache_read_tokens,
            usage.cache_read_input_tokens,
        );
        raise(
            &mut self.usage.cache_write_tokens,
            usage.cache_creation_input_tokens,
        );
        // Output counts are cumulative: the latest one wins.
        if let Some(output) = usage.output_tokens {
            self.usage.output_tokens = output;
        }
    }

    fn block_mut(&mut self, index: usize) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, block)| block)
    }

    fn start_block(&mut self, start: BlockStart) -> Result<Vec<StreamEvent>, ModelError> {
        let index = start.index;
        if self.block_mut(index).is_some() {
            return Err(self.protocol(format!("content block {index} started twice")));
        }
        let block = start.content_block;
        let (stored, events) = match block.kind.as_str() {
            "text" if block.text.is_empty() => (Block::Text, Vec::new()),
            "text" => (
                Block::Text,
                vec![StreamEvent::TextDelta { text: block.text }],
            ),
            // A call without a name is passed on like any other: the orchestrator answers it
            // with a `NOT_FOUND` result and the run goes on.
            "tool_use" => {
                let initial = match block.input {
                    Some(Value::Object(map)) if !map.is_empty() => {
                        Some(Value::Object(map).to_string())
                    }
                    Some(_) | None => None,
                };
                let event = StreamEvent::ToolCallStart {
                    index,
                    id: block.id,
                    name: block.name,
                };
                (Block::ToolUse { initial }, vec![event])
            }
            _ => (Block::Other, Vec::new()),
        };
        self.blocks.push((index, stored));
        Ok(events)
    }

    fn delta(&mut self, delta: BlockDelta) -> Result<Vec<StreamEvent>, ModelError> {
        let index = delta.index;
        let Some(block) = self.block_mut(index) else {
            return Err(self.protocol(format!("delta for content block {index}, never started")));
        };
        let delta = delta.delta;
        match (delta.kind.as_str(), block) {
            ("text_delta", Block::Text) if !delta.text.is_empty() => {
                Ok(vec![StreamEvent::TextDelta { text: delta.text }])
            }
            ("input_json_delta", Block::ToolUse { initial }) => {
                // Streamed arguments replace whatever came with the start.
                *initial = None;
                if delta.partial_json.is_empty() {
                    Ok(Vec::new())
                } else {
                    Ok(vec![StreamEvent::ToolCallDelta {
                        index,
                        arguments: delta.partial_json,
                    }])
                }
            }
            // Empty text, thinking and signature deltas, deltas of ignored blocks.
            _ => Ok(Vec::new()),
        }
    }

    fn stop_block(&mut self, index: usize) -> Vec<StreamEvent> {
        let Some(position) = self.blocks.iter().rposition(|(i, _)| *i == index) else {
            return Vec::new();
        };
        let (_, block) = self.blocks.swap_remove(position);
        close(index, block)
    }

    fn stop_message(&mut self) -> Vec<StreamEvent> {
        self.done = true;
        let mut events = Vec::new();
        let mut called_tools = false;
        let mut open = std::mem::take(&mut self.blocks);
        open.sort_by_key(|(index, _)| *index);
        for (index, block) in open {
            called_tools |= matches!(block, Block::ToolUse { .. });
            events.extend(close(index, block));
        }
        let reason = match self.stop_reason.take() {
            Some(reason) => finish_reason(&reason),
            None if called_tools => FinishReason::ToolUse,
            None => FinishReason::EndTurn,
        };
        events.push(StreamEvent::Finish { reason });
        events
    }

    fn stream_error(&self, error: ErrorBody) -> ModelError {
        let provider = self.provider.clone();
        let message = if error.message.is_empty() {
            error.kind.clone()
        } else {
            error.message
        };
        match error.kind.as_str() {
            _ if ModelError::says_context_overflow(&message) => {
                ModelError::ContextOverflow { provider, message }
            }
            "overloaded_error" | "api_error" | "rate_limit_error" => ModelError::StreamError {
                provider,
                message: format!("{}: {message}", error.kind),
            },
            _ => ModelError::Protocol {
                provider,
                message: format!("error event `{}`: {message}", error.kind),
            },
        }
    }
}

/// The events that close a block that was still open.
fn close(index: usize, block: Block) -> Vec<StreamEvent> {
    match block {
        Block::ToolUse {
            initial: Some(arguments),
        } => {
            vec![
                StreamEvent::ToolCallDelta { index, arguments },
                StreamEvent::ToolCallEnd { index },
            ]
        }
        Block::ToolUse { initial: None } => vec![StreamEvent::ToolCallEnd { index }],
        Block::Text | Block::Other => Vec::new(),
    }
}

/// Maps the API's `stop_reason`.
fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" => FinishReason::EndTurn,
        "tool_use" => FinishReason::ToolUse,
        "max_tokens" => FinishReason::MaxTokens,
        "stop_sequence" => FinishReason::StopSequence,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// Runs `decoder` over `events`: the stream ends after `Finish` (without waiting for the
/// connection to close) or at the first error; ending early is a [`ModelError::StreamCut`].
pub(super) fn decode<S>(events: S, decoder: AnthropicStreamDecoder) -> EventStream
where
    S: Stream<Item = Result<Event, ModelError>> + Send + 'static,
{
    let state = (Box::pin(events), decoder, VecDeque::new());
    Box::pin(futures::stream::unfold(Some(state), |state| async move {
        let (mut events, mut decoder, mut pending) = state?;
        loop {
            if let Some(event) = pending.pop_front() {
                return Some((Ok(event), Some((events, decoder, pending))));
            }
            if decoder.is_done() {
                return None;
            }
            match events.next().await {
                Some(Ok(event)) => match decoder.feed(&event.event, &event.data) {
                    Ok(decoded) => pending.extend(decoded),
                    Err(error) => return Some((Err(error), None)),
                },
                Some(Err(error)) => return Some((Err(error), None)),
                None => return decoder.finish().err().map(|error| (Err(error), None)),
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::*;

    fn run(events: &[(&str, &str)]) -> Result<Vec<StreamEvent>, ModelError> {
        let mut decoder = AnthropicStreamDecoder::new("anthropic");
        let mut out = Vec::new();
        for (event, data) in events {
            out.extend(decoder.feed(event, data)?);
        }
        decoder.finish()?;
        Ok(out)
    }

    const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":25,"cache_read_input_tokens":5,"cache_creation_input_tokens":null,"output_tokens":1}}}"#;

    #[test]
    fn text_usage_and_finish() {
        let out = run(&[
            ("message_start", START),
            ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
            ("ping", r#"{"type": "ping"}"#),
            ("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#),
            ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#),
            ("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":9}}"#),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ])
        .unwrap();
        let usage = |input, output| TokenUsage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: 5,
            cache_write_tokens: 0,
        };
        assert_eq!(
            out,
            vec![
                StreamEvent::ResponseInfo {
                    id: Some("msg_1".into()),
                    model: Some("claude-x".into()),
                },
                StreamEvent::Usage {
                    usage: usage(25, 1)
                },
                StreamEvent::TextDelta { text: "Hi".into() },
                StreamEvent::Usage {
                    usage: usage(25, 9)
                },
                StreamEvent::Finish {
                    reason: FinishReason::MaxTokens
                },
            ]
        );
    }

    #[test]
    fn event_type_from_data_when_unnamed_and_unknown_events_ignored() {
        let out = run(&[
            ("message", START),
            ("", r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#),
            ("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#),
            ("brand_new_event", "not even json"),
            ("message", r#"{"type":"message_stop"}"#),
        ])
        .unwrap();
        assert_eq!(
            out.last(),
            Some(&StreamEvent::Finish {
                reason: FinishReason::EndTurn
            })
        );
        assert_eq!(out.len(), 3);
    }

    #[test]
    fn tool_input_sent_with_the_start_and_open_blocks_closed_at_stop() {
        let out = run(&[
            ("content_block_start", r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{"path":"/"}}}"#),
            ("message_stop", r#"{"type":"message_stop"}"#),
        ])
        .unwrap();
        assert_eq!(
            out,
            vec![
                StreamEvent::ToolCallStart {
                    index: 1,
                    id: "toolu_1".into(),
                    name: "ls".into()
                },
                StreamEvent::ToolCallDelta {
                    index: 1,
                    arguments: r#"{"path":"/"}"#.into()
                },
                StreamEvent::ToolCallEnd { index: 1 },
                StreamEvent::Finish {
                    reason: FinishReason::ToolUse
                },
            ]
        );
    }

    #[test]
    fn a_tool_call_without_a_name_is_passed_on_for_the_orchestrator_to_refuse() {
        for block in [
            r#"{"type":"tool_use","id":"toolu_1","name":"","input":{}}"#,
            r#"{"type":"tool_use","id":"toolu_1","input":{}}"#,
        ] {
            let start =
                format!(r#"{{"type":"content_block_start","index":0,"content_block":{block}}}"#);
            let out = run(&[
                ("content_block_start", &start),
                ("message_stop", r#"{"type":"message_stop"}"#),
            ])
            .unwrap();
            assert_eq!(
                out[0],
                StreamEvent::ToolCallStart {
                    index: 0,
                    id: "toolu_1".into(),
                    name: String::new()
                },
                "{block}"
            );
        }
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(finish_reason("end_turn"), FinishReason::EndTurn);
        assert_eq!(finish_reason("tool_use"), FinishReason::ToolUse);
        assert_eq!(finish_reason("stop_sequence"), FinishReason::StopSequence);
        assert_eq!(finish_reason("refusal"), FinishReason::ContentFilter);
        assert_eq!(
            finish_reason("pause_turn"),
            FinishReason::Other("pause_turn".into())
        );
    }

    #[test]
    fn faults() {
        let err = run(&[("message_start", START)]).unwrap_err();
        assert!(matches!(err, ModelError::StreamCut { .. }), "{err:?}");
        let err = run(&[("message_start", "{oops")]).unwrap_err();
        assert!(matches!(err, ModelError::Protocol { .. }), "{err:?}");
        let delta =
            r#"{"type":"content_block_delta","index":4,"delta":{"type":"text_delta","text":"x"}}"#;
        let err = run(&[("content_block_delta", delta)]).unwrap_err();
        assert!(err.to_string().contains("never started"), "{err}");
        let error = r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#;
        let err = run(&[("error", error)]).unwrap_err();
        assert!(matches!(err, ModelError::Protocol { .. }), "{err:?}");
        let error = r#"{"type":"error","error":{"type":"api_error","message":"Internal"}}"#;
        let err = run(&[("error", error)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "anthropic reported an error in the stream: api_error: Internal"
        );
        assert!(err.is_retryable_turn() && !err.is_retryable());
    }
}
