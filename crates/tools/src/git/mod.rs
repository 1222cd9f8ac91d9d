//! The `git` toolset (`toolsets.git: {zone}`): git on the repository at the root of one zone,
//! run in the toolset's process jail like every program a tool starts.
//!
//! - Read-only, pre-approved: `git_status` (the custom kind `git.status`),
//!   `git_diff` (`diff`, one entry per file with its hunks), `git_log` and `git_branches`
//!   (`table`), `git_show` (`text`).
//! - Changing the repository, asked by default: `git_stage`, `git_commit`, `git_checkout`, and
//!   `git_pull` (with the network). Only when the zone is `rw`.
//! - `git_push`: **manual only** ("Push to Remote", category "Git"), pre-approved
//!   unless `force` is set, which asks. With the network; only when the zone is `rw`.
//!
//! How git runs (`repo.rs`, `safety.rs`): arguments as separate words, never a shell; values
//! git would read as options, refspecs where a branch is meant, and paths outside the zone are
//! refused in `prepare` (`checks.rs`, `Repo::relative`); no system or user configuration, a
//! private `HOME`, no hooks unless the toolset sets `hooks: true`, no credential helpers, and
//! every key of the repository's configuration that would make git run a program overridden on
//! the command line. Protected files (`incoming.rs`): git may change objects, refs, the index,
//! logs and `HEAD`, never the repository's configuration (no upstream is recorded), and a
//! `git_checkout` or `git_pull` that would change a protected file in the working tree is
//! `BLOCKED`, naming the files. Two jails: the read and write tools run in one without the network,
//! `git_pull` and `git_push` in one with it. Parsing is pure and tested on its own
//! (`porcelain.rs` for status, `patch.rs` for diffs).
//!
//! Every tool has one shape (`tool.rs`): a `GitCommand` (its name, menu label, approval
//! policy, description, `prepare` and `execute` on the repository) made a tool by `GitTool`.

mod branches;
mod checkout;
mod checks;
mod commit;
mod diff;
mod incoming;
mod log;
mod patch;
mod porcelain;
mod pull;
mod push;
mod repo;
mod safety;
mod show;
mod stage;
mod status;
mod tool;
mod toolset;

use std::sync::Arc;
use std::time::Duration;

use golem_core::tool::Tool;
use golem_protocol::{DisplayHints, PreferredView, ToolResultValue};
use golem_sandbox::ZoneMode;
use golem_sandbox::jail::Jail;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use golem_toolset::process::{Runner, Timeouts};
use repo::Repo;
use tool::GitTool;

pub use porcelain::{FileChange, GitStatusData};
pub use safety::DEFAULT_AUTHOR;
pub use toolset::{GitToolset, GitToolsetConfig};

/// The result kind of `git_status` (and of `git_stage`, which shows the status after it).
pub const STATUS_KIND: &str = "git.status";

/// The default wall-clock limit of one git command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The names of the read-only tools, which exist for `ro` zones too.
pub const READ_TOOLS: [&str; 5] = [
    "git_status",
    "git_diff",
    "git_log",
    "git_branches",
    "git_show",
];

/// The identity git records on commits (`toolsets.git.author`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitAuthor {
    /// `user.name`, not empty.
    #[serde(deserialize_with = "golem_toolset::config::non_empty_string")]
    #[schemars(length(min = 1))]
    pub name: String,
    /// `user.email`, not empty.
    #[serde(deserialize_with = "golem_toolset::config::non_empty_string")]
    #[schemars(length(min = 1))]
    pub email: String,
}

/// Why the toolset cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum GitToolsetError {
    /// The zone is not one of the worker's.
    #[error("zone `{zone}` is not a zone of this worker (zones: {known})")]
    UnknownZone {
        /// The zone named.
        zone: String,
        /// The worker's zones, or `none`.
        known: String,
    },
}

/// The git tools on the repository at the root of `config.zone`, in two jails the toolset built
/// from `config`'s `jail`, `limits` and `allow_private`: `local` runs git without the network,
/// `network` (the same zones, the network on) runs `git_pull` and `git_push`. A `ro` zone gets
/// the read-only tools only; without `network`, there is no `git_pull` or `git_push`.
pub fn git_tools(
    local: Jail,
    network: Option<Jail>,
    config: &GitToolsetConfig,
) -> Result<Vec<Arc<dyn Tool>>, GitToolsetError> {
    let sandbox = local.sandbox().clone();
    let Some(zone) = sandbox.zone(&config.zone) else {
        let known: Vec<&str> = sandbox.zones().iter().map(|z| z.name()).collect();
        return Err(GitToolsetError::UnknownZone {
            zone: config.zone.clone(),
            known: if known.is_empty() {
                "none".to_owned()
            } else {
                known.join(", ")
            },
        });
    };
    let writable = zone.mode() == ZoneMode::Rw;
    let timeout = Duration::from_secs(config.timeout);
    let timeouts = Timeouts::new(timeout, timeout);
    let runner = |jail: Jail| Runner::new(jail, timeouts, Some(config.zone.clone()));
    let network = network.filter(|_| writable).map(runner);
    let repo = Arc::new(Repo::new(
        config.zone.clone(),
        config.hooks,
        config.author.clone(),
        sandbox,
        runner(local),
        network,
    ));
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(GitTool::new(status::GitStatus, repo.clone())),
        Arc::new(GitTool::new(diff::GitDiff, repo.clone())),
        Arc::new(GitTool::new(log::GitLog, repo.clone())),
        Arc::new(GitTool::new(branches::GitBranches, repo.clone())),
        Arc::new(GitTool::new(show::GitShow, repo.clone())),
    ];
    if writable {
        tools.push(Arc::new(GitTool::new(stage::GitStage, repo.clone())));
        tools.push(Arc::new(GitTool::new(commit::GitCommit, repo.clone())));
        tools.push(Arc::new(GitTool::new(checkout::GitCheckout, repo.clone())));
        if repo.has_network() {
            tools.push(Arc::new(GitTool::new(pull::GitPull, repo.clone())));
            tools.push(Arc::new(GitTool::new(push::GitPush, repo)));
        }
    }
    Ok(tools)
}

/// The remotes `git_pull` and `git_push` may name (docs/tools.md, Git).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Remote {
    /// `origin`.
    #[default]
    Origin,
    /// `upstream`.
    Upstream,
}

impl Remote {
    /// The remote's name.
    pub fn name(self) -> &'static str {
        match self {
            Remote::Origin => "origin",
            Remote::Upstream => "upstream",
        }
    }
}

/// A `git.status` result: the summary, and folded (`collapsed`) when the tree is clean.
fn status_result(data: &GitStatusData, summary: String) -> ToolResultValue {
    let value = serde_json::to_value(data).unwrap_or_default();
    ToolResultValue::new(STATUS_KIND, value)
        .with_summary(summary)
        .with_display(DisplayHints {
            preferred_view: Some(PreferredView::Tree),
            collapsed: Some(data.is_clean()),
            ..DisplayHints::default()
        })
}

/// A `text` result of what git said, with `summary`.
fn said_result(said: String, summary: String) -> ToolResultValue {
    ToolResultValue::text(said).with_summary(summary)
}
