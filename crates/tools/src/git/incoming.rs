//! What `git_checkout` and `git_pull` would write in the working tree, judged by the zone's
//! protected-files policy (`golem_sandbox`'s `protected.rs`) before git changes anything. Git
//! runs outside the sandbox (in the jail, on the zone), so the sandbox cannot refuse its writes
//! itself: the tools list the files a switch or a merge would change — the difference between
//! the commit the working tree is at and the one it moves to — and refuse (`BLOCKED`, naming
//! them) when one is protected, or need a person's approval when the zone's `unprotect` lets
//! one through. Git itself refuses tree entries inside `.git`, and the toolset never writes the
//! repository's configuration (`branch.autoSetupMerge=false` in `safety.rs`).

use golem_core::approval::ApprovalRequirement;
use golem_protocol::{ToolError, ToolErrorCode};
use golem_sandbox::undo::ExternalChange;
use golem_sandbox::{Protection, ZonePath};
use tokio_util::sync::CancellationToken;

use super::repo::{Access, Repo};

/// The protected and unprotected paths among the files a change would write.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Judged {
    protected: Vec<String>,
    unprotected: Vec<String>,
    /// What would write them, for messages (`switching to \`topic\``).
    action: String,
    /// Every path the change would write, resolved in the zone (for undo's before-images).
    paths: Vec<ZonePath>,
}

impl Judged {
    /// Judges `paths` (relative to the repository, as git prints them) for `action`.
    pub fn new(repo: &Repo, paths: &[String], action: String) -> Judged {
        let mut judged = Judged {
            action,
            ..Judged::default()
        };
        for path in paths {
            let Ok(resolved) = repo.sandbox().resolve(&repo.virtual_path(path)) else {
                continue;
            };
            match repo.sandbox().protection(&resolved) {
                Protection::Open => {}
                Protection::Protected { path } => judged.protected.push(path),
                Protection::Unprotected { paths } => judged.unprotected.extend(paths),
            }
            judged.paths.push(resolved);
        }
        judged
    }

    /// `requirement` under the policy: blocked when a file is protected, a person's approval
    /// when one is unprotected.
    pub fn requirement(&self, requirement: ApprovalRequirement) -> ApprovalRequirement {
        if let Some(reason) = self.reason() {
            return ApprovalRequirement::blocked(reason);
        }
        if self.unprotected.is_empty() {
            return requirement;
        }
        requirement.strictest(ApprovalRequirement::ask_user(format!(
            "\u{26a0} unprotected: {} would change {}, read outside the sandbox (asked every \
             time, never remembered)",
            self.action,
            listed(&self.unprotected)
        )))
    }

    /// Keeps the before-images of the files the change would write, for undo; `finish` the
    /// result once git is done.
    pub fn record<'a>(&self, repo: &'a Repo) -> ExternalChange<'a> {
        repo.sandbox().external_change(&self.paths)
    }

    /// `BLOCKED` when a file is protected.
    pub fn check(&self) -> Result<(), ToolError> {
        match self.reason() {
            Some(reason) => Err(ToolError::new(ToolErrorCode::Blocked, reason)),
            None => Ok(()),
        }
    }

    fn reason(&self) -> Option<String> {
        if self.protected.is_empty() {
            return None;
        }
        let (verb, pronoun) = if self.protected.len() == 1 {
            ("is", "it")
        } else {
            ("are", "them")
        };
        Some(format!(
            "protected: {} {verb} read outside the sandbox, and {} would change {pronoun}; \
             nothing was changed",
            listed(&self.protected),
            self.action
        ))
    }
}

/// At most five paths, then how many more.
fn listed(paths: &[String]) -> String {
    golem_sandbox::shown_paths(paths, 5)
}

