//! Custom tools (`toolsets.custom`): tools a user writes next to a worker, in a Python file, a
//! JavaScript module or any executable, run in the toolset's jail with the worker's zones.
//!
//! Every module speaks one protocol (`module.rs`): `describe` prints its tools, `call NAME`
//! runs one with the arguments as JSON, `policy NAME` answers a dynamic `needs_approval`. An
//! executable speaks it itself (arguments on stdin); Python and JavaScript modules are wrapped
//! in an adapter shipped in this binary (`adapters/`), which loads the module from its source
//! and turns functions and tool objects into that protocol. The tools are read once, when the
//! toolset is built, by a jailed run of its own (`describe.rs`: the whitelist, unusable
//! schemas, bad output and bad names are errors naming the module and the tool), or from the
//! describe cache under the program root when it holds this very module (`cache.rs`: keyed by
//! the adapter, the module's bytes and those of the files next to it that travel with it), so
//! that a warm launch starts no process at all. Then a Python or JavaScript module's `call`
//! and `policy` requests go to one long-lived jailed process per module per session, started
//! by the first of them and started again after it died, timed out or was interrupted
//! (`session.rs`: the adapter in `serve` mode, JSON lines); an executable runs once per
//! request. Each tool (`tool.rs`) decides approval in `prepare`: a decision configured for the
//! tool by name first, else its own policy, else the configured `default` (`ask` when unset;
//! docs/tools.md, Approval). A tool object's own policy is its
//! `needs_approval` (`needsApproval`); a plain Python function's is its `<name>_needs_approval`
//! and a JavaScript function export's its `<name>NeedsApproval` export: a bool (static) or a
//! function of the arguments (dynamic, asked per call). A call's result that is not a valid
//! tool result (an invalid kind, data not of its kind) is passed on as `structured`, and its
//! author told once per tool (`output.rs`, `CustomNotice`).

mod cache;
mod describe;
mod module;
mod output;
mod session;
mod siblings;
mod tool;
mod toolset;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use golem_core::tool::Tool;
use golem_sandbox::jail::{Jail, ZoneWrites};
use golem_toolset::process::{Runner, Timeouts};
use tokio_util::sync::CancellationToken;

pub use module::ModuleKind;
pub use toolset::{CustomModuleConfig, CustomToolset, CustomToolsetConfig};

/// One module of custom tools: its configuration as the worker file writes it, and what the
/// launcher resolved for it. Not the configuration alone, because the module's file on the host
/// (resolved against the worker file's directory), the describe cache (under the program root)
/// and where warnings go (the session) are not in the worker file. The configuration's jail
/// settings are those of the jails `custom_tools` is given.
#[derive(Debug, Clone)]
pub struct CustomOptions {
    /// The module as configured; `module` names it in messages.
    pub config: CustomModuleConfig,
    /// The module's file on the host.
    pub path: PathBuf,
    /// The describe cache directory (`<program root>/.golem-forge/custom-tools`, see
    /// [`cache_dir`]); `None` describes the module at every build.
    pub cache_dir: Option<PathBuf>,
    /// Where warnings for the tool's author go (a `status` event in a session); `None` logs
    /// them with `tracing::warn!`.
    pub notice: Option<CustomNotice>,
}

/// Where messages for the user go: a tool returned a result that is not a valid tool result
/// (see `output.rs`), told once per tool.
#[derive(Clone)]
pub struct CustomNotice(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for CustomNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CustomNotice")
    }
}

/// The describe cache of the program at `program_root`.
pub fn cache_dir(program_root: &Path) -> PathBuf {
    program_root.join(".golem-forge").join("custom-tools")
}

/// Why a module's tools could not be built; the message names the module (and the tool).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CustomError(pub String);

