//! `move_file {from, to, overwrite?}` → a `structured` result `{from, to}`; the strictest of
//! the destination's `create` (`write` when it exists and `overwrite` is set) and the source's
//! `delete`. Both zones must be `rw`. Without `overwrite` an existing destination is refused
//! (atomically, by `Sandbox::rename`).

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, DescribedTool, PreparedCall, ToolContext, ToolInfo};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolKind, ToolResultValue};
use golem_sandbox::{ZoneOperation, ZonePath};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::approved::Approved;
use super::gate::{Existing, asks, change_target, existing, protected_error};
use super::{Fs, blocking};

const NAME: &str = "move_file";

/// Move or rename a file or directory.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// What to move.
    from: String,
    /// Where to, in an existing directory.
    to: String,
    /// Replace an existing destination.
    #[serde(default)]
    overwrite: Option<bool>,
}

/// What the model sees of `move_file`.
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<MoveFileArgs>(
        NAME,
        "Move or rename a file or directory (paths /<zone>/<path>, also across zones). An \
         existing destination is only replaced with overwrite: true.",
    )
    .with_kind(ToolKind::Move)
    .with_approval_policy("by zone: create or write at the destination, delete at the source")
});

/// The `move_file` tool.
pub struct MoveFile {
    fs: Arc<Fs>,
}

impl MoveFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// What a `move_file` call will do: move between the resolved paths once approved, or report
/// why it cannot.
#[derive(Debug)]
pub struct MovePlan(Result<Move, ToolError>);

#[derive(Debug)]
struct Move {
    from: ZonePath,
    to: ZonePath,
    overwrite: bool,
    approved: Approved,
}

impl CallPlan for MovePlan {}

/// The requirement for a move as things stand, with `dest` at the destination: destination
/// `create` (or `write` when it exists and will be overwritten) and source `delete`, the
/// strictest of both, under the protected-files policy for the source's tree and where it goes.
fn zone_requirement(
    fs: &Fs,
    from: &ZonePath,
    to: &ZonePath,
    dest: Existing,
    overwrite: bool,
) -> ApprovalRequirement {
    let dest_op = match dest {
        Existing::Entry(..) | Existing::Unknown if overwrite => ZoneOperation::Write,
        Existing::Entry(..) | Existing::Unknown | Existing::Missing => ZoneOperation::Create,
    };
    fs.sandbox.move_protection(from, to).requirement(
        fs.sandbox
            .requirement(to, dest_op)
            .strictest(fs.sandbox.requirement(from, ZoneOperation::Delete)),
    )
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

/// Resolves both paths, describes the move and decides the requirement (a move that cannot
/// happen is not put to the user). Blocking: file-system calls.
fn prepare(fs: &Fs, args: MoveFileArgs) -> PreparedCall<MovePlan> {
    let overwrite = args.overwrite.unwrap_or(false);
    let from = change_target(&fs.sandbox, &args.from, "move");
    let to = change_target(&fs.sandbox, &args.to, "move to");
    let dest = to.as_ref().ok().map(|to| existing(&fs.sandbox, to));
    let replaces = overwrite && matches!(dest, Some(Existing::Entry(..)));
    let tail = if replaces { " (replacing it)" } else { "" };
    let description = format!("Move {} to {}{tail}", args.from, args.to);
    let risk = if replaces { Risk::High } else { Risk::Medium };
    let (from, to) = match (from, to) {
        (Ok(from), Ok(to)) => (from, to),
        (Err(err), _) | (Ok(_), Err(err)) => {
            return PreparedCall::new(MovePlan(Err(err)))
                .with_requirement(ApprovalRequirement::PreApproved)
                .with_description(description)
                .with_risk(risk);
        }
    };
    if let Some(err) = protected_error(&fs.sandbox.move_protection(&from, &to)) {
        return PreparedCall::new(MovePlan(Err(err.clone())))
            .with_requirement(ApprovalRequirement::blocked(err.message))
            .with_description(description)
            .with_risk(risk);
    }
    let dest = dest.unwrap_or(Existing::Unknown);
    let requirement = match zone_requirement(fs, &from, &to, dest, overwrite) {
        requirement if asks(&requirement) && refusal(fs, &from, &to, overwrite).is_err() => {
            ApprovalRequirement::PreApproved
        }
        requirement => requirement,
    };
    PreparedCall::new(MovePlan(Ok(Move {
        from,
        to,
        overwrite,
        approved: Approved::new(requirement.clone()),
    })))
    .with_requirement(requirement)
    .with_description(description)
    .with_risk(risk)
}

/// Checks the move against what was approved and makes it. Blocking.
fn move_entry(fs: &Fs, plan: Move) -> Result<ToolResultValue, ToolError> {
    let Move {
        from,
        to,
        overwrite,
        approved,
    } = plan;
    refusal(fs, &from, &to, overwrite)?;
    let dest = existing(&fs.sandbox, &to);
    approved.check_requirement(
        &zone_requirement(fs, &from, &to, dest, overwrite),
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

#[async_trait]
impl DescribedTool for MoveFile {
    type Args = MoveFileArgs;
    type Plan = MovePlan;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    async fn prepare(
        &self,
        args: MoveFileArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<MovePlan>, ToolError> {
        let fs = self.fs.clone();
        blocking(move || Ok(prepare(&fs, args))).await
    }

    async fn execute(
        &self,
        plan: MovePlan,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let plan = plan.0?;
        let fs = self.fs.clone();
        blocking(move || move_entry(&fs, plan)).await
    }
}
