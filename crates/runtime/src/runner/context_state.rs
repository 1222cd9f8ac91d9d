//! How full a worker's context is: the tokens its last request held, as the provider counted
//! them (cache reads and writes included), and an estimate of the next request before it is
//! sent: that count plus an estimate of what was added since.

use golem_llm::context::{estimate_message, estimate_messages, estimate_request, used_by};
use golem_llm::{Message, ModelRequest, ModelResponse};
use golem_protocol::ContextFill;

use super::elide::Elision;

/// A worker's context between its requests: how full it is, and which old tool results are
/// elided from what is sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ContextState {
    /// How full it is.
    pub(crate) meter: ContextMeter,
    /// What is elided.
    pub(crate) elision: Elision,
}

/// What the last measured call held.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Measured {
    /// Tokens in the context after the call (prompt and answer).
    used: u64,
    /// Messages of that call's request; the next request repeats them, then the answer.
    messages: usize,
}

/// Tracks a worker's context across its model calls.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ContextMeter {
    last: Option<Measured>,
}

impl ContextMeter {
    /// Records a call: `request` got `response`. The provider's count is used when it sent
    /// one, else the estimate of both.
    pub(crate) fn measured(&mut self, request: &ModelRequest, response: &ModelResponse) -> u64 {
        let counted = used_by(&response.usage);
        let used = if counted > 0 {
            counted
        } else {
            estimate_request(request) + answer_estimate(response)
        };
        self.last = Some(Measured {
            used,
            messages: request.messages.len(),
        });
        used
    }

    /// The tokens `request` will take, estimated before it is sent: the last call's count and
    /// the messages added after its answer, or the whole request's estimate when there is no
    /// such count (or the conversation was changed since).
    pub(crate) fn estimate(&self, request: &ModelRequest) -> u64 {
        match self.last {
            Some(last) if last.messages < request.messages.len() => {
                last.used + estimate_messages(&request.messages[last.messages + 1..])
            }
            Some(_) | None => estimate_request(request),
        }
    }

    /// The fill after the last call, against `window`.
    pub(crate) fn fill(&self, window: u64) -> Option<ContextFill> {
        self.last.map(|last| ContextFill {
            used: last.used,
            window,
        })
    }
}

/// The tokens of an answer, estimated.
fn answer_estimate(response: &ModelResponse) -> u64 {
    estimate_message(&Message::Assistant {
        text: response.text.clone(),
        tool_calls: response.tool_calls.clone(),
    })
}

#[cfg(test)]
mod tests {
    use golem_llm::{FinishReason, ToolResultMessage};
    use golem_protocol::TokenUsage;

    use super::*;

    fn response(input: u64, read: u64, output: u64) -> ModelResponse {
        ModelResponse {
            text: "ok".into(),
            tool_calls: Vec::new(),
            usage: TokenUsage {
                input_tokens: input,
                output_tokens: output,
                cache_read_tokens: read,
                cache_write_tokens: 0,
            },
            finish_reason: Some(FinishReason::EndTurn),
            ..ModelResponse::default()
        }
    }

    fn result(bytes: usize) -> Message {
        Message::Tool {
            results: vec![ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "read_file".into(),
                content: "x".repeat(bytes),
                is_error: false,
            }],
        }
    }

    #[test]
    fn the_next_request_is_the_last_count_plus_what_was_added() {
        let mut meter = ContextMeter::default();
        let first = ModelRequest::new("system", vec![Message::user("hi")], Vec::new());
        assert_eq!(meter.estimate(&first), estimate_request(&first));
        assert_eq!(meter.measured(&first, &response(100, 900, 50)), 1050);
        assert_eq!(
            meter.fill(2000),
            Some(ContextFill {
                used: 1050,
                window: 2000
            })
        );
        let next = ModelRequest::new(
            "system",
            vec![Message::user("hi"), Message::assistant("ok"), result(4000)],
            Vec::new(),
        );
        // The answer is counted already (output tokens); the tool result is estimated.
        assert_eq!(
            meter.estimate(&next),
            1050 + estimate_message(&result(4000))
        );
        let fresh = ContextMeter::default();
        assert_eq!(fresh.estimate(&next), estimate_request(&next));
        assert_eq!(fresh.fill(2000), None);
    }

    #[test]
    fn without_a_count_from_the_provider_the_call_is_estimated() {
        let mut meter = ContextMeter::default();
        let request = ModelRequest::new("system", vec![Message::user("hi")], Vec::new());
        let used = meter.measured(&request, &response(0, 0, 0));
        assert!(used > estimate_request(&request), "{used}");
    }
}
