//! The process jail: every child process a tool starts (`run_code`, `shell`) runs in it.
//!
//! It has two sides, in two directories, and one wire between them:
//!
//! - **`parent/`** is what the golem-forge process runs ([`Jail::run`], [`Jail::spawn`]): it
//!   checks the request, makes the run's cgroups, writes a spec into a private run directory
//!   and starts a *helper*, our own binary in its jail mode (`golem-forge __jail …`), in a
//!   process group of its own and ahead of the run (a standby). It captures stdout and stderr
//!   up to a cap (reading and discarding the rest so the child never blocks), watches what the
//!   run writes into the zones, enforces the wall-clock timeout and the interrupt by killing
//!   the whole process group (and with it PID 1 of the namespace, which takes every process
//!   inside down), and reads the report.
//! - **`inside/`** is what runs in the helper's processes, which build the jail around the
//!   program before anything of the user's runs (that setup allocates, and so cannot happen
//!   between `fork` and `exec`): stage 1 joins the cgroups and enters new user, mount, PID and
//!   network namespaces; stage 2, PID 1 of the new PID namespace, builds a new root of
//!   read-only system directories, the zones at their virtual paths `/<zone>` and a private
//!   `/tmp`, then applies Landlock, rlimits, `no_new_privs` and a seccomp filter, clears the
//!   environment to an allow-list and `exec`s the program. **Read `inside/` to know what
//!   confines a jailed program**; its header walks through it in order.
//! - **`spec.rs`** is the wire, the only module both sides use: the helper's arguments and
//!   descriptors, the jail spec and run spec the parent writes, the report both stages write
//!   back, and the probe's findings. Neither side imports the other
//!   (`crates/cli/tests/architecture/jail.rs`).
//!
//! What the kernel supports is detected once ([`KernelSupport`]); a missing layer is an error
//! unless the policy is [`JailMode::BestEffort`], in which case each missing layer is listed in
//! [`JailOutput::weakened`].
//!
//! [`Jail::spawn`] starts a program in the same jail for as long as the caller wants it: a
//! [`JailProcess`] whose stdin the caller writes and whose stdout it reads line by line (a pipe
//! passed down through both stages); its stderr is kept (the last
//! [`JailLimits::output_bytes`]), and killing or dropping it ends the whole PID namespace, as
//! the timeout does for a run. [`Jail::spawn_with_channel`] is the same with the pipes relayed
//! by stage 2 over a private socket nothing the program starts can reach
//! (`inside/channel.rs`).
//!
//! [`Jail::run_changeset`] is a run whose writes do not reach the zones: each `rw` zone is
//! seen through a copy-on-write layer (an overlay with the zone as its lower layer and a
//! private upper directory), and once every process of the run is gone the upper directories
//! are read into a [`crate::changeset::Changeset`] for the caller to gate, apply or discard.

mod inside;
mod parent;
mod spec;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

pub use inside::{CHANNEL_FD_VAR, helper_main};
pub use parent::net::{BLOCKED as BLOCKED_NETWORKS, host_addresses, network_on_summary};
pub use parent::output::CapturedOutput;
pub use parent::process::{JailKiller, JailProcess};
pub use parent::support::{NETWORK_OFF_LIMITS, RunLimitSupport};
pub use spec::{HELPER_ARG, Ipv4Network, KernelSupport, LayerSupport, NotAnIpv4Network};

use parent::standby::Standby;

/// What a run's writes to the `rw` zones do: the kind of run a [`Jail`] prepares its next
/// helper for ([`Jail::with_zone_writes`]); each call says which kind it is ([`Jail::run`] and
/// [`Jail::spawn`] are direct, [`Jail::run_changeset`] collects a changeset).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ZoneWrites {
    /// The program changes the zones as it runs (the jail's behaviour so far).
    #[default]
    Direct,
    /// The program sees each `rw` zone through a copy-on-write layer: the zone stays as it
    /// was, and what the program changed comes back as a changeset.
    Changeset,
}

