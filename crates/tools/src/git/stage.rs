//! `git_stage {paths}` → `git add` of each path (new, changed or deleted files, or whole
//! directories), then the status after it (`git.status`). Asks by default: it changes the
//! index.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;

use super::repo::{Access, Repo};
use super::status::read_status;
use super::tool::{ASK, GitCommand};

/// Stage files for the next commit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitStageArgs {
    /// Files or directories to stage (virtual, or relative to the repository).
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
pub struct GitStage;

#[async_trait]
impl GitCommand for GitStage {
    type Args = GitStageArgs;
    type Plan = GitStagePlan;
    const NAME: &'static str = "git_stage";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Edit;
    const LABEL: &'static str = "Stage Files";
    const POLICY: &'static str = ASK;

    fn description(root: &str) -> String {
        format!(
            "Stage files of the git repository {root} for the next commit (`git add`): new, \
             changed or deleted files, or whole directories. Returns the status after it"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        args: GitStageArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitStagePlan>, ToolError> {
        let paths = args
            .paths
            .iter()
            .map(|path| repo.relative(path))
            .collect::<Result<Vec<String>, ToolError>>()?;
        let shown: Vec<String> = paths.iter().map(|p| repo.virtual_path(p)).collect();
        let description = format!("Stage {} for the next commit", fold(&shown.join(", "), 300));
        Ok(PreparedCall::new(GitStagePlan { paths })
            .with_requirement(ApprovalRequirement::Ask)
            .with_description(description)
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitStagePlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let mut args = vec!["add".to_owned(), "--".to_owned()];
        args.extend(plan.paths.iter().cloned());
        repo.ok(Access::Write, &args, &ctx.cancel).await?;
        let data = read_status(repo, &ctx.cancel).await?;
        let n = plan.paths.len();
        let summary = format!(
            "staged {n} {}; {}",
            if n == 1 { "path" } else { "paths" },
            data.summary()
        );
        Ok(super::status_result(&data, summary))
    }
}
