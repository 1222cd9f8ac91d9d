//! `git_diff {staged?, path?}` → a `diff` result: the working tree's changes that are not
//! staged (or, with `staged`, the index's changes against `HEAD`), optionally limited to one
//! path, with the hunks of each file. Pre-approved: it reads only.
//!
//! The `diff` kind describes one file (`DiffData`); a change to several files keeps that shape
//! for the whole (its `path` is the repository or the path asked about, its `hunks` every
//! file's hunks in order, so a front end that knows only one file still shows every line) and
//! adds `files`: one `DiffData` per file, each with its own `path` and `hunks`, plus `from` for
//! a rename or copy, `isDeleted` and `binary` when they apply. `modified` is empty: a git diff
//! carries hunks, not whole texts. `truncated` says the patch was cut at the jail's output
//! limit.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::tool::{CallPlan, PreparedCall, ToolContext};
use golem_protocol::result::DiffData;
use golem_protocol::{Risk, ToolError, ToolResultValue};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::patch::{FilePatch, parse_patch};
use super::repo::{Access, Repo};
use super::tool::{GitCommand, READS_ONLY};

/// Show changes in the repository as a diff.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitDiffArgs {
    /// Show the staged changes instead of the unstaged ones.
    #[serde(default)]
    staged: bool,
    /// Only changes under this path (virtual, or relative to the repository).
    #[serde(default)]
    path: Option<String>,
}

/// The diff to show: staged or not, and the path git is given.
#[derive(Debug)]
pub struct GitDiffPlan {
    staged: bool,
    path: Option<String>,
}

impl CallPlan for GitDiffPlan {}

/// The `git_diff` tool.
#[derive(Debug)]
pub struct GitDiff;

/// The words of `git diff` for a plan, with the flags that keep external diff programs and
/// text conversion drivers from running.
fn diff_args(staged: bool, path: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = [
        "diff",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        "--ignore-submodules=dirty",
    ]
    .map(str::to_owned)
    .to_vec();
    if staged {
        args.push("--cached".to_owned());
    }
    args.push("--".to_owned());
    if let Some(path) = path {
        args.push(path.to_owned());
    }
    args
}

/// The `diff` result of `files`, for changes under `scope` (a virtual path).
fn diff_result(
    repo: &Repo,
    scope: String,
    files: Vec<FilePatch>,
    truncated: bool,
    staged: bool,
) -> ToolResultValue {
    let entries: Vec<Value> = files.iter().map(|file| file_entry(repo, file)).collect();
    let (path, is_new) = match files.as_slice() {
        [only] => (repo.virtual_path(&only.path), only.is_new),
        _ => (scope, false),
    };
    let hunks = files.into_iter().flat_map(|f| f.hunks).collect();
    let whole = ToolResultValue::diff(DiffData {
        path,
        original: None,
        modified: String::new(),
        is_new,
        bytes_written: None,
        hunks: Some(hunks),
    });
    let counts = whole.summary.clone().unwrap_or_default();
    let mut data = whole.data;
    if let Value::Object(map) = &mut data {
        map.insert("files".into(), Value::Array(entries.clone()));
        map.insert("staged".into(), Value::Bool(staged));
        if truncated {
            map.insert("truncated".into(), Value::Bool(true));
        }
    }
    let what = if staged { "staged changes" } else { "changes" };
    let summary = match entries.len() {
        0 => format!("no {what}"),
        1 => format!("1 file, {counts}"),
        n => format!("{n} files, {counts}"),
    };
    let summary = if truncated {
        format!("{summary} (cut at the output limit)")
    } else {
        summary
    };
    ToolResultValue::new("diff", data).with_summary(summary)
}

/// One file of a change: a `DiffData` with its own hunks and what else git said about it.
fn file_entry(repo: &Repo, file: &FilePatch) -> Value {
    let data = DiffData {
        path: repo.virtual_path(&file.path),
        original: None,
        modified: String::new(),
        is_new: file.is_new,
        bytes_written: None,
        hunks: Some(file.hunks.clone()),
    };
    let mut entry = serde_json::to_value(data).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut entry {
        if let Some(from) = &file.from {
            map.insert("from".into(), Value::String(repo.virtual_path(from)));
        }
        if file.is_deleted {
            map.insert("isDeleted".into(), Value::Bool(true));
        }
        if file.binary {
            map.insert("binary".into(), Value::Bool(true));
        }
    }
    entry
}

#[async_trait]
impl GitCommand for GitDiff {
    type Args = GitDiffArgs;
    type Plan = GitDiffPlan;
    const NAME: &'static str = "git_diff";
    const KIND: golem_protocol::ToolKind = golem_protocol::ToolKind::Read;
    const LABEL: &'static str = "Show Diff";
    const POLICY: &'static str = READS_ONLY;

    fn description(root: &str) -> String {
        format!(
            "Show the changes in the git repository {root} as a diff with hunks per file: by \
             default the changes not staged yet, with `staged` the changes a commit would \
             record; `path` limits it to one file or directory. Untracked files are not \
             included (see git_status)"
        )
    }

    async fn prepare(
        &self,
        repo: &Repo,
        args: GitDiffArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<GitDiffPlan>, ToolError> {
        let path = args
            .path
            .as_deref()
            .map(|path| repo.relative(path))
            .transpose()?;
        let what = if args.staged {
            "staged changes"
        } else {
            "changes"
        };
        let scope = match &path {
            Some(path) => repo.virtual_path(path),
            None => repo.root(),
        };
        Ok(PreparedCall::new(GitDiffPlan {
            staged: args.staged,
            path,
        })
        .with_requirement(ApprovalRequirement::PreApproved)
        .with_description(format!("Show the {what} in {scope}"))
        .with_risk(Risk::Low))
    }

    async fn execute(
        &self,
        repo: &Repo,
        plan: GitDiffPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let args = diff_args(plan.staged, plan.path.as_deref());
        let output = repo.ok(Access::Read, &args, &ctx.cancel).await?;
        let files = parse_patch(&output.stdout, !output.truncated);
        let scope = match &plan.path {
            Some(path) => repo.virtual_path(path),
            None => repo.root(),
        };
        Ok(diff_result(
            repo,
            scope,
            files,
            output.truncated,
            plan.staged,
        ))
    }
}
