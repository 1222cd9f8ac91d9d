//! The one event renderer of the terminal, shared by `run` (on stderr) and `chat` (on stdout):
//! draws display events on a [`Screen`] at the chosen trace level — assistant text as streamed
//! markdown (the chat only; `run` prints its answer on stdout), a spinner while the model thinks
//! or a tool runs (where the screen has one), each tool call and its rendered result,
//! sub-workers starting and ending, status lines; at `debug` every event as a JSON line too. It
//! also counts what a turn did, for the chat's status line. Everything drawn is cleaned
//! (`frontend::clean`) by the screen or the renderers.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use golem_core::bus::DisplaySubscription;
use golem_protocol::workers::elision_line;
use golem_protocol::{
    ContextFill, DisplayEvent, InputAction, StatusLevel, TokenUsage, ToolStatus, WorkerOrigin,
};

use super::markdown::{MarkdownStream, MarkdownStyle};
use super::render::{
    RenderStyle, detect_image_protocol, human_count, human_duration, render_lines, summary_line,
    summary_rows, text_width, truncate_text,
};
use super::screen::{Screen, Tone};
use super::workers::WorkerTreeView;
use crate::commands::common::TraceLevel;

/// How often the spinner moves.
pub const SPINNER_TICK: Duration = Duration::from_millis(100);
/// Rows of a tool result shown before it is folded.
const RESULT_HEIGHT: usize = 24;

/// What the current turn has done so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnStats {
    /// Tool calls that ended.
    pub tools: u32,
    /// Tokens, every worker's.
    pub usage: TokenUsage,
    /// What the calls with a known price cost, in US dollars.
    pub cost: Option<f64>,
    /// How full the root worker's context was after its last model call.
    pub context: Option<ContextFill>,
}

/// Draws display events on a screen.
pub struct EventDisplay {
    screen: Arc<Mutex<Screen>>,
    trace: TraceLevel,
    stream_text: bool,
    markdown: Option<MarkdownStream>,
    stats: Arc<Mutex<TurnStats>>,
    workers: Arc<Mutex<WorkerTreeView>>,
    /// What the spinner says the root worker does (`thinking`, `running read_file`).
    activity: String,
}

fn indent(worker: &Option<WorkerOrigin>) -> String {
    "  ".repeat(worker.as_ref().map_or(0, |w| w.depth as usize))
}

/// Draws a call's line, `⏺ tool {args}`, its arguments shortened to fit the screen's width.
fn draw_call(
    screen: &mut Screen,
    worker: &Option<WorkerOrigin>,
    tool_name: &str,
    args: &serde_json::Value,
) {
    let indent = indent(worker);
    let head = format!("⏺ {tool_name}");
    let used = text_width(&indent) + text_width(&head) + 1;
    let room = screen.width().saturating_sub(used).max(8);
    let args = truncate_text(&args.to_string(), room);
    let name = screen.paint(Tone::Bold, &head);
    let line = format!("{indent}{name}{}", screen.dim(&format!(" {args}")));
    screen.line(&line);
}

impl EventDisplay {
    /// A renderer on `screen` at `trace`; `stream_text` draws the root worker's streamed answer.
    pub fn new(screen: Arc<Mutex<Screen>>, trace: TraceLevel, stream_text: bool) -> Self {
        Self {
            screen,
            trace,
            stream_text,
            markdown: None,
            stats: Arc::default(),
            workers: Arc::default(),
            activity: String::new(),
        }
    }

    /// The running workers as the events tell them, shared with whoever shows them
    /// (`/workers`).
    pub fn workers_handle(&self) -> Arc<Mutex<WorkerTreeView>> {
        self.workers.clone()
    }

    /// Shows the spinner for `activity`; while sub-workers run it says what they do instead.
    fn spin(&mut self, activity: &str) {
        activity.clone_into(&mut self.activity);
        let label = self.spinner_label();
        self.screen().spin(&label);
    }

    fn spinner_label(&self) -> String {
        let summary = self
            .workers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .summary();
        summary.unwrap_or_else(|| self.activity.clone())
    }

    /// The counts of the turn so far, shared with whoever reads them.
    pub fn stats_handle(&self) -> Arc<Mutex<TurnStats>> {
        self.stats.clone()
    }

    /// Ends open text and removes the spinner: the screen is ready for something else.
    pub fn settle(&mut self) {
        self.end_text();
        self.screen().stop_spin();
    }

    /// Advances the spinner (called on a timer).
    pub fn tick(&self) {
        self.screen().tick();
    }

