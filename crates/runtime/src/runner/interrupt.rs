//! After an interrupt or a budget that ran out: the run stops, and the root worker asks its
//! model once, without tools and for a bounded time, to summarise what was done. An
//! interrupt is in the root's conversation (and so in the transcript): the answer as far as it
//! streamed, then a note saying the user interrupted, or the request for the summary.

use std::time::Duration;

use golem_llm::{Message, ModelError, ModelRequest};
use golem_protocol::{DisplayEvent, StatusLevel, TokenUsage};
use tokio_util::sync::CancellationToken;

use super::context_state::ContextState;
use super::turn::{self, Echo};
use super::{RunOutcome, RunStatus, WorkerRuntime, budget_exceeded};
use crate::tree::WorkerNode;

/// The note appended when asking the model to summarise after an interrupt.
const INTERRUPT_NOTE: &str = "[The user interrupted this run. Do not call tools. In a few \
sentences, summarise what was done so far and what remains.]";

/// What the model is told after the partial answer it was giving when the user interrupted
/// (the next request has it, so the model knows the answer was cut off there).
pub const INTERRUPTED_ANSWER_NOTE: &str = "[The user interrupted your answer here.]";

/// What the model is told when the user interrupted a turn before any answer or tool work.
pub const INTERRUPTED_TURN_NOTE: &str = "[The user interrupted this turn before you answered.]";

/// The response of a run interrupted without a summary (what `sessions show` and the MCP
/// server recognise as "no answer").
pub const INTERRUPTED_RESPONSE: &str = "[Interrupted]";

/// The status shown while the summary after an interrupt is asked for.
pub const SUMMARISING: &str = "summarising… (Ctrl+C again to stop)";

/// How long the summary asked for after an interrupt may take before the run ends without one.
pub const SUMMARY_TIMEOUT: Duration = Duration::from_secs(10);

impl WorkerRuntime {
    /// After the run's stop token fired: a budget that ran out ends the run as
    /// [`RunStatus::BudgetExceeded`], an interrupt as [`WorkerRuntime::interrupted`] says.
    pub(super) async fn stopped(
        &self,
        messages: &mut Vec<Message>,
        context: &ContextState,
        usage: TokenUsage,
        turns: u32,
        tools_ran: bool,
        node: &WorkerNode,
    ) -> RunOutcome {
        match node.exceeded() {
            Some(exceeded) => budget_exceeded(exceeded, usage, turns),
            None => {
                self.interrupted(messages, context, usage, turns, tools_ran)
                    .await
            }
        }
    }

    /// After an interrupt. A sub-worker just stops: the interrupt belongs to the root, which
    /// summarises for everyone. The root clears the interrupt; if no tool call has got past the
    /// gate since the user's input there is nothing to summarise and the run ends at once.
    /// Otherwise it tells the front ends ([`SUMMARISING`]) and asks the model once, without
    /// tools, to summarise, for at most the summary timeout; a second interrupt stops that at
    /// once. The run ends as interrupted either way, with `[Interrupted]` when no summary came.
    pub(super) async fn interrupted(
        &self,
        messages: &mut Vec<Message>,
        context: &ContextState,
        mut usage: TokenUsage,
        turns: u32,
        tools_ran: bool,
    ) -> RunOutcome {
        let parts = &self.parts;
        let stopped = |usage| RunOutcome {
            status: RunStatus::Interrupted,
            response: INTERRUPTED_RESPONSE.to_owned(),
            usage,
            turns,
            output: None,
        };
        if parts.depth > 0 {
            return stopped(usage);
        }
        parts.interrupt.reset();
        if !tools_ran {
            // The conversation says where the turn stopped, so the next request does not read
            // as if the input was never answered.
            let note = match messages.last() {
                Some(Message::Assistant { tool_calls, .. }) if tool_calls.is_empty() => {
                    INTERRUPTED_ANSWER_NOTE
                }
                Some(_) | None => INTERRUPTED_TURN_NOTE,
            };
            self.record(messages, Message::user(note));
            return stopped(usage);
        }
        self.record(messages, Message::user(INTERRUPT_NOTE));
        let request = ModelRequest::new(
            &parts.instructions,
            context.elision.sent(messages),
            Vec::new(),
        )
        .with_cache_key(self.cache_key.clone());
        let cancel = parts.interrupt.token();
        parts.ui.emit(DisplayEvent::Status {
            level: StatusLevel::Info,
            message: SUMMARISING.to_owned(),
        });
        let origin = self.origin();
        let summary = turn::model_turn(
            parts.model.as_ref(),
            &request,
            &parts.ui,
            origin.as_ref(),
            &cancel,
            Echo::Stream,
        );
        let summary = bounded(summary, &cancel, self.summary_timeout).await;
        match summary {
            Ok(response) if response.tool_calls.is_empty() && !response.text.trim().is_empty() => {
                usage.add(&response.usage);
                self.record(messages, Message::assistant(response.text.clone()));
                RunOutcome {
                    status: RunStatus::Interrupted,
                    response: response.text,
                    usage,
                    turns,
                    output: None,
                }
            }
            Ok(_) | Err(_) => {
                parts.interrupt.reset();
                stopped(usage)
            }
        }
    }
}

impl WorkerRuntime {
    /// After a model turn of the root worker was cancelled by an interrupt (not a budget):
    /// keeps the answer as far as it streamed, `partial`, as the model's message (its tool
    /// calls, never complete, are dropped), so that the conversation and the transcript hold
    /// it. Nothing when nothing but blanks came.
    pub(super) fn keep_partial(
        &self,
        messages: &mut Vec<Message>,
        partial: &str,
        node: &WorkerNode,
    ) {
        if self.parts.depth > 0 || node.exceeded().is_some() || partial.trim().is_empty() {
            return;
        }
        // Cut off mid-answer: what trails is not part of it (and Anthropic refuses an
        // assistant message that ends in blanks).
        self.record(messages, Message::assistant(partial.trim_end()));
    }
}

/// How long a turn cancelled at its bound may take to wind down (close its stream, end its
/// text) before it is dropped.
const WIND_DOWN: Duration = Duration::from_secs(1);

/// Runs `turn` for at most `timeout`. At the bound `cancel` (the turn's token) is cancelled so
/// the turn ends as if interrupted; a turn that does not end soon after is dropped.
async fn bounded<T>(
    turn: impl Future<Output = Result<T, ModelError>>,
    cancel: &CancellationToken,
    timeout: Duration,
) -> Result<T, ModelError> {
    let mut turn = std::pin::pin!(turn);
    tokio::select! {
        result = &mut turn => result,
        () = tokio::time::sleep(timeout) => {
            tracing::warn!(?timeout, "no summary after the interrupt within the bound");
            cancel.cancel();
            tokio::time::timeout(WIND_DOWN, turn)
                .await
                .unwrap_or(Err(ModelError::Cancelled))
        }
    }
}
