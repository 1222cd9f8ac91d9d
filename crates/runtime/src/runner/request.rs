//! The request of each turn, as it is sent (old tool results elided past `elide_at`, and
//! harder when a threshold compaction was skipped), the accounting of each model call, and
//! what to say when a request does not fit the window.

use golem_llm::context::estimate_request;
use golem_llm::{Message, ModelError, ModelRequest};
use golem_protocol::{ContextFill, DisplayEvent, StatusLevel, TokenUsage};

use super::WorkerRuntime;
use super::compact::CompactError;
use super::context_state::ContextState;
use super::elide::ELIDE_HEADROOM;
use crate::context_settings::Threshold;
use crate::tree::WorkerNode;

/// How an elision's status words it: after the fill, why (if not only the fill), and which
/// results it elided.
#[derive(Clone, Copy)]
struct Elided {
    why: &'static str,
    which: &'static str,
}

/// Past `elide_at` before a request.
const ELIDED: Elided = Elided {
    why: "",
    which: "old",
};

/// After a threshold compaction was skipped.
const ELIDED_HARDER: Elided = Elided {
    why: " and too little to compact",
    which: "more",
};

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
        let estimate = self.elide_down(&mut request, context, keep_turns, estimate, window, ELIDED);
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
        self.elide_down(request, context, 0, estimate, window, ELIDED_HARDER)
    }

    /// Elides `request`'s large results, outside its last `keep_turns` turns, down to the
    /// elision target (`elide_at` less the headroom) and says so as an `info` status worded by
    /// `said`. Returns the new estimate; nothing happens when elision is off.
    fn elide_down(
        &self,
        request: &mut ModelRequest,
        context: &mut ContextState,
        keep_turns: usize,
        estimate: u64,
        window: u64,
        said: Elided,
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
        if elided.results > 0 {
            let fill = ContextFill {
                used: estimate,
                window,
            };
            parts.ui.emit(DisplayEvent::Status {
                level: StatusLevel::Info,
                message: format!(
                    "context {} % full{}: elided {} {} tool result{} (about {} tokens)",
                    fill.percent(),
                    said.why,
                    elided.results,
                    said.which,
                    if elided.results == 1 { "" } else { "s" },
                    elided.tokens
                ),
            });
        }
        estimate.saturating_sub(elided.tokens)
    }

    /// Counts a model call's tokens `spent`: in the run's `usage`, against the budgets, to the
    /// observer, and as a `usage` event (with how full the context is after it, for a call of
    /// the conversation).
    pub(super) fn account(
        &self,
        usage: &mut TokenUsage,
        node: &WorkerNode,
        spent: &TokenUsage,
        context: Option<ContextFill>,
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
