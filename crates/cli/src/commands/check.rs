//! `golem-forge check`: validate a worker and its program config, and list its model, zones,
//! tools and their approval policies — without running anything or needing an API key.
//! Names, descriptions and paths come from files, so everything printed is cleaned
//! (`frontend::clean`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use golem_core::approval::{ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::interrupt::InterruptSignal;
use golem_core::ui::RuntimeUI;
use golem_llm::context::{ContextWindows, DEFAULT_CONTEXT_WINDOW};
use golem_llm::pricing::PriceTable;
use golem_llm::resolve::ModelResolver;
use golem_protocol::ExecutionMode;
use golem_runtime::budget::BudgetLimits;
use golem_runtime::config::{CONFIG_FILE_NAME, ProgramConfig, choose_model};
use golem_runtime::launch::{SessionEnv, WorkerFrame};
use golem_runtime::registry::{WorkerRegistry, resolve_worker_arg};
use golem_runtime::tree::WorkerTree;
use golem_runtime::worker::{WorkerDefinition, load_worker};
use golem_sandbox::jail::{KernelSupport, LayerSupport, NETWORK_OFF_LIMITS, RunLimitSupport};
use golem_sandbox::{Sandbox, ZoneMode, ZoneOperation};

use crate::cli_error::CommandError;
use crate::frontend::clean::{clean_line, clean_text};

/// Prints `text` and a newline, its controls drawn visibly. A closed stdout (`check | head`)
/// is not an error worth a panic: what is left unprinted was not wanted.
fn say(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stdout().lock(), "{}", clean_text(text));
}

/// A table row, each cell cleaned before the table measures it.
fn row<const N: usize>(cells: [String; N]) -> [String; N] {
    cells.map(|cell| clean_line(&cell).into_owned())
}

/// Validate a worker and its program config; list its tools and their approval policies
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// A .worker file, a directory with main.worker, or a worker name
    pub worker: String,

    /// Check with this model instead of the configured one
    #[arg(short, long, value_name = "PROVIDER:MODEL")]
    pub model: Option<String>,

    /// Start the worker's MCP servers and update their cached tool lists first
    #[arg(long)]
    pub refresh: bool,
}

fn usage(err: impl std::fmt::Display) -> CommandError {
    CommandError::usage(err.to_string())
}

/// What the kernel offers the process jail, for a worker whose tools run in it.
fn print_jail_support(worker: &WorkerDefinition) {
    let uses: Vec<_> = worker
        .toolsets
        .configured()
        .iter()
        .filter_map(|toolset| toolset.jail_use())
        .collect();
    let users: Vec<&str> = uses.iter().filter_map(|used| used.label).collect();
    if users.is_empty() {
        return;
    }
    let Ok(helper) = std::env::current_exe() else {
        say("\nJail: cannot be checked (the program's own path is unknown)");
        return;
    };
    let support = KernelSupport::detect(&helper);
    let limits = RunLimitSupport::detect();
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["jail layer", "kernel support"]);
    for (name, layer) in support.layers().into_iter().chain(limits.limits()) {
        let state = match layer {
            LayerSupport::Available(detail) if detail.is_empty() => "available".to_owned(),
            LayerSupport::Available(detail) => format!("available ({detail})"),
            LayerSupport::Missing(why) => format!("missing: {why}"),
        };
        table.add_row(row([name.to_owned(), state]));
    }
    say(&format!("\nJail (for {})\n{table}", users.join(", ")));
    if uses.iter().any(|used| used.network_off) {
        say(&format!("Limit: {NETWORK_OFF_LIMITS}."));
    }
    if uses.iter().any(|used| used.network_on) {
        say(&format!(
            "Network (where on): {}.",
            golem_sandbox::jail::network_on_summary()
        ));
    }
}

