//! `file_exists {path}` → a `structured` result whose data is a JSON boolean; pre-approved.
//! A symbolic link exists even when its target does not. A malformed path or an unknown zone
//! is an `INVALID_PATH` error, not `false`, so the model learns its path is wrong.

use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{ManualExecution, Tool, ToolContext, input_schema_for, parse_args};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::gate::peek;
use super::{Fs, blocking};

const NAME: &str = "file_exists";

/// Check whether a file or directory exists.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FileExistsArgs {
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

#[async_trait]
impl Tool for FileExists {
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

    fn approval(&self, _args: &Value, _ctx: &ToolContext) -> Option<ApprovalRequirement> {
        Some(ApprovalRequirement::PreApproved)
    }

    fn describe_call(&self, args: &Value) -> String {
        match peek::<FileExistsArgs>(args) {
            Some(args) => format!("Check whether {} exists", args.path),
            None => "Check whether a file exists".to_owned(),
        }
    }

    fn risk(&self, _args: &Value) -> Risk {
        Risk::Low
    }

    async fn execute(&self, args: Value, _ctx: &ToolContext) -> Result<ToolResultValue, ToolError> {
        let args: FileExistsArgs = parse_args(NAME, args)?;
        let fs = self.fs.clone();
        blocking(move || check(&fs, &args)).await
    }
}
