//! The progress trace on stderr for `golem-forge run`: what the worker does, at the chosen
//! level. The final answer goes to stdout separately. Names, arguments, summaries and messages
//! come from the model and its tools, so every line is cleaned (`frontend::clean`).

use std::io::Write;

use golem_core::bus::DisplaySubscription;
use golem_protocol::{DisplayEvent, StatusLevel, ToolStatus};

use super::clean::clean_text;
use crate::commands::common::TraceLevel;

fn args_summary(args: &serde_json::Value) -> String {
    let text = args.to_string();
    golem_core::text::fold(&text, 100)
}

fn status_word(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Success => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Denied => "denied",
        ToolStatus::Blocked => "blocked",
        ToolStatus::Interrupted => "interrupted",
    }
}

/// One event as a trace line at `level` with every control character drawn visibly, or
/// `None` to show nothing.
pub fn render(event: &DisplayEvent, level: TraceLevel) -> Option<String> {
    render_raw(event, level).map(|line| clean_text(&line).into_owned())
}

/// [`render`] before cleaning.
fn render_raw(event: &DisplayEvent, level: TraceLevel) -> Option<String> {
    let indent = |depth: u32| "  ".repeat(depth as usize);
    let depth_of =
        |worker: &Option<golem_protocol::WorkerOrigin>| worker.as_ref().map_or(0, |w| w.depth);
    match (level, event) {
        (TraceLevel::Quiet, _) => None,
        (TraceLevel::Debug, event) => golem_protocol::to_jsonl_line(event).ok(),
        (
            _,
            DisplayEvent::ToolResult {
                tool_name,
                status,
                value,
                duration_ms,
                worker,
                ..
            },
        ) => {
            let detail = value.summary.clone().unwrap_or_default();
            Some(format!(
                "{}{tool_name}: {} ({duration_ms} ms){}",
                indent(depth_of(worker)),
                status_word(*status),
                if detail.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", golem_core::text::fold(&detail, 160))
                }
            ))
        }
        (
            TraceLevel::Normal,
            DisplayEvent::ToolStarted {
                tool_name,
                args,
                worker,
                ..
            },
        ) => Some(format!(
            "{}→ {tool_name} {}",
            indent(depth_of(worker)),
            args_summary(args)
        )),
        (
            TraceLevel::Normal,
            DisplayEvent::WorkerStarted {
                worker_name,
                depth,
                model,
                ..
            },
        ) if *depth > 0 => Some(format!(
            "{}⇢ delegating to {worker_name}{}",
            indent(*depth - 1),
            model
                .as_ref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        )),
        (
            TraceLevel::Normal,
            DisplayEvent::WorkerFinished {
                worker_name,
                depth,
                success,
                duration_ms,
                ..
            },
        ) if *depth > 0 => Some(format!(
            "{}⇠ {worker_name} {} ({duration_ms} ms)",
            indent(*depth - 1),
            if *success { "finished" } else { "failed" }
        )),
        (
            _,
            DisplayEvent::Status {
                level: status_level,
                message,
            },
        ) => match status_level {
            StatusLevel::Info if level == TraceLevel::Summary => None,
            StatusLevel::Info => Some(message.clone()),
            StatusLevel::Warning => Some(format!("warning: {message}")),
            StatusLevel::Error => Some(format!("error: {message}")),
        },
        (
            TraceLevel::Summary | TraceLevel::Normal,
            DisplayEvent::SessionStarted { .. }
            | DisplayEvent::Message { .. }
            | DisplayEvent::Streaming { .. }
            | DisplayEvent::ToolStarted { .. }
            | DisplayEvent::ApprovalRequired(_)
            | DisplayEvent::ApprovalResolved(_)
            | DisplayEvent::InputRequired { .. }
            | DisplayEvent::ManualToolsAvailable { .. }
            | DisplayEvent::TurnEnded { .. }
            | DisplayEvent::ActionResult(_)
            | DisplayEvent::SessionStatus(_)
            | DisplayEvent::ApprovalsRemembered { .. }
            | DisplayEvent::WorkerStarted { .. }
            | DisplayEvent::WorkerFinished { .. }
            | DisplayEvent::Usage { .. }
            | DisplayEvent::SessionEnded { .. },
        ) => None,
    }
}

