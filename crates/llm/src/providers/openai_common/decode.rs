//! Turning one provider's decoded SSE events into an [`EventStream`], and the helpers the
//! OpenAI decoders share: reading an `error` object found in a stream, unreadable data, loose
//! JSON text values, and temperatures.

use std::collections::VecDeque;
use std::pin::Pin;

use eventsource_stream::Event;
use futures::{Stream, StreamExt};
use serde_json::Value;

use crate::error::ModelError;
use crate::event::StreamEvent;
use crate::model::EventStream;

/// A decoder of one provider's SSE events (implemented by the public decoder structs).
pub(crate) trait SseDecoder: Send + 'static {
    /// Decodes one SSE event.
    fn feed(&mut self, event: &str, data: &str) -> Result<Vec<StreamEvent>, ModelError>;
    /// The body ended: the closing events, or why the stream is incomplete.
    fn finish(self) -> Result<Vec<StreamEvent>, ModelError>;
    /// Whether the response is complete (no more events are needed).
    fn is_done(&self) -> bool;
}

type SseStream = Pin<Box<dyn Stream<Item = Result<Event, ModelError>> + Send>>;

struct DecodeState<D> {
    events: Option<SseStream>,
    decoder: Option<D>,
    pending: VecDeque<StreamEvent>,
}

impl<D: SseDecoder> DecodeState<D> {
    /// The body ended (or broke with `cut`): the decoder's closing events, or an error.
    fn close(&mut self, cut: Option<ModelError>) -> Option<ModelError> {
        self.events = None;
        let decoder = self.decoder.take()?;
        match decoder.finish() {
            Ok(events) => {
                self.pending.extend(events);
                None
            }
            Err(error) => Some(cut.unwrap_or(error)),
        }
    }
}

/// Turns SSE events into model events with `decoder`. The stream ends after the decoder's
/// `Finish` or at the first error. A connection broken after the response was complete in all
/// but its closing marker counts as finished.
pub(crate) fn decode_events<D: SseDecoder>(
    events: impl Stream<Item = Result<Event, ModelError>> + Send + 'static,
    decoder: D,
) -> EventStream {
    let state = DecodeState {
        events: Some(Box::pin(events)),
        decoder: Some(decoder),
        pending: VecDeque::new(),
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((Ok(event), state));
            }
            let events = state.events.as_mut()?;
            let next = events.next().await;
            let decoder = state.decoder.as_mut()?;
            match next {
                Some(Ok(event)) => match decoder.feed(&event.event, &event.data) {
                    Ok(decoded) => {
                        state.pending.extend(decoded);
                        if decoder.is_done() {
                            state.events = None;
                            state.decoder = None;
                        }
                    }
                    Err(error) => {
                        state.events = None;
                        state.decoder = None;
                        return Some((Err(error), state));
                    }
                },
                Some(Err(cut @ ModelError::StreamCut { .. })) => {
                    if let Some(error) = state.close(Some(cut)) {
                        return Some((Err(error), state));
                    }
                }
                Some(Err(error)) => {
                    state.events = None;
                    state.decoder = None;
                    return Some((Err(error), state));
                }
                None => {
                    if let Some(error) = state.close(None) {
                        return Some((Err(error), state));
                    }
                }
            }
        }
    }))
}

/// The [`ModelError`] for an `error` object in a stream: [`ModelError::StreamError`] when it
/// says the provider is overloaded, rate limited or failing, else [`ModelError::Protocol`].
pub(crate) fn stream_error(provider: &str, error: &Value) -> ModelError {
    let text = |key: &str| {
        error.get(key).and_then(|v| match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Null
            | Value::Bool(_)
            | Value::String(_)
            | Value::Array(_)
            | Value::Object(_) => None,
        })
    };
    let message = match (error.as_str(), text("message")) {
        (Some(s), _) => s.to_owned(),
        (None, Some(m)) => m,
        (None, None) => error.to_string(),
    };
    let kind = text("code").or_else(|| text("type"));
    let message = match kind {
        Some(kind) if !message.contains(&kind) => format!("{kind}: {message}"),
        Some(_) | None => message,
    };
    let message = golem_protocol::text::fold(&message, 500);
    let code = error
        .get("code")
        .and_then(Value::as_u64)
        .is_some_and(|c| c == 429 || c == 529 || (500..600).contains(&c));
    let haystack = error.to_string().to_lowercase();
    if ModelError::says_context_overflow(&haystack) {
        return ModelError::ContextOverflow {
            provider: provider.to_owned(),
            message,
        };
    }
    let transient = code
        || [
            "overload",
            "rate_limit",
            "rate limit",
            "ratelimit",
            "too many requests",
            "too_many_requests",
            "server",
            "unavailable",
            "internal error",
            "internal_error",
        ]
        .iter()
        .any(|needle| haystack.contains(needle));
    let provider = provider.to_owned();
    if transient {
        ModelError::StreamError { provider, message }
    } else {
        ModelError::Protocol {
            provider,
            message: format!("the stream reported an error: {message}"),
        }
    }
}

/// The [`ModelError::Protocol`] for unreadable stream data.
pub(crate) fn unreadable(
    provider: &str,
    what: &str,
    error: &serde_json::Error,
    data: &str,
) -> ModelError {
    ModelError::Protocol {
        provider: provider.to_owned(),
        message: format!(
            "cannot read {what} ({error}): {}",
            golem_protocol::text::fold(data, 200)
        ),
    }
}

/// A JSON value as text: strings as they are, other values as JSON, null as nothing.
pub(crate) fn value_text(value: Option<Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(other @ (Value::Bool(_) | Value::Number(_) | Value::Array(_) | Value::Object(_))) => {
            other.to_string()
        }
    }
}

/// A temperature as JSON without f32 noise (`0.2`, not `0.20000000298023224`).
pub(crate) fn temperature_value(temperature: f32) -> Value {
    temperature
        .to_string()
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temperatures_without_float_noise() {
        assert_eq!(temperature_value(0.2).to_string(), "0.2");
        assert_eq!(temperature_value(1.0).to_string(), "1.0");
    }

    #[test]
    fn stream_errors_are_classified() {
        let e = stream_error(
            "openai",
            &serde_json::json!({"message": "Rate limit reached", "type": "requests"}),
        );
        assert_eq!(
            e.to_string(),
            "openai reported an error in the stream: requests: Rate limit reached"
        );
        let e = stream_error(
            "openrouter",
            &serde_json::json!({"code": 502, "message": "Provider returned error"}),
        );
        assert!(
            matches!(e, ModelError::StreamError { .. }) && e.is_retryable_turn(),
            "{e:?}"
        );
        let e = stream_error(
            "openai",
            &serde_json::json!({"code": "invalid_prompt", "message": "bad"}),
        );
        assert_eq!(
            e.to_string(),
            "unexpected data from openai: the stream reported an error: invalid_prompt: bad"
        );
    }
}
