//! The `filesystem` toolset (docs/tools.md, Files): `read_file`, `write_file`, `edit_file`,
//! `list_files`, `delete_file`, `move_file`, `file_exists`, `file_info`, one file per tool,
//! every path virtual (`/<zone>/<path>`) and every access made through the worker's
//! [`Sandbox`]. It never opens a host path itself and never prompts: approval is the
//! orchestrator's job, this module only says what each call requires.
//!
//! # Approval: capability first, then consent
//!
//! Each tool prepares a call once (`TypedTool::prepare`): it decodes the arguments, resolves
//! each path once (the sandbox calls run off the async threads), and answers its requirement
//! itself (always `Some`):
//!
//! | tool | requirement |
//! | --- | --- |
//! | `read_file`, `list_files`, `file_exists`, `file_info` | pre-approved |
//! | `write_file` | the zone's `create` for a new file, `write` for an existing one |
//! | `edit_file` | the zone's `write` |
//! | `delete_file` | the zone's `delete` |
//! | `move_file` | the strictest of the destination's `create` (`write` when it exists and `overwrite` is set) and the source's `delete` |
//!
//! A zone's `blocked` comes back as `Blocked` naming the zone and the operation, so the call
//! is refused with `BLOCKED` and never offered for approval.
//!
//! Protected files come first (`golem_sandbox`'s `protected.rs`): a change that would touch one
//! — the file written, both ends of a move, anything in a directory deleted or moved — is
//! `Blocked` with "protected: <virtual path> is read outside the sandbox", whatever the zone
//! says; one the zone's `unprotect` lets through needs a person's approval
//! (`ApprovalRequirement::AskUser`, with the warning in the prompt). The sandbox refuses the
//! same changes again inside its operations.
//!
//! A call that cannot succeed is never put to the user: when a path does not resolve (malformed,
//! `..` leaving its zone, unknown zone), or the zone is read-only (`mode: ro`), or the target
//! is `/`, the call is pre-approved and its plan carries the real error, which `execute`
//! reports (`INVALID_PATH`, or `PERMISSION_DENIED` from `Sandbox::check_writable`). `Blocked` is
//! reserved for policy; capability errors keep their own code.
//!
//! The plan carries the resolved paths and what the call was approved under (`approved.rs`):
//! the requirement, and for `write_file` and `edit_file` the preview diff, computed in
//! `prepare` only when the call asks, with the content it showed. Right before changing
//! anything, `execute` recomputes the requirement and refuses if it became stricter than the
//! one approved (a file that was new when `create` was approved exists now and `write` would
//! ask; a path waved through because it failed suddenly works), and refuses if the file changed
//! after the user was shown the preview diff. The user approves exactly the change that is
//! made.

mod approved;
mod content;
mod delete_file;
mod edit_file;
mod examples;
mod file_exists;
mod file_info;
mod gate;
mod list_files;
mod matching;
mod move_file;
mod read_file;
mod toolset;
mod write_file;

use std::sync::Arc;

use golem_core::tool::Tool;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::Sandbox;

pub use content::ReadLimits;
pub use golem_toolset::diff::{DiffLimits, diff_result};
pub use toolset::{FilesystemToolset, FilesystemToolsetConfig};

/// Size limits of the filesystem tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilesystemLimits {
    /// How much one `read_file` returns.
    pub read: ReadLimits,
    /// How much of a change a `diff` result shows.
    pub diff: DiffLimits,
    /// Entries one `list_files` returns before it reports `truncated: true`.
    pub max_list_entries: usize,
}

impl Default for FilesystemLimits {
    fn default() -> Self {
        Self {
            read: ReadLimits::default(),
            diff: DiffLimits::default(),
            max_list_entries: 10_000,
        }
    }
}

/// The filesystem tools over `sandbox`, with the default limits, in this order: `read_file`,
/// `write_file`, `edit_file`, `list_files`, `delete_file`, `move_file`, `file_exists`,
/// `file_info`.
pub fn filesystem_tools(sandbox: Sandbox) -> Vec<Arc<dyn Tool>> {
    filesystem_tools_with(sandbox, FilesystemLimits::default())
}

/// The filesystem tools over `sandbox` with custom limits.
pub fn filesystem_tools_with(sandbox: Sandbox, limits: FilesystemLimits) -> Vec<Arc<dyn Tool>> {
    let fs = Arc::new(Fs {
        sandbox: sandbox.clone(),
        limits,
    });
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(read_file::ReadFile::new(fs.clone())),
        Arc::new(write_file::WriteFile::new(fs.clone())),
        Arc::new(edit_file::EditFile::new(fs.clone())),
        Arc::new(list_files::ListFiles::new(fs.clone())),
        Arc::new(delete_file::DeleteFile::new(fs.clone())),
        Arc::new(move_file::MoveFile::new(fs.clone())),
        Arc::new(file_exists::FileExists::new(fs.clone())),
        Arc::new(file_info::FileInfo::new(fs)),
    ];
    examples::with_path_examples(tools, &sandbox)
}

/// What the tools of one toolset share.
#[derive(Debug)]
struct Fs {
    sandbox: Sandbox,
    limits: FilesystemLimits,
}

/// Runs blocking sandbox I/O off the async runtime's threads.
async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work).await.map_err(|err| {
        ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("the file operation failed unexpectedly: {err}"),
        )
    })?
}
