//! A worker's tools from its `toolsets:` section: the filesystem toolset over its sandbox,
//! `run_code` and `shell` each in a process jail built from the toolset's options, one
//! delegation tool per allowed worker, `web_fetch` and `web_search` (the search backend's API
//! key read from the environment here), the git tools in two jails (without and with the
//! network), the custom tools of each module in a jail of its own, the tools of each MCP
//! server (a child process outside the jail, or in a jail of its own over the zones it names
//! with `jail:`, or an HTTP endpoint).

use std::sync::Arc;
use std::time::Duration;

use golem_core::registry::ToolRegistry;
use golem_sandbox::jail::{Jail, JailError, JailLimits, JailMode as SandboxJailMode, JailPolicy};
use golem_sandbox::{Sandbox, ZoneMode};
use golem_tools::code::CodeOptions;
use golem_tools::git::{GitAuthor, GitOptions};
use golem_tools::shell::{ShellOptions, ShellRule as ToolShellRule, ShellRules};
use golem_tools::web::{SearchOptions, WebOptions};

mod mcp;

pub use mcp::{mcp_cache_dir, mcp_options};

use crate::delegation::DelegateTool;
use crate::launch::{LaunchError, SessionEnv, WorkerFrame};
use crate::worker::{
    CustomToolsetConfig, GitToolsetConfig, JailMode, NetworkAccess, ProcessLimitsConfig,
    WorkerDefinition,
};

/// Builds the tools of `definition`.
pub fn build_tools(
    env: &Arc<SessionEnv>,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    frame: &WorkerFrame,
) -> Result<ToolRegistry, LaunchError> {
    let mut registry = ToolRegistry::new();
    let config_error = |e: golem_core::registry::RegistryError| {
        LaunchError::Config(format!("worker {}: {e}", definition.name))
    };
    // The built-in tools' schemas are compiled on their first call.
    let mut add = |tool: Arc<dyn golem_core::tool::Tool>| {
        registry.register_checked(tool).map_err(config_error)
    };
    let toolsets = &definition.toolsets;
    if toolsets.filesystem.is_some() {
        for tool in golem_tools::filesystem::filesystem_tools(sandbox.clone()) {
            add(tool)?;
        }
    }
    if let Some(code) = &toolsets.code {
        let process = ProcessToolset {
            toolset: "code",
            mode_key: "jail",
            network: &code.network,
            jail: code.jail,
            limits: &code.limits,
            workdir: code.workdir.as_deref(),
            timeout: code.timeout,
            max_timeout: code.max_timeout,
        };
        let (jail, cwd_zone, default_timeout, max_timeout) =
            process.build(env, definition, sandbox)?;
        add(golem_tools::run_code_tool(
            jail,
            CodeOptions {
                default_timeout,
                max_timeout,
                cwd_zone,
                approval: code.approval,
            },
        ))?;
    }
    if let Some(shell) = &toolsets.shell {
        let process = ProcessToolset {
            toolset: "shell",
            mode_key: "jail",
            network: &shell.network,
            jail: shell.jail,
            limits: &shell.limits,
            workdir: shell.workdir.as_deref(),
            timeout: shell.timeout,
            max_timeout: shell.max_timeout,
        };
        let rules = shell
            .rules
            .iter()
            .map(|rule| ToolShellRule {
                pattern: rule.pattern.clone(),
                approval: rule.approval,
            })
            .collect();
        let rules = ShellRules::new(rules, shell.default).map_err(|e| {
            LaunchError::Config(format!(
                "worker {} ({}): toolsets.shell.rules: {e}",
                definition.name,
                definition.path.display()
            ))
        })?;
        let (jail, cwd_zone, default_timeout, max_timeout) =
            process.build(env, definition, sandbox)?;
        add(golem_tools::shell_tool(
            jail,
            ShellOptions {
                rules,
                default_timeout,
                max_timeout,
                cwd_zone,
            },
        ))?;
    }
    if let Some(workers) = &toolsets.workers {
        for name in &workers.allowed_workers {
            let child = env.registry.load(name).map_err(|e| {
                LaunchError::Config(format!(
                    "worker {} allows delegating to `{name}`: {e}",
                    definition.name
                ))
            })?;
            let description = child.description.unwrap_or_default();
            add(Arc::new(DelegateTool::new(
                name,
                &description,
                env.clone(),
                frame.clone(),
            )))?;
        }
    }
    if let Some(web) = &toolsets.web {
        let search = web.search.as_ref().map(|search| SearchOptions {
            backend: search.backend,
            url: search.url.clone(),
            api_key: search
                .backend
                .key_env()
                .and_then(|name| std::env::var(name).ok()),
        });
        let options = WebOptions {
            allow: web.allow.clone(),
            private_hosts: web.private_hosts.clone(),
            max_bytes: web.max_bytes,
            timeout: Duration::from_secs(web.timeout),
            search,
        };
        let tools = golem_tools::web_tools(options).map_err(|e| {
            LaunchError::Config(format!(
                "worker {} ({}): {e}",
                definition.name,
                definition.path.display()
            ))
        })?;
        for tool in tools {
            add(tool)?;
        }
    }
    if let Some(git) = &toolsets.git {
        for tool in git_tools(env, definition, sandbox, git)? {
            add(tool)?;
        }
    }
    // A custom module's schemas were checked by its toolset (once, when it was described).
    if let Some(custom) = &toolsets.custom {
        for tool in custom_tools(env, definition, sandbox, custom)? {
            add(tool)?;
        }
    }
    // An MCP server's schemas are checked now: a bad one fails the launch.
    let mut add =
        |tool: Arc<dyn golem_core::tool::Tool>| registry.register(tool).map_err(config_error);
    if let Some(mcp) = &toolsets.mcp {
        for tool in mcp::mcp_tools(env, definition, sandbox, mcp)? {
            add(tool)?;
        }
    }
    Ok(registry)
}