/// The end of a [`Jail::run_changeset`]: the run's output, and what it changed in the `rw`
/// zones (or why that cannot be applied).
#[derive(Debug)]
pub struct ChangesetRun {
    /// How the run went, as for [`Jail::run`].
    pub output: JailOutput,
    /// The changes, in the order they would be applied; refused whole when one change is not
    /// allowed (the error names it and says why). Whatever the run's exit, the zones are
    /// unchanged until the caller applies it.
    pub changeset: Result<crate::changeset::Changeset, crate::changeset::ChangesetError>,
}

/// How strictly to jail.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum JailMode {
    /// Every layer is required; a missing one is an error that names it.
    #[default]
    Strict,
    /// Use what the kernel offers and report each missing layer in the result.
    BestEffort,
}

/// Resource limits applied inside the jail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JailLimits {
    /// CPU seconds (`RLIMIT_CPU`).
    pub cpu_secs: u64,
    /// Address space in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// Processes and threads of the jail's user (`RLIMIT_NPROC`).
    pub processes: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// The largest file a process may write (`RLIMIT_FSIZE`).
    pub file_size_bytes: u64,
    /// The most bytes kept of stdout, and again of stderr; the rest is counted and dropped.
    pub output_bytes: usize,
    /// Memory of all the run's processes together (a memory cgroup, where one can be made).
    pub run_memory_bytes: u64,
    /// The size of the private `/tmp`, and again of `/dev/shm` (size-limited tmpfs mounts).
    pub tmp_bytes: u64,
    /// Files and directories the private `/tmp` (and again `/dev/shm`) may hold.
    pub tmp_files: u64,
    /// How much the file systems of the read-write zones may grow during one run before the
    /// run is stopped.
    pub zone_write_bytes: u64,
    /// How many files and directories a run may add to the read-write zones' file systems
    /// before it is stopped (where the file system counts them).
    pub zone_files: u64,
}

impl Default for JailLimits {
    fn default() -> Self {
        Self {
            cpu_secs: 120,
            memory_bytes: 2 << 30,
            processes: 256,
            open_files: 1024,
            file_size_bytes: 256 << 20,
            output_bytes: 1 << 20,
            run_memory_bytes: 2 << 30,
            tmp_bytes: 512 << 20,
            tmp_files: 65_536,
            zone_write_bytes: 1 << 30,
            zone_files: 20_000,
        }
    }
}

/// What a toolset allows its processes: fixed when the worker starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailPolicy {
    /// Whether processes may use the network (default `false`). Their network is their own
    /// (`parent/net.rs`): the internet, but not the host's loopback, its addresses or the
    /// private and special ranges of [`BLOCKED_NETWORKS`].
    pub network: bool,
    /// Private networks (or hosts) the processes may reach all the same, with the network on.
    pub allow_private: Vec<Ipv4Network>,
    /// Strict or best effort.
    pub mode: JailMode,
    /// Resource limits.
    pub limits: JailLimits,
}

impl Default for JailPolicy {
    fn default() -> Self {
        Self {
            network: false,
            allow_private: Vec::new(),
            mode: JailMode::Strict,
            limits: JailLimits::default(),
        }
    }
}

/// A script file written into the private `/tmp` and passed as the first argument, so code of
/// any size runs without touching the argument-length limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailScript {
    /// The file name inside the private `/tmp` (a plain name, no `/`).
    pub file_name: String,
    /// Its contents.
    pub contents: Vec<u8>,
}

/// One process to run in the jail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailCommand {
    /// The program: a name looked up in the jail's `PATH`, or an absolute path inside the jail.
    pub program: String,
    /// A script to write into `/tmp` and pass as the first argument.
    pub script: Option<JailScript>,
    /// The arguments (after the script, if any).
    pub args: Vec<String>,
    /// Variables added to the allow-listed environment (they win over it).
    pub env: BTreeMap<String, String>,
    /// The working directory: a zone's name (`None` → the private `/tmp`).
    pub cwd_zone: Option<String>,
    /// The wall-clock limit of [`Jail::run`] ([`Jail::spawn`] has none: its caller kills the
    /// process when it has waited long enough).
    pub timeout: Duration,
}

