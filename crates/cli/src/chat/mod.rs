//! `golem-forge chat`: an interactive session with a worker at the terminal, as a client of
//! the session host (`golem_runtime::host`) like every front end. Its arguments
//! ([`ChatArgs`]) are defined here; `commands/mod.rs` only names them.
//!
//! The loop reads a line with reedline (`lines.rs`: history, Tab completion from
//! `complete.rs`, zone paths from `zones.rs`). `@path` in a message attaches the file
//! (`attach.rs`). A slash command (parsed by `command/`, run by `slash.rs`) becomes a session
//! action — `/model` is `setModel`, `/new` `newSession`, `/clear` `clearHistory`, `/status`
//! `getStatus`, `/tools` `listManualTools`, `/approvals` `listApprovals`/`forgetApprovals`,
//! `/mode` `setApprovalMode`, a tool command `manualToolInvoke` (its arguments from options or
//! a `-i` form, `form.rs`); anything else is `userInput`. The terminal adapter (`events.rs`)
//! reads the display events: it draws them on the shared screen (`frontend/screen.rs`) —
//! streamed markdown, spinner, tool calls and rendered results — answers `approvalRequired` and
//! a tool's `inputRequired` question with the prompts shared with `run` (`frontend/approval.rs`,
//! `frontend/input.rs`), and hands the loop the answers it waits for (`turnEnded`,
//! `actionResult`, …) once they are drawn. During a turn `keys.rs` turns Ctrl+C and Esc into
//! `interrupt` actions. After each turn a status line says what it cost (tokens, the cache's
//! reads and writes when there were any, the price, the context's fill).

mod attach;
mod command;
mod complete;
mod events;
pub(crate) mod form;
mod keys;
mod lines;
mod slash;
mod words;
mod zones;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use golem_core::registry::ToolRegistry;
use golem_protocol::{ActionEvent, ApprovalMode, DisplayEvent, SessionEndReason, TurnStatus};
use golem_runtime::host::{ActionSender, Presence, RunningSession};
use tokio::sync::mpsc;

use crate::cli_error::CommandError;
use crate::commands::common::{TraceLevel, WorkerOptions};
use crate::frontend::approval::PromptContext;
use crate::frontend::clean::clean_text;
use crate::frontend::render::{human_cost, human_duration};
use crate::frontend::screen::{Screen, Tone};
use crate::frontend::workers::WorkerTreeView;
use crate::session::{SessionChoice, open_host};
use complete::ChatCompleter;
use events::EventRenderer;
use keys::TurnKeys;
use lines::{ChatEditor, Input};
use slash::Flow;

/// A chat in progress.
pub struct Chat {
    actions: ActionSender,
    _presence: Presence,
    replies: mpsc::UnboundedReceiver<DisplayEvent>,
    registry: Arc<ToolRegistry>,
    worker_name: String,
    screen: Arc<Mutex<Screen>>,
    renderer: EventRenderer,
    keys: Arc<Mutex<Option<Arc<TurnKeys>>>>,
    runtime: tokio::runtime::Runtime,
    running: Option<RunningSession>,
}

impl Chat {
    fn screen(&self) -> std::sync::MutexGuard<'_, Screen> {
        self.screen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Prints `text` (lines), cleaned of control characters: it may name tools, workers,
    /// models and files, or quote an error.
    pub fn say(&self, text: &str) {
        self.screen().line(&clean_text(text));
    }

    /// Prints `text` as an error (cleaned, like [`Chat::say`]).
    pub fn error(&self, text: &str) {
        let mut screen = self.screen();
        let text = screen.paint(Tone::Red, text);
        screen.line(&text);
    }

    /// Sends `action` to the session.
    pub fn send(&self, action: ActionEvent) {
        self.actions.send(action);
    }

