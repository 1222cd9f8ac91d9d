//! The agent loop (`WorkerRuntime`): model turn → tool calls through the one orchestrator →
//! results back to the model → again, until a final answer, `max_iterations`, an error or an
//! interrupt. Root workers in chat mode keep their conversation between runs; every other run
//! starts fresh.

mod compact;
mod context_state;
mod elide;
mod interrupt;
mod manual;
mod request;
mod turn;

pub use self::compact::{CompactError, CompactHistoryError};
pub use self::interrupt::{
    INTERRUPTED_ANSWER_NOTE, INTERRUPTED_RESPONSE, INTERRUPTED_TURN_NOTE, SUMMARISING,
    SUMMARY_TIMEOUT,
};

use std::sync::Arc;
use std::time::Duration;

use golem_core::interrupt::InterruptSignal;
use golem_core::orchestrator::{CallOutcome, ToolCallOrchestrator};
use golem_core::ui::RuntimeUI;
use golem_llm::context::{estimate_request, window_of};
use golem_llm::{FINAL_RESULT_TOOL, Message, Model, ModelError, ModelToolCall, ToolResultMessage};
use golem_protocol::{
    CompactionReason, ContextFill, DisplayEvent, StatusLevel, TokenUsage, ToolStatus, WorkerOrigin,
};

use self::compact::CompactRequest;
use self::context_state::ContextState;
use self::turn::Echo;
use crate::budget::BudgetExceeded;
use crate::context_settings::{ContextPolicy, Threshold};
use crate::output::{AnswerProblem, OutputSchema};
use crate::tree::{NodeStart, RunningWorker, TreeSlot, WorkerNode};
use golem_session::PendingCalls;

/// Receives what a run does, for transcripts: the root worker's input and conversation (what a
/// resume continues), and the tool calls of every worker.
pub trait RunObserver: Send + Sync {
    /// The user's input for a root run.
    fn input(&self, content: &str);
    /// A message added to the root worker's conversation.
    fn message(&self, message: &Message);
    /// A tool call of any worker ended.
    fn tool_call(&self, outcome: &CallOutcome);
    /// A model call of any worker used these tokens, at this cost in US dollars when the
    /// model's price is known (emitted as `usage` too).
    fn usage(&self, _usage: &TokenUsage, _cost: Option<f64>) {}
    /// The root worker's conversation was compacted: it is now `summary` followed by its last
    /// `kept` messages.
    fn compacted(&self, _summary: &Message, _kept: usize, _reason: CompactionReason) {}
    /// How full the root worker's context is after a model call.
    fn context(&self, _fill: ContextFill) {}
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    /// The model gave a final answer.
    Completed,
    /// The run failed (model error, max iterations).
    Failed(String),
    /// The user interrupted; the response is the model's summary of partial progress, if it
    /// could give one.
    Interrupted,
    /// A budget ran out: this worker's, or a caller's (which then stops too).
    BudgetExceeded(BudgetExceeded),
    /// Calls wait in the approval inbox (approval mode `defer`), under these numbers; the turn
    /// goes on with [`WorkerRuntime::continue_turn`] once they are answered.
    WaitingApproval(Vec<u64>),
}

/// The result of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// The final answer (or the summary after an interrupt; empty after a failure).
    pub response: String,
    /// Tokens used by this run.
    pub usage: TokenUsage,
    /// Model turns taken.
    pub turns: u32,
    /// The structured answer of a worker with `output:`: the value of `response`, valid
    /// against its schema (`None` for free-text workers and runs that did not complete).
    pub output: Option<serde_json::Value>,
}

/// What a worker runtime is made of.
#[allow(missing_docs)] // fields are named for what they hold
pub struct RuntimeParts {
    /// The worker's name.
    pub worker_name: String,
    /// The system instructions.
    pub instructions: String,
    /// Whether conversation history is kept between runs (root workers in chat mode).
    pub keeps_history: bool,
    /// Depth in the delegation tree (0 is the root).
    pub depth: u32,
    /// The most model turns in one run.
    pub max_iterations: u32,
    /// How it manages its context.
    pub context: ContextPolicy,
    pub model: Arc<dyn Model>,
    /// The gate every tool call goes through (holds the worker's tools).
    pub orchestrator: ToolCallOrchestrator,
    /// Where events go.
    pub ui: RuntimeUI,
    /// The interrupt shared with the front end.
    pub interrupt: InterruptSignal,
    /// The transcript, if any.
    pub observer: Option<Arc<dyn RunObserver>>,
    /// Where it sits in the session's tree of workers, and its budget.
    pub tree: TreeSlot,
}

