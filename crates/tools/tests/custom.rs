//! Custom tools (`toolsets.custom`) from a Python, a JavaScript and a shell module, through the
//! real orchestrator and the real process jail: both Python formats (functions with type hints
//! or a `_schema` dict, and tool objects), JavaScript functions with a `Schema` export and tool
//! objects, the executable protocol (`describe`, `call NAME` with the arguments on stdin); a
//! tool's own `needs_approval` (static and dynamic) beating the configured decision; the
//! whitelist; custom result kinds, and invalid ones passed on as `structured` (`results.rs`);
//! bad JSON out, a timeout, a crash, a whitelisted tool the module lacks and a function without
//! a usable schema as errors naming the module and the tool; and the jail (a module reads its zone but nothing outside it, not even its own file).
//! A plain function's own policy (`policies.rs`), forged answers (`forgery.rs`), the
//! long-lived process of a Python or JavaScript module (`session.rs`), and the describe cache
//! (`cache.rs`).
//!
//! The jail runs its helper as `<this binary> __jail …`, so this test binary is its own helper
//! (`harness = false`; see `git.rs` for the same small runner).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "tests: a failure is a test failure"
)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use golem_core::approval::{
    ApprovalCallback, ApprovalConfig, ApprovalController, ApprovalDecisionType, ApprovalMode,
};
use golem_core::bus::UiEventBus;
use golem_core::orchestrator::{CallOutcome, ToolCall, ToolCallOrchestrator};
use golem_core::registry::ToolRegistry;
use golem_core::tool::Tool;
use golem_core::ui::RuntimeUI;
use golem_protocol::{ApprovalRequest, ApprovalResponse, ToolErrorCode, ToolStatus};
use golem_sandbox::jail::{Jail, JailPolicy};
use golem_sandbox::{Sandbox, ZoneConfig, ZoneMode};
use golem_tools::custom::{
    CustomError, CustomModuleConfig, CustomNotice, CustomOptions, custom_tools,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[path = "custom/cache.rs"]
mod cache;
#[path = "custom/forgery.rs"]
mod forgery;
#[path = "custom/policies.rs"]
mod policies;
#[path = "custom/results.rs"]
mod results;
#[path = "custom/session.rs"]
mod session;
#[path = "custom/siblings.rs"]
mod siblings;

use golem_sandbox::jail::{HELPER_ARG, helper_main};
use golem_testkit::harness::{Test, block_on};

const TESTS: &[(&str, Test)] = &[
    (
        "python_functions_and_tool_objects",
        python_functions_and_tool_objects,
    ),
    (
        "python_own_policies_beat_only_the_default",
        python_own_policies_beat_only_the_default,
    ),
    (
        "javascript_functions_and_tool_objects",
        javascript_functions_and_tool_objects,
    ),
    (
        "an_executable_speaks_the_protocol",
        an_executable_speaks_the_protocol,
    ),
    (
        "bad_json_a_crash_and_a_timeout",
        bad_json_a_crash_and_a_timeout,
    ),
    (
        "errors_at_start_name_the_module_and_tool",
        errors_at_start_name_the_module_and_tool,
    ),
    ("the_module_runs_in_the_jail", the_module_runs_in_the_jail),
    (
        "forgery_a_process_a_tool_left_cannot_answer_for_the_module",
        forgery::a_process_a_tool_left_cannot_answer_for_the_module,
    ),
    (
        "python_and_javascript_function_policies",
        policies::python_and_javascript_function_policies,
    ),
    (
        "cache_a_warm_build_starts_no_process",
        cache::a_warm_build_starts_no_process,
    ),
    (
        "cache_a_changed_module_or_sibling_is_described_again",
        cache::a_changed_module_or_sibling_is_described_again,
    ),
    (
        "cache_a_bad_entry_is_ignored_and_rewritten_atomically",
        cache::a_bad_entry_is_ignored_and_rewritten_atomically,
    ),
    (
        "results_an_invalid_kind_is_passed_on_as_structured",
        results::an_invalid_kind_is_passed_on_as_structured,
    ),
    (
        "a_module_imports_the_files_next_to_it",
        siblings::a_module_imports_the_files_next_to_it,
    ),
    (
        "session_calls_reuse_one_process",
        session::calls_reuse_one_process,
    ),
    (
        "session_a_crash_is_an_error_and_the_next_call_gets_a_fresh_process",
        session::a_crash_is_an_error_and_the_next_call_gets_a_fresh_process,
    ),
    (
        "session_an_exception_is_an_error_and_keeps_the_process",
        session::an_exception_is_an_error_and_keeps_the_process,
    ),
    (
        "session_output_of_the_tool_never_breaks_the_reply",
        session::output_of_the_tool_never_breaks_the_reply,
    ),
    (
        "session_a_timeout_kills_everything_and_the_next_call_works",
        session::a_timeout_kills_everything_and_the_next_call_works,
    ),
    (
        "session_an_interrupt_kills_the_call_and_the_next_call_works",
        session::an_interrupt_kills_the_call_and_the_next_call_works,
    ),
    (
        "session_the_jail_holds_for_the_long_lived_process",
        session::the_jail_holds_for_the_long_lived_process,
    ),
    (
        "session_a_call_from_another_runtime_gets_its_own_process",
        session::a_call_from_another_runtime_gets_its_own_process,
    ),
];

fn main() -> ExitCode {
    golem_testkit::harness::main(TESTS, (HELPER_ARG, helper_main))
}

// ---- the fixture ----

/// A temporary directory with the zone `work` (rw), the module in `modules/` (outside every
/// zone) and `secret.txt` beside it.
struct Fixture {
    dir: tempfile::TempDir,
    sandbox: Sandbox,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        std::fs::create_dir_all(dir.path().join("modules")).unwrap();
        std::fs::write(dir.path().join("work/notes.txt"), "inside the zone").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside every zone").unwrap();
        let sandbox = Sandbox::open(dir.path(), &[ZoneConfig::new("work", ZoneMode::Rw)]).unwrap();
        Fixture { dir, sandbox }
    }

    fn jail(&self) -> Jail {
        Jail::new(
            std::env::current_exe().unwrap(),
            self.sandbox.clone(),
            JailPolicy::default(),
        )
    }

    fn module(&self, name: &str, source: &str) -> PathBuf {
        let path = self.dir.path().join("modules").join(name);
        std::fs::write(&path, source).unwrap();
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).unwrap();
        path
    }

    fn tools(
        &self,
        name: &str,
        source: &str,
        whitelist: Option<&[&str]>,
        approval: ApprovalConfig,
        timeout: Duration,
    ) -> Result<Vec<Arc<dyn Tool>>, CustomError> {
        self.tools_telling(name, source, whitelist, approval, timeout, None)
    }

    /// As [`Fixture::tools`], telling `notice` what the tools' author should know.
    fn tools_telling(
        &self,
        name: &str,
        source: &str,
        whitelist: Option<&[&str]>,
        approval: ApprovalConfig,
        timeout: Duration,
        notice: Option<CustomNotice>,
    ) -> Result<Vec<Arc<dyn Tool>>, CustomError> {
        let path = self.module(name, source);
        let options = CustomOptions {
            config: CustomModuleConfig {
                tools: whitelist.map(|w| w.iter().map(|s| (*s).to_owned()).collect()),
                approval,
                timeout: timeout.as_secs(),
                ..CustomModuleConfig::new(format!("./{name}"))
            },
            path,
            cache_dir: None,
            notice,
        };
        custom_tools(self.jail(), self.jail(), options)
    }
}