/// The tools of every custom module (`toolsets.custom`), each module run in a jail over the
/// worker's zones with its own network setting; the module's path is relative to the worker
/// file. Its tools come from the describe cache under the program root when it holds this very
/// module (no process started), and a result a tool returned that is not valid is announced as
/// a `status` warning. A module that cannot be read or described, or a whitelisted tool it
/// lacks, fails the launch with a message naming the module and the tool.
fn custom_tools(
    env: &SessionEnv,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    custom: &CustomToolsetConfig,
) -> Result<Vec<Arc<dyn golem_core::tool::Tool>>, LaunchError> {
    let config_error = |message: String| {
        LaunchError::Config(format!(
            "worker {} ({}): toolsets.custom: {message}",
            definition.name,
            definition.path.display()
        ))
    };
    if custom.modules.is_empty() {
        return Err(config_error(
            "name a module (`module: ./tools.py`) or a list of them".to_owned(),
        ));
    }
    let base = definition
        .path
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    let ui = env.ui.clone();
    let notice = golem_tools::custom::CustomNotice(Arc::new(move |message: &str| {
        ui.show_status(golem_protocol::StatusLevel::Warning, message);
    }));
    let mut tools = Vec::new();
    for module in &custom.modules {
        let process = ProcessToolset {
            toolset: "custom",
            mode_key: "jail",
            network: &module.network,
            jail: module.jail,
            limits: &module.limits,
            workdir: None,
            timeout: module.timeout,
            max_timeout: module.timeout,
        };
        let (jail, _, timeout, _) = process.build(env, definition, sandbox)?;
        let describe_jail = Jail::new(
            env.jail_helper.clone().unwrap_or_default(),
            sandbox.clone(),
            jail.policy().clone(),
        );
        let options = golem_tools::custom::CustomOptions {
            path: base.join(&module.module),
            shown: module.module.clone(),
            tools: module.tools.clone(),
            approval: module.approval.clone(),
            timeout,
            cache_dir: Some(golem_tools::custom::cache_dir(&env.config.root)),
            notice: Some(notice.clone()),
        };
        tools.extend(
            golem_tools::custom_tools(jail, describe_jail, options)
                .map_err(|e| config_error(e.to_string()))?,
        );
    }
    Ok(tools)
}

