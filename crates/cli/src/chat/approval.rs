//! The approval prompt of the chat, the terminal's answer to an `approvalRequired` event: shows the tool, what it will do and its risk, the
//! arguments (pretty, long values folded) and the preview (a diff for file writes, rendered
//! like a result), then takes the answer: `y` once, `s` for the session, `n` to deny (then an
//! optional note for the model), `e` to edit the arguments (in `$VISUAL`/`$EDITOR`, or inline
//! as JSON; validated against the tool's schema before they are accepted), `q` or Ctrl+C to
//! interrupt the run. Empty or unknown input denies. Everything in a request may come from the
//! model or a file: the box shows it cleaned (`frontend::clean`), styled only by us.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use golem_core::registry::ToolRegistry;
use golem_protocol::{ActionEvent, ApprovalRequest, ApprovalResponse, RememberScope, Risk};
use serde_json::Value;

use super::keys::TurnKeys;
use super::lines::{Input, ask};
use super::screen::{Screen, Tone};
use crate::frontend::clean::{clean_text, escape_json_controls};
use crate::frontend::render::{RenderStyle, render_lines};

/// What the prompt needs from the chat around it.
#[derive(Clone)]
pub struct PromptContext {
    /// Where to draw.
    pub screen: Arc<Mutex<Screen>>,
    /// The key watcher of the running turn, paused while the prompt reads.
    pub keys: Arc<Mutex<Option<Arc<TurnKeys>>>>,
    /// The root worker's tools, to validate edited arguments.
    pub registry: Arc<OnceLock<Arc<ToolRegistry>>>,
}

/// Arguments longer than this many rows are cut in the prompt.
const ARG_ROWS: usize = 30;
/// Preview rows shown.
const PREVIEW_ROWS: usize = 40;

/// The box shown for `request`.
pub fn render_request(request: &ApprovalRequest, screen: &Screen) -> String {
    let risk = match request.risk {
        Risk::Low => "low",
        Risk::Medium => "medium",
        Risk::High => "high",
    };
    let bar = screen.dim("│");
    let mut text = format!(
        "┌ Approve {}? {}\n{bar} {}\n",
        screen.paint(Tone::Bold, &request.tool_name),
        screen.dim(&format!("(risk: {risk})")),
        clean_text(&request.description)
    );
    if let Some(worker) = &request.worker {
        text.push_str(&format!(
            "{bar} asked by worker {} (depth {})\n",
            clean_text(&worker.name),
            worker.depth
        ));
    }
    let fold = screen.width().saturating_sub(4).max(20);
    let args = serde_json::to_string_pretty(&request.args).unwrap_or_default();
    let rows: Vec<&str> = args.lines().collect();
    for line in rows.iter().take(ARG_ROWS) {
        let line = golem_core::text::fold(line, fold);
        text.push_str(&format!("{bar} {}\n", clean_text(&line)));
    }
    if rows.len() > ARG_ROWS {
        text.push_str(&format!(
            "{bar} {}\n",
            screen.dim(&format!("… {} more lines", rows.len() - ARG_ROWS))
        ));
    }
    if let Some(preview) = &request.preview {
        let style = RenderStyle {
            color: screen.color(),
            width: fold,
            max_height: Some(PREVIEW_ROWS),
            inline_images: None,
        };
        for row in render_lines(preview, &style) {
            text.push_str(&format!("{bar} {row}\n"));
        }
    }
    text.push_str(&format!(
        "└ {}\n",
        screen.dim("[y] yes  [s] yes for this session  [n] no  [e] edit  [q] stop")
    ));
    text
}

/// Answers an `approvalRequired` event the way every front end does: with an action event —
/// `approvalResponse` for y/s/n/e and an empty or unknown answer, `interrupt` for `q` or
/// Ctrl+C (the pending request is then cancelled and the call ends as interrupted).
pub async fn answer(request: ApprovalRequest, context: PromptContext) -> ActionEvent {
    let keys = context
        .keys
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let answer = tokio::task::spawn_blocking(move || {
        if let Some(keys) = &keys {
            keys.pause();
        }
        let answer = prompt(&request, &context);
        if let Some(keys) = &keys {
            keys.resume();
        }
        answer
    })
    .await;
    match answer {
        Ok(Some(response)) => ActionEvent::ApprovalResponse(response),
        Ok(None) => ActionEvent::Interrupt {
            reason: Some("stopped at the approval prompt".to_owned()),
        },
        Err(e) => ActionEvent::Interrupt {
            reason: Some(format!("the approval prompt failed: {e}")),
        },
    }
}

