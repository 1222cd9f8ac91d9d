//! The `shell` tool's rules through the real orchestrator: a blocked command ends as `blocked`
//! without any prompt, a command the rules leave to the user is put to the user (and, denied,
//! never runs), and shell syntax is `INVALID_ARGUMENTS` without a prompt. Nothing here starts
//! a process: the jail's helper does not exist, so a command that got that far would fail with
//! `EXECUTION_ERROR`, which these tests would notice.

use std::sync::{Arc, Mutex};

use golem_core::approval::{
    ApprovalCallback, ApprovalController, ApprovalDecisionType, ApprovalMode,
};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{CallOutcome, ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, ApprovalResponse, DecidedBy, ToolErrorCode, ToolStatus};
use golem_sandbox::jail::{Jail, JailPolicy};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use golem_tools::shell::{ShellRule, ShellRules, shell_tool};
use golem_toolset::BuiltJail;
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Env {
    dir: tempfile::TempDir,
    orchestrator: ToolCallOrchestrator,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
}

impl Env {
    /// `git ` pre-approved, `rm -rf` blocked, `rm ` ask, nothing else; prompts are denied.
    fn new() -> Env {
        Env::with_mode(ApprovalMode::Interactive)
    }

    /// [`Env::new`] with the approval mode `mode` (the prompt still denies and records).
    fn with_mode(mode: ApprovalMode) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let zones = [ZoneConfig::new("work", ZoneMode::Rw)];
        let sandbox = Sandbox::open(dir.path(), &zones).unwrap();
        let jail = Jail::new(
            dir.path().join("no-such-helper"),
            sandbox,
            JailPolicy::default(),
        );
        let rule = |pattern: &str, approval| ShellRule {
            pattern: pattern.to_owned(),
            approval,
        };
        let rules = ShellRules::new(
            vec![
                rule("git ", ApprovalDecisionType::PreApproved),
                rule("rm -rf", ApprovalDecisionType::Blocked),
                rule("rm ", ApprovalDecisionType::Ask),
            ],
            None,
        )
        .unwrap();
        let mut registry = ToolRegistry::new();
        registry
            .register(shell_tool(BuiltJail::new(jail), rules))
            .unwrap();
        let asked = Arc::new(Mutex::new(Vec::new()));
        let callback: ApprovalCallback = {
            let asked = asked.clone();
            Arc::new(move |request: ApprovalRequest, _cancel| {
                let response = ApprovalResponse::deny(&request.request_id, None);
                asked.lock().unwrap().push(request);
                Box::pin(async move { Ok(response) })
            })
        };
        let controller = ApprovalController::new(mode).with_callback(callback);
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

    async fn shell(&self, command: &str) -> CallOutcome {
        self.orchestrator
            .call(
                ToolCall::from_model("c1", "shell", json!({ "command": command })),
                &CancellationToken::new(),
            )
            .await
    }

    fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().unwrap().clone()
    }

    /// The zone `work` on the host, where a command that ran could leave traces.
    fn work(&self) -> std::path::PathBuf {
        self.dir.path().join("work")
    }
}

#[tokio::test]
async fn blocked_commands_never_reach_a_prompt() {
    let env = Env::new();
    for command in ["rm -rf /", "gitx status", "ls"] {
        let outcome = env.shell(command).await;
        assert_eq!(outcome.status, ToolStatus::Blocked, "{command}");
        assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
        assert!(outcome.executed_args.is_none());
        let error = outcome.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::Blocked);
        assert!(
            error.message.contains(&format!("`{command}`")),
            "{}",
            error.message
        );
    }
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn commands_left_to_the_user_are_asked_and_denied_ones_never_run() {
    let env = Env::new();
    let outcome = env.shell("rm file.txt").await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert!(outcome.executed_args.is_none());
    let asked = env.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].description, "Run `rm file.txt` in /work");
}

#[tokio::test]
async fn shell_syntax_is_an_invalid_call_without_a_prompt() {
    let env = Env::new();
    for command in ["git status | wc", "git log && rm -rf /", "git show $(id)"] {
        let outcome = env.shell(command).await;
        let error = outcome.error.unwrap();
        assert_eq!(error.code, ToolErrorCode::InvalidArguments, "{command}");
        assert!(
            error.message.contains("without a shell"),
            "{}",
            error.message
        );
    }
    assert!(env.asked().is_empty());
}