/// Writes trace lines to stderr until `sessionEnded` or until the bus closes.
pub async fn print_trace(mut events: DisplaySubscription, level: TraceLevel) {
    while let Some(event) = events.recv().await {
        if let Some(line) = render(&event, level) {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
        }
        if matches!(event, DisplayEvent::SessionEnded { .. }) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_protocol::{InvokedBy, ToolResultValue, WorkerOrigin};
    use serde_json::json;

    fn result(worker: Option<WorkerOrigin>) -> DisplayEvent {
        DisplayEvent::ToolResult {
            tool_call_id: "c1".into(),
            tool_name: "write_file".into(),
            status: ToolStatus::Denied,
            value: ToolResultValue::text("x").with_summary("DENIED: no"),
            duration_ms: 3,
            invoked_by: InvokedBy::Model,
            worker,
        }
    }

    #[test]
    fn levels() {
        assert_eq!(render(&result(None), TraceLevel::Quiet), None);
        assert_eq!(
            render(&result(None), TraceLevel::Summary).as_deref(),
            Some("write_file: denied (3 ms) — DENIED: no")
        );
        let nested = result(Some(WorkerOrigin {
            name: "sub".into(),
            depth: 2,
        }));
        assert_eq!(
            render(&nested, TraceLevel::Normal).as_deref(),
            Some("    write_file: denied (3 ms) — DENIED: no")
        );
        let debug = render(&result(None), TraceLevel::Debug).unwrap();
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&debug).unwrap()["type"],
            "toolResult"
        );
    }

    #[test]
    fn tool_starts_only_at_normal() {
        let started = DisplayEvent::ToolStarted {
            tool_call_id: "c1".into(),
            tool_name: "read_file".into(),
            args: json!({"path": "/in/a"}),
            invoked_by: InvokedBy::Model,
            worker: None,
        };
        assert_eq!(render(&started, TraceLevel::Summary), None);
        assert_eq!(
            render(&started, TraceLevel::Normal).as_deref(),
            Some("→ read_file {\"path\":\"/in/a\"}")
        );
    }

    #[test]
    fn warnings_always_and_info_not_in_summary() {
        let warning = DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: "slow".into(),
        };
        assert_eq!(
            render(&warning, TraceLevel::Summary).as_deref(),
            Some("warning: slow")
        );
        let info = DisplayEvent::Status {
            level: StatusLevel::Info,
            message: "hi".into(),
        };
        assert_eq!(render(&info, TraceLevel::Summary), None);
        assert_eq!(render(&info, TraceLevel::Normal).as_deref(), Some("hi"));
    }

    #[test]
    fn controls_from_the_model_and_its_tools_are_drawn_visibly() {
        let started = DisplayEvent::ToolStarted {
            tool_call_id: "c1".into(),
            tool_name: "write\x1b[2J".into(),
            args: json!({"content": "a\u{9b}b\x7f\u{202e}c"}),
            invoked_by: InvokedBy::Model,
            worker: None,
        };
        assert_eq!(
            render(&started, TraceLevel::Normal).as_deref(),
            Some("→ write␛[2J {\"content\":\"a\\u{9b}b␡\\u{202e}c\"}")
        );
        let mut finished = result(None);
        if let DisplayEvent::ToolResult { value, .. } = &mut finished {
            *value = ToolResultValue::text("x").with_summary("done\r\x1b]0;pwned\x07");
        }
        assert_eq!(
            render(&finished, TraceLevel::Summary).as_deref(),
            Some("write_file: denied (3 ms) — done␍␛]0;pwned␇")
        );
        let warning = DisplayEvent::Status {
            level: StatusLevel::Warning,
            message: "slow\x1b]2;title\x1b\\\nnext".into(),
        };
        assert_eq!(
            render(&warning, TraceLevel::Summary).as_deref(),
            Some("warning: slow␛]2;title␛\\\nnext")
        );
        // Debug lines are JSON, which escapes C0 itself; the rest is cleaned too.
        let debug = render(&started, TraceLevel::Debug).unwrap();
        assert!(
            !debug.contains(['\x1b', '\u{9b}', '\x7f', '\u{202e}']),
            "{debug}"
        );
    }
}
