//! The approval prompt at the terminal, one for `run` and `chat`: shows the tool, what it will
//! do and its risk, who asked (a sub-worker), the arguments (pretty, long values folded) and the
//! preview (a diff for file writes, rendered like a result), then takes the answer: `y` once,
//! `s` for the session, `p` always in this project (a rule in `.golem-forge/approvals.yaml`
//! matching the call's exact `path` when it has one, else its exact arguments; broader rules,
//! such as a path glob, are written by hand), `n` to deny (then an optional note for the
//! model), `e` to edit the arguments (in `$VISUAL`/`$EDITOR`, or inline as JSON; validated
//! against the tool's schema before they are accepted), `q`, Ctrl+C or Esc to interrupt the
//! run; Ctrl+D or a closed terminal denies saying so.
//!
//! When stdin is a terminal each answer is one key, acting at once (no Enter): the terminal is
//! put in a mode without line buffering, echo or signals for that one key (output processing
//! stays on), Enter, space and other keys never decide (another letter is told the choices),
//! and only the note after `n` and inline JSON after `e` are read as lines. When stdin is not a
//! terminal (answers piped in by a script) the answer is a line (`y`/`yes`, `s`/`session`,
//! `p`/`project`, `n`/`no`, `e`/`edit`, `q`/`quit`/`stop`), and an empty or unknown line denies.
//!
//! The box is drawn on a [`Screen`] (the chat's on stdout, `run`'s on stderr). Lines are read
//! with reedline (`frontend::ask`) when stdin and stdout are terminals; otherwise (`run` with
//! its stdout redirected) the question is written on the screen and a plain line is read from
//! stdin, so no prompt text ever reaches a redirected stdout. Everything in a request may come
//! from the model or a file: the box shows it cleaned (`frontend::clean`), styled only by us.
//!
//! Both answer the session host's `approvalRequired` events with [`answer`], which returns the
//! action to send back: `approvalResponse`, or `interrupt` for `q`, Ctrl+C and Esc.

use std::io::{BufRead, IsTerminal};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use golem_core::registry::ToolRegistry;
use golem_protocol::{ActionEvent, ApprovalRequest, ApprovalResponse, RememberScope, Risk};
use serde_json::Value;

use super::ask::{Input, ask, line_editor_usable};
use super::clean::{clean_text, escape_json_controls};
use super::render::{RenderStyle, render_lines};
use super::screen::{Screen, Tone};
use super::terminal_keys::{ESCAPE_SEQUENCE_GAP, KeyMode, read_byte, readable};

/// Something reading keys while no prompt is up (the chat's key watcher during a turn): paused
/// while the prompt reads, resumed after.
pub trait KeyWatcher: Send + Sync {
    /// Stops reading keys and gives the terminal back as it was.
    fn pause(&self);
    /// Reads keys again.
    fn resume(&self);
}

/// What the prompt needs from the front end around it.
#[derive(Clone)]
pub struct PromptContext {
    /// Where to draw.
    pub screen: Arc<Mutex<Screen>>,
    /// The key watcher to pause while the prompt reads, if any (the chat's; `run` has none).
    pub keys: Option<Arc<dyn KeyWatcher>>,
    /// The root worker's tools, to validate edited arguments (unset: not validated here; the
    /// orchestrator validates them anyway).
    pub registry: Arc<OnceLock<Arc<ToolRegistry>>>,
}

/// Arguments longer than this many rows are cut in the prompt.
const ARG_ROWS: usize = 30;
/// Preview rows shown.
const PREVIEW_ROWS: usize = 40;
/// The question asked under the box.
const ANSWER: &str = "answer› ";
/// Said when a key that is none of the choices is pressed (then the keys that are).
const NOT_A_CHOICE: &str = "is not a choice: press";
/// The question after `n`.
const NOTE: &str = "note for the model› ";
/// The question after `e` when there is no editor.
const ARGUMENTS: &str = "arguments (JSON)› ";
/// The last line of the box.
const CHOICES: &str =
    "[y] yes  [s] session  [p] always in this project  [n] no  [e] edit  [q] stop";
/// The last line of the box of a request with nothing to edit (consent for what a call did).
const CHOICES_WITHOUT_EDIT: &str =
    "[y] yes  [s] session  [p] always in this project  [n] no  [q] stop";

