//! `edit_file {path, old_string, new_string, replace_all?}` → `diff`; the zone's `write`.
//!
//! `old_string` must match the file exactly, once (or any number of times with `replace_all`);
//! a missing or ambiguous match is an error that says how many matches there were. An edit
//! that cannot apply is not put to the user: `prepare` answers pre-approved and `execute`
//! reports the error. The approval preview is the diff the edit would make, prepared with the
//! call when it asks; `execute` reuses that edit when the file is as it was.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, DescribedTool, PreparedCall, ToolContext, ToolInfo};
use golem_protocol::{ToolError, ToolErrorCode, ToolKind, ToolResultValue};
use golem_sandbox::{ZoneOperation, ZonePath};
use golem_toolset::diff::diff_result;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::approved::Approved;
use super::content::{as_text, line_count};
use super::gate::{asks, change_target, protected_error, zone_requirement};
use super::matching::{EditError, Edited, apply_edit};
use super::{Fs, blocking};

const NAME: &str = "edit_file";

/// Replace an exact piece of text in a file. old_string must occur exactly once, unless
/// replace_all is true.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// The file.
    path: String,
    /// The exact text to replace, with enough surrounding lines to be unique.
    old_string: String,
    /// The replacement.
    new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    replace_all: Option<bool>,
}

/// What the model sees of `edit_file`.
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<EditFileArgs>(
        NAME,
        "Replace exact text in an existing file (path /<zone>/<path>): old_string must match \
         the file exactly (whitespace and line breaks included) and occur once, unless \
         replace_all is true. Read the file first and copy the text to replace.",
    )
    .with_kind(ToolKind::Edit)
    .with_approval_policy("by zone: write")
});

/// The `edit_file` tool.
pub struct EditFile {
    fs: Arc<Fs>,
}

impl EditFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// What an `edit_file` call will do.
#[derive(Debug)]
pub struct EditPlan(Result<Edit, ToolError>);

/// An edit that can go ahead once approved.
#[derive(Debug)]
struct Edit {
    path: ZonePath,
    args: EditFileArgs,
    /// The file as `prepare` read it and the edit applied to it, when the call asks.
    prepared: Option<(Vec<u8>, Edited)>,
    approved: Approved,
}

impl CallPlan for EditPlan {
    fn preview(&mut self) -> Option<ToolResultValue> {
        self.0.as_mut().ok()?.approved.show()
    }

    fn follow(&mut self, shown: &Self) {
        if let (Ok(edit), Ok(seen)) = (&mut self.0, &shown.0)
            && edit.path == seen.path
        {
            edit.approved.follow(&seen.approved);
        }
    }
}

/// The file's current bytes.
fn read_original(fs: &Fs, p: &ZonePath) -> Result<Vec<u8>, ToolError> {
    fs.sandbox.read(p).map_err(|mut err| {
        if err.code == ToolErrorCode::FileNotFound {
            err.message = format!(
                "{} does not exist; edit_file changes existing files, use write_file to create one",
                p.virtual_path()
            );
        }
        err
    })
}

/// The edit applied to `original`.
fn apply(vpath: &str, original: &[u8], args: &EditFileArgs) -> Result<Edited, ToolError> {
    let Some(text) = as_text(original) else {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!(
                "{vpath} is a binary file (NUL bytes or invalid UTF-8); edit_file edits text, \
                 use write_file with encoding \"base64\" to replace binary content"
            ),
        ));
    };
    apply_edit(
        text,
        &args.old_string,
        &args.new_string,
        args.replace_all.unwrap_or(false),
    )
    .map_err(|err| edit_error(vpath, &err))
}

fn edit_error(vpath: &str, err: &EditError) -> ToolError {
    let code = match err {
        EditError::EmptyOld | EditError::NoChange => ToolErrorCode::InvalidArguments,
        EditError::NotFound { .. } | EditError::Ambiguous { .. } => ToolErrorCode::ExecutionError,
    };
    ToolError::new(code, format!("{vpath}: {err}"))
        .with_details(json!({ "matches": err.matches() }))
}

