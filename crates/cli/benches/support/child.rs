//! The built `golem-forge` as a child process of a bench: which binary (`GOLEM_FORGE_BIN`, else
//! the one Cargo built), a command for it with nothing inherited that would change a run, and
//! its end read with `wait4`, which gives the child's exit code and resource usage (CPU time,
//! peak resident set). Included by the benches that measure whole runs (`#[path]`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The binary measured: `GOLEM_FORGE_BIN` (another build, e.g. one from before a change), else
/// the one Cargo built for this bench.
pub fn binary() -> PathBuf {
    std::env::var_os("GOLEM_FORGE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_golem-forge")))
}

/// The binary in `dir`: no terminal input, no colour, no inherited model choice or log level.
pub fn command(dir: &Path) -> Command {
    let mut command = Command::new(binary());
    command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GOLEM_FORGE_MODEL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    command
}

/// How a child ended, by `wait4`.
pub struct Ended {
    /// Its exit code (-1 when a signal ended it).
    pub code: i32,
    /// User plus system CPU time.
    #[allow(dead_code, reason = "not every bench reports it")]
    pub cpu: Duration,
    /// Peak resident set in KiB (`ru_maxrss`).
    #[allow(dead_code, reason = "not every bench reports it")]
    pub max_rss_kib: u64,
}

/// Waits for `child` with `wait4`.
pub fn wait(child: Child) -> Ended {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    let mut status = 0;
    // SAFETY: `wait4` writes a `c_int` and a `rusage` we own; the child is ours and has not
    // been waited for (`Child` is dropped without waiting).
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let waited = libc::wait4(pid, &mut status, 0, &mut usage);
        assert_eq!(waited, pid, "wait4: {}", std::io::Error::last_os_error());
        usage
    };
    drop(child);
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Ended {
        code: if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            -1
        },
        cpu: time(usage.ru_utime) + time(usage.ru_stime),
        max_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
    }
}
