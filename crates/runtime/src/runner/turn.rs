//! One model turn: send the conversation, stream text to the UI as it arrives, and assemble the
//! response. A stream that breaks off (cut, idle, an error event) is retried from the start,
//! since nothing of it has been acted on yet, while the turn's one [`RetryBudget`] allows:
//! the HTTP retries of its requests spend from the same budget, and every retry is shown once,
//! as a `status` warning. The text an interrupted attempt streamed is kept for the caller
//! ([`model_turn_keeping`]), so that the answer as far as it came is not lost.

use std::sync::Arc;

use futures::StreamExt;
use golem_llm::retry::{RetryBudget, RetryNotice};
use golem_llm::{Model, ModelError, ModelRequest, ModelResponse, ResponseAssembler, StreamEvent};
use golem_protocol::{DisplayEvent, StatusLevel, WorkerOrigin};
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
    let mut partial = String::new();
    model_turn_keeping(model, request, ui, worker, cancel, echo, &mut partial).await
}

/// Like [`model_turn`], leaving in `partial` the text the last attempt streamed before it
/// ended: after an interrupt ([`ModelError::Cancelled`]), the answer as far as it came.
pub(crate) async fn model_turn_keeping(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
    echo: Echo,
    partial: &mut String,
) -> Result<ModelResponse, ModelError> {
    let notify_ui = ui.clone();
    let budget = RetryBudget::new(None).with_notifier(Arc::new(move |notice: &RetryNotice| {
        notify_ui.emit(DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: notice.to_string(),
        });
    }));
    loop {
        let result = budget
            .scope(stream_once(
                model, request, ui, worker, cancel, echo, partial,
            ))
            .await;
        let error = match result {
            Err(error) if error.is_retryable_turn() && !cancel.is_cancelled() => error,
            result => return result,
        };
        let Some(wait) = budget.next_retry(&error) else {
            return Err(error);
        };
        tokio::select! {
            () = cancel.cancelled() => return Err(ModelError::Cancelled),
            () = tokio::time::sleep(wait) => {}
        }
    }
}

async fn stream_once(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
    echo: Echo,
    partial: &mut String,
) -> Result<ModelResponse, ModelError> {
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