/// The rules an answer "always in this project" saves for `request`: one for its arguments,
/// or, for consent to a call's effects (not editable, its arguments listing `scopes`), one per
/// scope (see `golem_core::effects`).
fn project_rules(request: &ApprovalRequest) -> Vec<golem_core::approval::ApprovalRule> {
    let for_call = |args: &serde_json::Value| {
        golem_core::approval::ApprovalRule::for_call(&request.tool_name, args)
    };
    match request
        .args
        .get("scopes")
        .and_then(serde_json::Value::as_array)
    {
        Some(scopes) if !request.editable => scopes.iter().map(for_call).collect(),
        Some(_) | None => vec![for_call(&request.args)],
    }
}

/// The choices offered for `request`.
fn choices(request: &ApprovalRequest) -> &'static str {
    if request.editable {
        CHOICES
    } else {
        CHOICES_WITHOUT_EDIT
    }
}

/// The box shown for `request`.
pub fn render_request(request: &ApprovalRequest, screen: &Screen) -> String {
    let mut text = render_request_body(request, screen);
    text.push_str(&format!("└ {}\n", screen.dim(choices(request))));
    text
}

/// The box shown for `request` without its last line (the choices): its tool, risk,
/// description, asking worker, arguments and preview.
pub fn render_request_body(request: &ApprovalRequest, screen: &Screen) -> String {
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
    text
}

/// How the prompt ended.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// The user decided (y, s, p, n, e, or an empty or unknown line).
    Response(ApprovalResponse),
    /// `q`, Ctrl+C or Esc: stop the run.
    Interrupt,
    /// Ctrl+D or the terminal closed: denied with this note.
    Closed(String),
    /// The prompt could not run (this says why).
    Failed(String),
}

/// Answers an `approvalRequired` event the way every front end does: with an action event —
/// `approvalResponse` for y/s/p/n/e, an empty or unknown piped line and a closed terminal (a
/// denial saying so), `interrupt` for `q`, Ctrl+C or Esc (the pending request is then cancelled
/// and the call ends as interrupted).
pub async fn answer(request: ApprovalRequest, context: PromptContext) -> ActionEvent {
    let id = request.request_id.clone();
    match ask_user(request, context).await {
        Answer::Response(response) => ActionEvent::ApprovalResponse(response),
        Answer::Closed(note) => {
            ActionEvent::ApprovalResponse(ApprovalResponse::deny(id, Some(note)))
        }
        Answer::Interrupt => ActionEvent::Interrupt {
            reason: Some("stopped at the approval prompt".to_owned()),
        },
        Answer::Failed(e) => ActionEvent::Interrupt {
            reason: Some(format!("the approval prompt failed: {e}")),
        },
    }
}

/// Shows `request` and reads the answer on a thread of its own (reading the terminal blocks, and
/// a read left behind by an interrupt must not hold up the async runtime's shutdown), with the
/// key watcher paused meanwhile.
async fn ask_user(request: ApprovalRequest, context: PromptContext) -> Answer {
    let (done, answer) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new()
        .name("approval-prompt".to_owned())
        .spawn(move || {
            if let Some(keys) = &context.keys {
                keys.pause();
            }
            let mut reader = TerminalReader::new();
            let answer = prompt(&request, &context, &mut reader);
            if let Some(keys) = &context.keys {
                keys.resume();
            }
            let _ = done.send(answer);
        });
    if let Err(e) = started {
        return Answer::Failed(e.to_string());
    }
    answer
        .await
        .unwrap_or_else(|_| Answer::Failed("it ended without an answer".to_owned()))
}

/// The answer to the prompt's main question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Choice {
    /// One key pressed at a terminal: its character (Enter, space and keys without one are
    /// never returned).
    Key(char),
    /// A line read where keys cannot be (stdin is not a terminal).
    Line(String),
    /// Ctrl+C, or a lone Esc at a terminal.
    Interrupt,
    /// Ctrl+D, or the terminal or stdin closed.
    Closed,
}

/// Where the prompt's answers come from (also the form prompt's, `frontend::input`).
pub(crate) trait Reader {
    /// Asks `question` (with `prefill` already typed, when the reader can) and reads the answer.
    fn read(&mut self, screen: &Mutex<Screen>, question: &str, prefill: &str) -> Input;
    /// Asks the main `question` and reads its answer: by default a line, as [`Reader::read`].
    fn choose(&mut self, screen: &Mutex<Screen>, question: &str) -> Choice {
        match self.read(screen, question, "") {
            Input::Line(line) => Choice::Line(line),
            Input::CtrlC => Choice::Interrupt,
            Input::CtrlD => Choice::Closed,
        }
    }
    /// The editor command for `e`, if one may be started.
    fn editor(&self) -> Option<String>;
}

