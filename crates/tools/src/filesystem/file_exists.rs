//! `file_exists {path}` → a `structured` result whose data is a JSON boolean; pre-approved.
//! A symbolic link exists even when its target does not. A malformed path or an unknown zone
//! is an `INVALID_PATH` error, not `false`, so the model learns its path is wrong.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{
    CallPlan, ManualExecution, PreparedCall, ToolContext, TypedTool, input_schema_for,
};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Fs, blocking};

const NAME: &str = "file_exists";

/// Check whether a file or directory exists.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileExistsArgs {
    /// The path to check, as a virtual path /<zone>/<path>.
    path: String,
}

static SCHEMA: LazyLock<Value> = LazyLock::new(input_schema_for::<FileExistsArgs>);

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

/// A pre-approved call runs with its arguments as its plan.
impl CallPlan for FileExistsArgs {}

#[async_trait]
impl TypedTool for FileExists {
    type Args = FileExistsArgs;
    type Plan = FileExistsArgs;

    fn name(&self) -> &str {
        NAME
    }

    /// The user may run it too (`/file_exists …` in a chat).
    fn execution(&self) -> ManualExecution {
        ManualExecution::both("Does a file exist?", Some("Files"))
    }

    fn description(&self) -> &str {
        "Check whether a file or directory exists (path /<zone>/<path>); returns true or false."
    }

    fn input_schema(&self) -> &Value {
        &SCHEMA
    }

    fn approval_policy(&self) -> Option<String> {
        Some("pre-approved".to_owned())
    }

    async fn prepare(
        &self,
        args: FileExistsArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<FileExistsArgs>, ToolError> {
        let description = format!("Check whether {} exists", args.path);
        Ok(PreparedCall::new(args)
            .with_requirement(ApprovalRequirement::PreApproved)
            .with_description(description)
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        plan: FileExistsArgs,
        _ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let fs = self.fs.clone();
        blocking(move || check(&fs, &plan)).await
    }
}
