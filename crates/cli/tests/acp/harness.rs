//! The harness of the ACP tests: worker projects with their mock model
//! (`golem_testkit::cli::Project`), and the Python ACP client (`agent-client-protocol` from
//! PyPI, in the virtual environment of `golem_testkit::cli::python`) playing the editor with
//! `clients/acp_client.py`, which starts `golem-forge acp` itself. Without the package the
//! tests fail, naming the command that installs it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use golem_testkit::Wire;
use golem_testkit::cli::python::{python, run_script};
use golem_testkit::cli::{self, Project, binary, fs_front_matter, model_for};
use golem_testkit::parts::{ACP_PYTHON_PACKAGE, MCP_PYTHON_INSTALL, TEST_COMMAND};
use serde_json::{Value, json};

/// The wire the mock model speaks in these tests (the editor's side does not depend on it).
pub const WIRE: Wire = Wire::OpenAi;

/// The worker `main`: a read-write zone `out` with `zone_approval` (an indented `approval:`
/// line, or nothing for `ask`) and the filesystem tools.
pub fn writer(zone_approval: &str) -> String {
    cli::worker("main", &fs_front_matter(zone_approval))
}

/// The Python of the virtual environment, checked once for the ACP client.
fn acp_python() -> &'static Path {
    static CHECKED: OnceLock<PathBuf> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let python = python().to_owned();
        let want = ACP_PYTHON_PACKAGE.trim_start_matches("agent-client-protocol==");
        let found = Command::new(&python)
            .args([
                "-c",
                "import importlib.metadata as m, acp; print(m.version('agent-client-protocol'))",
            ])
            .output();
        match found {
            Ok(out)
                if out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == want =>
            {
                python
            }
            other => panic!(
                "{} has no ACP client {ACP_PYTHON_PACKAGE} ({other:?}).\nThe README's test \
                 command installs it:\n    {TEST_COMMAND}\nor install just it from the \
                 workspace root with:\n    {MCP_PYTHON_INSTALL}",
                python.display()
            ),
        }
    })
}

/// The session's working directory the editor sends: the project's `proj/`.
pub fn project_dir(project: &Project) -> String {
    project.env.path().join("proj").display().to_string()
}

/// Runs the editor script against `golem-forge acp main.worker --model <mock> EXTRA...` started
/// in the temporary home, with `steps`; returns its report (steps, updates, permissions).
pub fn editor(project: &Project, extra: &[&str], steps: Value) -> Value {
    acp_python();
    let env: serde_json::Map<String, Value> = project
        .server_env(WIRE)
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let mut args = vec![
        "acp".to_owned(),
        "main.worker".to_owned(),
        "--model".to_owned(),
        model_for(WIRE).to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let config = json!({
        "command": binary(),
        "args": args,
        "cwd": project.env.path(),
        "env": env,
        "steps": steps,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/clients/acp_client.py");
    let (status, out, err) = run_script(&script, &config, &project.env);
    assert!(
        status.success(),
        "the editor script failed ({status}):\n--- stdout\n{out}\n--- stderr\n{err}"
    );
    out.lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("the editor printed no report:\n{out}\n--- stderr\n{err}"))
}

/// The steps `initialize` and `new` (in the project's directory), then `more`.
pub fn new_session_then(project: &Project, more: Value) -> Value {
    let mut steps = vec![
        json!({"op": "initialize"}),
        json!({"op": "new", "cwd": project_dir(project)}),
    ];
    steps.extend(more.as_array().cloned().unwrap_or_default());
    Value::Array(steps)
}

/// A prompt step with one text block and the permission `answers`.
pub fn prompt(text: &str, answers: &[&str]) -> Value {
    json!({"op": "prompt", "blocks": [{"text": text}], "answers": answers})
}

/// The result of step `index`, failing the test with the report when it is an error.
pub fn result(report: &Value, index: usize) -> &Value {
    let step = &report["steps"][index];
    assert!(
        step.get("error").is_none(),
        "step {index} failed: {report:#}"
    );
    &step["result"]
}

/// The updates of kind `kind` (`agent_message_chunk`, `tool_call`, …).
pub fn updates<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["updates"]
        .as_array()
        .map(|all| all.iter().filter(|u| u["sessionUpdate"] == kind).collect())
        .unwrap_or_default()
}

/// The agent's message text, every chunk joined.
pub fn message_text(report: &Value) -> String {
    updates(report, "agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

/// Every update about the tool call `id` (its `tool_call`, then its `tool_call_update`s).
pub fn call_updates<'a>(report: &'a Value, id: &str) -> Vec<&'a Value> {
    report["updates"]
        .as_array()
        .map(|all| all.iter().filter(|u| u["toolCallId"] == id).collect())
        .unwrap_or_default()
}