fn screen(context: &PromptContext) -> std::sync::MutexGuard<'_, Screen> {
    context
        .screen
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Shows `request` and reads answers until one decides it (blocking); `None` stops the run.
fn prompt(request: &ApprovalRequest, context: &PromptContext) -> Option<ApprovalResponse> {
    {
        let mut screen = screen(context);
        screen.stop_spin();
        let text = render_request(request, &screen);
        screen.line(&text);
    }
    let id = request.request_id.clone();
    loop {
        let answer = match ask("answer› ", "") {
            Input::Line(line) => line.trim().to_lowercase(),
            Input::CtrlC | Input::CtrlD => return None,
        };
        return match answer.as_str() {
            "y" | "yes" => Some(ApprovalResponse::approve(id)),
            "s" | "session" => {
                let mut response = ApprovalResponse::approve(id);
                response.remember = RememberScope::Session;
                Some(response)
            }
            "n" | "no" => {
                let note = match ask("note for the model› ", "") {
                    Input::Line(note) => Some(note.trim().to_owned()).filter(|n| !n.is_empty()),
                    Input::CtrlC | Input::CtrlD => None,
                };
                Some(ApprovalResponse::deny(id, note))
            }
            "e" | "edit" => match edit_arguments(request, context) {
                Some(args) => {
                    let mut response = ApprovalResponse::approve(id);
                    response.modified_args = Some(args);
                    Some(response)
                }
                None => continue,
            },
            "q" | "quit" | "stop" => None,
            _ => Some(ApprovalResponse::deny(
                id,
                Some("denied at the prompt".to_owned()),
            )),
        };
    }
}

fn say(context: &PromptContext, text: &str) {
    let mut screen = screen(context);
    let text = screen.paint(Tone::Red, text);
    screen.line(&text);
}

/// The edited arguments, checked against the tool's schema; `None` when the user gave up or
/// they were invalid (the prompt then asks again).
fn edit_arguments(request: &ApprovalRequest, context: &PromptContext) -> Option<Value> {
    let text = match editor() {
        Some(editor) => edit_in_editor(&editor, &request.args)
            .map_err(|e| say(context, &e))
            .ok()?,
        None => {
            let current = serde_json::to_string(&request.args).unwrap_or_default();
            match ask("arguments (JSON)› ", &escape_json_controls(&current)) {
                Input::Line(line) => line,
                Input::CtrlC | Input::CtrlD => return None,
            }
        }
    };
    let args: Value = match serde_json::from_str(&text) {
        Ok(args) => args,
        Err(e) => {
            say(context, &format!("not valid JSON: {e}"));
            return None;
        }
    };
    if let Some(registry) = context.registry.get()
        && registry.get(&request.tool_name).is_some()
        && let Err(e) = registry.validate(&request.tool_name, &args)
    {
        say(context, &format!("the arguments do not fit the tool: {e}"));
        return None;
    }
    Some(args)
}

/// `$VISUAL`, else `$EDITOR`, when set.
fn editor() -> Option<String> {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
}

/// Opens `args` as pretty JSON in `editor` and returns the saved text.
fn edit_in_editor(editor: &str, args: &Value) -> Result<String, String> {
    let file = tempfile::Builder::new()
        .prefix("golem-forge-args-")
        .suffix(".json")
        .tempfile()
        .map_err(|e| format!("cannot create a file to edit: {e}"))?;
    let pretty = serde_json::to_string_pretty(args).unwrap_or_default() + "\n";
    std::fs::write(file.path(), pretty).map_err(|e| format!("cannot write {e}"))?;
    // The editor command may carry its own arguments (`code -w`): let the shell split it.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file.path())
        .status()
        .map_err(|e| format!("cannot start the editor `{editor}`: {e}"))?;
    if !status.success() {
        return Err(format!(
            "the editor `{editor}` failed ({status}); nothing changed"
        ));
    }
    std::fs::read_to_string(file.path()).map_err(|e| format!("cannot read the edited file: {e}"))
}
