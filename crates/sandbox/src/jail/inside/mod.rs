//! The inside of the jail: what runs in the helper's processes, `<binary> __jail …` (our own
//! binary in its jail mode), which the parent (`../parent/`) starts and talks to only through
//! the files, arguments and descriptors of `../spec.rs`. Read this directory to know what
//! confines a jailed program. Its modules import nothing of `parent/`, nothing of the jail but
//! `spec.rs` and nothing of the crate but the reaper (`crate::reaper`, which the helper's entry
//! point hands `--reap` to), and no two of them import each other in a circle
//! (`crates/cli/tests/architecture/jail.rs`).
//!
//! In the order a run goes through it:
//!
//! 1. **Stage 1** (`stage1.rs`, the standby mode, started ahead of the run): moves itself into
//!    the run's cgroups, starts the network stack when the jail has a network of its own
//!    (`net_stack.rs`: `slirp4netns` with the host's loopback cut off, then `prohibit` routes
//!    for the blocked ranges), enters new user, mount, PID, IPC, UTS and (unless a best-effort
//!    jail shares the host's network) network namespaces, the caller's ids mapped to root
//!    inside, and starts stage 2.
//! 2. **Stage 2** (`stage2.rs`, PID 1 of the new PID namespace), before the run is known: a new
//!    root (`mounts.rs`: a tmpfs holding read-only, `nosuid`, `nodev` binds of the system
//!    directories interpreters need, every zone at `/<zone>` read-only or read-write, or through
//!    a copy-on-write overlay, a size-limited private `/tmp` and `/dev/shm`, a fresh `/proc`, a
//!    few device nodes; `pivot_root` into it), the Landlock ruleset (`landlock_rules.rs`) and
//!    the seccomp filters (`seccomp.rs`) prepared; then it waits for `go`.
//! 3. On `go`, stage 2 reads the run spec, drops to an unprivileged user of a nested user
//!    namespace, sets `no_new_privs`, restricts itself with Landlock, sets the rlimits
//!    (`limits.rs`), installs seccomp, makes itself non-dumpable, clears the environment to an
//!    allow-list plus the call's variables and starts the program (its stdin `/dev/null`, the
//!    parent's pipe, or that pipe relayed over a private socket: `channel.rs`), then reaps
//!    every orphan until the program ends. An `exec` failure is reported as exit 127 (not
//!    found) or 126 (not executable).
//!
//! `helper.rs` holds what the stages share (the report, the jail spec, namespaces, `go`, the
//! stdin pipe); `probe.rs` is the mode that tries each layer and reports what the kernel
//! supports. Each stage is a fresh process, so the setup may allocate freely: nothing runs
//! between `fork` and `exec` but the standard library's own spawning code.
//!
//! What the parent keeps to itself, outside these processes: the run's cgroups (made and
//! removed by it), the wall-clock timeout and interrupt (it kills the helper's process group),
//! the output caps and the zones' write cap.

mod channel;
mod helper;
mod landlock_rules;
mod limits;
mod mounts;
mod net_stack;
mod probe;
mod seccomp;
mod stage1;
mod stage2;

use std::ffi::OsString;
use std::path::Path;

use crate::jail::spec::{HELPER_ARG, PROBE_ARG, STANDBY_ARG};

pub use channel::CHANNEL_FD_VAR;
use net_stack::NET_ARG;
use stage2::STAGE2_ARG;

/// Runs the helper with the arguments that follow [`HELPER_ARG`] and returns the process exit
/// code. Call it first thing in `main`, before any thread or runtime starts. `--reap` is the
/// reaper of programs started outside the jail (`crate::reaper`), which every helper binary
/// thus has too.
pub fn helper_main(args: Vec<OsString>) -> i32 {
    if let Some((first, rest)) = args.split_first()
        && first == crate::reaper::REAP_ARG
    {
        return crate::reaper::reap_main(rest.to_vec());
    }
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [PROBE_ARG] => probe::probe(),
        [STAGE2_ARG, dir, mode] => stage2::stage2(Path::new(dir), *mode == "ns"),
        [NET_ARG, rest @ ..] => {
            let rest: Vec<String> = rest.iter().map(|a| (*a).to_owned()).collect();
            net_stack::stack_main(&rest)
        }
        [STANDBY_ARG, dir, procs @ ..] => {
            let procs: Vec<String> = procs.iter().map(|p| (*p).to_owned()).collect();
            stage1::wait_then_run(Path::new(dir), &procs)
        }
        _ => {
            eprintln!("golem-forge {HELPER_ARG}: internal helper; not for direct use");
            2
        }
    }
}