/// The protected files (docs/safety.md): the built-in list, and per zone what the config and
/// the worker's custom modules add and what the zone's `unprotect` lets a person approve.
fn print_protected(sandbox: &Sandbox) {
    say("\nProtected files (never changed by the worker, whatever the approvals; docs/safety.md)");
    say(&format!(
        "  in every zone: {}",
        golem_sandbox::BUILT_IN_SHORT
    ));
    for zone in sandbox.zones() {
        let Some((extra, unprotect)) = sandbox.protected_patterns(zone.name()) else {
            continue;
        };
        let git = sandbox.git_protected(zone.name()).unwrap_or_default();
        if !git.is_empty() {
            say(&clean_line(&format!(
                "  /{}: by git's configuration: {}",
                zone.name(),
                git.join(", ")
            )));
        }
        if extra.is_empty() && unprotect.is_empty() {
            continue;
        }
        let mut line = format!("  /{}:", zone.name());
        if !extra.is_empty() {
            line.push_str(&format!(" also {}", extra.join(", ")));
        }
        if !unprotect.is_empty() {
            if !extra.is_empty() {
                line.push(';');
            }
            line.push_str(&format!(
                " unprotected (a person is asked every time): {}",
                unprotect.join(", ")
            ));
        }
        say(&clean_line(&line));
    }
}

/// Each toolset's own part of the report (its settings, what is cached), in the list's order.
fn print_sections(
    worker: &WorkerDefinition,
    root: &std::path::Path,
    sandbox: &Sandbox,
) -> Result<(), CommandError> {
    let helper = std::env::current_exe().ok();
    let cx = golem_runtime::launch::outside_session(worker, sandbox, root, helper.as_deref());
    for toolset in worker.toolsets.configured() {
        if let Some(section) = toolset.section(&cx).map_err(usage)? {
            say(&format!("\n{}", section.title));
            for line in &section.lines {
                say(line);
            }
        }
    }
    Ok(())
}

