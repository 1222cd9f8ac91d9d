//! A worker session for the commands that run workers (`run`, later `chat` and `serve`): finds
//! the worker and its program config, picks the model, wires approval, the event bus, the
//! interrupt (Ctrl+C) and the session transcript, and builds the root worker.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use golem_core::approval::{ApprovalController, ApprovalMode, ui_approval_callback};
use golem_core::bus::UiEventBus;
use golem_core::interrupt::InterruptSignal;
use golem_core::orchestrator::CallOutcome;
use golem_core::ui::RuntimeUI;
use golem_llm::Message;
use golem_llm::resolve::ModelResolver;
use golem_protocol::SessionEndReason;
use golem_runtime::config::ProgramConfig;
use golem_runtime::launch::{LaunchError, SessionEnv, build_root};
use golem_runtime::registry::{WorkerRegistry, resolve_worker_arg};
use golem_runtime::runner::{RunObserver, WorkerRuntime};
use golem_runtime::session::{SessionMeta, SessionStore, SessionWriter, TranscriptEntry};
use golem_runtime::worker::WorkerDefinition;

use crate::cli_error::CommandError;
use crate::commands::common::WorkerOptions;
use crate::frontend::approval::terminal_approval_callback;

/// Writes the root worker's conversation and tool calls to the transcript.
struct TranscriptObserver {
    writer: Arc<Mutex<Option<SessionWriter>>>,
}

impl TranscriptObserver {
    fn append(&self, entry: TranscriptEntry) {
        append(&self.writer, &entry);
    }
}

fn append(writer: &Mutex<Option<SessionWriter>>, entry: &TranscriptEntry) {
    let mut writer = writer
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(writer) = writer.as_mut()
        && let Err(e) = writer.append(entry)
    {
        tracing::error!(error = %e, "cannot append to the session transcript");
    }
}

impl RunObserver for TranscriptObserver {
    fn input(&self, content: &str) {
        self.append(TranscriptEntry::Input {
            content: content.to_owned(),
        });
    }
    fn message(&self, message: &Message) {
        self.append(TranscriptEntry::Message {
            message: message.clone(),
        });
    }
    fn tool_call(&self, outcome: &CallOutcome) {
        self.append(TranscriptEntry::ToolCall(outcome.into()));
    }
}

/// Who answers approval requests in interactive mode.
pub enum Prompter {
    /// Nobody: interactive approval denies with the headless message.
    None,
    /// The plain terminal prompt of `run`.
    Terminal,
    /// A front end on the event bus: requests go out as `approvalRequired` events and are
    /// answered with `approvalResponse` actions (as the chat and the browser do).
    EventBus,
}

impl Prompter {
    /// The terminal prompt when `yes`, else none.
    pub fn terminal_if(yes: bool) -> Prompter {
        if yes {
            Prompter::Terminal
        } else {
            Prompter::None
        }
    }
}

/// A root worker ready to run, with its session around it.
pub struct WorkerSession {
    runtime: Option<WorkerRuntime>,
    bus: UiEventBus,
    ui: RuntimeUI,
    interrupt: InterruptSignal,
    writer: Arc<Mutex<Option<SessionWriter>>>,
    recorder: tokio::task::JoinHandle<()>,
    id: String,
    worker_name: String,
    model_name: String,
    env: Arc<SessionEnv>,
    definition: Arc<WorkerDefinition>,
}

fn launch_error(err: LaunchError) -> CommandError {
    match err {
        LaunchError::Config(message) | LaunchError::Unsupported(message) => {
            CommandError::usage(message)
        }
        LaunchError::Model(err) => {
            let hint = match &err {
                golem_llm::ModelError::MissingApiKey { env, .. } => Some(format!(
                    "Set {env}, or run offline with `--model test:default`"
                )),
                _ => None,
            };
            let error = CommandError::usage(err.to_string());
            match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            }
        }
    }
}

fn current_dir() -> Result<PathBuf, CommandError> {
    std::env::current_dir()
        .map_err(|e| CommandError::usage(format!("cannot read the current directory: {e}")))
}

