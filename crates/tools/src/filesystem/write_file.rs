//! `write_file {path, content, encoding?, createDirs?}` → `diff`; the zone's `create` for a new
//! file, `write` for an existing one. The file is replaced atomically (temporary file, then
//! rename, by `Sandbox::write_atomic`); the approval preview is the diff the write would make,
//! prepared with the call when it asks.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, DescribedTool, PreparedCall, ToolContext, ToolInfo};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolKind, ToolResultValue};
use golem_sandbox::{EntryKind, ZoneOperation, ZonePath};
use golem_toolset::diff::diff_result;
use schemars::JsonSchema;
use serde::Deserialize;

use super::approved::Approved;
use super::content::{Encoding, line_count};
use super::gate::{Existing, asks, change_target, existing, protected_error, zone_requirement};
use super::{Fs, blocking};

const NAME: &str = "write_file";

/// Create a file, or replace the whole content of an existing one.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct WriteFileArgs {
    /// The file.
    path: String,
    /// The file's whole new content.
    content: String,
    /// "utf-8" (default), or "base64" for base64-encoded bytes.
    #[serde(default)]
    encoding: Option<Encoding>,
    /// Create missing parent directories.
    #[serde(default)]
    create_dirs: Option<bool>,
}

/// What the model sees of `write_file`.
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<WriteFileArgs>(
        NAME,
        "Create a file or replace its whole content (path /<zone>/<path>). The write is atomic. \
         Use encoding \"base64\" for binary content and createDirs: true to create missing \
         parent directories. To change part of a file, use edit_file.",
    )
    .with_kind(ToolKind::Edit)
    .with_approval_policy("by zone: create (new file) / write (existing)")
});

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

/// What a `write_file` call will do.
#[derive(Debug)]
pub struct WritePlan(Result<Write, ToolError>);

/// A write that can go ahead once approved.
#[derive(Debug)]
struct Write {
    path: ZonePath,
    bytes: Vec<u8>,
    create_dirs: bool,
    approved: Approved,
}

impl CallPlan for WritePlan {
    fn preview(&mut self) -> Option<ToolResultValue> {
        self.0.as_mut().ok()?.approved.show()
    }

    fn follow(&mut self, shown: &Self) {
        if let (Ok(write), Ok(seen)) = (&mut self.0, &shown.0)
            && write.path == seen.path
        {
            write.approved.follow(&seen.approved);
        }
    }
}

/// How much is written, in words: lines of text, or bytes of base64 content (counted from its
/// length, without decoding).
fn amount(content: &str, encoding: Encoding) -> String {
    match encoding {
        Encoding::Utf8 => {
            let n = line_count(content);
            format!("{n} {}", if n == 1 { "line" } else { "lines" })
        }
        Encoding::Base64 => {
            let encoded = content.trim();
            let padding = encoded.bytes().rev().take_while(|b| *b == b'=').count();
            let bytes = (encoded.len() / 4 * 3).saturating_sub(padding);
            format!("{bytes} bytes")
        }
    }
}

/// Resolves the path, decodes the content, looks at what is there and decides the zone's
/// requirement; the preview diff is made only for a call that asks. Blocking: file-system calls.
fn prepare(fs: &Fs, args: WriteFileArgs) -> PreparedCall<WritePlan> {
    let encoding = args.encoding.unwrap_or_default();
    let describe = |state: &str| {
        format!(
            "Write {} to {}{state}",
            amount(&args.content, encoding),
            args.path
        )
    };
    let p = match change_target(&fs.sandbox, &args.path, "write") {
        Ok(p) => p,
        Err(err) => return cannot_succeed(err, describe("")),
    };
    let protection = fs.sandbox.protection(&p);
    if let Some(err) = protected_error(&protection) {
        return PreparedCall::new(WritePlan(Err(err.clone())))
            .with_requirement(ApprovalRequirement::blocked(err.message))
            .with_description(describe(""));
    }
    let existing = existing(&fs.sandbox, &p);
    let description = describe(&match existing {
        Existing::Missing => " (new file)".to_owned(),
        Existing::Entry(_, size) => format!(" (overwrites {size} bytes)"),
        Existing::Unknown => String::new(),
    });
    let risk = match existing {
        Existing::Entry(..) => Risk::High,
        Existing::Missing | Existing::Unknown => Risk::Medium,
    };
    let bytes = match encoding.decode(args.content) {
        Ok(bytes) => bytes,
        Err(err) => return cannot_succeed(err, description),
    };
    let requirement = match existing {
        // Cannot succeed (a directory), or cannot be told: execute says why, nobody is asked.
        Existing::Entry(EntryKind::Directory, _) | Existing::Unknown => {
            ApprovalRequirement::PreApproved
        }
        Existing::Missing => zone_requirement(&fs.sandbox, &p, ZoneOperation::Create, &protection),
        Existing::Entry(..) => zone_requirement(&fs.sandbox, &p, ZoneOperation::Write, &protection),
    };
    let mut approved = Approved::new(requirement.clone());
    if asks(&requirement) {
        let original = match existing {
            Existing::Missing => Ok(None),
            Existing::Entry(..) | Existing::Unknown => fs.sandbox.read(&p).map(Some),
        };
        // Without the original there is no preview; execute reports what is wrong.
        if let Ok(original) = original {
            let diff = diff_result(
                &p.virtual_path(),
                original.as_deref(),
                &bytes,
                None,
                &fs.limits.diff,
            );
            approved = approved.with_preview(diff, original);
        }
    }
    PreparedCall::new(WritePlan(Ok(Write {
        path: p,
        bytes,
        create_dirs: args.create_dirs.unwrap_or(false),
        approved,
    })))
    .with_requirement(requirement)
    .with_description(description)
    .with_risk(risk)
}

/// A call that cannot succeed: pre-approved, so nobody is asked, and `execute` reports `err`.
fn cannot_succeed(err: ToolError, description: String) -> PreparedCall<WritePlan> {
    PreparedCall::new(WritePlan(Err(err)))
        .with_requirement(ApprovalRequirement::PreApproved)
        .with_description(description)
}

/// Checks the file against what was approved and writes it. Blocking.
fn write(fs: &Fs, plan: Write) -> Result<ToolResultValue, ToolError> {
    let vpath = plan.path.virtual_path();
    let original = current_content(fs, &plan.path)?;
    plan.approved
        .check_original(&vpath, original.as_deref(), NAME)?;
    let op = if original.is_some() {
        ZoneOperation::Write
    } else {
        ZoneOperation::Create
    };
    let now = zone_requirement(
        &fs.sandbox,
        &plan.path,
        op,
        &fs.sandbox.protection(&plan.path),
    );
    plan.approved.check_requirement(&now, NAME, &vpath)?;
    fs.sandbox
        .write_atomic(&plan.path, &plan.bytes, plan.create_dirs)?;
    Ok(diff_result(
        &vpath,
        original.as_deref(),
        &plan.bytes,
        Some(plan.bytes.len() as u64),
        &fs.limits.diff,
    ))
}

#[async_trait]
impl DescribedTool for WriteFile {
    type Args = WriteFileArgs;
    type Plan = WritePlan;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    async fn prepare(
        &self,
        args: WriteFileArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<WritePlan>, ToolError> {
        let fs = self.fs.clone();
        blocking(move || Ok(prepare(&fs, args))).await
    }

    async fn execute(
        &self,
        plan: WritePlan,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let plan = plan.0?;
        let fs = self.fs.clone();
        blocking(move || write(&fs, plan)).await
    }
}
