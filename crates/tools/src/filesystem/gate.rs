//! Helpers the changing tools share when they prepare a call: which target a call can act on
//! at all (capability), what is there now, and the errors for targets that are never changed.
//! See the module header of `filesystem` for the rules.

use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::{EntryKind, Sandbox, ZonePath};

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