/// The orchestrator over `tools`, with a prompt that records whom it asked and approves.
struct Session {
    orchestrator: ToolCallOrchestrator,
    asked: Arc<Mutex<Vec<String>>>,
    names: Vec<String>,
}

impl Session {
    fn new(tools: Vec<Arc<dyn Tool>>) -> Session {
        let names = tools.iter().map(|t| t.name().to_owned()).collect();
        let mut registry = ToolRegistry::new();
        for tool in tools {
            registry.register(tool).unwrap();
        }
        let asked = Arc::new(Mutex::new(Vec::new()));
        let callback: ApprovalCallback = {
            let asked = asked.clone();
            Arc::new(move |request: ApprovalRequest, _cancel| {
                asked.lock().unwrap().push(request.tool_name.clone());
                let response = ApprovalResponse::approve(&request.request_id);
                Box::pin(async move { Ok(response) })
            })
        };
        let controller = ApprovalController::new(ApprovalMode::Interactive).with_callback(callback);
        let orchestrator = ToolCallOrchestrator::new(
            Arc::new(registry),
            controller,
            RuntimeUI::new(UiEventBus::new()),
        );
        Session {
            orchestrator,
            asked,
            names,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> CallOutcome {
        self.orchestrator
            .call(
                ToolCall::from_model("m1", tool, args),
                &CancellationToken::new(),
            )
            .await
    }

    async fn ok(&self, tool: &str, args: Value) -> CallOutcome {
        let outcome = self.call(tool, args.clone()).await;
        assert_eq!(
            outcome.status,
            ToolStatus::Success,
            "{tool} {args}: {:?}",
            outcome.error
        );
        outcome
    }

    async fn error(&self, tool: &str, args: Value) -> (ToolErrorCode, String) {
        let outcome = self.call(tool, args).await;
        let error = outcome.error.expect("an error");
        (error.code, error.message)
    }

    /// Whom the prompt was asked about since the last look.
    fn asked(&self) -> Vec<String> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

fn config(
    default: Option<ApprovalDecisionType>,
    tools: &[(&str, ApprovalDecisionType)],
) -> ApprovalConfig {
    ApprovalConfig {
        default,
        tools: tools.iter().map(|(n, d)| ((*n).to_owned(), *d)).collect(),
    }
}

const SECS: Duration = Duration::from_secs(30);

// ---- the modules ----

const PYTHON: &str = r#"
from typing import Annotated, Literal, Optional

def calculate_fibonacci(n: Annotated[int, "Which Fibonacci number"]) -> dict:
    """Computes the nth Fibonacci number.

    Second paragraph, not in the description."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return {"n": n, "value": a}

def word_count(text: str, unit: Literal["words", "chars"] = "words", note: Optional[str] = None) -> str:
    """Counts the words of a text."""
    return str(len(text.split()) if unit == "words" else len(text))

def shout(text):
    return text.upper()

shout_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

def helper(x):
    return x

report = {
    "name": "report",
    "description": "A report of a custom kind.",
    "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}},
    "execute": lambda args: {"kind": "acme.report", "data": {"title": args["title"]}, "summary": "1 report"},
}

class Deleter:
    name = "delete_file"
    description = "Deletes a file."
    input_schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    def needs_approval(self, args):
        return args["path"].startswith("/etc")
    def execute(self, args):
        return "deleted " + args["path"]

delete_file = Deleter()

always_asks = {
    "name": "always_asks", "description": "Asks.", "input_schema": {"type": "object"},
    "execute": lambda args: "ran", "needs_approval": True,
}
never_asks = {
    "name": "never_asks", "description": "Never asks.", "input_schema": {"type": "object"},
    "execute": lambda args: "ran", "needs_approval": False,
    "manual_execution": {"mode": "both", "label": "Never asks", "category": "demo"},
}
"#;

const WHITELIST: &[&str] = &[
    "calculate_fibonacci",
    "word_count",
    "shout",
    "report",
    "delete_file",
    "always_asks",
    "never_asks",
];

// ---- the tests ----

fn python_functions_and_tool_objects() {
    let f = Fixture::new();
    let tools = f
        .tools(
            "tools.py",
            PYTHON,
            Some(WHITELIST),
            config(Some(ApprovalDecisionType::PreApproved), &[]),
            SECS,
        )
        .unwrap();
    let fib = tools
        .iter()
        .find(|t| t.name() == "calculate_fibonacci")
        .unwrap();
    assert_eq!(fib.description(), "Computes the nth Fibonacci number.");
    assert_eq!(
        fib.input_schema(),
        &json!({"type": "object", "properties": {"n": {"type": "integer",
            "description": "Which Fibonacci number"}}, "required": ["n"]})
    );
    let wc = tools.iter().find(|t| t.name() == "word_count").unwrap();
    assert_eq!(
        wc.input_schema()["properties"]["unit"],
        json!({"enum": ["words", "chars"]})
    );
    assert_eq!(wc.input_schema()["required"], json!(["text"]));
    let session = Session::new(tools);
    // The whitelist hides `helper` (which has no usable schema and would be an error).
    assert!(
        !session.names.contains(&"helper".to_owned()),
        "{:?}",
        session.names
    );
    block_on(async {
        let out = session.ok("calculate_fibonacci", json!({"n": 10})).await;
        assert_eq!(out.value.kind, "structured");
        assert_eq!(out.value.data, json!({"n": 10, "value": 55}));
        let out = session
            .ok("word_count", json!({"text": "one two three"}))
            .await;
        assert_eq!(out.value, golem_protocol::ToolResultValue::text("3"));
        let out = session.ok("shout", json!({"text": "hi"})).await;
        assert_eq!(out.value, golem_protocol::ToolResultValue::text("HI"));
        let out = session.ok("report", json!({"title": "Q3"})).await;
        assert_eq!(out.value.kind, "acme.report");
        assert_eq!(out.value.data, json!({"title": "Q3"}));
        assert_eq!(out.value.summary.as_deref(), Some("1 report"));
        // Arguments that break the schema never reach the module.
        let (code, _) = session.error("word_count", json!({"txt": "x"})).await;
        assert_eq!(code, ToolErrorCode::InvalidArguments);
        let (code, message) = session
            .error("calculate_fibonacci", json!({"n": 1.5}))
            .await;
        assert_eq!(code, ToolErrorCode::InvalidArguments, "{message}");
    });
}

fn python_own_policies_beat_only_the_default() {
    let f = Fixture::new();
    // The default pre-approves: `delete_file`'s own policy beats it. By name the user blocks
    // `always_asks` and asks for `never_asks`, overruling their own policies; `word_count` has
    // none and takes its named `ask`.
    let approval = config(
        Some(ApprovalDecisionType::PreApproved),
        &[
            ("always_asks", ApprovalDecisionType::Blocked),
            ("never_asks", ApprovalDecisionType::Ask),
            ("word_count", ApprovalDecisionType::Ask),
        ],
    );
    let tools = f
        .tools("tools.py", PYTHON, Some(WHITELIST), approval, SECS)
        .unwrap();
    let policy = |name: &str| {
        tools
            .iter()
            .find(|t| t.name() == name)
            .unwrap()
            .approval_policy()
            .unwrap()
    };
    assert_eq!(policy("delete_file"), "dynamic (tool's own)");
    assert_eq!(
        policy("always_asks"),
        "blocked (configured, over the tool's own)"
    );
    assert_eq!(
        policy("never_asks"),
        "ask (configured, over the tool's own)"
    );
    assert_eq!(policy("word_count"), "ask (configured)");
    assert_eq!(policy("shout"), "preApproved (configured)");
    let never = tools.iter().find(|t| t.name() == "never_asks").unwrap();
    assert_eq!(never.execution().label.as_deref(), Some("Never asks"));
    let unset = f
        .tools(
            "tools.py",
            PYTHON,
            Some(&["shout"]),
            ApprovalConfig::default(),
            SECS,
        )
        .unwrap();
    assert_eq!(unset[0].approval_policy().unwrap(), "ask (default)");
    let session = Session::new(tools);
    block_on(async {
        session.ok("delete_file", json!({"path": "/work/a"})).await;
        assert!(session.asked().is_empty());
        let out = session
            .ok("delete_file", json!({"path": "/etc/passwd"}))
            .await;
        assert_eq!(
            out.value,
            golem_protocol::ToolResultValue::text("deleted /etc/passwd")
        );
        assert_eq!(session.asked(), ["delete_file"]);
        let out = session.call("always_asks", json!({})).await;
        assert_eq!(out.status, golem_protocol::ToolStatus::Blocked);
        assert!(session.asked().is_empty(), "blocked: never asked");
        session.ok("never_asks", json!({})).await;
        assert_eq!(session.asked(), ["never_asks"]);
        session.ok("word_count", json!({"text": "a"})).await;
        assert_eq!(session.asked(), ["word_count"]);
        session.ok("shout", json!({"text": "a"})).await;
        assert!(session.asked().is_empty());
    });
}

const JAVASCRIPT: &str = r#"
export function add({ a, b }) { return String(a + b); }
export const addSchema = {
  type: "object", description: "Adds two numbers.",
  properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"],
};
export const chart = {
  name: "chart", description: "A chart of a custom kind.", inputSchema: { type: "object" },
  execute: async (args) => ({ kind: "acme.chart", data: { points: [1, 2, 3] } }),
  needsApproval: (args) => args.big === true,
};
export const sum = {
  name: "sum", description: "Sums.", inputSchema: { type: "object" },
  execute: (args) => [args.xs.reduce((x, y) => x + y, 0)], needsApproval: true,
};
export function untyped() { return "x"; }
"#;

fn javascript_functions_and_tool_objects() {
    let f = Fixture::new();
    let approval = config(Some(ApprovalDecisionType::Blocked), &[]);
    let tools = f
        .tools(
            "tools.mjs",
            JAVASCRIPT,
            Some(&["add", "chart", "sum"]),
            approval,
            SECS,
        )
        .unwrap();
    assert_eq!(tools[0].description(), "Adds two numbers.");
    let session = Session::new(tools);
    block_on(async {
        // `add` has no policy of its own: the config blocks it.
        let (code, _) = session.error("add", json!({"a": 1, "b": 2})).await;
        assert_eq!(code, ToolErrorCode::Blocked);
        let out = session.ok("chart", json!({})).await;
        assert_eq!(out.value.kind, "acme.chart");
        assert!(session.asked().is_empty());
        session.ok("chart", json!({"big": true})).await;
        assert_eq!(session.asked(), ["chart"]);
        let out = session.ok("sum", json!({"xs": [1, 2, 3]})).await;
        assert_eq!(out.value.kind, "structured");
        assert_eq!(out.value.data, json!([6]));
        assert_eq!(session.asked(), ["sum"]);
    });
    let err = f
        .tools(
            "tools.mjs",
            JAVASCRIPT,
            None,
            ApprovalConfig::default(),
            SECS,
        )
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("custom tool `untyped` (module ./tools.mjs)"),
        "{err}"
    );
    assert!(err.contains("untypedSchema"), "{err}");
}

const SHELL: &str = r#"#!/bin/sh
case "$1" in
describe)
  echo '{"tools":[
    {"name":"upper","description":"Upper-cases text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},
    {"name":"stats","description":"A custom kind.","inputSchema":{"type":"object"},"needsApproval":false},
    {"name":"garbage","description":"Bad JSON.","inputSchema":{"type":"object"}},
    {"name":"badkind","description":"Bad kind.","inputSchema":{"type":"object"}},
    {"name":"crash","description":"Crashes.","inputSchema":{"type":"object"}},
    {"name":"fails","description":"Fails.","inputSchema":{"type":"object"}},
    {"name":"slow","description":"Sleeps.","inputSchema":{"type":"object"}}
  ]}' ;;
call)
  args=$(cat)
  case "$2" in
  upper) printf '%s\n' "$args" | tr a-z A-Z ;;
  stats) echo '{"kind":"acme.stats","data":{"args":'"$args"'}}' ;;
  garbage) echo '{"kind": "text", "data": ' ;;
  badkind) echo '{"kind":"Not A Kind","data":{}}' ;;
  crash) echo "about to crash" >&2; kill -SEGV $$ ;;
  fails) echo "no such record" >&2; exit 3 ;;
  slow) sleep 30 ;;
  esac ;;
*) exit 2 ;;
esac
"#;

fn an_executable_speaks_the_protocol() {
    let f = Fixture::new();
    let approval = config(None, &[("upper", ApprovalDecisionType::PreApproved)]);
    let tools = f
        .tools("tool.sh", SHELL, Some(&["upper", "stats"]), approval, SECS)
        .unwrap();
    let session = Session::new(tools);
    block_on(async {
        let out = session.ok("upper", json!({"text": "hello"})).await;
        // A JSON object without `kind` is `structured`; plain text would be `text`.
        assert_eq!(out.value.kind, "structured");
        assert_eq!(out.value.data, json!({"TEXT": "HELLO"}));
        let out = session.ok("stats", json!({"n": 1})).await;
        assert_eq!(out.value.kind, "acme.stats");
        assert_eq!(out.value.data, json!({"args": {"n": 1}}));
        assert!(session.asked().is_empty());
    });
}

fn bad_json_a_crash_and_a_timeout() {
    let f = Fixture::new();
    let approval = config(Some(ApprovalDecisionType::PreApproved), &[]);
    let tools = f
        .tools("tool.sh", SHELL, None, approval, Duration::from_secs(2))
        .unwrap();
    let session = Session::new(tools);
    block_on(async {
        let (code, message) = session.error("garbage", json!({})).await;
        assert_eq!(code, ToolErrorCode::ExecutionError);
        assert!(
            message.contains("custom tool `garbage` (module ./tool.sh) printed malformed JSON"),
            "{message}"
        );
        // A result of an invalid kind is passed on as `structured` (see `results.rs`).
        let out = session.ok("badkind", json!({})).await;
        assert_eq!(out.value.kind, "structured");
        assert_eq!(out.value.data, json!({"kind": "Not A Kind", "data": {}}));
        let (code, message) = session.error("crash", json!({})).await;
        assert_eq!(code, ToolErrorCode::ExecutionError);
        assert!(
            message.contains("custom tool `crash` (module ./tool.sh) crashed"),
            "{message}"
        );
        assert!(message.contains("about to crash"), "{message}");
        let (code, message) = session.error("fails", json!({})).await;
        assert_eq!(code, ToolErrorCode::ExecutionError);
        assert!(
            message.contains("failed (exit 3)") && message.contains("no such record"),
            "{message}"
        );
        let started = std::time::Instant::now();
        let (code, message) = session.error("slow", json!({})).await;
        assert_eq!(code, ToolErrorCode::Timeout, "{message}");
        assert!(
            message.contains("custom tool `slow` (module ./tool.sh)"),
            "{message}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    });
}

fn errors_at_start_name_the_module_and_tool() {
    let f = Fixture::new();
    // The error that stops the module `name` (with `source`) from giving its tools.
    let start_error = |name: &str, source: &str, whitelist: Option<&[&str]>, timeout| {
        f.tools(name, source, whitelist, ApprovalConfig::default(), timeout)
            .err()
            .unwrap()
            .to_string()
    };
    let err = start_error("tools.py", PYTHON, Some(&["nope"]), SECS);
    assert!(
        err.contains("custom tool module ./tools.py has no tool `nope`"),
        "{err}"
    );
    let err = start_error("tools.py", PYTHON, None, SECS);
    assert!(
        err.contains("custom tool `helper` (module ./tools.py): no usable input schema"),
        "{err}"
    );
    assert!(err.contains("parameter `x` has no type hint"), "{err}");
    let err = start_error("bad.sh", "#!/bin/sh\necho 'tools: none'\n", None, SECS);
    assert!(
        err.contains("custom tool module ./bad.sh: `describe` did not print"),
        "{err}"
    );
    let err = start_error("broken.py", "import not_a_module_anywhere\n", None, SECS);
    assert!(
        err.contains("custom tool module ./broken.py: reading its tools failed"),
        "{err}"
    );
    assert!(err.contains("not_a_module_anywhere"), "{err}");
    let err = start_error(
        "hangs.sh",
        "#!/bin/sh\nsleep 30\n",
        None,
        Duration::from_secs(1),
    );
    assert!(
        err.contains("custom tool module ./hangs.sh") && err.contains("time limit"),
        "{err}"
    );
}

fn the_module_runs_in_the_jail() {
    let f = Fixture::new();
    let secret = f.dir.path().join("secret.txt");
    let own = f.dir.path().join("modules/spy.py");
    let source = format!(
        r#"
def read(path: str) -> str:
    """Reads a file."""
    try:
        with open(path) as f:
            return "read: " + f.read()
    except OSError as err:
        return "refused: " + type(err).__name__

SECRET = {secret:?}
OWN = {own:?}
"#,
        secret = secret.display().to_string(),
        own = own.display().to_string(),
    );
    let approval = config(Some(ApprovalDecisionType::PreApproved), &[]);
    let tools = f.tools("spy.py", &source, None, approval, SECS).unwrap();
    let session = Session::new(tools);
    block_on(async {
        let out = session.ok("read", json!({"path": "/work/notes.txt"})).await;
        assert_eq!(
            out.value,
            golem_protocol::ToolResultValue::text("read: inside the zone")
        );
        for path in [secret.display().to_string(), own.display().to_string()] {
            let out = session.ok("read", json!({ "path": path })).await;
            let text = out.value.data["content"].as_str().unwrap().to_owned();
            assert!(text.starts_with("refused: "), "{path}: {text}");
        }
    });
}
