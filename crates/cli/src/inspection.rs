//! Closing golem-forge to inspection by the processes it starts outside the jail (MCP servers,
//! notify commands, an editor): they run as the same user, and `/proc/<our pid>/environ` and
//! `/mem` hold the API keys. A non-dumpable process's `/proc` files belong to root and are
//! refused to every same-user process without `CAP_SYS_PTRACE`; a child's own exec makes it
//! dumpable again, so nothing a child does to itself changes. (A child running as root can read
//! them regardless: root is not a boundary this can draw.)

/// Makes the process non-dumpable, first thing in `main` (not in the jail helper mode: the jail
/// writes its own `/proc/self` maps). Failing is a warning, never a stop.
pub fn close_to_inspection() {
    if let Err(err) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        eprintln!("golem-forge: warning: cannot close its process to inspection: {err}");
    }
}
