//! Protected files (issue 26): paths that programs on the host read as configuration or run are
//! refused with `BLOCKED` before approval, by every changing filesystem tool, in a pre-approved
//! zone, an asking zone and under `approve_all`, and the zone is left as it was. What git itself
//! writes inside `.git` (objects, refs, the index, logs, `HEAD`) stays writable.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::{Arc, Mutex};

use golem_core::approval::ApprovalDecisionType;
use golem_core::approval::{ApprovalCallback, ApprovalController, ApprovalMode};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{CallOutcome, ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, ApprovalResponse, DecidedBy, ToolErrorCode, ToolStatus};
use golem_sandbox::{ProtectedPaths, Sandbox, ZoneApproval, ZoneConfig, ZoneMode};
use golem_tools::filesystem::filesystem_tools;
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Protected files every zone holds before a test, with their content.
const SEEDED: &[&str] = &[
    ".git/config",
    ".git/hooks/x",
    ".git/commondir",
    "sub/.git/config",
    ".golem-forge/approvals.yaml",
    "golem-forge.config.yaml",
    "x.worker",
    ".envrc",
    ".vscode/settings.json",
    "wt/.git",
];

/// Protected paths that do not exist yet (only `write_file` can name them).
const NEW: &[&str] = &[
    ".git/hooks/pre-commit",
    ".git/info/attributes",
    ".git/config.worktree",
    ".git/gitdir",
    ".git/objects/info/alternates",
    ".git/modules/lib/config",
    ".git/modules/lib/hooks/post-checkout",
    ".git/worktrees/w/config.worktree",
    ".git/worktrees/w/commondir",
    ".golem-forge/new.yaml",
    "deep/er/other.worker",
    "deep/.envrc",
    ".idea/workspace.xml",
    ".devcontainer/devcontainer.json",
    "plain/.git",
];

/// A worker directory with one zone per approval flavour: `pre` (everything pre-approved) and
/// `ask` (everything asks), each holding a repository and the [`SEEDED`] files.
struct Env {
    dir: TempDir,
    orchestrator: ToolCallOrchestrator,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

fn zones() -> Vec<ZoneConfig> {
    vec![
        ZoneConfig::new("pre", ZoneMode::Rw)
            .with_approval(ZoneApproval::uniform(ApprovalDecisionType::PreApproved)),
        ZoneConfig::new("ask", ZoneMode::Rw),
    ]
}

impl Env {
    /// Interactive, every request approved by the callback.
    fn new() -> Env {
        Env::build(ApprovalMode::Interactive, zones(), true)
    }

    /// Under `approve_all`, with no one to ask.
    fn approve_all() -> Env {
        Env::build(ApprovalMode::ApproveAll, zones(), false)
    }

    fn build(mode: ApprovalMode, zones: Vec<ZoneConfig>, callback: bool) -> Env {
        let dir = tempfile::tempdir().unwrap();
        for zone in ["pre", "ask"] {
            for rel in SEEDED {
                put(
                    &dir.path().join(zone).join(rel),
                    format!("original {rel}\n"),
                );
            }
            put(&dir.path().join(zone).join("plain.txt"), "plain\n");
            put(
                &dir.path().join(zone).join(".git/HEAD"),
                "ref: refs/heads/main\n",
            );
        }
        let sandbox = Sandbox::open(dir.path(), &zones).unwrap();
        Env::with_sandbox(dir, sandbox, mode, callback)
    }

