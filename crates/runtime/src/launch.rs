//! Putting a worker together: its model (docs/models.md, Choosing a model), its sandbox
//! (opened for the root, narrowed from the caller's for sub-workers), its tools (toolsets and
//! delegation), and the orchestrator they all go through. One `SessionEnv` is shared by every
//! worker of a session: config, worker registry, approval controller, UI and interrupt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use golem_core::approval::ApprovalController;
use golem_core::interrupt::InterruptSignal;
use golem_core::orchestrator::ToolCallOrchestrator;
use golem_core::redact::SecretRedactor;
use golem_core::ui::RuntimeUI;
use golem_llm::Model;
use golem_llm::record::RecordingModel;
use golem_llm::resolve::ModelResolver;
use golem_protocol::WorkerOrigin;
use golem_sandbox::Sandbox;

use crate::budget::BudgetLimits;
use crate::config::ProgramConfig;
use crate::output::OutputSchema;
use crate::registry::WorkerRegistry;
use crate::runner::{RunObserver, RuntimeParts, WorkerRuntime};
use crate::tree::{TreeSlot, WorkerTree};
use crate::worker::{WorkerDefinition, WorkerMode, load_worker};

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

/// Builds the worker named `name` (found through the session's registry) as a child of
/// `parent` (a frame with depth, chain, sandbox and model of the caller).
pub fn build_worker(
    env: &Arc<SessionEnv>,
    name: &str,
    parent: WorkerFrame,
) -> Result<WorkerRuntime, LaunchError> {
    let definition = env
        .registry
        .load(name)
        .map_err(|e| LaunchError::Config(e.to_string()))?;
    assemble(env, Arc::new(definition), Some(parent))
}

/// Builds the root worker from its file (with the program's default zones when it declares
/// none).
pub fn build_root(
    env: &Arc<SessionEnv>,
    worker_path: &Path,
) -> Result<(WorkerRuntime, Arc<WorkerDefinition>, String), LaunchError> {
    let mut definition = match env.registry.parsed(worker_path) {
        Some(parsed) => parsed.clone(),
        None => load_worker(worker_path).map_err(|e| LaunchError::Config(e.to_string()))?,
    };
    env.config.apply_default_zones(&mut definition);
    let definition = Arc::new(definition);
    let runtime = assemble(env, definition.clone(), None)?;
    let model = runtime.model_name();
    Ok((runtime, definition, model))
}

fn assemble(
    env: &Arc<SessionEnv>,
    definition: Arc<WorkerDefinition>,
    parent: Option<WorkerFrame>,
) -> Result<WorkerRuntime, LaunchError> {
    let depth = parent.as_ref().map_or(0, |p| p.depth + 1);
    // The model: the root by precedence; a sub-worker by its own `model`, else its caller's.
    let model: Arc<dyn Model> = match (&parent, &definition.model) {
        (None, _) => {
            let name = crate::config::choose_model(
                env.cli_model.as_deref(),
                &definition,
                env.env_model.as_deref(),
                &env.config,
            )
            .map_err(|e| LaunchError::Config(e.to_string()))?;
            let model = env.resolver.resolve(&name)?;
            match &env.record {
                Some(path) => Arc::new(RecordingModel::create(model, path)?),
                None => model,
            }
        }
        (Some(_), Some(own)) => {
            definition
                .check_compatible(own)
                .map_err(|e| LaunchError::Config(e.to_string()))?;
            env.resolver.resolve(own)?
        }
        (Some(parent), None) => match &parent.model {
            Some(model) => {
                definition
                    .check_compatible(&model.spec().to_string())
                    .map_err(|e| LaunchError::Config(e.to_string()))?;
                model.clone()
            }
            None => {
                return Err(LaunchError::Config(format!(
                    "worker {} has no model to inherit",
                    definition.name
                )));
            }
        },
    };
    // The sandbox: opened for the root, narrowed from the caller's for a sub-worker; its
    // protected files: the built-in list, the config's `protected:` and the worker's modules.
    let sandbox = match &parent {
        None => Sandbox::open(definition.dir(), &definition.zones),
        Some(parent) => match &parent.sandbox {
            Some(parent_sandbox) => parent_sandbox.narrow(&definition.zones),
            None => Sandbox::open(definition.dir(), &[]),
        },
    }
    .map_err(|e| LaunchError::Config(format!("worker {}: {e}", definition.name)))?
    .protect(&crate::protected::protected_paths(&env.config, &definition));
    // The root's changes are recorded for undo; a sub-worker's sandbox, narrowed from its
    // caller's, records in the same journal.
    let sandbox = match (&parent, &env.undo) {
        (None, Some(journal)) => sandbox.with_undo(journal.clone()),
        (None, None) | (Some(_), _) => sandbox,
    };

    // Its place in the tree of workers, and its budget: the root's own and the command
    // line's; a sub-worker's own, bounded by what its callers have left while it runs.
    let parent_id = parent
        .as_ref()
        .map(|p| p.id.clone())
        .filter(|id| !id.is_empty());
    let budget = match &parent {
        None => definition.budget.tighter(env.budget),
        Some(_) => definition.budget,
    };
    let callers_limit_cost = parent_id
        .as_deref()
        .and_then(|id| env.tree.running(id))
        .is_some_and(|caller| caller.limits_cost());
    if (budget.cost_usd.is_some() || callers_limit_cost) && model.price().is_none() {
        return Err(LaunchError::Config(format!(
            "worker {} runs under a cost budget, but the price of {} is not known: add it \
             under `prices:` in golem-forge.config.yaml, or use a token budget instead",
            definition.name,
            model.spec()
        )));
    }
    let slot = TreeSlot {
        id: env.tree.next_id(),
        tree: env.tree.clone(),
        parent_id,
        budget,
    };

    let mut chain = parent.as_ref().map(|p| p.chain.clone()).unwrap_or_default();
    chain.push(definition.name.clone());
    let frame = WorkerFrame {
        id: slot.id.clone(),
        depth,
        chain,
        sandbox: Some(sandbox.clone()),
        model: Some(model.clone()),
    };
    let registry = crate::toolsets::build_tools(env, &definition, &sandbox, &frame)?;

    let origin = WorkerOrigin {
        name: definition.name.clone(),
        depth,
        id: slot.id.clone(),
    };
    let mut orchestrator =
        ToolCallOrchestrator::new(Arc::new(registry), env.controller.clone(), env.ui.clone())
            .with_redactor(env.redactor.clone());
    if depth > 0 {
        orchestrator = orchestrator.with_worker(origin);
    }
    let output = definition
        .output
        .as_ref()
        .map(|output| OutputSchema::new(&definition.name, output.schema.clone()))
        .transpose()
        .map_err(|e| LaunchError::Config(e.to_string()))?;
    Ok(WorkerRuntime::new(RuntimeParts {
        worker_name: definition.name.clone(),
        instructions: definition.instructions.clone(),
        keeps_history: depth == 0 && definition.mode == WorkerMode::Chat,
        depth,
        max_iterations: env.max_iterations.unwrap_or(definition.max_iterations),
        context: definition.context.or(env.config.context).policy(),
        model,
        orchestrator,
        ui: env.ui.clone(),
        interrupt: env.interrupt.clone(),
        observer: env.observer.clone(),
        tree: slot,
    })
    .with_output(output))
}
