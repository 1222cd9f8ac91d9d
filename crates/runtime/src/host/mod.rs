//! The session host: one session of a root worker, below every front end. It finds the worker
//! and the program config, chooses (and later switches) the model, and owns the event bus, the
//! approval controller, the interrupt, the transcript, the conversation and the session's
//! lifecycle (start, resume, new, clear, end).
//!
//! Its only interface to a front end is the protocol: a front end [`SessionHost::attach`]es,
//! reads display events from its [`Attachment`] and sends action events (`userInput`,
//! `approvalResponse`, `interrupt`, `manualToolInvoke`, and the session actions `setModel`,
//! `newSession`, `clearHistory`, `undo`, `listManualTools`, `listApprovals`, `forgetApprovals`,
//! `getStatus`, `endSession`). Nothing here knows about terminals or sockets: `run` and `chat`
//! (crates/cli), the browser page and the MCP server are clients alike.
//!
//! In interactive approval mode every request goes out as `approvalRequired` and is answered
//! by whichever attached front end answers first; when no attached front end can answer, the
//! call is denied with the headless message (`no_terminal_message`). In the `defer` mode a call
//! that would be asked is parked in the project's approval inbox instead, and the turn ends
//! `waitingApproval`; an answer given there is taken when the session continues (a
//! `continueTurn`, or the session resumed in another process).

mod answers;
mod notify;
mod parking;
mod serve;
mod traces;
mod transcript;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use golem_core::approval::{
    ApprovalCallback, ApprovalController, ApprovalMode, CallbackError, no_terminal_message,
    ui_approval_callback,
};
use golem_core::bus::{ActionSubscription, DisplaySubscription, InputAnswerer, UiEventBus};
use golem_core::interrupt::InterruptSignal;
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_llm::Message;
use golem_llm::context::ContextWindows;
use golem_llm::pricing::PriceTable;
use golem_llm::resolve::ModelResolver;
use golem_mcp_client::{McpServerConfig, McpToolsetConfig};
use golem_protocol::{
    ActionEvent, ContextFill, DisplayEvent, PROTOCOL_VERSION, SessionEndReason, StatusLevel,
};
use golem_sandbox::undo::UndoJournal;

use crate::budget::BudgetLimits;
use crate::config::ProgramConfig;
use crate::inbox::{InboxStore, SessionInbox};
use crate::launch::{LaunchError, RootSetup, SessionEnv, build_root};
use crate::registry::WorkerRegistry;
use crate::runner::WorkerRuntime;
use crate::tree::WorkerTree;
use crate::worker::WorkerDefinition;
use golem_protocol::BatchItemRef;
use golem_session::{SessionError, SessionMeta, SessionStore};
pub use golem_telemetry::TraceOrigin;
use notify::ApprovalNotifier;
use parking::ParkingInbox;
use transcript::{HostObserver, TranscriptSlot, UsageCounts};

/// Which worker a session runs.
#[derive(Debug, Clone)]
pub enum HostWorker {
    /// A new session of the worker in this `.worker` file.
    File(PathBuf),
    /// The recorded session `id` of the program at `program_root`, continued: the same worker
    /// and, unless a model is given, the same model.
    Resume {
        /// The program's root (where `.golem-forge/sessions` is).
        program_root: PathBuf,
        /// The session id, or enough of its start to name one.
        id: String,
    },
}

