//! The chat's terminal adapter: subscribes to the display events like any front end, answers
//! approval requests with action events (`frontend/approval.rs` asks), and draws the rest — assistant text as streamed markdown, a spinner while the model thinks or a tool
//! runs, each tool call and its rendered result, sub-workers starting and ending — at the
//! chosen trace level. It also counts what a turn did, for the status line.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use golem_core::bus::DisplaySubscription;
use golem_protocol::{DisplayEvent, InvokedBy, StatusLevel, TokenUsage, ToolStatus, WorkerOrigin};
use golem_runtime::host::ActionSender;
use tokio::sync::{mpsc, oneshot};

use crate::commands::common::TraceLevel;
use crate::frontend::approval::{self, PromptContext};
use crate::frontend::markdown::{MarkdownStream, MarkdownStyle};
use crate::frontend::render::{
    RenderStyle, detect_image_protocol, human_duration, render_lines, summary_line,
};
use crate::frontend::screen::{Screen, Tone};

/// How often the spinner moves.
const SPINNER_TICK: Duration = Duration::from_millis(100);
/// Rows of a tool result shown before it is folded.
const RESULT_HEIGHT: usize = 24;

/// What the current turn has done so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnStats {
    /// Tool calls that ended.
    pub tools: u32,
    /// Tokens, every worker's.
    pub usage: TokenUsage,
}

/// The handle of the running adapter.
pub struct EventRenderer {
    flush: mpsc::UnboundedSender<oneshot::Sender<TurnStats>>,
    stats: Arc<Mutex<TurnStats>>,
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
        | DisplayEvent::InputRequired { .. }
        | DisplayEvent::Status { .. }
        | DisplayEvent::WorkerStarted { .. }
        | DisplayEvent::WorkerFinished { .. }
        | DisplayEvent::Usage { .. } => false,
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
        let screen = prompts.screen.clone();
        let (flush, requests) = mpsc::unbounded_channel();
        let (replies, waiting) = mpsc::unbounded_channel();
        let stats = Arc::new(Mutex::new(TurnStats::default()));
        let adapter = Adapter {
            actions,
            prompts,
            screen,
            trace,
            markdown: None,
            stats: stats.clone(),
            replies,
        };
        tokio::spawn(adapter.run(events, requests));
        (EventRenderer { flush, stats }, waiting)
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
    screen: Arc<Mutex<Screen>>,
    trace: TraceLevel,
    markdown: Option<MarkdownStream>,
    stats: Arc<Mutex<TurnStats>>,
}

