//! `git_status {}` → the custom kind `git.status` (docs/tools.md, Result kinds): the branch, its
//! upstream and how far ahead and behind, and the staged, modified, untracked and conflicted paths
//! as virtual paths; summary `N staged, M modified`, folded when the tree is clean. Pre-approved:
//! it reads only, without taking optional locks (the index on disk is not refreshed).

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::porcelain::{GitStatusData, parse_status};
use super::repo::{Access, Repo};
use super::tool::{GitCommand, READS_ONLY};

/// Show the repository's status.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitStatusArgs {}

/// Nothing to decide: the call runs as it is.
#[derive(Debug)]
pub struct GitStatusPlan;

impl CallPlan for GitStatusPlan {}

/// The `git_status` tool.
#[derive(Debug)]
pub struct GitStatus;

/// The status of `repo`'s working tree.
pub(super) async fn read_status(
    repo: &Repo,
    cancel: &CancellationToken,
) -> Result<GitStatusData, ToolError> {
    let args = [
        "status",
        "--porcelain=v2",
        "--branch",
        "-z",
        "--untracked-files=normal",
        "--ignore-submodules=dirty",
    ]
    .map(str::to_owned);
    let output = repo.ok(Access::Read, &args, cancel).await?;
    Ok(parse_status(&output.stdout, |path| repo.virtual_path(path)))
}

#[async_trait]
impl GitCommand for GitStatus {
    type Args = GitStatusArgs;
    type Plan = GitStatusPlan;
    const NAME: &'static str = "git_status";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Read;
    const LABEL: &'static str = "Show Status";
    const POLICY: &'static str = READS_ONLY;

    fn description(root: &str) -> String {
        format!(
            "Show the status of the git repository {root}: the branch, its upstream and how far \
             ahead and behind it is, and the staged, modified (not staged), untracked and \
             conflicted files, as virtual paths"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        _args: GitStatusArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitStatusPlan>, ToolError> {
        Ok(PreparedCall::new(GitStatusPlan)
            .with_requirement(ApprovalRequirement::PreApproved)
            .with_description(format!("Show the git status of {}", repo.root()))
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        repo: &Repo,
        _plan: GitStatusPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let data = read_status(repo, &ctx.cancel).await?;
        let summary = data.summary();
        Ok(super::status_result(&data, summary))
    }
}
