//! Resource limits of the jailed program (rlimits): CPU seconds, address space, processes,
//! open files, file size, and no core dumps, set by stage 2 on itself just before it starts
//! the program, which inherits them. The limits of the run as a whole (its cgroups) are the
//! parent's half (`parent/cgroup.rs`).

use rustix::process::{Resource, Rlimit, setrlimit};

use crate::jail::spec::SpecLimits;

/// A limit the kernel refused.
#[derive(Debug, thiserror::Error)]
#[error("limiting {name} to {value}: {source}")]
pub(crate) struct LimitError {
    /// What was limited (`open files`).
    name: &'static str,
    /// The limit asked for (already at most the hard limit).
    value: u64,
    source: rustix::io::Errno,
}

/// Applies `limits` to this process (inherited by everything it starts).
pub(crate) fn apply(limits: &SpecLimits) -> Result<(), LimitError> {
    for (resource, name, value) in [
        (Resource::Cpu, "CPU seconds", limits.cpu_secs),
        (Resource::As, "address space", limits.memory_bytes),
        (Resource::Nproc, "processes", limits.processes),
        (Resource::Nofile, "open files", limits.open_files),
        (Resource::Fsize, "file size", limits.file_size_bytes),
        (Resource::Core, "core dumps", 0),
    ] {
        // Never ask for more than the hard limit already in force (that would fail).
        let hard = rustix::process::getrlimit(resource)
            .maximum
            .unwrap_or(u64::MAX);
        let value = value.min(hard);
        // CPU: the soft limit sends SIGXCPU (a program may clean up), a second later SIGKILL.
        let maximum = match resource {
            Resource::Cpu => value.saturating_add(1).min(hard),
            _ => value,
        };
        let limit = Rlimit {
            current: Some(value),
            maximum: Some(maximum),
        };
        setrlimit(resource, limit).map_err(|source| LimitError {
            name,
            value,
            source,
        })?;
    }
    Ok(())
}
