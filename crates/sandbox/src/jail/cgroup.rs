//! A pids cgroup per run, where one can be made: the process limit that holds even for `root`,
//! whose processes the kernel never holds to `RLIMIT_NPROC`. The parent creates a child of its
//! own pids cgroup (cgroup v1 `pids` hierarchy, or v2 with `pids` enabled for children), sets
//! `pids.max`, and stage 1 moves itself in before it starts anything; the parent removes the
//! cgroup when the run is over.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const V1_ROOT: &str = "/sys/fs/cgroup/pids";
const V2_ROOT: &str = "/sys/fs/cgroup";

/// A cgroup made for one run; removed on drop.
#[derive(Debug)]
pub(crate) struct PidsCgroup {
    dir: PathBuf,
}

impl PidsCgroup {
    /// Makes a pids cgroup limited to `max` tasks, or says why none could be made.
    pub fn create(max: u64) -> Result<PidsCgroup, String> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let parent = parent_dir().ok_or("no pids cgroup controller is mounted for this process")?;
        let dir = parent.join(format!(
            "golem-jail-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let cgroup = PidsCgroup { dir };
        std::fs::write(cgroup.dir.join("pids.max"), max.to_string())
            .map_err(|e| format!("setting pids.max in {}: {e}", cgroup.dir.display()))?;
        Ok(cgroup)
    }

    /// The file a process writes `0` to in order to join.
    pub fn procs_file(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }
}

impl Drop for PidsCgroup {
    fn drop(&mut self) {
        // The namespace's processes die asynchronously after PID 1; wait a little for them.
        for _ in 0..500 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        tracing::warn!(cgroup = %self.dir.display(), "could not remove the jail's cgroup");
    }
}

/// Moves the calling process into the cgroup whose `cgroup.procs` is `procs`.
pub(crate) fn join(procs: &Path) -> std::io::Result<()> {
    std::fs::write(procs, "0")
}

/// This process's own cgroup in a hierarchy where the pids controller can be used.
fn parent_dir() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let relative = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            let dir = Path::new(V1_ROOT).join(relative);
            if dir.join("pids.max").exists() || dir.join("cgroup.procs").exists() {
                return Some(dir);
            }
        }
        if controllers.is_empty() {
            let dir = Path::new(V2_ROOT).join(relative);
            let enabled =
                std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            if enabled.split_whitespace().any(|c| c == "pids") {
                return Some(dir);
            }
        }
    }
    None
}
