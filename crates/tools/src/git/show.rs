//! `git_show {rev}` → a `text` result: what `git show` prints for a revision — a commit's
//! header, message, changed files and patch (shown as a diff), or a tag, a tree listing or a
//! file's content at a revision (`main:src/a.rs`). Pre-approved: it reads only.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::{DisplayHints, PreferredView, Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;

use super::checks;
use super::repo::{Access, Repo};
use super::tool::{GitCommand, READS_ONLY};

/// Show a commit, tag, tree or file at a revision.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitShowArgs {
    /// A commit (`HEAD~2`, `abc1234`), branch, tag, or file at a revision (`main:src/lib.rs`).
    rev: String,
}

/// The revision, checked.
#[derive(Debug)]
pub struct GitShowPlan {
    rev: String,
}

impl CallPlan for GitShowPlan {}

/// The `git_show` tool.
#[derive(Debug)]
pub struct GitShow;

#[async_trait]
impl GitCommand for GitShow {
    type Args = GitShowArgs;
    type Plan = GitShowPlan;
    const NAME: &'static str = "git_show";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Read;
    const LABEL: &'static str = "Show Revision";
    const POLICY: &'static str = READS_ONLY;

    fn description(root: &str) -> String {
        format!(
            "Show a revision of the git repository {root}: a commit with its message, changed \
             files and patch, a tag, or a file's content at a revision (`main:src/lib.rs`)"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        args: GitShowArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitShowPlan>, ToolError> {
        checks::revision(&args.rev)?;
        Ok(PreparedCall::new(GitShowPlan {
            rev: args.rev.clone(),
        })
        .with_requirement(ApprovalRequirement::PreApproved)
        .with_description(format!("Show `{}` in {}", fold(&args.rev, 80), repo.root()))
        .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitShowPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let args = [
            "show",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--patch-with-stat",
            "--end-of-options",
            plan.rev.as_str(),
            "--",
        ]
        .map(str::to_owned);
        let output = repo.ok(Access::Read, &args, &ctx.cancel).await?;
        let lines = output.stdout.lines().count();
        let is_commit = output.stdout.starts_with("commit ");
        let mut summary = format!(
            "{} ({lines} {})",
            fold(&plan.rev, 60),
            if lines == 1 { "line" } else { "lines" }
        );
        if output.truncated {
            summary.push_str(", cut at the output limit");
        }
        let mut value = ToolResultValue::text(output.stdout).with_summary(summary);
        if is_commit {
            value = value.with_display(DisplayHints {
                preferred_view: Some(PreferredView::Code),
                language: Some("diff".to_owned()),
                ..DisplayHints::default()
            });
        }
        Ok(value)
    }
}