impl WorkerSession {
    /// Finds and builds the worker named on the command line, for a new session.
    /// `prompter` answers interactive approval requests.
    pub fn start(
        worker_arg: &str,
        options: &WorkerOptions,
        max_iterations: Option<u32>,
        prompter: Prompter,
    ) -> Result<Self, CommandError> {
        let cwd = current_dir()?;
        let worker_path: PathBuf =
            resolve_worker_arg(worker_arg, &cwd).map_err(|e| CommandError::usage(e.to_string()))?;
        Self::open(&worker_path, options, max_iterations, prompter, None)
    }

    /// Reopens the recorded session `id` (found from the current directory): the same worker
    /// and, unless `--model` says otherwise, the same model, continuing its conversation.
    pub fn resume(
        id: &str,
        options: &WorkerOptions,
        max_iterations: Option<u32>,
        prompter: Prompter,
    ) -> Result<Self, CommandError> {
        let cwd = current_dir()?;
        let store = SessionStore::new(&crate::commands::program_root(&cwd));
        let transcript = store
            .load(id)
            .map_err(|e| CommandError::usage(e.to_string()))?;
        let mut options = options.clone();
        if options.model.is_none() {
            options.model = Some(transcript.meta.model.clone());
        }
        let history = transcript.messages();
        Self::open(
            &transcript.meta.worker_path,
            &options,
            max_iterations,
            prompter,
            Some((store, transcript.id, history)),
        )
    }

