//! `git_log {limit?, path?}` → a `table` of the newest commits on the current branch (commit,
//! date, author, subject), optionally only those touching one path. Pre-approved: it reads
//! only. A repository without commits gives an empty table.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::result::{ColumnDef, ColumnType, TableData};
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::repo::{Access, Repo, failed};
use super::tool::{GitCommand, READS_ONLY};

/// The number of commits when the call gives no `limit`.
const DEFAULT_LIMIT: u32 = 20;
/// The most commits one call may list.
const MAX_LIMIT: u32 = 200;

/// Field and record separators of the log format (ASCII unit and record separators).
const FIELD: char = '\u{1f}';
const RECORD: char = '\u{1e}';

/// List the newest commits.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitLogArgs {
    /// How many commits (default 20, at most 200).
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    limit: Option<u32>,
    /// Only commits touching this path (virtual, or relative to the repository).
    #[serde(default)]
    path: Option<String>,
}

/// How many commits, and the path git is given.
#[derive(Debug)]
pub struct GitLogPlan {
    limit: u32,
    path: Option<String>,
}

impl CallPlan for GitLogPlan {}

/// The `git_log` tool.
#[derive(Debug)]
pub struct GitLog;

/// The table of the records `git log` printed in our format.
fn log_table(output: &str) -> TableData {
    let column = |key: &str, column_type| ColumnDef {
        key: key.to_owned(),
        label: None,
        column_type: Some(column_type),
        align: None,
    };
    let rows = output
        .split(RECORD)
        .filter_map(|record| {
            let fields: Vec<&str> = record.trim_start_matches('\n').split(FIELD).collect();
            let [commit, date, author, subject] = fields.as_slice() else {
                return None;
            };
            let mut row = Map::new();
            for (key, value) in [
                ("commit", commit),
                ("date", date),
                ("author", author),
                ("subject", subject),
            ] {
                row.insert(key.to_owned(), Value::String((*value).to_owned()));
            }
            Some(row)
        })
        .collect();
    TableData {
        columns: vec![
            column("commit", ColumnType::String),
            column("date", ColumnType::Date),
            column("author", ColumnType::String),
            column("subject", ColumnType::String),
        ],
        rows,
    }
}

#[async_trait]
impl GitCommand for GitLog {
    type Args = GitLogArgs;
    type Plan = GitLogPlan;
    const NAME: &'static str = "git_log";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Read;
    const LABEL: &'static str = "Show Log";
    const POLICY: &'static str = READS_ONLY;

    fn description(root: &str) -> String {
        format!(
            "List the newest commits of the current branch of the git repository {root} as a \
             table (commit, date, author, subject); `path` keeps only the commits that touch \
             it. Use git_show with a commit to see its changes"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        args: GitLogArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitLogPlan>, ToolError> {
        let path = args
            .path
            .as_deref()
            .map(|path| repo.relative(path))
            .transpose()?;
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let scope = match &path {
            Some(path) => repo.virtual_path(path),
            None => repo.root(),
        };
        Ok(PreparedCall::new(GitLogPlan { limit, path })
            .with_requirement(ApprovalRequirement::PreApproved)
            .with_description(format!("List the last {limit} commits of {scope}"))
            .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitLogPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let mut args = vec![
            "log".to_owned(),
            "--no-color".to_owned(),
            format!("--max-count={}", plan.limit),
            "--format=%h%x1f%aI%x1f%an%x1f%s%x1e".to_owned(),
            "--".to_owned(),
        ];
        args.extend(plan.path);
        let output = repo.run(Access::Read, &args, &ctx.cancel).await?;
        if output.exit_code != 0 {
            // A branch with no commits yet is an empty log, not a failure.
            if output.stderr.contains("does not have any commits yet") {
                return Ok(ToolResultValue::table(log_table("")).with_summary("no commits yet"));
            }
            return Err(failed("git log", &output));
        }
        let table = log_table(&output.stdout);
        let n = table.rows.len();
        Ok(ToolResultValue::table(table)
            .with_summary(format!("{n} {}", if n == 1 { "commit" } else { "commits" })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_become_rows() {
        let output = "abc1234\u{1f}2024-05-01T10:00:00+00:00\u{1f}Ada\u{1f}Fix: a|b\u{1e}\n\
                      def5678\u{1f}2024-04-30T09:00:00+00:00\u{1f}Bob\u{1f}\u{1e}\n";
        let table = log_table(output);
        assert_eq!(table.rows.len(), 2);
        assert_eq!(table.rows[0]["commit"], "abc1234");
        assert_eq!(table.rows[0]["subject"], "Fix: a|b");
        assert_eq!(table.rows[1]["author"], "Bob");
        assert_eq!(table.rows[1]["subject"], "");
        assert_eq!(table.columns[1].column_type, Some(ColumnType::Date));
        assert!(log_table("").rows.is_empty());
    }
}
