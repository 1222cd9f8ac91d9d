//! `shell {command, timeout?}` → a `code_result`: one program with its arguments, run in the
//! jail without a shell. Approval comes from the toolset's rules (`rules.rs`); the command's
//! words come from `words.rs`. When the program cannot be started the jail reports exit 127
//! (not found) or 126 (not executable); with nothing on stderr the result says so in words.

use async_trait::async_trait;
use golem_core::approval::ApprovalRequirement;
use golem_core::text::fold;
use golem_core::tool::{
    CallPlan, DescribedTool, ManualExecution, PreparedCall, ToolContext, ToolInfo,
};
use golem_protocol::result::CodeResultData;
use golem_protocol::{ToolError, ToolErrorCode, ToolResultValue};
use golem_toolset::process::Runner;
use schemars::JsonSchema;
use serde::Deserialize;

use super::rules::ShellRules;
use super::words::split_command;

pub(super) const NAME: &str = "shell";

/// Run one program with arguments, without a shell.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// The program and its arguments, e.g. `git log --oneline -5`; quote one with spaces ('a b'
    /// or "a b").
    command: String,
    /// The wall-clock limit in seconds (described with the toolset's limits at construction).
    #[serde(default)]
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
}

/// What a `shell` call will run: its words, or why the command cannot run (reported by
/// `execute`; such a call is not put to anyone).
#[derive(Debug)]
pub struct ShellPlan {
    words: Result<Vec<String>, ToolError>,
    timeout: Option<u64>,
}

impl CallPlan for ShellPlan {}

/// The `shell` tool.
#[derive(Debug)]
pub struct Shell {
    runner: Runner,
    rules: ShellRules,
    info: ToolInfo,
}

impl Shell {
    pub(super) fn new(runner: Runner, rules: ShellRules) -> Shell {
        let description = format!(
            "Run one program with arguments, such as `git status` or `ls -la`, and return its \
             exit status, stdout and stderr. There is no shell: no pipes, redirection, command \
             chaining, variables or globbing. {}. {}",
            runner.surroundings(),
            rules.guide()
        );
        // The user may run it too (`/shell …` in a chat).
        let execution = ManualExecution::both("Run a command in the jail", Some("Shell"));
        let info = runner.tool_info::<ShellArgs>(NAME, description, execution, rules.describe());
        Shell {
            runner,
            rules,
            info,
        }
    }
}

/// Says in words why the program did not start, when the jail's exit code says so and the
/// program itself said nothing.
fn explain_start_failure(data: &mut CodeResultData, program: &str) {
    if !data.stderr.is_empty() {
        return;
    }
    match data.exit_code {
        Some(127) => data.stderr = format!("command not found: {program}"),
        Some(126) => data.stderr = format!("command not executable: {program}"),
        _ => {}
    }
}

#[async_trait]
impl DescribedTool for Shell {
    type Args = ShellArgs;
    type Plan = ShellPlan;

    fn info(&self) -> &ToolInfo {
        &self.info
    }

