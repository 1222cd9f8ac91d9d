//! `git_stage {paths}` → `git add` of each path (new, changed or deleted files, or whole
//! directories), then the status after it (`git.status`). Asks by default: it changes the
//! index.

use std::sync::Arc;

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{
    CallPlan, ManualExecution, PreparedCall, ToolContext, TypedTool, input_schema_for,
};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::repo::{Access, Repo};
use super::status::read_status;

/// Stage files for the next commit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitStageArgs {
    /// The files or directories to stage (new, changed or deleted): virtual paths in the
    /// repository's zone or paths relative to the repository.
    #[schemars(length(min = 1, max = 100))]
    paths: Vec<String>,
}

/// The paths git is given, relative to the repository.
#[derive(Debug)]
pub struct GitStagePlan {
    paths: Vec<String>,
}

impl CallPlan for GitStagePlan {}

/// The `git_stage` tool.
#[derive(Debug)]
pub struct GitStage {
    repo: Arc<Repo>,
    description: String,
    schema: Value,
}

impl GitStage {
    pub(super) fn new(repo: Arc<Repo>) -> GitStage {
        let description = format!(
            "Stage files of the git repository {} for the next commit (`git add`): new, \
             changed or deleted files, or whole directories. Returns the status after it",
            repo.root()
        );
        GitStage {
            repo,
            description,
            schema: input_schema_for::<GitStageArgs>(),
        }
    }
}

#[async_trait]
impl TypedTool for GitStage {
    type Args = GitStageArgs;
    type Plan = GitStagePlan;

    fn name(&self) -> &str {
        "git_stage"
    }

    fn execution(&self) -> ManualExecution {
        super::both("Stage Files")
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn approval_policy(&self) -> Option<String> {
        Some("ask".to_owned())
    }

    async fn prepare(
        &self,
        args: GitStageArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitStagePlan>, ToolError> {
        let paths = args
            .paths
            .iter()
            .map(|path| self.repo.relative(path))
            .collect::<Result<Vec<String>, ToolError>>()?;
        let shown: Vec<String> = paths.iter().map(|p| self.repo.virtual_path(p)).collect();
        let description = format!("Stage {} for the next commit", fold(&shown.join(", "), 300));
        Ok(PreparedCall::new(GitStagePlan { paths })
            .with_requirement(ApprovalRequirement::Ask)
            .with_description(description)
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        plan: GitStagePlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let mut args = vec!["add".to_owned(), "--".to_owned()];
        args.extend(plan.paths.iter().cloned());
        self.repo.ok(Access::Write, &args, &ctx.cancel).await?;
        let data = read_status(&self.repo, &ctx.cancel).await?;
        let n = plan.paths.len();
        let summary = format!(
            "staged {n} {}; {}",
            if n == 1 { "path" } else { "paths" },
            data.summary()
        );
        Ok(super::status_result(&data, summary))
    }
}
