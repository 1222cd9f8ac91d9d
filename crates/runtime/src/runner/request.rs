//! The request of each turn, as it is sent (old tool results elided past `elide_at`, and
//! harder when a threshold compaction was skipped), the accounting of each model call (a
//! failed one told too, counting nothing), and what to say when a request does not fit the
//! window.

use golem_llm::context::estimate_request;
use golem_llm::{Message, ModelError, ModelRequest, ModelResponse};
use golem_protocol::{ContextFill, DisplayEvent, ModelCall, TokenUsage};

use super::WorkerRuntime;
use super::compact::CompactError;
use super::context_state::ContextState;
use super::elide::ELIDE_HEADROOM;
use super::turn::Called;
use crate::context_settings::Threshold;
use crate::tree::WorkerNode;

impl WorkerRuntime {
    /// The next request: the conversation as it is sent, with the old tool results elided so
    /// far, and more of them elided (oldest first) when its estimate passes `elide_at`; and
    /// its estimated tokens.
    pub(super) fn request(
        &self,
        messages: &[Message],
        context: &mut ContextState,
        tools: Vec<golem_protocol::ToolDefinition>,
        window: u64,
    ) -> (ModelRequest, u64) {
        let parts = &self.parts;
        let mut request =
            ModelRequest::new(&parts.instructions, context.elision.sent(messages), tools)
                .with_cache_key(self.cache_key.clone())
                .with_output(self.output.as_ref().map(|o| o.format().clone()));
        let estimate = context.meter.estimate(&request);
        tracing::debug!(estimate, window, "context of the next request");
        let Some(threshold) = parts.context.elide_at.tokens(window) else {
            return (request, estimate);
        };
        if estimate <= threshold {
            return (request, estimate);
        }
        let keep_turns = parts.context.keep_turns as usize;
        let estimate = self.elide_down(&mut request, context, keep_turns, estimate, window, false);
        (request, estimate)
    }

    /// After a threshold compaction was skipped (nothing before the last turns, or too little
    /// to be worth a summary call), elides `request`'s large results oldest first, the last
    /// turns' included, until its `estimate` is under the elision target; the newest result
    /// stays whole. Nothing when elision is off (`elide_at: never`). Returns the new estimate.
    pub(super) fn elide_harder(
        &self,
        request: &mut ModelRequest,
        context: &mut ContextState,
        estimate: u64,
        window: u64,
    ) -> u64 {
        self.elide_down(request, context, 0, estimate, window, true)
    }

    /// Elides `request`'s large results, outside its last `keep_turns` turns, down to the
    /// elision target (`elide_at` less the headroom) and says so as a `contextElided` event
    /// (`harder`: after a skipped compaction). Returns the new estimate; nothing happens when
    /// elision is off.
    fn elide_down(
        &self,
        request: &mut ModelRequest,
        context: &mut ContextState,
        keep_turns: usize,
        estimate: u64,
        window: u64,
        harder: bool,
    ) -> u64 {
        let parts = &self.parts;
        let Some(threshold) = parts.context.elide_at.tokens(window) else {
            return estimate;
        };
        let headroom = (window as f64 * ELIDE_HEADROOM) as u64;
        let elided = context.elision.extend(
            &mut request.messages,
            keep_turns,
            estimate,
            threshold.saturating_sub(headroom),
        );
        let after = estimate.saturating_sub(elided.tokens);
        if elided.results > 0 {
            parts.ui.emit(DisplayEvent::ContextElided {
                tokens_before: estimate,
                tokens_after: after,
                window,
                results: elided.results as u64,
                harder,
                worker: self.origin(),
            });
        }
        after
    }

    /// The response of a request and what it was, or its error; a request that failed
    /// (not one interrupted or stopped by a budget) is told at once as a `usage` event with
    /// `call.error`, nothing counted and no cost or context, the run's `usage` unchanged.
    pub(super) fn settled(
        &self,
        called: Called,
        usage: &TokenUsage,
        node: &WorkerNode,
    ) -> Result<(ModelResponse, ModelCall), ModelError> {
        let Called { result, call } = called;
        match result {
            Ok(response) => Ok((response, call)),
            Err(ModelError::Cancelled) => Err(ModelError::Cancelled),
            Err(error) => {
                self.parts.ui.emit(DisplayEvent::Usage {
                    usage: TokenUsage::default(),
                    total: *usage,
                    model: Some(self.parts.model.spec().to_string()),
                    cost: None,
                    budget: node.remaining(),
                    context: None,
                    worker: self.origin(),
                    call: Some(call),
                });
                Err(error)
            }
        }
    }

    /// Counts a model call's tokens `spent`: in the run's `usage`, against the budgets, to the
    /// observer, and as a `usage` event with what the request was (`call`) and, for a call of
    /// the conversation, how full the context is after it.
    pub(super) fn account(
        &self,
        usage: &mut TokenUsage,
        node: &WorkerNode,
        spent: &TokenUsage,
        context: Option<ContextFill>,
        call: ModelCall,
    ) {
        let parts = &self.parts;
        usage.add(spent);
        let cost = parts.model.price().map(|price| price.cost(spent));
        node.charge(spent, cost);
        if let Some(observer) = &parts.observer {
            observer.usage(spent, cost);
        }
        parts.ui.emit(DisplayEvent::Usage {
            usage: *spent,
            total: *usage,
            model: Some(parts.model.spec().to_string()),
            cost,
            budget: node.remaining(),
            context,
            worker: self.origin(),
            call: Some(call),
        });
        node.report_spending();
    }

    /// What to tell the user when the provider said the request does not fit its window
    /// (and compacting, if it was tried, did not help).
    pub(super) fn overflowed(
        &self,
        error: &ModelError,
        request: &ModelRequest,
        window: u64,
        compaction: Option<&CompactError>,
    ) -> String {
        let compacting = match (self.parts.context.compact_at, compaction) {
            (Threshold::Never, _) => " (compacting is off: `context.compact_at: never`)".to_owned(),
            (Threshold::Permille(_), Some(failed)) => {
                format!(" (compacting did not help: {failed})")
            }
            (Threshold::Permille(_), None) => " (even after compacting it)".to_owned(),
        };
        format!(
            "{error}. {}'s conversation (about {} tokens) no longer fits the context window of \
             {} ({window} tokens as golem-forge knows it){compacting}: start a new session \
             (/new in the chat), correct the window under `context_windows:` in \
             golem-forge.config.yaml, or lower `context.elide_at`, `context.compact_at` or \
             `context.keep_turns` so that the context is managed sooner",
            self.parts.worker_name,
            estimate_request(request),
            self.parts.model.spec(),
        )
    }
}
