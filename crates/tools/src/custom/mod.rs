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

/// Why a module's tools could not be built; the message names the module (`module`, as the
/// worker file writes it) and the tool.
#[derive(Debug, thiserror::Error)]
pub enum CustomError {
    /// The module's file cannot be read.
    #[error("custom tool module {module} ({}) cannot be read: {source}", path.display())]
    Unreadable {
        /// The module.
        module: String,
        /// Its file on the host.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The module's directory cannot be listed (for the files that travel with it).
    #[error("custom tool module {module}: its directory {} cannot be read: {source}", dir.display())]
    DirectoryUnreadable {
        /// The module.
        module: String,
        /// Its directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Too many or too large source files next to the module.
    #[error(
        "custom tool module {module}: the {extensions} files next to it (which it may import, \
         so they travel with it into the jail) come to more than {max_files} files or \
         {max_kib} KiB; put the module and its helpers in a directory of their own"
    )]
    TooManySiblings {
        /// The module.
        module: String,
        /// The extensions that travel (`py`, `mjs/.js/.cjs/.json`).
        extensions: String,
        /// The most files that travel.
        max_files: usize,
        /// The most KiB that travel.
        max_kib: u64,
    },
    /// A source file next to the module cannot be read as text.
    #[error("custom tool module {module}: {name}, next to it, cannot be read as text: {source}")]
    SiblingUnreadable {
        /// The module.
        module: String,
        /// The file's name.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// What `describe` printed is not a tool list (`printed`: its first 200 characters).
    #[error(
        "custom tool module {module}: `describe` did not print {{\"tools\": [...]}} as JSON \
         ({source}); it printed: {printed:?}"
    )]
    DidNotPrint {
        /// The module.
        module: String,
        /// What the parser said.
        source: serde_json::Error,
        /// The start of the output.
        printed: String,
    },
    /// `tools:` names a tool the module does not have.
    #[error(
        "custom tool module {module} has no tool `{wanted}` (listed under `tools`); it has: {}",
        if has.is_empty() { "none".to_owned() } else { has.join(", ") }
    )]
    NoSuchTool {
        /// The module.
        module: String,
        /// The tool named under `tools`.
        wanted: String,
        /// The tools the module has.
        has: Vec<String>,
    },
    /// One exposed tool is unusable.
    #[error("custom tool `{tool}` (module {module}): {problem}")]
    Tool {
        /// The tool.
        tool: String,
        /// The module.
        module: String,
        /// What is wrong with it.
        problem: ToolProblem,
    },
    /// A tool's input schema does not compile.
    #[error("custom tool module {module}: {source}")]
    Schema {
        /// The module.
        module: String,
        /// The registry's check.
        source: golem_core::registry::RegistryError,
    },
    /// No runtime to run `describe` on.
    #[error("custom tool module {module}: {source}")]
    Runtime {
        /// The module.
        module: String,
        /// Why.
        source: std::io::Error,
    },
    /// The jailed `describe` run failed.
    #[error("custom tool module {module}: reading its tools failed: {}", error.message)]
    Describe {
        /// The module.
        module: String,
        /// The run's error (its message is shown; boxed: it is large).
        error: Box<golem_protocol::ToolError>,
    },
    /// The thread reading the tools panicked.
    #[error("reading custom tools panicked")]
    Panicked,
}

/// What is wrong with one tool a module describes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolProblem {
    /// A name providers refuse.
    #[error("a tool name must be 1 to 64 letters, digits, `_` or `-`")]
    BadName,
    /// Two tools of one name.
    #[error("the module has two tools of this name")]
    Duplicate,
    /// The adapter could not describe it; its words (`parameter `x` has no type hint`).
    #[error("no usable input schema: {0}")]
    NotDescribed(String),
    /// `inputSchema` missing or not an object.
    #[error("no usable input schema: `inputSchema` must be a JSON Schema object")]
    NoSchema,
    /// A schema of another type than `object`.
    #[error("the input schema must describe an object (`\"type\": \"object\"`)")]
    NotAnObject,
    /// A `needsApproval` that is neither a bool nor `"dynamic"`.
    #[error("`needsApproval` must be true, false or \"dynamic\", not {0}")]
    BadPolicy(serde_json::Value),
}

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
    let source = std::fs::read(&options.path).map_err(|source| CustomError::Unreadable {
        module: options.config.module.clone(),
        path: options.path.clone(),
        source,
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
    let unusable = |why: &dyn std::fmt::Display| {
        tracing::info!(module = %options.config.module, "describe cache unusable, describing again: {why}");
    };
    let cached = match slot.as_ref().map(cache::CacheSlot::read) {
        Some(Ok(Some(entry))) => {
            match describe::from_value(&options.config.module, &entry.described) {
                Ok(described) => Some((entry, described)),
                Err(why) => {
                    unusable(&why);
                    None
                }
            }
        }
        Some(Err(why)) => {
            unusable(&why);
            None
        }
        Some(Ok(None)) | None => None,
    };
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
            golem_core::registry::check_schema(&entry.name, &entry.input_schema).map_err(
                |source| CustomError::Schema {
                    module: options.config.module.clone(),
                    source,
                },
            )?;
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
            .map_err(|source| CustomError::Runtime {
                module: shown,
                source,
            })?;
        let result = runtime.block_on(async {
            let answer = module
                .request("describe", None, None, &CancellationToken::new())
                .await
                .map_err(|error| CustomError::Describe {
                    module: module.shown().to_owned(),
                    error: Box::new(error),
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
    handle.join().unwrap_or_else(|_| Err(CustomError::Panicked))
}
