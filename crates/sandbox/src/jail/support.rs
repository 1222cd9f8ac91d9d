//! What the kernel supports, detected once per process by running the helper in probe mode
//! (`<binary> __jail --probe`), which tries each layer on itself and prints the findings as
//! JSON: user namespaces (with an id mapping), Landlock (its ABI), and seccomp filters.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::helper::{HELPER_ARG, map_ids, unshare};

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

/// Findings per helper binary (normally one per process).
static DETECTED: Mutex<Vec<(PathBuf, &'static KernelSupport)>> = Mutex::new(Vec::new());

impl KernelSupport {
    /// Detects support once per process (and helper) by running `helper` in probe mode.
    pub fn detect(helper: &Path) -> &'static KernelSupport {
        let mut detected = DETECTED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, support)) = detected.iter().find(|(path, _)| path == helper) {
            return support;
        }
        let support: &'static KernelSupport = Box::leak(Box::new(Self::probe_with(helper)));
        detected.push((helper.to_path_buf(), support));
        support
    }

    fn probe_with(helper: &Path) -> KernelSupport {
        let unknown = |why: String| KernelSupport {
            user_namespaces: LayerSupport::Missing(why.clone()),
            landlock: LayerSupport::Missing(why.clone()),
            seccomp: LayerSupport::Missing(why),
        };
        let output = Command::new(helper)
            .arg(HELPER_ARG)
            .arg("--probe")
            .env_clear()
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        match output {
            Ok(output) => serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
                unknown(format!(
                    "the jail helper {} gave no report ({e})",
                    helper.display()
                ))
            }),
            Err(e) => unknown(format!(
                "the jail helper {} could not run: {e}",
                helper.display()
            )),
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