/// How to open a session.
#[derive(Debug, Clone)]
#[allow(missing_docs)] // fields are named for what they hold
pub struct HostOptions {
    pub worker: HostWorker,
    /// `--model`.
    pub model: Option<String>,
    /// `GOLEM_FORGE_MODEL`.
    pub env_model: Option<String>,
    /// `--approval`; else the program config's; else interactive.
    pub approval: Option<ApprovalMode>,
    /// `--max-iterations`.
    pub max_iterations: Option<u32>,
    /// `--record FILE`.
    pub record: Option<PathBuf>,
    /// The binary that runs the process jail's helper mode.
    pub jail_helper: Option<PathBuf>,
    /// Whether the root worker keeps its conversation between turns (a chat). A resumed
    /// session always does.
    pub keeps_history: bool,
    /// `--budget-*`: limits of each turn of the root worker, besides its own `budget:` (the
    /// tighter of the two wins).
    pub budget: BudgetLimits,
    /// More instructions for the root worker in this session only (a batch item's), sent
    /// after its own.
    pub instructions: Option<String>,
    /// The batch item this session runs, named by the calls it parks in the inbox.
    pub batch_item: Option<BatchItemRef>,
    /// MCP servers the front end brings (an editor's, over ACP), by name: the root worker gets
    /// their tools as one more MCP toolset, each asked unless a project rule says otherwise.
    /// A name the worker's own `toolsets.mcp` uses is an error.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// A model for every worker of the session instead of one chosen by name, sub-workers with
    /// a `model:` of their own included (`golem-forge test`'s scripted replies); `model` and
    /// `record` are then not used.
    pub ready_model: Option<ReadyModel>,
    /// Keeps the session out of the program's state and zone folders.
    pub scratch: Option<Scratch>,
    /// Where the session's traces hang (a queued item's span, a batch to link to), when
    /// tracing is on; the batch and item ids come from `batch_item`.
    pub trace: TraceOrigin,
}

/// A model instance handed to the session ready to use.
#[derive(Clone)]
pub struct ReadyModel(pub Arc<dyn golem_llm::Model>);

impl std::fmt::Debug for ReadyModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ReadyModel({})", self.0.spec())
    }
}

/// Where a session runs apart from the user's files (a case of `golem-forge test`).
#[derive(Debug, Clone)]
pub struct Scratch {
    /// Used instead of the program root for what the session writes (its transcript and undo
    /// journal, the approval inbox) and for the project's approval rules (none unless a file
    /// is put there), so the program's `.golem-forge/` is neither read for them nor written.
    pub state_root: PathBuf,
    /// Each zone of the root worker is this directory's subdirectory of the zone's name, which
    /// must exist; the zone's configured folder is never opened.
    pub zones_dir: PathBuf,
}

