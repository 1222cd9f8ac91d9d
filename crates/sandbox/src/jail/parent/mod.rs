//! The parent side of the jail: what the golem-forge process itself runs for a jailed program.
//! It checks the request, makes the run's cgroups (`cgroup.rs`), decides the network's routes
//! (`net.rs`), starts the helper ahead of the run with its private run directory and jail spec
//! (`standby.rs`), writes the run spec and says `go` (`run.rs`, or `process.rs` for a program
//! that keeps running), captures the output up to its caps (`output.rs`), watches what the run
//! writes into the zones (`zone_watch.rs`), enforces the timeout and the interrupt by killing
//! the helper's whole process group, reads the report, and for a changeset run reads the
//! copy-on-write layers once every process of the jail is gone. What the kernel supports is
//! found by running the helper's probe (`support.rs`), remembered between processes in
//! `probe_cache.rs`.
//!
//! The walls a program meets from within (namespaces, the new root, Landlock, seccomp,
//! rlimits) are built by `../inside/`, which these modules never import; what the parent adds
//! are the limits of a run as a whole (cgroups, timeout, output and zone-write caps). The two
//! sides share only `../spec.rs`.

mod cgroup;
pub(super) mod net;
pub(super) mod output;
mod probe_cache;
pub(super) mod process;
pub(super) mod run;
pub(super) mod standby;
pub(super) mod support;
mod zone_watch;
