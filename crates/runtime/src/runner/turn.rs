//! One model turn: send the conversation, stream text to the UI as it arrives, and assemble the
//! response. A stream that breaks off (cut, idle) is retried from the start a few times, since
//! nothing of it has been acted on yet.

use futures::StreamExt;
use golem_llm::{Model, ModelError, ModelRequest, ModelResponse, ResponseAssembler, StreamEvent};
use golem_protocol::{DisplayEvent, WorkerOrigin};
use tokio_util::sync::CancellationToken;

use golem_core::ui::RuntimeUI;

/// How often a broken stream is retried before the turn fails.
const STREAM_RETRIES: u32 = 2;

/// Runs one turn, streaming text deltas to `ui` as `streaming` events of one request id.
pub(crate) async fn model_turn(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
) -> Result<ModelResponse, ModelError> {
    let mut attempt = 0;
    loop {
        let stream_id = ui.bus().next_request_id("stream");
        match stream_once(model, request, ui, worker, cancel, &stream_id).await {
            Err(error)
                if error.is_retryable_turn()
                    && attempt < STREAM_RETRIES
                    && !cancel.is_cancelled() =>
            {
                attempt += 1;
                tracing::warn!(%error, attempt, "model stream broke off; retrying the turn");
                ui.emit(DisplayEvent::Status {
                    level: golem_protocol::StatusLevel::Warning,
                    message: format!("{error}; retrying ({attempt}/{STREAM_RETRIES})"),
                });
            }
            result => return result,
        }
    }
}

async fn stream_once(
    model: &dyn Model,
    request: &ModelRequest,
    ui: &RuntimeUI,
    worker: Option<&WorkerOrigin>,
    cancel: &CancellationToken,
    stream_id: &str,
) -> Result<ModelResponse, ModelError> {
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
                match &event {
                    StreamEvent::TextDelta { text } if !text.is_empty() => {
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
