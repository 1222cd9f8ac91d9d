//! `git_pull {remote?, branch?, rebase?}` → fetches from `origin` or `upstream` and merges (or
//! rebases onto) the branch's upstream, or the named remote branch; a `text` result with what
//! git said. Runs in the toolset's jail with the network. Asks by default: it changes the
//! working tree with what someone else wrote. A merge that conflicts is the error, and
//! `git_status` then lists the conflicts.

use std::sync::Arc;

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{
    CallPlan, ManualExecution, PreparedCall, ToolContext, TypedTool, input_schema_for,
};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::repo::{Access, Repo};
use super::{Remote, checks};

/// Fetch from a remote and merge into the current branch.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitPullArgs {
    /// The remote to pull from.
    #[serde(default)]
    remote: Remote,
    /// The remote branch to merge; the current branch's upstream when absent.
    #[serde(default)]
    branch: Option<String>,
    /// Rebase the current branch onto what was fetched instead of merging.
    #[serde(default)]
    rebase: bool,
}

/// The checked arguments.
#[derive(Debug)]
pub struct GitPullPlan {
    remote: Remote,
    branch: Option<String>,
    rebase: bool,
}

impl CallPlan for GitPullPlan {}

/// The `git_pull` tool.
#[derive(Debug)]
pub struct GitPull {
    repo: Arc<Repo>,
    description: String,
    schema: Value,
}

impl GitPull {
    pub(super) fn new(repo: Arc<Repo>) -> GitPull {
        let description = format!(
            "Pull into the current branch of the git repository {}: fetch from `origin` (or \
             `upstream`) and merge the branch's upstream, or `branch` of that remote; with \
             `rebase`, rebase onto it instead. A conflict stops it (see git_status)",
            repo.root()
        );
        GitPull {
            repo,
            description,
            schema: input_schema_for::<GitPullArgs>(),
        }
    }
}

#[async_trait]
impl TypedTool for GitPull {
    type Args = GitPullArgs;
    type Plan = GitPullPlan;

    fn name(&self) -> &str {
        "git_pull"
    }

    fn execution(&self) -> ManualExecution {
        super::both("Pull from Remote")
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
        args: GitPullArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitPullPlan>, ToolError> {
        if let Some(branch) = &args.branch {
            checks::branch_name("branch", branch)?;
        }
        let what = match &args.branch {
            Some(branch) => format!("`{branch}` of {}", args.remote.name()),
            None => format!("the upstream branch from {}", args.remote.name()),
        };
        let how = if args.rebase { "rebase onto" } else { "merge" };
        let description = format!(
            "Pull into {} (fetch and {how} {what}; uses the network)",
            self.repo.root()
        );
        Ok(PreparedCall::new(GitPullPlan {
            remote: args.remote,
            branch: args.branch,
            rebase: args.rebase,
        })
        .with_requirement(ApprovalRequirement::Ask)
        .with_description(description)
        .with_risk(Risk::Medium))
    }

    async fn execute(
        &self,
        plan: GitPullPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let mode = if plan.rebase {
            "--rebase=true"
        } else {
            "--no-rebase"
        };
        let mut args: Vec<String> = [
            "pull",
            mode,
            "--no-edit",
            "--no-stat",
            "--recurse-submodules=no",
            // The repository's `remote.<name>.uploadpack` would win over a `-c` (see safety.rs).
            "--upload-pack=git-upload-pack",
            "--end-of-options",
            plan.remote.name(),
        ]
        .map(str::to_owned)
        .to_vec();
        args.extend(plan.branch.clone());
        let output = self.repo.ok(Access::Network, &args, &ctx.cancel).await?;
        let summary = format!("pulled from {}", plan.remote.name());
        Ok(super::said_result(output.said(), summary))
    }
}
