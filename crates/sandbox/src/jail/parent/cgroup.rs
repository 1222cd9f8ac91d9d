//! The cgroups of one run, where they can be made: a `pids` cgroup (the process limit that
//! holds even for `root`, whose processes the kernel never holds to `RLIMIT_NPROC`) and a
//! `memory` cgroup (one memory limit for all the run's processes together; the jail's tmpfs
//! pages are charged to it too). The parent creates children of its own cgroups (cgroup v1
//! hierarchies, or v2 with the controller enabled for children), sets the limits, and the
//! helper's stage 1 moves itself in before it starts anything (`inside/stage1.rs`; see
//! `standby.rs`: that move is slow on cgroup v1, so it happens ahead of the run). The cgroups
//! are removed when the run is over; what the memory controller saw (processes killed at the
//! limit) is read before that. Runs in the golem-forge process: the parent's half of the
//! run's limits (the inside's half, each process's rlimits, is `inside/limits.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

const CGROUP_ROOT: &str = "/sys/fs/cgroup";
/// Where the v2 hierarchy is mounted on hybrid systems (v1 controllers beside it).
const HYBRID_V2_ROOT: &str = "/sys/fs/cgroup/unified";

/// The start of the name of every cgroup made for a run: `golem-jail-<pid>-<n>`.
const PREFIX: &str = "golem-jail-";

/// Removes, once per parent cgroup and process, the run cgroups left behind by processes that
/// are gone (ended without dropping their jail, or killed).
fn remove_stale(parent: &Path) {
    static SWEPT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut swept = SWEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if swept.iter().any(|done| done == parent) {
        return;
    }
    swept.push(parent.to_path_buf());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = rustix::process::Pid::from_raw(pid)
            .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok());
        if !alive {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// Why a run's cgroup for one controller could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CgroupError {
    /// This process's cgroups have no hierarchy with the controller (or none it may write).
    #[error("no {} cgroup controller is available to this process", .0.name())]
    NoController(Controller),
    /// Making the run's directory failed.
    #[error("creating {}: {source}", dir.display())]
    Create {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// Writing a limit the controller needs failed.
    #[error("setting {}: {source}", path.display())]
    Set {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A controller the jail limits a run with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Controller {
    /// Processes and threads.
    Pids,
    /// Memory (resident and page cache, tmpfs included).
    Memory,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Pids => "pids",
            Controller::Memory => "memory",
        }
    }

    /// The limit files to write, by hierarchy version: (file, required).
    fn limit_files(self, v2: bool) -> &'static [(&'static str, bool)] {
        match (self, v2) {
            (Controller::Pids, _) => &[("pids.max", true)],
            (Controller::Memory, false) => &[
                ("memory.limit_in_bytes", true),
                ("memory.memsw.limit_in_bytes", false),
            ],
            (Controller::Memory, true) => &[("memory.max", true), ("memory.swap.max", false)],
        }
    }
}

/// One cgroup directory made for a run, with the controllers it limits.
#[derive(Debug)]
struct Cgroup {
    dir: PathBuf,
    v2: bool,
    controllers: Vec<Controller>,
}

/// The cgroups made for one run; removed on drop.
#[derive(Debug, Default)]
pub(crate) struct RunCgroups {
    groups: Vec<Cgroup>,
}

impl RunCgroups {
    /// Makes a cgroup for each controller in `limits` (controller, limit). Returns what could
    /// be made, and for each controller that could not, why.
    pub fn create(limits: &[(Controller, u64)]) -> (RunCgroups, Vec<(Controller, CgroupError)>) {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let run = COUNTER.fetch_add(1, Ordering::Relaxed);
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mut cgroups = RunCgroups::default();
        let mut missing = Vec::new();
        for &(controller, limit) in limits {
            let made = parent_dir(&own, controller)
                .ok_or(CgroupError::NoController(controller))
                .and_then(|(parent, v2)| {
                    remove_stale(&parent);
                    let dir = parent.join(format!("{PREFIX}{}-{run}", std::process::id()));
                    cgroups.limit(dir, v2, controller, limit)
                });
            if let Err(why) = made {
                missing.push((controller, why));
            }
        }
        (cgroups, missing)
    }

    /// Creates `dir` (or reuses it, for a second controller of one v2 cgroup) and writes the
    /// controller's limit.
    fn limit(
        &mut self,
        dir: PathBuf,
        v2: bool,
        controller: Controller,
        limit: u64,
    ) -> Result<(), CgroupError> {
        let index = match self.groups.iter().position(|group| group.dir == dir) {
            Some(index) => index,
            None => {
                if let Err(source) = std::fs::create_dir(&dir) {
                    return Err(CgroupError::Create { dir, source });
                }
                self.groups.push(Cgroup {
                    dir: dir.clone(),
                    v2,
                    controllers: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        for &(file, required) in controller.limit_files(v2) {
            let path = dir.join(file);
            let value = if file == "memory.swap.max" { 0 } else { limit };
            match std::fs::write(&path, value.to_string()) {
                Ok(()) => {}
                Err(source) if required => return Err(CgroupError::Set { path, source }),
                Err(_) => {}
            }
        }
        self.groups[index].controllers.push(controller);
        Ok(())
    }

    /// The `cgroup.procs` files a process writes `0` to in order to join.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.groups
            .iter()
            .map(|group| group.dir.join("cgroup.procs"))
            .collect()
    }

    /// How many processes the kernel killed at the memory limit so far.
    pub fn memory_kills(&self) -> u64 {
        self.groups
            .iter()
            .filter(|group| group.controllers.contains(&Controller::Memory))
            .map(|group| {
                let file = if group.v2 {
                    "memory.events"
                } else {
                    "memory.oom_control"
                };
                let text = std::fs::read_to_string(group.dir.join(file)).unwrap_or_default();
                counter(&text, "oom_kill")
            })
            .sum()
    }
}

impl Drop for RunCgroups {
    fn drop(&mut self) {
        for group in &self.groups {
            remove(&group.dir);
        }
    }
}

/// Removes a run's cgroup; the namespace's processes die asynchronously after PID 1, so wait a
/// little for them.
fn remove(dir: &Path) {
    for _ in 0..500 {
        if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    tracing::warn!(cgroup = %dir.display(), "could not remove the jail's cgroup");
}

/// The value of `name` in a flat keyed file (`oom_kill 3`).
fn counter(text: &str, name: &str) -> u64 {
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .find(|(key, _)| *key == name)
        .and_then(|(_, value)| value.trim().parse().ok())
        .unwrap_or(0)
}

/// This process's own cgroup in a hierarchy where `controller` can be used, and whether that
/// hierarchy is cgroup v2.
fn parent_dir(own: &str, controller: Controller) -> Option<(PathBuf, bool)> {
    let name = controller.name();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let relative = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == name) {
            let dir = Path::new(CGROUP_ROOT).join(name).join(relative);
            if dir.join("cgroup.procs").exists() {
                return Some((dir, false));
            }
        }
        if controllers.is_empty() {
            for root in [CGROUP_ROOT, HYBRID_V2_ROOT] {
                let dir = Path::new(root).join(relative);
                let enabled =
                    std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
                if enabled.split_whitespace().any(|c| c == name) {
                    return Some((dir, true));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oom_kills_are_read_from_either_version() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        let v2 = "low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\noom_group_kill 0\n";
        assert_eq!(counter(v1, "oom_kill"), 2);
        assert_eq!(counter(v2, "oom_kill"), 1);
        assert_eq!(counter("", "oom_kill"), 0);
    }
}
