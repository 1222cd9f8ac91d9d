//! `file_exists {path}` → a `structured` result whose data is a JSON boolean; pre-approved.
//! A symbolic link exists even when its target does not. A malformed path or an unknown zone
//! is an `INVALID_PATH` error, not `false`, so the model learns its path is wrong.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::tool::{ManualExecution, PreApprovedTool, ToolContext, ToolInfo};
use golem_protocol::{ToolError, ToolKind, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Fs, blocking};

/// Check whether a file or directory exists.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileExistsArgs {
    /// The path to check.
    path: String,
}

/// What the model and the user see of `file_exists` (the user may run it too: `/file_exists …`
/// in a chat).
static INFO: LazyLock<ToolInfo> = LazyLock::new(|| {
    ToolInfo::new::<FileExistsArgs>(
        "file_exists",
        "Check whether a file or directory exists (path /<zone>/<path>); returns true or false.",
    )
    .with_kind(ToolKind::Read)
    .with_execution(ManualExecution::both("Does a file exist?", Some("Files")))
    .with_approval_policy("pre-approved")
});

/// The `file_exists` tool.
pub struct FileExists {
    fs: Arc<Fs>,
}

impl FileExists {
    pub(super) fn new(fs: Arc<Fs>) -> Self {
        Self { fs }
    }
}

fn check(fs: &Fs, args: &FileExistsArgs) -> Result<ToolResultValue, ToolError> {
    let p = fs.sandbox.resolve(&args.path)?;
    let exists = fs.sandbox.exists(&p)?;
    let summary = if exists {
        format!("{p} exists")
    } else {
        format!("{p} does not exist")
    };
    Ok(ToolResultValue::structured(Value::Bool(exists)).with_summary(summary))
}

#[async_trait]
impl PreApprovedTool for FileExists {
    type Args = FileExistsArgs;

    fn info(&self) -> &ToolInfo {
        &INFO
    }

    fn describe(&self, args: &FileExistsArgs) -> String {
        format!("Check whether {} exists", args.path)
    }

    async fn execute(
        &self,
        args: FileExistsArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let fs = self.fs.clone();
        blocking(move || check(&fs, &args)).await
    }
}