/// Runs a worker.
pub struct WorkerRuntime {
    parts: RuntimeParts,
    history: Vec<Message>,
    parent_call: Option<String>,
    summary_timeout: Duration,
    /// Sent with every model request as its cache key (the session id, for the root worker).
    cache_key: Option<String>,
    /// Calls of the resumed history's last turn to ask again before the next input.
    pending: Option<PendingCalls>,
    /// How full the context is and what is elided from it, kept with the history.
    context: ContextState,
    /// The schema of a structured final answer (`output:`), when the worker has one.
    output: Option<OutputSchema>,
}

impl WorkerRuntime {
    /// A runtime from its parts.
    pub fn new(parts: RuntimeParts) -> Self {
        Self {
            parts,
            history: Vec::new(),
            parent_call: None,
            summary_timeout: SUMMARY_TIMEOUT,
            cache_key: None,
            pending: None,
            context: ContextState::default(),
            output: None,
        }
    }

    /// Asks for, checks and returns a structured final answer valid against `schema` (the
    /// worker's `output:`): see [`RunOutcome::output`].
    pub fn with_output(mut self, schema: Option<OutputSchema>) -> Self {
        self.output = schema;
        self
    }

    /// The schema of the worker's structured answer, if it has one.
    pub fn output_schema(&self) -> Option<&OutputSchema> {
        self.output.as_ref()
    }

    /// Asks `pending` again (through the gate, like any call) before the next run's input: the
    /// calls a killed session left waiting for an approval (see `session::ResumePoint`).
    pub fn with_pending_calls(mut self, pending: PendingCalls) -> Self {
        self.pending = Some(pending).filter(|p| !p.is_empty());
        self
    }

    /// Sends `key` with every model request from now on as its cache key
    /// ([`ModelRequest::cache_key`]): the session host sets the session's id, so that a
    /// provider routing by key (OpenAI's `prompt_cache_key`) keeps a session's requests on the
    /// same prompt cache, resumed sessions included.
    pub fn set_cache_key(&mut self, key: impl Into<String>) {
        self.cache_key = Some(key.into());
    }

    /// Bounds the summary asked for after an interrupt by `timeout` instead of
    /// [`SUMMARY_TIMEOUT`].
    pub fn with_summary_timeout(mut self, timeout: Duration) -> Self {
        self.summary_timeout = timeout;
        self
    }