/// How the process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JailExit {
    /// It exited with this code (127: command not found; 126: not executable).
    Code(i32),
    /// It was killed by this signal (for example by `RLIMIT_CPU`).
    Signal(i32),
    /// The wall-clock timeout killed it (and everything it started).
    TimedOut,
    /// The interrupt killed it (and everything it started).
    Interrupted,
    /// A limit of the run as a whole was passed (what it wrote into the zones), so it was
    /// killed with everything it started; the text says which limit.
    LimitExceeded(String),
}

/// The result of one jailed run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailOutput {
    /// How it ended.
    pub exit: JailExit,
    /// Captured standard output.
    pub stdout: CapturedOutput,
    /// Captured standard error.
    pub stderr: CapturedOutput,
    /// Wall-clock time from start to end.
    pub duration: Duration,
    /// In best-effort mode, each layer that could not be applied and why (empty when strict).
    pub weakened: Vec<String>,
}

/// Why a jailed run could not happen at all.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    /// Strict mode and the kernel lacks a layer.
    #[error("the jail cannot be built: {0}")]
    Unsupported(String),
    /// The request itself is wrong (a reserved zone name, a bad script name, …).
    #[error("{0}")]
    Invalid(String),
    /// The helper failed to set the jail up (its own report says why).
    #[error("the jail could not be set up: {0}")]
    Setup(String),
    /// Starting the helper or talking to it failed.
    #[error("could not run the jail helper {helper}: {source}")]
    Io {
        /// The helper binary.
        helper: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
}

/// A jail for one toolset: the helper binary, the zones to show, the policy, and a helper
/// started ahead of the next run (shared by clones; see `parent/standby.rs`).
#[derive(Debug, Clone)]
pub struct Jail {
    helper: PathBuf,
    sandbox: crate::Sandbox,
    policy: JailPolicy,
    /// The kind of run the next helper is prepared for.
    writes: ZoneWrites,
    standby: Arc<Mutex<Option<Standby>>>,
    /// Where the kernel probe's findings are kept between processes (see
    /// [`Jail::with_probe_cache`]).
    probe_cache: Option<PathBuf>,
}

impl Jail {
    /// A jail whose processes see the zones of `sandbox` at their virtual paths. `helper` is a
    /// binary that runs [`helper_main`] when its first argument is [`HELPER_ARG`] (the
    /// `golem-forge` binary itself).
    pub fn new(helper: PathBuf, sandbox: crate::Sandbox, policy: JailPolicy) -> Jail {
        Jail {
            helper,
            sandbox,
            policy,
            writes: ZoneWrites::Direct,
            standby: Arc::default(),
            probe_cache: None,
        }
    }

    /// The same jail, keeping what the kernel supports in the file `path` between processes,
    /// so that a later launch on the same boot, kernel and helper skips the probe (a process
    /// of its own). The file only decides whether [`Jail::preflight`] refuses early: each run
    /// still applies every layer, and fails in strict mode when one is missing.
    pub fn with_probe_cache(mut self, path: PathBuf) -> Jail {
        self.probe_cache = Some(path);
        self
    }

    /// The same jail, preparing its helpers ahead of time for runs of the kind `writes` (the
    /// default is [`ZoneWrites::Direct`]). A run of the other kind still works: it starts its
    /// own helper, which costs it the set-up a prepared helper saves.
    pub fn with_zone_writes(mut self, writes: ZoneWrites) -> Jail {
        if writes != self.writes {
            self.writes = writes;
            self.standby = Arc::default();
        }
        self
    }

    /// The kind of run this jail prepares its helpers for.
    pub fn zone_writes(&self) -> ZoneWrites {
        self.writes
    }

    /// The helper waiting for the next run, if one of the kind `writes` is ready on this
    /// runtime (one started on another runtime is ended: its pipes belong to that one; one of
    /// the other kind stays for the next run of its kind).
    fn take_standby(&self, writes: ZoneWrites) -> Option<Standby> {
        let mut slot = self.standby.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref()?.writes != writes {
            return None;
        }
        let standby = slot.take()?;
        drop(slot);
        if standby.fits_current_runtime() {
            return Some(standby);
        }
        std::thread::spawn(move || drop(standby));
        None
    }