/// The git tools on the repository of `git.zone` (checked here, so that the error names the
/// key): two jails over the worker's zones, both checked against the kernel now, one without
/// the network for reading and changing the repository and one with it for `git_pull` and
/// `git_push` (only built when the zone is `rw`, the only case they exist in).
fn git_tools(
    env: &SessionEnv,
    definition: &WorkerDefinition,
    sandbox: &Sandbox,
    git: &GitToolsetConfig,
) -> Result<Vec<Arc<dyn golem_core::tool::Tool>>, LaunchError> {
    let config_error = |message: String| {
        LaunchError::Config(format!(
            "worker {} ({}): toolsets.git: {message}",
            definition.name,
            definition.path.display()
        ))
    };
    let Some(zone) = sandbox.zone(&git.zone) else {
        let zones: Vec<&str> = sandbox.zones().iter().map(|z| z.name()).collect();
        return Err(config_error(format!(
            "zone `{}` is not a zone of this worker (zones: {})",
            git.zone,
            if zones.is_empty() {
                "none".to_owned()
            } else {
                zones.join(", ")
            }
        )));
    };
    let offline = NetworkAccess::default();
    let online = NetworkAccess {
        on: true,
        allow_private: git.allow_private.clone(),
    };
    let process = |network| ProcessToolset {
        toolset: "git",
        mode_key: "jail",
        network,
        jail: git.jail,
        limits: &git.limits,
        workdir: None,
        timeout: git.timeout,
        max_timeout: git.timeout,
    };
    let (local, ..) = process(&offline).build(env, definition, sandbox)?;
    let network = match zone.mode() {
        ZoneMode::Rw => Some(process(&online).build(env, definition, sandbox)?.0),
        ZoneMode::Ro => None,
    };
    let options = GitOptions {
        zone: git.zone.clone(),
        hooks: git.hooks,
        author: git.author.as_ref().map(|author| GitAuthor {
            name: author.name.clone(),
            email: author.email.clone(),
        }),
        timeout: Duration::from_secs(git.timeout),
    };
    golem_tools::git_tools(local, network, options).map_err(|e| config_error(e.to_string()))
}

/// Where the program at `program_root` keeps what the kernel supports between launches.
pub fn kernel_support_cache(program_root: &std::path::Path) -> std::path::PathBuf {
    program_root
        .join(".golem-forge")
        .join("kernel-support.json")
}

/// The options `code`, `shell`, `custom`, `git` and a jailed MCP server share: how their jail
/// is built and where they start.
struct ProcessToolset<'a> {
    toolset: &'static str,
    /// The key of the jail's mode (`jail`, or `mode` inside an MCP server's `jail:`).
    mode_key: &'static str,
    network: &'a NetworkAccess,
    jail: JailMode,
    limits: &'a ProcessLimitsConfig,
    workdir: Option<&'a str>,
    timeout: u64,
    max_timeout: u64,
}