impl HostOptions {
    /// A new session of `worker` with nothing else chosen: the model, the approval mode and
    /// the limits come from the worker and the program config; one turn, no history kept.
    pub fn new(worker: HostWorker) -> HostOptions {
        HostOptions {
            worker,
            model: None,
            env_model: None,
            approval: None,
            max_iterations: None,
            record: None,
            jail_helper: None,
            keeps_history: false,
            budget: BudgetLimits::default(),
            instructions: None,
            batch_item: None,
            mcp_servers: BTreeMap::new(),
            ready_model: None,
            scratch: None,
            trace: TraceOrigin::default(),
        }
    }
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The program config or the workers around the worker file are wrong.
    #[error("{0}")]
    Config(String),
    /// The worker could not be put together (its file, its model, its tools).
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The transcript could not be created or read.
    #[error(transparent)]
    Session(#[from] SessionError),
}

/// What the dispatcher and the worker share, for answers given while a turn runs.
pub(crate) struct SharedState {
    session_id: Mutex<String>,
    /// User turns so far in this transcript (a resumed session continues its count).
    turns: AtomicU32,
    model: Mutex<String>,
    busy: AtomicBool,
    ending: AtomicBool,
    messages: Arc<AtomicU64>,
    usage: Arc<Mutex<UsageCounts>>,
    /// How full the root worker's context was after its last model call.
    context: Arc<Mutex<Option<ContextFill>>>,
}

impl SharedState {
    fn session_id(&self) -> String {
        self.session_id
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn model(&self) -> String {
        self.model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn usage(&self) -> UsageCounts {
        *self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn context(&self) -> Option<ContextFill> {
        *self.context.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Forgets how full the context was (the conversation was cleared).
    fn forget_context(&self) {
        *self.context.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
}

/// One session of a root worker, ready to start.
pub struct SessionHost {
    bus: UiEventBus,
    ui: RuntimeUI,
    interrupt: InterruptSignal,
    answerers: Arc<AtomicUsize>,
    unattended: Arc<OnceLock<String>>,
    actions: ActionSubscription,
    recorder: DisplaySubscription,
    runtime: WorkerRuntime,
    transcript: TranscriptSlot,
    shared: Arc<SharedState>,
    env: Arc<SessionEnv>,
    definition: Arc<WorkerDefinition>,
    worker_name: String,
    /// What a cut-off run left unsettled for undo, told once the session starts.
    undo_notice: Option<String>,
    /// The session's view of the approval inbox.
    inbox: Arc<SessionInbox>,
    /// Runs the `notify:` command; the session waits for the ones run for parked calls.
    notifier: Option<ApprovalNotifier>,
    /// The session's spans, when tracing is on.
    traces: Option<traces::SessionTraces>,
    /// A new session until it starts: a host dropped unstarted removes it (declared last, so
    /// the transcript's writer is closed first).
    unused: Option<UnusedSession>,
}

/// A session `open` created: dropped before the host starts, it is removed, so a command that
/// fails after opening its session (or gives up on it) leaves nothing in `sessions list`.
struct UnusedSession {
    store: SessionStore,
    id: String,
    /// Cleared once the session starts.
    armed: bool,
}

impl Drop for UnusedSession {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Err(err) = self.store.discard_unused(&self.id) {
            tracing::warn!(session = %self.id, "cannot remove the unused session: {err}");
        }
    }
}

/// A front end's place at a session: the display events from the moment it attached, and a
/// way to send actions. While an attachment that answers approvals exists, approval requests
/// wait for an answer; dropping it gives up that role.
pub struct Attachment {
    events: DisplaySubscription,
    bus: UiEventBus,
    _answerer: Option<AnswererGuard>,
    _input: Option<InputAnswerer>,
}

impl Attachment {
    /// The next display event; `None` once the session is over and every event was read.
    pub async fn recv(&mut self) -> Option<DisplayEvent> {
        self.events.recv().await
    }

    /// Sends an action to the session.
    pub fn send(&self, action: ActionEvent) {
        self.bus.send_action(action);
    }

    /// A sender of actions that can outlive a borrow of the attachment (key watchers, signal
    /// handlers).
    pub fn sender(&self) -> ActionSender {
        ActionSender {
            bus: self.bus.clone(),
        }
    }

    /// The parts, for a front end that reads the events in a task of its own: the events, a
    /// sender, and its [`Presence`] (hold it as long as the front end answers approvals).
    pub fn into_parts(self) -> (DisplaySubscription, ActionSender, Presence) {
        let sender = self.sender();
        (
            self.events,
            sender,
            Presence {
                _answerer: self._answerer,
                _input: self._input,
            },
        )
    }
}

/// A front end's role as an answerer of approvals, kept while this lives.
pub struct Presence {
    _answerer: Option<AnswererGuard>,
    _input: Option<InputAnswerer>,
}

/// Sends actions to a session.
#[derive(Clone)]
pub struct ActionSender {
    bus: UiEventBus,
}

impl ActionSender {
    /// Sends `action` to the session.
    pub fn send(&self, action: ActionEvent) {
        self.bus.send_action(action);
    }
}

/// Counts a front end that can answer approvals while it lives.
struct AnswererGuard(Arc<AtomicUsize>);

impl Drop for AnswererGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A started session: wait for it to end with [`RunningSession::closed`].
pub struct RunningSession {
    task: tokio::task::JoinHandle<()>,
}

impl RunningSession {
    /// Waits until the session has ended and its transcript is closed.
    pub async fn closed(self) {
        if let Err(e) = self.task.await {
            tracing::error!(error = %e, "the session host stopped unexpectedly");
        }
    }
}

/// Asks through the bus while some attached front end can answer; otherwise denies with the
/// headless message, as a session without a terminal always has, or with `unattended`'s
/// reason once a front end set one ([`SessionHost::with_unattended_reason`]).
/// A request that waits long enough runs the `notify:` command, if there is one. While it
/// waits, the tree of workers shows its worker as waiting on an approval.
fn attached_approval_callback(
    ui: RuntimeUI,
    answerers: Arc<AtomicUsize>,
    unattended: Arc<OnceLock<String>>,
    notifier: Option<ApprovalNotifier>,
    tree: Arc<WorkerTree>,
) -> ApprovalCallback {
    let ask = ui_approval_callback(ui);
    Arc::new(move |request, cancel| {
        if answerers.load(Ordering::SeqCst) == 0 {
            let message = match unattended.get() {
                Some(why) => format!("{} was denied: {why}", request.tool_name),
                None => no_terminal_message(&request.tool_name),
            };
            return Box::pin(async move { Err(CallbackError::Unavailable(message)) });
        }
        let nudge = notifier.as_ref().map(|n| n.watch(&request));
        // The root's calls carry no origin.
        let worker = request.worker.as_ref().map(|w| w.id.clone());
        tree.set_awaiting(worker.as_deref(), true);
        let answer = ask(request, cancel);
        let tree = tree.clone();
        Box::pin(async move {
            let answer = answer.await;
            tree.set_awaiting(worker.as_deref(), false);
            drop(nudge);
            answer
        })
    })
}

impl SessionHost {
    /// Opens a session: finds the program config around the worker, builds the root worker
    /// and creates (or reopens) its transcript. Nothing is emitted until [`SessionHost::start`].
    pub fn open(options: HostOptions) -> Result<Self, HostError> {
        // The span of the resumed session's last root run: a continuation of its turn joins
        // that run's trace.
        let mut last_root_trace = None;
        let (worker_path, resume) = match &options.worker {
            HostWorker::File(path) => (path.clone(), None),
            HostWorker::Resume { program_root, id } => {
                let store = SessionStore::new(program_root);
                let transcript = store.load(id)?;
                last_root_trace = traces::last_root_trace(&transcript.entries);
                // A killed session's calls left waiting for an approval are asked again.
                let history = transcript.resume_point();
                let path = transcript.meta.worker_path.clone();
                let model = options
                    .model
                    .clone()
                    .or(Some(transcript.meta.model.clone()));
                let turns = transcript.turns();
                (path, Some((store, transcript.id, (history, turns), model)))
            }
        };
        let worker_dir = worker_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let config =
            ProgramConfig::discover(&worker_dir).map_err(|e| HostError::Config(e.to_string()))?;
        let telemetry = golem_telemetry::Telemetry::for_process(config.telemetry.as_ref());
        let registry = WorkerRegistry::discover(&config, &worker_dir)
            .map_err(|e| HostError::Config(e.to_string()))?;

        let bus = UiEventBus::new();
        let ui = RuntimeUI::new(bus.clone());
        let interrupt = InterruptSignal::new();
        let answerers = Arc::new(AtomicUsize::new(0));
        let unattended = Arc::new(OnceLock::new());
        let tree = WorkerTree::new(ui.clone());
        tree.set_trace_origin(options.trace.parent);
        if let Some(last) = last_root_trace {
            tree.set_last_root_trace(last);
        }
        let mode = options
            .approval
            .or(config.approval.mode)
            .unwrap_or(ApprovalMode::Interactive);
        // A scratch session tells nobody: its approvals are answered by its front end.
        let notify = config.notify.clone().filter(|_| options.scratch.is_none());
        let notifier = notify.map(|settings| {
            ApprovalNotifier::new(settings, ui.clone(), options.jail_helper.clone())
        });
        let state_root = match &options.scratch {
            Some(scratch) => scratch.state_root.clone(),
            None => config.root.clone(),
        };
        let inbox = SessionInbox::new(InboxStore::new(&state_root), options.batch_item.clone());
        let controller = ApprovalController::new(mode)
            .with_callback(attached_approval_callback(
                ui.clone(),
                answerers.clone(),
                unattended.clone(),
                notifier.clone(),
                tree.clone(),
            ))
            .with_inbox(Arc::new(ParkingInbox {
                inbox: inbox.clone(),
                notifier: notifier.clone(),
            }))
            .with_rules(
                crate::approvals_file::project_rules(&state_root)
                    .map_err(|e| HostError::Config(e.to_string()))?,
            );
        let transcript = TranscriptSlot::default();
        let messages = Arc::new(AtomicU64::new(0));
        let usage = Arc::new(Mutex::new(UsageCounts::default()));
        let context = Arc::new(Mutex::new(None));
        let observer = Arc::new(HostObserver {
            transcript: transcript.clone(),
            usage: usage.clone(),
            messages: messages.clone(),
            context: context.clone(),
            inbox: inbox.clone(),
        });
        let store = SessionStore::new(&state_root);
        let redactor = SessionEnv::secrets_of(&config);
        // Bound to the session's directory once its id is known (below).
        let undo = Arc::new(UndoJournal::unbound(config.undo.max_bytes()));
        let notices = ui.clone();
        undo.set_notices(Arc::new(move |message| {
            notices.emit(DisplayEvent::Status {
                level: StatusLevel::Warning,
                message,
            })
        }));
        let cli_model = match &resume {
            Some((.., model)) => model.clone(),
            None => options.model.clone(),
        };
        let env = Arc::new(SessionEnv {
            resolver: ModelResolver::new(config.providers.clone())
                .with_settings(config.model_requests.http_settings())
                .with_prices(PriceTable::defaults().with(&config.prices))
                .with_context_windows(ContextWindows::defaults().with(&config.context_windows)),
            max_depth: config.delegation.max_depth,
            config: Arc::new(config),
            registry: Arc::new(registry),
            controller,
            ui: ui.clone(),
            interrupt: interrupt.clone(),
            observer: Some(observer),
            cli_model,
            env_model: options.env_model.clone(),
            max_iterations: options.max_iterations,
            record: options.record.clone(),
            ready_model: options.ready_model.as_ref().map(|ready| ready.0.clone()),
            redactor,
            jail_helper: options.jail_helper.clone(),
            tree,
            budget: options.budget,
            undo: Some(undo.clone()),
            client_mcp: (!options.mcp_servers.is_empty()).then(|| McpToolsetConfig {
                servers: options.mcp_servers.clone(),
                ..McpToolsetConfig::default()
            }),
        });
        let setup = RootSetup {
            zones_dir: options.scratch.as_ref().map(|s| s.zones_dir.clone()),
        };
        let (mut runtime, definition, model_name) = build_root(&env, &worker_path, &setup)?;
        if let Some(more) = &options.instructions {
            runtime.append_instructions(more);
        }
        let mut turns = 0;
        let created = resume.is_none();
        let writer = match resume {
            None => {
                if options.keeps_history {
                    runtime = runtime.with_history(Vec::new());
                }
                store.create(SessionMeta::new(
                    &definition.name,
                    &worker_path,
                    &model_name,
                    definition.mode.as_str(),
                ))?
            }
            Some((resume_store, id, (point, inputs), _)) => {
                messages.store(point.history.len() as u64, Ordering::Relaxed);
                turns = inputs;
                runtime = runtime
                    .with_history(point.history)
                    .with_pending_calls(point.pending);
                resume_store.reopen(&id)?
            }
        };
        let session_id = writer.id().to_owned();
        let unused = created.then(|| UnusedSession {
            store: store.clone(),
            id: session_id.clone(),
            armed: true,
        });
        inbox.bind(&session_id, &definition.name);
        runtime.set_cache_key(&session_id);
        transcript.replace(writer);
        let undo_notice = bind_undo(&undo, &store, &session_id);
        // Subscribed now, so that nothing sent or emitted after `open` is missed.
        let actions = bus.subscribe_actions();
        let recorder = bus.subscribe();
        let traces = telemetry.map(|telemetry| {
            let mut origin = options.trace.clone();
            if let Some(item) = &options.batch_item {
                origin.batch_id.get_or_insert_with(|| item.batch.clone());
                origin.item_id.get_or_insert_with(|| item.item.clone());
            }
            traces::SessionTraces::new(telemetry, origin, bus.subscribe())
        });
        Ok(Self {
            shared: Arc::new(SharedState {
                session_id: Mutex::new(session_id),
                turns: AtomicU32::new(u32::try_from(turns).unwrap_or(u32::MAX)),
                model: Mutex::new(model_name),
                busy: AtomicBool::new(false),
                ending: AtomicBool::new(false),
                messages,
                usage,
                context,
            }),
            worker_name: definition.name.clone(),
            bus,
            ui,
            interrupt,
            answerers,
            unattended,
            actions,
            recorder,
            runtime,
            transcript,
            env,
            definition,
            undo_notice,
            inbox,
            notifier,
            traces,
            unused,
        })
    }

    /// Attaches a front end: it sees every display event from now on (attach before
    /// [`SessionHost::start`] to see `sessionStarted`). `answers_approvals` says whether it
    /// answers `approvalRequired` events.
    pub fn attach(&self, answers_approvals: bool) -> Attachment {
        let answerer = answers_approvals.then(|| {
            self.answerers.fetch_add(1, Ordering::SeqCst);
            AnswererGuard(self.answerers.clone())
        });
        Attachment {
            events: self.bus.subscribe(),
            bus: self.bus.clone(),
            _answerer: answerer,
            _input: None,
        }
    }

    /// Attaches a front end with someone at it (a terminal, the browser): it answers
    /// approvals and also the questions tools ask while they run (`inputRequired` forms,
    /// such as an MCP server's elicitation). While none is attached, tools are told that
    /// nobody can answer and decline such questions themselves.
    pub fn attach_interactive(&self) -> Attachment {
        Attachment {
            _input: Some(self.bus.register_input_answerer()),
            ..self.attach(true)
        }
    }

    /// The session's id (its transcript's name).
    pub fn session_id(&self) -> String {
        self.shared.session_id()
    }

    /// The root worker's name.
    pub fn worker_name(&self) -> &str {
        &self.worker_name
    }

    /// The model, as `provider:model`.
    pub fn model_name(&self) -> String {
        self.shared.model()
    }

    /// The root worker's definition.
    pub fn definition(&self) -> &WorkerDefinition {
        &self.definition
    }

    /// The root worker's tools: what an in-process front end completes and builds forms from
    /// (the same data `listManualTools` sends).
    pub fn registry(&self) -> Arc<ToolRegistry> {
        self.runtime.registry().clone()
    }

    /// How calls that need consent are decided when the session starts.
    pub fn approval_mode(&self) -> ApprovalMode {
        self.runtime.controller().mode()
    }

    /// Whether calls of the last turn wait for an approval (a parked session, resumed):
    /// `continueTurn` goes on from there.
    pub fn is_waiting(&self) -> bool {
        self.runtime.is_waiting()
    }

    /// The conversation so far (of a resumed session).
    pub fn history(&self) -> &[Message] {
        self.runtime.history()
    }

    /// Says why nobody can be asked (`why`, completing "TOOL was denied: …"): a call that needs
    /// consent while no front end answering approvals is attached is denied with it instead of
    /// the headless message, which speaks of a terminal. Set once; later reasons are ignored.
    pub fn with_unattended_reason(self, why: impl Into<String>) -> Self {
        let _ = self.unattended.set(why.into());
        self
    }

    /// Bounds the summary asked for after an interrupt (tests use a short one).
    pub fn with_summary_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.runtime = self.runtime.with_summary_timeout(timeout);
        self
    }

    /// Starts the session: emits `sessionStarted` and takes actions until `endSession`. Must be called within a Tokio runtime.
    pub fn start(mut self) -> RunningSession {
        if let Some(unused) = &mut self.unused {
            unused.armed = false;
        }
        self.ui.emit(DisplayEvent::SessionStarted {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            session_id: self.shared.session_id(),
            worker: self.worker_name.clone(),
            model: self.shared.model(),
        });
        if let Some(message) = self.undo_notice.take() {
            self.ui.emit(DisplayEvent::Status {
                level: StatusLevel::Warning,
                message,
            });
        }
        RunningSession {
            task: tokio::spawn(serve::serve(self)),
        }
    }
}

/// Binds the session's undo journal to its directory; what a cut-off run of the session left
/// unsettled (a change or an undo), to tell the user at start. A journal that cannot be read
/// leaves undo off for the session, with a warning.
fn bind_undo(undo: &UndoJournal, store: &SessionStore, id: &str) -> Option<String> {
    match undo.switch(&store.undo_dir(id)) {
        Ok(()) => undo.interrupted().map(|what| format!("undo: {what}")),
        Err(err) => Some(format!(
            "undo is off for this session: its journal in {} cannot be read ({err})",
            store.undo_dir(id).display()
        )),
    }
}

/// Why the session ended and what it said last, from the last turn.
fn ending(
    requested: Option<SessionEndReason>,
    last: Option<&serve::TurnRecord>,
) -> (SessionEndReason, Option<String>) {
    let from_turn = last.map(|turn| (turn.reason, turn.message.clone()));
    match (requested, from_turn) {
        (None, Some((reason, message))) => (reason, message),
        (None, None) => (SessionEndReason::Completed, None),
        (Some(reason), Some((turn_reason, message))) if reason == turn_reason => (reason, message),
        (Some(reason), Some(_) | None) => (reason, None),
    }
}
