//! One model turn: send the conversation, stream text to the UI as it arrives, and assemble the
//! response. A stream that breaks off (cut, idle, an error event) is retried from the start,
//! since nothing of it has been acted on yet, while the turn's one [`RetryBudget`] allows:
//! the HTTP retries of its requests spend from the same budget, and every retry is shown once,
//! as a `status` warning. The text an interrupted attempt streamed is kept for the caller
//! ([`model_turn_keeping`]), so that the answer as far as it came is not lost. What the request
//! was and took (its provider, models, finish, endpoint, duration, retries and their waits) is
//! returned with its result ([`Called`]), for the `usage` event's `call`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use golem_llm::retry::{RetryBudget, RetryNotice, RetryTally};
use golem_llm::{Model, ModelError, ModelRequest, ModelResponse, ResponseAssembler, StreamEvent};
use golem_protocol::{DisplayEvent, ModelCall, ModelCallPurpose, StatusLevel, WorkerOrigin};
use tokio_util::sync::CancellationToken;

use golem_core::ui::RuntimeUI;

/// Whether a turn's text is shown as it streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Echo {
    /// As `streaming` events: the model speaks to the user.
    Stream,
    /// Not at all: the text is for the runtime (a summary of the history).
    Quiet,
}

/// A model request as it went: its result, and what it was and took.
#[derive(Debug)]
pub(crate) struct Called {
    pub(crate) result: Result<ModelResponse, ModelError>,
    /// `error` is set when `result` is an error (an interrupt's too; the caller tells no
    /// interrupted request).
    pub(crate) call: ModelCall,
}

/// Runs one turn, streaming text deltas to `ui` as `streaming` events of one request id
/// (unless `echo` is quiet).
pub(crate) async fn model_turn(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
    echo: Echo,
) -> Result<ModelResponse, ModelError> {
    let purpose = ModelCallPurpose::Conversation;
    model_call(model, request, ui, worker, cancel, echo, purpose)
        .await
        .result
}

/// Like [`model_turn`], for `purpose`, with what the request was and took.
pub(crate) async fn model_call(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
    echo: Echo,
    purpose: ModelCallPurpose,
) -> Called {
    let ask = Ask {
        model,
        request,
        ui,
        worker,
        cancel,
        echo,
    };
    called(&ask, purpose, &mut String::new()).await
}

/// Like [`model_call`] for a step of the conversation, leaving in `partial` the text the last
/// attempt streamed before it ended: after an interrupt ([`ModelError::Cancelled`]), the
/// answer as far as it came.
pub(crate) async fn model_turn_keeping(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
    echo: Echo,
    partial: &mut String,
) -> Called {
    let ask = Ask {
        model,
        request,
        ui,
        worker,
        cancel,
        echo,
    };
    called(&ask, ModelCallPurpose::Conversation, partial).await
}

/// One request and where its answer goes.
struct Ask<'a> {
    model: &'a dyn Model,
    request: &'a ModelRequest,
    ui: &'a RuntimeUI,
    worker: Option<&'a WorkerOrigin>,
    cancel: &'a CancellationToken,
    echo: Echo,
}

/// The request's attempts under one retry budget, timed from the first to the end.
async fn called(ask: &Ask<'_>, purpose: ModelCallPurpose, partial: &mut String) -> Called {
    let started = Instant::now();
    let budget = turn_budget(ask.ui);
    let result = retried(&budget, ask, partial).await;
    let call = described(
        ask.model,
        purpose,
        started.elapsed(),
        budget.tally(),
        &result,
    );
    Called { result, call }
}

/// The retry budget of one turn, each retry shown as a `status` warning.
fn turn_budget(ui: &RuntimeUI) -> RetryBudget {
    let notify_ui = ui.clone();
    RetryBudget::new(None).with_notifier(Arc::new(move |notice: &RetryNotice| {
        notify_ui.emit(DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: notice.to_string(),
        });
    }))
}

/// The attempts of one turn, each in `budget`'s scope, retried while it allows.
async fn retried(
    budget: &RetryBudget,
    ask: &Ask<'_>,
    partial: &mut String,
) -> Result<ModelResponse, ModelError> {
    loop {
        let result = budget.scope(stream_once(ask, partial)).await;
        let error = match result {
            Err(error) if error.is_retryable_turn() && !ask.cancel.is_cancelled() => error,
            result => return result,
        };
        let Some(wait) = budget.next_retry(&error) else {
            return Err(error);
        };
        tokio::select! {
            () = ask.cancel.cancelled() => return Err(ModelError::Cancelled),
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// What a request was and took: `model`'s provider, name and endpoint, what its answer said of
/// itself, how long it took, and what its retries took.
fn described(
    model: &dyn Model,
    purpose: ModelCallPurpose,
    took: Duration,
    tally: RetryTally,
    result: &Result<ModelResponse, ModelError>,
) -> ModelCall {
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let spec = model.spec();
    let server = model.server();
    let (response, error) = match result {
        Ok(response) => (Some(response), None),
        Err(error) => (None, Some(error.to_string())),
    };
    ModelCall {
        provider: spec.provider.clone(),
        request_model: spec.model.clone(),
        response_model: response.and_then(|r| r.response_model.clone()),
        response_id: response.and_then(|r| r.response_id.clone()),
        finish_reasons: response
            .and_then(|r| r.finish_reason.as_ref())
            .map(|reason| vec![reason.gen_ai_name().to_owned()])
            .unwrap_or_default(),
        server_address: server.as_ref().map(|s| s.host.clone()),
        server_port: server.and_then(|s| s.port),
        duration_ms: millis(took),
        retries: tally.retries,
        retry_wait_ms: millis(tally.waited),
        rate_limit_wait_ms: millis(tally.rate_limit_waited),
        purpose,
        error,
    }
}

async fn stream_once(ask: &Ask<'_>, partial: &mut String) -> Result<ModelResponse, ModelError> {
    let Ask {
        model,
        request,
        ui,
        worker,
        cancel,
        echo,
    } = *ask;
    // An attempt starts the answer afresh, under a request id of its own.
    partial.clear();
    let stream_id = ui.bus().next_request_id("stream");
    let stream_id = stream_id.as_str();
    let mut stream = model.stream(request, cancel.clone()).await?;
    let mut assembler = ResponseAssembler::new();
    let mut streamed_text = false;
    let emit_delta = |delta: String, done: bool| {
        ui.emit(DisplayEvent::Streaming {
            request_id: stream_id.to_owned(),
            delta,
            done,
            worker: worker.cloned(),
        });
    };
    let result = loop {
        let next = tokio::select! {
            () = cancel.cancelled() => break Err(ModelError::Cancelled),
            next = stream.next() => next,
        };
        match next {
            None => break Ok(()),
            Some(Err(error)) => break Err(error),
            Some(Ok(event)) => {
                if let StreamEvent::TextDelta { text } = &event {
                    partial.push_str(text);
                }
                match &event {
                    StreamEvent::TextDelta { text } if !text.is_empty() && echo == Echo::Stream => {
                        streamed_text = true;
                        emit_delta(text.clone(), false);
                    }
                    StreamEvent::TextDelta { .. }
                    | StreamEvent::ToolCallStart { .. }
                    | StreamEvent::ToolCallDelta { .. }
                    | StreamEvent::ToolCallEnd { .. }
                    | StreamEvent::Usage { .. }
                    | StreamEvent::ResponseInfo { .. }
                    | StreamEvent::Finish { .. } => {}
                }
                assembler.push(&event);
            }
        }
    };
    if streamed_text {
        emit_delta(String::new(), true);
    }
    result.map(|()| assembler.finish())
}