    fn with_sandbox(dir: TempDir, sandbox: Sandbox, mode: ApprovalMode, callback: bool) -> Env {
        let mut registry = ToolRegistry::new();
        for tool in filesystem_tools(sandbox) {
            registry.register(tool).unwrap();
        }
        let asked = Arc::new(Mutex::new(Vec::new()));
        let mut controller = ApprovalController::new(mode);
        if callback {
            let recorded = asked.clone();
            let answer: ApprovalCallback = Arc::new(move |request: ApprovalRequest, _cancel| {
                let response = ApprovalResponse::approve(&request.request_id);
                recorded.lock().unwrap().push(request);
                Box::pin(async move { Ok(response) })
            });
            controller = controller.with_callback(answer);
        }
        let orchestrator = ToolCallOrchestrator::new(
            Arc::new(registry),
            controller,
            RuntimeUI::new(UiEventBus::new()),
        );
        Env {
            dir,
            orchestrator,
            asked,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> CallOutcome {
        self.orchestrator
            .call(
                ToolCall::from_model("c1", tool, args),
                &CancellationToken::new(),
            )
            .await
    }

    fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }

    fn host(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    /// Every file and directory under the worker directory, with file contents.
    fn snapshot(&self) -> BTreeMap<String, Option<Vec<u8>>> {
        snapshot(self.dir.path())
    }

    /// Runs `tool(args)` and checks that it was blocked for `protected` before anyone was
    /// asked, and that nothing changed.
    async fn blocked(&self, tool: &str, args: Value, protected: &str) {
        let before = self.snapshot();
        let asked = self.asked().len();
        let outcome = self.call(tool, args.clone()).await;
        assert_eq!(
            outcome.status,
            ToolStatus::Blocked,
            "{tool} {args}: {:?} {:?}",
            outcome.error,
            outcome.value
        );
        assert_eq!(outcome.decided_by, Some(DecidedBy::Policy), "{tool} {args}");
        let error = outcome.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::Blocked, "{tool} {args}");
        assert_eq!(
            error.message,
            format!("protected: {protected} is read outside the sandbox"),
            "{tool} {args}"
        );
        assert_eq!(self.asked().len(), asked, "{tool} {args} was asked");
        assert_eq!(self.snapshot(), before, "{tool} {args} changed the zone");
    }
}

fn put(path: &Path, content: impl AsRef<[u8]>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

fn snapshot(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else if kind.is_symlink() {
                let target = fs::read_link(&path).unwrap();
                out.insert(rel, Some(target.to_string_lossy().as_bytes().to_vec()));
            } else {
                out.insert(rel, Some(fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// Every changing tool on every protected path of `zone`.
async fn every_tool_is_blocked(env: &Env, zone: &str) {
    for rel in SEEDED {
        let path = format!("/{zone}/{rel}");
        env.blocked(
            "write_file",
            json!({"path": path, "content": "[core]\n\tfsmonitor = evil\n"}),
            &path,
        )
        .await;
        env.blocked(
            "edit_file",
            json!({"path": path, "old_string": "original", "new_string": "evil"}),
            &path,
        )
        .await;
        env.blocked(
            "delete_file",
            json!({"path": path, "recursive": true}),
            &path,
        )
        .await;
        env.blocked(
            "move_file",
            json!({"from": path, "to": format!("/{zone}/moved.txt")}),
            &path,
        )
        .await;
        env.blocked(
            "move_file",
            json!({"from": format!("/{zone}/plain.txt"), "to": path, "overwrite": true}),
            &path,
        )
        .await;
    }
    for rel in NEW {
        let path = format!("/{zone}/{rel}");
        env.blocked(
            "write_file",
            json!({"path": path, "content": "evil\n", "createDirs": true}),
            &path,
        )
        .await;
        env.blocked(
            "move_file",
            json!({"from": format!("/{zone}/plain.txt"), "to": path}),
            &path,
        )
        .await;
    }
}

#[tokio::test]
async fn protected_paths_are_blocked_in_a_preapproved_zone() {
    every_tool_is_blocked(&Env::new(), "pre").await;
}

#[tokio::test]
async fn protected_paths_are_blocked_in_an_asking_zone() {
    every_tool_is_blocked(&Env::new(), "ask").await;
}

#[tokio::test]
async fn protected_paths_are_blocked_under_approve_all() {
    let env = Env::approve_all();
    every_tool_is_blocked(&env, "ask").await;
    every_tool_is_blocked(&env, "pre").await;
}

#[tokio::test]
async fn spellings_of_a_protected_path_are_blocked_too() {
    let env = Env::new();
    for (given, protected) in [
        ("/pre/./.git//config", "/pre/.git/config"),
        ("/pre/.git/config/", "/pre/.git/config"),
        ("/pre/sub/../.git/hooks/x", "/pre/.git/hooks/x"),
        ("/pre/.GIT/Config", "/pre/.GIT/Config"),
        ("/pre/.Git/HOOKS/post-merge", "/pre/.Git/HOOKS/post-merge"),
        ("/pre/X.Worker", "/pre/X.Worker"),
        ("/pre/.VSCode/tasks.json", "/pre/.VSCode/tasks.json"),
    ] {
        env.blocked(
            "write_file",
            json!({"path": given, "content": "evil\n", "createDirs": true}),
            protected,
        )
        .await;
    }
}

#[tokio::test]
async fn what_git_writes_inside_dot_git_stays_writable() {
    let env = Env::new();
    for rel in [
        ".git/objects/ab/cdef0123456789",
        ".git/objects/pack/pack-1.idx",
        ".git/refs/heads/x",
        ".git/refs/tags/v1",
        ".git/HEAD",
        ".git/index",
        ".git/logs/HEAD",
        ".git/logs/refs/heads/x",
        ".git/packed-refs",
        ".git/COMMIT_EDITMSG",
        "sub/.git/refs/heads/y",
    ] {
        let path = format!("/pre/{rel}");
        let outcome = env
            .call(
                "write_file",
                json!({"path": path, "content": "data\n", "createDirs": true}),
            )
            .await;
        assert_eq!(
            outcome.status,
            ToolStatus::Success,
            "{rel}: {:?}",
            outcome.error
        );
        assert_eq!(
            fs::read_to_string(env.host(&format!("pre/{rel}"))).unwrap(),
            "data\n"
        );
    }
    // Deleting and moving them works too.
    let outcome = env
        .call("delete_file", json!({"path": "/pre/.git/refs/heads/x"}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    let outcome = env
        .call(
            "move_file",
            json!({"from": "/pre/.git/refs/tags/v1", "to": "/pre/.git/refs/tags/v2"}),
        )
        .await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    // Ordinary files next to protected ones are not protected.
    for rel in [
        "config",
        "hooks/x",
        "vscode/settings.json",
        "envrc",
        "x.worker.txt",
        "git",
    ] {
        let outcome = env
            .call(
                "write_file",
                json!({"path": format!("/pre/{rel}"), "content": "ok\n", "createDirs": true}),
            )
            .await;
        assert_eq!(
            outcome.status,
            ToolStatus::Success,
            "{rel}: {:?}",
            outcome.error
        );
    }
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn a_symbolic_link_into_a_protected_directory_is_refused() {
    let env = Env::new();
    std::os::unix::fs::symlink(".git", env.host("pre/x")).unwrap();
    std::os::unix::fs::symlink("sub/.git/config", env.host("pre/cfg")).unwrap();
    std::os::unix::fs::symlink("../.vscode", env.host("pre/sub/editor")).unwrap();
    env.blocked(
        "write_file",
        json!({"path": "/pre/x/config", "content": "evil\n"}),
        "/pre/.git/config",
    )
    .await;
    env.blocked(
        "write_file",
        json!({"path": "/pre/x/hooks/pre-commit", "content": "evil\n", "createDirs": true}),
        "/pre/.git/hooks/pre-commit",
    )
    .await;
    env.blocked(
        "edit_file",
        json!({"path": "/pre/x/commondir", "old_string": "original", "new_string": "evil"}),
        "/pre/.git/commondir",
    )
    .await;
    env.blocked(
        "write_file",
        json!({"path": "/pre/cfg", "content": "evil\n"}),
        "/pre/sub/.git/config",
    )
    .await;
    env.blocked(
        "write_file",
        json!({"path": "/pre/sub/editor/tasks.json", "content": "evil\n"}),
        "/pre/.vscode/tasks.json",
    )
    .await;
    env.blocked(
        "delete_file",
        json!({"path": "/pre/x/hooks/x"}),
        "/pre/.git/hooks/x",
    )
    .await;
    env.blocked(
        "move_file",
        json!({"from": "/pre/plain.txt", "to": "/pre/x/info/exclude"}),
        "/pre/.git/info/exclude",
    )
    .await;
    // The link itself is an ordinary entry: it can be removed (its target survives).
    let outcome = env.call("delete_file", json!({"path": "/pre/x"})).await;
    assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
    assert!(env.host("pre/.git/config").exists());
}

#[tokio::test]
async fn a_directory_holding_a_repository_cannot_be_deleted_or_moved() {
    let env = Env::new();
    env.blocked(
        "delete_file",
        json!({"path": "/pre/sub", "recursive": true}),
        "/pre/sub/.git",
    )
    .await;
    env.blocked(
        "delete_file",
        json!({"path": "/pre/.git", "recursive": true}),
        "/pre/.git",
    )
    .await;
    env.blocked(
        "move_file",
        json!({"from": "/pre/sub", "to": "/pre/elsewhere"}),
        "/pre/sub/.git",
    )
    .await;
    env.blocked(
        "move_file",
        json!({"from": "/pre/.git", "to": "/pre/git-backup"}),
        "/pre/.git",
    )
    .await;
    env.blocked(
        "move_file",
        json!({"from": "/pre/wt", "to": "/ask/wt"}),
        "/pre/wt/.git",
    )
    .await;
    // A directory of harmless files moved to where they would be read is refused too.
    put(&env.host("pre/kit/hooks/pre-commit"), "evil\n");
    put(&env.host("pre/kit/config"), "evil\n");
    env.blocked(
        "move_file",
        json!({"from": "/pre/kit", "to": "/pre/plain/.git"}),
        "/pre/plain/.git",
    )
    .await;
    env.blocked(
        "move_file",
        json!({"from": "/pre/kit", "to": "/pre/.vscode/kit"}),
        "/pre/.vscode/kit",
    )
    .await;
    env.blocked(
        "move_file",
        json!({"from": "/pre/kit/hooks", "to": "/pre/.git/modules/m/hooks"}),
        "/pre/.git/modules/m/hooks",
    )
    .await;
}

/// The zones of [`zones`], with `pre` unprotecting its top-level repository.
fn unprotected_zones() -> Vec<ZoneConfig> {
    vec![
        ZoneConfig::new("pre", ZoneMode::Rw)
            .with_approval(ZoneApproval::uniform(ApprovalDecisionType::PreApproved))
            .with_unprotect(["/.git"]),
        ZoneConfig::new("ask", ZoneMode::Rw),
    ]
}

#[tokio::test]
async fn unprotect_makes_a_built_in_path_ask_a_person_every_time() {
    let env = Env::build(ApprovalMode::Interactive, unprotected_zones(), true);
    let write = json!({"path": "/pre/.git/config", "content": "[user]\n\tname = x\n"});
    for round in 1..=2 {
        let outcome = env.call("write_file", write.clone()).await;
        assert_eq!(outcome.status, ToolStatus::Success, "{:?}", outcome.error);
        assert_eq!(outcome.decided_by, Some(DecidedBy::User));
        let asked = env.asked();
        assert_eq!(
            asked.len(),
            round,
            "asked every time, in a pre-approved zone"
        );
        let description = &asked[round - 1].description;
        assert!(
            description.ends_with(
                "\n\u{26a0} unprotected: /pre/.git/config is read outside the sandbox (asked \
                 every time, never remembered)"
            ),
            "{description}"
        );
        assert!(asked[round - 1].preview.is_some(), "the diff is shown");
    }
    assert_eq!(
        fs::read_to_string(env.host("pre/.git/config")).unwrap(),
        "[user]\n\tname = x\n"
    );
    // Only what the zone lists: the nested repository and the other zone stay protected.
    env.blocked(
        "write_file",
        json!({"path": "/pre/sub/.git/config", "content": "x"}),
        "/pre/sub/.git/config",
    )
    .await;
    env.blocked("delete_file", json!({"path": "/pre/.envrc"}), "/pre/.envrc")
        .await;
    env.blocked(
        "edit_file",
        json!({"path": "/ask/.git/config", "old_string": "original", "new_string": "x"}),
        "/ask/.git/config",
    )
    .await;
}

#[tokio::test]
async fn approve_all_does_not_approve_an_unprotected_path() {
    let env = Env::build(ApprovalMode::ApproveAll, unprotected_zones(), false);
    let before = env.snapshot();
    for (tool, args) in [
        (
            "write_file",
            json!({"path": "/pre/.git/hooks/pre-commit", "content": "evil", "createDirs": true}),
        ),
        (
            "edit_file",
            json!({"path": "/pre/.git/config", "old_string": "original", "new_string": "x"}),
        ),
        (
            "delete_file",
            json!({"path": "/pre/.git", "recursive": true}),
        ),
    ] {
        let outcome = env.call(tool, args).await;
        assert_eq!(
            outcome.status,
            ToolStatus::Denied,
            "{tool}: {:?}",
            outcome.error
        );
    }
    assert_eq!(env.snapshot(), before);
    // An ordinary path in the same zone is still pre-approved.
    let outcome = env
        .call("write_file", json!({"path": "/pre/a.txt", "content": "a"}))
        .await;
    assert_eq!(outcome.status, ToolStatus::Success);
}

#[tokio::test]
async fn protected_patterns_from_the_config_are_blocked_and_cannot_be_unprotected() {
    let dir = tempfile::tempdir().unwrap();
    put(&dir.path().join("pre/secrets/key"), "k\n");
    let zones = vec![
        ZoneConfig::new("pre", ZoneMode::Rw)
            .with_approval(ZoneApproval::uniform(ApprovalDecisionType::PreApproved))
            .with_unprotect(["**"]),
    ];
    let sandbox = Sandbox::open(dir.path(), &zones).unwrap().protect(
        &ProtectedPaths::new()
            .with_pattern("secrets/**")
            .unwrap()
            .with_pattern("Makefile")
            .unwrap(),
    );
    let env = Env::with_sandbox(dir, sandbox, ApprovalMode::ApproveAll, false);
    env.blocked(
        "write_file",
        json!({"path": "/pre/secrets/key", "content": "x"}),
        "/pre/secrets/key",
    )
    .await;
    env.blocked(
        "write_file",
        json!({"path": "/pre/src/Makefile", "content": "x", "createDirs": true}),
        "/pre/src/Makefile",
    )
    .await;
    env.blocked(
        "delete_file",
        json!({"path": "/pre/secrets", "recursive": true}),
        "/pre/secrets",
    )
    .await;
}
