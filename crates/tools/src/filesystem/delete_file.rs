//! `delete_file {path, recursive?}` → a `structured` result `{deleted: [...]}`; the zone's
//! `delete`. A symbolic link is deleted as itself, never its target. A non-empty directory
//! needs `recursive: true`; an empty one does not. Zone roots and `/` are refused.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, DescribedTool, PreparedCall, ToolContext, ToolInfo};
use golem_protocol::{
    DisplayHints, PreferredView, Risk, ToolError, ToolErrorCode, ToolKind, ToolResultValue,
};
use golem_sandbox::{EntryKind, ZoneOperation, ZonePath};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::approved::Approved;
use super::gate::{Existing, asks, change_target, existing, protected_error, zone_requirement};
use super::{Fs, blocking};

const NAME: &str = "delete_file";

/// Paths listed in a result at most (the count is always exact).
const MAX_LISTED: usize = 1_000;

/// Delete a file, a symbolic link or a directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    /// What to delete.
    path: String,
    /// Delete a directory with all in it.
    #[serde(default)]
    recursive: Option<bool>,
}

/// What the model sees of `delete_file`.
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<DeleteFileArgs>(
        NAME,
        "Delete a file, symbolic link or directory (path /<zone>/<path>). A directory that is \
         not empty needs recursive: true. Returns the deleted paths.",
    )
    .with_kind(ToolKind::Delete)
    .with_approval_policy("by zone: delete")
});

/// The `delete_file` tool.
pub struct DeleteFile {
    fs: Arc<Fs>,
}

impl DeleteFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// Why the deletion of `p` cannot happen, found before anything is removed.
fn refusal(fs: &Fs, p: &ZonePath, recursive: bool) -> Result<EntryKind, ToolError> {
    let info = fs.sandbox.metadata(p)?;
    if info.kind == EntryKind::Directory && !recursive {
        let count = fs.sandbox.read_dir(p)?.len();
        if count > 0 {
            return Err(ToolError::new(
                ToolErrorCode::ExecutionError,
                format!(
                    "{} is a directory with {count} {}; pass recursive: true to delete it \
                     and everything in it",
                    p.virtual_path(),
                    if count == 1 { "entry" } else { "entries" }
                ),
            ));
        }
    }
    Ok(info.kind)
}

/// What a `delete_file` call will do: delete the resolved path once approved, or report why it
/// cannot.
#[derive(Debug)]
pub struct DeletePlan(Result<Delete, ToolError>);

#[derive(Debug)]
struct Delete {
    path: ZonePath,
    recursive: bool,
    approved: Approved,
}

impl CallPlan for DeletePlan {}

/// Resolves the path, describes what is there and decides the zone's requirement (a deletion
/// that cannot happen is not put to the user). Blocking: file-system calls.
fn prepare(fs: &Fs, args: DeleteFileArgs) -> PreparedCall<DeletePlan> {
    let recursive = args.recursive.unwrap_or(false);
    let p = match change_target(&fs.sandbox, &args.path, "delete") {
        Ok(p) => p,
        Err(err) => {
            return PreparedCall::new(DeletePlan(Err(err)))
                .with_requirement(ApprovalRequirement::PreApproved)
                .with_description(format!("Delete {}", args.path))
                .with_risk(Risk::High);
        }
    };
    let description = match existing(&fs.sandbox, &p) {
        Existing::Entry(EntryKind::Directory, _) if recursive => {
            format!("Delete directory {} and everything in it", args.path)
        }
        Existing::Entry(EntryKind::Directory, _) => {
            format!("Delete empty directory {}", args.path)
        }
        Existing::Entry(_, size) => format!("Delete {} ({size} bytes)", args.path),
        Existing::Missing | Existing::Unknown => format!("Delete {}", args.path),
    };
    let protection = fs.sandbox.removal_protection(&p);
    if let Some(err) = protected_error(&protection) {
        return PreparedCall::new(DeletePlan(Err(err.clone())))
            .with_requirement(ApprovalRequirement::blocked(err.message))
            .with_description(description)
            .with_risk(Risk::High);
    }
    let requirement = match zone_requirement(&fs.sandbox, &p, ZoneOperation::Delete, &protection) {
        requirement if asks(&requirement) && refusal(fs, &p, recursive).is_err() => {
            ApprovalRequirement::PreApproved
        }
        requirement => requirement,
    };
    PreparedCall::new(DeletePlan(Ok(Delete {
        path: p,
        recursive,
        approved: Approved::new(requirement.clone()),
    })))
    .with_requirement(requirement)
    .with_description(description)
    .with_risk(Risk::High)
}

/// Checks the entry against what was approved and deletes it. Blocking.
fn delete(fs: &Fs, plan: Delete) -> Result<ToolResultValue, ToolError> {
    let p = &plan.path;
    let vpath = p.virtual_path();
    let kind = refusal(fs, p, plan.recursive)?;
    let protection = fs.sandbox.removal_protection(p);
    plan.approved.check_requirement(
        &zone_requirement(&fs.sandbox, p, ZoneOperation::Delete, &protection),
        NAME,
        &vpath,
    )?;
    let deleted = match kind {
        EntryKind::Directory => fs.sandbox.remove_dir_all(p)?,
        EntryKind::File
        | EntryKind::Symlink
        | EntryKind::Fifo
        | EntryKind::Socket
        | EntryKind::Device => {
            fs.sandbox.remove_file(p)?;
            vec![vpath.clone()]
        }
    };
    Ok(result(&vpath, deleted))
}

fn result(vpath: &str, mut deleted: Vec<String>) -> ToolResultValue {
    let count = deleted.len();
    let summary = match count {
        0 | 1 => format!("Deleted {vpath}"),
        n => format!("Deleted {vpath} ({n} entries)"),
    };
    let mut data = json!({ "count": count });
    if count > MAX_LISTED {
        deleted.truncate(MAX_LISTED);
        data["truncated"] = json!(true);
    }
    data["deleted"] = json!(deleted);
    ToolResultValue::structured(data)
        .with_summary(summary)
        .with_display(DisplayHints {
            preferred_view: Some(PreferredView::Tree),
            collapsed: Some(count > 1),
            ..DisplayHints::default()
        })
}

#[async_trait]
impl DescribedTool for DeleteFile {
    type Args = DeleteFileArgs;
    type Plan = DeletePlan;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    async fn prepare(
        &self,
        args: DeleteFileArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<DeletePlan>, ToolError> {
        let fs = self.fs.clone();
        blocking(move || Ok(prepare(&fs, args))).await
    }

    async fn execute(
        &self,
        plan: DeletePlan,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let plan = plan.0?;
        let fs = self.fs.clone();
        blocking(move || delete(&fs, plan)).await
    }
}