    /// A runtime that continues `history` (resuming a session) and keeps it from now on.
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self.parts.keeps_history = true;
        self
    }

    /// Marks this runtime as started by the delegating tool call `id` (named in `workerStarted`).
    pub fn with_parent_call(mut self, id: impl Into<String>) -> Self {
        self.parent_call = Some(id.into());
        self
    }

    /// The conversation kept between runs.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Forgets the conversation.
    pub fn clear_history(&mut self) {
        self.history.clear();
        self.context = ContextState::default();
    }

    /// How full the context was after the last model call, against the model's window.
    pub fn context_fill(&self) -> Option<ContextFill> {
        self.context
            .meter
            .fill(window_of(self.parts.model.as_ref()))
    }

    /// Sends `more` after the worker's own instructions from now on (a blank line between).
    pub fn append_instructions(&mut self, more: &str) {
        let more = more.trim();
        if !more.is_empty() {
            self.parts.instructions = format!("{}\n\n{more}", self.parts.instructions.trim_end());
        }
    }

    /// Manages the context by `policy` from now on.
    pub fn set_context_policy(&mut self, policy: ContextPolicy) {
        self.parts.context = policy;
    }

    /// The model, as `provider:model`.
    pub fn model_name(&self) -> String {
        self.parts.model.spec().to_string()
    }

    /// The depth in the delegation tree.
    pub fn depth(&self) -> u32 {
        self.parts.depth
    }

    /// Whether this is the root worker.
    pub fn is_root(&self) -> bool {
        self.parts.depth == 0
    }

    fn origin(&self) -> Option<WorkerOrigin> {
        (self.parts.depth > 0).then(|| WorkerOrigin {
            name: self.parts.worker_name.clone(),
            depth: self.parts.depth,
            id: self.parts.tree.id.clone(),
        })
    }

    /// Its place in the session's tree of workers.
    pub fn tree_slot(&self) -> &TreeSlot {
        &self.parts.tree
    }

    fn record(&self, messages: &mut Vec<Message>, message: Message) {
        if let Some(observer) = self.root_observer() {
            observer.message(&message);
        }
        messages.push(message);
    }

    /// The observer, for what only the root worker records (input and conversation).
    fn root_observer(&self) -> Option<&Arc<dyn RunObserver>> {
        self.parts
            .observer
            .as_ref()
            .filter(|_| self.parts.depth == 0)
    }

    /// Starts a run of this worker in the session's tree (what budgets and `workerStarted`
    /// count).
    fn start_node(&self) -> RunningWorker {
        let parts = &self.parts;
        parts.tree.tree.start(NodeStart {
            slot: &parts.tree,
            name: &parts.worker_name,
            depth: parts.depth,
            model: parts.model.spec().to_string(),
            parent_call: self.parent_call.clone(),
            base: parts.interrupt.token(),
        })
    }

    /// Runs the worker on `input` until it answers, fails or is interrupted. Calls an
    /// earlier turn left waiting for an approval are settled first; if one still waits, the
    /// input is not taken and the run ends waiting again.
    pub async fn run(&mut self, input: &str) -> RunOutcome {
        self.run_turn(Some(input)).await
    }

    /// Continues the turn that ended waiting for an approval
    /// ([`RunStatus::WaitingApproval`], or a resumed session that was parked): its waiting
    /// calls go through the gate again (an inbox answer is taken as the user's), then the model
    /// goes on without new input. A failure when nothing waits.
    pub async fn continue_turn(&mut self) -> RunOutcome {
        if self.pending.is_none() {
            return RunOutcome {
                status: RunStatus::Failed(format!(
                    "nothing to continue: no call of {} waits for an approval",
                    self.parts.worker_name
                )),
                response: String::new(),
                usage: TokenUsage::default(),
                turns: 0,
                output: None,
            };
        }
        self.run_turn(None).await
    }

    /// Whether calls of the last turn wait for an approval.
    pub fn is_waiting(&self) -> bool {
        self.pending.is_some()
    }

    async fn run_turn(&mut self, input: Option<&str>) -> RunOutcome {
        let node = self.start_node();
        // A turn left waiting continues its own messages, even in a runtime that keeps none
        // between runs.
        let continues = self.parts.keeps_history || self.pending.is_some();
        let mut messages = if continues {
            self.history.clone()
        } else {
            Vec::new()
        };
        let mut parked = None;
        if let Some(pending) = self.pending.take() {
            match self.settle_pending(pending, &node).await {
                Ok(results) => self.record(&mut messages, Message::Tool { results }),
                Err((still, ids)) => {
                    self.pending = Some(still);
                    let outcome = waiting(ids, TokenUsage::default(), 0);
                    finish_node(node, &outcome.status);
                    return outcome;
                }
            }
        }
        if let Some(input) = input {
            if let Some(observer) = self.root_observer() {
                observer.input(input);
            }
            self.record(&mut messages, Message::user(input));
        }
        let mut context = if continues {
            std::mem::take(&mut self.context)
        } else {
            ContextState::default()
        };
        let outcome = self
            .run_loop(&mut messages, &mut context, &node, &mut parked)
            .await;
        self.pending = parked;
        if self.parts.keeps_history || self.pending.is_some() {
            self.history = messages;
            self.context = context;
        }
        finish_node(node, &outcome.status);
        outcome
    }

    /// The model-and-tools loop. Calls parked in the approval inbox end it: they are left in
    /// `parked` (with the results of the other calls of the same message), for the next run.
    async fn run_loop(
        &self,
        messages: &mut Vec<Message>,
        context: &mut ContextState,
        node: &WorkerNode,
        parked: &mut Option<PendingCalls>,
    ) -> RunOutcome {
        let parts = &self.parts;
        let tools = parts.orchestrator.registry().llm_definitions();
        let mut usage = TokenUsage::default();
        let origin = self.origin();
        let mut turns = 0;
        // Whether a tool call has got past the gate since the user's input.
        let mut tools_ran = false;
        // Cancelled by an interrupt, or when a budget of this worker or a caller runs out.
        let cancel = node.stop_token();
        // Whether the history was compacted after the provider said this turn's request did
        // not fit: once per turn, then the overflow is an error.
        let mut compacted_for_overflow = false;
        // Whether a structured answer that missed its schema was sent back once already.
        let mut repaired = false;
        while turns < parts.max_iterations {
            if cancel.is_cancelled() {
                return self
                    .stopped(messages, context, usage, turns, tools_ran, node)
                    .await;
            }
            turns += 1;
            let window = window_of(parts.model.as_ref());
            let (mut request, estimate) = self.request(messages, context, tools.clone(), window);
            if parts
                .context
                .compact_at
                .tokens(window)
                .is_some_and(|at| estimate > at)
            {
                let job = CompactRequest {
                    reason: CompactionReason::Threshold,
                    focus: None,
                    tokens_before: estimate,
                    tools: &tools,
                    window,
                };
                match self
                    .compact(messages, context, job, &mut usage, node, &cancel)
                    .await
                {
                    Ok(_) => request = self.request(messages, context, tools.clone(), window).0,
                    Err(CompactError::Cancelled) => {
                        return self
                            .stopped(messages, context, usage, turns, tools_ran, node)
                            .await;
                    }
                    Err(
                        CompactError::NothingToCompact { .. } | CompactError::NotWorthIt { .. },
                    ) => {
                        self.elide_harder(&mut request, context, estimate, window);
                    }
                    Err(error) => parts.ui.emit(DisplayEvent::Status {
                        level: StatusLevel::Warning,
                        message: format!("the conversation was not compacted: {error}"),
                    }),
                }
            }
            // The answer as far as it streamed, kept if the user interrupts it.
            let mut partial = String::new();
            let called = turn::model_turn_keeping(
                parts.model.as_ref(),
                &request,
                &parts.ui,
                origin.as_ref(),
                &cancel,
                Echo::Stream,
                &mut partial,
            )
            .await;
            let (response, call) = match self.settled(called, &usage, node) {
                Ok(done) => done,
                Err(ModelError::Cancelled) => {
                    self.keep_partial(messages, &partial, node);
                    return self
                        .stopped(messages, context, usage, turns, tools_ran, node)
                        .await;
                }
                Err(error @ ModelError::ContextOverflow { .. }) => {
                    let compacting = parts.context.compact_at != Threshold::Never;
                    let mut failed_compaction = None;
                    if compacting && !compacted_for_overflow {
                        compacted_for_overflow = true;
                        let job = CompactRequest {
                            reason: CompactionReason::Overflow,
                            focus: None,
                            tokens_before: estimate_request(&request),
                            tools: &tools,
                            window,
                        };
                        match self
                            .compact(messages, context, job, &mut usage, node, &cancel)
                            .await
                        {
                            Ok(_) => {
                                // The same turn again, with the compacted history.
                                turns -= 1;
                                continue;
                            }
                            Err(CompactError::Cancelled) => {
                                return self
                                    .stopped(messages, context, usage, turns, tools_ran, node)
                                    .await;
                            }
                            Err(e) => failed_compaction = Some(e),
                        }
                    }
                    let message =
                        self.overflowed(&error, &request, window, failed_compaction.as_ref());
                    return RunOutcome {
                        status: RunStatus::Failed(message),
                        response: String::new(),
                        usage,
                        turns,
                        output: None,
                    };
                }
                Err(error) => {
                    return RunOutcome {
                        status: RunStatus::Failed(error.to_string()),
                        response: String::new(),
                        usage,
                        turns,
                        output: None,
                    };
                }
            };
            compacted_for_overflow = false;
            let used = context.meter.measured(&request, &response);
            let fill = ContextFill { used, window };
            if let Some(observer) = self.root_observer() {
                observer.context(fill);
            }
            self.account(&mut usage, node, &response.usage, Some(fill), call);
            let calls = response.tool_calls.clone();
            if let Some(schema) = &self.output {
                let final_call = calls.iter().find(|call| call.name == FINAL_RESULT_TOOL);
                if final_call.is_some() || calls.is_empty() {
                    let answer = self.structured_answer(schema, &response.text, final_call);
                    self.record(
                        messages,
                        Message::Assistant {
                            text: response.text.clone(),
                            tool_calls: calls.clone(),
                        },
                    );
                    match answer {
                        Ok((text, value)) => {
                            if let Some(call) = final_call {
                                let results = final_call_results(&calls, call, None);
                                self.record(messages, Message::Tool { results });
                            }
                            return RunOutcome {
                                status: RunStatus::Completed,
                                response: text,
                                usage,
                                turns,
                                output: Some(value),
                            };
                        }
                        Err(problem) => {
                            let repair = schema.repair_message(&problem);
                            match final_call {
                                Some(call) => {
                                    let results = final_call_results(&calls, call, Some(&repair));
                                    self.record(messages, Message::Tool { results });
                                }
                                None if repaired => {}
                                None => self.record(messages, Message::user(repair)),
                            }
                            if repaired {
                                return RunOutcome {
                                    status: RunStatus::Failed(format!(
                                        "{}'s final answer does not match its output schema \
                                         after one repair: {problem}",
                                        parts.worker_name
                                    )),
                                    response: String::new(),
                                    usage,
                                    turns,
                                    output: None,
                                };
                            }
                            repaired = true;
                            continue;
                        }
                    }
                }
            }
            // A final answer stands even when its call spent the budget; a budget that ran out
            // stops the calls the answer asks for before any of them starts (and they are
            // left out of the history, which never holds a call without its result).
            if !calls.is_empty()
                && let Some(exceeded) = node.exceeded()
            {
                return budget_exceeded(exceeded, usage, turns);
            }
            self.record(
                messages,
                Message::Assistant {
                    text: response.text.clone(),
                    tool_calls: calls.clone(),
                },
            );
            if calls.is_empty() {
                return RunOutcome {
                    status: RunStatus::Completed,
                    response: response.text,
                    usage,
                    turns,
                    output: None,
                };
            }
            let (results, waiting_calls) = self.run_calls(&calls, node).await;
            tools_ran |= results.ran;
            if !waiting_calls.calls.is_empty() {
                *parked = Some(PendingCalls {
                    calls: waiting_calls.calls,
                    settled: results.results,
                });
                return waiting(waiting_calls.inbox_ids, usage, turns);
            }
            self.record(
                messages,
                Message::Tool {
                    results: results.results,
                },
            );
            if cancel.is_cancelled() {
                return self
                    .stopped(messages, context, usage, turns, tools_ran, node)
                    .await;
            }
        }
        let message = format!(
            "{} reached max_iterations ({}) without a final answer; raise `max_iterations` in the \
             worker file or pass --max-iterations",
            parts.worker_name, parts.max_iterations
        );
        RunOutcome {
            status: RunStatus::Failed(message),
            response: String::new(),
            usage,
            turns,
            output: None,
        }
    }
}