/// The tools of one module: reads its tools from the describe cache when it holds this very
/// module, else once through `describe_jail` (a jail used for nothing else: it is driven from
/// a runtime of its own, so that this works from synchronous code inside or outside a
/// runtime) and caches what it printed; then builds one tool per exposed tool, each calling
/// the module through `jail` (its long-lived process started by the first call).
pub fn custom_tools(
    jail: Jail,
    describe_jail: Jail,
    options: CustomOptions,
) -> Result<Vec<Arc<dyn Tool>>, CustomError> {
    // What a module's code changes in the zones waits for the gate (`process::changes`).
    let jail = jail.with_zone_writes(ZoneWrites::Changeset);
    let describe_jail = describe_jail.with_zone_writes(ZoneWrites::Changeset);
    let source = std::fs::read(&options.path).map_err(|e| {
        CustomError(format!(
            "custom tool module {} ({}) cannot be read: {e}",
            options.config.module,
            options.path.display()
        ))
    })?;
    let kind = ModuleKind::of(&options.path);
    let siblings = siblings::read(&options.path, &options.config.module, kind)?;
    let timeout = Duration::from_secs(options.config.timeout);
    let timeouts = Timeouts::new(timeout, timeout);
    let slot = options.cache_dir.as_deref().map(|dir| {
        let inputs = cache::Inputs {
            path: &options.path,
            kind,
            adapter: module::adapter(kind),
            source: &source,
            siblings: &siblings,
        };
        cache::CacheSlot::new(dir, &inputs)
    });
    let cached = slot.as_ref().and_then(|slot| {
        let read = slot.read().and_then(|found| {
            found
                .map(|entry| {
                    describe::from_value(&options.config.module, &entry.described)
                        .map(|described| (entry, described))
                        .map_err(|e| e.0)
                })
                .transpose()
        });
        read.unwrap_or_else(|why| {
            tracing::info!(module = %options.config.module, "describe cache unusable, describing again: {why}");
            None
        })
    });
    let (raw, described, mut checked) = match cached {
        Some((entry, described)) => (entry.described, described, entry.checked),
        None => {
            let describer = module::Module::new(
                options.config.module.clone(),
                options.path.clone(),
                kind,
                (source.clone(), &siblings),
                Runner::new(describe_jail.clone(), timeouts, None),
                describe_jail,
            );
            let raw = describe_blocking(describer)?;
            let described = describe::from_value(&options.config.module, &raw)?;
            (raw, described, Vec::new())
        }
    };
    let entries = describe::select(
        &options.config.module,
        described,
        options.config.tools.as_deref(),
    )?;
    // Each exposed tool's schema is checked once, when the entry that lists it is written;
    // a launch from the cache registers them without building the meta-schema validator
    // (milliseconds per process).
    let unchecked: Vec<&describe::Entry> = entries
        .iter()
        .filter(|entry| !checked.contains(&entry.name))
        .collect();
    if !unchecked.is_empty() {
        for entry in &unchecked {
            golem_core::registry::check_schema(&entry.name, &entry.input_schema).map_err(|e| {
                CustomError(format!("custom tool module {}: {e}", options.config.module))
            })?;
        }
        checked.extend(unchecked.iter().map(|entry| entry.name.clone()));
        let entry = cache::CacheEntry {
            described: raw,
            checked,
        };
        if let Some(slot) = &slot
            && let Err(e) = slot.write(&options.config.module, &entry)
        {
            tracing::warn!("custom tool describe cache not written: {e}");
        }
    }
    let module = Arc::new(module::Module::new(
        options.config.module,
        options.path,
        kind,
        (source, &siblings),
        Runner::new(jail.clone(), timeouts, None),
        jail,
    ));
    Ok(entries
        .into_iter()
        .map(|entry| {
            Arc::new(tool::CustomTool::new(
                module.clone(),
                entry,
                &options.config.approval,
                options.notice.clone(),
            )) as Arc<dyn Tool>
        })
        .collect())
}

/// Runs `describe` on a thread with a runtime of its own and reads what the module printed as
/// JSON.
fn describe_blocking(module: module::Module) -> Result<serde_json::Value, CustomError> {
    let shown = module.shown().to_owned();
    let handle = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CustomError(format!("custom tool module {shown}: {e}")))?;
        let result = runtime.block_on(async {
            let answer = module
                .request("describe", None, None, &CancellationToken::new())
                .await
                .map_err(|e| {
                    CustomError(format!(
                        "custom tool module {}: reading its tools failed: {}",
                        module.shown(),
                        e.message
                    ))
                })?;
            // Describing is no occasion to change the zones: whatever it wrote is dropped.
            if let Some(changes) = answer.changes {
                tracing::warn!(module = %module.shown(), "describing the module changed its zones; the changes were discarded");
                if let Ok(changeset) = changes {
                    golem_toolset::process::changes::discard(changeset).await;
                }
            }
            describe::parse(module.shown(), &answer.text)
        });
        drop(module);
        result
    });
    handle
        .join()
        .unwrap_or_else(|_| Err(CustomError("reading custom tools panicked".to_owned())))
}
