//! `file_info {path}` → a `structured` result `{path, name, type, size, modified, zone,
//! writable}`; pre-approved. A symbolic link is described as itself; a FIFO, socket or device
//! by its type (`fifo`, `socket`, `device`), from its metadata: it is never opened. `/` is a
//! directory with no zone.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::tool::{ManualExecution, PreApprovedTool, ToolContext, ToolInfo};
use golem_protocol::{DisplayHints, PreferredView, ToolError, ToolKind, ToolResultValue};
use golem_sandbox::ZoneMode;
use golem_toolset::time::iso8601;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::list_files::{entry_type, type_name};
use super::{Fs, blocking};

/// Describe a file or directory: type, size, modification time, zone and whether it can be
/// changed.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileInfoArgs {
    /// The path to describe.
    path: String,
}

/// What the model and the user see of `file_info` (the user may run it too: `/file_info …`
/// in a chat).
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<FileInfoArgs>(
        "file_info",
        "Describe a file or directory (path /<zone>/<path>): type, size in bytes, last \
         modification (ISO 8601), its zone and whether that zone is writable.",
    )
    .with_kind(ToolKind::Read)
    .with_execution(ManualExecution::both("File details", Some("Files")))
    .with_approval_policy("pre-approved")
});

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

#[async_trait]
impl PreApprovedTool for FileInfo {
    type Args = FileInfoArgs;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    fn describe(&self, args: &FileInfoArgs) -> String {
        format!("Describe {}", args.path)
    }

    async fn execute(
        &self,
        args: FileInfoArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let fs = self.fs.clone();
        blocking(move || info(&fs, &args)).await
    }
}
