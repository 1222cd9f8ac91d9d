//! The seccomp filter of the jailed program: system calls that reach across the jail's walls
//! fail with `EPERM` — tracing, reading other processes' memory or copying their descriptors
//! (`pidfd_getfd`), io_uring (which bypasses other filters), BPF, kernel keyrings, modules,
//! mounting, new namespaces, handle-based opens, terminal injection, and any mode with the
//! set-user-ID or set-group-ID bit (`chmod` family, `open`/`creat`/`mknod` with such a mode): a
//! file the jail leaves in an rw zone belongs to the user who ran golem-forge outside, so a
//! set-id bit there would hand that user's identity
//! (root, in a container) to whoever runs it. Setting extended attributes fails with
//! `EOPNOTSUPP`, as on a file system without them: the filter cannot read the attribute's
//! name, and `security.capability` would grant capabilities the same way.
//!
//! With the network off, every socket family but `AF_UNIX` is refused, and of UNIX sockets only
//! stream and seqpacket ones may be made (a datagram socket names its destination in every
//! `sendto`/`sendmsg`), and `connect` is refused: named UNIX sockets belong to no network
//! namespace, so without this a program could reach a host service listening on a socket file
//! in a zone. Socket pairs work. (Landlock ABI 9 can scope this per path; the kernels we run
//! on today do not have it.)
//!
//! `clone3` and `openat2` fail with `ENOSYS` (their flags and mode cannot be inspected) so
//! callers fall back to `clone`, whose namespace flags are refused, and `openat`, whose mode is
//! checked.
//!
//! Compiled by stage 2 before the run is known and installed on itself just before it starts
//! the program (the probe installs it too, to see that it can be).

use std::collections::BTreeMap;

use seccompiler::{
    BackendError, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

/// Refused outright.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
];

/// System calls whose argument (by index) is a file mode that must not carry a set-id bit.
#[cfg(target_arch = "x86_64")]
const MODE_ARGUMENTS: &[(i64, u8)] = &[
    (libc::SYS_chmod, 1),
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_open, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_creat, 1),
    (libc::SYS_mknod, 1),
    (libc::SYS_mknodat, 2),
];
/// System calls whose argument (by index) is a file mode that must not carry a set-id bit.
#[cfg(not(target_arch = "x86_64"))]
const MODE_ARGUMENTS: &[(i64, u8)] = &[
    (libc::SYS_fchmod, 1),
    (libc::SYS_fchmodat, 2),
    (libc::SYS_fchmodat2, 2),
    (libc::SYS_openat, 3),
    (libc::SYS_mknodat, 2),
];

/// The set-user-ID and set-group-ID bits.
const SET_ID_BITS: &[u64] = &[libc::S_ISUID as u64, libc::S_ISGID as u64];

/// `setxattrat(2)` (Linux 6.13; the same number on every architecture).
const SYS_SETXATTRAT: i64 = 463;

/// Setting an extended attribute: refused with `EOPNOTSUPP`.
const SET_XATTR: &[i64] = &[
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    SYS_SETXATTRAT,
];

/// The socket types (`type & 0xf`) a UNIX socket may have with the network off: stream and
/// seqpacket, whose sends never name a destination.
const CONNECTED_SOCKET_TYPES: &[u64] = &[libc::SOCK_STREAM as u64, libc::SOCK_SEQPACKET as u64];

/// `clone` flags that create namespaces.
const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
];

/// Why a filter could not be compiled (before the run is known).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CompileError {
    /// seccompiler has no backend for this architecture.
    #[error("seccomp is not supported on {arch}: {source}")]
    Arch {
        arch: &'static str,
        source: BackendError,
    },
    /// A condition, rule or filter the backend refused.
    #[error("{0}")]
    Backend(#[from] BackendError),
}

/// Why the filters are not in force.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SeccompError {
    /// Compiling them failed.
    #[error("the seccomp filter could not be compiled: {0}")]
    Compile(#[source] CompileError),
    /// The kernel refused one.
    #[error("the seccomp filter could not be installed: {0}")]
    Install(#[source] seccompiler::Error),
}

fn arch() -> Result<TargetArch, CompileError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|source| CompileError::Arch {
        arch: std::env::consts::ARCH,
        source,
    })
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Qword, op, value)
}