    /// Waits for the first event (drawn already) that `want` picks; `None` when the session is
    /// over.
    pub fn wait<T>(&mut self, mut want: impl FnMut(DisplayEvent) -> Option<T>) -> Option<T> {
        let replies = &mut self.replies;
        self.runtime.block_on(async {
            while let Some(event) = replies.recv().await {
                if let Some(found) = want(event) {
                    return Some(found);
                }
            }
            None
        })
    }

    /// Sends `action` and waits for its `actionResult`, then prints its message.
    pub fn act(&mut self, action: ActionEvent) {
        self.send(action);
        let result = self.wait(|event| match event {
            DisplayEvent::ActionResult(result) => Some(result),
            _ => None,
        });
        match result {
            Some(result) if result.ok => self.say(&result.message),
            Some(result) => self.error(&result.message),
            None => self.error("the session is over"),
        }
    }

    /// The session's status, from the host.
    pub fn status(&mut self) -> Option<golem_protocol::SessionStatus> {
        self.send(ActionEvent::GetStatus { request_id: None });
        self.wait(|event| match event {
            DisplayEvent::SessionStatus(status) => Some(status),
            _ => None,
        })
    }

    /// The root worker's tools (for completion and forms).
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Prints the tree of running workers (`/workers`; while a turn runs the key watcher
    /// prints it the same way).
    pub fn show_workers(&self) {
        let workers = self.renderer.workers();
        let mut screen = self.screen();
        show_workers(&workers, &mut screen);
    }

    /// One turn of the conversation.
    fn turn(&mut self, input: &str) {
        let started = Instant::now();
        let keys = TurnKeys::start(
            self.actions.clone(),
            self.screen.clone(),
            self.renderer.workers(),
        )
        .map(Arc::new);
        *self.keys.lock().unwrap_or_else(PoisonError::into_inner) = keys.clone();
        self.send(ActionEvent::UserInput {
            request_id: None,
            content: input.to_owned(),
        });
        let ended = self.wait(|event| match event {
            DisplayEvent::TurnEnded { status, error, .. } => Some((status, error)),
            _ => None,
        });
        *self.keys.lock().unwrap_or_else(PoisonError::into_inner) = None;
        drop(keys);
        let stats = self.runtime.block_on(self.renderer.finish_turn());
        match ended {
            Some((TurnStatus::Completed, _)) => {}
            Some((TurnStatus::Interrupted, _)) => self.say("⏹ interrupted"),
            Some((TurnStatus::WaitingApproval, error)) => {
                self.say(&format!("⏸ {}", error.unwrap_or_default()))
            }
            Some((TurnStatus::Failed | TurnStatus::BudgetExceeded, error)) => {
                self.error(&format!("✗ {}", error.unwrap_or_default()))
            }
            None => self.error("✗ the session ended"),
        }
        let mut parts = vec![slash::token_counts(&stats.usage)];
        if let Some(cost) = stats.cost {
            parts.push(human_cost(cost));
        }
        if let Some(fill) = stats.context {
            parts.push(format!("ctx {} %", fill.percent()));
        }
        if stats.tools > 0 {
            parts.push(format!(
                "{} tool{}",
                stats.tools,
                if stats.tools == 1 { "" } else { "s" }
            ));
        }
        parts.push(human_duration(
            u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        ));
        let mut screen = self.screen();
        let line = screen.dim(&format!("── {}", parts.join(" · ")));
        screen.line(&line);
    }

    /// Runs a tool the user asked for; the terminal adapter draws the call and its result.
    pub fn invoke(&mut self, name: &str, args: serde_json::Value) {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = format!("user_{}", NEXT.fetch_add(1, Ordering::Relaxed));
        self.send(ActionEvent::ManualToolInvoke {
            request_id: Some(id.clone()),
            tool_name: name.to_owned(),
            args,
        });
        self.wait(|event| match event {
            DisplayEvent::ToolResult { tool_call_id, .. } if tool_call_id == id => Some(()),
            _ => None,
        });
        self.runtime.block_on(self.renderer.finish_turn());
    }
}

/// Draws the tree of running workers on `screen`, or says that none runs.
pub(crate) fn show_workers(workers: &Mutex<WorkerTreeView>, screen: &mut Screen) {
    let view = workers.lock().unwrap_or_else(PoisonError::into_inner);
    if view.is_empty() {
        let text = screen
            .dim("no worker is running (while a turn runs, type /workers and Enter to see them)");
        screen.line(&text);
        return;
    }
    let lines = view.lines(screen).join("\n");
    drop(view);
    let title = screen.paint(Tone::Bold, "workers");
    screen.line(&format!("{title}\n{lines}"));
}

/// Talk with a worker in an interactive session
#[derive(Debug, clap::Args)]
pub struct ChatArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

