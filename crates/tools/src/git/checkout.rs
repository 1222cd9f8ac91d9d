//! `git_checkout {branch, create?}` → switches the working tree to a branch (`git switch`), or
//! creates it from the current commit first (`create`); a `text` result with what git said.
//! Asks by default: it rewrites the working tree. Git refuses a switch that would lose
//! uncommitted changes, and that refusal is the error. A switch that would change a protected
//! file (`.envrc`, `.vscode/…`, a `*.worker`, …; see `incoming.rs`) is `BLOCKED` before anyone
//! is asked, naming the files, and checked again right before git runs.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;

use super::repo::{Access, Repo};
use super::tool::{ASK, GitCommand};
use super::{checks, incoming};

/// Switch to a branch, or create one.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCheckoutArgs {
    /// A local branch, or a remote one's name to track it.
    branch: String,
    /// Create the branch at the current commit.
    #[serde(default)]
    create: bool,
}

/// The branch, checked.
#[derive(Debug)]
pub struct GitCheckoutPlan {
    branch: String,
    create: bool,
}

impl CallPlan for GitCheckoutPlan {}

/// The `git_checkout` tool.
#[derive(Debug)]
pub struct GitCheckout;

#[async_trait]
impl GitCommand for GitCheckout {
    type Args = GitCheckoutArgs;
    type Plan = GitCheckoutPlan;
    const NAME: &'static str = "git_checkout";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Execute;
    const LABEL: &'static str = "Switch Branch";
    const POLICY: &'static str = ASK;

    fn description(root: &str) -> String {
        format!(
            "Switch the git repository {root} to a branch, or with `create` make a new branch at \
             the current commit and switch to it. Uncommitted changes that would be lost stop \
             the switch"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        args: GitCheckoutArgs,
        ctx: &ToolContext,
    ) -> Result<PreparedCall<GitCheckoutPlan>, ToolError> {
        checks::branch_name("branch", &args.branch)?;
        // A new branch starts at the current commit: the working tree stays as it is.
        let requirement = if args.create {
            ApprovalRequirement::Ask
        } else {
            incoming::switch(repo, &args.branch, &ctx.cancel)
                .await?
                .requirement(ApprovalRequirement::Ask)
        };
        let root = repo.root();
        let description = if args.create {
            format!(
                "Create the branch `{}` in {root} and switch to it",
                args.branch
            )
        } else {
            format!("Switch {root} to the branch `{}`", args.branch)
        };
        Ok(PreparedCall::new(GitCheckoutPlan {
            branch: args.branch,
            create: args.create,
        })
        .with_requirement(requirement)
        .with_description(description)
        .with_risk(Risk::Medium))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitCheckoutPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let (args, incoming) = if plan.create {
            (
                vec!["switch".to_owned(), format!("--create={}", plan.branch)],
                None,
            )
        } else {
            let incoming = incoming::switch(repo, &plan.branch, &ctx.cancel).await?;
            incoming.check()?;
            let args = vec![
                "switch".to_owned(),
                "--end-of-options".to_owned(),
                plan.branch.clone(),
            ];
            (args, Some(incoming))
        };
        // What the switch writes in the working tree can be undone.
        let change = incoming.as_ref().map(|incoming| incoming.record(repo));
        let output = repo.ok(Access::Write, &args, &ctx.cancel).await;
        if let Some(change) = change {
            change.finish();
        }
        let output = output?;
        let summary = if plan.create {
            format!("on the new branch {}", plan.branch)
        } else {
            format!("on {}", plan.branch)
        };
        Ok(super::said_result(output.said(), summary))
    }
}