/// The results of a message's calls that were settled, in order.
struct SettledCalls {
    results: Vec<ToolResultMessage>,
    /// Whether a call got past the gate (decided, whatever the decision) or ran: there is work
    /// to summarise if the run is interrupted.
    ran: bool,
}

/// Calls parked in the approval inbox, and their numbers there.
#[derive(Default)]
struct ParkedCalls {
    calls: Vec<ModelToolCall>,
    inbox_ids: Vec<u64>,
}

impl WorkerRuntime {
    /// Runs `calls` through the gate one after another; the ones parked in the approval inbox
    /// are set apart (not recorded: they have no result yet).
    async fn run_calls(
        &self,
        calls: &[ModelToolCall],
        node: &WorkerNode,
    ) -> (SettledCalls, ParkedCalls) {
        let parts = &self.parts;
        let cancel = node.stop_token();
        let mut settled = SettledCalls {
            results: Vec::with_capacity(calls.len()),
            ran: false,
        };
        let mut parked = ParkedCalls::default();
        for call in calls {
            node.set_tool(Some(&call.name));
            let outcome = parts
                .orchestrator
                .call(crate::model_calls::tool_call(call), &cancel)
                .await;
            node.set_tool(None);
            if let Some(inbox_id) = outcome.deferred {
                parked.calls.push(call.clone());
                parked.inbox_ids.push(inbox_id);
                continue;
            }
            if let Some(observer) = &parts.observer {
                observer.tool_call(&outcome);
            }
            settled.ran |= outcome.decided_by.is_some() || outcome.executed_args.is_some();
            settled.results.push(result_message(&outcome));
        }
        (settled, parked)
    }

