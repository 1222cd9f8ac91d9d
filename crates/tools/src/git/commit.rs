//! `git_commit {message}` → records the staged changes as a commit (`git commit -m`), as the
//! toolset's `author`, else the repository's own identity, else Golem Forge's; a `text` result
//! with what git said. Asks by default. With nothing staged, git's "nothing to commit" is the
//! error.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;

use super::checks;
use super::repo::{Access, Repo};
use super::tool::{ASK, GitCommand};

/// Commit the staged changes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCommitArgs {
    /// A short subject line, optionally a blank line and a body.
    #[schemars(length(min = 1))]
    message: String,
}

/// The message, checked.
#[derive(Debug)]
pub struct GitCommitPlan {
    message: String,
}

impl CallPlan for GitCommitPlan {}

/// The `git_commit` tool.
#[derive(Debug)]
pub struct GitCommit;

/// `committed abc1234 on main` from git's first line (`[main abc1234] subject`, or
/// `[main (root-commit) abc1234] subject`); `committed` when it does not read so.
fn commit_summary(said: &str) -> String {
    let inside = said
        .lines()
        .next()
        .and_then(|line| line.strip_prefix('['))
        .and_then(|line| line.split_once(']'))
        .map(|(inside, _)| inside);
    let words: Vec<&str> = inside.map(|i| i.split(' ').collect()).unwrap_or_default();
    match words.as_slice() {
        [branch, .., commit] if words.len() >= 2 => format!("committed {commit} on {branch}"),
        _ => "committed".to_owned(),
    }
}

#[async_trait]
impl GitCommand for GitCommit {
    type Args = GitCommitArgs;
    type Plan = GitCommitPlan;
    const NAME: &'static str = "git_commit";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Execute;
    const LABEL: &'static str = "Commit";
    const POLICY: &'static str = ASK;

    fn description(root: &str) -> String {
        format!(
            "Commit the staged changes of the git repository {root} with a message (stage files \
             with git_stage first)"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        args: GitCommitArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitCommitPlan>, ToolError> {
        checks::message(&args.message)?;
        let subject = args.message.trim().lines().next().unwrap_or_default();
        let description = format!(
            "Commit the staged changes of {}: \"{}\"",
            repo.root(),
            fold(subject, 120)
        );
        Ok(PreparedCall::new(GitCommitPlan {
            message: args.message,
        })
        .with_requirement(ApprovalRequirement::Ask)
        .with_description(description)
        .with_risk(Risk::Medium))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitCommitPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let args = ["commit".to_owned(), "-m".to_owned(), plan.message];
        let output = repo.ok(Access::Write, &args, &ctx.cancel).await?;
        let said = output.said();
        let summary = commit_summary(&said);
        Ok(super::said_result(said, summary))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_the_commit_and_the_branch() {
        assert_eq!(
            commit_summary("[main abc1234] Fix\n 1 file changed"),
            "committed abc1234 on main"
        );
        assert_eq!(
            commit_summary("[main (root-commit) abc1234] Init"),
            "committed abc1234 on main"
        );
        assert_eq!(commit_summary("something else"), "committed");
    }
}
