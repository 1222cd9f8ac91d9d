//! `file_info {path}` → a `structured` result `{path, name, type, size, modified, zone,
//! writable}`; pre-approved. A symbolic link is described as itself; a FIFO, socket or device
//! by its type (`fifo`, `socket`, `device`), from its metadata: it is never opened. `/` is a
//! directory with no zone.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{
    CallPlan, ManualExecution, PreparedCall, ToolContext, TypedTool, input_schema_for,
};
use golem_protocol::{DisplayHints, PreferredView, Risk, ToolError, ToolResultValue};
use golem_sandbox::ZoneMode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::list_files::{entry_type, type_name};
use super::time::iso8601;
use super::{Fs, blocking};

const NAME: &str = "file_info";

/// Describe a file or directory: type, size, modification time, zone and whether it can be
/// changed.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfoArgs {
    /// The path, as a virtual path /<zone>/<path>.
    path: String,
}

static SCHEMA: LazyLock<Value> = LazyLock::new(input_schema_for::<FileInfoArgs>);

/// The `file_info` tool.
pub struct FileInfo {
    fs: Arc<Fs>,
}

impl FileInfo {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

fn info(fs: &Fs, args: &FileInfoArgs) -> Result<ToolResultValue, ToolError> {
    let p = fs.sandbox.resolve(&args.path)?;
    let info = fs.sandbox.metadata(&p)?;
    let vpath = p.virtual_path();
    let zone = p.zone_name().and_then(|name| fs.sandbox.zone(name));
    let writable = zone.is_some_and(|zone| zone.mode() == ZoneMode::Rw);
    let name = p
        .file_name()
        .map(str::to_owned)
        .or_else(|| p.zone_name().map(str::to_owned))
        .unwrap_or_else(|| "/".to_owned());
    let entry_type = entry_type(info.kind);
    let data = json!({
        "path": vpath,
        "name": name,
        "type": entry_type,
        "size": info.size,
        "modified": info.modified.map(iso8601),
        "zone": p.zone_name(),
        "writable": writable,
    });
    let kind = type_name(entry_type);
    Ok(ToolResultValue::structured(data)
        .with_summary(format!("{vpath}: {kind}, {} bytes", info.size))
        .with_display(DisplayHints {
            preferred_view: Some(PreferredView::Tree),
            ..DisplayHints::default()
        }))
}

/// A pre-approved call runs with its arguments as its plan.
impl CallPlan for FileInfoArgs {}

#[async_trait]
impl TypedTool for FileInfo {
    type Args = FileInfoArgs;
    type Plan = FileInfoArgs;

    fn name(&self) -> &str {
        NAME
    }

    /// The user may run it too (`/file_info …` in a chat).
    fn execution(&self) -> ManualExecution {
        ManualExecution::both("File details", Some("Files"))
    }

    fn description(&self) -> &str {
        "Describe a file or directory (path /<zone>/<path>): type, size in bytes, last \
         modification (ISO 8601), its zone and whether that zone is writable."
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn approval_policy(&self) -> Option<String> {
        Some("pre-approved".to_owned())
    }

    async fn prepare(
        &self,
        args: FileInfoArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<FileInfoArgs>, ToolError> {
        let description = format!("Describe {}", args.path);
        Ok(PreparedCall::new(args)
            .with_requirement(ApprovalRequirement::PreApproved)
            .with_description(description)
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        plan: FileInfoArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let fs = self.fs.clone();
        blocking(move || info(&fs, &plan)).await
    }
}
