//! `run_code {language: python|bash, code, args?, env?, timeout?}` → a `code_result`: the code
//! is written as `main.py` / `main.sh` into the jail's private `/tmp` and run with `python3` or
//! `bash` in the toolset's working directory. Approval is the toolset's own decision
//! (pre-approved unless configured); the approval preview is the code itself.

use std::collections::BTreeMap;

use async_trait::async_trait;
use golem_core::approval::ApprovalDecisionType;
use golem_core::text::fold;
use golem_core::tool::{
    CallPlan, DescribedTool, ManualExecution, PreparedCall, ToolContext, ToolInfo,
};
use golem_protocol::{DisplayHints, PreferredView, ToolError, ToolErrorCode, ToolResultValue};
use golem_sandbox::jail::JailScript;
use golem_toolset::process::Runner;
use schemars::JsonSchema;
use serde::Deserialize;

use super::env::check_env;

pub(super) const NAME: &str = "run_code";

/// The language of the code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Language {
    /// Python 3, run with `python3`.
    Python,
    /// A bash script, run with `bash`.
    Bash,
}

impl Language {
    fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Bash => "bash",
        }
    }

    fn program(self) -> &'static str {
        match self {
            Language::Python => "python3",
            Language::Bash => "bash",
        }
    }

    fn file_name(self) -> &'static str {
        match self {
            Language::Python => "main.py",
            Language::Bash => "main.sh",
        }
    }
}

/// Run a Python or bash program in a jail.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCodeArgs {
    /// `python` (python3) or `bash`.
    language: Language,
    /// The source code.
    code: String,
    /// Arguments (sys.argv[1:] in Python, $1, $2, … in bash).
    #[serde(default)]
    args: Option<Vec<String>>,
    /// Environment variables to add, e.g. {"DEBUG": "1"}; not PATH, HOME, TMPDIR, LD_PRELOAD
    /// or LD_LIBRARY_PATH.
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    /// The wall-clock limit in seconds (described with the toolset's limits at construction).
    #[serde(default)]
    #[schemars(range(min = 1))]
    timeout: Option<u64>,
}

/// `INVALID_ARGUMENTS` for arguments no process can receive.
fn check(args: &RunCodeArgs) -> Result<(), ToolError> {
    if let Some(env) = &args.env {
        check_env(env)?;
    }
    let arguments = args.args.iter().flatten().enumerate();
    if let Some((i, _)) = arguments.into_iter().find(|(_, arg)| arg.contains('\0')) {
        return Err(ToolError::new(
            ToolErrorCode::InvalidArguments,
            format!("args: argument {} contains a NUL character", i + 1),
        ));
    }
    Ok(())
}

/// What a `run_code` call will run: its checked arguments, or why no process can take them
/// (reported by `execute`; such a call is not put to the user).
#[derive(Debug)]
pub struct CodePlan(Result<RunCodeArgs, ToolError>);

impl CallPlan for CodePlan {
    /// The code itself.
    fn preview(&mut self) -> Option<ToolResultValue> {
        let args = self.0.as_ref().ok()?;
        Some(
            ToolResultValue::text(args.code.clone()).with_display(DisplayHints {
                preferred_view: Some(PreferredView::Code),
                language: Some(args.language.name().to_owned()),
                ..DisplayHints::default()
            }),
        )
    }
}

/// The `run_code` tool.
#[derive(Debug)]
pub struct RunCode {
    runner: Runner,
    approval: ApprovalDecisionType,
    info: ToolInfo,
}

impl RunCode {
    pub(super) fn new(runner: Runner, approval: ApprovalDecisionType) -> RunCode {
        let description = format!(
            "Run a Python 3 or bash program and return its exit status, stdout and stderr. {}. \
             Files written to a read-write zone persist; /tmp is private to each run.",
            runner.surroundings()
        );
        let policy = match approval {
            ApprovalDecisionType::PreApproved => "pre-approved (jailed)",
            ApprovalDecisionType::Ask => "ask",
            ApprovalDecisionType::Blocked => "blocked",
        };
        // The user may run it too (`/run_code …` in a chat).
        let execution = ManualExecution::both("Run Python or bash code in the jail", Some("Code"));
        let info = runner.tool_info::<RunCodeArgs>(NAME, description, execution, policy.to_owned());
        RunCode {
            runner,
            approval,
            info,
        }
    }
}

#[async_trait]
impl DescribedTool for RunCode {
    type Args = RunCodeArgs;
    type Plan = CodePlan;

    fn info(&self) -> &ToolInfo {
        &self.info
    }

