//! `write_file {path, content, encoding?, createDirs?}` → `diff`; the zone's `create` for a new
//! file, `write` for an existing one. The file is replaced atomically (temporary file, then
//! rename, by `Sandbox::write_atomic`); the approval preview is the diff the write would make.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{Tool, ToolContext, input_schema_for, parse_args};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use golem_sandbox::{EntryKind, ZoneOperation, ZonePath};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::content::{Encoding, line_count};
use super::diff::diff_result;
use super::gate::{Existing, change_target, changeable, decided, existing, peek, write_operation};
use super::{Fs, blocking};

const NAME: &str = "write_file";

/// Create a file, or replace the whole content of an existing one.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WriteFileArgs {
    /// The file, as a virtual path /<zone>/<path>.
    path: String,
    /// The complete new content of the file.
    content: String,
    /// "utf-8" (the default) for text, "base64" when content is base64-encoded bytes.
    #[serde(default)]
    encoding: Option<Encoding>,
    /// Create missing parent directories (default false).
    #[serde(default)]
    create_dirs: Option<bool>,
}

static SCHEMA: LazyLock<Value> = LazyLock::new(input_schema_for::<WriteFileArgs>);

/// The `write_file` tool.
pub struct WriteFile {
    fs: Arc<Fs>,
}

impl WriteFile {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

/// The current content of the file at `p`, `None` when there is none; a directory is refused.
pub(super) fn current_content(fs: &Fs, p: &ZonePath) -> Result<Option<Vec<u8>>, ToolError> {
    match fs.sandbox.metadata(p) {
        Err(err) if err.code == ToolErrorCode::FileNotFound => Ok(None),
        Err(err) => Err(err),
        Ok(info) => match info.kind {
            EntryKind::Directory => Err(ToolError::new(
                ToolErrorCode::InvalidPath,
                format!(
                    "{} is a directory; write_file needs a file path such as {}/file.txt",
                    p.virtual_path(),
                    p.virtual_path()
                ),
            )),
            // The sandbox reads regular files only (opened non-blocking, so a FIFO never
            // blocks); anything else is refused there.
            EntryKind::File
            | EntryKind::Symlink
            | EntryKind::Fifo
            | EntryKind::Socket
            | EntryKind::Device => fs.sandbox.read(p).map(Some),
        },
    }
}

fn write(fs: &Fs, call_id: &str, args: WriteFileArgs) -> Result<ToolResultValue, ToolError> {
    let entry = fs.ledger.take(call_id);
    let p = change_target(&fs.sandbox, &args.path, "write")?;
    let vpath = p.virtual_path();
    let bytes = args.encoding.unwrap_or_default().decode(args.content)?;
    let original = current_content(fs, &p)?;
    entry.check_original(&vpath, original.as_deref(), NAME)?;
    let op = if original.is_some() {
        ZoneOperation::Write
    } else {
        ZoneOperation::Create
    };
    entry.check_requirement(&fs.sandbox.requirement(&p, op), NAME, &vpath)?;
    fs.sandbox
        .write_atomic(&p, &bytes, args.create_dirs.unwrap_or(false))?;
    Ok(diff_result(
        &vpath,
        original.as_deref(),
        &bytes,
        Some(bytes.len() as u64),
        &fs.limits.diff,
    ))
}

fn preview(fs: &Fs, call_id: &str, args: WriteFileArgs) -> Option<ToolResultValue> {
    let p = changeable(&fs.sandbox, &args.path)?;
    let bytes = args
        .encoding
        .unwrap_or_default()
        .decode(args.content)
        .ok()?;
    let original = current_content(fs, &p).ok()?;
    let vpath = p.virtual_path();
    fs.ledger.previewed(call_id, &vpath, original.as_deref());
    Some(diff_result(
        &vpath,
        original.as_deref(),
        &bytes,
        None,
        &fs.limits.diff,
    ))
}

#[async_trait]
impl Tool for WriteFile {
    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Create a file or replace its whole content (path /<zone>/<path>). The write is atomic. \
         Use encoding \"base64\" for binary content and createDirs: true to create missing \
         parent directories. To change part of a file, use edit_file."
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn approval_policy(&self) -> Option<String> {
        Some("by zone: create (new file) / write (existing)".to_owned())
    }

    fn approval(&self, args: &Value, ctx: &ToolContext) -> Option<ApprovalRequirement> {
        let sandbox = &self.fs.sandbox;
        let requirement =
            match peek::<WriteFileArgs>(args).and_then(|args| changeable(sandbox, &args.path)) {
                // Cannot succeed: execute reports why, nobody is asked.
                None => ApprovalRequirement::PreApproved,
                Some(p) => match existing(sandbox, &p) {
                    Existing::Entry(EntryKind::Directory, _) | Existing::Unknown => {
                        ApprovalRequirement::PreApproved
                    }
                    Existing::Missing | Existing::Entry(..) => {
                        sandbox.requirement(&p, write_operation(sandbox, &p))
                    }
                },
            };
        decided(&self.fs, ctx, requirement)
    }

    fn describe_call(&self, args: &Value) -> String {
        let Some(args) = peek::<WriteFileArgs>(args) else {
            return "Write a file".to_owned();
        };
        let encoding = args.encoding.unwrap_or_default();
        let amount = match encoding {
            Encoding::Utf8 => {
                let n = line_count(&args.content);
                format!("{n} {}", if n == 1 { "line" } else { "lines" })
            }
            Encoding::Base64 => {
                // Counted from the length, without decoding (execute checks the content).
                let encoded = args.content.trim();
                let padding = encoded.bytes().rev().take_while(|b| *b == b'=').count();
                let bytes = (encoded.len() / 4 * 3).saturating_sub(padding);
                format!("{bytes} bytes")
            }
        };
        let state = match changeable(&self.fs.sandbox, &args.path)
            .map(|p| existing(&self.fs.sandbox, &p))
        {
            Some(Existing::Missing) => " (new file)".to_owned(),
            Some(Existing::Entry(_, size)) => format!(" (overwrites {size} bytes)"),
            Some(Existing::Unknown) | None => String::new(),
        };
        format!("Write {amount} to {}{state}", args.path)
    }

    fn risk(&self, args: &Value) -> Risk {
        let overwrites = peek::<WriteFileArgs>(args)
            .and_then(|args| changeable(&self.fs.sandbox, &args.path))
            .is_some_and(|p| matches!(existing(&self.fs.sandbox, &p), Existing::Entry(..)));
        if overwrites { Risk::High } else { Risk::Medium }
    }

    async fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<ToolResultValue> {
        let args = peek::<WriteFileArgs>(args)?;
        let fs = self.fs.clone();
        let call_id = ctx.tool_call_id.clone();
        blocking(move || Ok(preview(&fs, &call_id, args)))
            .await
            .ok()
            .flatten()
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args: WriteFileArgs = parse_args(NAME, args)?;
        let fs = self.fs.clone();
        let call_id = ctx.tool_call_id.clone();
        blocking(move || write(&fs, &call_id, args)).await
    }
}