fn indent(worker: &Option<WorkerOrigin>) -> String {
    "  ".repeat(worker.as_ref().map_or(0, |w| w.depth as usize))
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
                        self.end_text();
                        self.screen().stop_spin();
                        let action = approval::answer(request, self.prompts.clone()).await;
                        self.actions.send(action);
                    }
                    Some(event) => {
                        self.draw(&event);
                        if is_reply(&event) {
                            self.end_text();
                            self.screen().stop_spin();
                            let _ = self.replies.send(event);
                        }
                    }
                    None => return,
                },
                Some(done) = flushes.recv() => {
                    self.end_text();
                    self.screen().stop_spin();
                    let stats = std::mem::take(
                        &mut *self.stats.lock().unwrap_or_else(PoisonError::into_inner),
                    );
                    let _ = done.send(stats);
                }
                _ = ticker.tick() => self.screen().tick(),
            }
        }
    }

    fn screen(&self) -> std::sync::MutexGuard<'_, Screen> {
        self.screen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, TurnStats> {
        self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends streamed text that is still open.
    fn end_text(&mut self) {
        if let Some(mut markdown) = self.markdown.take() {
            let rest = markdown.finish();
            let mut screen = self.screen();
            screen.write(&rest);
            screen.end_line();
        }
    }

    fn draw(&mut self, event: &DisplayEvent) {
        if self.trace == TraceLevel::Debug
            && let Ok(json) = golem_protocol::to_jsonl_line(event)
        {
            let mut screen = self.screen();
            let line = screen.dim(&json);
            screen.line(&line);
        }
        match event {
            DisplayEvent::WorkerStarted {
                worker_name, depth, ..
            } => {
                if *depth > 0 && self.trace != TraceLevel::Quiet {
                    self.end_text();
                    let mut screen = self.screen();
                    let text = screen.dim(&format!(
                        "{}▸ {worker_name} starts (depth {depth})",
                        "  ".repeat(*depth as usize)
                    ));
                    screen.line(&text);
                }
                self.screen().spin("thinking");
            }
            DisplayEvent::WorkerFinished {
                worker_name,
                depth,
                success,
                duration_ms,
                error,
            } => {
                self.end_text();
                let mut screen = self.screen();
                screen.stop_spin();
                if *depth > 0 && self.trace != TraceLevel::Quiet {
                    let outcome = match (success, error) {
                        (true, _) => format!("done in {}", human_duration(*duration_ms)),
                        (false, Some(error)) => format!("failed: {error}"),
                        (false, None) => "failed".to_owned(),
                    };
                    let text = screen.dim(&format!(
                        "{}◂ {worker_name} {outcome}",
                        "  ".repeat(*depth as usize)
                    ));
                    screen.line(&text);
                    screen.spin("thinking");
                }
            }
            DisplayEvent::Streaming {
                delta,
                done,
                worker,
                ..
            } => {
                // Sub-workers' text goes back to their caller as a tool result; only the root
                // worker speaks to the user.
                if worker.is_some() {
                    return;
                }
                let (color, width) = {
                    let screen = self.screen();
                    (screen.color(), screen.width())
                };
                let markdown = self
                    .markdown
                    .get_or_insert_with(|| MarkdownStream::new(MarkdownStyle { color, width }));
                let out = markdown.push(delta);
                {
                    let mut screen = self.screen();
                    screen.stop_spin();
                    screen.write(&out);
                }
                if *done {
                    self.end_text();
                }
            }
            DisplayEvent::ToolStarted {
                tool_name,
                args,
                worker,
                ..
            } => {
                self.end_text();
                let mut screen = self.screen();
                screen.stop_spin();
                if self.trace != TraceLevel::Quiet {
                    let args = golem_core::text::fold(&args.to_string(), 80);
                    let name = screen.paint(Tone::Bold, &format!("⏺ {tool_name}"));
                    let line = format!(
                        "{}{name}{}",
                        indent(worker),
                        screen.dim(&format!(" {args}"))
                    );
                    screen.line(&line);
                }
                screen.spin(&format!("running {tool_name}"));
            }
            DisplayEvent::ToolResult {
                status,
                value,
                duration_ms,
                worker,
                ..
            } => {
                self.stats().tools += 1;
                let mut screen = self.screen();
                screen.stop_spin();
                if self.trace == TraceLevel::Quiet {
                    return;
                }
                let pad = format!("{}  ", indent(worker));
                let mark = match status {
                    ToolStatus::Success => "✓",
                    ToolStatus::Error => "✗",
                    ToolStatus::Denied => "⊘ denied:",
                    ToolStatus::Blocked => "⊘ blocked:",
                    ToolStatus::Interrupted => "⏹ interrupted:",
                };
                let width = screen.width().saturating_sub(pad.len() + 4).max(20);
                // Room for the mark before and the duration after the summary.
                let summary = summary_line(value, width.saturating_sub(24).max(20));
                let head = format!("{pad}⎿ {mark} {summary} ({})", human_duration(*duration_ms));
                let head = match status {
                    ToolStatus::Success => screen.dim(&head),
                    _ => screen.paint(Tone::Red, &head),
                };
                screen.line(&head);
                let show_body = matches!(self.trace, TraceLevel::Normal | TraceLevel::Debug)
                    && *status == ToolStatus::Success;
                if show_body {
                    let style = RenderStyle {
                        color: screen.color(),
                        width,
                        max_height: Some(RESULT_HEIGHT),
                        inline_images: detect_image_protocol(|name| std::env::var(name).ok()),
                    };
                    let mut body = String::new();
                    for row in render_lines(value, &style) {
                        body.push_str(&pad);
                        body.push_str("  ");
                        body.push_str(&row);
                        body.push('\n');
                    }
                    if !body.is_empty() {
                        screen.line(&body);
                    }
                }
                screen.spin("thinking");
            }
            DisplayEvent::Usage { usage, .. } => self.stats().usage.add(usage),
            DisplayEvent::Status { level, message } => {
                self.end_text();
                let mut screen = self.screen();
                let text = match level {
                    StatusLevel::Error => screen.paint(Tone::Red, message),
                    StatusLevel::Warning => screen.paint(Tone::Yellow, message),
                    StatusLevel::Info => screen.dim(message),
                };
                screen.line(&text);
            }
            DisplayEvent::SessionStarted { .. }
            | DisplayEvent::Message { .. }
            | DisplayEvent::ApprovalRequired(_)
            | DisplayEvent::ApprovalResolved(_)
            | DisplayEvent::InputRequired { .. }
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::TurnEnded { .. }
            | DisplayEvent::ActionResult(_)
            | DisplayEvent::SessionStatus(_)
            | DisplayEvent::ApprovalsRemembered { .. }
            | DisplayEvent::SessionEnded { .. } => {}
        }
    }
}
