//! Helpers the changing tools share when they prepare a call: which target a call can act on
//! at all (capability), what is there now, the errors for targets that are never changed, and
//! the zone's requirement under the protected-files policy (a protected path is `Blocked`
//! before anything else is decided; an unprotected one needs a person's approval). See the
//! module header of `filesystem` for the rules.

use golem_core::approval::ApprovalRequirement;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::{EntryKind, Protection, Sandbox, ZoneOperation, ZonePath};

/// What is at a path now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Nothing.
    Missing,
    /// An entry of this kind and size.
    Entry(EntryKind, u64),
    /// It cannot be told (the path leads outside its zone, a parent is a file, …).
    Unknown,
}

/// What is at `p` now (a symbolic link counts as itself).
pub fn existing(sandbox: &Sandbox, p: &ZonePath) -> Existing {
    match sandbox.metadata(p) {
        Ok(info) => Existing::Entry(info.kind, info.size),
        Err(err) if err.code == ToolErrorCode::FileNotFound => Existing::Missing,
        Err(_) => Existing::Unknown,
    }
}

/// `INVALID_PATH` for a zone root or `/` as the target of a change.
pub fn whole_zone_error(p: &ZonePath, verb: &str) -> ToolError {
    let message = if p.is_root() {
        format!("cannot {verb} /: it is the list of zones; use /<zone>/<path>")
    } else {
        format!(
            "cannot {verb} {}: it is the root of zone {}; name a file or directory inside it",
            p.virtual_path(),
            p.zone_name().unwrap_or_default()
        )
    };
    ToolError::new(ToolErrorCode::InvalidPath, message)
}

/// Resolves the target of a change, once per call: capability is checked first
/// (`PERMISSION_DENIED` for a read-only zone), then `/` and zone roots are refused. An error
/// means the call cannot succeed: it is not put to the user, and `execute` reports it.
pub fn change_target(sandbox: &Sandbox, path: &str, verb: &str) -> Result<ZonePath, ToolError> {
    let p = sandbox.resolve(path)?;
    sandbox.check_writable(&p)?;
    if p.is_root() || p.is_zone_root() {
        return Err(whole_zone_error(&p, verb));
    }
    Ok(p)
}

/// The requirement of a change of `p` by `op` as things stand: the zone's decision under the
/// protected-files policy `protection` (blocked when protected, a person's approval when the
/// zone's `unprotect` lets it through).
pub fn zone_requirement(
    sandbox: &Sandbox,
    p: &ZonePath,
    op: ZoneOperation,
    protection: &Protection,
) -> ApprovalRequirement {
    protection.requirement(sandbox.requirement(p, op))
}

/// Whether a call with `requirement` is put to someone (and so gets a preview, and is checked
/// first for whether it can succeed at all).
pub fn asks(requirement: &ApprovalRequirement) -> bool {
    matches!(
        requirement,
        ApprovalRequirement::Ask | ApprovalRequirement::AskUser { .. }
    )
}

/// The error a plan of a refused protected change carries (never run: the call is blocked).
pub fn protected_error(protection: &Protection) -> Option<ToolError> {
    protection
        .reason()
        .map(|reason| ToolError::new(ToolErrorCode::Blocked, reason))
}