fn describe(args: &EditFileArgs) -> String {
    let lines = |s: &str| {
        let n = line_count(s).max(1);
        format!("{n} {}", if n == 1 { "line" } else { "lines" })
    };
    let which = if args.replace_all.unwrap_or(false) {
        "every occurrence of"
    } else {
        "one occurrence of"
    };
    format!(
        "Edit {}: replace {which} {} with {}",
        args.path,
        lines(&args.old_string),
        lines(&args.new_string)
    )
}

/// Resolves the path and decides the zone's requirement; a call that would ask reads the file
/// and applies the edit for its preview (an edit that cannot apply is not put to the user).
/// Blocking: file-system calls.
fn prepare(fs: &Fs, args: EditFileArgs) -> PreparedCall<EditPlan> {
    let description = describe(&args);
    let p = match change_target(&fs.sandbox, &args.path, "edit") {
        Ok(p) => p,
        Err(err) => {
            return PreparedCall::new(EditPlan(Err(err)))
                .with_requirement(ApprovalRequirement::PreApproved)
                .with_description(description);
        }
    };
    let protection = fs.sandbox.protection(&p);
    if let Some(err) = protected_error(&protection) {
        return PreparedCall::new(EditPlan(Err(err.clone())))
            .with_requirement(ApprovalRequirement::blocked(err.message))
            .with_description(description);
    }
    let mut requirement = zone_requirement(&fs.sandbox, &p, ZoneOperation::Write, &protection);
    let mut approved = Approved::new(requirement.clone());
    let mut prepared = None;
    // Only a call that would be put to the user is checked for whether it can apply.
    if asks(&requirement) {
        let vpath = p.virtual_path();
        match read_original(fs, &p).and_then(|original| {
            let edited = apply(&vpath, &original, &args)?;
            Ok((original, edited))
        }) {
            Err(_) => {
                requirement = ApprovalRequirement::PreApproved;
                approved = Approved::new(requirement.clone());
            }
            Ok((original, edited)) => {
                let diff = result(fs, &vpath, &original, &edited, false);
                approved = approved.with_preview(diff, Some(original.clone()));
                prepared = Some((original, edited));
            }
        }
    }
    PreparedCall::new(EditPlan(Ok(Edit {
        path: p,
        args,
        prepared,
        approved,
    })))
    .with_requirement(requirement)
    .with_description(description)
}

/// Reads the file, applies the edit (the prepared one when the file is as it was), checks it
/// against what was approved and writes it. Blocking.
fn edit(fs: &Fs, plan: Edit) -> Result<ToolResultValue, ToolError> {
    let vpath = plan.path.virtual_path();
    let original = read_original(fs, &plan.path)?;
    let edited = match plan.prepared {
        Some((seen, edited)) if seen == original => edited,
        Some(_) | None => apply(&vpath, &original, &plan.args)?,
    };
    plan.approved
        .check_original(&vpath, Some(&original), NAME)?;
    let protection = fs.sandbox.protection(&plan.path);
    plan.approved.check_requirement(
        &zone_requirement(&fs.sandbox, &plan.path, ZoneOperation::Write, &protection),
        NAME,
        &vpath,
    )?;
    fs.sandbox
        .write_atomic(&plan.path, edited.text.as_bytes(), false)?;
    Ok(result(fs, &vpath, &original, &edited, true))
}

fn result(
    fs: &Fs,
    vpath: &str,
    original: &[u8],
    edited: &Edited,
    written: bool,
) -> ToolResultValue {
    let bytes = edited.text.as_bytes();
    let written = written.then_some(bytes.len() as u64);
    let mut value = diff_result(vpath, Some(original), bytes, written, &fs.limits.diff);
    if let Value::Object(map) = &mut value.data {
        map.insert("replacements".to_owned(), json!(edited.replacements));
    }
    value
}

#[async_trait]
impl DescribedTool for EditFile {
    type Args = EditFileArgs;
    type Plan = EditPlan;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    async fn prepare(
        &self,
        args: EditFileArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<EditPlan>, ToolError> {
        let fs = self.fs.clone();
        blocking(move || Ok(prepare(&fs, args))).await
    }

    async fn execute(
        &self,
        plan: EditPlan,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let plan = plan.0?;
        let fs = self.fs.clone();
        blocking(move || edit(&fs, plan)).await
    }
}
