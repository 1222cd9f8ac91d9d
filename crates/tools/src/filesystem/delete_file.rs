//! `delete_file {path, recursive?}` → a `structured` result `{deleted: [...]}`; the zone's
//! `delete`. A symbolic link is deleted as itself, never its target. A non-empty directory
//! needs `recursive: true`; an empty one does not. Zone roots and `/` are refused.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{Tool, ToolContext, input_schema_for, parse_args};
use golem_protocol::{
    DisplayHints, PreferredView, Risk, ToolError, ToolErrorCode, ToolResultValue,
};
use golem_sandbox::{EntryKind, ZoneOperation, ZonePath};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::gate::{Existing, change_target, changeable, decided, existing, peek};
use super::{Fs, blocking};

const NAME: &str = "delete_file";

/// Paths listed in a result at most (the count is always exact).
const MAX_LISTED: usize = 1_000;

/// Delete a file, a symbolic link or a directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteFileArgs {
    /// What to delete, as a virtual path /<zone>/<path>.
    path: String,
    /// Delete a directory with everything in it (default false; an empty directory does not
    /// need it).
    #[serde(default)]
    recursive: Option<bool>,
}

static SCHEMA: LazyLock<Value> = LazyLock::new(input_schema_for::<DeleteFileArgs>);

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

fn delete(fs: &Fs, call_id: &str, args: &DeleteFileArgs) -> Result<ToolResultValue, ToolError> {
    let entry = fs.ledger.take(call_id);
    let p = change_target(&fs.sandbox, &args.path, "delete")?;
    let vpath = p.virtual_path();
    let kind = refusal(fs, &p, args.recursive.unwrap_or(false))?;
    entry.check_requirement(
        &fs.sandbox.requirement(&p, ZoneOperation::Delete),
        NAME,
        &vpath,
    )?;
    let deleted = match kind {
        EntryKind::Directory => fs.sandbox.remove_dir_all(&p)?,
        EntryKind::File
        | EntryKind::Symlink
        | EntryKind::Fifo
        | EntryKind::Socket
        | EntryKind::Device => {
            fs.sandbox.remove_file(&p)?;
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
impl Tool for DeleteFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Delete a file, symbolic link or directory (path /<zone>/<path>). A directory that is \
         not empty needs recursive: true. Returns the deleted paths."
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn approval_policy(&self) -> Option<String> {
        Some("by zone: delete".to_owned())
    }

    fn approval(&self, args: &Value, ctx: &ToolContext) -> Option<ApprovalRequirement> {
        let fs = &self.fs;
        let Some((args, p)) = peek::<DeleteFileArgs>(args)
            .and_then(|args| changeable(&fs.sandbox, &args.path).map(|p| (args, p)))
        else {
            return decided(fs, ctx, ApprovalRequirement::PreApproved);
        };
        let requirement = match fs.sandbox.requirement(&p, ZoneOperation::Delete) {
            ApprovalRequirement::Ask
                if refusal(fs, &p, args.recursive.unwrap_or(false)).is_err() =>
            {
                ApprovalRequirement::PreApproved
            }
            requirement => requirement,
        };
        decided(fs, ctx, requirement)
    }

    fn describe_call(&self, args: &Value) -> String {
        let Some(args) = peek::<DeleteFileArgs>(args) else {
            return "Delete a file".to_owned();
        };
        let p = changeable(&self.fs.sandbox, &args.path);
        match p.map(|p| existing(&self.fs.sandbox, &p)) {
            Some(Existing::Entry(EntryKind::Directory, _)) if args.recursive.unwrap_or(false) => {
                format!("Delete directory {} and everything in it", args.path)
            }
            Some(Existing::Entry(EntryKind::Directory, _)) => {
                format!("Delete empty directory {}", args.path)
            }
            Some(Existing::Entry(_, size)) => format!("Delete {} ({size} bytes)", args.path),
            Some(Existing::Missing | Existing::Unknown) | None => format!("Delete {}", args.path),
        }
    }

    fn risk(&self, _args: &Value) -> Risk {
        Risk::High
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args: DeleteFileArgs = parse_args(NAME, args)?;
        let fs = self.fs.clone();
        let call_id = ctx.tool_call_id.clone();
        blocking(move || delete(&fs, &call_id, &args)).await
    }
}
