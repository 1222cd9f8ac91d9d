//! `git_pull {remote?, branch?, rebase?}` → fetches from `origin` or `upstream` and merges (or
//! rebases onto) the branch's upstream, or the named remote branch; a `text` result with what
//! git said. Runs in the toolset's jail with the network. Asks by default: it changes the
//! working tree with what someone else wrote. A merge that conflicts is the error, and
//! `git_status` then lists the conflicts.
//!
//! In three steps, so that what comes in is judged before it is written: `git fetch` of the
//! one branch (the one named, else the current branch's upstream on that remote), then the
//! files the fetched commit changed since the common ancestor are checked against the
//! protected-files policy (`incoming.rs`: a protected one is `BLOCKED`, nothing merged), then
//! `git merge` (or `git rebase`) of exactly that commit.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{Risk, ToolError, ToolErrorCode, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::repo::{Access, Repo};
use super::tool::{ASK, GitCommand};
use super::{Remote, checks, incoming};

/// Fetch from a remote and merge into the current branch.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitPullArgs {
    /// The remote to pull from.
    #[serde(default)]
    remote: Remote,
    /// The remote branch to merge (default: the upstream).
    #[serde(default)]
    branch: Option<String>,
    /// Rebase onto what was fetched instead of merging.
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
pub struct GitPull;

#[async_trait]
impl GitCommand for GitPull {
    type Args = GitPullArgs;
    type Plan = GitPullPlan;
    const NAME: &'static str = "git_pull";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Fetch;
    const LABEL: &'static str = "Pull from Remote";
    const POLICY: &'static str = ASK;

    fn description(root: &str) -> String {
        format!(
            "Pull into the current branch of the git repository {root}: fetch from `origin` (or \
             `upstream`) and merge the branch's upstream, or `branch` of that remote; with \
             `rebase`, rebase onto it instead. A conflict stops it (see git_status)"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
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
            repo.root()
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
        repo: &Repo,
        plan: GitPullPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let remote = plan.remote.name();
        let branch = match &plan.branch {
            Some(branch) => branch.clone(),
            None => upstream(repo, remote, &ctx.cancel).await?,
        };
        // Fetch first, then judge what the merge would write, then merge exactly what was
        // judged (`pull` in one step would change the working tree before anyone could look).
        let fetch: Vec<String> = [
            "fetch",
            "--no-recurse-submodules",
            // The repository's `remote.<name>.uploadpack` would win over a `-c` (see safety.rs).
            "--upload-pack=git-upload-pack",
            "--end-of-options",
            remote,
            branch.as_str(),
        ]
        .map(str::to_owned)
        .to_vec();
        let fetched = repo.ok(Access::Network, &fetch, &ctx.cancel).await?;
        let args = ["rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"].map(str::to_owned);
        let commit = repo.ok(Access::Read, &args, &ctx.cancel).await?;
        let commit = commit.stdout.trim().to_owned();
        let action = format!("pulling `{branch}` from {remote}");
        let incoming = incoming::merge(repo, &commit, action, &ctx.cancel).await?;
        incoming.check()?;
        let args: Vec<String> = if plan.rebase {
            ["rebase", "--no-stat", commit.as_str()]
                .map(str::to_owned)
                .to_vec()
        } else {
            [
                "merge",
                "--no-edit",
                "--no-stat",
                "-m",
                &format!("Merge branch '{branch}' of {remote}"),
                commit.as_str(),
            ]
            .map(str::to_owned)
            .to_vec()
        };
        // What the merge writes in the working tree can be undone.
        let change = incoming.record(repo);
        let merged = repo.ok(Access::Write, &args, &ctx.cancel).await;
        change.finish();
        let merged = merged?;
        let said = [fetched.said(), merged.said()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        let summary = format!("pulled from {remote}");
        Ok(super::said_result(said, summary))
    }
}

/// The branch of `remote` the current branch of `repo` follows (what `git pull <remote>` merges).
async fn upstream(
    repo: &Repo,
    remote: &str,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let args = ["symbolic-ref", "--quiet", "HEAD"].map(str::to_owned);
    let head = repo.run(Access::Read, &args, cancel).await?;
    let current = head.stdout.trim();
    if head.exit_code != 0 || current.is_empty() {
        return Err(no_upstream(remote, "the repository is not on a branch"));
    }
    let args = [
        "for-each-ref".to_owned(),
        "--format=%(upstream:remotename)%00%(upstream:remoteref)".to_owned(),
        current.to_owned(),
    ];
    let output = repo.ok(Access::Read, &args, cancel).await?;
    let (name, reference) = output
        .stdout
        .lines()
        .next()
        .and_then(|line| line.split_once('\0'))
        .unwrap_or_default();
    if name != remote || reference.is_empty() {
        return Err(no_upstream(
            remote,
            &format!(
                "{} follows no branch of {remote}",
                current.trim_start_matches("refs/heads/")
            ),
        ));
    }
    let branch = reference.trim_start_matches("refs/heads/");
    checks::branch_name("the upstream branch", branch)?;
    Ok(branch.to_owned())
}

/// The error of a pull without a branch when there is none to follow.
fn no_upstream(remote: &str, why: &str) -> ToolError {
    ToolError::new(
        ToolErrorCode::ExecutionError,
        format!("cannot pull from {remote} without a branch: {why}; name the branch to pull"),
    )
}