    /// Runs the calls an earlier turn (or a killed or parked session) left waiting, after the
    /// ones settled before, and returns every result of that turn in the order of its calls;
    /// or, when some are parked again, what still waits and their inbox numbers.
    async fn settle_pending(
        &self,
        pending: PendingCalls,
        node: &WorkerNode,
    ) -> Result<Vec<ToolResultMessage>, (PendingCalls, Vec<u64>)> {
        let (results, parked) = self.run_calls(&pending.calls, node).await;
        let mut settled = pending.settled;
        settled.extend(results.results);
        if parked.calls.is_empty() {
            return Ok(settled);
        }
        Err((
            PendingCalls {
                calls: parked.calls,
                settled,
            },
            parked.inbox_ids,
        ))
    }
}

impl WorkerRuntime {
    /// A candidate structured answer: the input of the `final_result` call when the model made
    /// one (the Anthropic wire), else the answer's text; its text (the JSON as the model wrote
    /// it, or the call's input serialised) and its value, or what is wrong with it.
    fn structured_answer(
        &self,
        schema: &OutputSchema,
        text: &str,
        final_call: Option<&ModelToolCall>,
    ) -> Result<(String, serde_json::Value), AnswerProblem> {
        match final_call {
            None => {
                let value = schema.check_text(text)?;
                Ok((text.trim().to_owned(), value))
            }
            Some(call) => {
                let input = serde_json::from_str::<serde_json::Value>(&call.arguments)
                    .map_err(|e| AnswerProblem::NotJson(e.to_string()))?;
                let value = schema.check_value(schema.format().answer_from_tool_input(input))?;
                Ok((value.to_string(), value))
            }
        }
    }
}

