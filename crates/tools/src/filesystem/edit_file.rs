//! `edit_file {path, old_string, new_string, replace_all?}` → `diff`; the zone's `write`.
//!
//! `old_string` must match the file exactly, once (or any number of times with `replace_all`);
//! a missing or ambiguous match is an error that says how many matches there were. An edit
//! that cannot apply is not put to the user: `approval` answers pre-approved and `execute`
//! reports the error. The approval preview is the diff the edit would make.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{Tool, ToolContext, input_schema_for, parse_args};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use golem_sandbox::{ZoneOperation, ZonePath};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::content::{as_text, line_count};
use super::diff::diff_result;
use super::gate::{change_target, changeable, decided, peek};
use super::matching::{EditError, Edited, apply_edit};
use super::{Fs, blocking};

const NAME: &str = "edit_file";

/// Replace an exact piece of text in a file. old_string must occur exactly once, unless
/// replace_all is true.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EditFileArgs {
    /// The file, as a virtual path /<zone>/<path>.
    path: String,
    /// The exact text to replace, including whitespace and line breaks; include enough
    /// surrounding lines to make it unique.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence instead of requiring exactly one (default false).
    #[serde(default)]
    replace_all: Option<bool>,
}

static SCHEMA: LazyLock<Value> = LazyLock::new(input_schema_for::<EditFileArgs>);

/// The `edit_file` tool.
pub struct EditFile {
    fs: Arc<Fs>,
}

impl EditFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// The file's current bytes and the edit applied to them.
fn plan(fs: &Fs, p: &ZonePath, args: &EditFileArgs) -> Result<(Vec<u8>, Edited), ToolError> {
    let vpath = p.virtual_path();
    let original = fs.sandbox.read(p).map_err(|mut err| {
        if err.code == ToolErrorCode::FileNotFound {
            err.message =
                format!("{vpath} does not exist; edit_file changes existing files, use write_file to create one");
        }
        err
    })?;
    let Some(text) = as_text(&original) else {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!(
                "{vpath} is a binary file (NUL bytes or invalid UTF-8); edit_file edits text, \
                 use write_file with encoding \"base64\" to replace binary content"
            ),
        ));
    };
    let edited = apply_edit(
        text,
        &args.old_string,
        &args.new_string,
        args.replace_all.unwrap_or(false),
    )
    .map_err(|err| edit_error(&vpath, &err))?;
    Ok((original, edited))
}

fn edit_error(vpath: &str, err: &EditError) -> ToolError {
    let code = match err {
        EditError::EmptyOld | EditError::NoChange => ToolErrorCode::InvalidArguments,
        EditError::NotFound { .. } | EditError::Ambiguous { .. } => ToolErrorCode::ExecutionError,
    };
    ToolError::new(code, format!("{vpath}: {err}"))
        .with_details(json!({ "matches": err.matches() }))
}

fn edit(fs: &Fs, call_id: &str, args: &EditFileArgs) -> Result<ToolResultValue, ToolError> {
    let entry = fs.ledger.take(call_id);
    let p = change_target(&fs.sandbox, &args.path, "edit")?;
    let vpath = p.virtual_path();
    let (original, edited) = plan(fs, &p, args)?;
    entry.check_original(&vpath, Some(&original), NAME)?;
    entry.check_requirement(
        &fs.sandbox.requirement(&p, ZoneOperation::Write),
        NAME,
        &vpath,
    )?;
    fs.sandbox.write_atomic(&p, edited.text.as_bytes(), false)?;
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
impl Tool for EditFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Replace exact text in an existing file (path /<zone>/<path>): old_string must match \
         the file exactly (whitespace and line breaks included) and occur once, unless \
         replace_all is true. Read the file first and copy the text to replace."
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn approval_policy(&self) -> Option<String> {
        Some("by zone: write".to_owned())
    }

    fn approval(&self, args: &Value, ctx: &ToolContext) -> Option<ApprovalRequirement> {
        let fs = &self.fs;
        let Some((args, p)) = peek::<EditFileArgs>(args)
            .and_then(|args| changeable(&fs.sandbox, &args.path).map(|p| (args, p)))
        else {
            return decided(fs, ctx, ApprovalRequirement::PreApproved);
        };
        let requirement = match fs.sandbox.requirement(&p, ZoneOperation::Write) {
            // Only a call that would be put to the user is checked for whether it can apply.
            ApprovalRequirement::Ask if plan(fs, &p, &args).is_err() => {
                ApprovalRequirement::PreApproved
            }
            requirement => requirement,
        };
        decided(fs, ctx, requirement)
    }

    fn describe_call(&self, args: &Value) -> String {
        let Some(args) = peek::<EditFileArgs>(args) else {
            return "Edit a file".to_owned();
        };
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

    fn risk(&self, _args: &Value) -> Risk {
        Risk::Medium
    }

    async fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<ToolResultValue> {
        let args = peek::<EditFileArgs>(args)?;
        let fs = self.fs.clone();
        let call_id = ctx.tool_call_id.clone();
        blocking(move || {
            let Some(p) = changeable(&fs.sandbox, &args.path) else {
                return Ok(None);
            };
            let Ok((original, edited)) = plan(&fs, &p, &args) else {
                return Ok(None);
            };
            let vpath = p.virtual_path();
            fs.ledger.previewed(&call_id, &vpath, Some(&original));
            Ok(Some(result(&fs, &vpath, &original, &edited, false)))
        })
        .await
        .ok()
        .flatten()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args: EditFileArgs = parse_args(NAME, args)?;
        let fs = self.fs.clone();
        let call_id = ctx.tool_call_id.clone();
        blocking(move || edit(&fs, &call_id, &args)).await
    }
}
