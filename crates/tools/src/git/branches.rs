//! `git_branches {}` → a `table` of the local branches (the current one marked, each with its
//! upstream and how far ahead or behind it is) and the remote-tracking branches, with the
//! commit each points at and its subject. Pre-approved: it reads only.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::result::{ColumnDef, ColumnType, TableData};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::repo::{Access, Repo};
use super::tool::{GitCommand, READS_ONLY};

/// The field separator of the format (the ASCII unit separator, `%1f` to `for-each-ref`).
const FIELD: char = '\u{1f}';

/// The `for-each-ref` format: HEAD marker, full name, short name, upstream, ahead/behind,
/// commit, subject, symbolic target.
const FORMAT: &str = "--format=%(HEAD)%1f%(refname)%1f%(refname:short)%1f%(upstream:short)%1f\
                      %(upstream:track,nobracket)%1f%(objectname:short)%1f%(contents:subject)%1f\
                      %(symref)";

/// List the branches.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitBranchesArgs {}

/// Nothing to decide: the call runs as it is.
#[derive(Debug)]
pub struct GitBranchesPlan;

impl CallPlan for GitBranchesPlan {}

/// The `git_branches` tool.
#[derive(Debug)]
pub struct GitBranches;

/// The table of the lines `for-each-ref` printed in [`FORMAT`]; symbolic refs
/// (`origin/HEAD`) are left out.
fn branch_table(output: &str) -> TableData {
    let column = |key: &str, column_type| ColumnDef {
        key: key.to_owned(),
        label: None,
        column_type: Some(column_type),
        align: None,
    };
    let text = |value: &str| Value::String(value.to_owned());
    let rows = output
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(FIELD).collect();
            let [head, full, short, upstream, track, commit, subject, symref] = fields.as_slice()
            else {
                return None;
            };
            if !symref.is_empty() {
                return None;
            }
            let kind = if full.starts_with("refs/remotes/") {
                "remote"
            } else {
                "local"
            };
            let mut row = Map::new();
            row.insert("branch".into(), text(short));
            row.insert("current".into(), Value::Bool(*head == "*"));
            row.insert("kind".into(), text(kind));
            row.insert("upstream".into(), text(upstream));
            row.insert("track".into(), text(track));
            row.insert("commit".into(), text(commit));
            row.insert("subject".into(), text(subject));
            Some(row)
        })
        .collect();
    TableData {
        columns: vec![
            column("branch", ColumnType::String),
            column("current", ColumnType::Boolean),
            column("kind", ColumnType::String),
            column("upstream", ColumnType::String),
            column("track", ColumnType::String),
            column("commit", ColumnType::String),
            column("subject", ColumnType::String),
        ],
        rows,
    }
}

#[async_trait]
impl GitCommand for GitBranches {
    type Args = GitBranchesArgs;
    type Plan = GitBranchesPlan;
    const NAME: &'static str = "git_branches";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Read;
    const LABEL: &'static str = "List Branches";
    const POLICY: &'static str = READS_ONLY;

    fn description(root: &str) -> String {
        format!(
            "List the branches of the git repository {root}: local branches (the current one \
             marked, with their upstream and how far ahead or behind) and remote-tracking \
             branches, each with its last commit"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        _args: GitBranchesArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitBranchesPlan>, ToolError> {
        Ok(PreparedCall::new(GitBranchesPlan)
            .with_requirement(ApprovalRequirement::PreApproved)
            .with_description(format!("List the branches of {}", repo.root()))
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        repo: &Repo,
        _plan: GitBranchesPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let args = [
            "for-each-ref".to_owned(),
            FORMAT.to_owned(),
            "refs/heads".to_owned(),
            "refs/remotes".to_owned(),
        ];
        let output = repo.ok(Access::Read, &args, &ctx.cancel).await?;
        let table = branch_table(&output.stdout);
        let local = table
            .rows
            .iter()
            .filter(|row| row["kind"] == "local")
            .count();
        let remote = table.rows.len() - local;
        let current = table
            .rows
            .iter()
            .find(|row| row["current"] == true)
            .and_then(|row| row["branch"].as_str())
            .map(|name| format!(", on {name}"))
            .unwrap_or_default();
        Ok(ToolResultValue::table(table)
            .with_summary(format!("{local} local, {remote} remote{current}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_become_rows_without_symbolic_ones() {
        let line = |fields: [&str; 8]| fields.join("\u{1f}");
        let output = [
            line([
                "*",
                "refs/heads/main",
                "main",
                "origin/main",
                "ahead 1",
                "abc1234",
                "Fix it",
                "",
            ]),
            line([
                "",
                "refs/heads/topic",
                "topic",
                "",
                "",
                "def5678",
                "Wip",
                "",
            ]),
            line([
                "",
                "refs/remotes/origin/HEAD",
                "origin",
                "",
                "",
                "abc1234",
                "Fix it",
                "refs/remotes/origin/main",
            ]),
            line([
                "",
                "refs/remotes/origin/main",
                "origin/main",
                "",
                "",
                "0000000",
                "Init",
                "",
            ]),
        ]
        .join("\n");
        let table = branch_table(&output);
        let names: Vec<&str> = table
            .rows
            .iter()
            .filter_map(|r| r["branch"].as_str())
            .collect();
        assert_eq!(names, ["main", "topic", "origin/main"]);
        assert_eq!(table.rows[0]["current"], true);
        assert_eq!(table.rows[0]["track"], "ahead 1");
        assert_eq!(table.rows[2]["kind"], "remote");
    }
}