/// Answers typed at the terminal.
pub(crate) struct TerminalReader {
    /// Whether reedline may be used (stdin and stdout are terminals); if not, the question goes
    /// to the screen and a plain line is read from stdin.
    pub(crate) line_editor: bool,
    /// Whether the main question is answered by one key (stdin is a terminal).
    pub(crate) keys: bool,
}

impl TerminalReader {
    /// A reader for the terminals this process has.
    pub(crate) fn new() -> Self {
        Self {
            line_editor: line_editor_usable(),
            keys: std::io::stdin().is_terminal(),
        }
    }
}

impl Reader for TerminalReader {
    fn choose(&mut self, screen: &Mutex<Screen>, question: &str) -> Choice {
        if !self.keys {
            return match self.read(screen, question, "") {
                Input::Line(line) => Choice::Line(line),
                Input::CtrlC => Choice::Interrupt,
                Input::CtrlD => Choice::Closed,
            };
        }
        {
            let mut screen = lock(screen);
            screen.end_line();
            screen.write(&clean_text(question));
        }
        let choice = match KeyMode::enter() {
            Some(_mode) => read_choice_key(),
            // The terminal cannot be switched (it went away): read a line as without one.
            None => {
                lock(screen).input_ended();
                self.keys = false;
                return self.choose(screen, question);
            }
        };
        let echo = match &choice {
            Choice::Key(key) => key.to_string(),
            Choice::Interrupt => "^C".to_owned(),
            Choice::Closed => "^D".to_owned(),
            Choice::Line(line) => clean_text(line).into_owned(),
        };
        lock(screen).write(&format!("{echo}\n"));
        choice
    }

    fn read(&mut self, screen: &Mutex<Screen>, question: &str, prefill: &str) -> Input {
        if self.line_editor {
            return ask(question, prefill);
        }
        {
            let mut screen = lock(screen);
            if !prefill.is_empty() {
                let now = screen.dim(&format!("now: {prefill}  (Enter keeps it)"));
                screen.line(&now);
            }
            screen.end_line();
            screen.write(&clean_text(question));
        }
        let mut line = String::new();
        match std::io::stdin().lock().read_line(&mut line) {
            Ok(0) | Err(_) => Input::CtrlD,
            Ok(_) => {
                lock(screen).input_ended();
                let line = line.trim_end_matches(['\n', '\r']);
                if line.is_empty() && !prefill.is_empty() {
                    Input::Line(prefill.to_owned())
                } else {
                    Input::Line(line.to_owned())
                }
            }
        }
    }

    fn editor(&self) -> Option<String> {
        // An editor takes over the terminal through stdout, so only when stdout is one.
        self.line_editor.then(editor).flatten()
    }
}

/// Reads keys (in [`KeyMode`]) until one answers: a printable character, Ctrl+C or a lone Esc
/// (interrupt), Ctrl+D or the end of input (closed). Enter, space, escape sequences (arrows…)
/// and other bytes are skipped, so that no stray key decides.
fn read_choice_key() -> Choice {
    loop {
        match read_byte() {
            None | Some(0x04) => return Choice::Closed,
            Some(0x03) => return Choice::Interrupt,
            Some(0x1b) => {
                if !readable(ESCAPE_SEQUENCE_GAP) {
                    return Choice::Interrupt;
                }
                skip_escape_sequence();
            }
            Some(byte @ 0x21..=0x7e) => return Choice::Key(char::from(byte)),
            Some(_) => {}
        }
    }
}

/// Reads the rest of an escape sequence whose Esc was read (an arrow key, a function key, Alt
/// with a key), and no further: keys typed after it are still read.
fn skip_escape_sequence() {
    match read_byte() {
        // CSI: parameters and intermediates, up to a final byte.
        Some(b'[') => {
            while let Some(byte) = read_byte() {
                if (0x40..=0x7e).contains(&byte) {
                    break;
                }
            }
        }
        // SS3: one more byte (F1–F4, arrows in application mode).
        Some(b'O') => {
            let _ = read_byte();
        }
        // Alt with a key, or the end of input: nothing more.
        Some(_) | None => {}
    }
}

pub(crate) fn lock(screen: &Mutex<Screen>) -> MutexGuard<'_, Screen> {
    screen.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Shows `request` and reads answers until one decides it (blocking).
