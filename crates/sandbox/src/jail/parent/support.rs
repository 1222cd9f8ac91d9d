//! What the kernel supports, detected once per process (or read from the findings of an
//! earlier one, `probe_cache.rs`) by running the helper in probe mode
//! (`<binary> __jail --probe`, `inside/probe.rs`), which tries each layer on itself and prints
//! the findings ([`KernelSupport`]) as JSON: user namespaces (with an id mapping), Landlock (its
//! ABI), and seccomp filters. Also what the limits of a run as a whole can rest on here
//! ([`RunLimitSupport`]). Runs in the golem-forge process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

use super::probe_cache::{self, ProbeKey};
use crate::jail::spec::{HELPER_ARG, KernelSupport, LayerSupport, PROBE_ARG};

/// How the limits of a run as a whole can be enforced for this process: a pids and a memory
/// cgroup per run, made (and removed) here to find out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunLimitSupport {
    /// The process limit: a pids cgroup, or `RLIMIT_NPROC` for every user but `root`.
    pub processes: LayerSupport,
    /// One memory limit for all processes of a run: a memory cgroup.
    pub memory: LayerSupport,
}

impl RunLimitSupport {
    /// Tries to make a run's cgroups now.
    pub fn detect() -> RunLimitSupport {
        use super::cgroup::{Controller, RunCgroups};
        let (cgroups, missing) =
            RunCgroups::create(&[(Controller::Pids, 1 << 20), (Controller::Memory, 1 << 40)]);
        drop(cgroups);
        let why = |controller| {
            missing
                .iter()
                .find(|(c, _)| *c == controller)
                .map(|(_, why)| why.to_string())
        };
        let processes = match why(Controller::Pids) {
            None => LayerSupport::Available("a pids cgroup per run".into()),
            Some(_) if !rustix::process::getuid().is_root() => LayerSupport::Available(
                "RLIMIT_NPROC (no pids cgroup, not needed: not root)".into(),
            ),
            Some(why) => LayerSupport::Missing(format!(
                "running as root, whom RLIMIT_NPROC does not hold, and no pids cgroup can be \
                 made ({why})"
            )),
        };
        let memory = match why(Controller::Memory) {
            None => LayerSupport::Available("a memory cgroup per run".into()),
            Some(why) => LayerSupport::Missing(format!(
                "no memory cgroup can be made ({why}): each process is limited, the run as a \
                 whole is not"
            )),
        };
        RunLimitSupport { processes, memory }
    }

    /// Each limit with its name, for reports such as `golem-forge check`.
    pub fn limits(&self) -> [(&'static str, &LayerSupport); 2] {
        [
            ("process limit", &self.processes),
            ("run memory limit", &self.memory),
        ]
    }
}

/// What the jail cannot do on any kernel it runs on today, for reports such as `golem-forge
/// check`: with the network off, UNIX sockets are limited to socket pairs and servers a
/// program never connects to, because named sockets belong to no network namespace and the
/// kernel cannot tell the jail's own from a host service's (Landlock ABI 9 will).
pub const NETWORK_OFF_LIMITS: &str = "with the network off, programs cannot connect to named \
     UNIX sockets (not even their own) nor use datagram UNIX sockets, so that no host service \
     listening on a socket file in a zone is reachable; socket pairs work";

/// Findings per helper binary (normally one per process).
static DETECTED: Mutex<Vec<(PathBuf, &'static KernelSupport)>> = Mutex::new(Vec::new());

impl KernelSupport {
    /// Detects support once per process (and helper) by running `helper` in probe mode.
    pub fn detect(helper: &Path) -> &'static KernelSupport {
        Self::detect_cached(helper, None)
    }

    /// Like [`KernelSupport::detect`], but the first detection in this process first looks in
    /// the file `cache` for findings of an earlier process (same boot, kernel, helper, user
    /// and user-namespace settings; see `probe_cache.rs`) and stores its own there.
    pub fn detect_cached(helper: &Path, cache: Option<&Path>) -> &'static KernelSupport {
        let mut detected = DETECTED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, support)) = detected.iter().find(|(path, _)| path == helper) {
            return support;
        }
        let key = cache.and_then(|_| ProbeKey::current(helper));
        let stored = cache
            .zip(key.as_ref())
            .and_then(|(path, key)| probe_cache::load(path, key));
        // Only a report is stored: a probe that could not run may work next time.
        let support = stored.unwrap_or_else(|| match Self::probe_with(helper) {
            Ok(probed) => {
                if let Some((path, key)) = cache.zip(key.as_ref())
                    && let Err(e) = probe_cache::store(path, key, &probed)
                {
                    tracing::debug!("kernel support not cached in {}: {e}", path.display());
                }
                probed
            }
            Err(why) => Self::unknown(why),
        });
        let support: &'static KernelSupport = Box::leak(Box::new(support));
        detected.push((helper.to_path_buf(), support));
        support
    }

    /// Runs the probe; the error says why it gave no report.
    fn probe_with(helper: &Path) -> Result<KernelSupport, ProbeError> {
        let output = Command::new(helper)
            .arg(HELPER_ARG)
            .arg(PROBE_ARG)
            .env_clear()
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|source| ProbeError::Run {
                helper: helper.to_path_buf(),
                source,
            })?;
        serde_json::from_slice(&output.stdout).map_err(|source| ProbeError::NoReport {
            helper: helper.to_path_buf(),
            source,
        })
    }

    /// Every layer missing for the same reason.
    fn unknown(why: ProbeError) -> KernelSupport {
        let why = why.to_string();
        KernelSupport {
            user_namespaces: LayerSupport::Missing(why.clone()),
            landlock: LayerSupport::Missing(why.clone()),
            seccomp: LayerSupport::Missing(why),
        }
    }
}

/// Why the probe gave no report.
#[derive(Debug, thiserror::Error)]
enum ProbeError {
    #[error("the jail helper {} could not run: {source}", helper.display())]
    Run {
        helper: PathBuf,
        source: std::io::Error,
    },
    #[error("the jail helper {} gave no report ({source})", helper.display())]
    NoReport {
        helper: PathBuf,
        source: serde_json::Error,
    },
}
