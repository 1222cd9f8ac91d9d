//! Sandbox: filesystem zones resolved by the kernel beneath their roots, and the process jail
//! (`jail/`) with what goes with it (changesets, undo, the reaper).
//!
//! A worker's `sandbox.zones` ([`ZoneConfig`]) become a [`Sandbox`]: every zone's directory is
//! opened once as a capability handle, and every file operation resolves its path beneath that
//! handle in the kernel (cap-std; `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` on Linux),
//! so `..`, absolute paths and symbolic links cannot lead outside, whatever happens on disk
//! between a check and a use. Virtual paths (`/<zone>/<path>`) are normalized first
//! (`path.rs`); I/O errors become [`golem_protocol::ToolError`]s naming the virtual path, never
//! the host path (`errors.rs`).
//!
//! What the sandbox cannot see: a hard link made outside the tools to a file outside a zone is
//! just a file in the zone (the kernel cannot tell where else it is linked). Reading it reads
//! that file; writing replaces the link with a new file (atomic rename), so the outside file is
//! never modified; deleting removes only the link. The sandbox offers no way to create hard
//! links. A zone directory that is itself a symbolic link is followed once, when the sandbox is
//! opened, because the user configured it.
//!
//! Protected files (`protected.rs`): paths that programs on the host read as configuration or
//! run (`.git/config`, hooks, `.golem-forge/`, `*.worker`, `.envrc`, …) are refused for every
//! change through the sandbox, checked by the tools before approval ([`Sandbox::protection`]
//! and its siblings) and again inside every changing operation.
//!
//! The reaper (`reaper.rs`): what ends a program started outside the jail (a stdio MCP server,
//! the notify command) together with everything it started, daemons included.
//!
//! Linux only (the jail is too).

pub mod changeset;
mod entry;
mod errors;
pub mod jail;
mod ops;
mod path;
mod protected;
pub mod reaper;
mod sandbox;
mod tree;
pub mod undo;
mod walk;
mod walk_par;
mod write;
mod zone;
mod zone_path;

pub use entry::{EntryInfo, EntryKind};
pub use errors::SandboxError;
pub use ops::MAX_READ_BYTES;
pub use path::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES};
pub use protected::{
    BUILT_IN, BUILT_IN_SHORT, PathPattern, PatternError, ProtectedPaths, Protection, check_pattern,
    is_builtin, shown_paths,
};
pub use sandbox::{Sandbox, Zone};
pub use zone::{
    ZoneApproval, ZoneConfig, ZoneMode, ZoneOperation, ZoneOverlap, is_valid_zone_name,
};
pub use zone_path::ZonePath;
