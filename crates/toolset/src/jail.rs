//! The process jail of a toolset whose tools run programs (`code`, `shell`, a custom module,
//! `git`, a jailed MCP server), built from the settings they share ([`ProcessJail`]) and checked
//! against the kernel when the worker is launched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use golem_sandbox::Sandbox;
use golem_sandbox::jail::{Jail, JailError, JailLimits, JailMode as SandboxJailMode, JailPolicy};

use crate::config::{JailMode, ProcessLimitsConfig};
use crate::network::NetworkAccess;
use crate::{BuildContext, ToolsetError};

/// Where the program at `program_root` keeps what the kernel supports between launches.
pub fn kernel_support_cache(program_root: &Path) -> PathBuf {
    program_root
        .join(".golem-forge")
        .join("kernel-support.json")
}

/// The settings `code`, `shell`, `custom`, `git` and a jailed MCP server share: how their jail
/// is built and where they start.
pub struct ProcessJail<'a> {
    /// The toolset's key, for messages.
    pub toolset: &'static str,
    /// The key of the jail's mode (`jail`, or `mode` inside an MCP server's `jail:`).
    pub mode_key: &'static str,
    /// `network:`.
    pub network: &'a NetworkAccess,
    /// `jail:` (or the MCP server's `mode:`).
    pub jail: JailMode,
    /// `limits:`.
    pub limits: &'a ProcessLimitsConfig,
    /// `workdir:`, a zone name.
    pub workdir: Option<&'a str>,
    /// `timeout:` in seconds.
    pub timeout: u64,
    /// `max_timeout:` in seconds (the same as `timeout` where a call cannot ask for more).
    pub max_timeout: u64,
}

/// What building a toolset's jail resolved: the jail checked against the kernel, the zone its
/// programs start in (checked to be a zone of the worker) and its two timeouts. A tool that runs
/// programs is made from this and its toolset's own settings.
pub struct BuiltJail {
    /// Checked against the kernel.
    pub jail: Jail,
    /// `workdir:`, checked to be a zone of the worker.
    pub cwd_zone: Option<String>,
    /// The timeout of a call that names none.
    pub timeout: Duration,
    /// The longest timeout a call may ask for.
    pub max_timeout: Duration,
}

impl BuiltJail {
    /// `jail` with no working zone (the first `rw` zone, else the private `/tmp`) and the
    /// default timeouts.
    pub fn new(jail: Jail) -> BuiltJail {
        BuiltJail {
            jail,
            cwd_zone: None,
            timeout: Duration::from_secs(crate::DEFAULT_TIMEOUT_SECS),
            max_timeout: Duration::from_secs(crate::DEFAULT_MAX_TIMEOUT_SECS),
        }
    }
}

impl ProcessJail<'_> {
    /// The jail's policy: these settings over the jail's defaults.
    pub fn policy(&self) -> JailPolicy {
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

    /// The jail over `sandbox` (the worker's, or fewer of its zones) with the program's jail
    /// helper, checked against the kernel now (the findings kept under the program root, see
    /// [`kernel_support_cache`]), so that a missing layer fails the launch; `key` is where it
    /// is configured, under `toolsets.`.
    pub fn checked_jail(
        &self,
        cx: &BuildContext<'_>,
        sandbox: &Sandbox,
        key: &str,
    ) -> Result<Jail, ToolsetError> {
        let toolset = self.toolset;
        let mode_key = self.mode_key;
        let helper = cx.jail_helper.ok_or_else(|| {
            ToolsetError::Unsupported(format!(
                "worker {} uses the {toolset} toolset, but this program has no process jail",
                cx.worker
            ))
        })?;
        let jail = Jail::new(helper.to_path_buf(), sandbox.clone(), self.policy())
            .with_probe_cache(kernel_support_cache(cx.program_root));
        jail.preflight().map_err(|e| match e {
            JailError::Unsupported(_) => ToolsetError::Unsupported(format!(
                "worker {}: the {toolset} toolset cannot run: {e} (set `{mode_key}: best_effort` \
                 under toolsets.{key} to run with what this kernel offers, each missing layer \
                 reported in the result)",
                cx.worker
            )),
            JailError::Invalid(_) | JailError::Setup(_) | JailError::Io { .. } => {
                cx.config_error(key, e)
            }
        })?;
        Ok(jail)
    }

    /// The jail (checked against the kernel now, so a missing layer fails the launch), the
    /// working zone and the two timeouts.
    pub fn build(&self, cx: &BuildContext<'_>) -> Result<BuiltJail, ToolsetError> {
        let toolset = self.toolset;
        if self.timeout > self.max_timeout {
            return Err(cx.config_error(
                toolset,
                format_args!(
                    "timeout ({} s) is longer than max_timeout ({} s)",
                    self.timeout, self.max_timeout
                ),
            ));
        }
        let cwd_zone = match self.workdir {
            None => None,
            Some(name) => match cx.sandbox.zone(name) {
                Some(_) => Some(name.to_owned()),
                None => {
                    return Err(cx.config_error(
                        toolset,
                        format_args!(
                            "workdir `{name}` is not a zone of this worker (zones: {})",
                            zone_list(cx)
                        ),
                    ));
                }
            },
        };
        Ok(BuiltJail {
            jail: self.checked_jail(cx, cx.sandbox, toolset)?,
            cwd_zone,
            timeout: Duration::from_secs(self.timeout),
            max_timeout: Duration::from_secs(self.max_timeout),
        })
    }
}

/// The worker's zone names for a message: `a, b`, or `none`.
pub fn zone_list(cx: &BuildContext<'_>) -> String {
    let zones: Vec<&str> = cx.sandbox.zones().iter().map(|z| z.name()).collect();
    if zones.is_empty() {
        "none".to_owned()
    } else {
        zones.join(", ")
    }
}
