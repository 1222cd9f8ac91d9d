//! `move_file {from, to, overwrite?}` → a `structured` result `{from, to}`; the strictest of
//! the destination's `create` (`write` when it exists and `overwrite` is set) and the source's
//! `delete`. Both zones must be `rw`. Without `overwrite` an existing destination is refused
//! (atomically, by `Sandbox::rename`).

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{Tool, ToolContext, input_schema_for, parse_args};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use golem_sandbox::{ZoneOperation, ZonePath};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::gate::{Existing, change_target, changeable, decided, existing, peek};
use super::{Fs, blocking};

const NAME: &str = "move_file";

/// Move or rename a file or directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct MoveFileArgs {
    /// What to move, as a virtual path /<zone>/<path>.
    from: String,
    /// Where to, as a virtual path /<zone>/<path> (the parent directory must exist).
    to: String,
    /// Replace an existing destination (default false).
    #[serde(default)]
    overwrite: Option<bool>,
}

static SCHEMA: LazyLock<Value> = LazyLock::new(input_schema_for::<MoveFileArgs>);

/// The `move_file` tool.
pub struct MoveFile {
    fs: Arc<Fs>,
}

impl MoveFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// The requirement for a move as things stand: destination `create` (or `write` when it
/// exists and will be overwritten) and source `delete`, the strictest of both.
fn zone_requirement(
    fs: &Fs,
    from: &ZonePath,
    to: &ZonePath,
    overwrite: bool,
) -> ApprovalRequirement {
    let dest_op = match existing(&fs.sandbox, to) {
        Existing::Entry(..) | Existing::Unknown if overwrite => ZoneOperation::Write,
        Existing::Entry(..) | Existing::Unknown | Existing::Missing => ZoneOperation::Create,
    };
    fs.sandbox
        .requirement(to, dest_op)
        .strictest(fs.sandbox.requirement(from, ZoneOperation::Delete))
}

/// Why the move cannot happen, found before anything changes.
fn refusal(fs: &Fs, from: &ZonePath, to: &ZonePath, overwrite: bool) -> Result<(), ToolError> {
    if from == to {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("from and to are the same path ({from}); nothing to move"),
        ));
    }
    fs.sandbox.metadata(from)?;
    if !overwrite && fs.sandbox.exists(to)? {
        return Err(ToolError::new(
            ToolErrorCode::ExecutionError,
            format!("{to} already exists; pass overwrite: true to replace it"),
        ));
    }
    Ok(())
}

fn move_entry(fs: &Fs, call_id: &str, args: &MoveFileArgs) -> Result<ToolResultValue, ToolError> {
    let entry = fs.ledger.take(call_id);
    let from = change_target(&fs.sandbox, &args.from, "move")?;
    let to = change_target(&fs.sandbox, &args.to, "move to")?;
    let overwrite = args.overwrite.unwrap_or(false);
    refusal(fs, &from, &to, overwrite)?;
    entry.check_requirement(
        &zone_requirement(fs, &from, &to, overwrite),
        NAME,
        &to.virtual_path(),
    )?;
    fs.sandbox.rename(&from, &to, overwrite)?;
    let (from, to) = (from.virtual_path(), to.virtual_path());
    Ok(
        ToolResultValue::structured(json!({ "from": from, "to": to }))
            .with_summary(format!("Moved {from} \u{2192} {to}")),
    )
}

impl MoveFile {
    /// Whether the call would replace an existing destination.
    fn replaces(&self, args: &MoveFileArgs) -> bool {
        args.overwrite.unwrap_or(false)
            && changeable(&self.fs.sandbox, &args.to)
                .is_some_and(|to| matches!(existing(&self.fs.sandbox, &to), Existing::Entry(..)))
    }
}

#[async_trait]
impl Tool for MoveFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Move or rename a file or directory (paths /<zone>/<path>, also across zones). An \
         existing destination is only replaced with overwrite: true."
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn approval_policy(&self) -> Option<String> {
        Some("by zone: create or write at the destination, delete at the source".to_owned())
    }

    fn approval(&self, args: &Value, ctx: &ToolContext) -> Option<ApprovalRequirement> {
        let fs = &self.fs;
        let targets = peek::<MoveFileArgs>(args).and_then(|args| {
            let from = changeable(&fs.sandbox, &args.from)?;
            let to = changeable(&fs.sandbox, &args.to)?;
            Some((from, to, args.overwrite.unwrap_or(false)))
        });
        let Some((from, to, overwrite)) = targets else {
            return decided(fs, ctx, ApprovalRequirement::PreApproved);
        };
        let requirement = match zone_requirement(fs, &from, &to, overwrite) {
            ApprovalRequirement::Ask if refusal(fs, &from, &to, overwrite).is_err() => {
                ApprovalRequirement::PreApproved
            }
            requirement => requirement,
        };
        decided(fs, ctx, requirement)
    }

    fn describe_call(&self, args: &Value) -> String {
        let Some(args) = peek::<MoveFileArgs>(args) else {
            return "Move a file".to_owned();
        };
        let replaces = self.replaces(&args);
        let tail = if replaces { " (replacing it)" } else { "" };
        format!("Move {} to {}{tail}", args.from, args.to)
    }

    fn risk(&self, args: &Value) -> Risk {
        match peek::<MoveFileArgs>(args) {
            Some(args) if self.replaces(&args) => Risk::High,
            Some(_) | None => Risk::Medium,
        }
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args: MoveFileArgs = parse_args(NAME, args)?;
        let fs = self.fs.clone();
        let call_id = ctx.tool_call_id.clone();
        blocking(move || move_entry(&fs, &call_id, &args)).await
    }
}