/// A condition on a 32-bit argument (`int`, `mode_t`).
fn condition32(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

/// One rule per set-id bit: the mode argument `arg` has it.
fn set_id_rules(arg: u8) -> Result<Vec<SeccompRule>, BackendError> {
    SET_ID_BITS
        .iter()
        .map(|&bit| rule(vec![condition32(arg, SeccompCmpOp::MaskedEq(bit), bit)?]))
        .collect()
}

/// With the network off, `socket` and `socketpair` are refused for any family but `AF_UNIX`
/// and for any type but the connected ones.
fn unix_only_socket_rules() -> Result<Vec<SeccompRule>, BackendError> {
    let mut rules = vec![rule(vec![condition32(
        0,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?];
    for kind in (0..16u64).filter(|kind| !CONNECTED_SOCKET_TYPES.contains(kind)) {
        rules.push(rule(vec![condition32(
            1,
            SeccompCmpOp::MaskedEq(0xf),
            kind,
        )?])?);
    }
    Ok(rules)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, BackendError> {
    SeccompRule::new(conditions)
}

/// The `EPERM` filter.
fn deny_filter(network: bool) -> Result<BpfProgram, CompileError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| rule(vec![condition(0, SeccompCmpOp::MaskedEq(flag), flag)?]))
        .collect::<Result<Vec<_>, BackendError>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    rules.insert(
        libc::SYS_ioctl,
        vec![rule(vec![condition(
            1,
            SeccompCmpOp::MaskedEq(0xffff_ffff),
            libc::TIOCSTI,
        )?])?],
    );
    for &(nr, arg) in MODE_ARGUMENTS {
        rules.insert(nr, set_id_rules(arg)?);
    }
    if !network {
        rules.insert(libc::SYS_socket, unix_only_socket_rules()?);
        rules.insert(libc::SYS_socketpair, unix_only_socket_rules()?);
        rules.insert(libc::SYS_connect, Vec::new());
    }
    compile(rules, libc::EPERM)
}

/// A program that fails the calls `rules` match with `errno` and allows everything else.
fn compile(rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32) -> Result<BpfProgram, CompileError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch()?,
    )?;
    Ok(BpfProgram::try_from(filter)?)
}

/// The `ENOSYS` filter for `clone3` and `openat2`, whose flags and mode are behind a pointer the
/// filter cannot follow; callers fall back to `clone` and `openat`, which it can inspect.
fn clone3_filter() -> Result<BpfProgram, CompileError> {
    compile(
        BTreeMap::from([
            (libc::SYS_clone3, Vec::new()),
            (libc::SYS_openat2, Vec::new()),
        ]),
        libc::ENOSYS,
    )
}

/// The `EOPNOTSUPP` filter for setting extended attributes.
fn xattr_filter() -> Result<BpfProgram, CompileError> {
    compile(
        SET_XATTR.iter().map(|&nr| (nr, Vec::new())).collect(),
        libc::EOPNOTSUPP,
    )
}

/// The compiled filters (compiled before the run is known; see [`install`]).
pub(crate) fn compile_filters(network: bool) -> Result<Vec<BpfProgram>, SeccompError> {
    Ok(vec![
        deny_filter(network).map_err(SeccompError::Compile)?,
        clone3_filter().map_err(SeccompError::Compile)?,
        xattr_filter().map_err(SeccompError::Compile)?,
    ])
}

/// Installs compiled filters on this process (inherited across `fork` and `exec`).
pub(crate) fn install(filters: &[BpfProgram]) -> Result<(), SeccompError> {
    for program in filters {
        seccompiler::apply_filter(program).map_err(SeccompError::Install)?;
    }
    Ok(())
}

/// Compiles and installs the filters on this process.
pub(crate) fn apply(network: bool) -> Result<(), SeccompError> {
    install(&compile_filters(network)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_compile_for_this_architecture() {
        assert!(!deny_filter(false).unwrap().is_empty());
        assert!(!deny_filter(true).unwrap().is_empty());
        assert!(!clone3_filter().unwrap().is_empty());
        assert!(!xattr_filter().unwrap().is_empty());
    }

    #[test]
    fn a_refused_rule_says_what_failed_to_compile_and_keeps_the_cause() {
        let err = SeccompError::Compile(CompileError::from(rule(Vec::new()).unwrap_err()));
        let cause = BackendError::EmptyRule.to_string();
        assert_eq!(
            err.to_string(),
            format!("the seccomp filter could not be compiled: {cause}")
        );
        let source = std::error::Error::source(&err).map(ToString::to_string);
        assert_eq!(source.as_deref(), Some(cause.as_str()));
    }
}