impl ProcessToolset<'_> {
    fn policy(&self) -> JailPolicy {
        let defaults = JailLimits::default();
        let mib = |value: Option<u64>, default: u64| value.map_or(default, |v| v << 20);
        let limits = JailLimits {
            cpu_secs: self.limits.cpu_seconds.unwrap_or(defaults.cpu_secs),
            memory_bytes: mib(self.limits.memory_mb, defaults.memory_bytes),
            processes: self.limits.processes.unwrap_or(defaults.processes),
            open_files: self.limits.open_files.unwrap_or(defaults.open_files),
            file_size_bytes: mib(self.limits.file_size_mb, defaults.file_size_bytes),
            output_bytes: self.limits.output_kb.map_or(defaults.output_bytes, |kb| {
                usize::try_from(kb << 10).unwrap_or(usize::MAX)
            }),
            run_memory_bytes: mib(self.limits.run_memory_mb, defaults.run_memory_bytes),
            tmp_bytes: mib(self.limits.tmp_mb, defaults.tmp_bytes),
            tmp_files: self.limits.tmp_files.unwrap_or(defaults.tmp_files),
            zone_write_bytes: mib(self.limits.zone_write_mb, defaults.zone_write_bytes),
            zone_files: self.limits.zone_files.unwrap_or(defaults.zone_files),
        };
        JailPolicy {
            network: self.network.on,
            allow_private: self.network.allow_private.clone(),
            mode: match self.jail {
                JailMode::Strict => SandboxJailMode::Strict,
                JailMode::BestEffort => SandboxJailMode::BestEffort,
            },
            limits,
        }
    }

    /// The jail over `sandbox` with the program's jail `helper`, checked against the kernel
    /// now (the findings kept under `program_root`, see [`kernel_support_cache`]), so that a
    /// missing layer fails the launch; `key` is where it is configured, under `toolsets.`.
    fn checked_jail(
        &self,
        helper: Option<std::path::PathBuf>,
        program_root: &std::path::Path,
        definition: &WorkerDefinition,
        sandbox: &Sandbox,
        key: &str,
    ) -> Result<Jail, LaunchError> {
        let toolset = self.toolset;
        let mode_key = self.mode_key;
        let helper = helper.ok_or_else(|| {
            LaunchError::Unsupported(format!(
                "worker {} uses the {toolset} toolset, but this program has no process jail",
                definition.name
            ))
        })?;
        let jail = Jail::new(helper, sandbox.clone(), self.policy())
            .with_probe_cache(kernel_support_cache(program_root));
        jail.preflight().map_err(|e| match e {
            JailError::Unsupported(_) => LaunchError::Unsupported(format!(
                "worker {}: the {toolset} toolset cannot run: {e} (set `{mode_key}: best_effort` \
                 under toolsets.{key} to run with what this kernel offers, each missing layer \
                 reported in the result)",
                definition.name
            )),
            JailError::Invalid(_) | JailError::Setup(_) | JailError::Io { .. } => {
                LaunchError::Config(format!(
                    "worker {} ({}): toolsets.{key}: {e}",
                    definition.name,
                    definition.path.display()
                ))
            }
        })?;
        Ok(jail)
    }

    /// The jail (checked against the kernel now, so a missing layer fails the launch), the
    /// working zone and the two timeouts.
    fn build(
        &self,
        env: &SessionEnv,
        definition: &WorkerDefinition,
        sandbox: &Sandbox,
    ) -> Result<(Jail, Option<String>, Duration, Duration), LaunchError> {
        let toolset = self.toolset;
        let config_error = |message: String| {
            LaunchError::Config(format!(
                "worker {} ({}): toolsets.{toolset}: {message}",
                definition.name,
                definition.path.display()
            ))
        };
        if self.timeout > self.max_timeout {
            return Err(config_error(format!(
                "timeout ({} s) is longer than max_timeout ({} s)",
                self.timeout, self.max_timeout
            )));
        }
        let cwd_zone = match self.workdir {
            None => None,
            Some(name) => match sandbox.zone(name) {
                Some(_) => Some(name.to_owned()),
                None => {
                    let zones: Vec<&str> = sandbox.zones().iter().map(|z| z.name()).collect();
                    return Err(config_error(format!(
                        "workdir `{name}` is not a zone of this worker (zones: {})",
                        if zones.is_empty() {
                            "none".to_owned()
                        } else {
                            zones.join(", ")
                        }
                    )));
                }
            },
        };
        let jail = self.checked_jail(
            env.jail_helper.clone(),
            &env.config.root,
            definition,
            sandbox,
            toolset,
        )?;
        Ok((
            jail,
            cwd_zone,
            Duration::from_secs(self.timeout),
            Duration::from_secs(self.max_timeout),
        ))
    }
}
