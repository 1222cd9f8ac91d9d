//! `golem-forge chat`: an interactive session with a worker at the terminal.
//!
//! The loop reads a line with reedline (`lines.rs`: history, Tab completion from
//! `complete.rs`). A slash command is carried out by `slash.rs` (manual tools through the same
//! orchestrator and approval path as the model's calls, `-i` forms from `form.rs`); anything
//! else is a turn of the conversation. The terminal adapter (`events.rs`) speaks the event
//! protocol like every front end: it draws the display events on the shared screen
//! (`frontend/screen.rs`) — streamed markdown, spinner, tool calls and rendered results — and
//! answers `approvalRequired` with an `approvalResponse` action (asked by the prompt shared with
//! `run`, `frontend/approval.rs`); during a turn `keys.rs` turns Ctrl+C and Esc into
//! `interrupt` actions. Input and manual tools go to the root worker's
//! runtime directly (the chat owns it). After each turn a status line says what it cost.

mod complete;
mod events;
mod form;
mod keys;
mod lines;
mod slash;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

use golem_protocol::{DisplayEvent, PROTOCOL_VERSION, SessionEndReason, TokenUsage};
use golem_runtime::runner::{RunStatus, WorkerRuntime};

use crate::cli_error::CommandError;
use crate::commands::chat::ChatArgs;
use crate::commands::common::TraceLevel;
use crate::frontend::approval::PromptContext;
use crate::frontend::clean::clean_text;
use crate::frontend::render::human_duration;
use crate::frontend::screen::{Screen, Tone};
use crate::session::{Prompter, WorkerSession};
use complete::ChatCompleter;
use events::EventRenderer;
use keys::TurnKeys;
use lines::{ChatEditor, Input};
use slash::Flow;

/// A chat in progress.
pub struct Chat {
    session: WorkerSession,
    worker: WorkerRuntime,
    screen: Arc<Mutex<Screen>>,
    renderer: EventRenderer,
    keys: Arc<Mutex<Option<Arc<TurnKeys>>>>,
    runtime: tokio::runtime::Runtime,
    totals: TokenUsage,
    model_name: String,
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

    /// One turn of the conversation.
    fn turn(&mut self, input: &str) {
        let started = Instant::now();
        self.session.interrupt().reset();
        let keys = TurnKeys::start(self.session.bus().clone(), self.screen.clone()).map(Arc::new);
        *self.keys.lock().unwrap_or_else(PoisonError::into_inner) = keys.clone();
        let outcome = self.runtime.block_on(self.worker.run(input));
        *self.keys.lock().unwrap_or_else(PoisonError::into_inner) = None;
        drop(keys);
        let stats = self.runtime.block_on(self.renderer.finish_turn());
        self.totals.add(&stats.usage);
        match &outcome.status {
            RunStatus::Completed => {}
            RunStatus::Interrupted => self.say("⏹ interrupted"),
            RunStatus::Failed(message) => self.error(&format!("✗ {message}")),
        }
        let mut parts = vec![format!(
            "{} in · {} out",
            stats.usage.input_tokens, stats.usage.output_tokens
        )];
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
        self.runtime.block_on(self.worker.invoke_manual(name, args));
        let stats = self.runtime.block_on(self.renderer.finish_turn());
        self.totals.add(&stats.usage);
    }
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
    let registry = Arc::new(OnceLock::new());
    let context = PromptContext {
        screen: screen.clone(),
        keys: Some(keys.clone()),
        registry: registry.clone(),
    };
    let mut session = runtime.block_on(async {
        WorkerSession::start(&args.worker, &args.options, None, Prompter::EventBus)
    })?;
    let worker = session.take_runtime().with_history(Vec::new());
    let _ = registry.set(worker.registry().clone());
    let renderer = {
        let _guard = runtime.enter();
        // `interrupt` actions (Ctrl+C, Esc, `q` at a prompt) reach the runtime through the bus.
        session.interrupt().interrupt_on_action(session.bus());
        EventRenderer::spawn(session.bus(), context, args.options.trace)
    };
    session.ui().emit(DisplayEvent::SessionStarted {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        session_id: session.id().to_owned(),
        worker: session.worker_name().to_owned(),
        model: session.model_name().to_owned(),
    });
    // Ctrl+C outside a turn's key watcher and outside the line editor interrupts, never kills.
    let bus = session.bus().clone();
    runtime.spawn(async move {
        while tokio::signal::ctrl_c().await.is_ok() {
            bus.send_action(golem_protocol::ActionEvent::Interrupt {
                reason: Some("SIGINT".to_owned()),
            });
        }
    });
    let model_name = session.model_name().to_owned();
    let mut chat = Chat {
        session,
        worker,
        screen,
        renderer,
        keys,
        runtime,
        totals: TokenUsage::default(),
        model_name,
    };
    chat.banner(args.options.trace);
    let history = crate::commands::program_root(
        &std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from(".")),
    )
    .join(".golem-forge");
    let history_file = std::fs::create_dir_all(&history)
        .ok()
        .map(|()| history.join("chat-history"));
    let completer = ChatCompleter::new(slash::manual_tools(&chat));
    let prompt = format!("{}› ", clean_text(chat.session.worker_name()));
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
        if golem_core::commands::is_command(line) {
            if slash::handle(&mut chat, line) == Flow::Exit {
                break;
            }
            continue;
        }
        chat.turn(line);
    }
    chat.close();
    Ok(ExitCode::SUCCESS)
}

impl Chat {
    fn banner(&self, trace: TraceLevel) {
        let mut screen = self.screen();
        let title = screen.paint(Tone::Bold, "golem-forge chat");
        let mut text = format!(
            "{title}{}",
            clean_text(&format!(
                " · worker {} · model {}",
                self.session.worker_name(),
                self.model_name
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

    fn close(self) {
        let Chat {
            session,
            runtime,
            totals,
            screen,
            ..
        } = self;
        session.ui().emit(DisplayEvent::SessionEnded {
            reason: SessionEndReason::Completed,
            message: None,
            usage: Some(totals),
        });
        runtime.block_on(session.finish(SessionEndReason::Completed, None));
        screen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .line("Bye.");
    }
}
