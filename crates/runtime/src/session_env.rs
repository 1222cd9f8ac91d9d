//! What the launcher and the delegation tools share, below both: what every worker of a
//! session shares ([`SessionEnv`]: config, worker registry, approval controller, UI and
//! interrupt), where a worker stands when it is built ([`WorkerFrame`]), and why it cannot be
//! ([`LaunchError`]). `launch` re-exports them; a delegation tool reaches the launcher only
//! through the [`BuildWorker`](crate::delegation::BuildWorker) it is given.

use std::path::PathBuf;
use std::sync::Arc;

use golem_core::approval::ApprovalController;
use golem_core::interrupt::InterruptSignal;
use golem_core::redact::SecretRedactor;
use golem_core::ui::RuntimeUI;
use golem_llm::Model;
use golem_llm::resolve::ModelResolver;
use golem_sandbox::Sandbox;
use golem_toolset::ToolsetError;

use crate::budget::BudgetLimits;
use crate::config::ProgramConfig;
use crate::registry::WorkerRegistry;
use crate::runner::RunObserver;
use crate::tree::WorkerTree;

/// Why a worker could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The worker file or program config is wrong.
    #[error("{0}")]
    Config(String),
    /// The model cannot be used.
    #[error("{0}")]
    Model(#[from] golem_llm::ModelError),
    /// A toolset the worker asks for is not built yet.
    #[error("{0}")]
    Unsupported(String),
}

/// What every worker of a session shares.
#[allow(missing_docs)] // fields are named for what they hold
pub struct SessionEnv {
    /// The program config.
    pub config: Arc<ProgramConfig>,
    /// Where workers are found by name.
    pub registry: Arc<WorkerRegistry>,
    /// Turns model names into models.
    pub resolver: ModelResolver,
    /// The approval controller (and its session memory).
    pub controller: ApprovalController,
    /// Where events go.
    pub ui: RuntimeUI,
    pub interrupt: InterruptSignal,
    /// The transcript (the root's conversation; every worker's tool calls).
    pub observer: Option<Arc<dyn RunObserver>>,
    /// `--model`, for the root worker.
    pub cli_model: Option<String>,
    /// `GOLEM_FORGE_MODEL`, for the root worker.
    pub env_model: Option<String>,
    /// `--max-iterations`, overriding every worker's.
    pub max_iterations: Option<u32>,
    /// `delegation.max_depth`.
    pub max_depth: u32,
    /// `--record FILE`: record the root model's exchanges.
    pub record: Option<PathBuf>,
    /// A model every worker of the session uses instead of one chosen by name, a sub-worker
    /// with a `model:` of its own included (`golem-forge test`'s scripted replies, which keep a
    /// case offline and take its requests in the order they come, whichever worker makes them).
    pub ready_model: Option<Arc<dyn Model>>,
    /// Secret values kept out of every tool result (see [`SessionEnv::secrets_of`]).
    pub redactor: Arc<SecretRedactor>,
    /// The binary that runs the process jail's helper mode (`golem-forge` itself); `None`
    /// makes the `code` and `shell` toolsets a configuration error.
    pub jail_helper: Option<PathBuf>,
    /// The running workers, and the budgets they spend from.
    pub tree: Arc<WorkerTree>,
    /// `--budget-*`: the root worker's limits besides its own `budget:` (the tighter wins).
    pub budget: BudgetLimits,
    /// The session's undo journal: every change to a zone, by the root worker or one it
    /// delegates to, keeps a before-image there. `None`: nothing is recorded (`check`).
    pub undo: Option<Arc<golem_sandbox::undo::UndoJournal>>,
    /// MCP servers the front end brought (an editor's, over ACP): one more MCP toolset of the
    /// root worker only, its tools asked unless a project rule says otherwise.
    pub client_mcp: Option<golem_mcp_client::McpToolsetConfig>,
}

impl SessionEnv {
    /// The redactor for this process: the values of its secret-named environment variables
    /// (`*_API_KEY`, `*_TOKEN`, …) and of every provider's configured `api_key_env`.
    pub fn secrets_of(config: &ProgramConfig) -> Arc<SecretRedactor> {
        let names: Vec<&str> = config
            .providers
            .values()
            .filter_map(|p| p.api_key_env.as_deref())
            .collect();
        Arc::new(SecretRedactor::from_vars(std::env::vars(), &names))
    }
}

/// Where a worker stands when it is built: its depth, its ancestors, and its caller's sandbox
/// and model (none for the root).
#[derive(Clone, Default)]
pub struct WorkerFrame {
    /// The id in the tree of workers of the worker this frame describes (empty for none).
    pub id: String,
    /// The depth of the worker this frame describes.
    pub depth: u32,
    /// The workers from the root down to and including this one.
    pub chain: Vec<String>,
    /// This worker's sandbox.
    pub sandbox: Option<Sandbox>,
    /// This worker's model.
    pub model: Option<Arc<dyn Model>>,
}

/// A toolset's error as the launcher reports it.
impl From<ToolsetError> for LaunchError {
    fn from(error: ToolsetError) -> LaunchError {
        match error {
            ToolsetError::Config(message) => LaunchError::Config(message),
            ToolsetError::Unsupported(message) => LaunchError::Unsupported(message),
        }
    }
}