    #[command(flatten)]
    pub options: WorkerOptions,
}

/// Runs `golem-forge chat`.
pub fn cmd_chat(args: ChatArgs) -> Result<ExitCode, CommandError> {
    tracing::debug!(worker = %args.worker, "chat requested");
    if !std::io::stdin().is_terminal() {
        return Err(CommandError::usage("chat needs a terminal on stdin")
            .with_hint("Use `golem-forge run WORKER INPUT` (or --json) from scripts"));
    }
    // Syntax data takes tens of milliseconds to load: do it while the session starts.
    std::thread::spawn(crate::frontend::syntax::preload);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CommandError::usage(format!("cannot start the async runtime: {e}")))?;
    let screen = Arc::new(Mutex::new(Screen::stdout()));
    let keys = Arc::new(Mutex::new(None));
    let host = open_host(
        SessionChoice::Worker(&args.worker),
        &args.options,
        None,
        true,
    )?;
    if host.approval_mode() == ApprovalMode::Defer {
        // A parked call would end the turn waiting in the inbox, and a chat cannot continue
        // it. The host is dropped unstarted, so no session is left behind.
        return Err(CommandError::usage(
            "a chat cannot use the approval mode `defer`: a parked call would end the turn \
             waiting in the inbox, and the chat cannot continue it",
        )
        .with_hint(
            "Answer at the prompt (`--approval interactive`), or use `golem-forge run WORKER \
             INPUT --approval defer` for a run that waits in the inbox",
        ));
    }
    let registry = host.registry();
    let zones = zones::ZoneFiles::open(host.definition());
    let context = PromptContext {
        screen: screen.clone(),
        keys: Some(keys.clone()),
        registry: Arc::new(OnceLock::from(registry.clone())),
    };
    let worker_name = host.worker_name().to_owned();
    let model_name = host.model_name();
    let (events, actions, presence) = host.attach_interactive().into_parts();
    let (renderer, replies, running) = {
        let _guard = runtime.enter();
        let (renderer, replies) =
            EventRenderer::spawn(events, actions.clone(), context, args.options.trace);
        (renderer, replies, host.start())
    };
    // Ctrl+C outside a turn's key watcher and outside the line editor interrupts, never kills.
    let sigint = actions.clone();
    runtime.spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            sigint.send(ActionEvent::Interrupt {
                reason: Some("SIGINT".to_owned()),
            });
        }
    });
    let mut chat = Chat {
        actions,
        _presence: presence,
        replies,
        registry,
        worker_name,
        screen,
        renderer,
        keys,
        runtime,
        running: Some(running),
    };
    chat.banner(&model_name, args.options.trace);
    let history = golem_runtime::config::program_root(
        &std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from(".")),
    )
    .join(golem_runtime::config::STATE_DIR_NAME);
    let history_file = std::fs::create_dir_all(&history)
        .ok()
        .map(|()| history.join("chat-history"));
    let completer =
        ChatCompleter::new(slash::manual_tools(&chat)).with_paths(chat.registry(), zones.clone());
    let prompt = format!("{}› ", clean_text(&chat.worker_name));
    let mut editor = ChatEditor::new(&prompt, history_file.as_deref(), completer);
    let mut ctrl_c_pressed = false;
    loop {
        let input = editor.read();
        let line = match input {
            Input::CtrlD => break,
            Input::CtrlC => {
                if ctrl_c_pressed {
                    break;
                }
                ctrl_c_pressed = true;
                let mut screen = chat.screen();
                let hint = screen.dim("(Ctrl+C again or Ctrl+D to exit)");
                screen.line(&hint);
                continue;
            }
            Input::Line(line) => line,
        };
        ctrl_c_pressed = false;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if command::is_command(line) {
            if slash::handle(&mut chat, line) == Flow::Exit {
                break;
            }
            continue;
        }
        // `@path` mentions attach their files (`attach.rs`); a refusal sends nothing.
        match attach::expand(line, &zones) {
            Ok(message) => chat.turn(&message),
            Err(e) => chat.error(&clean_text(&e.to_string())),
        }
    }
    chat.close(session_root(&args.worker).as_deref());
    Ok(ExitCode::SUCCESS)
}

