//! Custom tools end to end: a worker with a Python module beside it; the model calls its tools
//! through `golem-forge run`. A pre-approved tool runs in the jail (reading the worker's zone)
//! and its result reaches the model; a tool's own custom result kind reaches `--json` as it
//! is; a tool whose own `needs_approval` says yes is asked for, and with no terminal denied;
//! a whitelisted tool the module lacks stops the launch naming the module and the tool.

use super::*;

const MODULE: &str = r#"
from typing import Annotated


def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


def count_words(path: Annotated[str, "A file in the jail"]) -> dict:
    """Counts the words of a file."""
    with open(path, encoding="utf-8") as f:
        words = len(f.read().split())
    return {"kind": "acme.count", "data": {"path": path, "words": words},
            "summary": f"{words} words"}


wipe = {
    "name": "wipe",
    "description": "Pretends to wipe a file.",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                     "required": ["path"]},
    "execute": lambda args: "wiped",
    "needs_approval": True,
}
"#;

/// The worker `main` with the zone `out` and the module `tools.py` (`tools` its whitelist).
fn custom_worker(tools: &str) -> String {
    worker(
        "main",
        &format!(
            "sandbox:\n  zones:\n    - name: out\n      mode: ro\ntoolsets:\n  custom:\n    \
             module: ./tools.py\n    tools: [{tools}]\n    \
             approval: {{ default: preApproved }}\n"
        ),
    )
}

#[test]
fn a_python_tool_runs_jailed_and_its_result_reaches_the_model() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(
        &env,
        &[("main.worker", custom_worker("add, count_words, wipe"))],
    );
    env.write("proj/tools.py", MODULE);
    env.write("proj/out/poem.txt", "one two three four\n");
    let server = MockServer::start_blocking(vec![
        wire.tool_calls(&[
            ("call_1", "add", json!({"a": 2, "b": 3})),
            ("call_2", "count_words", json!({"path": "/out/poem.txt"})),
            ("call_3", "wipe", json!({"path": "/out/poem.txt"})),
        ]),
        wire.text("Done."),
    ]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go", "--json"]);
    assert_exit(&output, 0);
    let results = results_sent(wire, &server, 1);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0].content, "5");
    assert!(!wire.is_error(&results[0]));
    assert!(
        results[1].content.contains("\"words\":4") || results[1].content.contains("4 words"),
        "the jailed module read the zone: {}",
        results[1].content
    );
    assert!(wire.is_error(&results[2]), "{results:?}");
    assert!(
        results[2].content.contains(&headless_message("wipe")),
        "the tool's own needs_approval beats the config's preApproved: {}",
        results[2].content
    );
    let events = events(&output);
    let values: Vec<&Value> = of_type(&events, "toolResult")
        .iter()
        .map(|e| &e["value"])
        .collect();
    assert_eq!(values[1]["kind"], "acme.count", "{values:?}");
    assert_eq!(values[1]["data"]["words"], 4, "{values:?}");
    let asked = of_type(&events, "approvalResolved");
    assert!(
        asked
            .iter()
            .any(|e| e["toolName"] == "wipe" && e["approved"] == false),
        "{asked:?}"
    );
}

#[test]
fn a_whitelisted_tool_the_module_lacks_stops_the_launch() {
    let wire = Wire::OpenAi;
    let env = TestEnv::new();
    project(&env, &[("main.worker", custom_worker("add, nope"))]);
    env.write("proj/tools.py", MODULE);
    let server = MockServer::start_blocking(vec![]);
    let output = run(&env, wire, &server, &["proj/main.worker", "go"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("tools.py") && err.contains("nope"),
        "names the module and the tool: {err}"
    );
    assert!(server.requests().is_empty(), "no model request was made");
}
