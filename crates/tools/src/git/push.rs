//! `git_push {remote: origin|upstream, branch, force}` (docs/tools.md, Git) → pushes a local branch
//! to the branch of the same name on the remote; a `text` result with what git said.
//!
//! **Manual only** ("Push to Remote", category "Git"): the model never sees it and a model's
//! call is refused before anything runs. Pre-approved, since the user typed it, unless `force`
//! is set, which asks. Runs in the toolset's jail with the network. The refspec is written out
//! in full (`refs/heads/B:refs/heads/B`), so a branch is never read as a tag or a deletion.
//! The receiving program is always named (`--receive-pack`), so the repository's
//! `remote.<name>.receivepack` never runs. When the remote is a path on this machine, git runs
//! the receiving side here too: unless the toolset allows hooks, it runs with hooks and the
//! fsmonitor off as well.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{ExecutionMode, Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;

use super::repo::{Access, Repo};
use super::tool::GitCommand;
use super::{Remote, checks};

/// The receiving side of a push to a remote on this machine, without hooks or an fsmonitor.
const QUIET_RECEIVE_PACK: &str =
    "--receive-pack=git -c core.hooksPath=/dev/null -c core.fsmonitor=false receive-pack";

/// Push a branch to a remote.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitPushArgs {
    /// The remote to push to.
    #[serde(default)]
    remote: Remote,
    /// The local branch to push (to the branch of the same name on the remote).
    branch: String,
    /// Overwrite the remote branch even when it has commits the local one lacks.
    #[serde(default)]
    force: bool,
}

/// The checked arguments, and where the remote is.
#[derive(Debug)]
pub struct GitPushPlan {
    remote: Remote,
    branch: String,
    force: bool,
    /// Whether the remote's push URL is a path on this machine.
    local: bool,
}

impl CallPlan for GitPushPlan {}

/// The `git_push` tool.
#[derive(Debug)]
pub struct GitPush;

/// `remote`'s push URL in `repo` (after the repository's `insteadOf` rewrites); a remote the
/// repository does not have is git's error.
async fn push_url(repo: &Repo, remote: Remote, ctx: &ToolContext) -> Result<String, ToolError> {
    let args = ["remote", "get-url", "--push", remote.name()].map(str::to_owned);
    let output = repo.ok(Access::Read, &args, &ctx.cancel).await?;
    Ok(output.stdout.trim().to_owned())
}

/// Whether git reaches `url` as a path on this machine: `file://`, or neither `scheme://` nor
/// the `host:path` form.
fn is_local_url(url: &str) -> bool {
    if url.starts_with("file://") {
        return true;
    }
    if url.contains("://") {
        return false;
    }
    match (url.find(':'), url.find('/')) {
        (Some(colon), Some(slash)) => slash < colon,
        (Some(_), None) => false,
        (None, _) => true,
    }
}

#[async_trait]
impl GitCommand for GitPush {
    type Args = GitPushArgs;
    type Plan = GitPushPlan;
    const NAME: &'static str = "git_push";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Execute;
    const LABEL: &'static str = "Push to Remote";
    const POLICY: &'static str = "pre-approved; ask when `force`";
    /// Only the user may push (docs/tools.md, Git).
    const MODE: ExecutionMode = ExecutionMode::Manual;

    fn description(root: &str) -> String {
        format!(
            "Push a branch of the git repository {root} to `origin` or `upstream` (the branch of \
             the same name there); `force` overwrites the remote branch and asks first"
        )
    }

    /// Checks the branch and looks the remote's URL up, so that the description says where
    /// the push goes (the repository's configuration decides that, and a file write could
    /// have changed it).
    async fn prepare(
        &self,
        repo: &Repo,
        args: GitPushArgs,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<GitPushPlan>, ToolError> {
        checks::branch_name("branch", &args.branch)?;
        let url = push_url(repo, args.remote, ctx).await?;
        let remote = format!("{} ({})", args.remote.name(), fold(&url, 120));
        let (requirement, description, risk) = if args.force {
            (
                ApprovalRequirement::Ask,
                format!(
                    "Force-push `{}` of {} to {remote}, overwriting the remote branch",
                    args.branch,
                    repo.root()
                ),
                Risk::High,
            )
        } else {
            (
                ApprovalRequirement::PreApproved,
                format!("Push `{}` of {} to {remote}", args.branch, repo.root()),
                Risk::Medium,
            )
        };
        Ok(PreparedCall::new(GitPushPlan {
            remote: args.remote,
            branch: args.branch,
            force: args.force,
            local: is_local_url(&url),
        })
        .with_requirement(requirement)
        .with_description(description)
        .with_risk(risk))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitPushPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let mut args = vec!["push".to_owned()];
        if plan.force {
            args.push("--force".to_owned());
        }
        // Always named: the repository's `remote.<name>.receivepack` would win over a `-c`.
        let receive_pack = if !repo.hooks() && plan.local {
            QUIET_RECEIVE_PACK
        } else {
            "--receive-pack=git-receive-pack"
        };
        args.push(receive_pack.to_owned());
        args.push("--end-of-options".to_owned());
        args.push(plan.remote.name().to_owned());
        args.push(format!("refs/heads/{0}:refs/heads/{0}", plan.branch));
        let output = repo.ok(Access::Network, &args, &ctx.cancel).await?;
        let verb = if plan.force { "force-pushed" } else { "pushed" };
        let summary = format!("{verb} {} to {}", plan.branch, plan.remote.name());
        Ok(super::said_result(output.said(), summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_urls() {
        for local in [
            "/remote/origin.git",
            "../other",
            "file:///remote/origin.git",
            "repo",
        ] {
            assert!(is_local_url(local), "{local}");
        }
        for remote in [
            "https://github.com/a/b.git",
            "ssh://git@host/x",
            "git@github.com:a/b.git",
            "host:path",
        ] {
            assert!(!is_local_url(remote), "{remote}");
        }
    }
}