/// The results that answer an assistant message holding the `final_result` call `last`: that
/// call's (`accepted`, or the repair request when its answer missed the schema) and, for any
/// other call of the same message, that it was not run. The `final_result` call is never run
/// as a tool; its result is there because a wire (Anthropic's) refuses a history holding a
/// call without one.
fn final_call_results(
    calls: &[ModelToolCall],
    last: &ModelToolCall,
    repair: Option<&str>,
) -> Vec<ToolResultMessage> {
    calls
        .iter()
        .map(|call| {
            let (content, is_error) = if call.id != last.id {
                ("Not run: the final answer ended the turn.".to_owned(), true)
            } else {
                match repair {
                    Some(repair) => (repair.to_owned(), true),
                    None => ("Final answer accepted.".to_owned(), false),
                }
            };
            ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content,
                is_error,
            }
        })
        .collect()
}

/// Ends `node`, the run's place in the tree of workers, as `status` says.
fn finish_node(node: RunningWorker, status: &RunStatus) {
    let (success, error) = match status {
        RunStatus::Completed => (true, None),
        RunStatus::Failed(message) => (false, Some(message.clone())),
        RunStatus::Interrupted => (false, Some("interrupted".to_owned())),
        RunStatus::BudgetExceeded(exceeded) => (false, Some(exceeded.to_string())),
        RunStatus::WaitingApproval(_) => (false, Some("waiting for an approval".to_owned())),
    };
    node.finish(success, error);
}

/// The outcome of a run that waits for approvals in the inbox (numbers `ids`).
fn waiting(ids: Vec<u64>, usage: TokenUsage, turns: u32) -> RunOutcome {
    RunOutcome {
        status: RunStatus::WaitingApproval(ids),
        response: String::new(),
        usage,
        turns,
        output: None,
    }
}

/// The outcome of a run stopped by a budget.
fn budget_exceeded(exceeded: BudgetExceeded, usage: TokenUsage, turns: u32) -> RunOutcome {
    RunOutcome {
        status: RunStatus::BudgetExceeded(exceeded),
        response: String::new(),
        usage,
        turns,
        output: None,
    }
}

/// The model's view of a call's outcome; a call never run because of an interrupt says so.
fn result_message(outcome: &CallOutcome) -> ToolResultMessage {
    ToolResultMessage {
        tool_call_id: outcome.tool_call_id.clone(),
        tool_name: outcome.tool_name.clone(),
        content: match outcome.status {
            ToolStatus::Denied => format!(
                "[DENIED] {}",
                outcome
                    .error
                    .as_ref()
                    .map_or_else(|| outcome.model_text(), |e| e.message.clone())
            ),
            ToolStatus::Success
            | ToolStatus::Error
            | ToolStatus::Blocked
            | ToolStatus::Interrupted => outcome.model_text(),
        },
        is_error: outcome.is_error(),
    }
}

#[cfg(test)]
mod tests;