    /// Starts a helper for the next run in the background, when there is a runtime to start it
    /// on and none is waiting yet. A failure leaves no standby: the next run starts its own and
    /// reports the failure then.
    fn refill_standby(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let jail = self.clone();
        runtime.spawn_blocking(move || {
            if jail
                .standby
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
            {
                return;
            }
            if let Ok(standby) = Standby::start(&jail, jail.writes) {
                let mut slot = jail.standby.lock().unwrap_or_else(PoisonError::into_inner);
                if slot.is_none() {
                    *slot = Some(standby);
                }
            }
        });
    }

    /// The policy.
    pub fn policy(&self) -> &JailPolicy {
        &self.policy
    }

    /// The zones the processes see.
    pub fn sandbox(&self) -> &crate::Sandbox {
        &self.sandbox
    }

    /// Checks that the zones can be shown to programs and that the kernel supports what the
    /// policy needs (detected once): in strict mode a missing layer is
    /// [`JailError::Unsupported`] naming it; in best-effort mode that is never an error.
    /// Starts nothing: the first run starts its own helper and a standby for the next one,
    /// so a worker whose tools are never called pays for no process.
    pub fn preflight(&self) -> Result<(), JailError> {
        parent::run::zones(self)?;
        self.check_support()
    }

    /// The kernel part of [`Jail::preflight`].
    fn check_support(&self) -> Result<(), JailError> {
        let support = KernelSupport::detect_cached(&self.helper, self.probe_cache.as_deref());
        match self.policy.mode {
            JailMode::Strict => match support.missing() {
                missing if missing.is_empty() => Ok(()),
                missing => Err(JailError::Unsupported(missing.join("; "))),
            },
            JailMode::BestEffort => Ok(()),
        }
    }

    /// Runs `command` in the jail until it ends, times out, or `cancel` fires.
    pub async fn run(
        &self,
        command: &JailCommand,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<JailOutput, JailError> {
        parent::run::run(self, command, cancel).await
    }

    /// Runs `command` like [`Jail::run`], but with each `rw` zone seen through a
    /// copy-on-write layer: the zones are not changed, and what the program created, modified,
    /// deleted, re-moded or linked there comes back as a changeset (see
    /// [`crate::changeset`]), read once every process of the run is gone. The layers live
    /// as long as the changeset, until it is applied or discarded. `ro` zones are read-only as
    /// always. Needs mount namespaces even in best-effort mode (without them it is a setup
    /// error).
    pub async fn run_changeset(
        &self,
        command: &JailCommand,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<ChangesetRun, JailError> {
        parent::run::run_changeset(self, command, cancel).await
    }

    /// Starts `command` in the jail and gives back the running program: its stdin and stdout
    /// are the caller's (see [`JailProcess`]), it lives until it ends, is killed, or the
    /// [`JailProcess`] is dropped. Every layer of the jail applies as for [`Jail::run`] (the
    /// zones' write cap counts from its start), but `command.timeout` does not. Its `rw` zones
    /// are shown as [`Jail::zone_writes`] says: directly, or through copy-on-write layers whose
    /// changes [`JailProcess::end_with_changes`] reads. Call it on the tokio runtime the
    /// process is to be used on.
    pub async fn spawn(&self, command: &JailCommand) -> Result<JailProcess, JailError> {
        parent::process::spawn(self, command, spec::ProgramStdio::Pipes).await
    }

    /// As [`Jail::spawn`], but the caller's stdin and stdout reach the program over a private
    /// channel that nothing the program starts can read or write: the program inherits a
    /// listening UNIX socket, its descriptor number in the variable [`CHANNEL_FD_VAR`], must
    /// accept the one connection waiting there and close the listener before it starts
    /// anything, then talks over the accepted socket. Its own stdin is `/dev/null` and its
    /// stdout goes to its stderr. For a program whose answers decide something, such as a
    /// custom tool's adapter answering whether a call needs approval.
    pub async fn spawn_with_channel(
        &self,
        command: &JailCommand,
    ) -> Result<JailProcess, JailError> {
        parent::process::spawn(self, command, spec::ProgramStdio::Channel).await
    }
}
