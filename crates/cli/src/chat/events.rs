//! The chat's terminal adapter: reads the session's display events like any front end, answers
//! approval requests and tools' questions with action events (`frontend/approval.rs` and
//! `frontend/input.rs` ask), draws the rest with the
//! terminal's one renderer (`frontend/display.rs`, which `run` uses on stderr), and hands the
//! chat's loop the events it waits for once they are drawn.

use std::sync::{Arc, Mutex, PoisonError};

use golem_core::bus::DisplaySubscription;
use golem_protocol::{DisplayEvent, InvokedBy};
use golem_runtime::host::ActionSender;
use tokio::sync::{mpsc, oneshot};

use crate::commands::common::TraceLevel;
use crate::frontend::approval::{self, PromptContext};
use crate::frontend::display::{EventDisplay, SPINNER_TICK, TurnStats};
use crate::frontend::input;
use crate::frontend::workers::WorkerTreeView;

/// The handle of the running adapter.
pub struct EventRenderer {
    flush: mpsc::UnboundedSender<oneshot::Sender<TurnStats>>,
    stats: Arc<Mutex<TurnStats>>,
    workers: Arc<Mutex<WorkerTreeView>>,
}

/// Whether the chat's loop waits for `event`: the end of a turn, the answer to a session
/// action, the result of a tool the user ran, the end of the session. It gets them after
/// they are drawn.
fn is_reply(event: &DisplayEvent) -> bool {
    match event {
        DisplayEvent::TurnEnded { .. }
        | DisplayEvent::ActionResult(_)
        | DisplayEvent::SessionStatus(_)
        | DisplayEvent::ApprovalsRemembered { .. }
        | DisplayEvent::ManualToolsAvailable { .. }
        | DisplayEvent::SessionEnded { .. } => true,
        DisplayEvent::ToolResult { invoked_by, .. } => *invoked_by == InvokedBy::User,
        DisplayEvent::SessionStarted { .. }
        | DisplayEvent::Message { .. }
        | DisplayEvent::Streaming { .. }
        | DisplayEvent::ToolStarted { .. }
        | DisplayEvent::ApprovalRequired(_)
        | DisplayEvent::ApprovalResolved(_)
        | DisplayEvent::ApprovalDeferred { .. }
        | DisplayEvent::InputRequired { .. }
        | DisplayEvent::InputResolved { .. }
        | DisplayEvent::Status { .. }
        | DisplayEvent::WorkerStarted { .. }
        | DisplayEvent::WorkerProgress(_)
        | DisplayEvent::WorkerFinished { .. }
        | DisplayEvent::Usage { .. }
        | DisplayEvent::ContextCompacted { .. }
        | DisplayEvent::ContextElided { .. } => false,
    }
}

impl EventRenderer {
    /// Starts drawing `events` on the prompt context's screen, answering approvals with
    /// `actions`; the events the chat waits for come out of the returned receiver.
    pub fn spawn(
        events: DisplaySubscription,
        actions: ActionSender,
        prompts: PromptContext,
        trace: TraceLevel,
    ) -> (EventRenderer, mpsc::UnboundedReceiver<DisplayEvent>) {
        let display = EventDisplay::new(prompts.screen.clone(), trace, true);
        let (flush, requests) = mpsc::unbounded_channel();
        let (replies, waiting) = mpsc::unbounded_channel();
        let stats = display.stats_handle();
        let workers = display.workers_handle();
        let adapter = Adapter {
            actions,
            prompts,
            display,
            stats: stats.clone(),
            replies,
        };
        tokio::spawn(adapter.run(events, requests));
        (
            EventRenderer {
                flush,
                stats,
                workers,
            },
            waiting,
        )
    }

    /// The running workers, as the events drawn so far tell them.
    pub fn workers(&self) -> Arc<Mutex<WorkerTreeView>> {
        self.workers.clone()
    }

    /// Waits until every event emitted so far is drawn, then returns the turn's counts and
    /// starts counting afresh.
    pub async fn finish_turn(&self) -> TurnStats {
        let (done, wait) = oneshot::channel();
        if self.flush.send(done).is_err() {
            return self.take_stats();
        }
        wait.await.unwrap_or_default()
    }

    fn take_stats(&self) -> TurnStats {
        std::mem::take(&mut *self.stats.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

struct Adapter {
    actions: ActionSender,
    replies: mpsc::UnboundedSender<DisplayEvent>,
    prompts: PromptContext,
    display: EventDisplay,
    stats: Arc<Mutex<TurnStats>>,
}

impl Adapter {
    async fn run(
        mut self,
        mut events: DisplaySubscription,
        mut flushes: mpsc::UnboundedReceiver<oneshot::Sender<TurnStats>>,
    ) {
        let mut ticker = tokio::time::interval(SPINNER_TICK);
        loop {
            tokio::select! {
                // Events first: a flush is answered only when every event before it is drawn.
                biased;
                event = events.recv() => match event {
                    Some(DisplayEvent::ApprovalRequired(request)) => {
                        // Answered like any front end answers: with an action event.
                        self.display.settle();
                        let action = approval::answer(request, self.prompts.clone()).await;
                        self.actions.send(action);
                    }
                    Some(DisplayEvent::InputRequired { request_id, prompt, source, fields }) => {
                        // A tool's question, answered the same way.
                        self.display.settle();
                        let question = input::Question { request_id, prompt, source, fields };
                        let action = input::answer(question, self.prompts.clone()).await;
                        self.actions.send(action);
                    }
                    Some(event) => {
                        self.display.draw(&event);
                        if is_reply(&event) {
                            self.display.settle();
                            let _ = self.replies.send(event);
                        }
                    }
                    None => return,
                },
                Some(done) = flushes.recv() => {
                    self.display.settle();
                    let stats = std::mem::take(
                        &mut *self.stats.lock().unwrap_or_else(PoisonError::into_inner),
                    );
                    let _ = done.send(stats);
                }
                _ = ticker.tick() => self.display.tick(),
            }
        }
    }
}