impl Chat {
    fn banner(&self, model_name: &str, trace: TraceLevel) {
        let mut screen = self.screen();
        let title = screen.paint(Tone::Bold, "golem-forge chat");
        let mut text = format!(
            "{title}{}",
            clean_text(&format!(
                " · worker {} · model {model_name}",
                self.worker_name
            ))
        );
        if trace != TraceLevel::Normal {
            text.push_str(&format!(" · trace {trace:?}").to_lowercase());
        }
        let hint = screen.dim(
            "Type /help for commands, Tab to complete, Esc or Ctrl+C to interrupt, Ctrl+D to exit.",
        );
        screen.line(&format!("{text}\n{hint}"));
    }

    /// Ends the session and says goodbye, with how to come back to it when it holds a
    /// conversation (a fresh session after `/new` with nothing said is not worth resuming).
    fn close(mut self, root: Option<&std::path::Path>) {
        let resumable = self
            .status()
            .filter(|status| status.messages > 0)
            .map(|status| status.session_id);
        self.send(ActionEvent::EndSession {
            reason: Some(SessionEndReason::Completed),
        });
        self.wait(|event| matches!(event, DisplayEvent::SessionEnded { .. }).then_some(()));
        if let Some(running) = self.running.take() {
            self.runtime.block_on(running.closed());
        }
        let mut screen = self.screen();
        screen.line("Bye.");
        if let Some(id) = resumable {
            let text = screen.dim(&saved_session(&id, root));
            screen.line(&text);
        }
    }
}

/// What `chat`, `serve` and an interrupted `run` say about the session `id` as they end: that
/// it is kept, and the command that continues it with one more input, as `sessions fork`
/// prints it. `root` is the program holding the session: when it is not the program of the
/// current directory (a worker named by its path elsewhere), the command starts by going there,
/// since `sessions resume` looks for the session in the current directory's program.
pub(crate) fn saved_session(id: &str, root: Option<&std::path::Path>) -> String {
    let id = clean_text(id);
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let go = match root {
        Some(root) if *root != golem_runtime::config::program_root(&cwd) => {
            let shown = root
                .strip_prefix(&cwd)
                .unwrap_or(root)
                .display()
                .to_string();
            format!(
                "cd {} && ",
                crate::shell_word::shell_word(&clean_text(&shown))
            )
        }
        Some(_) | None => String::new(),
    };
    format!(
        "Session {id} saved. Resume it with: {go}golem-forge sessions resume {id} \"your next input\""
    )
}

/// The program root of the worker `arg` names (the folder whose sessions hold its sessions);
/// `None` when it cannot be found (the session then could not have started either).
pub(crate) fn session_root(arg: &str) -> Option<std::path::PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let path = golem_runtime::registry::resolve_worker_arg(arg, &cwd).ok()?;
    let dir = path
        .parent()
        .map_or_else(|| cwd.clone(), |dir| cwd.join(dir));
    Some(golem_runtime::config::program_root(&dir))
}
