//! Helpers the changing tools share for their approval policy and their checks: which target a
//! call can act on at all (capability), what is there now, the zone's requirement (consent), and
//! the last check right before a change is made. See the module header of `filesystem` for the
//! rules.

use golem_core::approval::ApprovalRequirement;
use golem_core::tool::ToolContext;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::{EntryKind, Sandbox, ZoneOperation, ZonePath};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Fs;

/// Decodes arguments for the synchronous hooks (`approval`, `describe_call`, `risk`); they
/// have been validated, so `None` only for a schema and type out of step.
pub fn peek<T: DeserializeOwned>(args: &Value) -> Option<T> {
    serde_json::from_value(args.clone()).ok()
}

/// The path a changing call can act on: it resolves, it is inside a zone (not `/`, not a zone
/// root) and the zone is `rw`. `None` means the call cannot succeed and `execute` will say why.
pub fn changeable(sandbox: &Sandbox, path: &str) -> Option<ZonePath> {
    let p = sandbox.resolve(path).ok()?;
    if p.is_root() || p.is_zone_root() {
        return None;
    }
    sandbox.check_writable(&p).ok()?;
    Some(p)
}

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

/// The zone operation of writing a file at `p`: `create` when nothing is there, else `write`.
pub fn write_operation(sandbox: &Sandbox, p: &ZonePath) -> ZoneOperation {
    match existing(sandbox, p) {
        Existing::Missing => ZoneOperation::Create,
        Existing::Entry(..) | Existing::Unknown => ZoneOperation::Write,
    }
}

/// Records and returns a changing tool's requirement for the call in `ctx`.
pub fn decided(
    fs: &Fs,
    ctx: &ToolContext,
    requirement: ApprovalRequirement,
) -> Option<ApprovalRequirement> {
    fs.ledger.approved(&ctx.tool_call_id, &requirement);
    Some(requirement)
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

/// Resolves the target of a change: capability is checked first (`PERMISSION_DENIED` for a
/// read-only zone), then `/` and zone roots are refused.
pub fn change_target(sandbox: &Sandbox, path: &str, verb: &str) -> Result<ZonePath, ToolError> {
    let p = sandbox.resolve(path)?;
    sandbox.check_writable(&p)?;
    if p.is_root() || p.is_zone_root() {
        return Err(whole_zone_error(&p, verb));
    }
    Ok(p)
}