    fn screen(&self) -> std::sync::MutexGuard<'_, Screen> {
        self.screen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn stats(&self) -> std::sync::MutexGuard<'_, TurnStats> {
        self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends streamed text that is still open.
    pub fn end_text(&mut self) {
        if let Some(mut markdown) = self.markdown.take() {
            let rest = markdown.finish();
            let mut screen = self.screen();
            screen.write(&rest);
            screen.end_line();
        }
    }

    /// Draws `event` at the trace level.
    pub fn draw(&mut self, event: &DisplayEvent) {
        if self.trace == TraceLevel::Debug
            && let Ok(json) = golem_protocol::to_jsonl_line(event)
        {
            let mut screen = self.screen();
            let line = screen.dim(&json);
            screen.line(&line);
        }
        let tree_changed = self
            .workers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .update(event);
        if tree_changed {
            let label = self.spinner_label();
            self.screen().relabel(&label);
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
                self.spin("thinking");
            }
            DisplayEvent::WorkerProgress(_) => {}
            DisplayEvent::WorkerFinished {
                worker_name,
                depth,
                success,
                duration_ms,
                error,
                ..
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
                    drop(screen);
                    self.spin("thinking");
                }
            }
            DisplayEvent::Streaming {
                delta,
                done,
                worker,
                ..
            } => {
                // Sub-workers' text goes back to their caller as a tool result; only the root
                // worker speaks to the user (and `run` prints its answer on stdout instead).
                if worker.is_some() || !self.stream_text {
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
                    draw_call(&mut screen, worker, tool_name, args);
                }
                drop(screen);
                self.spin(&format!("running {tool_name}"));
            }
            DisplayEvent::ToolResult {
                tool_name,
                status,
                args,
                value,
                duration_ms,
                worker,
                ..
            } => {
                self.stats().tools += 1;
                if args.is_some() {
                    self.end_text();
                }
                let mut screen = self.screen();
                screen.stop_spin();
                if self.trace == TraceLevel::Quiet {
                    return;
                }
                // A call that never started (denied, blocked, invalid) had no `toolStarted`
                // line: its result brings the arguments to draw it with.
                if let Some(args) = args {
                    draw_call(&mut screen, worker, tool_name, args);
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
                let room = width.saturating_sub(24).max(20);
                let duration = human_duration(*duration_ms);
                if *status == ToolStatus::Success {
                    let summary = summary_line(value, room);
                    let head = screen.dim(&format!("{pad}⎿ {mark} {summary} ({duration})"));
                    screen.line(&head);
                } else {
                    // A failure is drawn whole, wrapped: its end may say what to do.
                    let rows = summary_rows(value, room);
                    let last = rows.len().saturating_sub(1);
                    let text = rows
                        .iter()
                        .enumerate()
                        .map(|(i, row)| {
                            let lead = if i == 0 {
                                format!("⎿ {mark} ")
                            } else {
                                "    ".into()
                            };
                            let tail = if i == last {
                                format!(" ({duration})")
                            } else {
                                String::new()
                            };
                            screen.paint(Tone::Red, &format!("{pad}{lead}{row}{tail}"))
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    screen.line(&text);
                }
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
                drop(screen);
                self.spin("thinking");
            }
            DisplayEvent::Usage {
                usage,
                cost,
                context,
                worker,
                ..
            } => {
                let mut stats = self.stats();
                stats.usage.add(usage);
                if worker.is_none() && context.is_some() {
                    stats.context = *context;
                }
                if let Some(cost) = cost {
                    stats.cost = Some(stats.cost.unwrap_or(0.0) + cost);
                }
            }
            DisplayEvent::ContextCompacted {
                reason,
                tokens_before,
                tokens_after,
                messages_replaced,
                worker,
                ..
            } => {
                if worker.is_none() {
                    let mut stats = self.stats();
                    if let Some(fill) = &mut stats.context {
                        fill.used = *tokens_after;
                    }
                }
                if self.trace == TraceLevel::Quiet {
                    return;
                }
                self.end_text();
                let mut screen = self.screen();
                let line = screen.dim(&format!(
                    "{}⟲ context compacted ({}): {messages_replaced} message{} summarised, about \
                     {} → {} tokens",
                    indent(worker),
                    reason.as_str(),
                    if *messages_replaced == 1 { "" } else { "s" },
                    human_count(*tokens_before),
                    human_count(*tokens_after),
                ));
                screen.line(&line);
            }
            DisplayEvent::ContextElided {
                tokens_before,
                tokens_after,
                window,
                results,
                harder,
                ..
            } => {
                // The line the `info` status of an elision was before protocol 1.15.
                self.end_text();
                let mut screen = self.screen();
                let text = screen.dim(&elision_line(
                    *tokens_before,
                    *tokens_after,
                    *window,
                    *results,
                    *harder,
                ));
                screen.line(&text);
            }
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
            DisplayEvent::ApprovalDeferred { request, inbox_id } => {
                self.end_text();
                let mut screen = self.screen();
                screen.stop_spin();
                let number = inbox_id
                    .map(|id| format!(" (inbox {id})"))
                    .unwrap_or_default();
                let head = screen.paint(
                    Tone::Yellow,
                    &format!("⏸ {} waits for approval{number}", request.tool_name),
                );
                let about = golem_core::text::fold(&request.description, 100);
                let line = format!(
                    "{}{head}{}",
                    indent(&request.worker),
                    screen.dim(&format!(": {about}"))
                );
                screen.line(&line);
            }
            DisplayEvent::InputResolved { action, .. } => {
                self.end_text();
                let mut screen = self.screen();
                let text = screen.dim(match action {
                    InputAction::Accept => "↳ answer sent",
                    InputAction::Decline => "↳ question declined",
                    InputAction::Cancel => "↳ question cancelled",
                });
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

/// `run`'s trace: draws `events` on stderr until `sessionEnded` (without a spinner when
/// stderr is not a terminal; the answer itself goes to stdout).
pub async fn print_trace(
    mut events: DisplaySubscription,
    screen: Arc<Mutex<Screen>>,
    trace: TraceLevel,
) {
    let mut display = EventDisplay::new(screen, trace, false);
    let spinning = std::io::stderr().is_terminal();
    let mut ticker = tokio::time::interval(SPINNER_TICK);
    loop {
        tokio::select! {
            biased;
            event = events.recv() => match event {
                Some(event) => {
                    if matches!(
                        event,
                        DisplayEvent::ApprovalRequired(_) | DisplayEvent::InputRequired { .. }
                    ) {
                        // The prompt draws on the same screen now.
                        display.settle();
                        continue;
                    }
                    display.draw(&event);
                    if matches!(event, DisplayEvent::SessionEnded { .. }) {
                        display.settle();
                        return;
                    }
                }
                None => return,
            },
            _ = ticker.tick(), if spinning => display.tick(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_protocol::{InvokedBy, ToolResultValue};
    use serde_json::json;

    /// What `events` draw at `trace` (`stream_text` as `run` has it: off).
    fn drawn(events: &[DisplayEvent], trace: TraceLevel, stream_text: bool) -> String {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let screen = Arc::new(Mutex::new(Screen::memory(buffer.clone(), 100)));
        let mut display = EventDisplay::new(screen, trace, stream_text);
        for event in events {
            display.draw(event);
        }
        display.settle();
        let bytes = buffer.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    fn result(worker: Option<WorkerOrigin>) -> DisplayEvent {
        DisplayEvent::ToolResult {
            tool_call_id: "c1".into(),
            tool_name: "write_file".into(),
            tool_kind: golem_protocol::ToolKind::Other,
            status: ToolStatus::Denied,
            args: None,
            value: ToolResultValue::text("x").with_summary("DENIED: no"),
            duration_ms: 3,
            invoked_by: InvokedBy::Model,
            worker,
        }
    }

    #[test]
    fn a_failure_is_drawn_whole_wrapped_never_cut() {
        let message = "DENIED: approval needed for write_file but no terminal is attached \
                       (use --approval approve_all or auto_deny)";
        let event = DisplayEvent::ToolResult {
            tool_call_id: "c1".into(),
            tool_name: "write_file".into(),
            tool_kind: golem_protocol::ToolKind::Other,
            status: ToolStatus::Denied,
            args: None,
            value: ToolResultValue::text("x").with_summary(message),
            duration_ms: 3,
            invoked_by: InvokedBy::Model,
            worker: None,
        };
        let drawn = drawn(&[event], TraceLevel::Summary, false);
        let rows: Vec<&str> = drawn.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(rows.len() > 1, "wrapped at this width: {drawn}");
        assert!(rows[0].starts_with("  ⎿ ⊘ denied: DENIED:"), "{drawn}");
        assert!(
            rows.last().unwrap().ends_with("auto_deny) (3 ms)"),
            "{drawn}"
        );
        let joined = drawn.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(joined.contains(message), "{drawn}");
    }

    fn started(name: &str, args: serde_json::Value) -> DisplayEvent {
        DisplayEvent::ToolStarted {
            tool_call_id: "c1".into(),
            tool_name: name.into(),
            tool_kind: golem_protocol::ToolKind::Other,
            args,
            invoked_by: InvokedBy::Model,
            worker: None,
        }
    }

    #[test]
    fn trace_levels_choose_what_is_drawn() {
        let events = [
            started("write_file", json!({"path": "/out/a"})),
            result(None),
        ];
        assert_eq!(drawn(&events, TraceLevel::Quiet, false), "");
        let summary = drawn(&events, TraceLevel::Summary, false);
        assert!(
            summary.contains("⏺ write_file {\"path\":\"/out/a\"}"),
            "{summary}"
        );
        assert!(
            summary.contains("  ⎿ ⊘ denied: DENIED: no (3 ms)"),
            "{summary}"
        );
        let nested = drawn(
            &[result(Some(WorkerOrigin {
                name: "sub".into(),
                depth: 2,
                id: "w3".into(),
            }))],
            TraceLevel::Normal,
            false,
        );
        assert!(nested.starts_with("      ⎿ ⊘ denied"), "{nested:?}");
        let debug = drawn(&events, TraceLevel::Debug, false);
        let json_line = debug.lines().next().unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(json_line).unwrap()["type"],
            "toolStarted"
        );
    }

    #[test]
    fn the_answer_streams_in_the_chat_and_not_in_runs_trace() {
        let streamed = DisplayEvent::Streaming {
            request_id: "r1".into(),
            delta: "Hello there.".into(),
            done: true,
            worker: None,
        };
        assert!(
            drawn(std::slice::from_ref(&streamed), TraceLevel::Normal, true)
                .contains("Hello there.")
        );
        assert_eq!(drawn(&[streamed], TraceLevel::Normal, false), "");
    }

    #[test]
    fn warnings_show_at_every_level() {
        let warning = DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: "slow".into(),
        };
        for level in [TraceLevel::Quiet, TraceLevel::Summary, TraceLevel::Normal] {
            assert!(
                drawn(std::slice::from_ref(&warning), level, false).contains("slow"),
                "{level:?}"
            );
        }
    }

    #[test]
    fn an_elision_is_drawn_as_the_info_status_it_was() {
        let elided = |harder| DisplayEvent::ContextElided {
            tokens_before: 71_000,
            tokens_after: 59_000,
            window: 100_000,
            results: 3,
            harder,
            worker: None,
        };
        let status = |message: &str| DisplayEvent::Status {
            level: StatusLevel::Info,
            message: message.into(),
        };
        let old = "context 71 % full: elided 3 old tool results (about 12000 tokens)";
        let harder = "context 71 % full and too little to compact: elided 3 more tool results \
                      (about 12000 tokens)";
        for level in [TraceLevel::Quiet, TraceLevel::Normal] {
            let drawn_as = |event| drawn(&[event], level, false);
            assert_eq!(drawn_as(elided(false)), drawn_as(status(old)), "{level:?}");
            assert_eq!(
                drawn_as(elided(true)),
                drawn_as(status(harder)),
                "{level:?}"
            );
            assert!(drawn_as(elided(false)).contains(old), "{level:?}");
        }
    }

    #[test]
    fn controls_from_the_model_and_its_tools_are_drawn_visibly() {
        let events = [
            started("write\x1b[2J", json!({"content": "a\u{9b}b\x7f\u{202e}c"})),
            DisplayEvent::ToolResult {
                tool_call_id: "c1".into(),
                tool_name: "write_file".into(),
                tool_kind: golem_protocol::ToolKind::Other,
                status: ToolStatus::Error,
                args: None,
                value: ToolResultValue::text("x").with_summary("done\r\x1b]0;pwned\x07"),
                duration_ms: 3,
                invoked_by: InvokedBy::Model,
                worker: None,
            },
            DisplayEvent::Status {
                level: StatusLevel::Warning,
                message: "slow\x1b]2;title\x1b\\".into(),
            },
        ];
        for level in [TraceLevel::Normal, TraceLevel::Debug] {
            let text = drawn(&events, level, false);
            assert!(
                !text.contains(['\x1b', '\u{9b}', '\x7f', '\u{202e}', '\x07', '\r']),
                "{level:?}: {text:?}"
            );
        }
        let text = drawn(&events, TraceLevel::Normal, false);
        assert!(text.contains("write␛[2J"), "{text}");
        assert!(text.contains("␛]0;pwned␇"), "{text}");
    }
}
