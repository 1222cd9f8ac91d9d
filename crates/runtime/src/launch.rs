//! Putting a worker together: its model (docs/models.md, Choosing a model), its sandbox
//! (opened for the root, narrowed from the caller's for sub-workers), its tools (the toolsets of
//! the list in `toolsets.rs`, built in its order, delegation included), and the orchestrator
//! they all go through. One [`SessionEnv`] is shared by every worker of a session.
//!
//! Delegation closes the one loop here: a worker's delegation tools build their child with
//! [`build_worker`], which this module hands them (a `delegation::BuildWorker`) when it builds the
//! caller's tools, so neither `delegation` nor the toolsets import the launcher.

use std::path::Path;
use std::sync::Arc;

use golem_core::orchestrator::ToolCallOrchestrator;
use golem_core::registry::ToolRegistry;
use golem_llm::Model;
use golem_llm::record::RecordingModel;
use golem_protocol::WorkerOrigin;
use golem_sandbox::Sandbox;
use golem_toolset::{BuildContext, Configured, Schemas};

use crate::delegation::SessionDelegation;
use crate::output::OutputSchema;
use crate::runner::{RuntimeParts, WorkerRuntime};
pub use crate::session_env::{LaunchError, SessionEnv, WorkerFrame};
use crate::tree::TreeSlot;
use crate::worker::{WorkerDefinition, WorkerMode, load_worker};

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

/// What a session may set about its root worker besides its file: zones moved elsewhere
/// (`golem-forge test`'s scratch zones; its scripted model is [`SessionEnv::ready_model`]).
#[derive(Default)]
pub struct RootSetup {
    /// Each zone of the root worker is this directory's subdirectory of the zone's name instead
    /// of its configured path (the zones' names, modes, approvals and `unprotect` are kept).
    pub zones_dir: Option<std::path::PathBuf>,
}

/// Builds the root worker from its file (with the program's default zones when it declares
/// none), with what `setup` sets instead.
pub fn build_root(
    env: &Arc<SessionEnv>,
    worker_path: &Path,
    setup: &RootSetup,
) -> Result<(WorkerRuntime, Arc<WorkerDefinition>, String), LaunchError> {
    let mut definition = match env.registry.parsed(worker_path) {
        Some(parsed) => parsed.clone(),
        None => load_worker(worker_path).map_err(|e| LaunchError::Config(e.to_string()))?,
    };
    env.config.apply_default_zones(&mut definition);
    if let Some(dir) = &setup.zones_dir {
        for zone in &mut definition.zones {
            zone.path = Some(dir.join(&zone.name));
        }
    }
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
    // The model: the session's ready one for every worker; else the root by precedence, a
    // sub-worker by its own `model`, else its caller's.
    let model: Arc<dyn Model> = match (&parent, &definition.model, &env.ready_model) {
        (_, _, Some(model)) => model.clone(),
        (None, _, None) => {
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
        (Some(_), Some(own), _) => {
            definition
                .check_compatible(own)
                .map_err(|e| LaunchError::Config(e.to_string()))?;
            env.resolver.resolve(own)?
        }
        (Some(parent), None, _) => match &parent.model {
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
    let registry = build_tools(env, &definition, &sandbox, &frame)?;

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

/// Where `definition`'s toolsets are built or described: the worker, `sandbox` and the program,
/// with nothing to notify and no delegation — as `check` and `mcp-refresh` use it; a session
/// adds both ([`build_tools`]).
pub fn outside_session<'a>(
    definition: &'a WorkerDefinition,
    sandbox: &'a Sandbox,
    program_root: &'a Path,
    jail_helper: Option<&'a Path>,
) -> BuildContext<'a> {
    BuildContext {
        worker: &definition.name,
        worker_file: &definition.path,
        sandbox,
        program_root,
        jail_helper,
        notice: None,
        delegation: None,
    }
}

/// Builds the tools of `definition`, toolset by toolset in the list's order; its delegation
/// tools build their children with [`build_worker`] below `frame`.
pub fn build_tools(
    env: &Arc<SessionEnv>,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    frame: &WorkerFrame,
) -> Result<ToolRegistry, LaunchError> {
    let delegation = SessionDelegation {
        env: env.clone(),
        frame: frame.clone(),
        build: build_worker,
    };
    let ui = env.ui.clone();
    let cx = BuildContext {
        notice: Some(Arc::new(move |level, message: &str| {
            ui.show_status(level, message);
        })),
        delegation: Some(&delegation),
        ..outside_session(
            definition,
            sandbox,
            &env.config.root,
            env.jail_helper.as_deref(),
        )
    };
    let mut toolsets = definition.toolsets.configured();
    if frame.depth == 0
        && let Some(config) = &env.client_mcp
    {
        if let Some(own) = &definition.toolsets.mcp
            && let Some(name) = config.servers.keys().find(|n| own.servers.contains_key(*n))
        {
            return Err(LaunchError::Config(format!(
                "the client's MCP server `{name}` has the name of one of worker {}'s own \
                 (toolsets.mcp.servers); rename it in the client",
                definition.name
            )));
        }
        toolsets.push(Box::new(Configured::<golem_mcp_client::McpToolset> {
            key: "mcp",
            config,
        }));
    }
    let mut registry = ToolRegistry::new();
    for toolset in toolsets {
        let tools = toolset.build(&cx)?;
        for tool in tools {
            match toolset.schemas() {
                Schemas::Checked => registry.register_checked(tool),
                Schemas::Unchecked => registry.register(tool),
            }
            .map_err(|e| LaunchError::Config(format!("worker {}: {e}", definition.name)))?;
        }
    }
    Ok(registry)
}