fn prompt(request: &ApprovalRequest, context: &PromptContext, reader: &mut dyn Reader) -> Answer {
    {
        let mut screen = lock(&context.screen);
        screen.stop_spin();
        let text = render_request(request, &screen);
        screen.line(&text);
    }
    let id = request.request_id.clone();
    let closed = || {
        Answer::Closed(format!(
            "{} was denied: the terminal closed before an answer",
            request.tool_name
        ))
    };
    loop {
        let decision = match reader.choose(&context.screen, ANSWER) {
            Choice::Key(key) => match Decision::of_key(key) {
                Some(decision) => decision,
                None => {
                    let mut screen = lock(&context.screen);
                    let keys = match request.editable {
                        true => "y, s, p, n, e or q",
                        false => "y, s, p, n or q",
                    };
                    let text = screen.dim(&format!("`{key}` {NOT_A_CHOICE} {keys}"));
                    screen.line(&text);
                    continue;
                }
            },
            Choice::Line(line) => Decision::of_line(&line),
            Choice::Interrupt => return Answer::Interrupt,
            Choice::Closed => return closed(),
        };
        let response = match decision {
            Decision::Once => ApprovalResponse::approve(id),
            Decision::Session => {
                let mut response = ApprovalResponse::approve(id);
                response.remember = RememberScope::Session;
                response
            }
            Decision::Project => {
                {
                    let mut screen = lock(&context.screen);
                    for rule in project_rules(request) {
                        let text = screen.dim(&format!(
                            "always approved in this project: {}",
                            clean_text(&rule.to_string())
                        ));
                        screen.line(&text);
                    }
                }
                let mut response = ApprovalResponse::approve(id);
                response.remember = RememberScope::Project;
                response
            }
            Decision::Deny => {
                let note = match reader.read(&context.screen, NOTE, "") {
                    Input::Line(note) => Some(note.trim().to_owned()).filter(|n| !n.is_empty()),
                    Input::CtrlC | Input::CtrlD => None,
                };
                ApprovalResponse::deny(id, note)
            }
            Decision::Edit if !request.editable => {
                let mut screen = lock(&context.screen);
                let text = screen.dim("there is nothing to edit in this request");
                screen.line(&text);
                continue;
            }
            Decision::Edit => match edit_arguments(request, context, reader) {
                Some(args) => {
                    let mut response = ApprovalResponse::approve(id);
                    response.modified_args = Some(args);
                    response
                }
                None => continue,
            },
            Decision::Stop => return Answer::Interrupt,
            Decision::Unknown => {
                ApprovalResponse::deny(id, Some("denied at the prompt".to_owned()))
            }
        };
        return Answer::Response(response);
    }
}

/// What an answer to the main question decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// `y`: approve once.
    Once,
    /// `s`: approve for the session.
    Session,
    /// `p`: approve always in this project.
    Project,
    /// `n`: deny, with an optional note.
    Deny,
    /// `e`: edit the arguments, then approve.
    Edit,
    /// `q`: interrupt the run.
    Stop,
    /// A piped line that is none of the answers: denied.
    Unknown,
}

impl Decision {
    /// The choice of one key (either case); `None` for a key that is none of them.
    fn of_key(key: char) -> Option<Decision> {
        match key.to_ascii_lowercase() {
            'y' => Some(Decision::Once),
            's' => Some(Decision::Session),
            'p' => Some(Decision::Project),
            'n' => Some(Decision::Deny),
            'e' => Some(Decision::Edit),
            'q' => Some(Decision::Stop),
            _ => None,
        }
    }

    /// The choice of a piped line (a key or its word, either case); an empty or unknown line
    /// denies.
    fn of_line(line: &str) -> Decision {
        match line.trim().to_lowercase().as_str() {
            "y" | "yes" => Decision::Once,
            "s" | "session" => Decision::Session,
            "p" | "project" => Decision::Project,
            "n" | "no" => Decision::Deny,
            "e" | "edit" => Decision::Edit,
            "q" | "quit" | "stop" => Decision::Stop,
            _ => Decision::Unknown,
        }
    }
}

fn say(context: &PromptContext, text: &str) {
    let mut screen = lock(&context.screen);
    let text = screen.paint(Tone::Red, text);
    screen.line(&text);
}

/// The edited arguments, checked against the tool's schema; `None` when the user gave up or
/// they were invalid (the prompt then asks again).
fn edit_arguments(
    request: &ApprovalRequest,
    context: &PromptContext,
    reader: &mut dyn Reader,
) -> Option<Value> {
    let text = match reader.editor() {
        Some(editor) => edit_in_editor(&editor, &request.args)
            .map_err(|e| say(context, &e))
            .ok()?,
        None => {
            let current = serde_json::to_string(&request.args).unwrap_or_default();
            match reader.read(&context.screen, ARGUMENTS, &escape_json_controls(&current)) {
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

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