    fn open(
        worker_path: &std::path::Path,
        options: &WorkerOptions,
        max_iterations: Option<u32>,
        prompter: Prompter,
        resume: Option<(SessionStore, String, Vec<Message>)>,
    ) -> Result<Self, CommandError> {
        let cwd = current_dir()?;
        let worker_path = worker_path.to_owned();
        let worker_dir = worker_path
            .parent()
            .map(PathBuf::from)
            .unwrap_or_else(|| cwd.clone());
        let config =
            ProgramConfig::discover(&worker_dir).map_err(|e| CommandError::usage(e.to_string()))?;
        let registry = WorkerRegistry::discover(&config, &worker_dir)
            .map_err(|e| CommandError::usage(e.to_string()))?;

        let bus = UiEventBus::new();
        let ui = RuntimeUI::new(bus.clone());
        let interrupt = InterruptSignal::new();
        let mode = options
            .approval
            .map(ApprovalMode::from)
            .or(config.approval.mode)
            .unwrap_or(ApprovalMode::Interactive);
        let mut controller = ApprovalController::new(mode);
        // The root worker's tools, once built: the prompt validates edited arguments with them.
        let tools = Arc::new(OnceLock::new());
        if mode == ApprovalMode::Interactive {
            match prompter {
                Prompter::None => {}
                Prompter::Terminal => {
                    controller = controller.with_callback(terminal_approval_callback(
                        interrupt.clone(),
                        tools.clone(),
                    ));
                }
                Prompter::EventBus => {
                    controller = controller.with_callback(ui_approval_callback(ui.clone()));
                }
            }
        }
        let writer: Arc<Mutex<Option<SessionWriter>>> = Arc::new(Mutex::new(None));
        let observer = Arc::new(TranscriptObserver {
            writer: writer.clone(),
        });
        let store = SessionStore::new(&config.root);
        let redactor = SessionEnv::secrets_of(&config);
        let env = Arc::new(SessionEnv {
            resolver: ModelResolver::new(config.providers.clone()),
            max_depth: config.delegation.max_depth,
            config: Arc::new(config),
            registry: Arc::new(registry),
            controller,
            ui: ui.clone(),
            interrupt: interrupt.clone(),
            observer: Some(observer),
            cli_model: options.model.clone(),
            env_model: std::env::var("GOLEM_FORGE_MODEL")
                .ok()
                .filter(|m| !m.trim().is_empty()),
            max_iterations,
            record: options.record.clone(),
            redactor,
            jail_helper: std::env::current_exe().ok(),
        });
        let (mut runtime, definition, model_name) =
            build_root(&env, &worker_path).map_err(launch_error)?;
        let _ = tools.set(runtime.registry().clone());

        let session_writer = match resume {
            None => {
                let meta = SessionMeta::new(
                    &definition.name,
                    &worker_path,
                    &model_name,
                    definition.mode.as_str(),
                );
                store.create(meta)
            }
            Some((resume_store, id, history)) => {
                runtime = runtime.with_history(history);
                resume_store.reopen(&id)
            }
        }
        .map_err(|e| CommandError::usage(e.to_string()))?;
        let id = session_writer.id().to_owned();
        *writer.lock().unwrap_or_else(|p| p.into_inner()) = Some(session_writer);

        // Every display event goes to the transcript, in order.
        let mut events = bus.subscribe();
        let recorder_writer = writer.clone();
        let recorder = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                let last = matches!(event, golem_protocol::DisplayEvent::SessionEnded { .. });
                append(&recorder_writer, &TranscriptEntry::Event { event });
                if last {
                    return;
                }
            }
        });
        Ok(Self {
            runtime: Some(runtime),
            bus,
            ui,
            interrupt,
            writer,
            recorder,
            id,
            worker_name: definition.name.clone(),
            model_name,
            env,
            definition,
        })
    }

    /// The event bus.
    pub fn bus(&self) -> &UiEventBus {
        &self.bus
    }

    /// The UI handle.
    pub fn ui(&self) -> &RuntimeUI {
        &self.ui
    }

    /// The session id (its transcript's name).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The root worker's name.
    pub fn worker_name(&self) -> &str {
        &self.worker_name
    }

    /// The model, as `provider:model`.
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// The root worker's definition.
    pub fn definition(&self) -> &WorkerDefinition {
        &self.definition
    }

    /// The interrupt shared with the runtime.
    pub fn interrupt(&self) -> &InterruptSignal {
        &self.interrupt
    }

    /// The model called `name`, if it exists, is usable (its key is set) and fits the root
    /// worker's `compatible_models`: what a chat's `/model NAME` switches to.
    pub fn resolve_model(&self, name: &str) -> Result<Arc<dyn golem_llm::Model>, String> {
        self.definition
            .check_compatible(name)
            .map_err(|e| e.to_string())?;
        self.env.resolver.resolve(name).map_err(|e| e.to_string())
    }

    /// Closes this session's transcript and starts a new one for the same worker with `model`
    /// (a chat's `/new`); events from now on go to the new transcript. Returns the new id.
    pub fn start_new_transcript(&mut self, model: &str) -> Result<String, String> {
        let store = SessionStore::new(&self.env.config.root);
        let meta = SessionMeta::new(
            &self.definition.name,
            &self.definition.path,
            model,
            self.definition.mode.as_str(),
        );
        let fresh = store.create(meta).map_err(|e| e.to_string())?;
        let id = fresh.id().to_owned();
        let old = self
            .writer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(fresh);
        if let Some(mut old) = old {
            let ended = TranscriptEntry::Ended {
                reason: SessionEndReason::Completed,
                message: Some(format!("continued as session {id}")),
            };
            if let Err(e) = old.append(&ended).and_then(|()| old.finish()) {
                tracing::error!(error = %e, "cannot close the session transcript");
            }
        }
        self.id = id.clone();
        Ok(id)
    }

    /// The root worker's runtime (once).
    pub fn take_runtime(&mut self) -> WorkerRuntime {
        // Invariant: `start` always sets the runtime, and callers take it once.
        self.runtime
            .take()
            .unwrap_or_else(|| unreachable!("the runtime is taken once"))
    }

    /// Interrupts the run on Ctrl+C; a second Ctrl+C (even while the model summarises) exits
    /// at once (130).
    pub fn interrupt_on_ctrl_c(&self) -> tokio::task::JoinHandle<()> {
        let interrupt = self.interrupt.clone();
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let mut presses = 0u32;
            while tokio::signal::ctrl_c().await.is_ok() {
                presses += 1;
                if presses > 1 {
                    append(
                        &writer,
                        &TranscriptEntry::Ended {
                            reason: SessionEndReason::Interrupted,
                            message: None,
                        },
                    );
                    eprintln!("\nInterrupted twice: exiting");
                    std::process::exit(130);
                }
                eprintln!("\nInterrupting… (Ctrl+C again to exit at once)");
                interrupt.interrupt();
            }
        })
    }

    /// Waits for the transcript to take every event, and closes it.
    pub async fn finish(self, reason: SessionEndReason, message: Option<String>) {
        let _ = self.recorder.await;
        let writer = self.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut writer) = writer {
            if let Err(e) = writer.append(&TranscriptEntry::Ended { reason, message }) {
                tracing::error!(error = %e, "cannot close the session transcript");
            }
            if let Err(e) = writer.finish() {
                tracing::error!(error = %e, "cannot sync the session transcript");
            }
        }
    }
}
