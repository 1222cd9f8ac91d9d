//! The helper's probe mode (`<binary> __jail --probe`): in a process of its own, which exits
//! right after, it tries each layer of the jail on itself (user, mount, PID and network
//! namespaces with an id mapping; Landlock; `no_new_privs` and the seccomp filters) and prints
//! what worked as [`KernelSupport`] JSON on stdout for the parent (`parent/support.rs`). Runs
//! in the helper's process.

use crate::jail::spec::{KernelSupport, LayerSupport};

use super::helper::{map_ids, unshare};
use super::seccomp;

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
    let seccomp = match rustix::thread::set_no_new_privs(true) {
        Err(e) => LayerSupport::Missing(e.to_string()),
        Ok(()) => match seccomp::apply(false) {
            Ok(()) => LayerSupport::Available(String::new()),
            Err(e) => LayerSupport::Missing(e.to_string()),
        },
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
