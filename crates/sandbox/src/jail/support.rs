//! What the kernel supports, detected once per process (or read from the findings of an
//! earlier one, `probe_cache.rs`) by running the helper in probe mode
//! (`<binary> __jail --probe`), which tries each layer on itself and prints the findings as
//! JSON: user namespaces (with an id mapping), Landlock (its ABI), and seccomp filters.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::helper::{HELPER_ARG, map_ids, unshare};
use super::probe_cache::{self, ProbeKey};

/// Whether one layer is available, with a detail or the reason it is not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LayerSupport {
    /// Available (the detail says which version, when there is one).
    Available(String),
    /// Missing, and why.
    Missing(String),
}

impl LayerSupport {
    /// Whether the layer is available.
    pub fn is_available(&self) -> bool {
        matches!(self, LayerSupport::Available(_))
    }
}

/// The jail layers this kernel offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KernelSupport {
    /// User (and with them mount, PID and network) namespaces.
    pub user_namespaces: LayerSupport,
    /// Landlock, with its ABI version.
    pub landlock: LayerSupport,
    /// seccomp filters.
    pub seccomp: LayerSupport,
}

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
                .map(|(_, why)| why.clone())
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
    fn probe_with(helper: &Path) -> Result<KernelSupport, String> {
        let output = Command::new(helper)
            .arg(HELPER_ARG)
            .arg("--probe")
            .env_clear()
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("the jail helper {} could not run: {e}", helper.display()))?;
        serde_json::from_slice(&output.stdout)
            .map_err(|e| format!("the jail helper {} gave no report ({e})", helper.display()))
    }

    /// Every layer missing for the same reason.
    fn unknown(why: String) -> KernelSupport {
        KernelSupport {
            user_namespaces: LayerSupport::Missing(why.clone()),
            landlock: LayerSupport::Missing(why.clone()),
            seccomp: LayerSupport::Missing(why),
        }
    }

    /// Each layer with its name, for reports such as `golem-forge check`.
    pub fn layers(&self) -> [(&'static str, &LayerSupport); 3] {
        [
            ("user namespaces", &self.user_namespaces),
            ("Landlock", &self.landlock),
            ("seccomp", &self.seccomp),
        ]
    }

    /// What a strict jail needs and this kernel lacks, one sentence each.
    pub fn missing(&self) -> Vec<String> {
        self.layers()
            .into_iter()
            .filter_map(|(name, layer)| match layer {
                LayerSupport::Available(_) => None,
                LayerSupport::Missing(why) => Some(format!("{name}: {why}")),
            })
            .collect()
    }
}

/// The probe itself (in the helper process, which exits right after): tries each layer.
pub(crate) fn probe() -> i32 {
    let user_namespaces = {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        use rustix::thread::UnshareFlags as F;
        match unshare(F::NEWUSER | F::NEWNS | F::NEWPID | F::NEWNET)
            .and_then(|()| map_ids(0, uid, gid))
        {
            Ok(()) => LayerSupport::Available(String::new()),
            Err(e) => LayerSupport::Missing(format!(
                "creating user, mount, PID and network namespaces failed: {e} (some systems \
                 turn them off, e.g. sysctl kernel.apparmor_restrict_unprivileged_userns=1 or \
                 user.max_user_namespaces=0)"
            )),
        }
    };
    let landlock = probe_landlock();
    let seccomp = match rustix::thread::set_no_new_privs(true)
        .map_err(|e| e.to_string())
        .and_then(|()| super::seccomp::apply(false))
    {
        Ok(()) => LayerSupport::Available(String::new()),
        Err(e) => LayerSupport::Missing(e),
    };
    let support = KernelSupport {
        user_namespaces,
        landlock,
        seccomp,
    };
    match serde_json::to_string(&support) {
        Ok(json) => {
            println!("{json}");
            0
        }
        Err(_) => 1,
    }
}

fn probe_landlock() -> LayerSupport {
    use landlock::{ABI, Access, AccessFs, LandlockStatus, Ruleset, RulesetAttr};
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|ruleset| ruleset.create())
        .and_then(|ruleset| ruleset.restrict_self());
    match status {
        Ok(status) => match status.landlock {
            LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            } => LayerSupport::Available(match kernel_abi {
                Some(kernel) => format!("ABI {kernel}"),
                None => format!("ABI {effective_abi}"),
            }),
            LandlockStatus::NotEnabled => {
                LayerSupport::Missing("Landlock is built into the kernel but not enabled (add it to the lsm= boot parameter)".into())
            }
            LandlockStatus::NotImplemented => {
                LayerSupport::Missing("the kernel has no Landlock (Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK)".into())
            }
        },
        Err(e) => LayerSupport::Missing(format!("Landlock could not be applied: {e}")),
    }
}
