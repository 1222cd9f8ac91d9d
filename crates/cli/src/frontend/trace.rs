//! The progress trace on stderr for `golem-forge run`: what the worker does, at the chosen
//! level. The final answer goes to stdout separately.

use std::io::Write;

use golem_core::bus::DisplaySubscription;
use golem_protocol::{DisplayEvent, StatusLevel, ToolStatus};

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

/// One event as a trace line at `level`, or `None` to show nothing.
pub fn render(event: &DisplayEvent, level: TraceLevel) -> Option<String> {
    let indent = |depth: u32| "  ".repeat(depth as usize);
    let depth_of =
        |worker: &Option<golem_protocol::WorkerOrigin>| worker.as_ref().map_or(0, |w| w.depth);
    match (level, event) {
        (TraceLevel::Quiet, _) => None,
        (TraceLevel::Debug, event) => serde_json::to_string(event).ok(),
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
        (_, DisplayEvent::ApprovalResolved(resolved)) if !resolved.approved => {
            resolved.note.as_ref().map(|note| {
                format!(
                    "{}{} not approved: {note}",
                    indent(depth_of(&resolved.worker)),
                    resolved.tool_name
                )
            })
        }
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