    /// Splits the command once: the rules decide on its words, the description shows them.
    async fn prepare(
        &self,
        args: ShellArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<ShellPlan>, ToolError> {
        let words = split_command(&args.command)
            .map_err(|err| ToolError::new(ToolErrorCode::InvalidArguments, err.to_string()));
        let (requirement, command, caution) = match &words {
            Ok(words) => (
                self.rules.requirement(words),
                shell_words::join(words),
                self.rules.caution(words),
            ),
            // A command that cannot be split is not put to anyone; `execute` refuses it.
            Err(_) => (ApprovalRequirement::PreApproved, args.command, None),
        };
        let run = format!("Run `{}` in {}", fold(&command, 200), self.runner.workdir());
        let description = match caution {
            Some(why) => format!("{run}. Asked because {why}."),
            None => run,
        };
        let runnable = words.is_ok();
        let plan = ShellPlan {
            words,
            timeout: args.timeout,
        };
        Ok(self
            .runner
            .prepared(plan, requirement, runnable, description))
    }

    async fn execute(
        &self,
        plan: ShellPlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let words = plan.words?;
        // The orchestrator never executes a blocked call; checked again all the same, so that
        // nothing but the rules' decision for exactly these words can run.
        if let ApprovalRequirement::Blocked { reason } = self.rules.requirement(&words) {
            return Err(ToolError::new(ToolErrorCode::Blocked, reason));
        }
        let Some((program, rest)) = words.split_first() else {
            return Err(ToolError::new(
                ToolErrorCode::InvalidArguments,
                "the command is empty",
            ));
        };
        let shown = shell_words::join(&words);
        let command = self.runner.command(program, rest.to_vec(), plan.timeout);
        let mut data = self.runner.run_gated(&command, &shown, ctx, NAME).await?;
        explain_start_failure(&mut data, program);
        Ok(ToolResultValue::code_result(data))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use golem_core::approval::ApprovalDecisionType::{self, Ask, Blocked, PreApproved};
    use golem_core::tool::Tool;
    use golem_sandbox::{ZoneConfig, ZoneMode};
    use serde_json::json;

    use super::*;
    use crate::shell::{ShellRule, shell_tool};
    use crate::testing::{self, execute_err, prepare, test_jail};
    use golem_toolset::BuiltJail;

    fn tool(
        rules: &[(&str, ApprovalDecisionType)],
        default: Option<ApprovalDecisionType>,
    ) -> (tempfile::TempDir, Arc<dyn Tool>) {
        let zones = [
            ZoneConfig::new("src", ZoneMode::Ro),
            ZoneConfig::new("work", ZoneMode::Rw),
        ];
        let (dir, jail) = test_jail(&zones, false);
        let rules = rules
            .iter()
            .map(|(pattern, approval)| ShellRule {
                pattern: (*pattern).to_owned(),
                approval: *approval,
            })
            .collect();
        let rules = ShellRules::new(rules, default).unwrap_or_else(|e| panic!("{e}"));
        (dir, shell_tool(BuiltJail::new(jail), rules))
    }

    async fn approval(tool: &Arc<dyn Tool>, command: &str) -> ApprovalRequirement {
        testing::approval(tool, json!({ "command": command })).await
    }

    async fn describe(tool: &Arc<dyn Tool>, command: &str) -> String {
        testing::describe(tool, json!({ "command": command })).await
    }

    async fn blocked_reason(tool: &Arc<dyn Tool>, command: &str) -> String {
        match approval(tool, command).await {
            ApprovalRequirement::Blocked { reason } => reason,
            other => panic!("{command}: expected blocked, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_rule_cases_of_the_issue_at_the_tool() {
        let (_git_dir, git) = tool(&[("git ", PreApproved)], None);
        assert_eq!(
            approval(&git, "git status").await,
            ApprovalRequirement::PreApproved
        );
        assert!(
            blocked_reason(&git, "gitx status")
                .await
                .contains("`gitx status`")
        );

        let (_rm_dir, rm) = tool(&[("rm -rf", Blocked), ("rm ", Ask)], None);
        assert!(
            blocked_reason(&rm, "rm -rf /")
                .await
                .contains("shell rule `rm -rf`")
        );
        assert_eq!(approval(&rm, "rm file.txt").await, ApprovalRequirement::Ask);

        let (_ask_dir, ask) = tool(&[("git ", PreApproved)], Some(Ask));
        assert_eq!(approval(&ask, "make test").await, ApprovalRequirement::Ask);
        let (_none_dir, none) = tool(&[("git ", PreApproved)], None);
        assert!(
            blocked_reason(&none, "make test")
                .await
                .contains("no shell rule allows")
        );
    }

    #[tokio::test]
    async fn commands_that_cannot_be_split_are_not_put_to_anyone() {
        let (_t_dir, t) = tool(&[], Some(Ask));
        for command in ["echo ${HOME}", "echo `whoami`", "a && b", "echo 'x", ""] {
            assert_eq!(
                approval(&t, command).await,
                ApprovalRequirement::PreApproved,
                "{command}"
            );
        }
    }

    #[tokio::test]
    async fn shell_syntax_is_refused_before_anything_runs() {
        let (_t_dir, t) = tool(&[], Some(PreApproved));
        for command in [
            "echo ${HOME}",
            "echo `whoami`",
            "a && b",
            "ls | wc",
            "cat < x",
            "echo hi > f",
            "a; b",
            "sleep 1 &",
        ] {
            let err = execute_err(&t, json!({ "command": command })).await;
            assert_eq!(err.code, ToolErrorCode::InvalidArguments, "{command}");
            assert!(err.message.contains("without a shell"), "{}", err.message);
        }
        for (command, message) in [
            ("echo 'x", "the single quote at character 6 is never closed"),
            ("   ", "the command is empty"),
        ] {
            let err = execute_err(&t, json!({ "command": command })).await;
            assert_eq!(
                (err.code, err.message.as_str()),
                (ToolErrorCode::InvalidArguments, message)
            );
        }
    }

    #[tokio::test]
    async fn a_jail_that_cannot_be_built_is_an_execution_error() {
        // The test jail's helper does not exist: the command gets as far as the jail.
        let (_t_dir, t) = tool(&[("ls", PreApproved)], None);
        let err = execute_err(&t, json!({"command": "ls -la"})).await;
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(err.message.contains("jail"), "{}", err.message);
    }

    #[tokio::test]
    async fn execute_refuses_a_blocked_command_itself() {
        let (_t_dir, t) = tool(&[("rm -rf", Blocked)], Some(PreApproved));
        let err = execute_err(&t, json!({"command": "rm -rf /"})).await;
        assert_eq!(err.code, ToolErrorCode::Blocked);
        assert_eq!(
            err.message,
            "the command `rm -rf /` is blocked by the shell rule `rm -rf`"
        );
    }

    #[tokio::test]
    async fn the_call_is_described_as_the_words_that_run() {
        let (_t_dir, t) = tool(&[], Some(Ask));
        assert_eq!(
            describe(&t, "git  commit -m \"a; b\"").await,
            "Run `git commit -m 'a; b'` in /work"
        );
        assert_eq!(describe(&t, "ls # ; rm -rf /").await, "Run `ls` in /work");
        assert_eq!(describe(&t, "a && b").await, "Run `a && b` in /work");
        assert_eq!(
            prepare(&t, json!({"command": "ls"})).await.risk,
            golem_protocol::Risk::Medium
        );
    }

    #[test]
    fn schema_and_description_tell_the_model_the_limits_and_rules() {
        let (_t_dir, t) = tool(&[("git ", PreApproved), ("rm ", Ask)], None);
        let schema = t.input_schema();
        assert_eq!(schema["required"], json!(["command"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["properties"]["timeout"]["minimum"], json!(1));
        let timeout = schema["properties"]["timeout"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(timeout.contains("default 60 s, at most 600 s"), "{timeout}");
        insta::assert_snapshot!(t.description());
        assert_eq!(
            t.approval_policy().as_deref(),
            Some("by rule: `git` pre-approved, `rm` ask; otherwise blocked")
        );
    }

    #[test]
    fn a_program_that_did_not_start_is_explained() {
        let data = |exit_code, stderr: &str| CodeResultData {
            command: "nope".into(),
            stdout: String::new(),
            stderr: stderr.into(),
            exit_code,
            signal: None,
            duration_ms: 1,
            timed_out: false,
            weakened: vec![],
            changes: None,
            limits: None,
        };
        for (exit, stderr, expected) in [
            (Some(127), "", "command not found: nope"),
            (Some(126), "", "command not executable: nope"),
            (Some(127), "bash: x: not found", "bash: x: not found"),
            (Some(1), "", ""),
            (None, "", ""),
        ] {
            let mut d = data(exit, stderr);
            explain_start_failure(&mut d, "nope");
            assert_eq!(d.stderr, expected, "{exit:?}");
        }
    }
}