#[tokio::test]
async fn pre_approved_commands_go_straight_to_the_jail() {
    let env = Env::new();
    let outcome = env.shell("git status").await;
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert!(env.asked().is_empty());
    // The helper does not exist, so the jail reports that it cannot run.
    assert_eq!(outcome.error.unwrap().code, ToolErrorCode::ExecutionError);
}

/// The review's case (issue #11 item 4): `git ` is pre-approved and the mode is `auto_deny`,
/// yet `git -c alias.x='!…' x` makes git run a shell. The table of programs that run others
/// turns the rule's pre-approval into a question, which `auto_deny` denies: nothing runs.
#[tokio::test]
async fn under_auto_deny_a_git_alias_on_the_command_line_is_denied_and_never_runs() {
    let env = Env::with_mode(ApprovalMode::AutoDeny);
    let victim = env.work().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    for command in [
        "git -c alias.x='!rm -f /work/victim.txt; true' x",
        "git -c core.sshCommand='rm -f /work/victim.txt' fetch origin",
        "git --no-pager -calias.x=!id x",
        "git fetch --upload-pack='rm -f /work/victim.txt' origin",
        "git config alias.x '!rm -f /work/victim.txt'",
    ] {
        let outcome = env.shell(command).await;
        assert_eq!(outcome.status, ToolStatus::Denied, "{command}");
        assert_eq!(outcome.decided_by, Some(DecidedBy::Mode), "{command}");
        assert!(outcome.executed_args.is_none(), "{command}");
        let error = outcome.error.unwrap();
        assert_eq!(
            error.code,
            ToolErrorCode::Denied,
            "{command}: {}",
            error.message
        );
        assert!(error.message.contains("auto_deny"), "{}", error.message);
    }
    assert!(
        env.asked().is_empty(),
        "auto_deny puts nothing to the prompt"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    // The narrow form is still pre-approved and goes to the jail (which cannot start here).
    let outcome = env.shell("git status").await;
    assert_eq!(outcome.decided_by, Some(DecidedBy::Policy));
    assert_eq!(outcome.error.unwrap().code, ToolErrorCode::ExecutionError);
}

/// When the prompt does ask, it says why the pre-approval did not hold.
#[tokio::test]
async fn the_prompt_says_why_a_pre_approved_command_is_asked() {
    let env = Env::new();
    let outcome = env
        .shell("git -c alias.x='!rm -f /work/victim.txt; true' x")
        .await;
    assert_eq!(outcome.status, ToolStatus::Denied);
    assert!(outcome.executed_args.is_none());
    let asked = env.asked();
    assert_eq!(asked.len(), 1);
    let description = &asked[0].description;
    assert!(
        description.starts_with("Run `git -c 'alias.x=!rm -f /work/victim.txt; true' x` in /work"),
        "{description}"
    );
    assert!(description.contains("`-c`"), "{description}");
    assert!(description.contains("configuration"), "{description}");
}

/// The session compiles a built-in tool's schema only when the tool is first called
/// (`ToolRegistry::register_checked`), so the schemas of the two process tools are checked here,
/// as `register` checks a schema from outside (the file, web and git tools' tests register
/// theirs that way).
#[test]
fn the_process_tools_have_valid_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let zones = [ZoneConfig::new("work", ZoneMode::Rw)];
    let sandbox = Sandbox::open(dir.path(), &zones).unwrap();
    let jail = || {
        Jail::new(
            dir.path().join("no-such-helper"),
            sandbox.clone(),
            JailPolicy::default(),
        )
    };
    let mut registry = ToolRegistry::new();
    registry
        .register(shell_tool(BuiltJail::new(jail()), ShellRules::default()))
        .unwrap();
    registry
        .register(golem_tools::run_code_tool(
            BuiltJail::new(jail()),
            golem_core::approval::ApprovalDecisionType::PreApproved,
        ))
        .unwrap();
    assert_eq!(registry.len(), 2);
}