    async fn prepare(
        &self,
        args: RunCodeArgs,
        _ctx: &ToolContext,
    ) -> Result<PreparedCall<CodePlan>, ToolError> {
        let description = self.describe(&args);
        let checked = check(&args).map(|()| args);
        let runnable = checked.is_ok();
        let requirement = self.approval.requirement(NAME);
        Ok(self
            .runner
            .prepared(CodePlan(checked), requirement, runnable, description))
    }

    async fn execute(
        &self,
        plan: CodePlan,
        ctx: &ToolContext,
    ) -> Result<ToolResultValue, ToolError> {
        let args = plan.0?;
        let language = args.language;
        let arguments = args.args.unwrap_or_default();
        let shown = shell_words::join(
            [language.program(), language.file_name()]
                .into_iter()
                .chain(arguments.iter().map(String::as_str)),
        );
        let mut command = self
            .runner
            .command(language.program(), arguments, args.timeout);
        command.script = Some(JailScript {
            file_name: language.file_name().to_owned(),
            contents: args.code.into_bytes(),
        });
        command.env = args.env.unwrap_or_default();
        let data = self.runner.run_gated(&command, &shown, ctx, NAME).await?;
        Ok(ToolResultValue::code_result(data))
    }
}

impl RunCode {
    /// The call in words, for the approval prompt.
    fn describe(&self, args: &RunCodeArgs) -> String {
        let workdir = self.runner.workdir();
        let lines = args.code.lines().count();
        let mut text = match lines {
            _ if args.code.trim().is_empty() => {
                format!("Run an empty {} program in {workdir}", args.language.name())
            }
            0 | 1 => format!(
                "Run {} in {workdir}: {}",
                args.language.name(),
                fold(args.code.trim(), 120)
            ),
            n => format!("Run {n} lines of {} in {workdir}", args.language.name()),
        };
        if let Some(arguments) = args.args.as_ref().filter(|a| !a.is_empty()) {
            text.push_str(&format!(
                " with arguments {}",
                fold(&shell_words::join(arguments), 120)
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use golem_core::approval::ApprovalRequirement;
    use golem_core::tool::Tool;
    use golem_protocol::Risk;
    use golem_sandbox::{ZoneConfig, ZoneMode};
    use serde_json::{Value, json};

    use super::*;
    use crate::code::run_code_tool;
    use crate::testing::{approval, describe, execute_err, prepare, test_jail};
    use golem_toolset::BuiltJail;

    /// `run_code` with `approval`, the timeouts `(default, max)` in seconds (or the defaults).
    fn tool_with(
        approval: ApprovalDecisionType,
        timeouts: Option<(u64, u64)>,
        network: bool,
    ) -> (tempfile::TempDir, Arc<dyn Tool>) {
        let zones = [
            ZoneConfig::new("data", ZoneMode::Ro),
            ZoneConfig::new("work", ZoneMode::Rw),
        ];
        let (dir, jail) = test_jail(&zones, network);
        let mut jail = BuiltJail::new(jail);
        if let Some((default, max)) = timeouts {
            jail.timeout = std::time::Duration::from_secs(default);
            jail.max_timeout = std::time::Duration::from_secs(max);
        }
        (dir, run_code_tool(jail, approval))
    }

    fn tool(approval: ApprovalDecisionType) -> (tempfile::TempDir, Arc<dyn Tool>) {
        tool_with(approval, None, false)
    }

    fn call(code: &str) -> Value {
        json!({"language": "python", "code": code})
    }

    #[tokio::test]
    async fn approval_is_the_toolsets_decision_and_pre_approved_by_default() {
        let (_t_dir, t) = tool_with(ApprovalDecisionType::PreApproved, None, false);
        assert_eq!(
            approval(&t, call("print(1)")).await,
            ApprovalRequirement::PreApproved
        );
        assert_eq!(
            t.approval_policy().as_deref(),
            Some("pre-approved (jailed)")
        );
        let (_ask_dir, ask) = tool(ApprovalDecisionType::Ask);
        assert_eq!(
            approval(&ask, call("print(1)")).await,
            ApprovalRequirement::Ask
        );
        let (_blocked_dir, blocked) = tool(ApprovalDecisionType::Blocked);
        assert_eq!(
            approval(&blocked, call("print(1)")).await,
            ApprovalRequirement::blocked("run_code is blocked by configuration")
        );
        // A call that cannot run is not put to the user, unless the tool is blocked anyway.
        let bad_env = json!({"language": "bash", "code": "env", "env": {"PATH": "/x"}});
        assert_eq!(
            approval(&ask, bad_env.clone()).await,
            ApprovalRequirement::PreApproved
        );
        assert!(matches!(
            approval(&blocked, bad_env).await,
            ApprovalRequirement::Blocked { .. }
        ));
    }

    #[tokio::test]
    async fn arguments_no_process_can_take_are_refused_before_anything_runs() {
        let (_t_dir, t) = tool(ApprovalDecisionType::PreApproved);
        for (env, message) in [
            (
                json!({"PATH": "/evil"}),
                "env: `PATH` may not be set by a call",
            ),
            (
                json!({"LD_PRELOAD": "x.so"}),
                "env: `LD_PRELOAD` may not be set by a call",
            ),
            (
                json!({"A-B": "1"}),
                "env: `A-B` is not a valid variable name",
            ),
            (
                json!({"A": "x\u{0}y"}),
                "env: the value of `A` contains a NUL character",
            ),
        ] {
            let err = execute_err(&t, json!({"language": "bash", "code": "env", "env": env})).await;
            assert_eq!(err.code, ToolErrorCode::InvalidArguments);
            assert!(err.message.starts_with(message), "{}", err.message);
        }
        let err = execute_err(
            &t,
            json!({"language": "python", "code": "", "args": ["a", "b\u{0}"]}),
        )
        .await;
        assert_eq!(
            (err.code, err.message.as_str()),
            (
                ToolErrorCode::InvalidArguments,
                "args: argument 2 contains a NUL character"
            )
        );
        let err = t
            .prepare(
                &json!({"language": "ruby", "code": ""}),
                &ToolContext::for_model("t"),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, ToolErrorCode::InvalidArguments);
    }

    #[test]
    fn the_schema_names_the_languages_and_the_limits() {
        let (_t_dir, t) = tool_with(ApprovalDecisionType::PreApproved, Some((30, 120)), false);
        let schema = t.input_schema();
        assert_eq!(schema["required"], json!(["language", "code"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        let language = schema["properties"]["language"].to_string();
        assert!(
            language.contains("\"python\"") && language.contains("\"bash\""),
            "{language}"
        );
        assert_eq!(schema["properties"]["timeout"]["minimum"], json!(1));
        let timeout = schema["properties"]["timeout"]["description"]
            .as_str()
            .unwrap_or_default();
        assert!(timeout.contains("default 30 s, at most 120 s"), "{timeout}");
        insta::assert_snapshot!(t.description());
    }

    #[tokio::test]
    async fn the_call_is_described_and_previewed_as_code() {
        let (_t_dir, t) = tool(ApprovalDecisionType::Ask);
        assert_eq!(
            describe(&t, call("print('hi')")).await,
            "Run python in /work: print('hi')"
        );
        assert_eq!(
            describe(&t, call(" \n")).await,
            "Run an empty python program in /work"
        );
        assert_eq!(
            describe(
                &t,
                json!({"language": "bash", "code": "set -e\nls\nwc -l x\n",
                       "args": ["a b", "c"]})
            )
            .await,
            "Run 3 lines of bash in /work with arguments 'a b' c"
        );
        let preview = prepare(&t, call("print(1)\n"))
            .await
            .plan
            .preview()
            .unwrap_or_else(|| panic!("a preview"));
        assert_eq!(preview.to_model_text(), "print(1)\n");
        let display = preview.display.unwrap_or_default();
        assert_eq!(display.preferred_view, Some(PreferredView::Code));
        assert_eq!(display.language.as_deref(), Some("python"));
        assert_eq!(prepare(&t, call("")).await.risk, Risk::Medium);
        let (_online_dir, online) = tool_with(ApprovalDecisionType::PreApproved, None, true);
        assert_eq!(prepare(&online, call("")).await.risk, Risk::High);
    }

    #[tokio::test]
    async fn a_jail_that_cannot_be_built_is_an_execution_error_in_its_own_words() {
        // The test jail's helper does not exist, so the run fails inside the jail.
        let (_t_dir, t) = tool(ApprovalDecisionType::PreApproved);
        let err = execute_err(&t, call("print(1)")).await;
        assert_eq!(err.code, ToolErrorCode::ExecutionError);
        assert!(err.message.contains("jail"), "{}", err.message);
    }

    #[test]
    fn languages_run_as_scripts_of_their_interpreter() {
        assert_eq!(
            (Language::Python.program(), Language::Python.file_name()),
            ("python3", "main.py")
        );
        assert_eq!(
            (Language::Bash.program(), Language::Bash.file_name()),
            ("bash", "main.sh")
        );
    }
}