/// Runs `golem-forge check`.
pub fn cmd_check(args: CheckArgs) -> Result<ExitCode, CommandError> {
    let cwd = std::env::current_dir().map_err(usage)?;
    let path = resolve_worker_arg(&args.worker, &cwd).map_err(usage)?;
    let mut worker = load_worker(&path).map_err(usage)?;
    let config = ProgramConfig::discover(worker.dir()).map_err(usage)?;
    config.apply_default_zones(&mut worker);
    let registry = WorkerRegistry::discover(&config, worker.dir()).map_err(usage)?;
    let mut refreshed = true;
    if args.refresh && worker.toolsets.mcp.is_some() {
        refreshed = super::mcp_refresh::refresh_and_print(&worker, &config.root)?;
        say("");
    }
    let env_model = crate::session::env_model();
    // What would stop the worker from running; everything else is still listed.
    let mut problems = Vec::new();
    let model = choose_model(
        args.model.as_deref(),
        &worker,
        env_model.as_deref(),
        &config,
    );
    let windows = ContextWindows::defaults().with(&config.context_windows);
    let resolver = ModelResolver::new(config.providers.clone())
        .with_prices(PriceTable::defaults().with(&config.prices))
        .with_context_windows(windows.clone());
    // A model that is chosen but cannot be built here (a key not set) is only reported: the
    // worker is fine, the machine lacks the key.
    let (model, resolved) = match model {
        Ok(model) => {
            let resolved = resolver.resolve(&model).map_err(|e| e.to_string());
            (model, resolved)
        }
        Err(e) => {
            problems.push(e.to_string());
            (
                "none".to_owned(),
                Err("no model chosen (see Problems)".to_owned()),
            )
        }
    };
    let model_state = match &resolved {
        Ok(_) => "ready".to_owned(),
        Err(e) => format!("not usable: {e}"),
    };

    say(&format!("Worker {} ({})", worker.name, path.display()));
    if let Some(description) = &worker.description {
        say(&format!("  {description}"));
    }
    say(&format!(
        "  mode: {} · max_iterations: {}",
        worker.mode.as_str(),
        worker.max_iterations
    ));
    say(&format!("  model: {model} ({model_state})"));
    let name = match &resolved {
        Ok(resolved) => resolved.spec().to_string(),
        Err(_) => model.clone(),
    };
    say(&match windows.lookup(&name) {
        Some(window) => format!("  context window: {window} tokens"),
        None => format!(
            "  context window: {DEFAULT_CONTEXT_WINDOW} tokens (the default for models it does \
             not know; set it under `context_windows:` in {CONFIG_FILE_NAME})"
        ),
    });
    if !worker.budget.is_unlimited() {
        say(&format!(
            "  budget per run: {} (its sub-workers' spending included)",
            worker.budget.describe()
        ));
        let unpriced = resolved.as_ref().is_ok_and(|model| model.price().is_none());
        if worker.budget.cost_usd.is_some() && unpriced {
            say(&format!(
                "  warning: the cost budget needs the price of {model}, which is not known: \
                 add it under `prices:` in golem-forge.config.yaml"
            ));
        }
    }
    match &config.file {
        Some(file) => say(&format!("  program config: {}", file.display())),
        None => say("  program config: none (defaults)"),
    }

    let sandbox = Sandbox::open(worker.dir(), &worker.zones)
        .map_err(usage)?
        .protect(&golem_runtime::protected::protected_paths(&config, &worker));
    if !worker.zones.is_empty() {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_header([
            "zone",
            "mode",
            "host path",
            "create",
            "write",
            "delete",
        ]);
        for zone in sandbox.zones() {
            let approval = zone.approval();
            table.add_row(row([
                format!("/{}", zone.name()),
                match zone.mode() {
                    ZoneMode::Ro => "ro".to_owned(),
                    ZoneMode::Rw => "rw".to_owned(),
                },
                zone.host_path().display().to_string(),
                approval.decision(ZoneOperation::Create).as_str().to_owned(),
                approval.write.as_str().to_owned(),
                approval.delete.as_str().to_owned(),
            ]));
        }
        say(&format!("\nZones\n{table}"));
        print_protected(&sandbox);
    }

    print_jail_support(&worker);
    print_sections(&worker, &config.root, &sandbox)?;

    let bus = UiEventBus::new();
    let redactor = SessionEnv::secrets_of(&config);
    let env = Arc::new(SessionEnv {
        resolver,
        max_depth: config.delegation.max_depth,
        config: Arc::new(config),
        registry: Arc::new(registry),
        controller: ApprovalController::new(ApprovalMode::AutoDeny),
        ui: RuntimeUI::new(bus),
        interrupt: InterruptSignal::new(),
        observer: None,
        cli_model: None,
        env_model: None,
        max_iterations: None,
        record: None::<PathBuf>,
        ready_model: None,
        redactor,
        jail_helper: std::env::current_exe().ok(),
        tree: WorkerTree::new(RuntimeUI::new(UiEventBus::new())),
        budget: BudgetLimits::default(),
        undo: None,
        client_mcp: None,
    });
    let frame = WorkerFrame {
        id: String::new(),
        depth: 0,
        chain: vec![worker.name.clone()],
        sandbox: Some(sandbox.clone()),
        model: None,
    };
    let tools =
        golem_runtime::launch::build_tools(&env, &worker, &sandbox, &frame).map_err(usage)?;
    if tools.is_empty() {
        say("\nTools: none");
    } else {
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_header([
            "tool",
            "kind",
            "who may call",
            "approval",
        ]);
        for tool in tools.all() {
            let who = match tool.execution().mode {
                ExecutionMode::Llm => "model",
                ExecutionMode::Manual => "user",
                ExecutionMode::Both => "model, user",
            };
            let policy = tool.approval_policy().unwrap_or_else(|| "ask".to_owned());
            table.add_row(row([
                tool.name().to_owned(),
                tool.kind().to_string(),
                who.to_owned(),
                policy,
            ]));
        }
        say(&format!("\nTools\n{table}"));
    }
    let rules_file = golem_runtime::approvals_file::approvals_path(&env.config.root);
    let rules = golem_runtime::approvals_file::load(&rules_file).map_err(usage)?;
    if !rules.is_empty() {
        say(&format!(
            "\nApproval rules ({})\n{}",
            golem_runtime::approvals_file::APPROVALS_FILE,
            super::approvals::render_list(&rules).trim_end()
        ));
    }
    let warnings: Vec<String> = worker
        .toolsets
        .configured()
        .iter()
        .flat_map(|toolset| toolset.warnings())
        .collect();
    if !warnings.is_empty() {
        say("");
    }
    for warning in warnings {
        say(&warning);
    }
    if !problems.is_empty() {
        say("\nProblems");
        for problem in &problems {
            say(&format!("  - {problem}"));
        }
        return Ok(ExitCode::from(2));
    }
    if !refreshed {
        say("\nMCP: a server could not be refreshed (see above)");
        return Ok(ExitCode::from(1));
    }
    say("\nOK");
    Ok(ExitCode::SUCCESS)
}