/// Splits git's `-z` output into its entries.
fn entries(stdout: &str) -> Vec<String> {
    stdout
        .split('\0')
        .map(|entry| entry.trim_start_matches('\n'))
        .filter(|entry| !entry.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The commits `git switch <branch>` may move the working tree to: the local branch, else the
/// branch of that name on any remote (git guesses one; every candidate is judged).
async fn switch_targets(
    repo: &Repo,
    branch: &str,
    cancel: &CancellationToken,
) -> Result<Vec<String>, ToolError> {
    let local = format!("refs/heads/{branch}");
    let args = [
        "for-each-ref".to_owned(),
        "--format=%(refname)%00%(objectname)".to_owned(),
        local.clone(),
        format!("refs/remotes/*/{branch}"),
    ];
    let output = repo.ok(Access::Read, &args, cancel).await?;
    let refs: Vec<(String, String)> = output
        .stdout
        .lines()
        .filter_map(|line| line.split_once('\0'))
        .map(|(name, id)| (name.to_owned(), id.to_owned()))
        .collect();
    if let Some((_, id)) = refs.iter().find(|(name, _)| *name == local) {
        return Ok(vec![id.clone()]);
    }
    let suffix = format!("/{branch}");
    Ok(refs
        .into_iter()
        .filter(|(name, _)| {
            name.strip_prefix("refs/remotes/")
                .and_then(|rest| rest.strip_suffix(&suffix))
                .is_some_and(|remote| !remote.is_empty() && !remote.contains('/'))
        })
        .map(|(_, id)| id)
        .collect())
}

/// The commit `HEAD` is at, `None` on a branch with no commit yet.
async fn head(repo: &Repo, cancel: &CancellationToken) -> Result<Option<String>, ToolError> {
    let args = ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"].map(str::to_owned);
    let output = repo.run(Access::Read, &args, cancel).await?;
    Ok((output.exit_code == 0).then(|| output.stdout.trim().to_owned()))
}

/// The files that differ between `from` (a commit, or nothing: every file) and `to`.
async fn changed(
    repo: &Repo,
    from: Option<&str>,
    to: &str,
    cancel: &CancellationToken,
) -> Result<Vec<String>, ToolError> {
    let args: Vec<String> = match from {
        Some(from) => [
            "diff-tree",
            "-r",
            "-z",
            "--name-only",
            "--no-renames",
            "--no-commit-id",
            from,
            to,
        ]
        .map(str::to_owned)
        .to_vec(),
        None => ["ls-tree", "-r", "-z", "--name-only", "--full-tree", to]
            .map(str::to_owned)
            .to_vec(),
    };
    let output = repo.ok(Access::Read, &args, cancel).await?;
    Ok(entries(&output.stdout))
}

/// What `git switch <branch>` would write, judged. A branch git cannot find changes nothing
/// (the switch is git's error).
pub(super) async fn switch(
    repo: &Repo,
    branch: &str,
    cancel: &CancellationToken,
) -> Result<Judged, ToolError> {
    let targets = switch_targets(repo, branch, cancel).await?;
    let head = head(repo, cancel).await?;
    let mut paths: Vec<String> = Vec::new();
    for target in &targets {
        if head.as_deref() == Some(target.as_str()) {
            continue;
        }
        for path in changed(repo, head.as_deref(), target, cancel).await? {
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
    }
    Ok(Judged::new(
        repo,
        &paths,
        format!("switching to `{branch}`"),
    ))
}

/// What merging (or rebasing onto) `commit` would write, judged: the files its side changed
/// since the common ancestor with `HEAD` (every file when there is none).
pub(super) async fn merge(
    repo: &Repo,
    commit: &str,
    action: String,
    cancel: &CancellationToken,
) -> Result<Judged, ToolError> {
    let head = head(repo, cancel).await?;
    let base = match &head {
        None => None,
        Some(head) => {
            let args = ["merge-base", head.as_str(), commit].map(str::to_owned);
            let output = repo.run(Access::Read, &args, cancel).await?;
            if output.exit_code == 0 {
                Some(output.stdout.trim().to_owned())
            } else {
                Some(head.clone())
            }
        }
    };
    let paths = changed(repo, base.as_deref(), commit, cancel).await?;
    Ok(Judged::new(repo, &paths, action))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_z_output_splits_into_paths() {
        assert_eq!(entries("a\0b c\0\0"), ["a", "b c"]);
        assert_eq!(entries(""), Vec::<String>::new());
    }

    #[test]
    fn reasons_name_the_files_and_the_action() {
        let judged = Judged {
            protected: vec!["/repo/.envrc".into(), "/repo/.vscode/settings.json".into()],
            unprotected: Vec::new(),
            action: "switching to `side`".into(),
            paths: Vec::new(),
        };
        let err = judged.check().unwrap_err();
        assert_eq!(err.code, ToolErrorCode::Blocked);
        assert_eq!(
            err.message,
            "protected: /repo/.envrc, /repo/.vscode/settings.json are read outside the sandbox, \
             and switching to `side` would change them; nothing was changed"
        );
        let open = Judged {
            protected: Vec::new(),
            unprotected: vec!["/repo/.envrc".into()],
            action: "pulling".into(),
            paths: Vec::new(),
        };
        assert!(open.check().is_ok());
        assert!(matches!(
            open.requirement(ApprovalRequirement::Ask),
            ApprovalRequirement::AskUser { .. }
        ));
    }
}
